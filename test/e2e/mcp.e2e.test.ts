import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { buildApp } from '../../api/app';
import { CLI, requireBuiltCli } from '../support/cli-process';
import { blockerLedger, cleanLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, createFixtureRepo, scriptedMaker } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// The MCP server as MCP clients use it, with the SDK's own client against the real service (API,
// Temporal dev server, PostgreSQL, worker process, scripted maker, fake reviewer LLM): over stdio by
// starting `engineering-loop mcp` (the built CLI), and over streamable HTTP at the API's POST /mcp.

const STACK_TRACE = /\n\s+at .+:\d+:\d+/;

let h: LoopHarness;
let home: string;
const clients: Client[] = [];
beforeAll(async () => {
  requireBuiltCli();
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-home-'));
  h = await startLoopHarness();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await h?.close();
  fs.rmSync(home, { recursive: true, force: true });
});

async function httpClient(key: string | null): Promise<Client> {
  const client = new Client({ name: 'e2e-http', version: '1' });
  const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(`${h.baseUrl}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}
const text = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** wait_for_loop until `done` holds for its answer, as an agent would call it (again on timed_out). */
async function waitUntil(
  client: Client,
  loopId: string,
  done: (answer: any) => boolean,
  progress: string[] = [],
  timeoutSeconds = 30,
): Promise<any> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const result = (await client.callTool({ name: 'wait_for_loop', arguments: { loopId, timeoutSeconds } }, undefined, {
      timeout: (timeoutSeconds + 30) * 1000,
      onprogress: (p) => progress.push(p.message ?? ''),
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    if (done(result.structuredContent)) return result;
  }
  throw new Error(`loop ${loopId} never got there; progress: ${progress.join('\n')}`);
}

test('over stdio: submit_loop → wait_for_loop to PASSED → get_report and get_patch; the key’s role still applies', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: cleanLedger });
  const client = new Client({ name: 'e2e-stdio', version: '1' });
  const stderr: string[] = [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'xdg'),
      ENGINEERING_LOOP_URL: h.baseUrl,
      ENGINEERING_LOOP_API_KEY: h.keys.submitter,
    },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  await client.connect(transport);
  clients.push(client);
  expect(client.getServerVersion()).toEqual({ name: 'engineering-loop', version: '0.1.0' });

  const submitted = await call(client, 'submit_loop', {
    task: loopRequest(repo, maker.argv),
    idempotencyKey: 'mcp-stdio-1',
  });
  expect(submitted.isError).toBeFalsy();
  const loopId = (submitted.structuredContent as any).id as string;
  expect(submitted.structuredContent).toMatchObject({ status: 'QUEUED', created: true });

  const progress: string[] = [];
  const waited = await waitUntil(client, loopId, (a) => a.outcome !== 'timed_out', progress);
  expect(waited.structuredContent).toMatchObject({
    outcome: 'ended',
    loop: { id: loopId, status: 'PASSED', lastVerdict: 'PASS', failureReason: null },
    openEscalation: null,
  });
  expect(text(waited)).toContain(`loop ${loopId} PASSED (phase DONE, iteration 1/3, last verdict PASS) has ended.`);
  // Progress notifications carried the states it went through.
  expect(progress[0]).toMatch(new RegExp(`^loop ${loopId} (QUEUED|RUNNING) \\(phase [A-Z_]+, iteration \\d/3\\)$`));

  const report = await call(client, 'get_report', { loopId });
  expect(report.structuredContent).toMatchObject({ kind: 'FINAL', markdown: expect.any(String) });
  expect(text(report)).toBe((report.structuredContent as any).markdown);
  const patch = await call(client, 'get_patch', { loopId });
  expect((patch.structuredContent as any).patch).toMatch(/^From [0-9a-f]{40} /);
  expect(text(patch)).toContain('+exports.sum = (a, b) => a + b;');

  const shown = await call(client, 'get_loop', { loopId });
  expect(text(shown)).toMatch(/#1: tests:base FAILED, tests PASSED.*; findings none; PASS/);
  // The submitter's key may not decide: the REST API's own 403, as a tool error.
  const forbidden = await call(client, 'decide_escalation', {
    loopId,
    decision: { kind: 'approve', escalationId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' },
  });
  expect(forbidden.isError).toBe(true);
  expect(text(forbidden)).toMatch(
    /^API key "test-submitter" has role submitter; this request needs role approver \(or admin\) \(HTTP 403 Forbidden, request [\w-]+\)$/,
  );
  expect(stderr.join('')).toBe('');
}, 400_000);

test('over streamable HTTP: a key is required; list_escalations and decide_escalation as approver; cancel_loop', async () => {
  await expect(httpClient(null)).rejects.toThrow(/401.*missing API key/s);
  await expect(httpClient('elk_not_a_real_key')).rejects.toThrow(/401.*invalid API key/s);
  const stateless = await fetch(`${h.baseUrl}/mcp`, { headers: { authorization: `Bearer ${h.keys.submitter}` } });
  expect([stateless.status, stateless.headers.get('allow')]).toEqual([405, 'POST']);
  // JSON-RPC, not a REST route: not in the OpenAPI document.
  expect(Object.keys((await h.request('GET', '/docs/json')).body.paths)).not.toContain('/mcp');

  const submitter = await httpClient(h.keys.submitter);
  const approver = await httpClient(h.keys.approver);

  // A loop the reviewer blocks, with one iteration allowed: it escalates.
  h.llm.enqueue({ content: blockerLedger() });
  const escalating = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  const submitted = await call(submitter, 'submit_loop', {
    task: loopRequest(createFixtureRepo(), escalating.argv, { maxIterations: 1 }),
  });
  const loopId = (submitted.structuredContent as any).id as string;
  const waiting = await waitUntil(submitter, loopId, (a) => a.outcome !== 'timed_out');
  expect(waiting.structuredContent).toMatchObject({
    outcome: 'awaiting_decision',
    loop: { status: 'AWAITING_DECISION' },
    openEscalation: { sequence: 1 },
  });
  const escalationId = waiting.structuredContent.openEscalation.id as string;

  const listed = await call(approver, 'list_escalations', {});
  expect((listed.structuredContent as any).escalations).toEqual([
    expect.objectContaining({
      id: escalationId,
      loopId,
      report: expect.objectContaining({ markdown: expect.any(String) }),
    }),
  ]);
  expect(text(listed)).toContain(`escalation #1 `);
  expect(text(listed)).toContain(`on loop ${loopId}`);

  const decision = { kind: 'approve', escalationId, comment: 'the precision finding is out of scope' };
  const refused = await call(submitter, 'decide_escalation', { loopId, decision });
  expect([refused.isError, text(refused)]).toEqual([
    true,
    expect.stringMatching(/^API key "test-submitter" has role submitter; this request needs role approver/),
  ]);
  const decided = await call(approver, 'decide_escalation', { loopId, decision });
  expect(decided.structuredContent).toEqual({
    loopId,
    status: 'DECISION_ACCEPTED',
    message: 'approve accepted for escalation 1',
  });
  const approved = await waitUntil(
    approver,
    loopId,
    (a) => a.outcome !== 'timed_out' && a.outcome !== 'awaiting_decision',
  );
  expect(approved.structuredContent).toMatchObject({ outcome: 'ended', loop: { status: 'APPROVED' } });
  const stale = await call(approver, 'decide_escalation', { loopId, decision });
  expect([stale.isError, text(stale)]).toEqual([
    true,
    expect.stringMatching(
      new RegExp(`^loop ${loopId} has ended \\(APPROVED\\); there is nothing to decide \\(HTTP 409 Conflict`),
    ),
  ]);
  expect(text(stale)).not.toMatch(STACK_TRACE);

  // A maker that hangs: waits time out while it runs (with progress over the event stream).
  const hanging = scriptedMaker({ steps: {}, hangOnce: [1] });
  const started = await call(submitter, 'submit_loop', { task: loopRequest(createFixtureRepo(), hanging.argv) });
  const hangingId = (started.structuredContent as any).id as string;
  const progress: string[] = [];
  const inMaker = await waitUntil(submitter, hangingId, (a) => a.loop.phase === 'MAKER', progress, 2);
  expect(inMaker.structuredContent).toMatchObject({ outcome: 'timed_out', loop: { status: 'RUNNING' } });
  expect(progress).toContain(`loop ${hangingId} RUNNING (phase MAKER, iteration 1/3)`);

  // An API process that stops while a wait is open ends the wait at once, and stops.
  const stopping = await buildApp({
    prisma: h.db.prisma,
    temporal: h.temporal,
    taskQueue: h.taskQueue,
    logLevel: 'warn',
  });
  const stoppingUrl = await stopping.listen({ host: '127.0.0.1', port: 0 });
  const early = new Client({ name: 'e2e-http', version: '1' });
  await early.connect(
    new StreamableHTTPClientTransport(new URL(`${stoppingUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${h.keys.submitter}` } },
    }),
  );
  let onWaitStarted: () => void = () => undefined;
  const waitStarted = new Promise<void>((resolve) => (onWaitStarted = resolve));
  const longWait = early.callTool(
    { name: 'wait_for_loop', arguments: { loopId: hangingId, timeoutSeconds: 300 } },
    undefined,
    {
      timeout: 330_000,
      onprogress: () => onWaitStarted(),
    },
  );
  await waitStarted;
  await stopping.close();
  expect(((await longWait) as CallToolResult).structuredContent).toMatchObject({
    outcome: 'interrupted',
    loop: { id: hangingId, status: 'RUNNING' },
  });
  await early.close();

  // pause_loop: the maker runs on, the loop would hold before its next one; resume_loop lifts it.
  const paused = await call(submitter, 'pause_loop', { loopId: hangingId, reason: 'a look first' });
  expect(paused.structuredContent).toMatchObject({ loopId: hangingId, paused: true, holding: false });
  const resumed = await call(submitter, 'resume_loop', { loopId: hangingId });
  expect(resumed.structuredContent).toMatchObject({ loopId: hangingId, paused: false });

  // cancel_loop stops the maker.
  const cancelled = await call(submitter, 'cancel_loop', { loopId: hangingId });
  expect(cancelled.structuredContent).toMatchObject({ loopId: hangingId, status: 'CANCELLING' });
  const ended = await waitUntil(submitter, hangingId, (a) => a.outcome === 'ended');
  expect(ended.structuredContent).toMatchObject({ loop: { status: 'CANCELLED' } });
}, 400_000);
