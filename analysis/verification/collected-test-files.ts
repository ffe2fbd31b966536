import { isRunnableSource } from '../tamper/languages';

// Test files as the runner sees them (docs/design.md §3.4): the files the base run's report names its
// tests in, whatever their path — a mocha `spec/` directory, jest's `testMatch`, pytest's
// `python_files`. The path globs of analysis/tamper/test-files.ts miss such files, so verification
// adds them to the frozen run and runs the test-file rules over them once more.

/**
 * The files the runner's test names point into (`test/a.test.js > total > adds`,
 * `checks/check_sum.py::test_adds`): the part before the first separator, when it is a source file.
 * Names without a file (go, cargo, a runner read from its output) give none.
 */
export function collectedTestFiles(names: string[]): string[] {
  const files = new Set<string>();
  for (const name of names) {
    const file = name.split(/ > |::/, 1)[0]!;
    if (file !== name && !file.startsWith('/') && !file.split('/').includes('..') && isRunnableSource(file))
      files.add(file);
  }
  return [...files];
}
