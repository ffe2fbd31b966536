import type { CommitReader } from './change-set';
import { ALIAS_FILES, pathAliases, type PathAlias } from './path-aliases';
import { repositoryModule } from './repo-modules';
import type { MockCall } from './test-inventory';
import type { TamperCheck, TamperFinding } from './types';

// docs/design.md §3.4: a test that mocks the repository's own code runs a stand-in, so it passes whatever that
// code does. Only mocks the maker added count (absent from the file's base version), and only of
// modules in the repository: mocking a third-party package (axios, requests) is ordinary testing. In
// Java and Kotlin only the class a test is named for counts (repo-modules.ts).

export const mockedModuleUnderTest: TamperCheck = async ({
  input,
  changes,
  inventory,
  isTest,
  checkpointFiles,
  read,
}) => {
  const findings: TamperFinding[] = [];
  let files: Set<string> | undefined;
  let aliases: PathAlias[] | undefined;
  for (const { basePath, checkpointPath: file } of changes) {
    if (!file || !isTest(file)) continue;
    const after = await inventory(input.checkpointCommit, file);
    // A base version that could not be parsed cannot tell which mocks are new.
    const before = basePath ? await inventory(input.baseCommit, basePath) : { tests: [], mocks: [] };
    if (!after?.mocks.length || !before) continue;
    const had = new Set(before.mocks.map(mockKey));
    files ??= await checkpointFiles();
    aliases ??= [...(await aliasesAt(read, input.checkpointCommit)), ...(await aliasesAt(read, input.baseCommit))];
    const local = after.mocks
      .filter((mock) => !had.has(mockKey(mock)))
      .map((mock) => ({ mock, module: repositoryModule(mock.target, file, files!, aliases) }))
      .filter((m): m is { mock: MockCall; module: string } => m.module !== null);
    if (!local.length) continue;
    const line = local[0]!.mock.line;
    findings.push({
      rule: 'MOCKED_MODULE_UNDER_TEST',
      title: 'Repository module replaced by a mock in a test',
      topic: 'testing_gaps',
      location: { file, startLine: line, endLine: line },
      evidence:
        `Added mock(s) of this repository's own code, so the test runs a stand-in instead of it:\n` +
        local.map(({ mock, module }) => `+${mock.line}: ${mock.text} (replaces ${module})`).join('\n'),
    });
  }
  return findings;
};

/** The path aliases a commit's root configuration defines: the base's, which gates run with, and the maker's. */
async function aliasesAt(read: CommitReader, commit: string): Promise<PathAlias[]> {
  const texts = await Promise.all(ALIAS_FILES.map(async (file) => [file, await read(commit, file)] as const));
  return pathAliases(Object.fromEntries(texts.filter((t): t is [string, string] => t[1] !== null)));
}

function mockKey(mock: MockCall): string {
  return `${mock.target}#${mock.member}`;
}
