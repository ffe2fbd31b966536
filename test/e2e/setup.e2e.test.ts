import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, createFixtureRepo, makerRuns, scriptedMaker } from '../support/fixture-repo';
import { recordHistory } from '../support/histories';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// Issue 9: dependencies are installed (SETUP) before the maker and in every verification checkout; a
// machine that cannot install them, or a gate that cannot start, goes to a human as ENVIRONMENT.

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness();
});
afterAll(async () => {
  await h?.close();
});

const JEST_PACKAGE = {
  name: 'jest-project',
  version: '1.0.0',
  private: true,
  scripts: { test: 'jest' },
  devDependencies: { jest: '29.7.0' },
};
const JEST_TESTS =
  "const { sum } = require('../src/sum');\ntest('sum adds two numbers', () => expect(sum(2, 3)).toBe(5));\ntest('sum handles negatives', () => expect(sum(-2, -3)).toBe(-5));\n";

/** package-lock.json for JEST_PACKAGE, resolved from the npm registry once and kept for later runs. */
function jestLockfile(): string {
  const dir = path.join(os.tmpdir(), 'engineering-loop-setup-e2e-jest-29.7.0');
  const lock = path.join(dir, 'package-lock.json');
  if (!fs.existsSync(lock)) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(JEST_PACKAGE, null, 2));
    execFileSync('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund'], {
      cwd: dir,
      stdio: 'pipe',
      timeout: 180_000,
    });
  }
  return fs.readFileSync(lock, 'utf8');
}

/** The fixture repository with its files replaced by `files`, committed on main. */
function repoWith(files: Record<string, string>): string {
  const repo = createFixtureRepo();
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    fs.writeFileSync(path.join(repo, file), text);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=F', '-c', 'user.email=f@example.invalid', ...args], {
      cwd: repo,
      stdio: 'pipe',
    });
  git('add', '--all');
  git('commit', '--quiet', '-m', 'fixture: project');
  return repo;
}

const gateOnlyContract = {
  objective: 'Make sum() add its two arguments.',
  outcome: 'Callers of sum() get the arithmetic sum.',
  acceptanceCriteria: [
    { id: 'AC-1', statement: 'the test suite passes', verification: { type: 'gate' as const, gate: 'tests' as const } },
  ],
};

test('a real npm project whose jest comes from its lockfile: set up, inferred gates, failing test → PASS; no node_modules in the checkpoint', async () => {
  const repo = repoWith({
    'package.json': JSON.stringify(JEST_PACKAGE, null, 2),
    'package-lock.json': jestLockfile(),
    'test/sum.test.js': JEST_TESTS,
  });
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: cleanLedger });
  const started = Date.now();
  const submitted = await h.request(
    'POST',
    '/v1/loops',
    loopRequest(repo, maker.argv, { gates: [], contract: gateOnlyContract }),
  );
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION'], 400_000);
  expect(loop.status).toBe('PASSED');
  recordHistory(loop.workflowId, 'setup-then-pass');
  expect(loop.gatePlan.setup.commands).toEqual([
    expect.objectContaining({ argv: ['npm', 'ci', '--no-audit', '--no-fund'], source: 'manifest-inference' }),
  ]);
  const evidence = loop.iterations[0].evidence.map((e: any) => [e.gate, e.status, e.source]);
  expect(evidence).toEqual([
    ['setup:1', 'PASSED', 'manifest-inference'],
    ['tests:base', 'FAILED', 'manifest-inference'],
    ['tests', 'PASSED', 'manifest-inference'],
  ]);
  expect(loop.iterations[0].evidence[1].testCounts).toEqual({ passed: 0, failed: 2, skipped: 0 });
  expect(loop.iterations[0].evidence[2].testCounts).toEqual({ passed: 2, failed: 0, skipped: 0 });
  // The maker's workspace was set up too (loop-level evidence), and what it installed stayed out of the checkpoint.
  const workspaceSetup = await h.db.prisma.evidence.findMany({ where: { loopId: loop.id, iterationId: null } });
  expect(workspaceSetup.map((e) => [e.gate, e.status])).toEqual([['workspace-setup:0.0:1', 'PASSED']]);
  expect(loop.iterations[0].changedFiles).toEqual(['src/sum.js']);
  const times = [
    ...workspaceSetup,
    ...(await h.db.prisma.evidence.findMany({ where: { loopId: loop.id, gate: 'setup:1' } })),
  ].map((e) => e.endTime!.getTime() - e.startTime!.getTime());
  console.log(`set-up times (workspace, checkout): ${times.join(' ms, ')} ms; whole loop ${Date.now() - started} ms`);
}, 420_000);

