import path from 'node:path';
import { readPartialUsage } from '../../activities/makers/partial-usage';
import { recordHistory } from '../support/histories';
import {
  presetEndpointsEnvEach,
  startFakeProviderServer,
  type FakeProviderServer,
  type ScriptedTurn,
} from '../support/fake-provider-server';
import { createFixtureRepo } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// How a real agent CLI's failures reach a person: a text-only answer, the model API refusing (404), a model
// that never answers (past the maker's timeoutSeconds) and a CLI that cannot start its run (an unknown flag)
// each end not-PASS, with the cause in GET /v1/loops/:id and in the escalation report — not just "no change".
// The CLIs are the pinned real ones (scripts/install-agents.sh); the model servers are scripted.
//
// Each CLI has a model server of its own, so each failure mode runs the four CLIs at once (a describe block
// per mode: jest runs a block's concurrent tests together, and the blocks one after another). Jest runs no
// beforeEach for concurrent tests, so each test empties its own server's queue first (`script`).

const PRESETS = ['claude-code', 'codex', 'aider', 'gemini'] as const;
type Preset = (typeof PRESETS)[number];

let h: LoopHarness;
const models = {} as Record<Preset, FakeProviderServer>;
beforeAll(async () => {
  for (const backend of PRESETS) models[backend] = await startFakeProviderServer();
  h = await startLoopHarness({
    workerEnv: { ...presetEndpointsEnvEach(models), OPERATOR_POLICY: JSON.stringify({ maxMakerTimeoutSeconds: 300 }) },
  });
});
afterAll(async () => {
  await h?.close();
  await Promise.all(Object.values(models).map((model) => model.close()));
});

/** `backend`'s model server answers with `turns`, and nothing a CLI before it left unconsumed. */
function script(backend: Preset, ...turns: ScriptedTurn[]): FakeProviderServer {
  const model = models[backend];
  model.reset();
  model.enqueue(...turns);
  return model;
}

