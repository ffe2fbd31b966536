import { fileChanges, pathsAndPatch } from '../../analysis/tamper/change-set';
import { entrypointChanges, gateEntrypointsAt } from '../../analysis/tamper/entrypoint-changes';
import { inventoryReader } from '../../analysis/tamper/syntax-inventories';
import { tamperFindings } from '../../analysis/tamper/tamper-rules';
import { isTestFile } from '../../analysis/tamper/test-files';
import type { TamperContext, TamperInput } from '../../analysis/tamper/types';
import type { ResolvedGate } from '../../domain/gates';

// The tamper rules on texts alone: the diff git would print and each commit's files, no repository
// (tamper.test.ts and tamper-syntax.test.ts run the same rules over real git).

const NPM_TEST: ResolvedGate = {
  gate: 'tests',
  argv: ['npm', 'test'],
  timeoutSeconds: 300,
  source: 'manifest-inference',
  detail: 'test',
};

/** `git diff --raw -p -z --unified=0` output for the raw lines and patch given. */
function rawDiff(raw: [status: string, ...paths: string[]][], patch: string): string {
  return (
    raw
      .map(([status, ...paths]) => `:100644 100644 1111111 2222222 ${status}\0${paths.map((p) => `${p}\0`).join('')}`)
      .join('') + `\0${patch}`
  );
}

function context(
  commits: { base: Record<string, string>; checkpoint: Record<string, string> },
  diff: string,
  input: Partial<TamperInput> = {},
): TamperContext {
  const tamperInput: TamperInput = {
    workspace: '/w',
    baseCommit: 'base',
    checkpointCommit: 'checkpoint',
    gates: [],
    outOfScope: [],
    ...input,
  };
  const files = (commit: string) => (commit === 'base' ? commits.base : commits.checkpoint);
  const read = async (commit: string, file: string) => files(commit)[file] ?? null;
  const changes = fileChanges(diff);
  return {
    input: tamperInput,
    changes,
    read,
    isTest: isTestFile,
    acceptanceTests: async () => [],
    inventory: inventoryReader(tamperInput, changes, { read, isTest: isTestFile }, async (texts) =>
      texts.map(() => null),
    ),
    checkpointFiles: async () => new Set(Object.keys(commits.checkpoint)),
    baseEntrypoints: () =>
      gateEntrypointsAt(tamperInput.workspace, tamperInput.gates, Object.keys(commits.base), (file) =>
        read('base', file),
      ),
  };
}

describe('fileChanges', () => {
  it("reads the paths (renames followed) and each file's added and removed lines", () => {
    const diff = rawDiff(
      [
        ['M', 'src/a.ts'],
        ['R100', 'old.ts', 'new.ts'],
        ['D', 'gone.ts'],
      ],
      'diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -2 +2,2 @@\n-old\n+new\n+more\n' +
        'diff --git a/gone.ts b/gone.ts\n--- a/gone.ts\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n',
    );
    expect(fileChanges(diff)).toEqual([
      {
        basePath: 'src/a.ts',
        checkpointPath: 'src/a.ts',
        added: [
          { line: 2, text: 'new' },
          { line: 3, text: 'more' },
        ],
        removed: [{ line: 2, text: 'old' }],
      },
      { basePath: 'old.ts', checkpointPath: 'new.ts', added: [], removed: [] },
      { basePath: 'gone.ts', checkpointPath: null, added: [], removed: [{ line: 1, text: 'bye' }] },
    ]);
    expect(pathsAndPatch(rawDiff([['A', 'x']], 'patch')).paths).toEqual([{ basePath: null, checkpointPath: 'x' }]);
  });
});

