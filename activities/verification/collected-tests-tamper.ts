import type { GoalContract } from '../../domain/contract';
import type { ResolvedGate } from '../../domain/gates';
import type { FileChange } from '../../analysis/tamper/change-set';
import { isTestFile } from '../../analysis/tamper/test-files';
import type { TamperFinding } from '../../analysis/tamper/types';
import { tamperInput } from '../inspect-changes';
import { detectTampering } from '../tamper/detect-tampering';

// The tamper rules once more, on the files the base run's runner collected tests from that no path
// glob names (analysis/verification/collected-test-files.ts): the maker activity's check saw them as
// product code, so a weakened assertion or an added skip there raised nothing, and the acceptance
// tests declared there gave no literals. Only what the runner's view adds is kept; the first check's
// findings are already stored.

/** The findings the runner's view of `collected` adds to the maker activity's tamper check. */
export async function collectedTestsTampering(
  at: {
    workspace: string;
    baseCommit: string;
    checkpointCommit: string;
    gates: ResolvedGate[];
    contract: GoalContract;
  },
  collected: ReadonlySet<string>,
  changes: FileChange[],
): Promise<TamperFinding[]> {
  const touched = new Set(changes.flatMap((c) => [c.basePath, c.checkpointPath]));
  const unglobbed = [...collected].filter((file) => touched.has(file) && !isTestFile(file));
  if (!unglobbed.length) return [];
  const input = tamperInput(at);
  const [asTests, first] = await Promise.all([
    detectTampering({ ...input, collectedTests: unglobbed }),
    detectTampering(input),
  ]);
  const key = (f: TamperFinding) => `${f.rule}\0${f.location.file}\0${f.location.startLine}\0${f.title}`;
  const known = new Set(first.map(key));
  return asTests.filter((f) => !known.has(key(f)));
}
