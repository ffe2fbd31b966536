import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiClient } from '../../cli/api-client';
import { createMcpServer } from '../../mcp/server';
import { freePort } from '../support/free-port';

// The MCP tools' mapping onto the REST API: which route each tool calls, with what body, query and
// headers, and how the API's answers and errors come back. The SDK's own client talks to the server
// in memory; the REST API is a local HTTP server that records what it is sent and answers as the API would.

const KEY = 'elk_test-key';
const LOOP = '3f2c9a1e-8d4b-4c1a-9e7f-0a1b2c3d4e5f';
const ESCALATION = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}
interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * A local HTTP server standing in for the REST API: answers requests in order from `answers` (the last
 * one repeats) and records each.
 */
async function fakeApi(...answers: Answer[]) {
  const sent: Sent[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      sent.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers as Record<string, string>,
        body: body ? JSON.parse(body) : undefined,
      });
      const answer = answers[Math.min(sent.length - 1, answers.length - 1)]!;
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { sent, api: new ApiClient(`http://127.0.0.1:${port}`, KEY, 5000) };
}

const servers: http.Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

async function connect(api: ApiClient): Promise<Client> {
  const server = createMcpServer({ api, stopping: new AbortController().signal, pollIntervalMs: 5 });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'unit', version: '1' });
  await client.connect(clientSide);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>, onprogress?: () => void) =>
  (await client.callTool({ name, arguments: args }, undefined, { onprogress })) as CallToolResult;
const text = (result: CallToolResult) => result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

const summary = (over: Record<string, unknown> = {}) => ({
  id: LOOP,
  workflowId: `loop-${LOOP}`,
  status: 'QUEUED',
  phase: 'QUEUED',
  repository: { url: 'https://example.com/acme/widgets.git', baseRef: 'main' },
  iteration: 0,
  maxIterations: 3,
  lastVerdict: null,
  createdAt: '2026-12-01T10:00:00.000Z',
  updatedAt: '2026-12-01T10:00:00.000Z',
  finishedAt: null,
  ...over,
});
const detail = (over: Record<string, unknown> = {}) => ({
  ...summary(over),
  baseCommit: null,
  branch: null,
  failureReason: null,
  contractVersions: [],
  iterations: [],
  escalations: [],
  refusedDecisions: [],
  ...over,
});
const task = {
  repository: { url: 'https://example.com/acme/widgets.git' },
  contract: {
    objective: 'Make sum() add.',
    outcome: 'Callers get the sum.',
    acceptanceCriteria: [{ id: 'AC-1', statement: 'sum adds', verification: { type: 'gate', gate: 'tests' } }],
  },
  maker: { backend: 'command', argv: ['fix-it'] },
};
const apiError = (status: number, error: string, message: string) => ({
  status,
  body: { statusCode: status, error, message, requestId: 'req-7' },
});

test('lists the eleven tools, each with its input schema', async () => {
  const client = await connect((await fakeApi()).api);
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual([
    'cancel_loop',
    'decide_escalation',
    'get_diff',
    'get_loop',
    'get_patch',
    'get_report',
    'list_escalations',
    'pause_loop',
    'resume_loop',
    'submit_loop',
    'wait_for_loop',
  ]);
  const submit = tools.find((t) => t.name === 'submit_loop')!;
  expect(submit.inputSchema.required).toEqual(['task']);
  // The loop request's own schema, so a model sees every field it may set.
  expect(Object.keys((submit.inputSchema.properties as any).task.properties)).toEqual(
    expect.arrayContaining(['repository', 'contract', 'gates', 'maker', 'maxIterations', 'delivery']),
  );
  const decide = tools.find((t) => t.name === 'decide_escalation')!;
  expect((decide.inputSchema.properties as any).decision.oneOf.map((o: any) => o.properties.kind.const)).toEqual([
    'approve',
    'reject',
    'retry',
    'amend',
  ]);
  expect(tools.find((t) => t.name === 'get_loop')!.annotations?.readOnlyHint).toBe(true);
  expect(tools.find((t) => t.name === 'cancel_loop')!.annotations?.destructiveHint).toBe(true);
});

