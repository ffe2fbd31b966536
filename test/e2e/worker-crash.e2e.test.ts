import fs from 'node:fs';
import path from 'node:path';
import { CORRECT_SUM, createFixtureRepo, makerRuns, scriptedMaker } from '../support/fixture-repo';
import { cleanLedger } from '../support/fake-llm-server';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';
import { processesMatching, waitUntilNoProcessMatching } from '../support/processes';

// Durability: the worker process dies (SIGKILL) while the maker runs; a new worker picks the loop up.

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness();
});
afterAll(async () => {
  await h?.close();
});

test('a worker killed during the maker step is replaced and the loop completes with no iteration lost or repeated', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } }, hangOnce: [1] });
  h.llm.enqueue({ content: cleanLedger });

  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  expect(submitted.status).toBe(201);
  const hangMarker = path.join(maker.stateDir, 'hung-1');
  const deadline = Date.now() + 120_000;
  while (!fs.existsSync(hangMarker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(fs.existsSync(hangMarker)).toBe(true);

  expect(processesMatching(maker.stateDir)).not.toEqual([]);
  await h.worker.kill();
  // The agent's sandbox dies with its worker (--die-with-parent): nothing keeps writing the workspace.
  await waitUntilNoProcessMatching(maker.stateDir);
  await h.restartWorker();

  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
  // One iteration, whose maker ran twice: the killed attempt and the retry on the new worker.
  expect(loop.iterations.map((i: any) => [i.sequence, i.roundIteration, i.makerAttempts, i.verdict.verdict])).toEqual([[1, 1, 2, 'PASS']]);
  expect(makerRuns(maker.stateDir)).toEqual([1, 1]);
  // The interrupted attempt's half-done work did not leak into the checkpoint.
  expect(loop.iterations[0].changedFiles).toEqual(['src/sum.js']);
  const rows = await h.db.prisma.iteration.count({ where: { loopId: loop.id } });
  expect(rows).toBe(1);
  expect(h.llm.requests).toHaveLength(1);
  // The killed attempt had written the move into MAKER, and its retry wrote it again: one event.
  const events = await h.db.prisma.loopEvent.findMany({ where: { loopId: loop.id }, orderBy: { createdAt: 'asc' }, select: { phase: true } });
  expect(events.map((e) => e.phase).filter((phase) => phase !== 'SETUP')).toEqual(['PREPARING', 'CONTRACT', 'MAKER', 'VERIFY', 'REVIEW', 'JUDGE', 'DONE']);
});
