import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runMaker } from '../../activities/maker';
import { prepareThenDeliver, type PrepareThenDeliverInput } from '../../activities/prepare-then-deliver';
import { recordVerdict } from '../../activities/records';
import { computeVerdict } from '../../domain/judge';
import {
  firstMakerInput,
  inActivity,
  loopActivity,
  preparedLoop,
  TESTS_GATE,
  useActivityTestBed,
} from '../support/activity-test-bed';
import { CORRECT_SUM } from '../support/fixture-repo';

// The activity that prepares a passed change's delivery delivers it when nothing stands in the way
// (workflows/delivery.ts): a retry after it delivered (its worker lost before it answered) answers with
// that delivery, even if the base moved since — never replays the delivered change. A base that moved
// before is left to the workflow, replayed and not delivered. Real Postgres, real git, a real maker process.

const bed = useActivityTestBed('deliver-when-prepared');

/** The activity as its `n`th attempt runs it. */
const prepareThenDeliverAttempt = (n: number, input: PrepareThenDeliverInput) =>
  inActivity(loopActivity(input.loopId, n), () => prepareThenDeliver(bed.deps, input));

/** A loop whose first iteration fixed the code and passed: its repository, id and the delivery's input. */
async function passedLoop(): Promise<{ repo: string; loopId: string; input: PrepareThenDeliverInput }> {
  const { repo, loopId } = await preparedLoop(bed);
  const fix = `printf '${CORRECT_SUM.replace(/\n/g, '\\n')}' > src/sum.js`;
  await inActivity(loopActivity(loopId), () => runMaker(bed.deps, firstMakerInput(loopId, fix)));
  const report = computeVerdict({
    roundIteration: 1,
    maxIterations: 3,
    gates: [],
    acceptanceChecks: [],
    review: { status: 'COMPLETED', findings: [], responseIds: ['r-1'] },
    systemFindings: [],
    acceptanceCriteria: [],
    maker: { noChange: false, diffHash: 'd', cumulativeDiffEmpty: false, agentReport: null },
    budgetExhausted: null,
    previous: [],
  });
  await recordVerdict(bed.deps, { loopId, sequence: 1, report, warnings: [] });
  const ended = {
    loopId,
    status: 'PASSED',
    phase: 'DONE',
    roundIteration: 1,
    lastVerdict: 'PASS',
    failureReason: null,
    move: 9,
  } as const;
  return {
    repo,
    loopId,
    input: {
      loopId,
      sequence: 1,
      roundIteration: 1,
      contractVersion: 1,
      gates: [TESTS_GATE],
      deliverWhenClear: { ended },
    },
  };
}

/** A commit on the repository's main branch: the loop's base moves. */
function moveBase(repo: string): void {
  fs.writeFileSync(path.join(repo, 'CHANGELOG.md'), 'upstream\n');
  execFileSync('git', ['add', 'CHANGELOG.md'], { cwd: repo });
  execFileSync(
    'git',
    [
      '-c',
      'user.name=U',
      '-c',
      'user.email=u@example.invalid',
      'commit',
      '--quiet',
      '-m',
      'upstream',
      '--',
      'CHANGELOG.md',
    ],
    {
      cwd: repo,
    },
  );
}

test('a clear change is delivered and its end recorded; the retry after the delivery answers with it, though the base moved since', async () => {
  const { repo, loopId, input } = await passedLoop();
  const { baseCommit } = await bed.db.prisma.loop.findUniqueOrThrow({ where: { id: loopId } });

  const first = await prepareThenDeliverAttempt(1, input);
  expect(first.drift.behind).toBe(0);
  expect(first.replayed).toBeNull();
  expect(first.delivered?.reportId).toEqual(expect.any(String));
  const loop = await bed.db.prisma.loop.findUniqueOrThrow({ where: { id: loopId } });
  expect([loop.status, loop.phase]).toEqual(['PASSED', 'DONE']);
  const report = await bed.db.prisma.report.findFirstOrThrow({ where: { loopId, kind: 'FINAL' } });
  expect(report.id).toBe(first.delivered!.reportId);
  // The report states the drift and impact the preparation read, not a second reading of its own.
  expect(report.body).toMatchObject({ baseDrift: first.drift, contextImpact: first.contextImpact });

  moveBase(repo);
  const retried = await prepareThenDeliverAttempt(2, input);
  expect(retried.delivered?.reportId).toBe(first.delivered!.reportId);
  expect(retried.replayed).toBeNull();
  expect(retried.contextImpact).toEqual(first.contextImpact);
  // Nothing replayed: no iteration #2, the loop's base where it was.
  expect(await bed.db.prisma.iteration.count({ where: { loopId } })).toBe(1);
  expect((await bed.db.prisma.loop.findUniqueOrThrow({ where: { id: loopId } })).baseCommit).toBe(baseCommit);
  expect(await bed.db.prisma.report.count({ where: { loopId, kind: 'FINAL' } })).toBe(1);
});

test('a base that moved before the delivery is replayed for the workflow to verify, not delivered', async () => {
  const { repo, loopId, input } = await passedLoop();
  moveBase(repo);

  const prepared = await prepareThenDeliverAttempt(1, input);
  expect(prepared.drift.behind).toBe(1);
  expect(prepared.replayed).toMatchObject({ sequence: 2 });
  expect(prepared.delivered).toBeUndefined();
  expect(await bed.db.prisma.report.count({ where: { loopId, kind: 'FINAL' } })).toBe(0);
  const loop = await bed.db.prisma.loop.findUniqueOrThrow({ where: { id: loopId } });
  expect(loop.status).toBe('RUNNING');
});
