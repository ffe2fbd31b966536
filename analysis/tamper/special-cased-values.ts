import { quoteLines, type DiffLine } from './change-set';
import { isRunnableSource, languageOf, withoutComments } from './languages';
import { isTestData, isTestFile } from './test-files';
import { declarationLine } from '../verification/frozen-test-findings';
import { inTestModule } from '../verification/rust-test-modules';
import type { TamperCheck, TamperFinding } from './types';

// docs/design.md §3.4: code that returns what an acceptance test expects for the test's own inputs
// (`if (amount === 200) return 180`) passes that test and nothing else. The literals of each acceptance
// test — its inputs and expected values, read from its body in the base test file — are looked for in
// the product code the maker added: two of one test's literals within a few added lines is a suspected
// special case. One alone is not: an honest fix may well use a test's input (a threshold of 100).

/** How far apart (in lines) two added literals of one test may be to count as one special case. */
const WINDOW = 3;
/** Lines of a test's body read after its declaration, at most. */
const BODY_LINES = 40;
/** Numbers any code uses: never evidence on their own. */
const COMMON_NUMBERS = new Set(['0', '1', '2', '-1']);

export interface AcceptanceTestSource {
  /** The criterion's test name, as the contract gives it. */
  name: string;
  /** A base test file that declares it, and its text there. */
  file: string;
  text: string;
}

export const specialCasedValues: TamperCheck = async ({ input, changes, isTest, read, acceptanceTests }) => {
  const tests = (await acceptanceTests())
    .map((t) => ({ ...t, literals: testLiterals(t.text, t.name) }))
    .filter((t) => t.literals.size >= 2);
  if (!tests.length) return [];
  const findings: TamperFinding[] = [];
  for (const change of changes) {
    const file = change.checkpointPath;
    const language = file && isRunnableSource(file) ? languageOf(file) : null;
    if (!file || !language || isTestFile(file) || isTestData(file)) continue;
    // A source file with inline tests (Rust) is product code outside its test modules.
    const testCode = isTest(file) ? inTestModule((await read(input.checkpointCommit, file)) ?? '') : () => false;
    const added = change.added
      .filter((l) => !testCode(l.line))
      .map((l) => ({ ...l, literals: literalsIn(withoutComments(l.text, language)) }));
    for (const test of tests) {
      const lines = specialCase(added, test.literals);
      if (!lines) continue;
      findings.push({
        rule: 'SPECIAL_CASED_TEST_VALUES',
        title: `Code special-cases the values of the test ${test.name}`.slice(0, 160),
        topic: 'testing_gaps',
        location: { file, startLine: lines[0]!.line, endLine: lines[0]!.line },
        evidence:
          `The added code holds ${[...new Set(lines.flatMap((l) => l.literals.filter((x) => test.literals.has(x))))].join(', ')}, ` +
          `which the acceptance test "${test.name}" (${test.file}) uses as its inputs and expected values:\n${quoteLines('+', lines)}`,
      });
      break;
    }
  }
  return findings;
};

/** Added lines within WINDOW of each other that hold two different literals of the test, or null. */
type LiteralLine = DiffLine & { literals: string[] };

function specialCase(added: LiteralLine[], wanted: Set<string>): LiteralLine[] | null {
  for (let i = 0; i < added.length; i++) {
    const window = added.filter((l) => l.line >= added[i]!.line && l.line < added[i]!.line + WINDOW);
    const found = new Set(window.flatMap((l) => l.literals.filter((x) => wanted.has(x))));
    if (found.size >= 2) return window.filter((l) => l.literals.some((x) => wanted.has(x)));
  }
  return null;
}

/** The literals in a test's body: from the line that declares `name` to the next test, in `text`. */
export function testLiterals(text: string, name: string): Set<string> {
  const declared = declarationLine(text, name);
  if (declared === null) return new Set();
  const start = declared - 1;
  const lines = text.split('\n');
  const body: string[] = [];
  // A JVM test's annotations may stand between its declared name (@DisplayName) and its body.
  let opened = lines[start]!.includes('{');
  for (const line of lines.slice(start + 1, start + 1 + BODY_LINES)) {
    if (TEST_DECLARATION.test(line) || (opened && JVM_TEST_ANNOTATION.test(line))) break;
    opened ||= line.includes('{');
    body.push(line);
  }
  return new Set(literalsIn(body.join('\n')).filter((x) => !COMMON_NUMBERS.has(x)));
}

const TEST_DECLARATION =
  /^\s*(?:(?:it|test|specify)(?:\.\w+)*\s*\(|def\s+test|func\s+Test|#\[(?:\w+::)*test\b|(?:async\s+)?fn\s+\w+\s*\(\s*\)\s*(?:->|\{))/;
/** The next JUnit, TestNG or kotlin.test method, once the current one's body has begun. */
const JVM_TEST_ANNOTATION = /^\s*@(?:[\w.]+\.)?(?:Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\b/;

/**
 * Numbers and quoted strings (of two characters or more), as written: `200`, `'$180.00'` → `$180.00`.
 * Digit separators and Java's and Kotlin's type suffixes are left off (`1_000L` → `1000`), so a test's
 * `200L` and the code's `200` are one value.
 */
function literalsIn(code: string): string[] {
  const strings = [...code.matchAll(/(['"`])((?:(?!\1)[^\\\n]|\\.){2,80})\1/g)].map((m) => m[2]!);
  const numbers =
    code
      .replace(/(['"`])(?:(?!\1)[^\\\n]|\\.)*\1/g, ' ')
      .match(/(?<![\w.$])-?\d[\d_]*(?:\.\d[\d_]*)?(?:[lLfFdD]|[uU][lL]?)?(?![\w.])/g) ?? [];
  return [...strings, ...numbers.map((n) => n.replace(/_/g, '').replace(/(?:[lLfFdD]|[uU][lL]?)$/, ''))];
}
