// `npm run bench [-- name ...]`: runs the selected benches (the eight quick ones by default) one after
// another, each in its own process with its own service, then writes bench/results/SUMMARY.md from every
// result there (a bench not run this time keeps its last figures, with the date they were measured).
// `parked` (2,000 loops waiting for a decision, about 15 minutes) runs only when named:
// `npm run bench -- parked`, or with the others: `npm run bench -- overhead parked`.
// Sizes come from each bench's environment variables (see the top of each file).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { requireBuilt } from './lib/dist.mjs';
import { resultsDir } from './lib/results.mjs';

/** Name → title, and the script and result file when they are not named after it. */
const BENCHES = {
  overhead: { title: 'Orchestration overhead' },
  'overhead-outside': { title: 'Orchestration overhead, measured from outside' },
  concurrency: { title: 'Concurrent loops' },
  'api-latency': { title: 'API latency' },
  recovery: { title: 'Recovery after a worker is killed' },
  history: { title: 'History size' },
  setup: { title: 'Verification set-up per iteration' },
  inspection: { title: "The checkpoint's tamper and scope check on a sweeping change" },
  parked: { title: 'Loops waiting for a decision', file: 'parked-loops', optIn: true },
};
const fileOf = (name) => BENCHES[name].file ?? name;

const selected = process.argv.slice(2);
const unknown = selected.filter((name) => !(name in BENCHES));
if (unknown.length) {
  console.error(`unknown bench ${unknown.join(', ')}; choose from: ${Object.keys(BENCHES).join(' ')}`);
  process.exit(2);
}
requireBuilt();

const failed = [];
const byDefault = Object.keys(BENCHES).filter((name) => !BENCHES[name].optIn);
for (const name of selected.length ? selected : byDefault) {
  console.log(`\n=== bench ${name} ===`);
  const run = spawnSync(process.execPath, [fileURLToPath(new URL(`./${fileOf(name)}.mjs`, import.meta.url))], {
    stdio: 'inherit',
  });
  if (run.status !== 0) failed.push(name);
}

const sections = Object.entries(BENCHES).map(([name, { title }]) => {
  const file = new URL(`${fileOf(name)}.json`, resultsDir);
  const summary = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')).summary : null;
  return `## ${title} (\`${name}\`)\n\n${summary ?? '_Not measured yet: `npm run bench -- ' + name + '`._'}\n`;
});
const summaryFile = new URL('SUMMARY.md', resultsDir);
fs.writeFileSync(
  summaryFile,
  `# Benchmarks\n\nWritten by \`npm run bench\` (bench/run.mjs) from bench/results/*.json. Fake maker, gate and model, all local; ` +
    'figures vary by machine and load, so each section says what it ran on.\n\n' +
    sections.join('\n'),
);
console.log(`\nSummary: ${fileURLToPath(summaryFile)}`);
if (failed.length) {
  console.error(`failed: ${failed.join(', ')}`);
  process.exit(1);
}
