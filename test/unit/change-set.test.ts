import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { diffText } from '../../activities/git';
import { changedNames } from '../../analysis/tamper/change-set';
import { cachedReader, loadChanges, readAt, reviewDiff } from '../../activities/tamper/change-set';
import { git } from '../support/test-git';

// One `git diff --raw -p -z` stands in for a `--name-status`/`--name-only` call and a patch call of the
// same two commits: the paths must read exactly as the separate calls give them, and the patch text
// must be byte for byte the one the reviewer (and the maker's diff hash) always got.

const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

function commit(dir: string): string {
  git(dir, 'add', '--all');
  git(dir, 'commit', '--quiet', '-m', 'change');
  return git(dir, 'rev-parse', 'HEAD').trim();
}

/** Modified, deleted, renamed-and-edited, added, binary and mode-only changes, with awkward names. */
function branch() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'change-set-'));
  dirs.push(dir);
  const write = (file: string, text: string | Buffer) => {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  };
  git(dir, 'init', '--quiet', '--initial-branch=main');
  write('src/keep.js', 'a();\n-- a/keep.js\nc();\n');
  write('src/gone.js', 'gone();\n');
  write('src/old name.js', Array.from({ length: 20 }, (_, i) => `line${i}();`).join('\n') + '\n');
  write('assets/logo.bin', Buffer.from([0, 1, 2, 3]));
  write('run.sh', 'echo run\n');
  const base = commit(dir);
  write('src/keep.js', 'a();\nb();\n');
  fs.rmSync(path.join(dir, 'src/gone.js'));
  fs.rmSync(path.join(dir, 'src/old name.js'));
  write('src/nouveau é.js', Array.from({ length: 20 }, (_, i) => `line${i}();`).join('\n') + '\nadded();\n');
  write('src/tab\tname.js', 'tab();\n');
  write('assets/logo.bin', Buffer.from([0, 1, 2, 4]));
  fs.chmodSync(path.join(dir, 'run.sh'), 0o755);
  return { dir, base, checkpoint: commit(dir) };
}

/** `git diff --name-status -z -M`, read the way the separate call used to be. */
function nameStatus(dir: string, base: string, checkpoint: string) {
  const fields = git(dir, 'diff', '--name-status', '-z', '-M', `${base}..${checkpoint}`).split('\0');
  const paths: { basePath: string | null; checkpointPath: string | null }[] = [];
  for (let i = 0; i + 1 < fields.length;) {
    const status = fields[i]!.charAt(0);
    if (status === 'R') {
      paths.push({ basePath: fields[i + 1]!, checkpointPath: fields[i + 2]! });
      i += 3;
    } else {
      paths.push({
        basePath: status === 'A' ? null : fields[i + 1]!,
        checkpointPath: status === 'D' ? null : fields[i + 1]!,
      });
      i += 2;
    }
  }
  return paths;
}

test('the review diff is diffText’s text, and its names are --name-only’s', async () => {
  const { dir, base, checkpoint } = branch();
  const diff = await reviewDiff(dir, base, checkpoint);
  expect(diff.patch).toBe(await diffText(dir, base, checkpoint));
  expect(changedNames(diff.paths)).toEqual(
    git(dir, 'diff', '--name-only', '-z', `${base}..${checkpoint}`).split('\0').filter(Boolean),
  );
  expect(changedNames(diff.paths)).toContain('src/nouveau é.js');
});

test('the tamper diff has --name-status’s paths, renames followed, and each file’s own lines', async () => {
  const { dir, base, checkpoint } = branch();
  const changes = await loadChanges(dir, base, checkpoint);
  expect(changes.map(({ basePath, checkpointPath }) => ({ basePath, checkpointPath }))).toEqual(
    nameStatus(dir, base, checkpoint),
  );
  const byPath = new Map(changes.map((c) => [c.checkpointPath ?? c.basePath, c]));
  expect(byPath.get('src/keep.js')).toMatchObject({
    added: [{ line: 2, text: 'b();' }],
    removed: [
      { line: 2, text: '-- a/keep.js' },
      { line: 2, text: 'c();' },
    ],
  });
  expect(byPath.get('src/nouveau é.js')).toMatchObject({
    basePath: 'src/old name.js',
    added: [{ line: 21, text: 'added();' }],
    removed: [],
  });
  expect(byPath.get('src/tab\tname.js')).toMatchObject({ basePath: null, added: [{ line: 1, text: 'tab();' }] });
  expect(byPath.get('src/gone.js')).toMatchObject({ checkpointPath: null, removed: [{ line: 1, text: 'gone();' }] });
  expect(byPath.get('run.sh')).toMatchObject({ added: [], removed: [] });
  expect(byPath.get('assets/logo.bin')).toMatchObject({ added: [], removed: [] });
});