test('submit_loop: the task is the body of POST /v1/loops, the idempotency key its header, with the caller’s key', async () => {
  const note = `When the loop passes or is approved, delivery pushes the branch engineering-loop/${LOOP} into …`;
  const { api, sent } = await fakeApi(
    { status: 201, body: summary({ notes: [note] }) },
    { status: 200, body: summary({ status: 'RUNNING' }) },
  );
  const client = await connect(api);

  const created = await call(client, 'submit_loop', { task });
  expect(created.isError).toBeFalsy();
  expect(created.structuredContent).toEqual({ ...summary(), notes: [note], created: true });
  expect(text(created)).toContain(`Submitted loop ${LOOP} QUEUED`);
  expect(text(created)).toContain(`Note: ${note}`);
  expect(sent[0]).toMatchObject({ method: 'POST', path: '/v1/loops', headers: { authorization: `Bearer ${KEY}` } });
  expect(sent[0]!.headers).not.toHaveProperty('idempotency-key');
  // Sent as the schema reads it, defaults filled in: the API reads the same schema the same way.
  expect(sent[0]!.body).toMatchObject({
    ...task,
    repository: { ...task.repository, baseRef: 'main' },
    maxIterations: 3,
  });

  const again = await call(client, 'submit_loop', { task, idempotencyKey: ' task-1 ' });
  expect(sent[1]!.headers['idempotency-key']).toBe('task-1');
  // An API without notes answers none.
  expect(again.structuredContent).toMatchObject({ created: false, status: 'RUNNING', notes: [] });
  expect(text(again)).toContain('Already submitted with idempotency key "task-1"');
});

test('decide_escalation posts the decision as the body; a malformed decision is refused before any request', async () => {
  const accepted = { loopId: LOOP, status: 'DECISION_ACCEPTED', message: 'retry accepted for escalation 1' };
  const { api, sent } = await fakeApi({ status: 202, body: accepted });
  const client = await connect(api);

  const decision = { kind: 'retry', escalationId: ESCALATION, guidance: 'use BigInt', comment: 'try again' };
  const decided = await call(client, 'decide_escalation', { loopId: LOOP, decision });
  expect(decided.structuredContent).toEqual(accepted);
  expect(text(decided)).toBe(`retry accepted for escalation 1 (loop ${LOOP}). Follow it with wait_for_loop.`);
  expect(sent).toEqual([
    expect.objectContaining({ method: 'POST', path: `/v1/loops/${LOOP}/decisions`, body: decision }),
  ]);

  const noGuidance = await call(client, 'decide_escalation', {
    loopId: LOOP,
    decision: { kind: 'retry', escalationId: ESCALATION },
  });
  expect(noGuidance.isError).toBe(true);
  expect(text(noGuidance)).toMatch(/Input validation error: .*decision\.guidance/s);
  const notALoop = await call(client, 'get_loop', { loopId: 'loop-1' });
  expect(notALoop.isError).toBe(true);
  expect(text(notALoop)).toMatch(/Invalid UUID.* at loopId/);
  expect(sent).toHaveLength(1);
});

test('get_diff reads the change before delivery, its iteration and whether it was cut from the headers', async () => {
  const diff = 'diff --git a/src/sum.js b/src/sum.js\n+exports.sum = (a, b) => a + b;\n';
  const { api, sent } = await fakeApi({
    status: 200,
    body: diff,
    headers: { 'content-type': 'text/x-diff', 'x-iteration': '2', 'x-diff-truncated': 'false' },
  });
  const client = await connect(api);
  const read = await call(client, 'get_diff', { loopId: LOOP, iteration: 2 });
  expect(read.structuredContent).toEqual({ loopId: LOOP, iteration: 2, truncated: false, diff });
  expect(text(read)).toBe(diff);
  expect(sent.map((r) => [r.method, r.path])).toEqual([['GET', `/v1/loops/${LOOP}/diff?iteration=2`]]);
});

