import { recordHistory } from '../support/histories';
import { presetEndpointsEnv, startFakeProviderServer, type FakeProviderServer } from '../support/fake-provider-server';
import { createFixtureRepo } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// How a real agent CLI's failures reach a person: a text-only answer, the model API refusing (404), a model
// that never answers (past the maker's timeoutSeconds) and a CLI that cannot start its run (an unknown flag)
// each end not-PASS, with the cause in GET /v1/loops/:id and in the escalation report — not just "no change".
// The CLIs are the pinned real ones (scripts/install-agents.sh); the model server is scripted.

let h: LoopHarness;
let model: FakeProviderServer;
beforeAll(async () => {
  model = await startFakeProviderServer();
  h = await startLoopHarness({
    workerEnv: { ...presetEndpointsEnv(model), OPERATOR_POLICY: JSON.stringify({ maxMakerTimeoutSeconds: 300 }) },
  });
});
beforeEach(() => model.reset());
afterAll(async () => {
  await h?.close();
  await model?.close();
});

const PRESETS = ['claude-code', 'codex', 'aider', 'gemini'] as const;

/** Runs one iteration with `maker` and returns how the loop explains its maker run. */
async function explained(
  maker: Record<string, unknown>,
): Promise<{ status: string; maker: any; coreBlocker: string; report: any }> {
  const id = await h.submit(loopRequest(createFixtureRepo(), [], { maker: maker as never, maxIterations: 1 }));
  const loop = await h.waitForLoop(id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  const report = loop.escalations[0]
    ? (await h.request('GET', `/v1/loops/${id}/report`)).body
    : { body: { coreBlocker: '' } };
  return { status: loop.status, maker: loop.iterations[0]?.maker, coreBlocker: report.body.coreBlocker, report };
}

test.each(PRESETS)(
  '%s: a text-only answer ends NO_CHANGE with what the agent said',
  async (backend) => {
    model.enqueue({ kind: 'text', text: 'I looked at sum() and decided to change nothing.' });
    const run = await explained({ backend, timeoutSeconds: 120 });
    expect(run.status).toBe('AWAITING_DECISION');
    expect(run.maker.outcome).toBe('EXIT_0');
    expect(run.maker.explanation).toContain('decided to change nothing');
    expect(run.coreBlocker).toMatch(/^The maker changed nothing: .*exited 0.*decided to change nothing/s);
    // The report states the operator's policy in force.
    expect(run.report.body.operatorPolicy).toEqual({ maxMakerTimeoutSeconds: 300 });
    expect(run.report.markdown).toContain('- operator policy: maxMakerTimeoutSeconds 300');
  },
  180_000,
);

test.each(PRESETS)(
  '%s: the model API answering 404 is named',
  async (backend) => {
    // Enough for any retries the CLI makes; reset() drops what it leaves.
    model.enqueue(...Array(12).fill({ kind: 'error', status: 404, message: 'model scripted-x does not exist' }));
    const run = await explained({ backend, timeoutSeconds: 120 });
    expect(run.status).toBe('AWAITING_DECISION');
    expect(run.maker.explanation).toContain('the model API answered HTTP 404');
    expect(run.coreBlocker).toContain('the model API answered HTTP 404');
  },
  180_000,
);

test.each(PRESETS)(
  '%s: a model that never answers is killed at timeoutSeconds',
  async (backend) => {
    model.enqueue(...Array(4).fill({ kind: 'delay', ms: 600_000 }));
    const run = await explained({ backend, timeoutSeconds: 6 });
    expect(run.status).toBe('AWAITING_DECISION');
    expect(run.maker.outcome).toBe('TIMED_OUT');
    expect(run.maker.explanation).toMatch(new RegExp(`^${backend} timed out after [6-9] s and was killed`));
  },
  180_000,
);

test.each(PRESETS)(
  '%s: a CLI that cannot start its run exits non-zero with its stderr',
  async (backend) => {
    const run = await explained({ backend, timeoutSeconds: 60, extraArgs: ['--no-such-flag'] });
    expect(run.status).toBe('AWAITING_DECISION');
    expect(run.maker.outcome).toMatch(/^EXIT_[1-9]\d*$/);
    // "no-such-flag", or "such-flag" where yargs reads --no-X as a negation (Gemini CLI).
    expect(run.maker.explanation).toMatch(new RegExp(`^${backend} exited with code \\d+\\..*such-flag`, 's'));
  },
  180_000,
);

test('a smoke test against a model API answering 404 fails, saying so', async () => {
  model.enqueue(...Array(12).fill({ kind: 'error', status: 404, message: 'model scripted-x does not exist' }));
  const checked = await h.request('POST', '/v1/agents/checks', { backends: ['codex'] });
  expect(checked.status).toBe(200);
  expect(checked.body.agents).toHaveLength(1);
  expect(checked.body.agents[0].lastCheck).toMatchObject({ ok: false });
  expect(checked.body.agents[0].lastCheck.explanation).toContain('the model API answered HTTP 404');
  recordHistory(checked.body.workflowId, 'agent-check-fails');
  // Each check costs a model call: an admin's to ask for.
  const refused = await h.request('POST', '/v1/agents/checks', {}, { authorization: `Bearer ${h.keys.submitter}` });
  expect(refused.status).toBe(403);
}, 180_000);
