import { minimatch } from 'minimatch';
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
];

/** A test path (TEST_FILE_GLOBS) holding source a runner loads, so a `.bak` copy is no test. */
export function isTestFile(file: string): boolean {
  return isRunnableSource(file) && TEST_FILE_GLOBS.some((glob) => minimatch(file, glob, { dot: true }));
}

const TEST_CASE: Record<Language, RegExp> = {
  // it(…), test(…), it.each(…)(…), test.concurrent(…)
  javascript: /(?<![\w$.])(?:it|test)(?:\.\w+)*\s*\(/g,
  python: /\bdef\s+test\w*\s*\(/g,
  go: /\bfunc\s+(?:\([^)]*\)\s*)?Test\w*\s*\(/g,
  rust: /#\[(?:\w+::)*test\b/g,
};

const ASSERTION: Record<Language, RegExp> = {
  javascript: /(?<![\w$.])(?:expect|assert)(?:\.\w+)*\s*\(/g,
  python: /\bassert\b|\bself\.assert\w*\s*\(|\bpytest\.raises\s*\(/g,
  go: /\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(|\b(?:assert|require)\.\w+\s*\(/g,
  rust: /\b(?:debug_)?assert(?:_eq|_ne)?!\s*\(/g,
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
