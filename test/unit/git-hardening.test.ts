import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  changedFiles,
  cloneFromMirror,
  commitAll,
  commitAllThen,
  diffText,
  git,
  GitError,
  headCommit,
  resetTo,
  updateMirror,
} from '../../activities/git';
import { loadChanges, readAt, reviewDiff } from '../../activities/tamper/change-set';
import { classifyRepositoryUrl } from '../../domain/repository-url';

// The service's own git calls against real repositories booby-trapped the way a maker could try: hooks,
// an fsmonitor, a textconv driver, set directly in .git/config or through an [include]. Nothing may run.

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** Plain git, as a user would run it: none of the service's pins. */
function plainGit(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: 'pipe',
  });
}

interface TrappedRepo {
  dir: string;
  markers: string;
  base: string;
}

/** A committed repository whose every hook, fsmonitor and textconv call leaves a file in `markers`. */
function trappedRepo(via: 'config' | 'include'): TrappedRepo {
  const root = tempDir('git-trap-');
  const dir = path.join(root, 'repo');
  const markers = path.join(root, 'markers');
  const scripts = path.join(root, 'scripts');
  fs.mkdirSync(markers);
  fs.mkdirSync(scripts);
  const script = (name: string): string => {
    const file = path.join(scripts, name);
    fs.writeFileSync(file, `#!/bin/sh\ntouch '${path.join(markers, name)}'\ncat "$1" 2>/dev/null\nexit 0\n`, {
      mode: 0o755,
    });
    return file;
  };
  fs.mkdirSync(dir);
  plainGit(dir, 'init', '--quiet', '--initial-branch=main');
  fs.writeFileSync(path.join(dir, 'a.txt'), 'one\n');
  fs.writeFileSync(path.join(dir, '.gitattributes'), '*.txt diff=trap\n');
  plainGit(dir, 'add', '--all');
  plainGit(dir, 'commit', '--quiet', '-m', 'initial');

  const hooksDir = via === 'config' ? path.join(dir, '.git', 'hooks') : path.join(root, 'hooks');
  fs.mkdirSync(hooksDir, { recursive: true });
  for (const hook of ['pre-commit', 'post-commit', 'reference-transaction', 'post-checkout', 'post-index-change']) {
    fs.copyFileSync(script(hook), path.join(hooksDir, hook));
  }
  const settings = [
    '[core]',
    `\tfsmonitor = ${script('fsmonitor')}`,
    ...(via === 'include' ? [`\thooksPath = ${hooksDir}`] : []),
    '[diff "trap"]',
    `\ttextconv = ${script('textconv')}`,
    '',
  ].join('\n');
  if (via === 'config') {
    fs.appendFileSync(path.join(dir, '.git', 'config'), settings);
  } else {
    const included = path.join(root, 'included.cfg');
    fs.writeFileSync(included, settings);
    fs.appendFileSync(path.join(dir, '.git', 'config'), `[include]\n\tpath = ${included}\n`);
  }
  return { dir, markers, base: plainGit(dir, 'rev-parse', 'HEAD').trim() };
}

const markersIn = (dir: string): string[] => fs.readdirSync(dir).sort();

describe.each([
  ['.git/config', 'config'],
  ['a file .git/config includes', 'include'],
] as const)('traps set in %s', (_where, via) => {
  test('commitAll, changedFiles, diffText, the review and tamper diffs, readAt, resetTo and headCommit run none of them', async () => {
    const repo = trappedRepo(via);
    fs.writeFileSync(path.join(repo.dir, 'a.txt'), 'two\n');
    fs.writeFileSync(path.join(repo.dir, 'b.txt'), 'new\n');

    const checkpoint = await commitAll(repo.dir, 'checkpoint');
    expect(checkpoint).toEqual({
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
      parents: [repo.base],
      changedFiles: ['a.txt', 'b.txt'],
    });
    const commit = checkpoint!.commit;
    expect(await changedFiles(repo.dir, repo.base, commit)).toEqual(['a.txt', 'b.txt']);
    const diff = await diffText(repo.dir, repo.base, commit);
    expect(diff).toContain('-one\n+two\n');
    expect((await reviewDiff(repo.dir, repo.base, commit)).patch).toBe(diff);
    expect(
      (await loadChanges(repo.dir, repo.base, commit)).map((c) => [c.checkpointPath, c.added.map((l) => l.text)]),
    ).toEqual([
      ['a.txt', ['two']],
      ['b.txt', ['new']],
    ]);
    expect(await readAt(repo.dir, commit, 'a.txt')).toBe('two\n');
    expect(await readAt(repo.dir, repo.base, 'b.txt')).toBeNull();
    fs.writeFileSync(path.join(repo.dir, 'stray.txt'), 'left behind\n');
    await resetTo(repo.dir, repo.base);
    expect(await headCommit(repo.dir)).toBe(repo.base);
    expect(fs.existsSync(path.join(repo.dir, 'stray.txt'))).toBe(false);

    expect(markersIn(repo.markers)).toEqual([]);

    // The traps are live: plain git springs them.
    fs.writeFileSync(path.join(repo.dir, 'a.txt'), 'three\n');
    plainGit(repo.dir, 'status', '--short');
    plainGit(repo.dir, 'commit', '--quiet', '--all', '-m', 'plain');
    plainGit(repo.dir, 'diff', repo.base, 'HEAD');
    expect(markersIn(repo.markers)).toEqual(
      expect.arrayContaining(['fsmonitor', 'post-commit', 'pre-commit', 'reference-transaction', 'textconv']),
    );
  });
});

