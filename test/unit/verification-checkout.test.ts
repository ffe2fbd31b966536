import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ActivityDeps } from '../../activities/deps';
import { stopLauncher } from '../../activities/process/launcher';
import {
  discardVerificationCheckout,
  freshVerificationCheckout,
} from '../../activities/verification/verification-checkout';
import { CORRECT_SUM, createFixtureRepo } from '../support/fixture-repo';

// The verification's checkout, with real git: exactly the commit asked for, nothing a previous run left,
// and gone once the next maker's activity discards it (it does so while its maker works).

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
