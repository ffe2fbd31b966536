import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';

// Path confinement for the built-in maker's tools. The model's paths are untrusted input: each one
// must stay inside the workspace lexically (no `..`, no absolute path elsewhere) and after following
// symlinks (a link inside the workspace that points outside is refused, for reading and for writing).

/** A tool request the workspace rules refuse; reported to the model as a tool error, never thrown out of the loop. */
export class ToolRefusal extends Error {
  override readonly name = 'ToolRefusal';
}

export interface ConfinedPath {
  /** Absolute path with symlinks resolved (for a path that does not exist yet: its nearest existing ancestor resolved). */
  absolute: string;
  /** Relative to the workspace root, `/`-separated; '.' for the root itself. */
  relative: string;
  exists: boolean;
}

export function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

function toRelative(root: string, target: string): string {
  return path.relative(root, target).split(path.sep).join('/') || '.';
}

/**
 * Resolves a model-supplied path inside the workspace, or throws ToolRefusal saying why it is refused.
 * `root` must already be a realpath (see workspaceRoot()).
 */
export async function confinePath(root: string, requested: string | undefined): Promise<ConfinedPath> {
  const raw = requested === undefined || requested.trim() === '' ? '.' : requested;
  if (raw.includes('\0')) throw new ToolRefusal(`path ${JSON.stringify(raw)} contains a NUL byte`);
  if (raw.split(/[\\/]/).includes('..')) {
    throw new ToolRefusal(
      `path "${raw}" contains "..": paths must stay inside the workspace, use paths relative to its root`,
    );
  }
  const lexical = path.resolve(root, raw);
  if (!isInside(root, lexical)) {
    throw new ToolRefusal(`path "${raw}" is outside the workspace: use paths relative to the workspace root`);
  }
  // Walk up to the nearest existing entry and resolve it: a symlink anywhere on the way is followed.
  let existing = lexical;
  const missing: string[] = [];
  for (;;) {
    const stat = await lstat(existing).catch(() => null);
    if (stat) break;
    missing.unshift(path.basename(existing));
    existing = path.dirname(existing);
  }
  let resolved: string;
  try {
    resolved = await realpath(existing);
  } catch {
    // A dangling symlink: where it would lead cannot be shown to be inside the workspace.
    throw new ToolRefusal(`path "${raw}" goes through a symlink whose target does not exist`);
  }
  if (!isInside(root, resolved)) {
    throw new ToolRefusal(`path "${raw}" goes through a symlink that leads outside the workspace`);
  }
  const absolute = path.join(resolved, ...missing);
  return { absolute, relative: toRelative(root, absolute), exists: missing.length === 0 };
}

/** Refuses writes into .git: hooks and config there would run code in the service's own git commands. */
export function refuseGitInternals(target: ConfinedPath, raw: string): void {
  const first = target.relative.split('/')[0];
  if (first === '.git') throw new ToolRefusal(`path "${raw}" is inside .git, which the agent may not modify`);
}

export async function workspaceRoot(workspace: string): Promise<string> {
  return realpath(workspace);
}
