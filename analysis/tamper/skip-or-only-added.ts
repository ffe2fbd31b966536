import { quoteLines } from './change-set';
import { findAddedMarkers, type MarkerTable } from './added-markers';
import type { TamperCheck } from './types';

// docs/design.md §3.4: an added skip/only marker hides failing tests (or every other test) from the tests gate.

const SKIP_OR_ONLY: MarkerTable = {
  javascript: [
    // it.skip(…), describe.only(…), test.skip.each(…), test.skipIf(…), t.skip(…) — never list.skip(2)
    { pattern: /(?<![\w$.])(?:it|test|describe|context|suite|specify|t)(?:\.\w+)*\.(?:skip|only|skipIf)\b/ },
    { pattern: /(?<![\w$.])(?<!function\s+)(?:x|f)(?:it|test|describe|context|specify)\s*\(/ },
    // node:test options: test('…', { skip: true }, fn)
    { pattern: /\b(?:skip|only)\s*:\s*(?:true|['"`])/, testFilesOnly: true },
  ],
  python: [
    { pattern: /\bpytest\.mark\.(?:skip|skipif|xfail)\b|\bpytest\.(?:skip|xfail)\s*\(/ },
    { pattern: /@unittest\.(?:skip\w*|expectedFailure)\b|\.skipTest\s*\(/ },
  ],
  go: [{ pattern: /\.Skip(?:f|Now)?\s*\(/, testFilesOnly: true }],
  rust: [{ pattern: /#\[ignore\b/ }],
};

export const skipOrOnlyAdded: TamperCheck = async ({ changes }) =>
  findAddedMarkers(changes, SKIP_OR_ONLY).map(({ file, lines }) => ({
    rule: 'SKIP_OR_ONLY_ADDED',
    title: 'Skip or only marker added to tests',
    topic: 'testing_gaps',
    location: { file, startLine: lines[0]!.line, endLine: lines[0]!.line },
    evidence: `Added a marker that skips or focuses tests:\n${quoteLines('+', lines)}`,
  }));
