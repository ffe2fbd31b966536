import { quoteLines, type DiffLine, type FileChange } from './change-set';
import { lexJvm, matchBrackets } from './jvm-lexer';
import { isRunnableSource, languageOf, withoutComments, type Language } from './languages';
import { isTestData, type TestFileTest } from './test-files';
import type { TamperCheck, TamperFinding, TamperRule } from './types';

// docs/design.md §3.4: product code that knows it is under test. No test file changes, yet the tests
// pass: the code patches the assertion library or the runner when it is imported, behaves differently
// when it sees the runner's markers, or ends the process before any test runs. Only lines the maker
// added count, in files no runner loads as tests (configuration such as jest.config.js is the gate
// entrypoint rule's).

interface SourcePattern {
  pattern: RegExp;
  /** Also in test files: markers no test needs, e.g. Rust's `cfg!(test)` is always true inside a test. */
  anywhere?: true;
  /** Not in a test-support directory (`testutil/`, `testing/`), where importing the framework is its job. */
  notInTestSupport?: true;
  /** Not in a program run as a command (`bin/`, `scripts/`, a `#!` line), which exits as programs do. */
  notInPrograms?: true;
}

type SourceTable = Partial<Record<Language, SourcePattern[]>>;

const FRAMEWORK =
  /(?:node:)?(?:assert(?:\/strict)?|test)|@jest\/[\w-]+|jest(?:-[\w-]+)?|@vitest\/[\w-]+|vitest|mocha|chai|expect|should/;
const MODULE_NAME = new RegExp(`['"\`](?:${FRAMEWORK.source})['"\`]`);

/** JUnit 3, 4 and 5, TestNG, Mockito, AssertJ, Hamcrest, MockK, Kotest, kotlin.test, Truth, opentest4j. */
const JVM_TEST_PACKAGES =
  /org\.junit|junit\.framework|org\.testng|org\.mockito|org\.assertj|org\.hamcrest|io\.mockk|io\.kotest|kotlin\.test|com\.google\.common\.truth|org\.opentest4j/;
const JVM_FRAMEWORK_IN_SOURCE: SourcePattern[] = [
  { pattern: new RegExp(`^\\s*import\\s+(?:static\\s+)?(?:${JVM_TEST_PACKAGES.source})\\b`), notInTestSupport: true },
  // used fully qualified, without an import: org.junit.Assert.assertTrue(…), org.mockito.Mockito.mock(…)
  { pattern: new RegExp(`(?<![\\w."'])(?:${JVM_TEST_PACKAGES.source})\\.\\w`), notInTestSupport: true },
];
/**
 * Product code asking whether a test runner runs it: surefire's and Gradle's system properties
 * (surefire.test.class.path, org.gradle.test.worker), the launch command, or a test framework's name in a
 * string — Class.forName("org.junit.Test"), a stack trace scanned for "junit".
 */
