import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DATABASE_UNREACHABLE, isDatabaseUnreachable } from '../store/database-errors';
import { trackAllowedMethods } from './allowed-methods';

// One error shape for every failure: { statusCode, error, message, requestId }. A 5xx never exposes internals.

export const errorResponseSchema = z.object({
  statusCode: z.number().int(),
  error: z.string(),
  message: z.string(),
  requestId: z.string(),
});

/**
 * What Fastify itself answers a route that reads a body, before the route's schema sees it: 413 over the
 * body limit (1 MiB), 415 for a content type it has no parser for. Spread into `schema.response`.
 */
export const bodyErrorResponses = { 413: errorResponseSchema, 415: errorResponseSchema } as const;

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}
export const notFound = (what: string) => new ApiError(404, `${what} was not found`);
export const conflict = (message: string) => new ApiError(409, message);
/** A dependency is unreachable for now; the client may send the same request again after `retryAfterSeconds`. */
export const unavailable = (message: string, retryAfterSeconds: number) =>
  new ApiError(503, message, { 'retry-after': String(retryAfterSeconds) });

/** How soon a client may try again while the database is down: a restarted PostgreSQL answers within seconds. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
  507: 'Insufficient Storage',
};

/**
 * Fastify's `frameworkErrors`: what fails before any route is found (a URL that is not valid
 * percent-encoding, FST_ERR_BAD_URL) is answered in the same shape, not Fastify's own.
 */
export function answerFrameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const statusCode = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
  if (statusCode === 500) request.log.error({ err }, 'request failed before routing');
  const message = statusCode === 500 ? 'internal error; see the server log for request ' + request.id : err.message;
  void reply
    .code(statusCode)
    .send({ statusCode, error: REASONS[statusCode] ?? 'Error', message, requestId: request.id });
}

/** Call before any route is added: the 405 answers know only the routes added after it. */
export function registerErrorHandler(app: FastifyInstance): void {
  const allowedMethods = trackAllowedMethods(app);
  app.setNotFoundHandler((request, reply) => {
    const allowed = allowedMethods(request.url);
    // A route that has the method but not the thing asked for (swagger-ui's static files) answers 404.
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      void reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send({
          statusCode: 405,
          error: 'Method Not Allowed',
          message: `${request.method} is not allowed on ${request.url.split('?')[0]}; it answers ${allowed.join(', ')}`,
          requestId: request.id,
        });
      return;
    }
    void reply.code(404).send({
      statusCode: 404,
      error: 'Not Found',
      message: `no route ${request.method} ${request.url}`,
      requestId: request.id,
    });
  });
  app.setErrorHandler((err: FastifyError, request, reply) => {
    let statusCode = 500;
    let message = 'internal error; see the server log for request ' + request.id;
    if (hasZodFastifySchemaValidationErrors(err)) {
      statusCode = 400;
      const where = err.validationContext ?? 'request';
      message = err.validation
        .map((v) => {
          const field = `${where}${v.instancePath.replace(/\//g, '.')}`.replace(/\.$/, '');
          const keys = Array.isArray((v.params as { keys?: unknown }).keys)
            ? ` ${(v.params as { keys: string[] }).keys.map((k) => `${field}.${k}`).join(', ')}`
            : '';
          return `${field}: ${v.message}${keys}`;
        })
        .join('; ');
    } else if (err instanceof ApiError) {
      statusCode = err.statusCode;
      message = err.message;
      void reply.headers(err.headers);
    } else if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      statusCode = err.statusCode;
      message = err.message;
    } else if (isDatabaseUnreachable(err)) {
      // An outage, not a fault of the request or the service: the same request works once it is over.
      statusCode = 503;
      message = `${DATABASE_UNREACHABLE}; send the request again in a few seconds`;
      void reply.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS));
      request.log.warn(`${request.method} ${request.url}: ${DATABASE_UNREACHABLE}`);
    } else {
      request.log.error({ err }, 'request failed');
    }
    void reply
      .code(statusCode)
      .send({ statusCode, error: REASONS[statusCode] ?? 'Error', message, requestId: request.id });
  });
}