test('an unchanged lockfile reuses the snapshot (an overlay as root): no install, jest runs from it, and no mount outlives the verification', async () => {
  const repo = repoWith({
    'package.json': JSON.stringify(JEST_PACKAGE, null, 2),
    'package-lock.json': jestLockfile(),
    'test/sum.test.js': JEST_TESTS,
  });
  // Iteration 1 misses (a file that fixes nothing), iteration 2 fixes: the lockfile never changes.
  const maker = scriptedMaker({
    steps: { '1': { write: { 'src/notes.txt': 'looked\n' } }, '2': { write: { 'src/sum.js': CORRECT_SUM } } },
  });
  for (let i = 0; i < 2; i++) h.llm.enqueue({ content: cleanLedger });
  const submitted = await h.request(
    'POST',
    '/v1/loops',
    loopRequest(repo, maker.argv, { gates: [], contract: gateOnlyContract }),
  );
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION'], 400_000);
  expect(loop.status).toBe('PASSED');
  const rows = loop.iterations.map((i: any) => i.evidence.map((e: any) => [e.gate, e.status]));
  expect(rows).toEqual([
    [
      ['setup:1', 'PASSED'],
      ['tests:base', 'FAILED'],
      ['tests', 'FAILED'],
    ],
    [
      ['setup:1', 'REUSED'],
      ['tests', 'PASSED'],
    ],
  ]);
  const reused = await h.db.prisma.evidence.findFirstOrThrow({ where: { loopId: loop.id, status: 'REUSED' } });
  const attached = process.getuid?.() === 0 ? 'mounted under an overlay' : 'copied';
  expect(reused.stdout).toMatch(new RegExp(`^not run: the dependencies were reused from snapshot \\w+ \\(${attached}`));
  // The worker's overlays are gone once each verification ended: the kernel lists none under its data.
  expect(fs.readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(h.dataDir);
}, 420_000);

test('a set-up that cannot install escalates ENVIRONMENT before any maker, quoting the output; reject ends the loop', async () => {
  const broken = { ...JEST_PACKAGE, devDependencies: { 'left-pad': '999.999.999' } };
  const repo = repoWith({ 'package.json': JSON.stringify(broken, null, 2) });
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  const submitted = await h.request(
    'POST',
    '/v1/loops',
    loopRequest(repo, maker.argv, { gates: [], contract: gateOnlyContract }),
  );
  const waiting = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED'], 300_000);
  expect(waiting.status).toBe('AWAITING_DECISION');
  expect(waiting.escalations).toEqual([expect.objectContaining({ trigger: 'ENVIRONMENT', status: 'OPEN' })]);
  expect(waiting.iterations).toEqual([]);
  expect(makerRuns(maker.stateDir)).toEqual([]);
  const report = await h.request('GET', `/v1/loops/${waiting.id}/report`);
  expect(report.body.markdown).toContain('set-up command `npm install --no-audit --no-fund --no-package-lock`');
  expect(report.body.markdown).toMatch(/ETARGET|No matching version/);

  expect(
    (
      await h.request('POST', `/v1/loops/${waiting.id}/decisions`, {
        kind: 'reject',
        escalationId: waiting.escalations[0].id,
      })
    ).status,
  ).toBe(202);
  expect((await h.waitForLoop(waiting.id, ['REJECTED', 'FAILED'])).status).toBe('REJECTED');
  recordHistory(waiting.workflowId, 'setup-environment-reject');
}, 360_000);

test('a gate that cannot start (exit 127, not found) escalates ENVIRONMENT instead of sending the maker back', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  const body = loopRequest(repo, maker.argv, {
    gates: [{ gate: 'tests', argv: ['sh', '-c', 'no-such-test-runner --ci'], timeoutSeconds: 60 }],
  });
  const submitted = await h.request('POST', '/v1/loops', body);
  const loop = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(loop.status).toBe('AWAITING_DECISION');
  expect(loop.iterations.map((i: any) => [i.verdict.verdict, i.verdict.trigger])).toEqual([
    ['ESCALATE', 'ENVIRONMENT'],
  ]);
  expect(loop.iterations[0].verdict.directives).toEqual([]);
  expect(makerRuns(maker.stateDir)).toEqual([1]);
  const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
  expect(report.body.markdown).toContain('no-such-test-runner: not found');
});

test('a runner nothing installed (python -m nose2, exit 1) escalates ENVIRONMENT instead of sending the maker back', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  const body = loopRequest(repo, maker.argv, {
    gates: [{ gate: 'tests', argv: ['python3', '-m', 'nose2'], timeoutSeconds: 60 }],
  });
  const submitted = await h.request('POST', '/v1/loops', body);
  const loop = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(loop.status).toBe('AWAITING_DECISION');
  expect(loop.iterations.map((i: any) => [i.verdict.verdict, i.verdict.trigger])).toEqual([
    ['ESCALATE', 'ENVIRONMENT'],
  ]);
  expect(makerRuns(maker.stateDir)).toEqual([1]);
  const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
  expect(report.body.markdown).toMatch(
    /could not find its runner, nothing installed it: \S*python[\d.]*: No module named nose2/,
  );
});
