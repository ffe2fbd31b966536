import { quoteLines } from './change-set';
import { findAddedMarkers, type MarkerTable } from './added-markers';
import type { TamperCheck } from './types';

// docs/design.md §3.4: an added type or lint suppression silences the typecheck/lint gates instead of fixing code.

const SUPPRESSIONS: MarkerTable = {
  javascript: [{ pattern: /@ts-(?:ignore|expect-error|nocheck)\b|eslint-disable/ }],
  python: [
    { pattern: /#\s*type:\s*ignore|#\s*noqa\b|#\s*(?:pylint|pyright):\s*(?:disable|ignore)|#\s*mypy:\s*ignore-errors/ },
  ],
  go: [{ pattern: /\/\/\s*nolint\b/ }],
  rust: [{ pattern: /#!?\[allow\(/ }],
};

export const suppressionAdded: TamperCheck = async ({ changes, isTest }) =>
  findAddedMarkers(changes, SUPPRESSIONS, isTest).map(({ file, lines }) => ({
    rule: 'SUPPRESSION_ADDED',
    title: 'Type or lint suppression added',
    topic: 'correctness',
    location: { file, startLine: lines[0]!.line, endLine: lines[0]!.line },
    evidence: `Added a suppression instead of fixing the diagnostic:\n${quoteLines('+', lines)}`,
  }));
