import { runHostTool } from '../process/host-tool';

// Copies a shared cache into a loop's own: `cp -a` keeps modes, owners (the sandbox user's) and links as
// they are, and `--reflink=auto` makes the copy cost next to nothing on a copy-on-write file system.

const COPY_LIMIT_MS = 10 * 60_000;

/** Copies the contents of `from` into `to` (which exists), over what is there. */
export function copyTree(from: string, to: string): Promise<void> {
  return runHostTool(
    'cp',
    ['-a', '--reflink=auto', '--', `${from}/.`, `${to}/`],
    COPY_LIMIT_MS,
    (reason) => `could not copy the cache ${from} to ${to}: ${reason}`,
  );
}
