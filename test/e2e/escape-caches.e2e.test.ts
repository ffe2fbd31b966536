import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanLedger } from '../support/fake-llm-server';
import { createFixtureRepo, commitFiles, scriptedMaker, SUMLIB_MANIFESTS } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// The escape suite, caches part (docs/threat-model.md, "poison dependencies through the caches"): a
// repository's set-up on one branch plants a Cargo config in CARGO_HOME naming a test runner that reports
// a pass. When a repository's package caches were one directory shared by its loops, the next loop on
// another branch of the same repository passed with the bug in place, its gate running the planted
// runner. Now set-up writes only its own loop's copy, and tool config is stripped after every set-up.

const ENDED = ['PASSED', 'FAILED', 'AWAITING_DECISION', 'REJECTED', 'CANCELLED'];
const BUGGY_LIB = [
  'pub fn sum(a: i32, b: i32) -> i32 {',
  '    a - b',
  '}',
  '',
  '#[cfg(test)]',
  'mod tests {',
  '    #[test]',
  '    fn sum_adds_two_numbers() {',
  '        assert_eq!(super::sum(2, 3), 5);',
  '    }',
  '}',
  '',
].join('\n');
/** What the planted runner prints instead of running the test binary: the test passed. */
const FAKE_RUNNER = [
  '#!/bin/sh',
  'echo "running 1 test"',
  'echo "test tests::sum_adds_two_numbers ... ok"',
  'echo',
  'echo "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"',
  '',
].join('\n');
/** Branch A's set-up: the runner and a config naming it, both in CARGO_HOME. */
const PLANT = [
  'set -e',
  'cp .ai-engineering-loop/fake-runner.sh "$CARGO_HOME/fake-runner.sh"',
  `printf '[target.%s]\\nrunner = ["sh", "%s/fake-runner.sh"]\\n' "'cfg(all())'" "$CARGO_HOME" > "$CARGO_HOME/config.toml"`,
  'echo "planted in $CARGO_HOME"',
  '',
].join('\n');

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness();
});
afterAll(async () => {
  await h?.close();
});

async function cancel(id: string): Promise<void> {
  await h.request('POST', `/v1/loops/${id}/cancel`);
  await h.waitForLoop(id, ['CANCELLED', 'PASSED', 'FAILED', 'REJECTED']);
}

/** Every file under `dir` (relative paths), for looking through a cache from the host. */
function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).map(String);
}

/** The loop on `baseRef`: the maker touches the buggy code cosmetically, the gate is `cargo test`. */
function request(repo: string, baseRef: string) {
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/lib.rs': `// sums\n${BUGGY_LIB}` } } } });
  const body = loopRequest(repo, maker.argv, {
    gates: [{ gate: 'tests', argv: ['cargo', 'test', '--offline'], timeoutSeconds: 300 }],
    maxIterations: 1,
  });
  body.repository.baseRef = baseRef;
  body.contract.acceptanceCriteria = [
    { id: 'AC-1', statement: 'sum adds two numbers', verification: { type: 'test', name: 'sum_adds_two_numbers' } },
    { id: 'AC-2', statement: 'the test suite passes', verification: { type: 'gate', gate: 'tests' } },
  ];
  return body;
}

