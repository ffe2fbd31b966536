import { firstChangedLine, quoteLines } from './change-set';
import { isTestData } from './test-files';
import type { TamperCheck } from './types';

// docs/design.md §3.4: golden files, snapshots and fixtures hold what the tests expect. Rewriting one to
// match broken code passes the test without touching it; verification also runs with the base versions.

const SNAPSHOT = /\.snap$/;

export const testDataChanged: TamperCheck = async ({ changes }) =>
  changes.flatMap((change) => {
    const file = change.basePath;
    if (!file || !isTestData(file)) return [];
    // A snapshot file holds one entry per test: lines only added are the snapshots of new tests.
    if (SNAPSHOT.test(file) && change.checkpointPath === file && change.removed.length === 0) return [];
    const line = change.checkpointPath === file ? firstChangedLine(change) : 1;
    const how =
      change.checkpointPath === null
        ? 'was deleted'
        : change.checkpointPath !== file
          ? `was renamed to ${change.checkpointPath}`
          : 'was changed';
    const lines = [quoteLines('-', change.removed), quoteLines('+', change.added)].filter(Boolean).join('\n');
    return [
      {
        rule: 'TEST_DATA_CHANGED' as const,
        title: 'Test data changed',
        topic: 'testing_gaps' as const,
        location: { file, startLine: line, endLine: line },
        evidence: `${file}, which the tests read, ${how}.${lines ? `\n${lines}` : ''}`,
      },
    ];
  });
