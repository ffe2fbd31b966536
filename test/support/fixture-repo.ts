import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sharedTestDir } from './sandbox';

// A real git repository with a tiny Node project whose tests run with node:test.

export const BUGGY_SUM = 'exports.sum = (a, b) => a - b;\n';
export const WRONG_SUM = 'exports.sum = (a, b) => a * b;\n';
export const CORRECT_SUM = 'exports.sum = (a, b) => a + b;\n';
export const SUM_TESTS = [
  "const test = require('node:test');",
  "const assert = require('node:assert');",
  "const { sum } = require('../src/sum');",
  "test('sum adds two numbers', () => assert.strictEqual(sum(2, 3), 5));",
  "test('sum handles negatives', () => assert.strictEqual(sum(-2, -3), -5));",
  '',
].join('\n');

export function createFixtureRepo(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loop-fixture-'));
  const write = (file: string, content: string) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  };
  write(
    'package.json',
    JSON.stringify({ name: 'fixture', version: '1.0.0', scripts: { test: 'node --test' } }, null, 2),
  );
  write('src/sum.js', BUGGY_SUM);
  write('test/sum.test.js', SUM_TESTS);
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Fixture', '-c', 'user.email=fixture@example.invalid', ...args], {
      cwd: dir,
      stdio: 'pipe',
    });
  git('init', '--quiet', '--initial-branch=main');
  git('add', '--all');
  git('commit', '--quiet', '-m', 'fixture: initial');
  return dir;
}

export interface MakerScript {
  stateDir: string;
  /** Per sequence: files to write, then files to delete (both: a rename), and a report for a human. */
  steps: Record<
    string,
    { write?: Record<string, string>; remove?: string[]; report?: { kind: string; reason: string } }
  >;
  hangOnce?: number[];
}

/** Writes a scripted-maker script and returns the maker argv that runs it. */
export function scriptedMaker(script: Omit<MakerScript, 'stateDir'>): { argv: string[]; stateDir: string } {
  const stateDir = sharedTestDir('loop-maker-');
  const file = path.join(stateDir, 'script.json');
  fs.writeFileSync(file, JSON.stringify({ ...script, stateDir }));
  return { argv: [process.execPath, path.resolve(__dirname, '../fixtures/agents/scripted-maker.js'), file], stateDir };
}

export function makerRuns(stateDir: string): number[] {
  const log = path.join(stateDir, 'runs.log');
  return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map(Number) : [];
}

export function makerPrompts(stateDir: string): string[] {
  return fs
    .readdirSync(stateDir)
    .filter((f) => f.startsWith('prompt-'))
    .sort()
    .map((f) => fs.readFileSync(path.join(stateDir, f), 'utf8'));
}

/** A bare clone of the fixture repository, standing in for a remote "origin" a loop clones from and pushes to. */
export function createBareOrigin(): string {
  const source = createFixtureRepo();
  const bare = `${fs.mkdtempSync(path.join(os.tmpdir(), 'loop-origin-'))}/origin.git`;
  execFileSync('git', ['clone', '--quiet', '--bare', source, bare], { stdio: 'pipe' });
  fs.rmSync(source, { recursive: true, force: true });
  return bare;
}

/** Writes `files` into `repo` and commits them. */
export function commitFiles(repo: string, files: Record<string, string>, message: string): void {
  for (const [file, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    fs.writeFileSync(path.join(repo, file), content);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=Fixture', '-c', 'user.email=fixture@example.invalid', ...args], {
      cwd: repo,
      stdio: 'pipe',
    });
  git('add', '--all');
  git('commit', '--quiet', '-m', message);
}