test('list_escalations, get_report, get_patch, cancel_loop and get_loop call their routes', async () => {
  const escalation = {
    id: ESCALATION,
    loopId: LOOP,
    workflowId: `loop-${LOOP}`,
    repository: { url: 'https://example.com/acme/widgets.git', baseRef: 'main' },
    objective: 'Make sum() add.',
    trigger: 'VALID_BLOCKER',
    sequence: 1,
    status: 'OPEN',
    createdAt: '2026-12-01T10:05:00.000Z',
    report: {
      id: 'r1',
      key: 'k',
      createdAt: '2026-12-01T10:05:00.000Z',
      markdown: '# Escalation',
      body: {
        coreBlocker: 'sum() loses precision',
        options: [
          { decision: 'approve', description: 'ship it' },
          { decision: 'retry', description: 'again' },
        ],
      },
    },
  };
  const passed = detail({
    status: 'PASSED',
    phase: 'DONE',
    iteration: 1,
    lastVerdict: 'PASS',
    branch: `engineering-loop/${LOOP}`,
    iterations: [
      {
        sequence: 1,
        roundIteration: 1,
        verdict: { verdict: 'PASS', trigger: null },
        evidence: [{ id: 'e1', gate: 'tests', status: 'PASSED', command: ['npm', 'test'], exitCode: 0 }],
        findings: [{ findingId: 'F-1', title: 'nit', severity: 'LOW', validity: 'INVALID' }],
      },
    ],
    delivery: { pushedBranch: `engineering-loop/${LOOP}`, pullRequestUrl: null, deliveryError: null },
  });
  const report = { kind: 'FINAL', key: 'k', createdAt: '2026-12-01T11:00:00.000Z', body: { a: 1 }, markdown: '# Done' };
  const { api, sent } = await fakeApi(
    { status: 200, body: { escalations: [escalation] } },
    { status: 200, body: { escalations: [] } },
    { status: 200, body: report },
    { status: 200, body: 'From abc\n+exports.sum = (a, b) => a + b;\n', headers: { 'content-type': 'text/x-patch' } },
    { status: 200, body: passed },
    { status: 202, body: { loopId: LOOP, status: 'CANCELLING', message: 'cancellation requested' } },
  );
  const client = await connect(api);

  const listed = await call(client, 'list_escalations', { limit: 5 });
  expect(listed.structuredContent).toEqual({ escalations: [escalation] });
  expect(text(listed)).toContain(`escalation #1 VALID_BLOCKER (id ${ESCALATION}) on loop ${LOOP}`);
  expect(text(listed)).toContain('core blocker: sum() loses precision');
  expect(text(listed)).toContain('options: approve, retry');
  expect(text(await call(client, 'list_escalations', {}))).toBe('No escalation is waiting for a decision.');
  const read = await call(client, 'get_report', { loopId: LOOP });
  expect([read.structuredContent, text(read)]).toEqual([report, '# Done']);
  const patch = await call(client, 'get_patch', { loopId: LOOP });
  expect(patch.structuredContent).toEqual({ loopId: LOOP, patch: 'From abc\n+exports.sum = (a, b) => a + b;\n' });
  const shown = await call(client, 'get_loop', { loopId: LOOP });
  expect(shown.structuredContent).toEqual(passed);
  expect(text(shown)).toBe(
    [
      `loop ${LOOP} PASSED (phase DONE, iteration 1/3, last verdict PASS)`,
      'repository https://example.com/acme/widgets.git (main)',
      `branch engineering-loop/${LOOP}`,
      '#1: tests PASSED; findings 1 invalid; PASS',
      `delivered: pushed engineering-loop/${LOOP}`,
    ].join('\n'),
  );
  const cancelled = await call(client, 'cancel_loop', { loopId: LOOP });
  expect(cancelled.structuredContent).toMatchObject({ status: 'CANCELLING' });

  expect(sent.map((s) => `${s.method} ${s.path}${s.body === undefined ? '' : ' with a body'}`)).toEqual([
    'GET /v1/escalations?limit=5',
    'GET /v1/escalations',
    `GET /v1/loops/${LOOP}/report`,
    `GET /v1/loops/${LOOP}/patch`,
    `GET /v1/loops/${LOOP}`,
    `POST /v1/loops/${LOOP}/cancel`,
  ]);
});

test("an API error is a tool error with the API's message and fields; an unreachable API says so; no stack trace", async () => {
  const { api } = await fakeApi(
    apiError(
      400,
      'Bad Request',
      'body.repository.url: local paths are not allowed; body.delivery.pullRequest: a pull request needs push',
    ),
    apiError(403, 'Forbidden', 'API key "bob" has role submitter; this request needs role approver (or admin)'),
    apiError(404, 'Not Found', `loop ${LOOP} was not found`),
  );
  const client = await connect(api);

  const refused = await call(client, 'submit_loop', { task });
  expect(refused).toEqual({
    isError: true,
    content: [
      {
        type: 'text',
        text: [
          'the API refused the request (HTTP 400 Bad Request, request req-7):',
          '  - body.repository.url: local paths are not allowed',
          '  - body.delivery.pullRequest: a pull request needs push',
        ].join('\n'),
      },
    ],
  });
  const forbidden = await call(client, 'decide_escalation', {
    loopId: LOOP,
    decision: { kind: 'approve', escalationId: ESCALATION },
  });
  expect(text(forbidden)).toBe(
    'API key "bob" has role submitter; this request needs role approver (or admin) (HTTP 403 Forbidden, request req-7)',
  );
  expect(text(await call(client, 'get_report', { loopId: LOOP }))).toBe(
    `loop ${LOOP} was not found (HTTP 404 Not Found, request req-7)`,
  );
  const closedPort = await freePort();
  const nowhere = await connect(new ApiClient(`http://127.0.0.1:${closedPort}`, KEY, 5000));
  const unreachable = await call(nowhere, 'get_loop', { loopId: LOOP });
  expect(unreachable.isError).toBe(true);
  expect(text(unreachable)).toMatch(
    new RegExp(`^cannot reach the API at http://127\\.0\\.0\\.1:${closedPort} \\(connection refused\\)\nhint: `),
  );
  expect(text(unreachable)).not.toMatch(/\n\s+at /);
});

