import { execFile } from 'node:child_process';
import os from 'node:os';
import type { Sandbox } from './types';

export class SandboxUnavailableError extends Error {}

/**
 * Runs `true` in the sandbox once at start: a worker that cannot confine commands must not take loops.
 * The operator's way out is explicit (SANDBOX=none), and every report then says so.
 */
export async function probeSandbox(sandbox: Sandbox): Promise<void> {
  if (sandbox.mode === 'none') return;
  const workDir = os.tmpdir();
  const argv = sandbox.wrap(['true'], { workDir, egress: null }, workDir);
  await new Promise<void>((resolve, reject) => {
    execFile(argv[0]!, argv.slice(1), { timeout: 30_000 }, (err, _stdout, stderr) => {
      if (!err) return resolve();
      const why =
        (err as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'bwrap is not installed (Debian package "bubblewrap")'
          : stderr.trim() || err.message;
      reject(
        new SandboxUnavailableError(
          `the sandbox does not work here: ${why}. Install bubblewrap and allow it to create namespaces, ` +
            'or set SANDBOX=none to run untrusted commands unconfined (every report will say so).',
        ),
      );
    });
  });
}
