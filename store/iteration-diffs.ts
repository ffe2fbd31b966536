import type { PrismaClient } from './db';

// An iteration's change from the loop's base, kept for the people who decide on it before anything is
// delivered (GET /v1/loops/:id/diff, the inbox's loop view). A diff past the limit is cut at a line end:
// enough to judge a change a person can read, without a generated tree's hundreds of megabytes in a row.

/** The most of a diff kept, in bytes. */
export const STORED_DIFF_BYTES = 1024 * 1024;

export interface StoredDiff {
  text: string;
  /** The whole diff's size in bytes. */
  bytes: number;
  truncated: boolean;
}

/** `diff` as it is stored: whole, or cut after the last line that fits in `limit` bytes. */
export function storedDiff(diff: string, limit = STORED_DIFF_BYTES): StoredDiff {
  const bytes = Buffer.byteLength(diff);
  if (bytes <= limit) return { text: diff, bytes, truncated: false };
  const head = Buffer.from(diff).subarray(0, limit).toString('utf8');
  // A multi-byte character cut at the limit decodes to U+FFFD; the last whole line drops it with the rest.
  const lineEnd = head.lastIndexOf('\n');
  return { text: lineEnd === -1 ? '' : head.slice(0, lineEnd + 1), bytes, truncated: true };
}

/** The nested write that stores (or, on a retried attempt, replaces) an updated iteration's diff. */
export function diffUpsert(diff: string) {
  const row = storedDiff(diff);
  return { upsert: { create: row, update: row } };
}

/** A loop's stored diff: iteration `sequence`'s, or the latest iteration's that has one. */
export async function iterationDiff(
  db: PrismaClient,
  loopId: string,
  sequence?: number,
): Promise<(StoredDiff & { sequence: number; checkpointCommit: string | null }) | null> {
  const iteration = await db.iteration.findFirst({
    where: { loopId, ...(sequence === undefined ? { diff: { isNot: null } } : { sequence }) },
    orderBy: { sequence: 'desc' },
    select: { sequence: true, checkpointCommit: true, diff: { select: { text: true, bytes: true, truncated: true } } },
  });
  if (!iteration?.diff) return null;
  return { ...iteration.diff, sequence: iteration.sequence, checkpointCommit: iteration.checkpointCommit };
}
