import type { JUnitTestcase } from './junit';
import { combine, namesMatching, type Counts, type Detection } from './report';

// Vitest's summary line, e.g. `      Tests  2 failed | 3 passed | 1 skipped | 1 todo (7)`; each
// category is printed only when non-zero, and the total in parentheses is their sum.
const TESTS_LINE = /^ *Tests {2}(?<parts>\d+ [a-z]+(?: \| \d+ [a-z]+)*) \((?<total>\d+)\)$/gm;
const PART = /^(\d+) ([a-z]+)$/;

// The verbose reporter prints one line per test, its file and describe blocks joined by ` > `:
// ` ✓ nested.test.js > arithmetic > multiplies 1ms`. The default reporter prints file lines
// (`✓ file (3 tests) 4ms`) and, for failing files only, bare test names; those are not listed, so
// passedTests comes only from verbose output.
const PASSED_TEST = /^ +[✓√] (\S.* > .+?)(?: \d+(?:\.\d+)?m?s)?$/gmu;
// Every reporter closes with a `FAIL  file > describe > name` block per failed test.
const FAILED_TEST = /^ FAIL {2}(\S.* > .+)$/gm;

export function parseVitest(text: string): Detection {
  const summaries = [...text.matchAll(TESTS_LINE)].map(counts);
  return combine('vitest', summaries, {
    passed: namesMatching(text, PASSED_TEST),
    failed: namesMatching(text, FAILED_TEST),
  });
}

/** A vitest JUnit testcase: its classname is the test file, its name the describe blocks and title. */
export function vitestJUnitName(testcase: JUnitTestcase): string {
  return testcase.classname ? `${testcase.classname} > ${testcase.name}` : testcase.name;
}

function counts(match: RegExpMatchArray): Counts | null {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  let sum = 0;
  for (const part of (match.groups?.parts ?? '').split(' | ')) {
    const [, n, category] = PART.exec(part) ?? [];
    const count = Number(n);
    sum += count;
    if (category === 'passed') counts.passed += count;
    else if (category === 'failed') counts.failed += count;
    else if (category === 'skipped' || category === 'todo') counts.skipped += count;
    // A category this parser does not know cannot be classed as passed or failed.
    else return null;
  }
  return sum === Number(match.groups?.total) ? counts : null;
}
