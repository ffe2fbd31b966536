import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { headCommit } from '../../activities/git';
import { git } from '../support/test-git';

// HEAD's commit as `git rev-parse HEAD` gives it, whether read from the repository's files or from git.

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

const plainGit = (dir: string, ...args: string[]) => git(dir, ...args).trim();

function repository(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'head-commit-'));
  dirs.push(dir);
  plainGit(dir, 'init', '--quiet', '--initial-branch', 'engineering-loop/some-loop');
  fs.writeFileSync(path.join(dir, 'a.txt'), 'a\n');
  plainGit(dir, 'add', '.');
  plainGit(dir, 'commit', '--quiet', '-m', 'one');
  fs.writeFileSync(path.join(dir, 'a.txt'), 'b\n');
  plainGit(dir, 'commit', '--quiet', '-am', 'two');
  return dir;
}

it('reads a branch whose ref is a loose file', async () => {
  const dir = repository();
  expect(await headCommit(dir)).toBe(plainGit(dir, 'rev-parse', 'HEAD'));
});

it('asks git for a packed ref, a detached HEAD and a worktree', async () => {
  const packed = repository();
  plainGit(packed, 'pack-refs', '--all');
  expect(fs.existsSync(path.join(packed, '.git/refs/heads/engineering-loop/some-loop'))).toBe(false);
  expect(await headCommit(packed)).toBe(plainGit(packed, 'rev-parse', 'HEAD'));

  const detached = repository();
  plainGit(detached, 'checkout', '--quiet', '--detach', 'HEAD~1');
  expect(await headCommit(detached)).toBe(plainGit(detached, 'rev-parse', 'HEAD~0'));

  const worktree = path.join(detached, '..', `${path.basename(detached)}-worktree`);
  dirs.push(worktree);
  plainGit(detached, 'worktree', 'add', '--quiet', '--detach', worktree, 'engineering-loop/some-loop');
  expect(await headCommit(worktree)).toBe(plainGit(worktree, 'rev-parse', 'HEAD'));
});

it('does not take a ref file that names no object: git decides, and fails as it does', async () => {
  const dir = repository();
  fs.writeFileSync(path.join(dir, '.git/refs/heads/engineering-loop/some-loop'), 'not an object id\n');
  await expect(headCommit(dir)).rejects.toThrow();
});