test('an empty range has no paths and no patch', async () => {
  const { dir, checkpoint } = branch();
  expect(await reviewDiff(dir, checkpoint, checkpoint)).toEqual({ paths: [], patch: '' });
  expect(await loadChanges(dir, checkpoint, checkpoint)).toEqual([]);
});

test('readAt: a file’s text, null for a path the commit lacks, a failure still a failure; the cached reader reads once', async () => {
  const { dir, base, checkpoint } = branch();
  expect(await readAt(dir, checkpoint, 'src/keep.js')).toBe('a();\nb();\n');
  expect(await readAt(dir, checkpoint, 'src/gone.js')).toBeNull();
  await expect(readAt(dir, 'f'.repeat(40), 'src/keep.js')).rejects.toThrow();
  const read = cachedReader(dir);
  expect(read(base, 'src/gone.js')).toBe(read(base, 'src/gone.js'));
  expect(await read(base, 'src/gone.js')).toBe('gone();\n');
});

test('the cached reader, asked many reads at once, answers each as readAt does: texts, null, a failure, odd names, a directory', async () => {
  const { dir, base, checkpoint } = branch();
  fs.writeFileSync(path.join(dir, 'line\nbreak.js'), 'newline();\n');
  for (let i = 0; i < 250; i++) fs.writeFileSync(path.join(dir, `many-${i}.js`), `m(${i});\n`);
  const later = commit(dir);
  const missingCommit = 'f'.repeat(40);
  const asks: Array<[string, string]> = [
    [base, 'src/keep.js'],
    [checkpoint, 'src/keep.js'],
    [base, 'src/gone.js'],
    [checkpoint, 'src/gone.js'],
    [checkpoint, 'src/nouveau é.js'],
    [checkpoint, 'src/tab\tname.js'],
    [base, 'assets/logo.bin'],
    [later, 'line\nbreak.js'],
    [later, 'src'],
    [later, 'absent/file.js'],
    [missingCommit, 'src/keep.js'],
    // More than one batch's worth (BATCH_SIZE).
    ...Array.from({ length: 250 }, (_, i): [string, string] => [later, `many-${i}.js`]),
  ];
  const settle = (p: Promise<string | null>) =>
    p.then(
      (text) => ({ text }),
      (err: Error) => ({ failed: !!err }),
    );
  const read = cachedReader(dir);
  const batched = await Promise.all(asks.map(([commit, file]) => settle(read(commit, file))));
  const one = await Promise.all(asks.map(([commit, file]) => settle(readAt(dir, commit, file))));
  expect(batched).toEqual(one);
  expect(batched[0]).toEqual({ text: 'a();\n-- a/keep.js\nc();\n' });
  expect(batched[3]).toEqual({ text: null });
  expect(batched[10]).toEqual({ failed: true });
  expect(batched.at(-1)).toEqual({ text: 'm(249);\n' });
});

test('the same two commits are read once by git, each caller getting a list of its own; a failed read is not kept', async () => {
  const { dir, base, checkpoint } = branch();
  const first = await loadChanges(dir, base, checkpoint);
  // git can no longer read the repository: only a remembered read still answers.
  fs.renameSync(path.join(dir, '.git'), path.join(dir, '.git-away'));
  const second = await loadChanges(dir, base, checkpoint);
  expect(second).toEqual(first);
  expect(second).not.toBe(first);
  first.length = 0;
  expect((await loadChanges(dir, base, checkpoint)).length).toBe(second.length);
  await expect(loadChanges(dir, checkpoint, base)).rejects.toThrow();

  // A failed read is not remembered: once git can read again, the same commits answer.
  await expect(loadChanges(dir, base, 'HEAD')).rejects.toThrow();
  fs.renameSync(path.join(dir, '.git-away'), path.join(dir, '.git'));
  expect(await loadChanges(dir, base, 'HEAD')).toEqual(second);
});
