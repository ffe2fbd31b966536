/**
 * Answers that never change once known (a commit's files, a prepared loop's workspace), kept by a worker:
 * the last `limit` asked for, most recently used last. Callers asking at once share one read; a read
 * that failed is not kept, so the next caller reads again.
 */
export class KeptPromises<T> {
  private readonly kept = new Map<string, Promise<T>>();

  constructor(private readonly limit: number) {}

  get(key: string, read: () => Promise<T>): Promise<T> {
    let found = this.kept.get(key);
    if (found) this.kept.delete(key);
    else {
      found = read();
      const reading = found;
      reading.catch(() => this.kept.get(key) === reading && this.kept.delete(key));
      if (this.kept.size >= this.limit) this.kept.delete(this.kept.keys().next().value!);
    }
    this.kept.set(key, found);
    return found;
  }
}

/** One KeptPromises per database client (answers from one database are not another's), made on first use. */
export function keptPerClient<T>(limit: number): (client: object) => KeptPromises<T> {
  const byClient = new WeakMap<object, KeptPromises<T>>();
  return (client) => byClient.get(client) ?? byClient.set(client, new KeptPromises<T>(limit)).get(client)!;
}
