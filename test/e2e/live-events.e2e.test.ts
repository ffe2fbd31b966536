import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app';
import { SseParser } from '../../cli/watch/sse-parser';
import { requireBuiltCli, runCliProcess, startCliProcess, type CliRun } from '../support/cli-process';
import { blockerLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, WRONG_SUM, createFixtureRepo, makerRuns, scriptedMaker } from '../support/fixture-repo';
import { freePort } from '../support/free-port';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// A loop's live events (GET /v1/loops/:id/events) and the CLI's `watch`, `report` and `cancel` on them,
// against the real API, worker process, Temporal dev server and PostgreSQL: the stream across a worker
// restart, a client cut off that resumes with Last-Event-ID, watch reconnecting across an API restart,
// and watch's exit codes.

let h: LoopHarness;
let home: string;
let env: Record<string, string>;
beforeAll(async () => {
  requireBuiltCli();
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-home-'));
  h = await startLoopHarness();
  env = { ENGINEERING_LOOP_URL: h.baseUrl, ENGINEERING_LOOP_API_KEY: h.keys.submitter };
});
afterAll(async () => {
  await h?.close();
  fs.rmSync(home, { recursive: true, force: true });
});

const cli = (args: string[], runEnv = env): Promise<CliRun> => runCliProcess(args, home, runEnv);

interface Received {
  id: string;
  event: string;
  data: any;
}

