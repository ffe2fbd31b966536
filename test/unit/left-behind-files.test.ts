import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { leftBehindFiles } from '../../activities/left-behind-files';
import { git } from '../support/test-git';

// UNCOMMITTED_FILES lists what the maker left behind an ignore pattern, not what tools write on their own.

let dir: string;
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test('lockfiles, egg-info and caches the repository ignores are tool output; a hidden runner config is listed', async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'left-behind-'));
  git(dir, 'init', '--quiet', '--initial-branch=main');
  fs.writeFileSync(path.join(dir, '.gitignore'), 'Cargo.lock\n*.egg-info/\nlocal/\n.pytest_cache/\n');
  fs.mkdirSync(path.join(dir, 'src/shop'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'src/shop/__init__.py'), '');
  git(dir, 'add', '--all');
  git(dir, 'commit', '--quiet', '-m', 'base');
  for (const file of [
    'Cargo.lock',
    'src/shop.egg-info/PKG-INFO',
    '.pytest_cache/v/cache/lastfailed',
    'local/conftest.py',
  ]) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), 'x');
  }
  expect(await leftBehindFiles(dir)).toEqual(['local']);
});
