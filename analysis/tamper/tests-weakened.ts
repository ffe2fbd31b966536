import { firstChangedLine, quoteLines, type FileChange } from './change-set';
import { weakenedTests, type MovedTest, type PlacedTest, type Weakening, type WeakenedTest } from './compare-tests';
import { STRENGTH_MEANING, strengthOf } from './assertion-strength';
import { languageOf } from './languages';
import { OUTSIDE_TESTS } from './test-inventory';
import { countTests, declaresTestOrAssertion } from './test-files';
import type { TamperCheck, TamperContext, TamperFinding } from './types';

// docs/design.md §3.4: an existing test that now checks less — removed, an assertion removed or loosened, its
// expected value (or expected exception) changed to match the code, or its assertions no longer running
// or failing. JS/TS, Python, Java and Kotlin files are compared test by test from their syntax trees
// (Java and Kotlin from their tokens: jvm-test-inventory.ts), one finding per weakened test. Go and Rust
// files, and any file that could not be read, are still compared by counting test cases and assertions
// with regular expressions (test-files.ts), one finding per file.

const SHOWN_WEAKENINGS = 8;

export const testsWeakened: TamperCheck = async (ctx) => {
  const { input, changes, inventory, isTest } = ctx;
  const movedTo = await movedTests(ctx);
  const findings: TamperFinding[] = [];
  for (const change of changes) {
    const { basePath, checkpointPath } = change;
    if (!basePath || !checkpointPath || !isTest(basePath) || !isTest(checkpointPath)) continue;
    const before = await inventory(input.baseCommit, basePath);
    const after = await inventory(input.checkpointCommit, checkpointPath);
    if (!before || !after) {
      findings.push(...(await countedWeakening(ctx, change)));
      continue;
    }
    const baseLines = ((await ctx.read(input.baseCommit, basePath)) ?? '').split('\n');
    for (const weakened of weakenedTests(checkpointPath, before, after, movedTo)) {
      const file = weakened.now?.file ?? checkpointPath;
      const line = locate(weakened, change, baseLines);
      findings.push({
        rule: 'TESTS_WEAKENED',
        title: `Test weakened: ${weakened.name.replace(/\s+/g, ' ')}`.slice(0, 160),
        topic: 'testing_gaps',
        location: { file, startLine: line, endLine: line },
        evidence: evidence(weakened),
      });
    }
  }
  return findings;
};

/** Tests that are new in a changed test file (not in its base version), for tests missing from their own file. */
async function movedTests({ input, changes, inventory, isTest }: TamperContext): Promise<MovedTest> {
  const arrivals: PlacedTest[] = [];
  for (const { basePath, checkpointPath: file } of changes) {
    if (!file || !isTest(file)) continue;
    const before = basePath && isTest(basePath) ? await inventory(input.baseCommit, basePath) : null;
    const had = new Set(before?.tests.map((t) => t.name));
    for (const test of (await inventory(input.checkpointCommit, file))?.tests ?? []) {
      if (!had.has(test.name) && !test.name.endsWith(OUTSIDE_TESTS)) arrivals.push({ file, test });
    }
  }
  return (name) => {
    const i = arrivals.findIndex((a) => a.test.name === name);
    return i < 0 ? undefined : arrivals.splice(i, 1)[0];
  };
}

/** The checkpoint line of the first weakening: the assertion now, or where a removed one used to be. */
function locate(weakened: WeakenedTest, change: FileChange, baseLines: string[]): number {
  const first = weakened.weakenings[0]!;
  if ('after' in first) return first.after.line;
  const inPlace = !weakened.now || weakened.now.file === change.checkpointPath;
  const baseLine = first.kind === 'test removed' ? first.test.line : first.before.line;
  const text = baseLines[baseLine - 1]?.trim();
  const removedAt = inPlace ? change.removed.find((l) => l.text.trim() === text)?.line : undefined;
  return removedAt ?? weakened.now?.test.line ?? firstChangedLine(change);
}

function evidence(weakened: WeakenedTest): string {
  const shown = weakened.weakenings.slice(0, SHOWN_WEAKENINGS).map(describe);
  if (weakened.weakenings.length > SHOWN_WEAKENINGS)
    shown.push(`… and ${weakened.weakenings.length - SHOWN_WEAKENINGS} more`);
  return [`Test "${weakened.name}" checks less than at the base commit:`, ...shown].join('\n');
}

function describe(w: Weakening): string {
  switch (w.kind) {
    case 'test removed': {
      const held = w.test.assertions.slice(0, 3).map((a) => a.text);
      return `- test removed (base line ${w.test.line})${held.length ? `; it checked: ${held.join('; ')}` : ''}`;
    }
    case 'assertion removed':
      return `- assertion removed (base line ${w.before.line}): ${w.before.text}`;
    case 'assertion made unreachable':
      return `- line ${w.after.line} no longer runs, because of \`${w.after.unreachable!.text}\` (line ${w.after.unreachable!.line}): ${w.after.text}`;
    case 'assertion failure swallowed':
      return `- line ${w.after.line} can no longer fail the test: \`${w.after.swallowed!.text}\` (line ${w.after.swallowed!.line}) catches it: ${w.after.text}`;
    case 'assertion weakened':
      return (
        `- assertion weakened (${STRENGTH_MEANING[strengthOf(w.before)]} → ${STRENGTH_MEANING[strengthOf(w.after)]}), ` +
        `line ${w.after.line}: ${w.before.text} → ${w.after.text}`
      );
    case 'expected value changed':
      return `- expected value changed, line ${w.after.line}: ${w.before.text} → ${w.after.text}`;
    case 'exception now expected':
      return `- the test now passes when its code throws${w.after.expected ? ` ${w.after.expected}` : ''}, line ${w.after.line}: ${w.after.text}`;
  }
}

/** Go, Rust and unparsable files: fewer test cases or assertions than at base, by regular expression. */
async function countedWeakening({ input, read }: TamperContext, change: FileChange): Promise<TamperFinding[]> {
  const basePath = change.basePath!;
  const checkpointPath = change.checkpointPath!;
  const language = languageOf(checkpointPath)!;
  const before = countTests(basePath, (await read(input.baseCommit, basePath)) ?? '');
  const after = countTests(checkpointPath, (await read(input.checkpointCommit, checkpointPath)) ?? '');
  if (!before || !after || (after.cases >= before.cases && after.assertions >= before.assertions)) return [];
  const removed = change.removed.filter((l) => declaresTestOrAssertion(language, l.text));
  const line = removed[0]?.line ?? firstChangedLine(change);
  return [
    {
      rule: 'TESTS_WEAKENED',
      title: 'Existing tests weakened',
      topic: 'testing_gaps',
      location: { file: checkpointPath, startLine: line, endLine: line },
      evidence:
        `Test cases ${before.cases} → ${after.cases}, assertions ${before.assertions} → ${after.assertions} ` +
        `(comments not counted).` +
        (removed.length ? `\n${quoteLines('-', removed)}` : ''),
    },
  ];
}
