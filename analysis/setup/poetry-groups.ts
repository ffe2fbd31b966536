import { stringsOf, tableAt, type TomlTable } from '../gate-discovery/toml';
import { isRecord } from '../gate-discovery/util';
import { normalisedName, plainName, plainRequirement, servesGates } from './python-test-deps';

// Poetry's dependency groups (`[tool.poetry.group.<name>.dependencies]`, and the older
// `[tool.poetry.dev-dependencies]`, which is the `dev` group) whose names say the gates need them. With
// poetry installing the project, the optional ones go to `poetry install --with` (the others it installs
// by default); with pip installing it, every one of them becomes pip requirements: poetry's constraints
// (`^8.0`, `~1.2`, `1.2.3`, `*`) turned into pip's, and its `extras`, `markers` and `python` into extras
// and an environment marker. Dependencies from a path, git, a URL or another package source are left
// out: the package index may hold something else under that name.

export interface PoetryGroup {
  name: string;
  optional: boolean;
  requirements: string[];
}

export function poetryTestGroups(pyproject: TomlTable | undefined): PoetryGroup[] {
  const poetry = tableAt(pyproject, 'tool.poetry');
  const groups: PoetryGroup[] = [];
  const legacy = tableAt(poetry, 'dev-dependencies');
  if (legacy) groups.push({ name: 'dev', optional: false, requirements: poetryRequirements(legacy) });
  for (const [name, group] of Object.entries(tableAt(poetry, 'group') ?? {})) {
    if (!isRecord(group) || !servesGates(name)) continue;
    groups.push({
      name,
      optional: group.optional === true,
      requirements: poetryRequirements(tableAt(group, 'dependencies') ?? {}),
    });
  }
  return groups;
}

/** A poetry dependencies table (`pytest = "^8.0"`, `black = { version = "*", extras = ["d"] }`) as pip requirements. */
function poetryRequirements(dependencies: TomlTable): string[] {
  return Object.entries(dependencies).flatMap(([name, value]) =>
    plainName(name) && normalisedName(name) !== 'python'
      ? (Array.isArray(value) ? value : [value]).flatMap((entry) => {
          const requirement = pipRequirement(name, entry);
          return requirement ? [requirement] : [];
        })
      : [],
  );
}

function pipRequirement(name: string, entry: unknown): string | null {
  const spec = typeof entry === 'string' ? { version: entry } : isRecord(entry) ? entry : undefined;
  if (!spec || ['path', 'git', 'url', 'file', 'source'].some((key) => key in spec)) return null;
  const extras = stringsOf(spec.extras).filter(plainName);
  // A constraint pip has no words for (`^1 || ^2`) installs the latest version, as `*` does.
  const versions = typeof spec.version === 'string' ? (pipSpecifiers(spec.version) ?? []) : [];
  const markers = [
    typeof spec.markers === 'string' ? spec.markers.trim() : '',
    typeof spec.python === 'string' ? (pythonMarker(spec.python) ?? '') : '',
  ].filter(Boolean);
  const marker = markers.length > 1 ? markers.map((m) => `(${m})`).join(' and ') : markers[0];
  return plainRequirement(
    `${name}${extras.length ? `[${extras.join(',')}]` : ''}${versions.join(',')}${marker ? `; ${marker}` : ''}`,
  );
}

/** Longer than any real constraint; bounds the work spent on one. */
const MAX_CONSTRAINT_LENGTH = 200;
// One comparison of a constraint: an operator (poetry's ^ and ~ among them) and a version.
// Parts of at most 9 digits, so one more is still exact; a pre-release, post or local tail starts with a letter.
const COMPARISON = /^(\^|~=|~|===|==|!=|<=|>=|<|>|=)?(\d{1,9}(?:\.\d{1,9})*(?:\.\*|[.+-]?[A-Za-z][A-Za-z0-9.+-]*)?)$/;

/** A poetry constraint as pip specifiers (`^1.2` → `>=1.2`, `<2.0`); [] for any version; null when pip cannot say it. */
export function pipSpecifiers(constraint: string): string[] | null {
  const trimmed = constraint.trim();
  if (trimmed === '*' || trimmed === '') return [];
  if (trimmed.includes('||') || trimmed.length > MAX_CONSTRAINT_LENGTH) return null;
  // `>= 1.2, < 1.5` and `>=1.2 <1.5` both mean both.
  const comparisons = trimmed
    .replace(/([<>=!~^])\s+/g, '$1')
    .split(/[\s,]+/)
    .filter(Boolean);
  const specifiers: string[] = [];
  for (const comparison of comparisons) {
    const match = COMPARISON.exec(comparison);
    if (!match) return null;
    const [, operator = '', version = ''] = match;
    const release = version
      .split(/[^\d.]/)[0]!
      .replace(/\.$/, '')
      .split('.')
      .map(Number);
    if (operator === '^') {
      // Up to the next change of the first non-zero part: ^1.2.3 → <2.0.0, ^0.2.3 → <0.3.0, ^0.0 → <0.1.
      const at = release.findIndex((n) => n !== 0);
      specifiers.push(`>=${version}`, `<${bumped(release, at === -1 ? release.length - 1 : at)}`);
    } else if (operator === '~') {
      // ~1.2.3 → <1.3.0, ~1 → <2.
      specifiers.push(`>=${version}`, `<${bumped(release, release.length === 1 ? 0 : 1)}`);
    } else if (operator === '' || operator === '=') {
      specifiers.push(`==${version}`);
    } else {
      specifiers.push(`${operator}${version}`);
    }
  }
  return specifiers;
}

/** The release with part `at` one higher and the parts after it zero: (1.2.3, 0) → 2.0.0. */
function bumped(release: number[], at: number): string {
  return release.map((n, i) => (i < at ? n : i === at ? n + 1 : 0)).join('.');
}

/** Poetry's `python = "^3.8"` as an environment marker: `python_version >= "3.8" and python_version < "4.0"`. */
function pythonMarker(constraint: string): string | null {
  const alternatives = constraint.split('||').map((alternative) => {
    const specifiers = pipSpecifiers(alternative);
    if (specifiers === null) return null;
    return specifiers
      .map((s) => {
        const [, operator, version] = /^([<>=!~]+)(.*)$/.exec(s)!;
        // python_version is major.minor; a longer version or a wildcard compares with the full one.
        const variable = /^\d+(?:\.\d+)?$/.test(version!) ? 'python_version' : 'python_full_version';
        return `${variable} ${operator} "${version}"`;
      })
      .join(' and ');
  });
  if (alternatives.some((a) => a === null)) return null;
  const conditions = alternatives.filter((a): a is string => !!a);
  if (conditions.length < alternatives.length) return null; // `*` among them: any Python, no marker
  return conditions.length > 1 ? conditions.map((c) => `(${c})`).join(' or ') : (conditions[0] ?? null);
}
