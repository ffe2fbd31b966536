// Jest: TypeScript through swc (@swc/jest, CommonJS), in four tiers (`npm run test:<tier>`, `--selectProjects`).
// Only integration and e2e need the embedded PostgreSQL and Temporal dev server: jest runs a project's
// globalSetup only when it runs a test of that project, and one module path only once a run, so the
// platform starts once for integration and e2e together and not at all for unit or workflow.

const typescript = {
  // Each file is transpiled alone, to CommonJS (tsconfig's node16 would keep `import()`, which jest's
  // CommonJS runtime cannot run), types stripped, not checked: `npm test` runs tsc before jest, and
  // type-checking each test file's import graph cost up to a minute a file on this machine. swc strips
  // them about ten times faster than ts-jest's transpile-only mode did (the repository's 596 files: 0.4 s
  // against 4.6 s), which a fresh clone's cold cache paid in every jest run and worker (the unit tier:
  // 67.7 -> 58.4 s of CPU). Target as tsconfig's (ES2022); @swc/jest hoists jest.mock calls.
  transform: {
    '^.+\\.tsx?$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022', keepClassNames: true },
        module: { type: 'commonjs' },
      },
    ],
  },
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  // tsconfig uses node16 resolution, so relative imports may end in `.js` (the generated Prisma client does).
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

const platform = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    // No database, Temporal server or dist/ (real git and subprocesses are allowed); files run in parallel.
    { ...typescript, displayName: 'unit', roots: ['<rootDir>/test/unit'] },
    // Each file starts its own Temporal test environment, its worker on the workflow code bundled once for
    // the tier by its global set-up. (Root test/: jest refuses a root that is missing.)
    {
      ...typescript,
      displayName: 'workflow',
      roots: ['<rootDir>/test'],
      testMatch: ['<rootDir>/test/workflow/**/*.test.ts'],
      globalSetup: '<rootDir>/test/workflow/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/workflow/support/global-teardown.ts',
    },
    // Each file gets a fresh migrated database and its own task queue; some run dist/.
    {
      ...typescript,
      ...platform,
      displayName: 'integration',
      roots: ['<rootDir>/test/integration', '<rootDir>/test/replay'],
    },
    // The real API, compiled worker processes and sandboxes.
    { ...typescript, ...platform, displayName: 'e2e', roots: ['<rootDir>/test/e2e'] },
  ],
  // Jest reads the timeout and reporters from the run's configuration, not a project's.
  testTimeout: 120000,
  reporters: ['default', '<rootDir>/test/support/totals-reporter.mjs'],
};
