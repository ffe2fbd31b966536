import { Minimatch } from 'minimatch';
import path from 'node:path';
import { sectionText, valueAt } from './config-text';
import { literalGlob, PYTHON_MODULE, type GateEntrypoints } from './gate-entrypoints';

// Files the base configuration of a tool the gates run names: jest/vitest setup files, global setup,
// custom environments, reporters and transformers, mocha `require`s, the modules a JS config imports,
// pytest `-p` plugins and `pytest_plugins`. Each runs inside the gate as surely as the config does.
// Read best-effort from the text (JS configs are not evaluated), and only for the keys that load code,
// so a `collectCoverageFrom` naming a source file does not make it an entrypoint.

/** The base commit's tree, as far as the references need it. */
export interface BaseTree {
  /** Every file path at base. */
  files: string[];
  read(file: string): Promise<string | null>;
  /** package.json at base, parsed (undefined when absent or unreadable). */
  packageJson: unknown;
}

interface ReferencingConfig {
  configs: string[];
  /** The tool's top-level key in package.json, read as its config. */
  packageKey?: string;
  /** Config keys whose values name code the runner loads. */
  keys: string[];
}

const JS_CONFIGS: Record<string, ReferencingConfig> = {
  jest: {
    configs: ['**/jest.config.*'],
    packageKey: 'jest',
    keys: [
      'setupFiles',
      'setupFilesAfterEnv',
      'globalSetup',
      'globalTeardown',
      'testEnvironment',
      'testRunner',
      'testSequencer',
      'snapshotResolver',
      'snapshotSerializers',
      'resolver',
      'runner',
      'reporters',
      'transform',
      'preset',
      'dependencyExtractor',
    ],
  },
  vitest: {
    configs: ['**/vitest.config.*', '**/vitest.workspace.*', '**/vite.config.*'],
    keys: ['setupFiles', 'globalSetup', 'environment', 'reporters', 'runner', 'sequencer', 'snapshotSerializers'],
  },
  mocha: { configs: ['**/.mocharc*'], packageKey: 'mocha', keys: ['require', 'file', 'reporter', 'ui'] },
};

/** Where pytest reads `addopts` (and so `-p plugin`): the ini-style file and its section. */
const PYTEST_OPTIONS: [file: string, section: string | null][] = [
  ['pytest.ini', null],
  ['.pytest.ini', null],
  ['pyproject.toml', 'tool.pytest'],
  ['tox.ini', 'pytest'],
  ['setup.cfg', 'tool:pytest'],
];

/** How a JS config's relative import may leave off the extension. */
const JS_EXTENSIONS = ['.js', '.cjs', '.mjs', '.ts', '.cts', '.mts', '.jsx', '.tsx', '.json'];

export async function addConfigReferences(entrypoints: GateEntrypoints, base: BaseTree): Promise<void> {
  const atBase = new Set(base.files);
  const add = (globs: string[], reason: string) => {
    for (const glob of globs) if (!entrypoints.files.has(glob)) entrypoints.files.set(glob, reason);
  };
  for (const [tool, config] of Object.entries(JS_CONFIGS)) {
    const reason = entrypoints.tools.get(tool);
    if (!reason) continue;
    const configs = config.configs.map((glob) => new Minimatch(glob, { dot: true }));
    for (const file of base.files.filter((f) => configs.some((glob) => glob.match(f)))) {
      const text = (await base.read(file)) ?? '';
      const named = [...keyedStrings(text, config.keys), ...(/\.[cm]?[jt]s$/.test(file) ? relativeImports(text) : [])];
      named.forEach((ref) => add(referenceGlobs(ref, path.posix.dirname(file), atBase), `${reason}, through ${file}`));
    }
    const inPackage = config.packageKey && valueAt(base.packageJson, [config.packageKey]);
    if (inPackage) {
      const named = keyedStrings(JSON.stringify(inPackage, null, 1), config.keys);
      named.forEach((ref) =>
        add(referenceGlobs(ref, '.', atBase), `${reason}, through package.json ${config.packageKey}`),
      );
    }
  }
  const pytest = entrypoints.tools.get('pytest');
  if (!pytest) return;
  for (const [file, section] of PYTEST_OPTIONS) {
    if (!atBase.has(file)) continue;
    const text = (await base.read(file)) ?? '';
    const options = section === null ? text : sectionText(text, section).text;
    pluginOptions(options).forEach((module) => add(pluginGlobs(module), `${pytest}, through ${file}`));
  }
  for (const file of base.files.filter((f) => path.posix.basename(f) === 'conftest.py')) {
    const dir = path.posix.dirname(file);
    const modules = declaredPlugins((await base.read(file)) ?? '');
    modules.forEach((module) => add(pluginGlobs(module, dir), `${pytest}, through ${file} pytest_plugins`));
  }
}