/** A client of the stream: what it received so far, in order; waitFor polls it. */
function openStream(loopId: string, lastEventId?: string) {
  const controller = new AbortController();
  const got: Received[] = [];
  const parser = new SseParser();
  const decoder = new TextDecoder();
  let ended = false;
  let failure: unknown = null;
  const pump = (async () => {
    const res = await fetch(`${h.baseUrl}/v1/loops/${loopId}/events`, {
      headers: {
        authorization: `Bearer ${h.keys.submitter}`,
        ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
      },
      signal: controller.signal,
    });
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
    for await (const chunk of res.body!) {
      for (const m of parser.push(decoder.decode(chunk, { stream: true })))
        got.push({ id: m.lastEventId, event: m.event, data: JSON.parse(m.data) });
    }
    ended = true;
  })().catch((error: unknown) => {
    if (!controller.signal.aborted) failure = error;
  });
  return {
    got,
    lastEventId: () => got.at(-1)?.id ?? '',
    async waitFor(what: string, done: (got: Received[]) => boolean): Promise<void> {
      const deadline = Date.now() + 180_000;
      while (!done(got)) {
        if (failure) throw failure;
        if (ended || Date.now() > deadline)
          throw new Error(`the stream ${ended ? 'ended' : 'timed out'} before ${what}: ${JSON.stringify(got)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close(): Promise<void> {
      controller.abort();
      await pump;
    },
  };
}

const timelineOf = (events: Received[]) => events.filter((e) => e.event === 'message').map((e) => e.data);
const phases = (events: Array<{ kind: string; at: string; title: string }>) =>
  events.filter((e) => e.kind === 'phase').map((e) => `${e.at} ${e.title}`);
/** The `phase X … iteration K/N` lines watch printed, as "X K". */
const printedPhases = (stdout: string) =>
  [...stdout.matchAll(/ phase (\w+) +iteration (\d+)\//g)].map(([, phase, round]) => `${phase} ${round}`);

async function timeline(id: string): Promise<Array<{ kind: string; at: string; title: string; detail: any }>> {
  const res = await h.request('GET', `/v1/loops/${id}/timeline`);
  expect(res.status).toBe(200);
  return res.body.events;
}

test('every phase, command, verdict and escalation, across a worker restart; a client cut off resumes with Last-Event-ID and misses nothing; watch exits 2, then 0; report', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({
    steps: { '1': { write: { 'src/sum.js': WRONG_SUM } }, '2': { write: { 'src/sum.js': CORRECT_SUM } } },
  });
  // Iteration 1 fails its gates (no review); iteration 2 passes them and the reviewer finds a BLOCKER.
  h.llm.enqueue({ content: blockerLedger() });
  const id = await h.submit(loopRequest(repo, maker.argv, { maxIterations: 2 }));
  const watching = startCliProcess(['watch', id], home, env);
  const first = openStream(id);
  await first.waitFor('the escalation', (got) =>
    timelineOf(got).some((e) => e.kind === 'phase' && e.detail.status === 'AWAITING_DECISION'),
  );

  // A client cut off here resumes later from the last id it got.
  const cutAt = first.got.length;
  const resumeAfter = first.lastEventId();

  // The worker dies and a new one takes over; the API's stream stays open.
  await h.worker.kill();
  await h.restartWorker();
  const waited = await watching.done;
  expect(waited).toMatchObject({ code: 2, stderr: '' });
  expect(waited.stdout).toContain(`loop ${id} is waiting for a human decision on escalation #1`);
  expect(waited.stdout).toMatch(/escalation #1 opened: \w+\n/);
  expect(waited.stdout).toMatch(/#1 gate tests {2}FAILED {2}\d+(ms|\.\ds) {2}exit 1; 0 passed, 2 failed/);
  expect(waited.stdout).toMatch(/#2 verdict ESCALATE \(\w+\)/);
  // Every phase up to the wait, each once, although a whole iteration takes about a second.
  const untilWait = (await timeline(id)).filter((e) => e.kind === 'phase');
  expect(printedPhases(waited.stdout)).toEqual(untilWait.map((e) => `${e.detail.phase} ${e.detail.roundIteration}`));
  expect(printedPhases(waited.stdout)).toEqual(
    expect.arrayContaining(['VERIFY 1', 'JUDGE 1', 'VERIFY 2', 'REVIEW 2', 'JUDGE 2']),
  );

  const escalationReport = await cli(['report', id, '--json']);
  expect(JSON.parse(escalationReport.stdout)).toMatchObject({ kind: 'ESCALATION', markdown: expect.any(String) });
  // The change the decision is about, before delivery: the latest iteration's, or the one named.
  const change = await cli(['diff', id]);
  expect([change.code, change.stderr]).toEqual([0, '']);
  expect(change.stdout).toMatch(/^diff --git a\//);
  const firstChange = JSON.parse((await cli(['diff', id, '--iteration', '1', '--json'])).stdout);
  expect(firstChange).toMatchObject({
    loopId: id,
    iteration: 1,
    truncated: false,
    diff: expect.stringMatching(/^diff --git/),
  });

  const escalationId = (await h.request('GET', `/v1/loops/${id}`)).body.escalations[0].id;
  const decided = await h.request(
    'POST',
    `/v1/loops/${id}/decisions`,
    { kind: 'approve', escalationId },
    { authorization: `Bearer ${h.keys.approver}` },
  );
  expect(decided.status).toBe(202);
  // What the new worker does comes on the stream opened before it started, to the end.
  await first.waitFor('the end', (got) => got.some((e) => e.event === 'end'));
  expect(first.got.at(-1)).toEqual({
    id: expect.any(String),
    event: 'end',
    data: { loopId: id, status: 'APPROVED', phase: 'DONE' },
  });
  const all = await timeline(id);
  expect(phases(timelineOf(first.got))).toEqual(phases(all));
  const kinds = new Set(timelineOf(first.got).map((e) => e.kind));
  expect([...kinds]).toEqual(
    expect.arrayContaining(['phase', 'contract', 'command', 'model_call', 'verdict', 'escalation', 'decision']),
  );
  const ids = first.got.filter((e) => e.id).map((e) => Number(e.id));
  expect(ids).toEqual([...ids].sort((a, b) => a - b));

  // The client cut off at the wait gets exactly what came after, then the end.
  const resumed = openStream(id, resumeAfter);
  await resumed.waitFor('the end', (got) => got.some((e) => e.event === 'end'));
  expect([...phases(timelineOf(first.got.slice(0, cutAt))), ...phases(timelineOf(resumed.got))]).toEqual(phases(all));
  expect(timelineOf(resumed.got).map((e) => e.kind)).toEqual(expect.arrayContaining(['decision', 'phase']));

  // watch on the ended loop prints its whole history (a poll would see only its end), and exits 0.
  const done = await cli(['watch', id]);
  expect(done).toMatchObject({ code: 0, stderr: '' });
  expect(done.stdout).toMatch(/escalation #1 decided: approve by ana/);
  expect(done.stdout).toContain(`loop ${id} ended APPROVED`);
  expect(printedPhases(done.stdout).map((p) => p.split(' ')[0])).toEqual(
    all.filter((e) => e.kind === 'phase').map((e) => e.detail.phase),
  );
  const json = (await cli(['watch', id, '--json'])).stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(json.at(-1)).toEqual({
    id: expect.any(String),
    event: 'end',
    data: { loopId: id, status: 'APPROVED', phase: 'DONE' },
  });
  // Of an ended loop, each record once, as it is now: the timeline.
  expect(json.filter((m) => m.event === 'message').map((m) => m.data)).toEqual(expect.arrayContaining(all));
  expect(json.filter((m) => m.event === 'message')).toHaveLength(all.length);

  const report = await cli(['report', id]);
  expect(report.code).toBe(0);
  expect(report.stdout).toMatch(/^# /);
  expect(JSON.parse((await cli(['report', id, '--json'])).stdout)).toMatchObject({ kind: 'FINAL' });

  // A resume point this service never gave, and a malformed one, are refused naming the header.
  for (const bad of ['99999999999999', 'abc']) {
    const res = await h.request('GET', `/v1/loops/${id}/events`, undefined, { 'last-event-id': bad });
    expect(res).toMatchObject({ status: 400, body: { message: expect.stringMatching(/^headers\.last-event-id: /) } });
  }
  expect((await h.request('GET', '/v1/loops/3f2c9a1e-8d4b-4c1a-9e7f-0a1b2c3d4e5f/events')).status).toBe(404);
  expect((await h.request('GET', `/v1/loops/${id}/events`, undefined, { authorization: '' })).status).toBe(401);
  const openapi = (await h.request('GET', '/docs/json')).body;
  expect(Object.keys(openapi.paths['/v1/loops/{id}/events'].get.responses['200'].content)).toEqual([
    'text/event-stream',
  ]);
}, 400_000);

test('watch reconnects across an API restart and exits 3 once the loop is cancelled; cancel; an unreachable API or a refused key exits 4', async () => {
  // An API of the test's own, on a port it can close and open again.
  const port = await freePort();
  const startApi = async () => {
    const app = await buildApp({ prisma: h.db.prisma, temporal: h.temporal, taskQueue: h.taskQueue, logLevel: 'warn' });
    await app.listen({ host: '127.0.0.1', port });
    return app;
  };
  let api: FastifyInstance | null = await startApi();
  const closeApi = async () => {
    await api?.close();
    api = null;
  };
  try {
    const maker = scriptedMaker({ steps: {}, hangOnce: [1] });
    const id = await h.submit(loopRequest(createFixtureRepo(), maker.argv));
    const watching = startCliProcess(['watch', id], home, { ...env, ENGINEERING_LOOP_URL: `http://127.0.0.1:${port}` });
    const until = async (what: string, done: () => boolean) => {
      const deadline = Date.now() + 120_000;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`no ${what}:\n${watching.stdout()}\n${watching.stderr()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    await until('maker', () => / phase MAKER /.test(watching.stdout()) && makerRuns(maker.stateDir).length === 1);

    // Closing ends the open stream; watch keeps trying while nothing listens, and carries on with the new API.
    await closeApi();
    await until('retry notice', () => /reconnecting in/.test(watching.stderr()));
    api = await startApi();

    const cancelled = await cli(['cancel', id]);
    expect(cancelled).toMatchObject({
      code: 0,
      stdout: `cancellation requested for loop ${id}; follow it: engineering-loop watch ${id}\n`,
    });
    const run = await watching.done;
    expect(run.code).toBe(3);
    expect(run.stdout).toContain(`loop ${id} ended CANCELLED`);
    expect(run.stdout).toMatch(/CANCELLED +phase DONE/);
    // Nothing printed twice after the reconnection, and the notices kept to stderr, each on its own line.
    expect(printedPhases(run.stdout).filter((p) => p.startsWith('MAKER'))).toEqual(['MAKER 1']);
    expect(run.stdout).not.toContain('warning');
    expect(run.stderr).toMatch(
      /^warning: (the API at .* ended the event stream|cannot reach the API .*); reconnecting in \d/m,
    );
    expect(
      run.stderr
        .split('\n')
        .filter(Boolean)
        .every((line) => line.startsWith('warning: ')),
    ).toBe(true);

    expect(await cli(['cancel', id])).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`loop ${id} has already ended (CANCELLED) (HTTP 409 Conflict`),
    });

    // Nobody listens at all: watch gives up after --timeout with 4; any command that cannot reach the API exits 4.
    await closeApi();
    const unreachable = { ...env, ENGINEERING_LOOP_URL: `http://127.0.0.1:${port}` };
    const gaveUp = await cli(['watch', id, '--timeout', '2s'], unreachable);
    expect(gaveUp).toMatchObject({ code: 4, stdout: '' });
    expect(gaveUp.stderr).toMatch(/^warning: cannot reach the API at .* \(connection refused\); trying again in /m);
    expect(gaveUp.stderr).toContain('(connection refused); gave up after 2.0s of trying (--timeout)\n');
    expect((await cli(['list'], unreachable)).code).toBe(4);
    // A key the API refuses: 401, or 403 for a role that may not cancel.
    expect((await cli(['watch', id], { ...env, ENGINEERING_LOOP_API_KEY: 'elk_not_a_real_key' })).code).toBe(4);
    expect(await cli(['cancel', id], { ...env, ENGINEERING_LOOP_API_KEY: h.keys.approver })).toMatchObject({
      code: 4,
      stderr: expect.stringContaining('this request needs role submitter (or admin)'),
    });
  } finally {
    await closeApi();
  }
}, 300_000);
