import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { resolveTemporalCli } from '../../service/temporal-dev-server';
import { cleanLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, SUM_TESTS, createFixtureRepo, scriptedMaker } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';
import { processesMatching, waitUntilNoProcessMatching } from '../support/processes';
import { sharedTestDir } from '../support/sandbox';

// Verification that holds up: huge output stays out of workflow history, secrets stay out of stored
// evidence, and cancelling a loop kills a running gate's whole process tree within seconds.

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness();
});
afterAll(async () => {
  await h?.close();
});

const FIFTY_MB = 50 * 1024 * 1024;

function historyJson(workflowId: string): string {
  return execFileSync(
    resolveTemporalCli({ temporal: { cliPath: process.env.TEMPORAL_CLI_PATH } }),
    [
      'workflow',
      'show',
      '--workflow-id',
      workflowId,
      '--address',
      process.env.TEST_TEMPORAL_ADDRESS!,
      '--output',
      'json',
    ],
    { maxBuffer: 256 * 1024 * 1024 },
  ).toString();
}

test('a gate printing 50 MB leaves the workflow history small; the log is stored capped and served by the API', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: cleanLedger });
  const chatty = `const chunk = 'y'.repeat(1024 * 1024 - 1) + '\\n'; for (let i = 0; i < 50; i++) process.stdout.write(chunk); console.log('build done');`;
  const body = loopRequest(repo, maker.argv, {
    gates: [
      { gate: 'tests', argv: ['node', '--test'], timeoutSeconds: 120 },
      { gate: 'build', argv: ['node', '-e', chatty], timeoutSeconds: 120 },
    ],
  });
  const submitted = await h.request('POST', '/v1/loops', body);
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');

  const build = loop.iterations[0].evidence.find((e: any) => e.gate === 'build');
  const record = await h.db.prisma.evidence.findUniqueOrThrow({ where: { id: build.id } });
  expect(record.stdoutBytes).toBe(FIFTY_MB + 'build done\n'.length);
  expect(record.outputTruncated).toBe(true);
  expect(record.stdout.length).toBeLessThan(1024 * 1024 + 500);
  expect(record.stdoutSha256).toMatch(/^[0-9a-f]{64}$/);

  const log = await fetch(`${h.baseUrl}/v1/loops/${loop.id}/evidence/${build.id}/log?stream=stdout`, {
    headers: { authorization: `Bearer ${h.keys.admin}` },
  });
  expect(log.headers.get('content-type')).toContain('text/plain');
  const text = await log.text();
  expect(text).toContain(`bytes omitted]`);
  expect(text.endsWith('build done\n')).toBe(true);

  const history = historyJson(loop.workflowId);
  expect(history.length).toBeLessThan(512 * 1024);
  expect(history).not.toContain('yyyyyyyyyy');
});

test('secrets printed by a gate are redacted, and the service’s own secrets never reach gate commands', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: cleanLedger });
  const leaky = [
    "console.log('llm key seen by the gate: ' + process.env.LLM_API_KEY);",
    "console.log('database url seen by the gate: ' + process.env.DATABASE_URL);",
    "console.log('deploy with GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789');",
    "console.log('connecting to postgres://app:hunter2hunter2@db:5432/app');",
  ].join('\n');
  const body = loopRequest(repo, maker.argv, {
    gates: [
      { gate: 'tests', argv: ['node', '--test'], timeoutSeconds: 120 },
      { gate: 'lint', argv: ['node', '-e', leaky], timeoutSeconds: 60 },
    ],
  });
  const submitted = await h.request('POST', '/v1/loops', body);
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  const lint = loop.iterations[0].evidence.find((e: any) => e.gate === 'lint');
  const stored = (await h.request('GET', `/v1/loops/${loop.id}/evidence/${lint.id}`)).body.stdout as string;
  expect(stored).toContain('llm key seen by the gate: undefined');
  expect(stored).toContain('database url seen by the gate: undefined');
  expect(stored).toContain('GITHUB_TOKEN=[REDACTED]');
  expect(stored).toContain('postgres://app:[REDACTED]@db:5432/app');
  expect(stored).not.toContain('hunter2hunter2');
  expect(stored).not.toContain('ghp_');
});

