import { matchesGlob } from '../../domain/glob-match';
import { isRunnableSource, languageOf, withoutComments, type Language } from './languages';

// Which files are tests, and how much a test file checks (test cases and assertions).

const TEST_FILE_GLOBS = [
  '**/*.test.*',
  '**/*.spec.*',
  '**/test_*.py',
  '**/*_test.py',
  '**/*_test.go',
  '**/tests/**',
  '**/test/**',
  '**/__tests__/**',
  // Java and Kotlin: Maven's and Gradle's test source sets at any module depth (`core/src/test/java/…`,
  // `src/integrationTest/kotlin/…`), and the class names surefire and failsafe run wherever they are.
  '**/src/test/**',
  '**/src/*Test/**',
  '**/*Test.{java,kt}',
  '**/*Tests.{java,kt}',
  '**/*TestCase.{java,kt}',
  '**/*IT.{java,kt}',
  '**/*ITCase.{java,kt}',
];

/** What tests read in a Maven or Gradle layout: resources of a test source set are data, whatever their extension. */
const TEST_RESOURCES = ['**/src/test/resources/**', '**/src/*Test/resources/**'];
/** A main source set: javac compiles it into the product, and no runner looks there for tests. */
const JVM_MAIN = '**/src/main/**/*.{java,kt}';

/** A test path (TEST_FILE_GLOBS) holding source a runner loads, so a `.bak` copy is no test. */
export function isTestFile(file: string): boolean {
  return (
    isRunnableSource(file) &&
    TEST_FILE_GLOBS.some((glob) => matchesGlob(file, glob, { dot: true })) &&
    ![...TEST_RESOURCES, JVM_MAIN].some((glob) => matchesGlob(file, glob, { dot: true }))
  );
}

// What tests read: golden files, snapshots, fixtures, whatever their extension. A `.go` file under
// `testdata/` is data too (the go tool ignores that directory).
const TEST_DATA_GLOBS = [
  '**/testdata/**',
  '**/__snapshots__/**',
  '**/*.snap',
  '**/fixtures/**',
  '**/__fixtures__/**',
  '**/golden/**',
  '**/*.golden',
  '**/tests/**',
  '**/test/**',
  '**/__tests__/**',
  ...TEST_RESOURCES,
];

/** A file tests read but no runner loads as a test: changing it changes what the tests expect. */
export function isTestData(file: string): boolean {
  return (
    !isTestFile(file) &&
    !matchesGlob(file, JVM_MAIN, { dot: true }) &&
    TEST_DATA_GLOBS.some((glob) => matchesGlob(file, glob, { dot: true }))
  );
}

// Rust's unit tests live beside the code they test (`#[cfg(test)] mod tests` in src/), and a `#[test]`
// function may sit in any module: such a file is a test file for every rule, whatever its path.
const INLINE_TESTS: Partial<Record<Language, RegExp>> = {
  rust: /#\[\s*cfg\s*\(\s*test\s*\)\s*\]|#\[(?:\w+::)*test\b/,
};

/** Whether `text` (the file's content) defines tests inline, among other code. */
export function definesInlineTests(file: string, text: string): boolean {
  const language = languageOf(file);
  const pattern = language && INLINE_TESTS[language];
  return !!pattern && pattern.test(withoutComments(text, language));
}

/** Which paths are test files, by path or, for changed files, by what they hold at either commit. */
export type TestFileTest = (file: string) => boolean;

/**
 * Test files among `files` (paths at base and checkpoint): by path, or holding inline tests in the version
 * `read` gives at either commit — a module whose tests the maker commented out or moved is still one —
 * or `collected` by the runner.
 */
export async function testFilesAmong(
  files: Array<{ commit: string; file: string }>,
  read: (commit: string, file: string) => Promise<string | null>,
  collected: string[] = [],
): Promise<TestFileTest> {
  const byContent = new Set<string>(collected);
  for (const { commit, file } of files) {
    if (isTestFile(file) || byContent.has(file) || !INLINE_TESTS[languageOf(file) ?? 'javascript']) continue;
    if (definesInlineTests(file, (await read(commit, file)) ?? '')) byContent.add(file);
  }
  return (file) => isTestFile(file) || byContent.has(file);
}

// JUnit 4 and 5, TestNG, kotlin.test; JUnit 5's @TestInstance or @TestMethodOrder declare no test.
const JVM_TEST_CASE = /@(?:[\w.]+\.)?(?:Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\b/g;
// assertEquals(…), assertThat(…), assertFailsWith<…>, fail(…), Mockito's verify(…), MockK's verify { … },
// Kotest's infix `x shouldBe y`.
const JVM_ASSERTION =
  /(?<![\w$])(?:assert\w*|fail|verify\w*|coVerify\w*|shouldThrow\w*)\s*[(<{]|(?<![\w$])should(?!Throw)[A-Z]\w*\b/g;

const TEST_CASE: Record<Language, RegExp> = {
  // it(…), test(…), it.each(…)(…), test.concurrent(…)
  javascript: /(?<![\w$.])(?:it|test)(?:\.\w+)*\s*\(/g,
  python: /\bdef\s+test\w*\s*\(/g,
  go: /\bfunc\s+(?:\([^)]*\)\s*)?Test\w*\s*\(/g,
  rust: /#\[(?:\w+::)*test\b/g,
  java: JVM_TEST_CASE,
  kotlin: JVM_TEST_CASE,
};

const ASSERTION: Record<Language, RegExp> = {
  javascript: /(?<![\w$.])(?:expect|assert)(?:\.\w+)*\s*\(/g,
  python: /\bassert\b|\bself\.assert\w*\s*\(|\bpytest\.raises\s*\(/g,
  go: /\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(|\b(?:assert|require)\.\w+\s*\(/g,
  rust: /\b(?:debug_)?assert(?:_eq|_ne)?!\s*\(/g,
  java: JVM_ASSERTION,
  kotlin: JVM_ASSERTION,
};

export interface TestInventory {
  cases: number;
  assertions: number;
}

/** Counts test cases and assertions outside comments; null for a language we cannot read. */
export function countTests(file: string, text: string): TestInventory | null {
  const language = languageOf(file);
  if (!language) return null;
  const code = withoutComments(text, language);
  return {
    cases: code.match(TEST_CASE[language])?.length ?? 0,
    assertions: code.match(ASSERTION[language])?.length ?? 0,
  };
}

/** Whether one line declares a test case or makes an assertion. */
export function declaresTestOrAssertion(language: Language, line: string): boolean {
  const code = withoutComments(line, language);
  return new RegExp(TEST_CASE[language].source).test(code) || new RegExp(ASSERTION[language].source).test(code);
}
