import { contextImpact, type ChangedFile, type ContextImpact } from '../domain/context-impact';
import { git } from './git';

// The context impact of a loop's change (domain/context-impact.ts), read from git.

/** The change's context impact, from what it added, deleted and modified, and the base's top-level entries. */
export async function changeImpact(workspace: string, base: string, checkpoint: string): Promise<ContextImpact> {
  const [diff, top] = await Promise.all([
    git(workspace, ['diff', '--name-status', '--no-renames', '-z', '--end-of-options', `${base}..${checkpoint}`, '--']),
    git(workspace, ['ls-tree', '--name-only', '-z', '--end-of-options', base]),
  ]);
  const fields = diff.split('\0').filter(Boolean);
  const changes: ChangedFile[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = fields[i]![0] as ChangedFile['status'];
    changes.push({ status: status === 'A' || status === 'D' ? status : 'M', path: fields[i + 1]! });
  }
  return contextImpact(changes, top.split('\0').filter(Boolean));
}
