// The sandbox's cost per command: the same trivial commands run through runCommand with SANDBOX=none
// and with bubblewrap, side by side, several times each. Not a test: figures vary by machine and load.
// Run after `npm run build`: `npm run bench:sandbox`. Writes bench/results/sandbox.json.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const dist = (file) => new URL(`../dist/${file}`, import.meta.url);
if (!fs.existsSync(dist('activities/process/run-command.js'))) {
  console.error('dist/ is missing: run `npm run build` first');
  process.exit(1);
}
// dist is CommonJS: its exports arrive as the default export.
const {
  default: { runCommand },
} = await import(dist('activities/process/run-command.js').href);
const {
  default: { createSandbox },
} = await import(dist('activities/sandbox/sandbox.js').href);
const {
  default: { handOver },
} = await import(dist('activities/sandbox/hand-over.js').href);
const {
  default: { childEnvironment },
} = await import(dist('activities/process/child-environment.js').href);
const {
  default: { loadConfig },
} = await import(dist('config/service-config.js').href);

const RUNS = 30;
// A loop runs its commands seconds apart, and some costs show only then: entering a cgroup after a quiet
// spell once waited out an RCU grace period (limits.ts enterArgv). Back-to-back runs never see that.
const PACED_RUNS = 10;
const QUIET_MS = 1000;
const PACED = ['true', 'after 1 s idle (a loop’s pace)'];
const COMMANDS = {
  'true (a process start)': ['true'],
  'node -e 0 (a runtime start)': [process.execPath, '-e', '0'],
  'sh -c "ls -R > /dev/null" (file access)': ['sh', '-c', 'ls -R /usr/lib/node_modules/npm > /dev/null'],
};

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const workDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sandbox-')));
const sandboxes = {
  none: createSandbox(loadConfig({ SANDBOX: 'none' })),
  bwrap: createSandbox(loadConfig({ SANDBOX: 'bwrap' })),
};
await handOver(sandboxes.bwrap, workDir);

async function timeOne(argv, sandbox) {
  const started = performance.now();
  const result = await runCommand({
    argv,
    cwd: workDir,
    workspaceRoot: workDir,
    timeoutMs: 60_000,
    env: childEnvironment(),
    sandbox: { sandbox, policy: { workDir, egress: null, readOnlyInWorkDir: ['.git'] } },
    outputCapBytes: 64 * 1024,
  });
  if (result.exitCode !== 0) throw new Error(`${argv.join(' ')} failed: ${result.spawnError ?? result.stderr}`);
  return performance.now() - started;
}

const rows = [];
for (const [name, argv] of Object.entries(COMMANDS)) {
  const times = { none: [], bwrap: [] };
  await timeOne(argv, sandboxes.none);
  await timeOne(argv, sandboxes.bwrap);
  // Interleaved, so load from elsewhere hits both sides alike.
  for (let i = 0; i < RUNS; i++) {
    times.none.push(await timeOne(argv, sandboxes.none));
    times.bwrap.push(await timeOne(argv, sandboxes.bwrap));
  }
  const none = median(times.none);
  const bwrap = median(times.bwrap);
  rows.push({
    command: name,
    runs: RUNS,
    unsandboxedMs: Number(none.toFixed(1)),
    sandboxedMs: Number(bwrap.toFixed(1)),
    overheadMs: Number((bwrap - none).toFixed(1)),
  });
}
{
  const times = { none: [], bwrap: [] };
  for (let i = 0; i < PACED_RUNS; i++) {
    for (const side of ['none', 'bwrap']) {
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
      times[side].push(await timeOne([PACED[0]], sandboxes[side]));
    }
  }
  const none = median(times.none);
  const bwrap = median(times.bwrap);
  rows.push({
    command: `${PACED[0]}, ${PACED[1]}`,
    runs: PACED_RUNS,
    unsandboxedMs: Number(none.toFixed(1)),
    sandboxedMs: Number(bwrap.toFixed(1)),
    overheadMs: Number((bwrap - none).toFixed(1)),
  });
}
fs.rmSync(workDir, { recursive: true, force: true });

const result = {
  measuredAt: new Date().toISOString(),
  machine: {
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    loadavg: os.loadavg().map((l) => Number(l.toFixed(2))),
  },
  rows,
};
fs.mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
fs.writeFileSync(new URL('./results/sandbox.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
console.log(`| command | unsandboxed (median ms) | bubblewrap (median ms) | overhead (ms) |\n|---|---:|---:|---:|`);
for (const r of rows) console.log(`| ${r.command} | ${r.unsandboxedMs} | ${r.sandboxedMs} | ${r.overheadMs} |`);
console.log(
  `(${RUNS} runs each, interleaved, ${PACED_RUNS} for the paced row; load average ${result.machine.loadavg.join(' ')})`,
);
