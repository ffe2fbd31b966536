import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { Worker } from '@temporalio/worker';
import { TEMPORAL_SDK_METRICS } from '../../telemetry/temporal-sdk-metrics';
import { activeTracing, startTracing, workflowTracingSinks } from '../../telemetry/tracing';
import {
  WORKFLOW_BUNDLE_OPTIONS,
  WORKFLOW_INTERCEPTOR_MODULES,
  WORKFLOW_PRELOAD_MODULES,
} from '../../service/workflow-bundle';
import { blockerLedger, cleanLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, createFixtureRepo, scriptedMaker } from '../support/fixture-repo';
import { freePort } from '../support/free-port';
import { recordHistory } from '../support/histories';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// Metrics and traces of a real loop: the API in this process (tracing to a local OTLP/HTTP receiver),
// the worker as its own process (dist/service/worker-main.js) with its metrics endpoint, the Temporal
// SDK's Prometheus exporter and the same receiver. One loop runs to PASS; then the scrapes and the
// spans must show it.

interface ReceivedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
}

/** A local OTLP/HTTP trace receiver (the exporter posts JSON to /v1/traces). */
async function startOtlpReceiver(): Promise<{
  endpoint: string;
  spans: ReceivedSpan[];
  posts: string[];
  close(): Promise<void>;
}> {
  const spans: ReceivedSpan[] = [];
  const posts: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const body = req.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(raw) : raw;
      posts.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      try {
        for (const rs of JSON.parse(body.toString('utf8')).resourceSpans ?? []) {
          const service =
            (rs.resource?.attributes ?? []).find((a: any) => a.key === 'service.name')?.value?.stringValue ?? '';
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? [])
              spans.push({
                service,
                name: s.name,
                traceId: hex(s.traceId),
                spanId: hex(s.spanId),
                parentSpanId: hex(s.parentSpanId),
              });
          }
        }
      } catch {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    posts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** OTLP JSON ids are hex; older exporters sent base64. */
function hex(id: string | undefined): string {
  if (!id) return '';
  return /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex');
}

/** Prometheus text → sample lines by series (`name{labels}`). */
function samples(text: string): Array<{ series: string; name: string; labels: string; value: number }> {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const i = line.lastIndexOf(' ');
      const series = line.slice(0, i);
      const brace = series.indexOf('{');
      return {
        series,
        name: brace < 0 ? series : series.slice(0, brace),
        labels: brace < 0 ? '' : series.slice(brace),
        value: Number(line.slice(i + 1)),
      };
    });
}

function total(text: string, name: string, ...labels: string[]): number {
  return samples(text)
    .filter((s) => s.name === name && labels.every((l) => s.labels.includes(l)))
    .reduce((sum, s) => sum + s.value, 0);
}

async function scrape(url: string): Promise<string> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return res.text();
}

async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

let h: LoopHarness;
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let workerMetricsUrl: string;
let sdkMetricsUrl: string;
let loop: any;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  // The API (this process) traces like api-main.ts does with OTEL_EXPORTER_OTLP_ENDPOINT set.
  startTracing({ serviceName: 'engineering-loop-api', url: `${otlp.endpoint}/v1/traces`, scheduledDelayMillis: 100 });
  const [workerMetricsPort, sdkMetricsPort] = await Promise.all([freePort(), freePort()]);
  workerMetricsUrl = `http://127.0.0.1:${workerMetricsPort}/metrics`;
  sdkMetricsUrl = `http://127.0.0.1:${sdkMetricsPort}/metrics`;
  h = await startLoopHarness({
    workerEnv: {
      WORKER_METRICS_PORT: String(workerMetricsPort),
      TEMPORAL_SDK_METRICS_ADDRESS: `127.0.0.1:${sdkMetricsPort}`,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
  });
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: cleanLedger });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv));
  expect(submitted.status).toBe(201);
  loop = await h.waitForLoop(submitted.body.id, ['PASSED', 'FAILED', 'AWAITING_DECISION']);
  expect(loop.status).toBe('PASSED');
});

afterAll(async () => {
  await h?.close();
  await activeTracing()?.shutdown();
  await otlp?.close();
});

