import { killGroup, launch } from './launcher';

// A host tool the service runs on its own trees (chown, cp, mount, umount), not a sandboxed command:
// started from the process launcher like git, killed past its time limit, its stderr the reason it failed.

/** Runs `command` on the host; rejects with `failure(reason)` unless it exits 0. */
export async function runHostTool(
  command: string,
  args: string[],
  limitMs: number,
  failure: (reason: string) => string,
): Promise<void> {
  const stderr: Buffer[] = [];
  const tool = await launch({
    command,
    args,
    cwd: '/',
    env: { PATH: process.env.PATH },
    onStdout: () => undefined,
    onStderr: (chunk) => stderr.push(chunk),
  });
  const pid = tool.pid;
  const timer = pid === null ? undefined : setTimeout(() => killGroup(pid), limitMs);
  const exit = tool.spawnError ? null : await tool.closed.finally(() => clearTimeout(timer));
  if (exit?.code === 0) return;
  const reason =
    Buffer.concat(stderr).toString('utf8').trim() || tool.spawnError?.message || `exit ${exit?.code ?? exit?.signal}`;
  throw new Error(failure(reason));
}
