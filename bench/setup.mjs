// `npm run bench -- setup`: verification set-up time per iteration (first install, then an unchanged
// lockfile) for an npm, a Python and a Maven project, through the jest bench test/bench/setup.bench.ts
// (it needs the end-to-end tier's PostgreSQL, Temporal dev server and compiled worker). Writes
// bench/results/setup.json, whose `summary` bench/run.mjs puts in SUMMARY.md.
import { spawnSync } from 'node:child_process';

const run = spawnSync(
  'npx',
  ['jest', '--selectProjects', 'e2e', '--roots', '<rootDir>/test/bench', '--testMatch', '**/setup.bench.ts'],
  { stdio: 'inherit' },
);
process.exit(run.status ?? 1);