describe('revisions and repositories from a request', () => {
  test('a revision that looks like an option stays a revision', async () => {
    const repo = trappedRepo('config');
    await expect(changedFiles(repo.dir, '--output=/tmp/x', 'HEAD')).rejects.toThrow(GitError);
    await expect(resetTo(repo.dir, '--hard')).rejects.toThrow(GitError);
    expect(await headCommit(repo.dir)).toBe(repo.base);
  });

  test('a workspace without its .git fails instead of acting on an enclosing repository', async () => {
    const repo = trappedRepo('config');
    const workspace = path.join(repo.dir, 'nested-workspace');
    fs.mkdirSync(workspace);
    await expect(headCommit(workspace)).rejects.toThrow(/not a git repository/);
    await expect(git(workspace, ['clean', '-fd'])).rejects.toThrow(/not a git repository/);
  });

  test('--upload-pack=… never reaches git: the URL is refused', () => {
    expect(classifyRepositoryUrl(`--upload-pack=touch ${os.tmpdir()}/pwned`)).toEqual({
      ok: false,
      problem: expect.stringMatching(/begin with "-"/),
    });
  });

  test('a clone may use only the transport its URL was allowed for; plain paths are the file transport', async () => {
    const repo = trappedRepo('config');
    const cwd = tempDir('git-clone-');
    const access = (transport: 'https' | 'ssh' | 'file') => ({ transport, connectTimeoutSeconds: 5 });

    await updateMirror(cwd, repo.dir, path.join(cwd, 'mirror.git'), access('file'));
    await cloneFromMirror(cwd, path.join(cwd, 'mirror.git'), repo.dir, path.join(cwd, 'ok'));
    expect(plainGit(path.join(cwd, 'ok'), 'rev-parse', 'HEAD').trim()).toBe(repo.base);
    expect(plainGit(path.join(cwd, 'ok'), 'remote', 'get-url', 'origin').trim()).toBe(repo.dir);
    // A second loop on the repository fetches into the same mirror.
    await updateMirror(cwd, repo.dir, path.join(cwd, 'mirror.git'), access('file'));

    for (const url of [repo.dir, path.relative(cwd, repo.dir), `file://${repo.dir}`]) {
      await expect(updateMirror(cwd, url, path.join(cwd, 'refused'), access('https'))).rejects.toThrow(
        /transport 'file' not allowed/,
      );
    }
    // host:path naming an existing local directory: `git clone` would take it as a local path (its ls-remote
    // does not); with only ssh allowed it is not cloned from the disk.
    fs.symlinkSync(repo.dir, path.join(cwd, 'host:repo'));
    await expect(updateMirror(cwd, 'host:repo', path.join(cwd, 'refused'), access('ssh'))).rejects.toThrow(GitError);
    // Transport helpers are refused by git too, should one ever get past validation.
    await expect(updateMirror(cwd, 'fd::17', path.join(cwd, 'refused'), access('https'))).rejects.toThrow(
      /transport 'fd' not allowed/,
    );
    await expect(
      updateMirror(cwd, `ext::sh -c touch% ${repo.markers}/ext`, path.join(cwd, 'refused'), access('https')),
    ).rejects.toThrow(/transport 'ext' not allowed/);
    expect(markersIn(repo.markers)).toEqual([]);
    expect(fs.existsSync(path.join(cwd, 'refused'))).toBe(false);
  });

  test('a mirror update leaves nothing running in the mirror: git compacts it before the update returns', async () => {
    const cwd = tempDir('git-mirror-');
    const origin = path.join(cwd, 'origin');
    fs.mkdirSync(origin);
    plainGit(origin, 'init', '--quiet', '--initial-branch=main');
    const commit = (n: number) => {
      fs.writeFileSync(path.join(origin, `f${n}.txt`), `${n}\n`);
      plainGit(origin, 'add', '-A');
      plainGit(origin, 'commit', '--quiet', '-m', `c${n}`);
    };
    commit(1);
    const mirror = path.join(cwd, 'mirror.git');
    const access = { transport: 'file' as const, connectTimeoutSeconds: 5 };
    await updateMirror(cwd, origin, mirror, access);
    // Every fetch keeps its own pack, and two packs are past gc's threshold: the next update must compact.
    plainGit(mirror, 'config', 'fetch.unpackLimit', '1');
    plainGit(mirror, 'config', 'gc.autoPackLimit', '1');
    for (const n of [2, 3]) {
      commit(n);
      await updateMirror(cwd, origin, mirror, access);
      // Git's own automatic maintenance would still be at work in the background here (detached).
      const packs = fs.readdirSync(path.join(mirror, 'objects', 'pack')).filter((f) => f.endsWith('.pack'));
      expect(packs).toHaveLength(1);
      expect(fs.readdirSync(path.join(mirror, 'objects')).filter((f) => f.endsWith('.lock'))).toEqual([]);
      expect(fs.existsSync(path.join(mirror, 'gc.pid'))).toBe(false);
    }
    await cloneFromMirror(cwd, mirror, origin, path.join(cwd, 'clone'));
    expect(plainGit(path.join(cwd, 'clone'), 'rev-parse', 'HEAD')).toBe(plainGit(origin, 'rev-parse', 'HEAD'));
  });

  test('a remote that never answers fails within the connect timeout, helpers and all', async () => {
    // Accepts the connection and says nothing: a TLS handshake that never ends (git has no https connect timeout).
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const cwd = tempDir('git-stall-');
    try {
      await expect(
        updateMirror(cwd, `https://127.0.0.1:${port}/app.git`, path.join(cwd, 'app'), {
          transport: 'https',
          connectTimeoutSeconds: 1,
        }),
      ).rejects.toThrow(/did not answer within 1s/);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // git-remote-https survives a signal to git alone; the whole process group was ended.
      expect(execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })).not.toContain(`127.0.0.1:${port}`);
    } finally {
      sockets.forEach((socket) => socket.destroy());
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

test('commitAllThen reads the checkpoint as HEAD beside its ids; nothing to commit reads nothing', async () => {
  const repo = trappedRepo('config');
  fs.writeFileSync(path.join(repo.dir, 'a.txt'), 'two\n');

  const committed = await commitAllThen(repo.dir, 'checkpoint', () => diffText(repo.dir, repo.base, 'HEAD'));
  expect(committed!.checkpoint).toEqual({
    commit: await headCommit(repo.dir),
    parents: [repo.base],
    changedFiles: ['a.txt'],
  });
  expect(committed!.after).toBe(await diffText(repo.dir, repo.base, committed!.checkpoint.commit));

  let read = false;
  expect(await commitAllThen(repo.dir, 'nothing', async () => (read = true))).toBeNull();
  expect(read).toBe(false);
  expect(markersIn(repo.markers)).toEqual([]);
});

test('commitAllThen: a commit that fails with changes staged is an error, not "nothing to commit"', async () => {
  const repo = trappedRepo('config');
  fs.writeFileSync(path.join(repo.dir, 'a.txt'), 'three\n');
  // Another process holding the branch's lock: the commit cannot move the branch.
  const branch = (await git(repo.dir, ['symbolic-ref', '--short', 'HEAD'])).trim();
  fs.writeFileSync(path.join(repo.dir, '.git', 'refs', 'heads', `${branch}.lock`), '');

  await expect(commitAllThen(repo.dir, 'checkpoint', () => Promise.resolve())).rejects.toThrow(GitError);
  expect(await headCommit(repo.dir)).toBe(repo.base);
});

test('commitAll and changedFiles name files by their real paths, not git’s quoted forms', async () => {
  const repo = trappedRepo('config');
  const names = ['tab\there.txt', 'quote"d.txt', 'ünïcode.txt', 'new\nline.txt', 'back\\slash.txt', 'plain.txt'];
  for (const name of names) fs.writeFileSync(path.join(repo.dir, name), 'x\n');

  const checkpoint = await commitAll(repo.dir, 'checkpoint');
  expect([...checkpoint!.changedFiles].sort()).toEqual([...names].sort());
  expect([...(await changedFiles(repo.dir, repo.base, checkpoint!.commit))].sort()).toEqual([...names].sort());
  // Plain git quotes all but one of them, which is what the API used to show.
  expect(plainGit(repo.dir, 'diff', '--name-only', `${repo.base}..${checkpoint!.commit}`)).toContain(
    '"tab\\there.txt"',
  );
});
