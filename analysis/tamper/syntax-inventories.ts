import path from 'node:path';
import type { FileChange } from './change-set';
import { javascriptInventory, parsesAsJavaScript } from './js-test-inventory';
import { jvmInventory, parsesAsJvm } from './jvm-test-inventory';
import type { SyntaxInventory } from './test-inventory';
import type { TamperContext, TamperInput } from './types';

// Syntax inventories of every changed test file at both commits, read on first use and then shared by
// the rules: JS/TS parsed in process, Java and Kotlin read from their tokens in process, all Python files
// in one call of `parsePython` (a single python3 run: activities/tamper/python-syntax.ts).

/** Larger files are not parsed (their rules fall back to counting): a test file this size is not hand-written. */
const MAX_PARSED_CHARS = 512 * 1024;

/** One inventory per text, in order; null for a text that does not parse. */
export type PythonParser = (texts: string[]) => Promise<(SyntaxInventory | null)[]>;

export function inventoryReader(
  input: TamperInput,
  changes: FileChange[],
  { read, isTest }: Pick<TamperContext, 'read' | 'isTest'>,
  parsePython: PythonParser,
): TamperContext['inventory'] {
  let loading: Promise<Map<string, SyntaxInventory | null>> | undefined;
  return async (commit, file) => {
    loading ??= loadAll(input, changes, { read, isTest }, parsePython);
    return (await loading).get(key(commit, file)) ?? null;
  };
}

async function loadAll(
  input: TamperInput,
  changes: FileChange[],
  { read, isTest }: Pick<TamperContext, 'read' | 'isTest'>,
  parsePython: PythonParser,
): Promise<Map<string, SyntaxInventory | null>> {
  const inventories = new Map<string, SyntaxInventory | null>();
  const python: { at: string; text: string }[] = [];
  for (const change of changes) {
    for (const [commit, file] of [
      [input.baseCommit, change.basePath],
      [input.checkpointCommit, change.checkpointPath],
    ] as const) {
      if (!file || !isTest(file)) continue;
      const text = await read(commit, file);
      if (text === null || text.length > MAX_PARSED_CHARS) continue;
      if (parsesAsJavaScript(file)) inventories.set(key(commit, file), javascriptInventory(file, text));
      else if (parsesAsJvm(file)) inventories.set(key(commit, file), jvmInventory(file, text));
      else if (path.posix.extname(file).toLowerCase() === '.py') python.push({ at: key(commit, file), text });
    }
  }
  const parsed = await parsePython(python.map((p) => p.text));
  python.forEach((p, i) => inventories.set(p.at, parsed[i] ?? null));
  return inventories;
}

function key(commit: string, file: string): string {
  return `${commit}\u0000${file}`;
}