/** Runs one iteration with `maker` and returns how the loop explains its maker run. */
async function explained(
  maker: Record<string, unknown>,
): Promise<{ id: string; status: string; maker: any; coreBlocker: string; report: any }> {
  const id = await h.submit(loopRequest(createFixtureRepo(), [], { maker: maker as never, maxIterations: 1 }));
  const loop = await h.waitForLoop(id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  const report = loop.escalations[0]
    ? (await h.request('GET', `/v1/loops/${id}/report`)).body
    : { body: { coreBlocker: '' } };
  return { id, status: loop.status, maker: loop.iterations[0]?.maker, coreBlocker: report.body.coreBlocker, report };
}

describe('a text-only answer', () => {
  test.concurrent.each(PRESETS)(
    '%s: a text-only answer ends NO_CHANGE with what the agent said',
    async (backend) => {
      script(backend, { kind: 'text', text: 'I looked at sum() and decided to change nothing.' });
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
});

describe('the model API answering 404', () => {
  test.concurrent.each(PRESETS)(
    '%s: the model API answering 404 is named',
    async (backend) => {
      // Enough for any retries the CLI makes; the next script() drops what it leaves.
      script(backend, ...Array(12).fill({ kind: 'error', status: 404, message: 'model scripted-x does not exist' }));
      const run = await explained({ backend, timeoutSeconds: 120 });
      expect(run.status).toBe('AWAITING_DECISION');
      expect(run.maker.explanation).toContain('the model API answered HTTP 404');
      expect(run.coreBlocker).toContain('the model API answered HTTP 404');
    },
    180_000,
  );
});

/** A first turn that gets each CLI working (a shell tool, or aider's edit) before the model goes quiet. */
const FIRST_TURN: Record<(typeof PRESETS)[number], ScriptedTurn> = {
  'claude-code': { kind: 'tools', calls: [{ name: 'Bash', input: { command: 'node --test', description: 'test' } }] },
  codex: { kind: 'tools', calls: [{ name: 'exec_command', input: { cmd: 'node --test' } }] },
  gemini: { kind: 'tools', calls: [{ name: 'run_shell_command', input: { command: 'node --test' } }] },
  aider: { kind: 'text', text: 'src/sum.js\n```\nexports.sum = (a, b) => a + b;\n```\n' },
};

/**
 * Long enough for each CLI to start and finish its first turn on a loaded 2-core machine with the three
 * others starting beside it: Aider (Python, litellm) and Gemini CLI take several seconds to start, and
 * missed 10 s under a busy test run. The four run at once, so the block takes this long whatever each needs.
 */
const TIMEOUT_SECONDS = 20;

describe('a model that stops answering', () => {
  test.concurrent.each(PRESETS)(
    '%s: a model that stops answering is killed at timeoutSeconds; what its session log shows is recorded',
    async (backend) => {
      script(backend, FIRST_TURN[backend], ...Array(4).fill({ kind: 'delay', ms: 600_000 }));
      const timeoutSeconds = TIMEOUT_SECONDS;
      const run = await explained({ backend, timeoutSeconds });
      expect(run.status).toBe('AWAITING_DECISION');
      expect(run.maker.outcome).toBe('TIMED_OUT');
      const seconds = Number(/^\S+ timed out after (\d+) s and was killed/.exec(run.maker.explanation)?.[1]);
      expect(seconds).toBeGreaterThanOrEqual(timeoutSeconds);
      expect(seconds).toBeLessThanOrEqual(timeoutSeconds + 3);
      expect(run.maker.explanation.startsWith(`${backend} timed out`)).toBe(true);
      // Killed, it printed no usage: the first turn's came from its session log (activities/makers/partial-usage.ts).
      const record = await h.db.prisma.executionRecord.findFirstOrThrow({
        where: { loopId: run.id, role: 'maker', kind: 'AGENT_PROCESS' },
      });
      expect(record.promptTokens).toBeGreaterThan(0);
    },
    180_000,
  );
});

describe('a CLI that cannot start its run', () => {
  test.concurrent.each(PRESETS)(
    '%s: a CLI that cannot start its run exits non-zero with its stderr',
    async (backend) => {
      // Nothing scripted: the CLI never reaches the model.
      script(backend);
      const run = await explained({ backend, timeoutSeconds: 60, extraArgs: ['--no-such-flag'] });
      expect(run.status).toBe('AWAITING_DECISION');
      expect(run.maker.outcome).toMatch(/^EXIT_[1-9]\d*$/);
      // "no-such-flag", or "such-flag" where yargs reads --no-X as a negation (Gemini CLI).
      expect(run.maker.explanation).toMatch(new RegExp(`^${backend} exited with code \\d+\\..*such-flag`, 's'));
    },
    180_000,
  );
});

test('a smoke test against a model API answering 404 fails, saying so', async () => {
  script('codex', ...Array(12).fill({ kind: 'error', status: 404, message: 'model scripted-x does not exist' }));
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

// Last: it kills the suite's worker (and starts another).
test('a run whose worker is killed mid-way is recorded INTERRUPTED: how long it ran, what its session log says it spent', async () => {
  const backend = (process.env.INTERRUPT_BACKEND ?? 'codex') as Preset;
  // One whole turn (its usage lands in the CLI's session log), then a model that never answers.
  const model = script(
    backend,
    { kind: 'tools', calls: [{ name: 'exec_command', input: { cmd: 'node --test' } }] },
    ...Array(4).fill({ kind: 'delay', ms: 600_000 }),
  );
  const before = model.requests.length;
  const id = await h.submit(
    loopRequest(createFixtureRepo(), [], { maker: { backend, timeoutSeconds: 300 } as never, maxIterations: 1 }),
  );
  await until(() => model.requests.length >= before + 2);
  // Killed once its session log (in the run's home) shows the first turn's usage.
  const stateDir = path.join(h.dataDir, 'control', id, '1', 'agent');
  await until(() => readPartialUsage(backend, stateDir));
  await h.worker.kill();
  model.reset();
  model.enqueue({ kind: 'text', text: 'Nothing to do.' });
  await h.restartWorker();
  // The next attempt (after the heartbeat timeout) finds the first one unrecorded and records it.
  const interrupted = await until(() =>
    h.db.prisma.executionRecord.findFirst({ where: { loopId: id, role: 'maker', outcome: 'INTERRUPTED' } }),
  );
  expect(interrupted).toMatchObject({ provider: backend, kind: 'AGENT_PROCESS' });
  expect(interrupted.latencyMs).toBeGreaterThan(0);
  expect(interrupted.promptTokens).toBeGreaterThan(0);
  expect(interrupted.detail).toMatch(
    /^attempt 1 \(pid \d+ on .+\) started at .+, was last seen alive \d+ s later, and ended without finishing: .*by then it had used \d+ input and \d+ output tokens \(its session log\)$/,
  );
  await h.request('POST', `/v1/loops/${id}/cancel`);
  await h.waitForLoop(id, ['CANCELLED', 'AWAITING_DECISION', 'FAILED', 'PASSED']);
}, 240_000);

/** Polls `check` until it returns something truthy (or throws after two minutes). */
async function until<T>(check: () => T | Promise<T>): Promise<NonNullable<T>> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('the condition did not become true within 2 minutes');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