/** String values of `keys` (`setupFiles: ['./a.js']`, `"globalSetup": "x"`, YAML `require: ./a.js` or a `- ./a.js` list). */
function keyedStrings(text: string, keys: string[]): string[] {
  const key = new RegExp(`(?:^|[\\s{,])["']?(?:${keys.join('|')})["']?\\s*:[ \\t]*`, 'gm');
  const found: string[] = [];
  for (const match of text.matchAll(key)) {
    const value = valueExtent(text, match.index + match[0].length);
    const quoted = [...value.matchAll(/(["'`])((?:\\.|(?!\1)[^\\\n])*)\1/g)].map((m) => m[2]!);
    found.push(
      ...(quoted.length
        ? quoted
        : value
            .split(/[\s,[\]{}]+/)
            .map((word) => word.replace(/^-$/, ''))
            .filter(Boolean)),
    );
  }
  return found;
}

/** The text of the value starting at `start`: a bracketed list or object, a YAML block list, or the rest of the line. */
function valueExtent(text: string, start: number): string {
  const open = text[start];
  if (open === '[' || open === '{' || open === '(') {
    let depth = 0;
    for (let i = start; i < text.length; i++) {
      const ch = text[i]!;
      if (ch === '"' || ch === "'" || ch === '`') {
        i = text.indexOf(ch, i + 1);
        if (i < 0) break;
      } else if ('[{('.includes(ch)) depth++;
      else if (']})'.includes(ch) && --depth === 0) return text.slice(start, i + 1);
    }
    return text.slice(start);
  }
  const lineEnd = text.indexOf('\n', start);
  const rest = text.slice(start, lineEnd < 0 ? undefined : lineEnd);
  if (rest.trim() || lineEnd < 0) return rest;
  const list = /^(?:[ \t]*-[ \t].*(?:\n|$))+/.exec(text.slice(lineEnd + 1));
  return list?.[0] ?? '';
}

/** `require('./x')`, `import x from '../y'`, `import('./z')`: a config's own modules are config too. */
function relativeImports(text: string): string[] {
  return [...text.matchAll(/(?:\brequire\s*\(|\bimport\s*\(|\bfrom|\bimport)\s*(["'`])(\.\.?\/[^"'`\n]+)\1/g)].map(
    (m) => m[2]!,
  );
}

/**
 * Globs for a reference from a config in `dir`. An explicit path (`./x`, `../x`, `<rootDir>/x`) counts
 * whether or not it exists, with the extensions an import may leave off; a bare name (`jsdom`, a
 * package) only when it names a file at base.
 */
function referenceGlobs(ref: string, dir: string, atBase: Set<string>): string[] {
  if (/[*?^$|\\\n]|:\/\//.test(ref) || path.posix.isAbsolute(ref)) return []; // a glob, a pattern, a URL or outside
  const rooted = ref.replace(/^<rootDir>\//, '');
  const file = path.posix.normalize(path.posix.join(dir, rooted));
  if (file === '.' || file.startsWith('../')) return [];
  // A vite config reading its version from package.json does not make the whole file an entrypoint:
  // package.json is protected key by key (gate-entrypoints.ts packageKeys), so dependencies stay the maker's.
  const candidates = [file, ...JS_EXTENSIONS.map((extension) => `${file}${extension}`)].filter(
    (f) => path.posix.basename(f) !== 'package.json',
  );
  const explicit = rooted !== ref || /^\.\.?\//.test(ref);
  return (explicit ? candidates : candidates.filter((candidate) => atBase.has(candidate))).map(literalGlob);
}

/** `-p name` in pytest options; `-p no:name` disables a plugin and loads nothing. */
function pluginOptions(options: string): string[] {
  return [...options.matchAll(/(?:^|[\s"'[,=])-p\s*=?\s*["']?([\w.:]+)/g)]
    .map((m) => m[1]!)
    .filter((name) => PYTHON_MODULE.test(name));
}

/** Module names in a conftest's `pytest_plugins = [...]` (or a single string). */
function declaredPlugins(conftest: string): string[] {
  const value = /^pytest_plugins\s*=\s*([[(][^\])]*[\])]|["'][^"'\n]*["'])/m.exec(conftest)?.[1] ?? '';
  return [...value.matchAll(/["']([^"'\n]+)["']/g)].map((m) => m[1]!).filter((name) => PYTHON_MODULE.test(name));
}

/** A plugin module imported from the repository root, `src/`, or `dir` (the declaring conftest's own directory). */
function pluginGlobs(module: string, dir = '.'): string[] {
  const file = module.replace(/\./g, '/');
  return [...new Set(['.', 'src', dir])].flatMap((root) => {
    const at = root === '.' ? '' : `${literalGlob(root)}/`;
    return [`${at}${file}.py`, `${at}${file}/**`];
  });
}
