// Jest: TypeScript through ts-jest (CommonJS), one embedded Postgres + Temporal dev server per run.
/** @type {import('jest').Config} */
module.exports = {
  preset: 'ts-jest',
  // ts-jest compiles to CommonJS whatever tsconfig's node16 says; 151002 only warns about that.
  transform: { '^.+\\.tsx?$': ['ts-jest', { diagnostics: { ignoreCodes: [151002] } }] },
  testEnvironment: 'node',
  roots: ['<rootDir>/test', '<rootDir>/domain', '<rootDir>/workflows', '<rootDir>/activities', '<rootDir>/api', '<rootDir>/service'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/.data/', '/.tools/'],
  // tsconfig uses node16 resolution, so relative imports may end in `.js` (the generated Prisma client does).
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 120000,
  // Integration tests start heavy processes (Postgres, Temporal, workers) on a small machine.
  maxWorkers: 1,
};
