import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { ServiceConfig } from '../config/service-config';
import { AsyncLocalStorageContextManager } from './async-context';

// OpenTelemetry tracing, on only when an OTLP endpoint is configured: API request → StartWorkflow →
// RunWorkflow → StartActivity → RunActivity, one trace, exported over OTLP/HTTP (JSON). Off, nothing is
// registered: no provider, no client or activity interceptors, and the workflow interceptors bundled
// into every workflow stay inert (workflow-interceptors.ts).

export interface Tracing {
  serviceName: string;
  provider: BasicTracerProvider;
  processor: SpanProcessor;
  resource: Resource;
  /** Exports what is still buffered, then unregisters everything. */
  shutdown(): Promise<void>;
}

let active: Tracing | null = null;

/** This process's tracing, or null when it does not trace. */
export function activeTracing(): Tracing | null {
  return active;
}

/** Starts tracing for this process (once; later calls return the first). */
export function startTracing(options: { serviceName: string; url: string; scheduledDelayMillis?: number }): Tracing {
  if (active) return active;
  const resource = Resource.default().merge(new Resource({ 'service.name': options.serviceName }));
  const exporter = new OTLPTraceExporter({ url: options.url });
  const processor = new BatchSpanProcessor(
    exporter,
    options.scheduledDelayMillis === undefined ? undefined : { scheduledDelayMillis: options.scheduledDelayMillis },
  );
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  // W3C trace context (and baggage) propagation, unless OTEL_PROPAGATORS says otherwise.
  provider.register({ contextManager: new AsyncLocalStorageContextManager() });
  const tracing: Tracing = {
    serviceName: options.serviceName,
    provider,
    processor,
    resource,
    shutdown: async () => {
      if (active !== tracing) return;
      active = null;
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
  active = tracing;
  return tracing;
}

/** Tracing as configured (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME), or null when no endpoint is set. */
export function startConfiguredTracing(config: Readonly<ServiceConfig>, defaultServiceName: string): Tracing | null {
  const { tracesUrl, serviceName } = config.telemetry;
  return tracesUrl ? startTracing({ serviceName: serviceName ?? defaultServiceName, url: tracesUrl }) : null;
}

/** For the Temporal client that starts and updates loops: trace context into the workflow's headers. */
export function workflowClientInterceptors(): WorkflowClientInterceptor[] {
  return active ? [new OpenTelemetryWorkflowClientInterceptor()] : [];
}

/** For the worker: a RunActivity span per activity, child of the workflow's StartActivity. */
export function activityTracingInterceptors(): ActivityInterceptorsFactory[] {
  if (!active) return [];
  return [
    (ctx) => ({
      inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
      outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
    }),
  ];
}

/**
 * The sink workflow spans leave the workflow sandbox through. Always registered: a workflow started by
 * a tracing API makes spans even on a worker that does not trace, and those are dropped here.
 */
export function workflowTracingSinks(): InjectedSinks<OpenTelemetrySinks> {
  if (active) return { exporter: makeWorkflowExporter(active.processor, active.resource) };
  return { exporter: { export: { fn: () => undefined } } };
}