test('the API serves loop state and its request latencies on GET /metrics', async () => {
  const text = await scrape(`${h.baseUrl}/metrics`);
  expect(total(text, 'engineering_loop_loops', 'status="PASSED"')).toBeGreaterThanOrEqual(1);
  expect(total(text, 'engineering_loop_escalations_open')).toBe(0);
  // By route pattern: the loop's id never becomes a label.
  expect(
    total(
      text,
      'engineering_loop_http_request_duration_seconds_count',
      'method="POST"',
      'route="/v1/loops"',
      'status_code="201"',
    ),
  ).toBe(1);
  expect(
    total(text, 'engineering_loop_http_request_duration_seconds_count', 'method="GET"', 'route="/v1/loops/:id"'),
  ).toBeGreaterThanOrEqual(1);
  expect(text).not.toContain(loop.id);
});

test('the worker process serves its own metrics on WORKER_METRICS_PORT: activities, gates, tokens, verdicts', async () => {
  const text = await scrape(workerMetricsUrl);
  expect(
    total(text, 'engineering_loop_activity_duration_seconds_count', 'activity="runMaker"', 'outcome="completed"'),
  ).toBeGreaterThanOrEqual(1);
  // The maker's activity verified its checkpoint too: the gates' own metrics come from it.
  expect(
    total(text, 'engineering_loop_gate_duration_seconds_count', 'gate="tests"', 'status="PASSED"'),
  ).toBeGreaterThanOrEqual(1);
  expect(total(text, 'engineering_loop_gate_duration_seconds_sum', 'gate="tests"')).toBeGreaterThan(0);
  // The fake reviewer reports usage (prompt 100 + n, completion 20); the model name is the configured one.
  expect(
    total(text, 'engineering_loop_model_tokens_total', 'role="reviewer"', 'model="scripted-reviewer"', 'type="prompt"'),
  ).toBeGreaterThan(100);
  expect(
    total(text, 'engineering_loop_model_tokens_total', 'role="reviewer"', 'type="completion"'),
  ).toBeGreaterThanOrEqual(20);
  expect(total(text, 'engineering_loop_verdicts_total', 'verdict="PASS"', 'trigger="none"')).toBe(1);
  expect(
    total(text, 'engineering_loop_executions_total', 'role="maker"', 'kind="AGENT_PROCESS"', 'outcome="EXIT_0"'),
  ).toBe(1);
  // Default process metrics, labelled with the component.
  expect(total(text, 'engineering_loop_process_cpu_user_seconds_total', 'component="worker"')).toBeGreaterThan(0);
  // Loop state is the API's to report (N workers would report it N times).
  expect(text).not.toContain('engineering_loop_loops{');
  expect((await fetch(workerMetricsUrl.replace('/metrics', '/other'))).status).toBe(404);
});

test('the Temporal SDK serves its runtime metrics on TEMPORAL_SDK_METRICS_ADDRESS', async () => {
  const text = await scrape(sdkMetricsUrl);
  const names = new Set(samples(text).map((s) => s.name.replace(/_(bucket|sum|count)$/, '')));
  for (const name of TEMPORAL_SDK_METRICS) expect({ name, served: names.has(name) }).toEqual({ name, served: true });
  // The labels the dashboard groups by.
  expect(text).toMatch(
    new RegExp(`temporal_workflow_task_schedule_to_start_latency_bucket\\{[^}]*task_queue="${h.taskQueue}"`),
  );
  expect(text).toMatch(
    new RegExp(`temporal_activity_schedule_to_start_latency_bucket\\{[^}]*task_queue="${h.taskQueue}"`),
  );
  expect(text).toMatch(/temporal_worker_task_slots_available\{[^}]*worker_type="ActivityWorker"/);
});

test('one trace goes from the API request through StartWorkflow and the workflow to its activities', async () => {
  const find = (predicate: (s: ReceivedSpan) => boolean) => otlp.spans.find(predicate);
  const request = await until('the POST /v1/loops span', () =>
    find((s) => s.service === 'engineering-loop-api' && s.name === 'POST /v1/loops'),
  );
  const inTrace = (name: string, service: string) =>
    until(
      `${name} from ${service} in trace ${request.traceId} (spans so far: ${otlp.spans.map((s) => `${s.service}/${s.name}`).join(', ')})`,
      () => find((s) => s.traceId === request.traceId && s.name === name && s.service === service),
    );
  const start = await inTrace('StartWorkflow:engineeringLoop', 'engineering-loop-api');
  expect(start.parentSpanId).toBe(request.spanId);
  const run = await inTrace('RunWorkflow:engineeringLoop', 'engineering-loop-worker');
  expect(run.parentSpanId).toBe(start.spanId);
  const scheduled = await inTrace('StartActivity:runMaker', 'engineering-loop-worker');
  const maker = await inTrace('RunActivity:runMaker', 'engineering-loop-worker');
  expect(maker.parentSpanId).toBe(scheduled.spanId);
  // The maker's activity verified and reviewed the change; the delivery's preparation delivered it, the
  // loop's last activity.
  await inTrace('RunActivity:prepareDelivery', 'engineering-loop-worker');
  expect(otlp.posts.every((p) => p.startsWith('POST /v1/traces application/json'))).toBe(true);
});

