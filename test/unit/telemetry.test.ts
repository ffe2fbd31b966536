import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { IllegalStateError } from '@temporalio/common';
import { TRACE_HEADER as OTEL_TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { buildApp } from '../../api/app';
import { DEFAULT_API_POLICY } from '../../api/deps';
import type { PrismaClient } from '../../prisma/client';
import { loadConfig } from '../../config/service-config';
import { createLoopStateRegistry, type LoopStateQueries } from '../../telemetry/loop-state-metrics';
import { gateLabel, labelValue, observeExecution, observeGate } from '../../telemetry/loop-metrics';
import { metricsAuthorized } from '../../telemetry/metrics-access';
import { enableProcessMetrics, processRegistry } from '../../telemetry/registry';
import { TEMPORAL_SDK_METRICS } from '../../telemetry/temporal-sdk-metrics';
import { TRACE_HEADER } from '../../telemetry/workflow-interceptors';
import { WORKFLOW_INTERCEPTOR_MODULES } from '../../service/workflow-bundle';

// The metric definitions, the loop-state gauges' failure handling, the /metrics route, the telemetry
// configuration, and the Grafana dashboard checked against what the service exports.

const TOKEN = 'metrics-token-0123456789';

function fakeQueries(
  overrides: Partial<LoopStateQueries> = {},
): LoopStateQueries & { calls: { loops: number; escalations: number } } {
  const calls = { loops: 0, escalations: 0 };
  return {
    calls,
    loopsByStatusAndPhase: async () => {
      calls.loops += 1;
      return [
        { status: 'PASSED', phase: 'DONE', count: 3 },
        { status: 'RUNNING', phase: 'VERIFY', count: 1 },
      ];
    },
    openEscalations: async () => {
      calls.escalations += 1;
      return { count: 2, oldestOpenedAt: new Date(1_000_000) };
    },
    ...overrides,
  };
}

/** `name{labels} value` lines of an exposition, as [series, value]. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

describe('loop-state gauges', () => {
  it('report loops by status and phase and the open escalations, one query each per scrape', async () => {
    const queries = fakeQueries();
    const registry = createLoopStateRegistry(queries, { now: () => 1_000_000 + 90_000 });
    const found = samples(await registry.metrics());
    expect(found.get('engineering_loop_loops{status="PASSED",phase="DONE"}')).toBe(3);
    expect(found.get('engineering_loop_loops{status="RUNNING",phase="VERIFY"}')).toBe(1);
    expect(found.get('engineering_loop_escalations_open')).toBe(2);
    expect(found.get('engineering_loop_escalation_oldest_open_age_seconds')).toBe(90);
    // Two gauges share the escalations query.
    expect(queries.calls).toEqual({ loops: 1, escalations: 1 });
  });

  it('answer without their series when the database is slow, counting the failure, and send a hung database no more queries', async () => {
    let release: () => void = () => undefined;
    const hung = new Promise<void>((resolve) => (release = resolve));
    const queries = fakeQueries({
      loopsByStatusAndPhase: async () => {
        queries.calls.loops += 1;
        await hung;
        return [];
      },
    });
    const registry = createLoopStateRegistry(queries, { timeoutMs: 50 });
    const started = Date.now();
    const first = samples(await registry.metrics());
    expect(Date.now() - started).toBeLessThan(2000);
    expect([...first.keys()].some((k) => k.startsWith('engineering_loop_loops{'))).toBe(false);
    expect(first.get('engineering_loop_escalations_open')).toBe(2);
    expect(first.get('engineering_loop_state_query_failures_total{query="loops"}')).toBe(1);

    const second = samples(await registry.metrics());
    expect(second.get('engineering_loop_state_query_failures_total{query="loops"}')).toBe(2);
    // The second scrape waited for the first query instead of starting another.
    expect(queries.calls.loops).toBe(1);
    release();
  });

  it('answer NaN, not zero, when a query fails', async () => {
    const registry = createLoopStateRegistry(
      fakeQueries({ openEscalations: () => Promise.reject(new Error('connection refused')) }),
    );
    const found = samples(await registry.metrics());
    expect(found.get('engineering_loop_escalations_open')).toBeNaN();
    expect(found.get('engineering_loop_escalation_oldest_open_age_seconds')).toBeNaN();
    expect(found.get('engineering_loop_state_query_failures_total{query="escalations"}')).toBe(1);
    expect(found.get('engineering_loop_loops{status="PASSED",phase="DONE"}')).toBe(3);
  });
});

describe('loop metrics', () => {
  it('keep gate labels to a small set', () => {
    expect(
      ['tests', 'tests:frozen', 'tests:differential', 'acceptance:AC-12', 'setup:3', 'lint'].map(gateLabel),
    ).toEqual(['tests', 'tests:frozen', 'tests:differential', 'acceptance', 'setup', 'lint']);
    expect(labelValue(null)).toBe('unknown');
    expect(labelValue('m'.repeat(500))).toHaveLength(80);
  });

  it('count tokens and cost from execution records, and gate durations from evidence times', async () => {
    observeExecution({
      role: 'reviewer',
      kind: 'MODEL_CALL',
      provider: 'openai-compatible',
      model: 'gpt-x',
      promptTokens: 120,
      completionTokens: 30,
      costUsd: 0.5,
      outcome: 'VALID_LEDGER',
    });
    observeExecution({
      role: 'maker',
      kind: 'AGENT_PROCESS',
      provider: 'command',
      model: null,
      promptTokens: null,
      completionTokens: null,
      costUsd: null,
      outcome: 'EXIT_0',
    });
    observeGate('acceptance:AC-1', 'PASSED', new Date(0), new Date(2500));
    const found = samples(await processRegistry.metrics());
    expect(
      found.get(
        'engineering_loop_model_tokens_total{role="reviewer",provider="openai-compatible",model="gpt-x",type="prompt"}',
      ),
    ).toBe(120);
    expect(
      found.get(
        'engineering_loop_model_tokens_total{role="reviewer",provider="openai-compatible",model="gpt-x",type="completion"}',
      ),
    ).toBe(30);
    expect(
      found.get('engineering_loop_model_cost_usd_total{role="reviewer",provider="openai-compatible",model="gpt-x"}'),
    ).toBe(0.5);
    expect(found.get('engineering_loop_executions_total{role="maker",kind="AGENT_PROCESS",outcome="EXIT_0"}')).toBe(1);
    expect([...found.keys()].some((k) => k.startsWith('engineering_loop_model_tokens_total{role="maker"'))).toBe(false);
    expect(found.get('engineering_loop_gate_duration_seconds_sum{gate="acceptance",status="PASSED"}')).toBe(2.5);
  });
});

describe('GET /metrics', () => {
  const prisma = {
    loop: { groupBy: async () => [{ status: 'PASSED', phase: 'DONE', _count: { _all: 4 } }] },
    escalation: { aggregate: async () => ({ _count: { _all: 0 }, _min: { createdAt: null } }) },
  } as unknown as PrismaClient;

  /** The app listening on a free port (light-my-request's inject needs ESM jest does not load). */
  async function serve(policy?: typeof DEFAULT_API_POLICY) {
    const app = await buildApp({ prisma, temporal: {} as Client, taskQueue: 'q', logLevel: 'silent', policy });
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const get = async (url: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${base}${url}`, { headers });
      return { statusCode: res.status, contentType: res.headers.get('content-type') ?? '', body: await res.text() };
    };
    return { app, get };
  }

  it('is public without METRICS_TOKEN and shows process, HTTP and loop-state metrics', async () => {
    const { app, get } = await serve();
    try {
      // Answered by auth before any route: still observed.
      expect((await get('/no-such-route')).statusCode).toBe(401);
      const res = await get('/metrics');
      expect(res.statusCode).toBe(200);
      expect(res.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
      const found = samples(res.body);
      expect(found.get('engineering_loop_loops{status="PASSED",phase="DONE"}')).toBe(4);
      expect(found.get('engineering_loop_escalations_open')).toBe(0);
      expect(found.get('engineering_loop_escalation_oldest_open_age_seconds')).toBe(0);
      // Route patterns, never raw URLs.
      expect(
        found.get(
          'engineering_loop_http_request_duration_seconds_count{method="GET",route="unmatched",status_code="401"}',
        ),
      ).toBe(1);
      const again = samples((await get('/metrics')).body);
      expect(
        again.get(
          'engineering_loop_http_request_duration_seconds_count{method="GET",route="/metrics",status_code="200"}',
        ),
      ).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('needs the bearer token when METRICS_TOKEN is set', async () => {
    const { app, get } = await serve({ ...DEFAULT_API_POLICY, metricsToken: TOKEN });
    try {
      const without = await get('/metrics');
      expect(without.statusCode).toBe(401);
      expect(JSON.parse(without.body)).toMatchObject({
        statusCode: 401,
        message: expect.stringContaining('METRICS_TOKEN'),
      });
      expect((await get('/metrics', { authorization: 'Bearer wrong-token-0123456789' })).statusCode).toBe(401);
      expect((await get('/metrics', { authorization: `Bearer ${TOKEN}` })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('compares tokens exactly', () => {
    expect(metricsAuthorized(undefined, null)).toBe(true);
    expect(metricsAuthorized(undefined, TOKEN)).toBe(false);
    expect(metricsAuthorized(`bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(metricsAuthorized(`Bearer ${TOKEN}x`, TOKEN)).toBe(false);
    expect(metricsAuthorized(TOKEN, TOKEN)).toBe(false);
  });
});

