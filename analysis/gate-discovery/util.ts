export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export async function asyncFilter<T>(items: readonly T[], keep: (item: T) => Promise<boolean>): Promise<T[]> {
  const kept: T[] = [];
  for (const item of items) if (await keep(item)) kept.push(item);
  return kept;
}

export function pick<T>(
  items: readonly T[],
  has: (item: T) => boolean | undefined,
  describe: (item: T) => string,
): string | undefined {
  const found = items.find((item) => has(item));
  return found === undefined ? undefined : describe(found);
}
