import { countTests } from './test-files';
import type { TamperCheck, TamperFinding } from './types';

// docs/design.md §3.4: deleting an existing test file (or renaming it where no runner finds it) removes its checks.

export const testsDeleted: TamperCheck = async ({ input, changes, read, isTest }) => {
  const findings: TamperFinding[] = [];
  for (const change of changes) {
    const file = change.basePath;
    if (!file || !isTest(file) || (change.checkpointPath && isTest(change.checkpointPath))) continue;
    const inventory = countTests(file, (await read(input.baseCommit, file)) ?? '');
    const had = inventory
      ? ` It had ${inventory.cases} test case(s) and ${inventory.assertions} assertion(s) at base.`
      : '';
    const how = change.checkpointPath ? `renamed to ${change.checkpointPath}, which is not a test path` : 'deleted';
    findings.push({
      rule: 'TESTS_DELETED',
      title: 'Existing test file deleted',
      topic: 'testing_gaps',
      location: { file, startLine: 1, endLine: 1 },
      evidence: `Test file ${file} was ${how}.${had}`,
    });
  }
  return findings;
};
