import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPrismaClient } from '../../prisma/client';
import { applyMigrations } from '../../service/migrate';
import { cleanLedger } from '../support/fake-llm-server';
import { recordHistory } from '../support/histories';
import { CORRECT_SUM, createFixtureRepo, makerRuns, scriptedMaker } from '../support/fixture-repo';
import { freePort } from '../support/free-port';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';
import { startPostgresProcess, type PostgresProcess } from '../support/postgres-process';
import { waitUntilNoProcessMatching } from '../support/processes';
import { sharedTestDir } from '../support/sandbox';

// PostgreSQL stopped for 60 s (issue 29) while three loops are in their maker, their verification and
// their review, each held there by something the test releases: a maker, a gate, and the reviewer's
// answer. They are released during the outage, so each phase's results must be stored while the database
// is down. The worker's activities wait for it, the API answers 503 with Retry-After, and when PostgreSQL
// is back every loop passes, each maker having run once and nothing recorded twice. The database is a
// PostgreSQL of this file's own, the only one the test can stop.

/** A maker that records its run, holds until the release file exists, then fixes sum(). */
const HELD_MAKER = `'use strict';
const fs = require('node:fs');
const path = require('node:path');
const [stateDir, releaseFile] = process.argv.slice(2);
fs.readFileSync(0);
fs.appendFileSync(path.join(stateDir, 'runs.log'), '1\\n');
const poll = () => {
  if (!fs.existsSync(releaseFile)) return setTimeout(poll, 100);
  fs.writeFileSync(path.join(process.cwd(), 'src', 'sum.js'), ${JSON.stringify(CORRECT_SUM)});
};
poll();
`;

/**
 * A gate that records its start, then passes once the release file exists. Inline (`node -e`): a gate's
 * arguments may not name paths outside the workspace, though a script's text may.
 */
const heldGate = (startedFile: string, releaseFile: string) => `'use strict';
const fs = require('node:fs');
fs.appendFileSync(${JSON.stringify(startedFile)}, 'started\\n');
const poll = () => (fs.existsSync(${JSON.stringify(releaseFile)}) ? process.exit(0) : setTimeout(poll, 100));
poll();
`;

const OUTAGE_MS = 60_000;

let postgres: PostgresProcess;
let postgresDir: string;
let postgresPort: number;
let h: LoopHarness;

beforeAll(async () => {
  postgresDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outage-postgres-'));
  postgresPort = await freePort();
  postgres = await startPostgresProcess(postgresDir, postgresPort);
  const { url } = postgres;
  await applyMigrations(url);
  const prisma = createPrismaClient(url);
  const database = {
    url,
    prisma,
    drop: () => prisma.$disconnect(),
  };
  // The held review's question stays open until the release: longer than the default 120 s would be a timeout.
  h = await startLoopHarness({ database, workerEnv: { LLM_TIMEOUT_SECONDS: '600' } });
}, 120_000);
afterAll(async () => {
  await h?.close();
  await postgres?.stop();
  if (postgresDir) fs.rmSync(postgresDir, { recursive: true, force: true });
});

