import { DEFAULT_API_POLICY } from '../../api/deps';
import { cleanLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, createFixtureRepo, scriptedMaker } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// SANDBOX=none is the operator's explicit choice to run untrusted commands unconfined: the loop still
// works, and everything a person reads about it says it ran unsandboxed.

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness({
    workerEnv: { SANDBOX: 'none' },
    policy: { ...DEFAULT_API_POLICY, sandbox: { mode: 'none' } },
  });
});
afterAll(async () => {
  await h?.close();
});

test('a loop run with SANDBOX=none passes, and the API, its report and /healthz say it was unsandboxed', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: cleanLedger });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
  expect(loop.sandbox).toBe('none');
  const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
  expect(report.body.body.sandbox).toMatch(/^NONE: the operator set SANDBOX=none/);
  expect(report.body.markdown).toContain('- sandbox: NONE');
  const health = (await (await fetch(`${h.baseUrl}/healthz`)).json()) as any;
  expect(health.sandbox).toEqual({
    mode: 'none',
    confined: false,
    limits: null,
    note: expect.stringContaining('unsandboxed'),
  });
  expect(h.worker.output()).toContain('sandbox: NONE, commands run unsandboxed');
});
