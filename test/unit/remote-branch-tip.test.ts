import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { advertisedTip, git, remoteBranchTip } from '../../activities/git';

// Where a base branch is now: read from the remote's advertisement, fetched only when the workspace lacks it.

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

describe('advertisedTip', () => {
  it('takes the line naming exactly the ref, not one that merely ends in it', () => {
    expect(advertisedTip(`${A}\trefs/heads/x/refs/heads/main\n${B}\trefs/heads/main\n`, 'refs/heads/main')).toBe(B);
  });

  it('is null when the ref is not advertised or its id is no object id', () => {
    expect(advertisedTip(`${A}\trefs/heads/x/refs/heads/main\n`, 'refs/heads/main')).toBeNull();
    expect(advertisedTip('', 'refs/heads/main')).toBeNull();
    expect(advertisedTip(`--upload-pack=x\trefs/heads/main\n`, 'refs/heads/main')).toBeNull();
  });
});

describe('remoteBranchTip against real repositories', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
  const local = { transport: 'file' as const, connectTimeoutSeconds: 30 };

  function plainGit(cwd: string, ...args: string[]): string {
    return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', ...args], {
      cwd,
      encoding: 'utf8',
      stdio: 'pipe',
    }).trim();
  }

  it('returns an unmoved tip without fetching, and fetches a moved one', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'branch-tip-'));
    dirs.push(root);
    const origin = path.join(root, 'origin');
    fs.mkdirSync(origin);
    plainGit(origin, 'init', '--quiet', '--initial-branch=main');
    fs.writeFileSync(path.join(origin, 'a.txt'), 'one\n');
    plainGit(origin, 'add', 'a.txt');
    plainGit(origin, 'commit', '--quiet', '-m', 'one');
    plainGit(root, 'clone', '--quiet', origin, 'work');
    const work = path.join(root, 'work');
    const first = plainGit(origin, 'rev-parse', 'HEAD');

    expect(await remoteBranchTip(work, origin, 'main', local)).toBe(first);
    // Nothing was fetched: the scratch ref a fetch writes does not exist.
    await expect(git(work, ['rev-parse', '--verify', 'refs/engineering-loop/base-now'])).rejects.toThrow();

    fs.writeFileSync(path.join(origin, 'a.txt'), 'two\n');
    plainGit(origin, 'commit', '--quiet', '-am', 'two');
    const moved = plainGit(origin, 'rev-parse', 'HEAD');
    expect(await remoteBranchTip(work, origin, 'main', local)).toBe(moved);
    expect((await git(work, ['cat-file', '-t', moved])).trim()).toBe('commit');

    expect(await remoteBranchTip(work, origin, 'no-such-branch', local)).toBeNull();
  });
});