test('PostgreSQL down for 60 s while loops are in maker, verification and review: they wait, the API answers 503, and all pass with nothing done twice', async () => {
  const shared = sharedTestDir('outage-');
  const release = path.join(shared, 'release');
  const script = (name: string, text: string) => {
    const file = path.join(shared, name);
    fs.writeFileSync(file, text, { mode: 0o755 });
    return file;
  };
  const heldMaker = script('held-maker.js', HELD_MAKER);
  const gateStarted = path.join(shared, 'gate-started');
  const heldMakerState = fs.mkdtempSync(path.join(shared, 'maker-'));
  fs.chmodSync(heldMakerState, 0o777);
  fs.writeFileSync(gateStarted, '', { mode: 0o666 });
  fs.chmodSync(gateStarted, 0o666);

  // The review of the loop held there is the first to ask: its answer waits for the release.
  let releaseReview!: () => void;
  const reviewHeld = new Promise<void>((resolve) => (releaseReview = resolve));
  h.llm.enqueue({ content: cleanLedger, hold: reviewHeld }, { content: cleanLedger }, { content: cleanLedger });

  const quickMaker = () => scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  const inVerify = quickMaker();
  const inReview = quickMaker();
  const ids = {
    maker: await h.submit(loopRequest(createFixtureRepo(), [process.execPath, heldMaker, heldMakerState, release])),
    verify: await h.submit(
      loopRequest(createFixtureRepo(), inVerify.argv, {
        gates: [
          { gate: 'tests', argv: ['node', '--test'], timeoutSeconds: 120 },
          { gate: 'lint', argv: [process.execPath, '-e', heldGate(gateStarted, release)], timeoutSeconds: 300 },
        ],
      }),
    ),
    review: await h.submit(loopRequest(createFixtureRepo(), inReview.argv)),
  };

  // Each loop inside its phase: the maker running, the gate running, the review's question asked.
  const states = async () =>
    JSON.stringify(
      await Promise.all(
        Object.values(ids).map(async (id) => {
          const { status, phase, failureReason, iterations } = (await h.request('GET', `/v1/loops/${id}`)).body;
          const evidence = iterations?.map((i: any) =>
            i.evidence.map((e: any) => `${e.gate}: ${e.status}${e.failureReason ? ` (${e.failureReason})` : ''}`),
          );
          return { status, phase, failureReason, evidence };
        }),
      ),
    );
  await waitFor(
    'each loop to be held in its phase',
    async () => {
      const phases = await Promise.all(
        Object.values(ids).map(async (id) => (await h.request('GET', `/v1/loops/${id}`)).body.phase),
      );
      return (
        makerRuns(heldMakerState).length === 1 &&
        fs.readFileSync(gateStarted, 'utf8').includes('started') &&
        h.llm.requests.length === 1 &&
        phases.join() === 'MAKER,VERIFY,REVIEW'
      );
    },
    180_000,
    states,
  );

  await postgres.stop();
  const stoppedAt = Date.now();

  // While it is down the API says so: 503 with Retry-After, and readiness names PostgreSQL.
  const during = await fetch(`${h.baseUrl}/v1/loops/${ids.review}`, {
    headers: { authorization: `Bearer ${h.keys.admin}` },
  });
  expect([during.status, during.headers.get('retry-after')]).toEqual([503, '5']);
  expect(((await during.json()) as { message: string }).message).toBe(
    'the database could not be reached; send the request again in a few seconds',
  );
  const ready = await h.request('GET', '/readyz');
  expect([ready.status, ready.body.checks.postgres]).toEqual([
    503,
    { ok: false, error: 'the database could not be reached' },
  ]);

  // The maker, the gate and the reviewer finish while the database is down: their results wait to be stored.
  fs.writeFileSync(release, 'go\n');
  releaseReview();
  await waitUntilNoProcessMatching(heldMakerState);
  await waitUntilNoProcessMatching(gateStarted);
  await waitFor('the worker to say its activities wait for the database', () =>
    h.worker.output().includes('the database could not be reached ('),
  );

  // The outage lasts its 60 s of wall time: its length is what is tested, not a synchronisation.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, stoppedAt + OUTAGE_MS - Date.now())));
  postgres = await startPostgresProcess(postgresDir, postgresPort);
  const restartedAt = Date.now();

  const loops = await Promise.all(
    Object.values(ids).map((id) => h.waitForLoop(id, ['PASSED', 'FAILED', 'AWAITING_DECISION'])),
  );
  console.log(
    `outage ${((restartedAt - stoppedAt) / 1000).toFixed(0)} s; all loops ended ${((Date.now() - restartedAt) / 1000).toFixed(1)} s after PostgreSQL was back`,
  );
  expect(loops.map((l) => [l.status, l.failureReason])).toEqual([
    ['PASSED', null],
    ['PASSED', null],
    ['PASSED', null],
  ]);
  expect(h.worker.output()).toMatch(/the database is reachable again after \d+ s/);
  // The retry policies without an attempt limit (workflows/activities.ts), on the path of a loop whose
  // review and record writes outlasted the outage.
  recordHistory(loops[2].workflowId, 'database-outage-in-review-then-pass');

  // Each maker ran once, each loop has one iteration, and nothing was recorded twice.
  expect([makerRuns(heldMakerState), makerRuns(inVerify.stateDir), makerRuns(inReview.stateDir)]).toEqual([
    [1],
    [1],
    [1],
  ]);
  for (const loop of loops) {
    expect(loop.iterations).toHaveLength(1);
    const gates = loop.iterations[0].evidence.map((e: { gate: string }) => e.gate);
    expect(new Set(gates).size).toBe(gates.length);
    const makers = await h.db.prisma.executionRecord.findMany({ where: { loopId: loop.id, role: 'maker' } });
    expect(makers.map((m) => m.outcome)).toHaveLength(1);
  }
  expect(loops[1].iterations[0].evidence.filter((e: { gate: string }) => e.gate === 'lint')).toHaveLength(1);
  // One question per review: the held one was answered once, and never asked again.
  expect(h.llm.requests).toHaveLength(3);
}, 420_000);

async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 180_000,
  describe: () => Promise<string> = async () => '',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}: ${await describe()}\nworker output:\n${h.worker.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
