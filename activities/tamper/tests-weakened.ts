import { firstChangedLine, quoteLines } from './change-set';
import { languageOf } from './languages';
import { countTests, declaresTestOrAssertion, isTestFile } from './test-files';
import type { TamperCheck, TamperFinding } from './types';

// SPEC §3.4: an existing test file that now holds fewer test cases or fewer assertions checks less.

export const testsWeakened: TamperCheck = async ({ input, changes, read }) => {
  const findings: TamperFinding[] = [];
  for (const change of changes) {
    const { basePath, checkpointPath } = change;
    const language = checkpointPath ? languageOf(checkpointPath) : null;
    if (!basePath || !checkpointPath || !language || !isTestFile(basePath) || !isTestFile(checkpointPath)) continue;
    const before = countTests(basePath, (await read(input.baseCommit, basePath)) ?? '');
    const after = countTests(checkpointPath, (await read(input.checkpointCommit, checkpointPath)) ?? '');
    if (!before || !after || (after.cases >= before.cases && after.assertions >= before.assertions)) continue;
    const removed = change.removed.filter((l) => declaresTestOrAssertion(language, l.text));
    const line = removed[0]?.line ?? firstChangedLine(change);
    findings.push({
      rule: 'TESTS_WEAKENED',
      title: 'Existing tests weakened',
      topic: 'testing_gaps',
      location: { file: checkpointPath, startLine: line, endLine: line },
      evidence:
        `Test cases ${before.cases} → ${after.cases}, assertions ${before.assertions} → ${after.assertions} ` +
        `(comments not counted).` + (removed.length ? `\n${quoteLines('-', removed)}` : ''),
    });
  }
  return findings;
};
