// ESLint 9 flat config. Deliberately small: typescript-eslint's recommended set, typed linting for
// the two promise rules that catch real bugs in a Temporal/Fastify service, a guard that keeps
// Node built-ins out of code that runs in Temporal's deterministic workflow sandbox, and the layers:
// no import circles, nothing imports the entry-point folder service/, and only store/ talks to the database.
import { builtinModules } from 'node:module';
import { defineConfig } from 'eslint/config';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

// workflows/** runs inside Temporal's workflow sandbox (no I/O, no Node APIs), and domain/** is
// shared with it (docs/design.md §10.11: pure domain code imports no Node APIs). Type-only imports are
// erased at compile time, so they stay allowed.
const SANDBOXED_FILES = ['workflows/**/*.ts', 'domain/**/*.ts'];
const sandboxMessage =
  'Workflow and domain code runs in the Temporal workflow sandbox: no Node built-ins. Do the I/O in an activity.';
const nodeBuiltins = [...new Set(builtinModules.filter((name) => !name.startsWith('_')))].sort();

const serviceZone = {
  target: '.',
  from: './service',
  message:
    'service/ holds the entry points: move what you need below it (config/, telemetry/, or the layer that owns it).',
};
// Where queries may be written: the data-access layer, the client itself, and tests and benches.
const DATABASE_FILES = ['store/**', 'prisma/**', 'test/**', 'bench/**'];
const storeMessage = 'Queries live in store/: call (or add) a function there, passing the client.';
// store/ sits below the activities and the API (and telemetry, which reads it): it imports only domain/ and prisma/.
const storeZone = {
  target: './store',
  from: ['./activities', './api', './telemetry', './workflows', './config', './cli'],
  message: 'store/ sits below the code that calls it.',
};
const prismaZone = {
  target: '.',
  from: './prisma',
  message: `${storeMessage} Import the types you need from store/ as well.`,
};
// Model calls only: the client's own methods ($disconnect, …) are the entry points' job, and the
// raw-SQL ones have a selector of their own.
const MODEL_CALL = ':not([property.name=/^\\$/])';

// analysis/** is the pure analysis (tamper rules, test report parsers, gate discovery, setup inference):
// it works on texts, paths and parsed data it is handed, so it is tested without files, processes, git
// or a database (docs/design.md §10.11). activities/ gathers its inputs.
const ANALYSIS_FILES = ['analysis/**/*.ts'];
const analysisMessage =
  'analysis/ is pure: no files, processes, network or database. Gather the input in an activity (activities/) and pass it in.';
const analysisIo = ['fs', 'fs/promises', 'child_process', 'os', 'net', 'http', 'https'].flatMap((name) => [
  name,
  `node:${name}`,
]);
const analysisLayers = ['activities', 'api', 'store', 'service', 'workflows'];

export default defineConfig(
  {
    ignores: ['node_modules/', 'dist/', '.data/', '.tools/', 'prisma/generated/', 'coverage/'],
  },
  tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.mts', '**/*.cts'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  {
    // Type-only imports are erased at compile time, so no-cycle does not follow them.
    files: ['**/*.ts', '**/*.mts', '**/*.cts'],
    plugins: { 'import-x': importX },
    settings: {
      // Sources import each other without an extension; the generated Prisma client imports `.js` names of `.ts` files.
      'import-x/resolver-next': [
        importX.createNodeResolver({ extensions: ['.ts', '.js', '.json'], extensionAlias: { '.js': ['.ts', '.js'] } }),
      ],
      // The files whose imports are followed.
      'import-x/extensions': ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    // service/ is the top: entry points and the wiring of the processes. Everything else sits below it
    // (configuration in config/, telemetry in telemetry/), so only tests and benches may reach into it.
    files: ['**/*.ts', '**/*.mts', '**/*.cts'],
    ignores: ['service/**', 'test/**', 'bench/**'],
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: [serviceZone, storeZone] }],
    },
  },
  {
    // store/ owns the queries: code outside it imports neither the Prisma client nor its types from prisma/
    // (store/ re-exports the few types callers need). service/ builds the client; tests and benches may query.
    files: ['**/*.ts', '**/*.mts', '**/*.cts'],
    ignores: [...DATABASE_FILES, 'service/**'],
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: [serviceZone, prismaZone] }],
    },
  },
  {
    // ...nor runs a query itself: no raw SQL, transactions or model calls on a client named `prisma`.
    files: ['**/*.ts', '**/*.mts', '**/*.cts'],
    ignores: DATABASE_FILES,
    rules: {
      'no-restricted-syntax': [
        'error',
        ...['$queryRaw', '$executeRaw', '$queryRawUnsafe', '$executeRawUnsafe', '$transaction'].map((name) => ({
          selector: `MemberExpression[property.name='${name}']`,
          message: storeMessage,
        })),
        {
          selector: `MemberExpression[object.type='Identifier'][object.name='prisma']${MODEL_CALL}`,
          message: storeMessage,
        },
        {
          selector: `MemberExpression[object.type='MemberExpression'][object.property.name='prisma']${MODEL_CALL}`,
          message: storeMessage,
        },
      ],
    },
  },
  {
    files: SANDBOXED_FILES,
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: sandboxMessage, allowTypeImports: true })),
          patterns: [{ regex: '^node:', message: sandboxMessage, allowTypeImports: true }],
        },
      ],
    },
  },
  {
    files: ANALYSIS_FILES,
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: analysisIo.map((name) => ({ name, message: analysisMessage, allowTypeImports: true })),
          patterns: [
            // Not even types: a type from a layer above ties analysis/ to it.
            { regex: `^(\\.\\./)+(${analysisLayers.join('|')})(/|$)`, message: analysisMessage },
            { regex: '(^|/)prisma(/|$)|^@prisma/', message: analysisMessage },
          ],
        },
      ],
    },
  },
  {
    // Untrusted work is spawned only through the sandbox (activities/process/run-command.ts), and it and
    // git start their processes from the launcher's helper process (activities/process/launcher.ts). The
    // few other activity modules that start processes run the service's own trusted tools (bwrap,
    // and python3 running the service's own script: tamper/python-syntax.ts parses the maker's Python
    // tests with `ast`, which executes none of their code).
    files: ['activities/**/*.ts'],
    ignores: ['activities/process/launcher.ts', 'activities/sandbox/probe.ts', 'activities/tamper/python-syntax.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: ['child_process', 'node:child_process'].map((name) => ({
            name,
            message: 'Spawn untrusted commands with runCommand (it applies the sandbox).',
          })),
        },
      ],
    },
  },
  {
    // Tests read untyped JSON from the HTTP API; fixture agents are plain CommonJS scripts.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['test/fixtures/**/*.js', 'scripts/**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
