import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stopLauncher } from '../../activities/process/launcher';
import { baseGateEntrypoints } from '../../activities/tamper/base-entrypoints';
import type { ResolvedGate } from '../../domain/gates';

// The base's gate entrypoints are read once per workspace, base commit and gates: the maker's check and
// every verification ask again, and a commit's files never change.

let dir: string;
let base: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'base-entrypoints-'));
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', ...args], {
      cwd: dir,
      encoding: 'utf8',
    });
  git('init', '--quiet', '--initial-branch=main');
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ scripts: { test: 'jest' }, jest: { testEnvironment: 'node' } }),
  );
  fs.writeFileSync(path.join(dir, 'jest.config.js'), 'module.exports = {};\n');
  git('add', '--all');
  git('commit', '--quiet', '-m', 'base');
  base = git('rev-parse', 'HEAD').trim();
});
afterAll(async () => {
  await stopLauncher();
  fs.rmSync(dir, { recursive: true, force: true });
});

const gate = (argv: string[]): ResolvedGate => ({
  gate: 'tests',
  argv,
  timeoutSeconds: 60,
  source: 'contract',
  detail: 'test',
});

test('a second ask for the same base and gates is answered without git; each caller gets its own copy', async () => {
  const tests = [gate(['npm', 'test'])];
  const first = await baseGateEntrypoints(dir, base, tests);
  expect([...first.files.keys()]).toEqual(expect.arrayContaining(['**/jest.config.*']));
  expect([...first.packageKeys.keys()]).toEqual(expect.arrayContaining(['scripts.test', 'jest']));
  first.files.clear();

  // The repository is gone: only the kept answer can still be given, unchanged by the first caller.
  fs.renameSync(path.join(dir, '.git'), path.join(dir, '.git-away'));
  try {
    const again = await baseGateEntrypoints(dir, base, tests);
    expect([...again.files.keys()]).toEqual(expect.arrayContaining(['**/jest.config.*']));
    // Other gates are another question, which needs git.
    await expect(baseGateEntrypoints(dir, base, [gate(['npx', 'vitest'])])).rejects.toThrow();
  } finally {
    fs.renameSync(path.join(dir, '.git-away'), path.join(dir, '.git'));
  }
  // A failed read is not kept.
  expect([...(await baseGateEntrypoints(dir, base, [gate(['npx', 'vitest'])])).tools.keys()]).toContain('vitest');
});
