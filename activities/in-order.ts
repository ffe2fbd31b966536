// Reads an activity needs that do not depend on one another run at once (each costs a round trip or a
// process launch of its own), yet fail as if they had run one after the other: the first read in
// argument order that failed decides the error, whichever failed first in time.

/** Awaits every promise; returns their values, or throws the rejection of the first (in order) that failed. */
export async function inOrder<T extends readonly unknown[]>(reads: {
  readonly [K in keyof T]: Promise<T[K]>;
}): Promise<T> {
  const settled = await Promise.allSettled(reads as readonly Promise<unknown>[]);
  for (const result of settled) if (result.status === 'rejected') throw result.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/**
 * Starts `work` now for a caller that awaits it later (or not at all): a rejection nobody awaited yet
 * is not reported as unhandled, and still reaches whoever awaits the returned promise.
 */
export function early<T>(work: Promise<T>): Promise<T> {
  work.catch(() => undefined);
  return work;
}
