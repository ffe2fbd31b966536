import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ActivityDeps } from '../../activities/deps';
import { stopLauncher } from '../../activities/process/launcher';
import {
  checkoutAt,
  discardVerificationCheckout,
  freshVerificationCheckout,
  movedCheckout,
} from '../../activities/verification/verification-checkout';
import { CORRECT_SUM, createFixtureRepo } from '../support/fixture-repo';

// The verification's checkout, with real git: exactly the commit asked for, nothing a previous run left,
// and gone once the next maker's activity discards it (it does so while its maker works); made at the
// iteration's start and moved to its checkpoint, the same tree.

let repo: string;
let deps: ActivityDeps;
let base: string;
let fixed: string;
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', ...args], {
    cwd: repo,
    encoding: 'utf8',
  }).trim();
const loopId = '0c4f4861-d4cb-4018-ab9e-cd89cf4226c1';

beforeAll(() => {
  repo = createFixtureRepo();
  base = git('rev-parse', 'HEAD');
  fs.writeFileSync(path.join(repo, 'src/sum.js'), CORRECT_SUM);
  git('commit', '--quiet', '-am', 'fix');
  fixed = git('rev-parse', 'HEAD');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verification-checkout-'));
  deps = { config: { dataDir }, sandbox: { owner: null } } as unknown as ActivityDeps;
});
afterAll(async () => {
  await stopLauncher();
});

const sumIn = (dir: string) => fs.readFileSync(path.join(dir, 'src/sum.js'), 'utf8');

test('each checkout holds exactly its commit, and nothing an earlier run wrote', async () => {
  const first = await freshVerificationCheckout(deps, loopId, repo, fixed);
  expect(sumIn(first)).toBe(CORRECT_SUM);
  expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: first, encoding: 'utf8' }).trim()).toBe(fixed);
  fs.writeFileSync(path.join(first, 'left-by-a-gate.txt'), 'x');

  const second = await freshVerificationCheckout(deps, loopId, repo, base);
  expect(second).toBe(first);
  expect(sumIn(second)).not.toBe(CORRECT_SUM);
  expect(fs.existsSync(path.join(second, 'left-by-a-gate.txt'))).toBe(false);
});

test('a discarded checkout is gone, and the next one is made as before', async () => {
  const dir = await freshVerificationCheckout(deps, loopId, repo, fixed);
  await discardVerificationCheckout(deps, loopId);
  expect(fs.existsSync(dir)).toBe(false);
  await discardVerificationCheckout(deps, loopId);
  expect(sumIn(await freshVerificationCheckout(deps, loopId, repo, fixed))).toBe(CORRECT_SUM);
});

test('a checkout made at the start commit and moved to the checkpoint holds exactly the checkpoint', async () => {
  // The checkpoint deletes a file, adds one and commits an install directory (which never reaches a gate).
  git('checkout', '--quiet', '--detach', fixed);
  fs.rmSync(path.join(repo, 'test/sum.test.js'));
  fs.mkdirSync(path.join(repo, 'node_modules/planted'), { recursive: true });
  fs.writeFileSync(path.join(repo, 'node_modules/planted/index.js'), 'module.exports = 1;\n');
  fs.writeFileSync(path.join(repo, 'added.txt'), 'added\n');
  git('add', '--all', '--force');
  git('commit', '--quiet', '-m', 'checkpoint');
  const checkpoint = git('rev-parse', 'HEAD');
  git('checkout', '--quiet', '-');

  const atStart = await checkoutAt(deps, loopId, repo, base);
  expect(sumIn(atStart)).not.toBe(CORRECT_SUM);
  const moved = await movedCheckout(deps, repo, atStart, checkpoint);
  expect(moved).toBe(atStart);
  expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: moved, encoding: 'utf8' }).trim()).toBe(checkpoint);
  // File for file the commit's tree, its install directory aside.
  const committed = git('ls-tree', '-r', '--name-only', checkpoint)
    .split('\n')
    .filter((file) => !file.startsWith('node_modules/'));
  const onDisk = fs
    .readdirSync(moved, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(moved, path.join(entry.parentPath ?? entry.path, entry.name)))
    .filter((file) => file !== '.git');
  expect(onDisk.sort()).toEqual(committed.sort());
  expect(committed).toEqual(expect.arrayContaining(['added.txt', 'src/sum.js']));
  expect(committed).not.toContain('test/sum.test.js');
  expect(sumIn(moved)).toBe(CORRECT_SUM);
  expect(fs.existsSync(path.join(moved, 'node_modules'))).toBe(false);
});
