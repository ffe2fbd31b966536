import path from 'node:path';
import { createSandbox, type Sandbox, type SandboxPolicy } from '../../activities/sandbox/sandbox';
import { loadConfig } from '../../service/config';

/** Test fixtures (scripted agents, fake CLIs) that sandboxed commands must be able to run. */
export const FIXTURES_DIR = path.resolve(__dirname, '../fixtures');

/** A sandbox as the worker builds it from its environment. */
export function testSandbox(mode: 'bwrap' | 'none', env: Record<string, string> = {}): Sandbox {
  return createSandbox(loadConfig({ SANDBOX: mode, SANDBOX_READONLY_PATHS: FIXTURES_DIR, ...env }));
}

/** An unconfined sandbox for tests about process mechanics rather than confinement. */
export function unconfined(workDir: string): { sandbox: Sandbox; policy: SandboxPolicy } {
  return { sandbox: testSandbox('none'), policy: { workDir, network: true } };
}
