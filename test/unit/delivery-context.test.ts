import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { baseDrift } from '../../activities/base-drift';
import { describeDrift } from '../../domain/base-drift';
import { contextImpact, type ChangedFile } from '../../domain/context-impact';

// What delivery says beside the change (issue 28): its context impact, read from the diff, and whether the
// base branch moved while the loop ran and the change still merges onto it (real git repositories).

const TOP = ['src', 'test', 'package.json', 'README.md'];
const m = (p: string): ChangedFile => ({ status: 'M', path: p });
const a = (p: string): ChangedFile => ({ status: 'A', path: p });
const d = (p: string): ChangedFile => ({ status: 'D', path: p });

describe('context impact', () => {
  test('NONE: code and tests inside modules that exist', () => {
    expect(contextImpact([m('src/price.js'), a('src/discount.js'), m('test/price.test.js')], TOP)).toEqual({
      level: 'NONE',
      reasons: [],
    });
  });

  test('TARGETED: a manifest or lockfile, a new top-level module, the loop configuration', () => {
    expect(contextImpact([m('package.json'), m('package-lock.json')], TOP)).toEqual({
      level: 'TARGETED',
      reasons: ['manifests or lockfiles changed: package.json, package-lock.json'],
    });
    expect(contextImpact([a('billing/index.js'), a('billing/tax.js')], TOP).reasons).toEqual([
      'new top-level module: billing/',
    ]);
    expect(contextImpact([m('core/pom.xml')], ['core', 'pom.xml']).level).toBe('TARGETED');
    expect(contextImpact([a('.ai-engineering-loop/verification.json')], TOP).reasons).toEqual([
      'the loop configuration changed: .ai-engineering-loop/verification.json',
    ]);
    // A new file at the top level is no module; a new hidden directory is tooling.
    expect(contextImpact([a('NOTES.md'), a('.vscode/settings.json')], TOP).level).toBe('NONE');
  });

  test('MAJOR: CI files, the workspace layout, a build system added or removed', () => {
    expect(contextImpact([m('.github/workflows/ci.yml'), m('src/a.js')], TOP)).toEqual({
      level: 'MAJOR',
      reasons: ['CI configuration changed: .github/workflows/ci.yml'],
    });
    expect(contextImpact([a('pnpm-workspace.yaml')], TOP).reasons).toEqual([
      'workspace layout changed: pnpm-workspace.yaml',
    ]);
    expect(contextImpact([d('package.json'), a('pom.xml')], TOP)).toEqual({
      level: 'MAJOR',
      reasons: [
        'build system added or removed: package.json (removed), pom.xml (added)',
        'manifests or lockfiles changed: package.json, pom.xml',
      ],
    });
    // A module's own manifest added under a new directory is a new module, not a new build system.
    expect(contextImpact([a('tools/package.json')], TOP).level).toBe('TARGETED');
  });

  test('a long list of files is cut to three, with how many more', () => {
    const files = ['a', 'b', 'c', 'd', 'e'].map((x) => m(`.github/workflows/${x}.yml`));
    expect(contextImpact(files, TOP).reasons).toEqual([
      'CI configuration changed: .github/workflows/a.yml, .github/workflows/b.yml, .github/workflows/c.yml, … and 2 more',
    ]);
  });
});

describe('base drift', () => {
  const git = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', ...args], {
      cwd,
      encoding: 'utf8',
    }).trim();
  const local = { transport: 'file' as const, connectTimeoutSeconds: 30 };

  /** A repository with a.txt and b.txt on main, and a workspace cloned from it with the loop's change committed. */
  function setUp(change: Record<string, string>) {
    const origin = fs.mkdtempSync(path.join(os.tmpdir(), 'drift-origin-'));
    git(origin, 'init', '--quiet', '--initial-branch=main');
    fs.writeFileSync(path.join(origin, 'a.txt'), 'one\ntwo\nthree\n');
    fs.writeFileSync(path.join(origin, 'b.txt'), 'b\n');
    git(origin, 'add', '.');
    git(origin, 'commit', '--quiet', '-m', 'base');
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'drift-ws-'));
    git(workspace, 'clone', '--quiet', origin, '.');
    const base = git(workspace, 'rev-parse', 'HEAD');
    for (const [file, text] of Object.entries(change)) fs.writeFileSync(path.join(workspace, file), text);
    git(workspace, 'commit', '--quiet', '-am', 'the loop');
    return { origin, workspace, base, checkpoint: git(workspace, 'rev-parse', 'HEAD') };
  }
  const commitOn = (origin: string, file: string, text: string) => {
    fs.writeFileSync(path.join(origin, file), text);
    git(origin, 'commit', '--quiet', '-am', `moves ${file}`);
  };

  test('a base that has not moved', async () => {
    const r = setUp({ 'a.txt': 'one\nTWO\nthree\n' });
    const drift = await baseDrift(r.workspace, { url: r.origin, baseRef: 'main', remote: local }, r.base, r.checkpoint);
    expect(drift).toMatchObject({ currentCommit: r.base, behind: 0, conflicts: [], problem: null });
    expect(describeDrift(drift)).toBe('`main` has not moved since the loop started');
  });

  test('a base that moved elsewhere: the change still merges', async () => {
    const r = setUp({ 'a.txt': 'one\nTWO\nthree\n' });
    commitOn(r.origin, 'b.txt', 'b, changed\n');
    const drift = await baseDrift(r.workspace, { url: r.origin, baseRef: 'main', remote: local }, r.base, r.checkpoint);
    expect(drift).toMatchObject({ behind: 1, conflicts: [], problem: null });
    expect(describeDrift(drift)).toMatch(
      /^`main` moved 1 commit\(s\) since the loop started \(now `[0-9a-f]{40}`\); the change still merges cleanly onto it$/,
    );
  });

  test('a base that moved under the change: the conflicts are named', async () => {
    const r = setUp({ 'a.txt': 'one\nTWO\nthree\n' });
    commitOn(r.origin, 'a.txt', 'one\nzwei\nthree\n');
    commitOn(r.origin, 'b.txt', 'b2\n');
    const drift = await baseDrift(r.workspace, { url: r.origin, baseRef: 'main', remote: local }, r.base, r.checkpoint);
    expect(drift).toMatchObject({ behind: 2, conflicts: ['a.txt'], problem: null });
    expect(describeDrift(drift)).toContain('the change no longer merges cleanly: conflicts in a.txt');
  });

  test('a tag or commit id does not move; an unreachable repository is said, not thrown', async () => {
    const r = setUp({ 'a.txt': 'x\n' });
    const byCommit = await baseDrift(
      r.workspace,
      { url: r.origin, baseRef: r.base, remote: local },
      r.base,
      r.checkpoint,
    );
    expect(byCommit).toMatchObject({ behind: 0, currentCommit: r.base, problem: null });
    const gone = await baseDrift(
      r.workspace,
      { url: path.join(r.origin, 'missing'), baseRef: 'main', remote: local },
      r.base,
      r.checkpoint,
    );
    expect(gone.problem).toMatch(/ls-remote/);
    expect(describeDrift(gone)).toMatch(/^could not check `main` again: /);
  });
});
