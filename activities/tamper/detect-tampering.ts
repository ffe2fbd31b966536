import { inventoryReader } from '../../analysis/tamper/syntax-inventories';
import { tamperFindings } from '../../analysis/tamper/tamper-rules';
import type { TamperFinding, TamperInput } from '../../analysis/tamper/types';
import { early } from '../in-order';
import { baseGateEntrypoints } from './base-entrypoints';
import { cachedReader, listFiles, loadChanges } from './change-set';
import { pythonInventories } from './python-syntax';

// The tamper rules (analysis/tamper/tamper-rules.ts, docs/design.md §3.4) over real git: the maker's
// changes, each file read once, Python parsed by python3.

export async function detectTampering(input: TamperInput): Promise<TamperFinding[]> {
  const read = cachedReader(input.workspace);
  const baseEntrypoints = () => baseGateEntrypoints(input.workspace, input.baseCommit, input.gates, read);
  // What the base's gates read does not depend on the change: read beside the diff (the gate entrypoint
  // rule then gets it from baseGateEntrypoints' cache, even while still being read).
  void early(baseEntrypoints());
  const changes = await loadChanges(input.workspace, input.baseCommit, input.checkpointCommit);
  if (!changes.length) return [];
  return tamperFindings({
    input,
    changes,
    read,
    inventory: inventoryReader(input, changes, read, pythonInventories),
    checkpointFiles: () => listFiles(input.workspace, input.checkpointCommit),
    baseEntrypoints,
  });
}