test('cancelling a loop during a long gate kills the gate’s process tree within seconds', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  const pidFile = path.join(sharedTestDir('gate-pids-'), 'grandchild.pid');
  const marker = `grandchild-${path.basename(path.dirname(pidFile))}`;
  const slowGate = [
    "const { spawn } = require('node:child_process');",
    `const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', ${JSON.stringify(marker)}], { stdio: 'ignore' });`,
    `require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, String(child.pid));`,
    'setInterval(() => {}, 1000);',
  ].join('\n');
  const body = loopRequest(repo, maker.argv, {
    gates: [{ gate: 'tests', argv: ['node', '-e', slowGate], timeoutSeconds: 600 }],
  });
  const submitted = await h.request('POST', '/v1/loops', body);
  const deadline = Date.now() + 120_000;
  while (!fs.existsSync(pidFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(processesMatching(marker)).not.toEqual([]);

  expect((await h.request('POST', `/v1/loops/${submitted.body.id}/cancel`)).status).toBe(202);
  const loop = await h.waitForLoop(submitted.body.id, ['CANCELLED']);
  await waitUntilNoProcessMatching(marker);
  const evidence = await h.db.prisma.evidence.findMany({ where: { loopId: loop.id } });
  // The first run of the tests is the base run's.
  expect(evidence.map((e) => [e.gate, e.timeoutStatus])).toEqual([['tests:base', 'CANCELLED']]);
  // The whole stop, from the command's start to its recorded end, took seconds, not the 600 s timeout.
  expect(evidence[0]!.endTime!.getTime() - evidence[0]!.startTime!.getTime()).toBeLessThan(60_000);
});

test('with no gates in the request, the tests gate is inferred from package.json and its provenance recorded', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: cleanLedger });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv, { gates: [] }));
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
  expect(loop.gatePlan.gates).toEqual([
    expect.objectContaining({ gate: 'tests', argv: ['npm', 'test'], source: 'manifest-inference' }),
  ]);
  // Then the acceptance test once more, with CI unset (the differential run).
  expect(loop.iterations[0].evidence.map((e: any) => [e.gate, e.status, e.source])).toEqual([
    ['tests:base', 'FAILED', 'manifest-inference'],
    ['tests', 'PASSED', 'manifest-inference'],
    ['tests:differential', 'PASSED', 'manifest-inference'],
  ]);
  expect(loop.iterations[0].evidence[1].testCounts).toEqual({ passed: 2, failed: 0, skipped: 0 });
});

test('a maker that skips a test to get green is caught: a VALID BLOCKER from the system, then reverted → PASS', async () => {
  const repo = createFixtureRepo();
  const skipped = SUM_TESTS.replace("test('sum handles negatives'", "test.skip('sum handles negatives'");
  const maker = scriptedMaker({
    steps: {
      '1': { write: { 'src/sum.js': 'exports.sum = (a, b) => a + b + 0;\n', 'test/sum.test.js': skipped } },
      '2': { write: { 'src/sum.js': CORRECT_SUM, 'test/sum.test.js': SUM_TESTS } },
    },
  });
  h.llm.enqueue({ content: cleanLedger }, { content: cleanLedger });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
  const [first, second] = loop.iterations;
  expect(first.verdict.verdict).toBe('ITERATE');
  expect(first.findings).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        source: 'SYSTEM',
        rule: 'SKIP_OR_ONLY_ADDED',
        severity: 'BLOCKER',
        validity: 'VALID',
        location: expect.objectContaining({ file: 'test/sum.test.js', startLine: 5 }),
        evidence: expect.stringContaining('+5:'),
        failureScenario:
          'Had this gone unnoticed, the skipped or excluded tests would not run, so their failures would not show.',
      }),
    ]),
  );
  expect(
    first.verdict.directives.some((d: string) => /^\d\. Revert TMP-\d{3} \(BLOCKER, test\/sum\.test\.js:5-5\)/.test(d)),
  ).toBe(true);
  expect(second.findings).toEqual([]);
  expect(second.verdict.verdict).toBe('PASS');
});

test('an invalid .ai-engineering-loop/verification.json fails the loop with the validation message as its reason', async () => {
  const repo = createFixtureRepo();
  fs.mkdirSync(path.join(repo, '.ai-engineering-loop'));
  fs.writeFileSync(
    path.join(repo, '.ai-engineering-loop/verification.json'),
    JSON.stringify({ version: 1, gates: { tests: { argv: [] } } }),
  );
  execFileSync('git', ['-c', 'user.name=Fixture', '-c', 'user.email=fixture@example.invalid', 'add', '--all'], {
    cwd: repo,
  });
  execFileSync(
    'git',
    ['-c', 'user.name=Fixture', '-c', 'user.email=fixture@example.invalid', 'commit', '--quiet', '-m', 'bad config'],
    { cwd: repo },
  );
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('FAILED');
  expect(loop.failureReason).toContain('.ai-engineering-loop/verification.json is invalid: gates.tests.argv:');
  expect(loop.failureReason).not.toContain('Activity task failed');
});
