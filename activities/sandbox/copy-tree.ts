import { killGroup, launch } from '../process/launcher';

// Copies a shared cache into a loop's own: `cp -a` keeps modes, owners (the sandbox user's) and links as
// they are, and `--reflink=auto` makes the copy cost next to nothing on a copy-on-write file system.

const COPY_LIMIT_MS = 10 * 60_000;

/** Copies the contents of `from` into `to` (which exists), over what is there. */
export async function copyTree(from: string, to: string): Promise<void> {
  const stderr: Buffer[] = [];
  const cp = await launch({
    command: 'cp',
    args: ['-a', '--reflink=auto', '--', `${from}/.`, `${to}/`],
    cwd: '/',
    env: { PATH: process.env.PATH },
    onStdout: () => undefined,
    onStderr: (chunk) => stderr.push(chunk),
  });
  const pid = cp.pid;
  const timer = pid === null ? undefined : setTimeout(() => killGroup(pid), COPY_LIMIT_MS);
  const exit = cp.spawnError ? null : await cp.closed.finally(() => clearTimeout(timer));
  if (exit?.code === 0) return;
  const reason =
    Buffer.concat(stderr).toString('utf8').trim() || cp.spawnError?.message || `exit ${exit?.code ?? exit?.signal}`;
  throw new Error(`could not copy the cache ${from} to ${to}: ${reason}`);
}
