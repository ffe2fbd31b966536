// The checkpoint's tamper and scope check (activities/inspect-changes.ts examineCheckpoint) on a sweeping
// change: a repository of INSPECTION_FILES files, INSPECTION_CHANGED of them changed in one commit. The
// maker's activity runs this check beside the first gate, and it holds the worker's event loop while its
// rules run, so its time matters per iteration however the gates go.
//
// Run after `npm run build`: `npm run bench -- inspection` (also part of the default `npm run bench`).
// Settings (environment): INSPECTION_FILES (20000), INSPECTION_CHANGED (3000), INSPECTION_RUNS (5).
// Writes bench/results/inspection.json.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { importDist, requireBuilt } from './lib/dist.mjs';
import { startResult } from './lib/results.mjs';
import { logger, median, positiveInt, round } from './lib/util.mjs';

requireBuilt();
const FILES = positiveInt(process.env.INSPECTION_FILES ?? 20_000, 'INSPECTION_FILES');
const CHANGED = Math.min(positiveInt(process.env.INSPECTION_CHANGED ?? 3_000, 'INSPECTION_CHANGED'), FILES);
const RUNS = positiveInt(process.env.INSPECTION_RUNS ?? 5, 'INSPECTION_RUNS');
const log = logger('inspection');
const inspect = await importDist('activities/inspect-changes.js');
const contracts = await importDist('domain/contract.js');

const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** A repository of FILES small modules and tests in 100 packages; returns it with its base and changed commits. */
function sweepingChange(dir) {
  for (let i = 0; i < FILES; i++) {
    const pkg = path.join(dir, `packages/p${i % 100}`, i % 5 === 0 ? 'test' : 'src');
    fs.mkdirSync(pkg, { recursive: true });
    const test = i % 5 === 0;
    fs.writeFileSync(
      path.join(pkg, test ? `m${i}.test.js` : `m${i}.js`),
      test ? `test('m${i}', () => { expect(${i}).toBe(${i}); });\n` : `export const m${i} = () => ${i};\n`,
    );
  }
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '-q', '-m', 'base');
  const base = git(dir, 'rev-parse', 'HEAD');
  const tracked = git(dir, 'ls-files').split('\n');
  for (const file of tracked.slice(0, CHANGED)) fs.appendFileSync(path.join(dir, file), '// touched\n');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '-q', '-m', 'sweep');
  return { base, checkpoint: git(dir, 'rev-parse', 'HEAD') };
}

const result = startResult('inspection');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-inspection-'));
try {
  log(`${FILES} files, ${CHANGED} changed, ${RUNS} runs; load ${result.loadAtStart.join(' ')}`);
  const { base, checkpoint } = sweepingChange(dir);
  const contract = contracts.goalContractSchema.parse({
    objective: 'Touch every module.',
    outcome: 'Every module is touched.',
    acceptanceCriteria: [{ id: 'AC-1', statement: 'the tests pass', verification: { type: 'gate', gate: 'tests' } }],
  });
  const checkpointInput = {
    loopId: 'bench',
    iterationId: 'bench',
    workspace: dir,
    baseCommit: base,
    checkpointCommit: checkpoint,
    contract,
    gates: [{ gate: 'tests', argv: ['npx', 'jest'], timeoutSeconds: 600, source: 'contract', detail: 'bench' }],
  };
  const runsMs = [];
  let findings = 0;
  for (let i = 0; i <= RUNS; i++) {
    const started = performance.now();
    const examined = await inspect.examineCheckpoint(checkpointInput);
    // The first run warms git's and the process's caches; it is reported apart.
    runsMs.push(performance.now() - started);
    findings = examined.tampering.length;
    log(`run ${i}: ${round(runsMs.at(-1), 0)} ms, ${findings} findings`);
  }
  const [firstMs, ...rest] = runsMs;
  const medianMs = round(median(rest), 0);
  result.write(
    { files: FILES, changed: CHANGED, runs: RUNS },
    { firstMs: round(firstMs, 0), medianMs, runsMs: rest.map((ms) => round(ms, 0)), findings },
    [
      `**The checkpoint's tamper and scope check: ${medianMs} ms** (median of ${RUNS}; the first run ${round(firstMs, 0)} ms) ` +
        `for ${CHANGED} changed files in a ${FILES}-file repository (${findings} findings).`,
    ],
  );
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
