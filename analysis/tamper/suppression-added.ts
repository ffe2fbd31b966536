import { quoteLines } from './change-set';
import { findAddedMarkers, type MarkerTable } from './added-markers';
import type { TamperCheck } from './types';

// docs/design.md §3.4: an added type or lint suppression silences the typecheck/lint gates instead of fixing code.

// Java and Kotlin: the compiler's and linters' suppressions. @SuppressWarnings and Kotlin's @Suppress
// count in product code only: test code uses them for generic mocks (`@SuppressWarnings("unchecked")`).
const JVM_SUPPRESSIONS = [
  { pattern: /@(?:file:|java\.lang\.|kotlin\.)?Suppress(?:Warnings)?\s*\(/, notInTestFiles: true },
  // SpotBugs, PMD, Checkstyle, Sonar, ktlint
  { pattern: /@(?:[\w.]+\.)?SuppressFBWarnings\b|\/\/\s*(?:NOPMD|NOSONAR|CHECKSTYLE\s*:\s*OFF|ktlint-disable)\b/ },
];

const SUPPRESSIONS: MarkerTable = {
  javascript: [{ pattern: /@ts-(?:ignore|expect-error|nocheck)\b|eslint-disable/ }],
  python: [
    { pattern: /#\s*type:\s*ignore|#\s*noqa\b|#\s*(?:pylint|pyright):\s*(?:disable|ignore)|#\s*mypy:\s*ignore-errors/ },
  ],
  go: [{ pattern: /\/\/\s*nolint\b/ }],
  rust: [{ pattern: /#!?\[allow\(/ }],
  java: JVM_SUPPRESSIONS,
  kotlin: JVM_SUPPRESSIONS,
};

export const suppressionAdded: TamperCheck = async ({ changes, isTest }) =>
  findAddedMarkers(changes, SUPPRESSIONS, isTest).map(({ file, lines }) => ({
    rule: 'SUPPRESSION_ADDED',
    title: 'Type or lint suppression added',
    topic: 'correctness',
    location: { file, startLine: lines[0]!.line, endLine: lines[0]!.line },
    evidence: `Added a suppression instead of fixing the diagnostic:\n${quoteLines('+', lines)}`,
  }));
