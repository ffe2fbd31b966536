import fs from 'node:fs';
import path from 'node:path';
import { envSchema } from '../../config/service-config';

// docs/operations.md's configuration table is the one list of environment variables: every variable the
// code reads is in it, and it names none that no code reads.

const ROOT = path.resolve(__dirname, '../..');
const OPERATIONS = path.join(ROOT, 'docs/operations.md');

/** Variables read directly rather than through the config schema, and the files that read them. */
const DIRECT_READS: Record<string, string[]> = {
  ENGINEERING_LOOP_PARENT_PID: ['service/parent-watch.ts'],
  PATH: [
    'service/temporal-dev-server.ts',
    'activities/process/child-environment.ts',
    'activities/sandbox/toolchain-paths.ts',
    'activities/git-isolation.ts',
  ],
  HOME: [
    'activities/process/child-environment.ts',
    'activities/sandbox/toolchain-paths.ts',
    'activities/git-isolation.ts',
    'cli/config.ts',
  ],
  USER: ['activities/process/child-environment.ts'],
  LOGNAME: ['activities/process/child-environment.ts'],
  LANG: ['activities/process/child-environment.ts'],
  LC_ALL: ['activities/process/child-environment.ts'],
  LC_CTYPE: ['activities/process/child-environment.ts'],
  TZ: ['activities/process/child-environment.ts'],
  TMPDIR: ['activities/process/child-environment.ts'],
  TERM: ['activities/process/child-environment.ts'],
  RUSTUP_HOME: ['activities/sandbox/toolchain-paths.ts'],
  PYENV_ROOT: ['activities/sandbox/toolchain-paths.ts'],
  GOROOT: ['activities/sandbox/toolchain-paths.ts'],
  JAVA_HOME: ['activities/sandbox/toolchain-paths.ts'],
  COREPACK_INTEGRITY_KEYS: ['activities/setup/setup-environment.ts'],
  COREPACK_NPM_REGISTRY: ['activities/setup/setup-environment.ts'],
  COREPACK_NPM_TOKEN: ['activities/setup/setup-environment.ts'],
  NODE_EXTRA_CA_CERTS: ['activities/setup/setup-environment.ts'],
  ENGINEERING_LOOP_URL: ['cli/config.ts'],
  ENGINEERING_LOOP_API_KEY: ['cli/config.ts'],
  ENGINEERING_LOOP_DEBUG: ['cli/cli.ts'],
  XDG_CONFIG_HOME: ['cli/config.ts'],
};

/** Where the service and the CLI read their environment (tests, benches and generated code excluded). */
const SOURCE_DIRS = ['service', 'config', 'telemetry', 'activities', 'api', 'cli', 'prisma'];
const SOURCE_FILES = ['prisma.config.ts'];
/** Code the service writes out for a tests gate's own processes: the variables it reads are the gate's, not the service's. */
const GATE_SOURCES = ['activities/verification/report-preload-sources.ts'];

const schemaVariables = Object.keys(envSchema.shape);
const codeVariables = new Set([...schemaVariables, ...Object.keys(DIRECT_READS)]);

/** The names in the first column of the table under "## Configuration". */
function documentedVariables(markdown: string): string[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Configuration\n'));
  if (!section) throw new Error('docs/operations.md has no "## Configuration" section');
  const rows = section.split('\n').filter((line) => line.startsWith('| `'));
  return rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!));
}

function sourceFiles(): string[] {
  const walk = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) return entry.name === 'generated' || entry.name === 'node_modules' ? [] : walk(file);
      const gateSource = GATE_SOURCES.includes(path.relative(ROOT, file));
      return /\.(ts|mjs)$/.test(entry.name) && !entry.name.endsWith('.test.ts') && !gateSource ? [file] : [];
    });
  return [...SOURCE_DIRS.flatMap((dir) => walk(path.join(ROOT, dir))), ...SOURCE_FILES.map((f) => path.join(ROOT, f))];
}

const documented = documentedVariables(fs.readFileSync(OPERATIONS, 'utf8'));

test('the configuration table lists each variable once', () => {
  expect(documented.filter((name, i) => documented.indexOf(name) !== i)).toEqual([]);
  expect(documented.length).toBeGreaterThan(schemaVariables.length);
});

test('every variable the code reads is in the configuration table', () => {
  expect([...codeVariables].filter((name) => !documented.includes(name)).sort()).toEqual([]);
});

test('the configuration table names no variable that no code reads', () => {
  expect(documented.filter((name) => !codeVariables.has(name)).sort()).toEqual([]);
});

test('each directly read variable is read where the list says', () => {
  const unread = Object.entries(DIRECT_READS).flatMap(([name, files]) =>
    files
      .filter(
        (file) => !new RegExp(`['"]${name}['"]|\\.${name}\\b`).test(fs.readFileSync(path.join(ROOT, file), 'utf8')),
      )
      .map((file) => `${name} in ${file}`),
  );
  expect(unread).toEqual([]);
});

test('no code reads a variable by name that the lists leave out', () => {
  // `process.env.X` and `env.X` reads (not assignments to a child's environment being built).
  const read = /\b(?:process\.)?env\.([A-Z][A-Z0-9_]*)\b(?!\s*=[^=])/g;
  const unlisted = sourceFiles().flatMap((file) =>
    [...fs.readFileSync(file, 'utf8').matchAll(read)]
      .map((m) => m[1]!)
      .filter((name) => !codeVariables.has(name))
      .map((name) => `${name} in ${path.relative(ROOT, file)}`),
  );
  expect(unlisted).toEqual([]);
});
