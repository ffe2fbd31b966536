import { IllegalStateError } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';

// The Temporal SDK's own metrics (Rust core): workflow and activity task latencies, slots, polls,
// sticky cache. Served by the SDK's Prometheus exporter on TEMPORAL_SDK_METRICS_ADDRESS, separately from
// the service's /metrics. The runtime is configured once per process, before its first NativeConnection
// (service/worker.ts); a process that already has a runtime (a second worker in one test process)
// keeps it and says so.

/** Names (histograms without _bucket/_sum/_count) the dashboard reads; test/e2e/metrics.e2e.test.ts checks the exporter serves them. */
export const TEMPORAL_SDK_METRICS = [
  'temporal_workflow_task_schedule_to_start_latency',
  'temporal_workflow_task_execution_latency',
  'temporal_activity_schedule_to_start_latency',
  'temporal_activity_execution_latency',
  'temporal_worker_task_slots_available',
] as const;

let installedAt: string | null = null;

/** Installs the SDK runtime with its Prometheus exporter on `bindAddress` (host:port); false when this process's runtime exists already. */
export function installTemporalSdkMetrics(bindAddress: string, log: (line: string) => void): boolean {
  if (installedAt === bindAddress) return true;
  if (installedAt !== null) {
    log(`Temporal SDK metrics are served on ${installedAt} already; not on ${bindAddress}`);
    return false;
  }
  try {
    Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress } } } });
  } catch (err) {
    if (!(err instanceof IllegalStateError)) throw err;
    log(`Temporal SDK metrics not served on ${bindAddress}: ${err.message}`);
    return false;
  }
  installedAt = bindAddress;
  log(`Temporal SDK metrics on http://${bindAddress}/metrics`);
  return true;
}
