import { tableAt, type TomlTable } from '../gate-discovery/toml';
import { isRecord } from '../gate-discovery/util';
import { normalisedName, plainRequirement, servesGates } from './python-test-deps';

// PEP 735 `[dependency-groups]` in pyproject.toml: the groups whose names say the gates need them
// (servesGates), with their `{include-group = "…"}` entries resolved here. Set-up installs the resulting
// specifiers with plain `pip install`: pip's own `--group` needs pip 25.1, and a venv gets the pip its
// Python bundles (23.2 with Python 3.11).

export interface GroupRequirements {
  /** The groups installed, as pyproject.toml names them. */
  groups: string[];
  requirements: string[];
  /** Groups left out, and why (an include cycle, a group that is not there). */
  notes: string[];
}

/** Deeper than any real chain of includes; a longer one is refused like a cycle. */
const MAX_INCLUDE_DEPTH = 32;

class RefusedGroup extends Error {}

export function dependencyGroups(pyproject: TomlTable | undefined): GroupRequirements {
  const table = tableAt(pyproject, 'dependency-groups') ?? {};
  const byName = new Map(Object.entries(table).map(([name, entries]) => [normalisedName(name), entries]));
  // Each group resolved once: a diamond of includes costs no more than its groups.
  const resolved = new Map<string, string[]>();

  const resolve = (name: string, trail: string[]): string[] => {
    const done = resolved.get(name);
    if (done) return done;
    if (trail.includes(name)) throw new RefusedGroup(`it includes itself (${[...trail, name].join(' → ')})`);
    if (trail.length >= MAX_INCLUDE_DEPTH) throw new RefusedGroup(`its includes go deeper than ${MAX_INCLUDE_DEPTH}`);
    const entries = byName.get(name);
    if (!Array.isArray(entries)) throw new RefusedGroup(`it includes ${name}, which is not a group`);
    const requirements = new Set<string>();
    for (const entry of entries) {
      if (typeof entry === 'string') {
        const requirement = plainRequirement(entry);
        if (requirement) requirements.add(requirement);
      } else if (isRecord(entry) && typeof entry['include-group'] === 'string') {
        for (const r of resolve(normalisedName(entry['include-group']), [...trail, name])) requirements.add(r);
      }
    }
    resolved.set(name, [...requirements]);
    return [...requirements];
  };

  const result: GroupRequirements = { groups: [], requirements: [], notes: [] };
  for (const group of Object.keys(table).filter(servesGates)) {
    try {
      result.requirements.push(...resolve(normalisedName(group), []));
      result.groups.push(group);
    } catch (error) {
      if (!(error instanceof RefusedGroup)) throw error;
      result.notes.push(`pyproject.toml [dependency-groups] ${group} is not installed: ${error.message}`);
    }
  }
  result.requirements = [...new Set(result.requirements)];
  return result;
}