test('a Cargo test runner one branch’s set-up plants in CARGO_HOME does not make another branch’s loop pass with the bug', async () => {
  // main: a crate whose one test fails. branch-a: the same crate, with a set-up that plants the runner.
  const repo = createFixtureRepo();
  commitFiles(
    repo,
    {
      ...SUMLIB_MANIFESTS,
      'src/lib.rs': BUGGY_LIB,
    },
    'rust crate',
  );
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe' });
  git('checkout', '--quiet', '-b', 'branch-a');
  commitFiles(
    repo,
    {
      '.ai-engineering-loop/fake-runner.sh': FAKE_RUNNER,
      '.ai-engineering-loop/plant.sh': PLANT,
      '.ai-engineering-loop/verification.json': JSON.stringify({
        version: 1,
        setup: [{ argv: ['sh', '.ai-engineering-loop/plant.sh'] }],
      }),
    },
    'set-up',
  );
  git('checkout', '--quiet', 'main');

  // Control, on the host: with that CARGO_HOME, `cargo test` passes on main's buggy code.
  const control = fs.mkdtempSync(path.join(os.tmpdir(), 'escape-caches-control-'));
  const branchA = path.join(control, 'a');
  const main = path.join(control, 'main');
  const cargoHome = path.join(control, 'cargo-home');
  fs.mkdirSync(cargoHome);
  execFileSync('git', ['clone', '--quiet', '--branch', 'branch-a', repo, branchA], { stdio: 'pipe' });
  execFileSync('git', ['clone', '--quiet', repo, main], { stdio: 'pipe' });
  const controlEnv = { ...process.env, CARGO_HOME: cargoHome, CARGO_TARGET_DIR: path.join(control, 'target') };
  execFileSync('sh', ['.ai-engineering-loop/plant.sh'], { cwd: branchA, env: controlEnv, stdio: 'pipe' });
  const fooled = execFileSync('cargo', ['test', '--offline'], {
    cwd: main,
    env: controlEnv,
    encoding: 'utf8',
    stdio: 'pipe',
  });
  expect(fooled).toContain('test result: ok. 1 passed; 0 failed');
  fs.rmSync(control, { recursive: true, force: true });

  // Loop 1, on branch-a: its set-up plants the runner (and succeeds), into its own loop's caches only.
  // A clean review for each loop, so that gates that pass would make it pass (as they did before the fix).
  h.llm.enqueue({ content: cleanLedger });
  const first = await h.submit(request(repo, 'branch-a'));
  const loop1 = await h.waitForLoop(first, ENDED);
  const setup1 = await h.db.prisma.evidence.findFirstOrThrow({ where: { loopId: first, gate: 'setup:1' } });
  expect([setup1.status, setup1.source, setup1.stdout]).toEqual([
    'PASSED',
    'repository-config',
    expect.stringContaining(`planted in ${path.join(h.dataDir, 'caches', 'private', first, 'cargo')}`),
  ]);
  // Even its own gate does not run the planted runner: tool config does not outlive the set-up.
  expect(loop1.iterations[0].evidence.find((e: any) => e.gate === 'tests')).toEqual(
    expect.objectContaining({ status: 'FAILED', testCounts: { passed: 0, failed: 1, skipped: 0 } }),
  );
  expect(loop1.status).toBe('AWAITING_DECISION');
  await cancel(first);

  // Loop 2, on main of the same repository: fails honestly.
  h.llm.enqueue({ content: cleanLedger });
  const second = await h.submit(request(repo, 'main'));
  const loop2 = await h.waitForLoop(second, ENDED);
  const [iteration] = loop2.iterations;
  expect(iteration.evidence.map((e: any) => [e.gate, e.status])).toEqual(
    expect.arrayContaining([
      ['setup:1', 'PASSED'],
      ['tests', 'FAILED'],
    ]),
  );
  const tests = iteration.evidence.find((e: any) => e.gate === 'tests');
  expect(tests.testCounts).toEqual({ passed: 0, failed: 1, skipped: 0 });
  const testsRow = await h.db.prisma.evidence.findUniqueOrThrow({ where: { id: tests.id } });
  expect(`${testsRow.stdout}${testsRow.stderr}`).toContain('assertion `left == right` failed');
  expect(iteration.verdict.verdict).toBe('ESCALATE');
  expect(loop2.status).toBe('AWAITING_DECISION');

  // From the host: the runner is only in loop 1's own caches, the config nowhere, the shared caches clean.
  const caches = path.join(h.dataDir, 'caches');
  expect(filesUnder(path.join(caches, 'private', first, 'cargo'))).toContain('fake-runner.sh');
  for (const dir of [
    path.join(caches, 'private', first),
    path.join(caches, 'private', second),
    path.join(caches, 'shared'),
  ]) {
    const files = filesUnder(dir);
    expect([dir, files.filter((f) => path.basename(f) === 'config.toml')]).toEqual([dir, []]);
    if (!dir.endsWith(first)) expect([dir, files.filter((f) => f.includes('fake-runner'))]).toEqual([dir, []]);
  }
  await cancel(second);
}, 600_000);