describe('telemetry configuration', () => {
  it('is off by default, and empty values count as unset', () => {
    expect(loadConfig({}).telemetry).toEqual({
      metricsToken: null,
      workerMetrics: null,
      temporalSdkMetricsAddress: null,
      tracesUrl: null,
      serviceName: null,
    });
    expect(
      loadConfig({
        METRICS_TOKEN: '',
        WORKER_METRICS_PORT: '',
        TEMPORAL_SDK_METRICS_ADDRESS: '',
        OTEL_EXPORTER_OTLP_ENDPOINT: '',
      }).telemetry.tracesUrl,
    ).toBeNull();
  });

  it('reads the standard OpenTelemetry names and the metrics endpoints', () => {
    const t = loadConfig({
      METRICS_TOKEN: TOKEN,
      WORKER_METRICS_PORT: '9100',
      WORKER_METRICS_HOST: '0.0.0.0',
      TEMPORAL_SDK_METRICS_ADDRESS: '0.0.0.0:9464',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_SERVICE_NAME: 'loops',
    }).telemetry;
    expect(t).toEqual({
      metricsToken: TOKEN,
      workerMetrics: { host: '0.0.0.0', port: 9100 },
      temporalSdkMetricsAddress: '0.0.0.0:9464',
      tracesUrl: 'http://collector:4318/v1/traces',
      serviceName: 'loops',
    });
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/traces',
      }).telemetry.tracesUrl,
    ).toBe('http://b:4318/traces');
  });

  it('refuses what it cannot use', () => {
    expect(() => loadConfig({ TEMPORAL_SDK_METRICS_ADDRESS: '9464' })).toThrow(
      /TEMPORAL_SDK_METRICS_ADDRESS: must be host:port/,
    );
    expect(() => loadConfig({ WORKER_METRICS_PORT: '70000' })).toThrow(/WORKER_METRICS_PORT/);
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });
});

