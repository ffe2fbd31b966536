import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';

// Gate commands come from repository configuration, which the service does not fully trust: their
// path arguments must stay inside the workspace, lexically (no `..` or absolute escapes) and after
// following symlinks — or inside a directory the sandbox lets the command write anyway (where the
// service asks a test runner to put its report).

function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

/** The first argument (after the program) that escapes the workspace and `writable`, with why; null when all stay inside. */
export async function findEscapingArgument(
  argv: string[],
  cwd: string,
  workspaceRoot: string,
  writable: string[] = [],
): Promise<string | null> {
  const roots = [
    await realpath(workspaceRoot),
    ...(await Promise.all(writable.map((dir) => realpath(dir).catch(() => null)))),
  ];
  const allowed = (target: string) => roots.some((root) => root !== null && isInside(root, target));
  for (const arg of argv.slice(1)) {
    // `--config=../x` carries its path after the `=`.
    const value = arg.startsWith('-') && arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : arg;
    if (!value || value.includes('\n')) continue;
    const looksLikePath = path.isAbsolute(value) || value.split(/[\\/]/).includes('..');
    const target = path.resolve(cwd, value);
    if (looksLikePath && !allowed(target)) return `argument "${arg}" points outside the workspace`;
    const exists = await lstat(target).then(
      () => true,
      () => false,
    );
    if (exists && !allowed(await realpath(target).catch(() => target))) {
      return `argument "${arg}" is a symlink that leads outside the workspace`;
    }
  }
  return null;
}
