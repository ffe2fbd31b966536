import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cleanLedger } from '../support/fake-llm-server';
import { scriptedMaker } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import {
  corepackWorkerEnv,
  REAL_PROJECTS,
  realProjectRepo,
  realProjectRequest,
  type Ecosystem,
} from '../support/real-projects';

// Set-up time of the first and the second loop on the same repository, per ecosystem (issue 9): the
// second loop's workspace and checkout are fresh, but its repository's package caches ($CACHE_DIR/<hash>/)
// hold what the first one downloaded. Not a test (figures vary by machine, network and load), and not
// part of `npm test`: `npm run build && npm run bench:setup` runs it through jest for the embedded
// PostgreSQL, the Temporal dev server and the compiled worker the end-to-end tests use. Times are the
// stored set-up evidence's own start and end times. Writes bench/results/setup.json and prints a table.

const ECOSYSTEMS: Ecosystem[] = ['npm', 'pnpm', 'python', 'go', 'cargo', 'maven'];
const RESULTS = path.resolve(__dirname, '../../bench/results/setup.json');

interface LoopFigures {
  loopMs: number;
  /** The maker's workspace (before the first maker). */
  workspaceSetupMs: number;
  /** The verification checkout (before the gates). */
  checkoutSetupMs: number;
  commands: Array<{ gate: string; argv: string[]; ms: number }>;
}

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness({ workerEnv: corepackWorkerEnv() });
});
afterAll(async () => {
  await h?.close();
});

async function runLoop(ecosystem: Ecosystem, repo: string): Promise<LoopFigures> {
  const project = REAL_PROJECTS[ecosystem]();
  const maker = scriptedMaker({ steps: { '1': { write: project.fix } } });
  h.llm.enqueue({ content: cleanLedger });
  const started = Date.now();
  const submitted = await h.request('POST', '/v1/loops', realProjectRequest(repo, project, maker.argv));
  const loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION', 'REJECTED'], 600_000);
  const loopMs = Date.now() - started;
  if (loop.status !== 'PASSED')
    throw new Error(`${ecosystem}: loop ${loop.id} ended ${loop.status}: ${loop.failureReason ?? ''}`);
  const rows = await h.db.prisma.evidence.findMany({
    where: { loopId: loop.id, OR: [{ iterationId: null }, { gate: { startsWith: 'setup:' } }] },
    orderBy: [{ startTime: 'asc' }],
  });
  const ms = (e: { startTime: Date | null; endTime: Date | null }) => e.endTime!.getTime() - e.startTime!.getTime();
  const sum = (workspace: boolean) =>
    rows.filter((e) => (e.iterationId === null) === workspace).reduce((t, e) => t + ms(e), 0);
  return {
    loopMs,
    workspaceSetupMs: sum(true),
    checkoutSetupMs: sum(false),
    commands: rows.map((e) => ({ gate: e.gate, argv: e.command as string[], ms: ms(e) })),
  };
}

test('set-up time, first and second loop on the same repository, per ecosystem', async () => {
  const rows: Array<{ ecosystem: Ecosystem; first: LoopFigures; second: LoopFigures }> = [];
  for (const ecosystem of ECOSYSTEMS) {
    const repo = realProjectRepo(REAL_PROJECTS[ecosystem]());
    const first = await runLoop(ecosystem, repo);
    const second = await runLoop(ecosystem, repo);
    rows.push({ ecosystem, first, second });
    fs.rmSync(repo, { recursive: true, force: true });
  }
  const result = {
    measuredAt: new Date().toISOString(),
    machine: {
      node: process.version,
      platform: `${process.platform}/${process.arch}`,
      cpus: os.cpus().length,
      cpu: os.cpus()[0]?.model,
      loadavg: os.loadavg().map((l) => Number(l.toFixed(2))),
    },
    note: 'set-up = the stored set-up evidence (workspace-setup:* before the maker, setup:* in the verification checkout), end minus start; the second loop has a fresh workspace and checkout and the same repository caches',
    rows,
  };
  fs.mkdirSync(path.dirname(RESULTS), { recursive: true });
  fs.writeFileSync(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
  const s = (n: number) => (n / 1000).toFixed(1);
  const table = [
    '| ecosystem | set-up commands | loop 1: workspace + checkout set-up (s) | loop 2: workspace + checkout set-up (s) | loop 2 / loop 1 | whole loop 1 → 2 (s) |',
    '|---|---|---:|---:|---:|---:|',
    ...rows.map(({ ecosystem, first, second }) => {
      const total1 = first.workspaceSetupMs + first.checkoutSetupMs;
      const total2 = second.workspaceSetupMs + second.checkoutSetupMs;
      const commands = [
        ...new Set(first.commands.filter((c) => c.gate.startsWith('setup:')).map((c) => `\`${c.argv.join(' ')}\``)),
      ].join(', ');
      return `| ${ecosystem} | ${commands} | ${s(first.workspaceSetupMs)} + ${s(first.checkoutSetupMs)} = ${s(total1)} | ${s(second.workspaceSetupMs)} + ${s(second.checkoutSetupMs)} = ${s(total2)} | ${(total2 / total1).toFixed(2)} | ${s(first.loopMs)} → ${s(second.loopMs)} |`;
    }),
    `(load average ${result.machine.loadavg.join(' ')}; ${RESULTS})`,
  ].join('\n');
  process.stdout.write(`${table}\n`);
}, 3_600_000);
