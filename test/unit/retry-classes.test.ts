import { ApplicationFailure, CancelledFailure } from '@temporalio/activity';
import { MockActivityEnvironment } from '@temporalio/testing';
import { classedFailure, withRetryClasses } from '../../activities/retry-classes';
import { Prisma } from '../../prisma/client';

// Infrastructure failures are retried without limit, logic errors only for their attempts; neither
// reaches Temporal with the database client's internals.

/** A refusal of the database as the client throws it: the call and the caller's code, then what was refused. */
const uniqueViolation = () =>
  new Prisma.PrismaClientKnownRequestError(
    '\nInvalid `prisma.iteration.create()` invocation in\n/srv/app/store/iterations.ts:40:3\n\n  39 export …\n→ 40   db.iteration.create(\nUnique constraint failed on the fields: (`loopId`,`sequence`)',
    { code: 'P2002', clientVersion: '6.19.3' },
  );

/** The database not answering, as the pg adapter reports it through the client. */
const unreachable = () =>
  new Prisma.PrismaClientKnownRequestError(
    "\nInvalid `prisma.loop.findUnique()` invocation in\n/srv/app/store/loops.ts:12:5\n\nCan't reach database server at 127.0.0.1:5433",
    {
      code: 'P1001',
      clientVersion: '6.19.3',
      meta: { driverAdapterError: { cause: { kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 5433 } } },
    },
  );

test('an unreachable database is a retryable failure saying so, at any attempt, with none of the client text', () => {
  for (const attempt of [1, 5, 50]) {
    const failure = classedFailure(unreachable(), attempt, 5);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      type: 'DatabaseUnavailable',
      message: 'the database could not be reached',
      nonRetryable: false,
    });
    expect((failure as Error).message).not.toContain('prisma');
  }
  // Recognised by its SQLSTATE too: the server shutting down under a query, or refusing connections while it starts.
  for (const code of ['57P01', '57P03', '08006']) {
    const lost = new Prisma.PrismaClientKnownRequestError('Raw query failed.', {
      code: 'P2010',
      clientVersion: '6.19.3',
      meta: { driverAdapterError: { cause: { kind: 'postgres', code } } },
    });
    expect(classedFailure(lost, 9, 5)).toMatchObject({ type: 'DatabaseUnavailable', nonRetryable: false });
  }
});

test("the model provider's outage (429, 5xx, unreachable) stays retryable past the attempts; its refusal stays final", () => {
  const outage = ApplicationFailure.create({ type: 'ModelProviderError', message: 'HTTP 503: overloaded' });
  expect(classedFailure(outage, 12, 5)).toBe(outage);
  expect(outage.nonRetryable).toBe(false);
  const refused = ApplicationFailure.create({ type: 'MakerProviderError', message: 'HTTP 401', nonRetryable: true });
  expect(classedFailure(refused, 1, 5)).toMatchObject({ nonRetryable: true });
});

test('a logic error is retried until its attempts are spent, then final; a refusal of the database is said in a sentence', () => {
  const boom = () => new Error('checkpoint commit is not on the branch');
  expect(classedFailure(boom(), 4, 5)).toMatchObject({ message: 'checkpoint commit is not on the branch' });
  expect(classedFailure(boom(), 4, 5)).not.toBeInstanceOf(ApplicationFailure);
  expect(classedFailure(boom(), 5, 5)).toMatchObject({
    type: 'Error',
    message: 'checkpoint commit is not on the branch',
    nonRetryable: true,
  });
  // No limit: as many attempts as the retry policy gives (a record write).
  expect(classedFailure(boom(), 500, null)).not.toBeInstanceOf(ApplicationFailure);

  expect(classedFailure(uniqueViolation(), 1, 5)).toMatchObject({
    type: 'DatabaseError',
    message: 'a database operation failed: Unique constraint failed on the fields: (`loopId`,`sequence`)',
    nonRetryable: false,
  });
  expect(classedFailure(uniqueViolation(), 5, 5)).toMatchObject({ type: 'DatabaseError', nonRetryable: true });
});

test('a cancellation passes through untouched', () => {
  const cancelled = new CancelledFailure('cancelled');
  expect(classedFailure(cancelled, 9, 5)).toBe(cancelled);
});

test('the wrapper classes what an activity throws by its attempt and the limit it names; results pass through', async () => {
  const limits: Array<{ activityType: string; isLocal: boolean }> = [];
  const activities = withRetryClasses(
    (info) => {
      limits.push(info);
      return 3;
    },
    {
      fails: async (): Promise<never> => Promise.reject(new Error('no such gate')),
      adds: async (input: { a: number; b: number }) => input.a + input.b,
    },
  );
  const attempt = (n: number) => new MockActivityEnvironment({ attempt: n, activityType: 'runVerification' });
  await expect(attempt(1).run(activities.adds, { a: 1, b: 2 })).resolves.toBe(3);
  await expect(attempt(2).run(activities.fails)).rejects.toMatchObject({ message: 'no such gate' });
  await expect(attempt(2).run(activities.fails)).rejects.not.toBeInstanceOf(ApplicationFailure);
  await expect(attempt(3).run(activities.fails)).rejects.toMatchObject({ nonRetryable: true });
  expect(limits[0]).toMatchObject({ activityType: 'runVerification', isLocal: false });
});

test("an attempt meeting the model provider's outage says so on its loop; the attempt that gets through clears it", async () => {
  const notes: string[] = [];
  let providerDown = true;
  const activities = withRetryClasses(
    () => 5,
    {
      review: async () => {
        if (providerDown)
          throw ApplicationFailure.create({ type: 'ModelProviderError', message: 'the model API answered HTTP 503' });
        return 'reviewed';
      },
      fails: async (): Promise<never> => Promise.reject(new Error('no such gate')),
    },
    {
      waiting: async (loopId, reason) => void notes.push(`waiting ${loopId}: ${reason}`),
      over: async (loopId) => void notes.push(`over ${loopId}`),
    },
  );
  const attempt = (n: number, workflowId = 'loop-42') =>
    new MockActivityEnvironment({
      attempt: n,
      activityType: 'runReview',
      workflowExecution: { workflowId, runId: 'r' },
    });
  await expect(attempt(1).run(activities.review)).rejects.toMatchObject({ type: 'ModelProviderError' });
  // A logic error, or a workflow that is not a loop's, notes nothing.
  await expect(attempt(1).run(activities.fails)).rejects.toMatchObject({ message: 'no such gate' });
  await expect(attempt(2, 'agent-check-x').run(activities.review)).rejects.toMatchObject({
    type: 'ModelProviderError',
  });
  providerDown = false;
  await expect(attempt(3).run(activities.review)).resolves.toBe('reviewed');
  expect(notes).toEqual([
    'waiting 42: the model provider (runReview, attempt 1; retried until it answers): the model API answered HTTP 503',
    'over 42',
  ]);
});

test('a note that cannot be written changes nothing the attempt answers', async () => {
  const activities = withRetryClasses(
    () => 5,
    {
      review: async (): Promise<never> =>
        Promise.reject(ApplicationFailure.create({ type: 'ModelProviderError', message: 'down' })),
    },
    {
      waiting: () => Promise.reject(new Error('database down')),
      over: () => Promise.reject(new Error('database down')),
    },
  );
  const env = new MockActivityEnvironment({ attempt: 1, workflowExecution: { workflowId: 'loop-1', runId: 'r' } });
  await expect(env.run(activities.review)).rejects.toMatchObject({ type: 'ModelProviderError', message: 'down' });
});