test("a traced loop's history replays with the bundled workflow interceptors", async () => {
  const history = await h.temporal.workflow.getHandle(loop.workflowId).fetchHistory();
  await expect(
    Worker.runReplayHistory(
      {
        workflowsPath: WORKFLOW_BUNDLE_OPTIONS.workflowsPath,
        interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
        bundlerOptions: { preloadModules: WORKFLOW_PRELOAD_MODULES },
        sinks: workflowTracingSinks(),
      },
      history,
      `replay-traced-${loop.id}`,
    ),
  ).resolves.toBeUndefined();
  recordHistory(loop.workflowId, 'traced-pass');
});

test('an escalation counts as open until a person decides it, and the decision latency is observed', async () => {
  const repo = createFixtureRepo();
  const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
  h.llm.enqueue({ content: blockerLedger() });
  const submitted = await h.request('POST', '/v1/loops', loopRequest(repo, maker.argv, { maxIterations: 1 }));
  const escalated = await h.waitForLoop(submitted.body.id, ['AWAITING_DECISION', 'PASSED', 'FAILED']);
  expect(escalated.status).toBe('AWAITING_DECISION');
  const waiting = await scrape(`${h.baseUrl}/metrics`);
  expect(total(waiting, 'engineering_loop_escalations_open')).toBe(1);
  expect(total(waiting, 'engineering_loop_escalation_oldest_open_age_seconds')).toBeGreaterThanOrEqual(0);
  expect(total(waiting, 'engineering_loop_loops', 'status="AWAITING_DECISION"')).toBe(1);

  const decision = { kind: 'approve', escalationId: escalated.escalations[0].id };
  expect(
    (
      await h.request('POST', `/v1/loops/${escalated.id}/decisions`, decision, {
        authorization: `Bearer ${h.keys.approver}`,
      })
    ).status,
  ).toBe(202);
  await h.waitForLoop(escalated.id, ['APPROVED']);
  const api = await scrape(`${h.baseUrl}/metrics`);
  expect(total(api, 'engineering_loop_escalations_open')).toBe(0);
  expect(total(api, 'engineering_loop_loops', 'status="APPROVED"')).toBe(1);
  expect(
    total(
      api,
      'engineering_loop_http_request_duration_seconds_count',
      'method="POST"',
      'route="/v1/loops/:id/decisions"',
      'status_code="202"',
    ),
  ).toBe(1);
  const worker = await scrape(workerMetricsUrl);
  expect(total(worker, 'engineering_loop_verdicts_total', 'verdict="ESCALATE"', 'trigger="MAX_ITERATIONS"')).toBe(1);
  expect(
    total(worker, 'engineering_loop_decision_latency_seconds_count', 'decision="approve"', 'trigger="MAX_ITERATIONS"'),
  ).toBe(1);
  expect(total(worker, 'engineering_loop_decision_latency_seconds_sum', 'decision="approve"')).toBeGreaterThan(0);
  // The reviewer's BLOCKER went to triage: its tokens count under its own role.
  expect(total(worker, 'engineering_loop_model_tokens_total', 'role="triage"')).toBeGreaterThan(0);

  // Traced with a decision (an update: its validator and handler are traced too), and it replays.
  const history = await h.temporal.workflow.getHandle(escalated.workflowId).fetchHistory();
  await expect(
    Worker.runReplayHistory(
      {
        workflowsPath: WORKFLOW_BUNDLE_OPTIONS.workflowsPath,
        interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
        bundlerOptions: { preloadModules: WORKFLOW_PRELOAD_MODULES },
        sinks: workflowTracingSinks(),
      },
      history,
      `replay-traced-${escalated.id}`,
    ),
  ).resolves.toBeUndefined();
  recordHistory(escalated.workflowId, 'traced-escalate-approve');
  await until('the HandleUpdate span of the decision', () =>
    otlp.spans.find((s) => s.name === 'HandleUpdate:decide' && s.service === 'engineering-loop-worker'),
  );
});
