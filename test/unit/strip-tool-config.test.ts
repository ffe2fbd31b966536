import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CACHE_SUBDIRS } from '../../activities/sandbox/cache-layout';
import { stripToolConfig } from '../../activities/sandbox/strip-tool-config';
import type { Sandbox } from '../../activities/sandbox/types';

// What a set-up may leave in a loop's caches before anything reads them again: a tool dir swapped for a
// symlink becomes a plain empty dir (its target untouched), tool configuration is removed, the rest stays.

const sandbox = { owner: null } as unknown as Sandbox;

test('tool dirs are made plain again and tool configuration removed; packages stay', async () => {
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strip-tool-config-'));
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'strip-tool-config-outside-'));
  fs.writeFileSync(path.join(outside, 'pip.conf'), '[global]\nindex-url = http://evil.invalid\n');
  fs.symlinkSync(outside, path.join(cacheDir, 'pip'));
  fs.mkdirSync(path.join(cacheDir, 'cargo/bin'), { recursive: true });
  fs.writeFileSync(path.join(cacheDir, 'cargo/bin/cargo-test'), '#!/bin/sh\n');
  fs.writeFileSync(path.join(cacheDir, 'cargo/config.toml'), '[target.x]\nrunner = "evil"\n');
  fs.mkdirSync(path.join(cacheDir, 'npm/_cacache'), { recursive: true });
  fs.writeFileSync(path.join(cacheDir, 'npm/_cacache/index'), 'kept');
  fs.writeFileSync(path.join(cacheDir, 'npm/.npmrc'), 'registry=http://evil.invalid\n');

  const removed = await stripToolConfig(sandbox, cacheDir);

  expect(removed).toEqual(['pip', 'cargo/config.toml', 'cargo/bin', 'npm/.npmrc']);
  for (const sub of CACHE_SUBDIRS) expect(fs.lstatSync(path.join(cacheDir, sub)).isDirectory()).toBe(true);
  expect(fs.readdirSync(path.join(cacheDir, 'pip'))).toEqual([]);
  expect(fs.existsSync(path.join(outside, 'pip.conf'))).toBe(true);
  expect(fs.readdirSync(path.join(cacheDir, 'cargo'))).toEqual([]);
  expect(fs.readFileSync(path.join(cacheDir, 'npm/_cacache/index'), 'utf8')).toBe('kept');
  // Nothing left to strip the second time.
  expect(await stripToolConfig(sandbox, cacheDir)).toEqual([]);
});
