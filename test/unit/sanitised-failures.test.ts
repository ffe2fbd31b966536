import { ApplicationFailure, CancelledFailure } from '@temporalio/activity';
import { withSanitisedFailures } from '../../activities/sanitised-failures';
import { registerServiceSecrets } from '../../domain/sanitise';

const SECRET = 'the-llm-api-key-0123';
registerServiceSecrets([SECRET]);

const failing = (err: unknown) =>
  withSanitisedFailures({ activity: async (): Promise<never> => Promise.reject(err) }).activity;

test('an ApplicationFailure is rethrown sanitised, with its type, nonRetryable flag and details', async () => {
  const failure = ApplicationFailure.create({
    type: 'ModelProviderError',
    message: `HTTP 401: key ${SECRET} rejected`,
    nonRetryable: true,
    details: ['d'],
  });
  const thrown = await failing(failure)().catch((e: unknown) => e);
  expect(thrown).toBe(failure);
  expect(thrown).toBeInstanceOf(ApplicationFailure);
  expect(thrown).toMatchObject({
    type: 'ModelProviderError',
    nonRetryable: true,
    details: ['d'],
    message: 'HTTP 401: key [REDACTED] rejected',
  });
  expect(failure.stack).not.toContain(SECRET);
});

test('a plain error and its cause are sanitised', async () => {
  const err = new Error('clone failed: https://ci:ghp_0123456789abcdefghijABCDEFGHIJ012345@github.com/o/r', {
    cause: new Error(`password=${SECRET}`),
  });
  await expect(failing(err)()).rejects.toThrow('clone failed: https://ci:[REDACTED]@github.com/o/r');
  expect((err.cause as Error).message).toBe('password=[REDACTED]');
  expect(err.stack).not.toContain('ghp_');
});

test('a cancellation passes through untouched', async () => {
  const cancelled = new CancelledFailure(`cancelled while ${SECRET} was in use`);
  const thrown = await failing(cancelled)().catch((e: unknown) => e);
  expect(thrown).toBe(cancelled);
  expect(cancelled.message).toContain(SECRET);
});

test('results and arguments pass through', async () => {
  const activities = withSanitisedFailures({ add: async (input: { a: number; b: number }) => input.a + input.b });
  await expect(activities.add({ a: 1, b: 2 })).resolves.toBe(3);
});