test('wait_for_loop reads until a decision is needed, with progress as the state changes', async () => {
  const escalation = { id: ESCALATION, sequence: 1, trigger: 'VALID_BLOCKER', status: 'OPEN' };
  const { api, sent } = await fakeApi(
    { status: 200, body: detail({ status: 'RUNNING', phase: 'MAKER', iteration: 1 }) },
    { status: 200, body: detail({ status: 'RUNNING', phase: 'MAKER', iteration: 1 }) },
    // A restarting service: asked again.
    apiError(503, 'Service Unavailable', 'Temporal is unreachable'),
    { status: 200, body: detail({ status: 'RUNNING', phase: 'VERIFY', iteration: 1 }) },
    {
      status: 200,
      body: detail({
        status: 'AWAITING_DECISION',
        phase: 'AWAITING_DECISION',
        iteration: 1,
        escalations: [escalation],
      }),
    },
  );
  const client = await connect(api);
  const progress: string[] = [];
  const result = await client.callTool({ name: 'wait_for_loop', arguments: { loopId: LOOP } }, undefined, {
    onprogress: (p) => progress.push(p.message ?? ''),
  });
  expect(result.structuredContent).toMatchObject({
    outcome: 'awaiting_decision',
    loop: { id: LOOP, status: 'AWAITING_DECISION', failureReason: null },
    openEscalation: { id: ESCALATION, sequence: 1, trigger: 'VALID_BLOCKER' },
  });
  expect(text(result as CallToolResult)).toContain(`escalationId: "${ESCALATION}"`);
  expect(progress).toEqual([
    `loop ${LOOP} RUNNING (phase MAKER, iteration 1/3)`,
    `loop ${LOOP} RUNNING (phase VERIFY, iteration 1/3)`,
  ]);
  expect(sent.every((s) => s.method === 'GET' && s.path === `/v1/loops/${LOOP}`)).toBe(true);
  expect(sent).toHaveLength(5);
});

test('wait_for_loop ends at its timeout with the state so far; a loop that ended answers at once', async () => {
  const running = await fakeApi({ status: 200, body: detail({ status: 'RUNNING', phase: 'MAKER', iteration: 2 }) });
  const timedOut = await call(await connect(running.api), 'wait_for_loop', { loopId: LOOP, timeoutSeconds: 1 });
  expect(timedOut.structuredContent).toMatchObject({ outcome: 'timed_out', loop: { status: 'RUNNING' } });
  expect((timedOut.structuredContent as any).waitedSeconds).toBeGreaterThanOrEqual(1);
  expect(text(timedOut)).toMatch(/is still going after 1 s; call wait_for_loop again\.$/);
  expect(running.sent.length).toBeGreaterThan(1);

  const failed = await fakeApi({
    status: 200,
    body: detail({ status: 'FAILED', phase: 'DONE', failureReason: 'the maker timed out' }),
  });
  const ended = await call(await connect(failed.api), 'wait_for_loop', { loopId: LOOP });
  expect(ended.structuredContent).toMatchObject({
    outcome: 'ended',
    loop: { status: 'FAILED', failureReason: 'the maker timed out' },
    openEscalation: null,
  });
  expect(text(ended)).toContain('Failure: the maker timed out.');
  expect(failed.sent).toHaveLength(1);

  const gone = await fakeApi(apiError(404, 'Not Found', `loop ${LOOP} was not found`));
  const missing = await call(await connect(gone.api), 'wait_for_loop', { loopId: LOOP });
  expect([missing.isError, text(missing)]).toEqual([
    true,
    `loop ${LOOP} was not found (HTTP 404 Not Found, request req-7)`,
  ]);
});
