import { context, propagation, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { activeTracing } from './tracing';

// A SERVER span per API request (parent: the caller's `traceparent`, when it sent one), active while the
// handler runs, so the Temporal calls made for the request — StartWorkflow above all — are its children.
// Registered only when this process traces.

const spans = new WeakMap<FastifyRequest, { span: Span; context: Context }>();

export function registerHttpTracing(app: FastifyInstance): void {
  if (!activeTracing()) return;
  const tracer = trace.getTracer('engineering-loop-api');

  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url;
    const parent = propagation.extract(context.active(), request.headers);
    const span = tracer.startSpan(
      route ? `${request.method} ${route}` : request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          'url.path': request.url.split('?')[0],
          ...(route ? { 'http.route': route } : {}),
        },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    spans.set(request, { span, context: active });
    // Auth's database lookups run inside it too.
    context.with(active, done);
  });
  // The body has been read (its events ran outside any context): the handler, and any hook after this
  // one, run inside the request's span.
  app.addHook('preHandler', (request, _reply, done) => {
    const entry = spans.get(request);
    if (entry) context.with(entry.context, done);
    else done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    end(request, null);
    done();
  });
}

function end(request: FastifyRequest, statusCode: number | null): void {
  const entry = spans.get(request);
  if (!entry) return;
  spans.delete(request);
  if (statusCode === null) {
    entry.span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client went away' });
  } else {
    entry.span.setAttribute('http.response.status_code', statusCode);
    if (statusCode >= 500) entry.span.setStatus({ code: SpanStatusCode.ERROR });
  }
  entry.span.end();
}
