import type { WorkflowInterceptors, WorkflowInterceptorsFactory } from '@temporalio/workflow';
import type * as OtelWorkflow from '@temporalio/interceptors-opentelemetry/lib/workflow';

// Workflow interceptors bundled into every workflow (service/workflow-bundle.ts), so the bundle is the
// same whether or not a process traces. Runs inside Temporal's deterministic workflow sandbox.
//
// A workflow is traced exactly when the client that started it sent trace context (the OpenTelemetry
// client interceptor's header; continue-as-new carries it on). That is part of the workflow's history,
// so the choice is the same on every replay, on any worker. An untraced workflow — every loop started
// without tracing, and every history recorded before this module existed — runs none of the
// OpenTelemetry code: not even its modules load (they set globals and draw on the workflow's seeded
// Math.random for span ids), so its commands, yields and uuid4() values are exactly what they were.
// A traced one runs @temporalio/interceptors-opentelemetry's own workflow interceptors unchanged; its
// spans leave through the `exporter` sink (tracing.ts, registered on every worker).

/** @temporalio/interceptors-opentelemetry's TRACE_HEADER (lib/instrumentation), not imported so nothing of it loads. */
export const TRACE_HEADER = '_tracer-data';

type Otel = {
  inbound: OtelWorkflow.OpenTelemetryInboundInterceptor;
  outbound: OtelWorkflow.OpenTelemetryOutboundInterceptor;
  internals: OtelWorkflow.OpenTelemetryInternalsInterceptor;
};

function loadOtel(): Otel {
  // Required here, not imported: loading the module patches the sandbox's globals. Webpack bundles it either way.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const m = require('@temporalio/interceptors-opentelemetry/lib/workflow') as typeof OtelWorkflow;
  return {
    inbound: new m.OpenTelemetryInboundInterceptor(),
    outbound: new m.OpenTelemetryOutboundInterceptor(),
    internals: new m.OpenTelemetryInternalsInterceptor(),
  };
}

export const interceptors: WorkflowInterceptorsFactory = (): WorkflowInterceptors => {
  // Decided when the workflow function starts (before any handler, activity or log call can run).
  let otel: Otel | null = null;
  return {
    inbound: [
      {
        execute: (input, next) => {
          if (TRACE_HEADER in input.headers) otel ??= loadOtel();
          return otel ? otel.inbound.execute(input, next) : next(input);
        },
        handleSignal: (input, next) => (otel ? otel.inbound.handleSignal(input, next) : next(input)),
        handleUpdate: (input, next) => (otel ? otel.inbound.handleUpdate(input, next) : next(input)),
        validateUpdate: (input, next) => (otel ? otel.inbound.validateUpdate(input, next) : next(input)),
        handleQuery: (input, next) => (otel ? otel.inbound.handleQuery(input, next) : next(input)),
      },
    ],
    outbound: [
      {
        scheduleActivity: (input, next) => (otel ? otel.outbound.scheduleActivity(input, next) : next(input)),
        scheduleLocalActivity: (input, next) => (otel ? otel.outbound.scheduleLocalActivity(input, next) : next(input)),
        startNexusOperation: (input, next) => (otel ? otel.outbound.startNexusOperation(input, next) : next(input)),
        startChildWorkflowExecution: (input, next) =>
          otel ? otel.outbound.startChildWorkflowExecution(input, next) : next(input),
        continueAsNew: (input, next) => (otel ? otel.outbound.continueAsNew(input, next) : next(input)),
        signalWorkflow: (input, next) => (otel ? otel.outbound.signalWorkflow(input, next) : next(input)),
        getLogAttributes: (input, next) => (otel ? otel.outbound.getLogAttributes(input, next) : next(input)),
      },
    ],
    internals: [
      {
        dispose: (input, next) => {
          // Its body runs synchronously (it has no await); the promise is only the async function's.
          if (otel) void otel.internals.dispose(input, next);
          else next(input);
        },
      },
    ],
  };
};
