import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSandbox } from '../../activities/sandbox/sandbox';
import type { Sandbox, SandboxPolicy } from '../../activities/sandbox/types';
import { loadConfig } from '../../config/service-config';

/** Test fixtures (scripted agents, fake CLIs) that sandboxed commands must be able to run. */
export const FIXTURES_DIR = path.resolve(__dirname, '../fixtures');

/** A sandbox as the worker builds it from its environment. */
export function testSandbox(mode: 'bwrap' | 'none', env: Record<string, string> = {}): Sandbox {
  return createSandbox(loadConfig({ SANDBOX: mode, SANDBOX_READONLY_PATHS: FIXTURES_DIR, ...env }));
}

/** An unconfined sandbox for tests about process mechanics rather than confinement. */
export function unconfined(workDir: string): { sandbox: Sandbox; policy: SandboxPolicy } {
  return { sandbox: testSandbox('none'), policy: { workDir, egress: [] } };
}

/**
 * Where test agents keep state the test reads back (prompts received, runs): a host directory every
 * sandbox of the test worker may write (SANDBOX_WRITABLE_PATHS), as an operator would share a cache.
 */
export const SHARED_TEST_ROOT = path.join(os.tmpdir(), 'engineering-loop-test-shared');

export function sharedTestDir(prefix: string): string {
  fs.mkdirSync(SHARED_TEST_ROOT, { recursive: true, mode: 0o1777 });
  fs.chmodSync(SHARED_TEST_ROOT, 0o1777);
  const dir = fs.mkdtempSync(path.join(SHARED_TEST_ROOT, prefix));
  fs.chmodSync(dir, 0o777);
  return dir;
}

/** What a test worker adds to its environment so sandboxed test agents can run and report. */
export function sandboxTestEnvironment(): Record<string, string> {
  fs.mkdirSync(SHARED_TEST_ROOT, { recursive: true, mode: 0o1777 });
  return { SANDBOX_READONLY_PATHS: FIXTURES_DIR, SANDBOX_WRITABLE_PATHS: SHARED_TEST_ROOT };
}
