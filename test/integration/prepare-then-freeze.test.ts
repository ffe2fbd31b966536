import { sha256 } from '../../activities/git';
import { prepareThenFreeze, type PrepareThenFreezeInput } from '../../activities/prepare-then-freeze';
import type { ProgressInput } from '../../activities/progress';
import { canonicalJson, goalContractSchema } from '../../domain/contract';
import type { LoopPhase } from '../../domain/loop-state';
import { inActivity, loopActivity, TESTS_GATE, useActivityTestBed } from '../support/activity-test-bed';
import { insertLoop } from '../support/database';
import { createFixtureRepo } from '../support/fixture-repo';
import { loopRequest } from '../support/loop-request';

// A new loop's workspace and its first contract version, in one activity (workflows/prepare.ts): the moves
// into PREPARING and CONTRACT are recorded in that order, the version once however often the activity is
// retried. Real Postgres, real git.

const bed = useActivityTestBed('prepare-then-freeze');

const move = (loopId: string, phase: LoopPhase, n: number): ProgressInput => ({
  loopId,
  status: 'RUNNING',
  phase,
  roundIteration: 0,
  lastVerdict: null,
  failureReason: null,
  move: n,
});

async function newLoop(): Promise<{ loopId: string; input: PrepareThenFreezeInput }> {
  const repo = createFixtureRepo();
  const request = loopRequest(repo, []);
  const loopId = await insertLoop(bed.db.prisma, { repoUrl: repo, status: 'RUNNING', input: request as object });
  const contract = goalContractSchema.parse(request.contract);
  return {
    loopId,
    input: {
      loopId,
      repository: { url: repo, baseRef: 'main' },
      contractGates: [TESTS_GATE],
      progress: move(loopId, 'PREPARING', 1),
      freeze: { loopId, version: 1, contract, reason: 'submitted', progress: move(loopId, 'CONTRACT', 2) },
    },
  };
}

const phasesOf = async (loopId: string) =>
  (await bed.db.prisma.loopEvent.findMany({ where: { loopId }, orderBy: { createdAt: 'asc' } })).map((e) => e.phase);

test('the workspace is prepared, then the contract frozen under the move into CONTRACT; a retry records nothing new', async () => {
  const { loopId, input } = await newLoop();
  const first = await inActivity(loopActivity(loopId), () => prepareThenFreeze(bed.deps, input));

  const hash = sha256(canonicalJson(input.freeze!.contract));
  expect(first.frozen).toEqual({ version: 1, hash });
  expect(first.gatePlan.gates.map((g) => g.gate)).toEqual(['tests']);
  const loop = await bed.db.prisma.loop.findUniqueOrThrow({ where: { id: loopId } });
  expect(loop).toMatchObject({ phase: 'CONTRACT', workspacePath: first.workspacePath, baseCommit: first.baseCommit });
  expect(await phasesOf(loopId)).toEqual(['PREPARING', 'CONTRACT']);

  // Its worker lost before it answered: the next attempt answers the same and writes nothing twice.
  const again = await inActivity(loopActivity(loopId, 2), () => prepareThenFreeze(bed.deps, input));
  expect(again).toEqual(first);
  expect(await bed.db.prisma.contractVersion.count({ where: { loopId } })).toBe(1);
  expect(await phasesOf(loopId)).toEqual(['PREPARING', 'CONTRACT']);
});

test('without a version to freeze, the workspace alone is prepared, as for loops started before the change', async () => {
  const { loopId, input } = await newLoop();
  const { freeze: _unasked, ...prepareOnly } = input;
  const prepared = await inActivity(loopActivity(loopId), () => prepareThenFreeze(bed.deps, prepareOnly));

  expect(prepared.frozen).toBeUndefined();
  expect(await bed.db.prisma.contractVersion.count({ where: { loopId } })).toBe(0);
  expect(await phasesOf(loopId)).toEqual(['PREPARING']);
});
