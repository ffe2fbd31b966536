import path from 'node:path';
import type { TamperCheck, TamperFinding } from './types';

// docs/design.md §3.4: a symbolic link the maker commits must point at something the checkpoint holds.
// A link to nothing makes test runners and builds that walk the tree fail for a reason nobody reading
// the gate's output would guess; a link out of the repository (absolute, or `..` past its root) reads
// whatever the machine that checks it out has there.

export const danglingSymlink: TamperCheck = async ({ input, changes, read, checkpointFiles }) => {
  const links = changes.flatMap((c) => (c.symlink && c.checkpointPath ? [c.checkpointPath] : []));
  if (links.length === 0) return [];
  const files = await checkpointFiles();
  const findings: TamperFinding[] = [];
  for (const file of links) {
    const target = (await read(input.checkpointCommit, file)) ?? '';
    const problem = linkProblem(file, target, files);
    if (!problem) continue;
    findings.push({
      rule: 'DANGLING_SYMLINK',
      title: 'Symbolic link to nothing in the repository',
      topic: 'correctness',
      location: { file, startLine: 1, endLine: 1 },
      evidence: `${file} is a symbolic link to ${JSON.stringify(target)}, which ${problem}.`,
    });
  }
  return findings;
};

/** Why `target`, read from the link at `file`, resolves to nothing in `files`; null when it resolves. */
export function linkProblem(file: string, target: string, files: ReadonlySet<string>): string | null {
  if (target === '' || path.posix.isAbsolute(target)) return 'is not a path inside the repository';
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
  if (resolved === '..' || resolved.startsWith('../')) return 'points out of the repository';
  if (resolved === '.' || files.has(resolved)) return null;
  // A link to a directory: some committed file lies under it.
  const prefix = `${resolved}/`;
  for (const f of files) if (f.startsWith(prefix)) return null;
  return 'the checkpoint does not hold';
}
