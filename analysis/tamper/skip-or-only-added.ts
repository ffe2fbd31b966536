import { quoteLines } from './change-set';
import { findAddedMarkers, type MarkerTable } from './added-markers';
import type { TamperCheck } from './types';

// docs/design.md §3.4: an added marker that changes what runs — a skip (conditional or not), an only, a
// test expected to fail, a build condition on a test file — hides failing tests (or every other test)
// from the tests gate, or turns a failure into a pass.

// JUnit 4/5, TestNG, kotlin.test and Kotest. Tags (`@Tag`, `@Category`) are no skip: which tags run is
// the build's configuration, a gate entrypoint (pom.xml, build.gradle).
const JVM_SKIP_OR_ONLY = [
  // @Ignore (JUnit 4, kotlin.test), @Disabled (JUnit 5), Kotest's @Ignored
  { pattern: /@(?:[\w.]+\.)?(?:Ignore|Ignored|Disabled)\b/ },
  // JUnit 5's conditions: @DisabledIf…, @EnabledIf…, @DisabledOnOs, @EnabledOnJre, @DisabledForJreRange, @DisabledInNativeImage
  { pattern: /@(?:[\w.]+\.)?(?:Disabled|Enabled)(?:If|On|For|In|Unless)\w*/ },
  // Assumptions abort a test as skipped: Assume.assumeTrue(…), Assumptions.assumeFalse(…), assumeThat(…)
  {
    pattern: /(?<![\w$])(?:Assume|Assumptions)\s*\.\s*assum\w*|(?<![\w$.])assum(?:e|ing)[A-Z]\w*\s*\(/,
    testFilesOnly: true,
  },
  // TestNG's @Test(enabled = false) and SkipException, Kotest's .config(enabled = false) and xtest / xshould …
  // (a test setting `settings.enabled = false` on its own objects skips nothing)
  {
    pattern: /(?:@Test\s*\(|\.config\s*\()[^)]*\benabled(?:If)?\s*=\s*(?:false\b|!|\{)|\bSkipException\b/,
    testFilesOnly: true,
  },
  {
    pattern: /(?<![\w$.])x(?:test|it|should|describe|context|given|when|then|feature|scenario|expect)\s*\(/,
    testFilesOnly: true,
  },
  // A test expected to fail its own assertions passes when the code it checks is wrong.
  {
    pattern:
      /\bexpected(?:Exceptions)?\s*=\s*\{?\s*(?:[\w.]+\.)?(?:AssertionError|AssertionFailedError|ComparisonFailure|Throwable|Error)(?:\.class|::class)/,
    testFilesOnly: true,
  },
];

const SKIP_OR_ONLY: MarkerTable = {
  javascript: [
    // it.skip(…), describe.only(…), test.skip.each(…), test.skipIf(…), test.runIf(…), t.skip(…), t.todo(…),
    // and tests expected to fail (jest's test.failing, vitest's test.fails) — never list.skip(2)
    {
      pattern:
        /(?<![\w$.])(?:it|test|describe|context|suite|specify|t)(?:\.\w+)*\.(?:skip|only|skipIf|runIf|todo|failing|fails)\b/,
    },
    { pattern: /(?<![\w$.])(?<!function\s+)(?:x|f)(?:it|test|describe|context|specify)\s*\(/ },
    // node:test options: test('…', { skip: true }, fn), { todo: … } (a failing todo test fails no run)
    { pattern: /\b(?:skip|only|todo)\s*:\s*(?:true|['"`]|!|process\.)/, testFilesOnly: true },
    // mocha's this.skip() inside a test or hook
    { pattern: /\bthis\.skip\s*\(/, testFilesOnly: true },
  ],
  python: [
    { pattern: /\bpytest\.mark\.(?:skip|skipif|xfail)\b|\bpytest\.(?:skip|xfail|importorskip)\s*\(/ },
    { pattern: /@unittest\.(?:skip\w*|expectedFailure)\b|\.skipTest\s*\(/ },
  ],
  go: [
    { pattern: /\.Skip(?:f|Now)?\s*\(/, testFilesOnly: true },
    // A build constraint leaves the whole test file out of the build unless its tags are set.
    { pattern: /^\s*\/\/\s*(?:go:build\b|\+build\b)/, testFilesOnly: true },
  ],
  rust: [
    { pattern: /#\[\s*ignore\b/ },
    // A test that must panic passes when the code it checks fails.
    { pattern: /#\[\s*should_panic\b/, testFilesOnly: true },
    // A condition on a test module or test other than `cfg(test)`: `#[cfg(any())]` never compiles it.
    { pattern: /#\[\s*cfg(?:_attr)?\s*\((?!\s*test\s*\)\s*\])/, testFilesOnly: true },
  ],
  java: JVM_SKIP_OR_ONLY,
  kotlin: JVM_SKIP_OR_ONLY,
};

export const skipOrOnlyAdded: TamperCheck = async ({ changes, isTest }) =>
  findAddedMarkers(changes, SKIP_OR_ONLY, isTest).map(({ file, lines }) => ({
    rule: 'SKIP_OR_ONLY_ADDED',
    title: 'Skip or only marker added to tests',
    topic: 'testing_gaps',
    location: { file, startLine: lines[0]!.line, endLine: lines[0]!.line },
    evidence: `Added a marker that skips, focuses or inverts tests, or leaves them out of the build:\n${quoteLines('+', lines)}`,
  }));
