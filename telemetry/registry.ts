import { collectDefaultMetrics, Registry } from 'prom-client';

// The process's Prometheus registry. Every metric the service observes where it happens (activities,
// HTTP requests, the Node process) lives here, so a process that runs both the worker and the API
// (`npm start`) shows them all on one /metrics. The loop-state gauges computed from PostgreSQL are not
// here: each API instance has its own (loop-state-metrics.ts), so N workers never report them N times.

/** Every metric of this service starts with this. */
export const METRIC_PREFIX = 'engineering_loop_';

export const processRegistry = new Registry();

let processMetricsFor: string | null = null;

/**
 * prom-client's default process and Node.js metrics (CPU, memory, event loop lag, GC, handles), named
 * `engineering_loop_process_*` / `engineering_loop_nodejs_*` and labelled with the component this process
 * runs: `api` or `worker`. Once per process.
 */
export function enableProcessMetrics(component: 'api' | 'worker'): void {
  if (processMetricsFor !== null) return;
  processMetricsFor = component;
  collectDefaultMetrics({ register: processRegistry, prefix: METRIC_PREFIX, labels: { component } });
}

/** The exposition text of several registries (whose metric names do not overlap), one scrape. */
export async function exposition(registries: Registry[]): Promise<string> {
  const texts = await Promise.all(registries.map((r) => r.metrics()));
  return texts.filter((t) => t.trim() !== '').join('\n');
}

export const EXPOSITION_CONTENT_TYPE = processRegistry.contentType;