describe('Temporal SDK metrics', () => {
  /** temporal-sdk-metrics.ts with a fresh module state and a stand-in for Runtime.install. */
  function isolated(install: (options: unknown) => void): typeof import('../../telemetry/temporal-sdk-metrics') {
    let loaded!: typeof import('../../telemetry/temporal-sdk-metrics');
    jest.isolateModules(() => {
      jest.doMock('@temporalio/worker', () => ({ Runtime: { install } }));
      loaded = jest.requireActual('../../telemetry/temporal-sdk-metrics');
    });
    return loaded;
  }

  afterEach(() => jest.dontMock('@temporalio/worker'));

  it('installs the runtime once per process, with the Prometheus exporter on the given address', () => {
    const install = jest.fn();
    const logs: string[] = [];
    const { installTemporalSdkMetrics } = isolated(install);
    expect(installTemporalSdkMetrics('127.0.0.1:9464', (l) => logs.push(l))).toBe(true);
    // A second worker in the same process (tests) does not install it again.
    expect(installTemporalSdkMetrics('127.0.0.1:9464', (l) => logs.push(l))).toBe(true);
    expect(installTemporalSdkMetrics('127.0.0.1:9465', (l) => logs.push(l))).toBe(false);
    expect(install).toHaveBeenCalledTimes(1);
    expect(install).toHaveBeenCalledWith({
      telemetryOptions: { metrics: { prometheus: { bindAddress: '127.0.0.1:9464' } } },
    });
    expect(logs).toEqual([
      'Temporal SDK metrics on http://127.0.0.1:9464/metrics',
      'Temporal SDK metrics are served on 127.0.0.1:9464 already; not on 127.0.0.1:9465',
    ]);
  });

  it('goes on without them when the process already has a runtime', () => {
    const logs: string[] = [];
    const { installTemporalSdkMetrics } = isolated(() => {
      throw new IllegalStateError(
        'Runtime singleton has already been instantiated. Did you start a Worker before calling `install`?',
      );
    });
    expect(installTemporalSdkMetrics('127.0.0.1:9464', (l) => logs.push(l))).toBe(false);
    expect(logs).toEqual([
      expect.stringContaining(
        'Temporal SDK metrics not served on 127.0.0.1:9464: Runtime singleton has already been instantiated',
      ),
    ]);
  });
});