describe('tamperFindings', () => {
  it('reports a deleted test file and an added skip, in rule order', async () => {
    const test = "test('adds', () => {\n  expect(1 + 1).toBe(2);\n});\n";
    const ctx = context(
      {
        base: { 'a.test.js': test, 'b.test.js': test },
        checkpoint: { 'b.test.js': test.replace("test('adds'", "test.skip('adds'") },
      },
      rawDiff(
        [
          ['D', 'a.test.js'],
          ['M', 'b.test.js'],
        ],
        "--- a/a.test.js\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-test('adds', () => {\n-  expect(1 + 1).toBe(2);\n-});\n" +
          "--- a/b.test.js\n+++ b/b.test.js\n@@ -1 +1 @@\n-test('adds', () => {\n+test.skip('adds', () => {\n",
      ),
    );
    expect((await tamperFindings(ctx)).map((f) => [f.rule, f.location.file, f.location.startLine])).toEqual([
      ['TESTS_DELETED', 'a.test.js', 1],
      ['SKIP_OR_ONLY_ADDED', 'b.test.js', 1],
    ]);
  });

  it('reports a changed package.json script the tests gate runs, and only that key', async () => {
    const base = { 'package.json': '{\n  "scripts": { "test": "jest" },\n  "version": "1.0.0"\n}\n' };
    const checkpoint = { 'package.json': '{\n  "scripts": { "test": "exit 0" },\n  "version": "1.0.1"\n}\n' };
    const ctx = context(
      { base, checkpoint },
      rawDiff(
        [['M', 'package.json']],
        '--- a/package.json\n+++ b/package.json\n@@ -2 +2 @@\n-  "scripts": { "test": "jest" },\n+  "scripts": { "test": "exit 0" },\n',
      ),
      { gates: [NPM_TEST] },
    );
    const changed = await entrypointChanges(await ctx.baseEntrypoints(), ctx.input, ctx.changes, ctx.read);
    expect(changed.packageKeys.map((k) => [k.key, k.before, k.after])).toEqual([['scripts.test', 'jest', 'exit 0']]);
    const findings = await tamperFindings(ctx);
    expect(findings.map((f) => [f.rule, f.location.file, f.location.startLine])).toEqual([
      ['GATE_ENTRYPOINT_CHANGED', 'package.json', 2],
    ]);
  });

  it("reports a workspace member's changed test script (pnpm -r run test runs it), not a new member's", async () => {
    const member = (test: string) => `{\n  "name": "@acme/a",\n  "scripts": {\n    "test": "${test}"\n  }\n}\n`;
    const base = {
      'package.json': '{ "scripts": { "test": "pnpm -r run test" } }\n',
      'packages/a/package.json': member('jest'),
    };
    const checkpoint = {
      ...base,
      'packages/a/package.json': member('exit 0'),
      'packages/b/package.json': member('exit 0'),
    };
    const ctx = context(
      { base, checkpoint },
      rawDiff(
        [
          ['M', 'packages/a/package.json'],
          ['A', 'packages/b/package.json'],
        ],
        '--- a/packages/a/package.json\n+++ b/packages/a/package.json\n@@ -4 +4 @@\n-    "test": "jest"\n+    "test": "exit 0"\n' +
          '--- /dev/null\n+++ b/packages/b/package.json\n@@ -0,0 +1,6 @@\n+{\n+  "name": "@acme/a",\n+  "scripts": {\n+    "test": "exit 0"\n+  }\n+}\n',
      ),
      { gates: [{ ...NPM_TEST, argv: ['pnpm', 'run', 'test'] }] },
    );
    const changed = await entrypointChanges(await ctx.baseEntrypoints(), ctx.input, ctx.changes, ctx.read);
    expect(changed.packageKeys.map((k) => [k.file, k.key, k.before, k.after])).toEqual([
      ['packages/a/package.json', 'scripts.test', 'jest', 'exit 0'],
    ]);
    const findings = await tamperFindings(ctx);
    expect(findings.map((f) => [f.rule, f.location.file, f.location.startLine])).toEqual([
      ['GATE_ENTRYPOINT_CHANGED', 'packages/a/package.json', 4],
    ]);
  });

  it('reports a file changed outside the contract scope, not one inside it', async () => {
    const ctx = context(
      { base: { 'src/a.ts': 'a\n' }, checkpoint: { 'src/a.ts': 'b\n', 'docs/x.md': 'x\n' } },
      rawDiff(
        [
          ['M', 'src/a.ts'],
          ['A', 'docs/x.md'],
        ],
        '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/docs/x.md\n@@ -0,0 +1 @@\n+x\n',
      ),
      { scope: ['src/**'] },
    );
    expect((await tamperFindings(ctx)).map((f) => [f.rule, f.location.file])).toEqual([
      ['OUT_OF_SCOPE_CHANGE', 'docs/x.md'],
    ]);
  });
});
