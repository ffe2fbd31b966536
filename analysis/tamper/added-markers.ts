import type { DiffLine, FileChange } from './change-set';
import { languageOf, type Language } from './languages';
import type { TestFileTest } from './test-files';

// Finds marker text (skip/only markers, suppressions) on lines the maker added. Removing a marker
// is fine, and so is moving one: an added line identical (trimmed) to a line removed from the same
// file is a move, not a new marker.

export interface Marker {
  pattern: RegExp;
  /** Only meaningful inside test files, e.g. Go's t.Skip or node:test's `{ skip: true }`. */
  testFilesOnly?: boolean;
  /** Only outside test files, e.g. Java's @SuppressWarnings, which test code uses for generic mocks. */
  notInTestFiles?: boolean;
}

export type MarkerTable = Partial<Record<Language, Marker[]>>;

export interface MarkedFile {
  file: string;
  lines: DiffLine[];
}

export function findAddedMarkers(changes: FileChange[], table: MarkerTable, isTest: TestFileTest): MarkedFile[] {
  const marked: MarkedFile[] = [];
  for (const change of changes) {
    const file = change.checkpointPath;
    const language = file ? languageOf(file) : null;
    if (!file || !language) continue;
    const test = isTest(file);
    const markers = (table[language] ?? []).filter((m) => (test ? !m.notInTestFiles : !m.testFilesOnly));
    const moved = countTrimmed(change.removed);
    const lines = change.added.filter((line) => {
      if (!markers.some((m) => m.pattern.test(line.text))) return false;
      const key = line.text.trim();
      const movedCount = moved.get(key) ?? 0;
      if (movedCount > 0) moved.set(key, movedCount - 1);
      return movedCount === 0;
    });
    if (lines.length) marked.push({ file, lines });
  }
  return marked;
}

function countTrimmed(lines: DiffLine[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of lines) counts.set(line.text.trim(), (counts.get(line.text.trim()) ?? 0) + 1);
  return counts;
}
