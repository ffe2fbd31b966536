// Base drift, as reports state it (activities/base-drift.ts finds it): how far the loop's baseRef moved
// between the loop's start and its delivery, and whether the change still merges onto where it is now.

export interface BaseDrift {
  baseRef: string;
  /** The commit the loop worked from. */
  baseCommit: string;
  /** Where baseRef is now; null when it could not be read (then `problem` says why). */
  currentCommit: string | null;
  /** Commits on baseRef since the loop's base. */
  behind: number;
  /** The paths that conflict when the change is merged onto the current base; null when not checked. */
  conflicts: string[] | null;
  problem: string | null;
}

/** One line for reports: whether the base moved, and whether the change still merges onto it. */
export function describeDrift(d: BaseDrift): string {
  if (d.problem) return `could not check \`${d.baseRef}\` again: ${d.problem}`;
  if (d.behind === 0) return `\`${d.baseRef}\` has not moved since the loop started`;
  const onto = `\`${d.baseRef}\` moved ${d.behind} commit(s) since the loop started (now \`${d.currentCommit}\`)`;
  if (!d.conflicts?.length) return `${onto}; the change still merges cleanly onto it`;
  return `${onto}; the change no longer merges cleanly: conflicts in ${d.conflicts.slice(0, 10).join(', ')}${
    d.conflicts.length > 10 ? `, … and ${d.conflicts.length - 10} more` : ''
  }`;
}