describe('workflow tracing interceptors', () => {
  it('are bundled into every workflow and look for the header the OpenTelemetry client interceptor writes', () => {
    expect(WORKFLOW_INTERCEPTOR_MODULES).toEqual([require.resolve('../../telemetry/workflow-interceptors')]);
    expect(TRACE_HEADER).toBe(OTEL_TRACE_HEADER);
  });
});

describe('Grafana dashboard (docs/grafana/engineering-loop.json)', () => {
  const dashboard = JSON.parse(
    fs.readFileSync(path.resolve(__dirname, '../../docs/grafana/engineering-loop.json'), 'utf8'),
  ) as {
    uid: string;
    panels: Array<{ type: string; title: string; gridPos: unknown; targets?: Array<{ expr: string; refId: string }> }>;
  };
  const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

  /** Every series name the service can export: its registries, plus the Temporal SDK's (checked against the real exporter end to end). */
  async function exportedNames(): Promise<Set<string>> {
    enableProcessMetrics('api');
    const names = new Set<string>();
    for (const registry of [processRegistry, createLoopStateRegistry(fakeQueries())]) {
      for (const metric of await registry.getMetricsAsJSON()) {
        names.add(metric.name);
        if (String(metric.type) === 'histogram' || String(metric.type) === 'summary')
          for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`);
      }
    }
    for (const name of TEMPORAL_SDK_METRICS)
      for (const suffix of ['', '_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    return names;
  }

  /** Metric names a PromQL expression selects: identifiers that are not functions, keywords, labels or durations. */
  function metricNames(expr: string): string[] {
    const stripped = expr
      .replace(/"(?:[^"\\]|\\.)*"/g, '""')
      .replace(/\{[^}]*\}/g, ' ')
      .replace(/\[[^\]]*\]/g, ' ')
      .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
    const keywords = new Set([
      'by',
      'without',
      'on',
      'ignoring',
      'group_left',
      'group_right',
      'offset',
      'bool',
      'and',
      'or',
      'unless',
    ]);
    return [...stripped.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(\s*\()?/g)]
      .filter((m) => !m[2] && !keywords.has(m[1]!))
      .map((m) => m[1]!);
  }

  it('queries only metrics the service exports', async () => {
    const exported = await exportedNames();
    expect(queries.length).toBeGreaterThan(20);
    const unknown = queries.flatMap(({ panel, expr }) =>
      metricNames(expr)
        .filter((name) => !exported.has(name))
        .map((name) => `${panel}: ${name}`),
    );
    expect(unknown).toEqual([]);
    // The parser does find them.
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (le, gate) (rate(engineering_loop_gate_duration_seconds_bucket{gate="tests"}[5m])))',
      ),
    ).toEqual(['engineering_loop_gate_duration_seconds_bucket']);
  });

  it('covers loops, escalations, gates, activities, models, decisions, the API and the Temporal SDK', () => {
    const all = queries.map((q) => q.expr).join('\n');
    for (const needed of [
      'engineering_loop_loops',
      'engineering_loop_escalations_open',
      'engineering_loop_gate_duration_seconds_bucket',
      'engineering_loop_activity_duration_seconds_bucket',
      'engineering_loop_model_tokens_total',
      'engineering_loop_model_cost_usd_total',
      'engineering_loop_decision_latency_seconds_bucket',
      'engineering_loop_verdicts_total',
      'engineering_loop_http_request_duration_seconds_bucket',
      'temporal_workflow_task_schedule_to_start_latency_bucket',
      'temporal_activity_schedule_to_start_latency_bucket',
    ]) {
      expect(all).toContain(needed);
    }
    expect(dashboard.uid).toBe('engineering-loop');
    for (const p of dashboard.panels) expect(p.gridPos).toBeDefined();
  });
});