const JVM_RUN_DETECTED: SourcePattern[] = [
  { pattern: /["'](?:surefire|failsafe|maven\.test|org\.gradle\.test|sun\.java\.command)\b[\w.-]*["']/ },
  {
    pattern:
      /["'](?:org\.junit|junit\.framework|org\.testng|org\.mockito|org\.apache\.maven\.surefire|org\.gradle\.api\.internal\.tasks\.testing|worker\.org\.gradle|kotlin\.test|io\.kotest)\b[\w.$]*["']|["'](?:junit|jupiter|surefire|testng)["']/i,
  },
];

const FRAMEWORK_IN_SOURCE: SourceTable = {
  javascript: [
    // import … from 'node:assert', require('chai'), import('@jest/expect')
    { pattern: new RegExp(`(?:\\bfrom\\s*|\\brequire\\s*\\(\\s*|\\bimport\\s*\\(?\\s*)${MODULE_NAME.source}`) },
    // assert.strictEqual = …, expect.extend(…), jest.spyOn(…), Object.defineProperty(assert, …)
    { pattern: /(?<![\w$.])(?:assert|expect|jest|vi|chai|mocha)(?:\s*\.\s*\w+)+\s*=(?!=)/ },
    { pattern: /(?<![\w$.])(?:expect\.extend|jest\.\w+|vi\.\w+)\s*\(/ },
    { pattern: /\bObject\.(?:defineProperty|assign)\s*\(\s*(?:assert|expect|global|globalThis)\b/ },
    { pattern: /(?:global|globalThis)\s*\.\s*(?:it|test|describe|expect|assert)\s*=(?!=)/ },
    // jest's snapshot state: `_updateSnapshot = 'all'` makes every snapshot match
    { pattern: /\b(?:snapshotState|_updateSnapshot|updateSnapshot)\b/ },
  ],
  python: [
    { pattern: /^\s*(?:import|from)\s+(?:pytest|_pytest|unittest|pluggy)\b/, notInTestSupport: true },
    { pattern: /\b(?:unittest\.TestCase|TestCase|pytest|_pytest)(?:\.\w+)+\s*=(?!=)/ },
  ],
  go: [{ pattern: /^\s*(?:import\s+)?(?:[\w.]+\s+)?"testing(?:\/[\w/]+)?"/, notInTestSupport: true }],
  java: JVM_FRAMEWORK_IN_SOURCE,
  kotlin: JVM_FRAMEWORK_IN_SOURCE,
};

const RUN_DETECTED: SourceTable = {
  javascript: [
    { pattern: /\b(?:JEST_WORKER_ID|NODE_TEST_CONTEXT|VITEST(?:_\w+)?|MOCHA_\w+|__vitest_worker__)\b/ },
    { pattern: /\bNODE_ENV\b.{0,12}['"`]test['"`]|['"`]test['"`].{0,12}\bNODE_ENV\b/ },
    { pattern: /\btypeof\s+(?:it|describe|test|expect|jest|vi|before|beforeEach)\s*[!=]==?/ },
    {
      pattern:
        /(?:global|globalThis|window|self)\s*(?:\.\s*|\[\s*['"`])(?:it|describe|test|expect|jest|vi)\b(?!\s*=[^=])/,
    },
    { pattern: /\bprocess\s*\.\s*(?:argv|execArgv)\b.*(?:jest|vitest|mocha|--test)/ },
  ],
  python: [
    { pattern: /\bPYTEST_(?:CURRENT_TEST|VERSION|XDIST_WORKER)\b/ },
    {
      pattern:
        /['"](?:pytest|_pytest|unittest)['"]\s+(?:not\s+)?in\s+sys\.modules|sys\.modules\.get\(\s*['"](?:pytest|_pytest)/,
    },
    { pattern: /\bsys\.argv\b.*\b(?:pytest|py\.test|unittest)\b/ },
  ],
  go: [{ pattern: /\btesting\.Testing\s*\(|\bflag\.Lookup\s*\(\s*"test\.|"\.test"/, anywhere: true }],
  rust: [
    {
      pattern: /\bcfg!\s*\(\s*(?:not\s*\(\s*)?test\b|#\[\s*cfg\s*\(\s*not\s*\(\s*test\b|\bRUST_TEST_THREADS\b/,
      anywhere: true,
    },
  ],
  java: JVM_RUN_DETECTED,
  kotlin: JVM_RUN_DETECTED,
};

// Ends the process at import: at the start of a line (top level), not under `if __name__ == "__main__"`.
const EXIT_AT_IMPORT: SourceTable = {
  javascript: [
    {
      pattern: /^(?:if\b.*|\S.*&&\s*)?process\s*\.\s*(?:exit|reallyExit|abort)\s*\(|^process\.exitCode\s*=/,
      notInPrograms: true,
    },
  ],
  python: [
    {
      pattern: /^(?!.*__name__)(?:if\b.*:\s*)?(?:sys\.exit|os\._exit|exit|quit)\s*\(|^raise\s+SystemExit\b/,
      notInPrograms: true,
    },
  ],
};

const CONFIGURATION =
  /(?:^|\/)(?:[^/]*\.config\.[cm]?[jt]s|conftest\.py|\.[^/]*rc\.[cm]?js|(?:jest|vitest)\.setup\.[cm]?[jt]s)$/;
const TEST_SUPPORT = /(?:^|\/)[^/]*test[^/]*\//i;
const PROGRAM_DIRECTORY = /(?:^|\/)(?:bin|scripts?|tools|cli)\//;

interface Hit {
  file: string;
  lines: DiffLine[];
}

/** Added lines matching `table` in the source files it applies to. */
function addedMatches(changes: FileChange[], table: SourceTable, isTest: TestFileTest): Hit[] {
  const hits: Hit[] = [];
  for (const change of changes) {
    const file = change.checkpointPath;
    const language = file && isRunnableSource(file) ? languageOf(file) : null;
    if (!file || !language || isTestData(file) || CONFIGURATION.test(file)) continue;
    const testFile = isTest(file);
    const program = PROGRAM_DIRECTORY.test(file) || change.added.some((l) => l.line === 1 && l.text.startsWith('#!'));
    const patterns = (table[language] ?? []).filter(
      (p) =>
        (p.anywhere || !testFile) && !(p.notInTestSupport && TEST_SUPPORT.test(file)) && !(p.notInPrograms && program),
    );
    const lines = change.added.filter((line) => {
      const code = withoutComments(line.text, language);
      return patterns.some((p) => p.pattern.test(code));
    });
    if (lines.length) hits.push({ file, lines });
  }
  return hits;
}

function findings(hits: Hit[], rule: TamperRule, title: string, what: string): TamperFinding[] {
  return hits.map(({ file, lines }) => ({
    rule,
    title,
    topic: 'testing_gaps',
    location: { file, startLine: lines[0]!.line, endLine: lines[0]!.line },
    evidence: `${what}:\n${quoteLines('+', lines)}`,
  }));
}

export const testFrameworkInSource: TamperCheck = async ({ changes, isTest }) =>
  findings(
    addedMatches(changes, FRAMEWORK_IN_SOURCE, isTest),
    'TEST_FRAMEWORK_IN_SOURCE',
    'Product code imports or patches a test framework',
    'Product code (not a test file) added an import of a test framework or assertion module, or changes one',
  );

export const testRunDetected: TamperCheck = async ({ input, changes, isTest, read }) =>
  findings(
    [
      ...addedMatches(changes, RUN_DETECTED, isTest),
      ...(await rustTestOnlyItems(changes, isTest, (file) => read(input.checkpointCommit, file))),
    ].sort((a, b) => a.file.localeCompare(b.file)),
    'TEST_RUN_DETECTED',
    'Product code detects the test run',
    "Product code reads a test runner's markers, so it can behave one way under the tests and another in use",
  );

export const exitAtImport: TamperCheck = async ({ input, changes, isTest, read }) =>
  findings(
    [
      ...addedMatches(changes, EXIT_AT_IMPORT, isTest),
      ...(await jvmExitsAtLoad(changes, isTest, (file) => read(input.checkpointCommit, file))),
    ].sort((a, b) => a.file.localeCompare(b.file)),
    'EXIT_AT_IMPORT',
    'Process exits when the module is imported',
    'Product code ends the process at the top level, so a test run that imports it stops before its tests, with the exit code it chose',
  );

/**
 * Java and Kotlin product code that ends the process when its class is loaded: System.exit, Runtime's
 * exit or halt, Kotlin's exitProcess in a static initializer, a static field's initializer, a Kotlin
 * object's (or companion object's) init block or property, or a Kotlin top-level property. A test run
 * that loads the class stops there. Best effort, from tokens (jvm-lexer.ts).
 */
async function jvmExitsAtLoad(
  changes: FileChange[],
  isTest: TestFileTest,
  checkpointText: (file: string) => Promise<string | null>,
): Promise<Hit[]> {
  const hits: Hit[] = [];
  for (const change of changes) {
    const file = change.checkpointPath;
    const language = file ? languageOf(file) : null;
    if (!file || (language !== 'java' && language !== 'kotlin') || isTest(file) || isTestData(file)) continue;
    if (!change.added.some((l) => JVM_EXIT.test(l.text))) continue;
    const atLoad = exitLinesAtLoad((await checkpointText(file)) ?? '', language);
    const lines = change.added.filter((l) => atLoad.has(l.line));
    if (lines.length) hits.push({ file, lines });
  }
  return hits;
}

const JVM_EXIT = /\b(?:System\s*\.\s*exit|Runtime\s*\.\s*getRuntime\s*\(\s*\)\s*\.\s*(?:exit|halt)|exitProcess)\s*\(/;
const CONTROL_BLOCKS = new Set([
  'if',
  'else',
  'for',
  'while',
  'do',
  'try',
  'catch',
  'finally',
  'switch',
  'synchronized',
  'when',
]);

/** The lines of `text` that call an exit while its class (or Kotlin file) is being loaded. */
function exitLinesAtLoad(text: string, dialect: 'java' | 'kotlin'): Set<number> {
  const tokens = lexJvm(text, dialect).tokens;
  const pairs = matchBrackets(tokens);
  const enclosing: number[] = [];
  const open: number[] = [];
  tokens.forEach((token, i) => {
    while (open.length && pairs.get(open.at(-1)!)! < i) open.pop();
    enclosing.push(open.at(-1) ?? -1);
    if (token.text === '{') open.push(i);
  });
  /** The words of the declaration or statement a `{` (or token) belongs to, back to the previous one. */
  const header = (at: number): string[] => {
    const words: string[] = [];
    for (let k = at - 1; k >= 0; k--) {
      const t = tokens[k]!;
      if (t.text === ';' || t.text === '{' || t.text === '}') break;
      if (t.kind === 'word') words.unshift(t.text);
    }
    return words;
  };
  const isObject = (brace: number) => {
    const words = header(brace);
    return words.includes('object') && !words.includes('fun');
  };
  /** The nearest Kotlin declaration keyword before `at` in its statement: `fun` (a function), `val`/`var` (a property). */
  const declaredBy = (at: number): string | undefined => {
    for (let k = at - 1; k >= 0; k--) {
      const t = tokens[k]!.text;
      if (t === ';' || t === '{' || t === '}') return undefined;
      if (t === 'fun' || t === 'val' || t === 'var') return t;
    }
    return undefined;
  };
  const atLoad = (at: number): boolean => {
    let brace = enclosing[at]!;
    // Out of control blocks (`static { if (x) System.exit(1); }`), never out of a method or lambda.
    while (brace >= 0 && CONTROL_BLOCKS.has(header(brace)[0] ?? '') && tokens[brace - 1]?.text !== '->')
      brace = enclosing[brace]!;
    if (dialect === 'kotlin') {
      // A top-level or object property's initializer; an object's (or companion object's) init block.
      if (brace < 0 || isObject(brace)) return declaredBy(at) !== 'fun';
      return tokens[brace - 1]?.text === 'init' && enclosing[brace]! >= 0 && isObject(enclosing[brace]!);
    }
    if (brace < 0) return false;
    // A static initializer, or a static field's initializer in a class body.
    if (tokens[brace - 1]?.text === 'static') return true;
    const owner = header(brace);
    return ['class', 'interface', 'enum', 'record'].some((w) => owner.includes(w)) && header(at).includes('static');
  };
  const lines = new Set<number>();
  tokens.forEach((token, i) => {
    const call =
      (token.text === 'exitProcess' && tokens[i + 1]?.text === '(') ||
      (token.text === 'System' && tokens[i + 2]?.text === 'exit' && tokens[i + 3]?.text === '(') ||
      (token.text === 'Runtime' && ['exit', 'halt'].includes(tokens[i + 6]?.text ?? ''));
    if (call && atLoad(i)) lines.add(token.line);
  });
  return lines;
}

/**
 * Rust items (not modules) the maker marked `#[cfg(test)]`: a function, constant or impl that exists
 * only in the test build replaces the real one while the tests run.
 */
async function rustTestOnlyItems(
  changes: FileChange[],
  isTest: TestFileTest,
  checkpointText: (file: string) => Promise<string | null>,
): Promise<Hit[]> {
  const hits: Hit[] = [];
  for (const change of changes) {
    const file = change.checkpointPath;
    if (!file || languageOf(file) !== 'rust' || !isTest(file)) continue;
    const marked = change.added.filter((l) => /^\s*#\[\s*cfg\s*\(\s*test\s*\)\s*\]\s*$/.test(l.text));
    if (!marked.length) continue;
    const lines = ((await checkpointText(file)) ?? '').split('\n');
    const items = marked.filter((mark) => {
      // The item the attribute applies to: the next line that is not another attribute or a comment.
      const next = lines.slice(mark.line).find((l) => l.trim() && !/^\s*(?:#\[|\/\/)/.test(l)) ?? '';
      return !/^\s*(?:pub(?:\([\w\s]+\))?\s+)?(?:mod|use|extern\s+crate)\b/.test(next);
    });
    if (items.length) hits.push({ file, lines: items });
  }
  return hits;
}
