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
// tests declared there gave no literals. Only what the runner's view adds is kept: the first check's
// findings are stored already, and read back to compare by rule and place.

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
  /** The maker activity's findings of this checkpoint, as stored (rule and location). */
  alreadyFound: () => Promise<Array<{ rule: string | null; location: unknown }>>,
): Promise<TamperFinding[]> {
  const touched = new Set(changes.flatMap((c) => [c.basePath, c.checkpointPath]));
  const unglobbed = [...collected].filter((file) => touched.has(file) && !isTestFile(file));
  if (!unglobbed.length) return [];
  const [asTests, first] = await Promise.all([
    detectTampering({ ...tamperInput(at), collectedTests: unglobbed }),
    alreadyFound(),
  ]);
  const key = (rule: string | null, location: unknown) => {
    const { file, startLine } = location as TamperFinding['location'];
    return `${rule}\0${file}\0${startLine}`;
  };
  const known = new Set(first.map((f) => key(f.rule, f.location)));
  return asTests.filter((f) => !known.has(key(f.rule, f.location)));
}
