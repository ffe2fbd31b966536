import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { errorResponseSchema } from '../errors';
import { ROLES, verifyApiKey, type ApiKeyDb, type Principal, type Role } from './api-keys';

// Access control for the API, declared per route in one place: the route's `config.access`.
//
//   config: { access: 'submitter' }              submitter or admin
//   config: { access: ['approver', 'submitter'] } any of these roles, or admin
//   config: { access: 'authenticated' }          any valid key
//   config: { access: 'public' }                 no key needed
//
// Routes without `config.access`: GET/HEAD need any valid key, every other method needs admin (a
// forgotten declaration fails closed), and routes under `publicRoutes` (default /healthz, /livez, /readyz, /docs and
// swagger-ui's routes below it) are public. Admin satisfies every role.
//
// One onRequest hook does, in order: authenticate (Authorization: Bearer <key>, or x-api-key) →
// rate-limit (per key; per client IP when there is no valid key, so guessing is throttled too) →
// authorise. It answers 401 / 403 / 429 before the body is read, in the service's error shape.

export type Access = 'public' | 'authenticated' | Role | readonly Role[];

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call this route; see api/auth/auth-plugin.ts. */
    access?: Access;
  }
  interface FastifyRequest {
    /** The caller's API key; null on public routes. Set before any handler runs. */
    principal: Principal | null;
  }
}

export interface AuthOptions {
  prisma: ApiKeyDb;
  /** At most `max` requests per key (or per IP without a valid key) in each `timeWindowMs`. */
  rateLimit: { max: number; timeWindowMs: number };
  /** Route paths (as registered, e.g. `/docs/static/*`) that are public: equal to an entry, or below it. */
  publicRoutes?: readonly string[];
}

export const DEFAULT_PUBLIC_ROUTES: readonly string[] = ['/healthz', '/livez', '/readyz', '/docs'];

/** Logger redaction paths for the two headers that carry keys: `Fastify({ logger: { redact: [...] } })`. */
export const API_KEY_REDACT_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
];

/** Error responses an authenticated route can answer with; spread into a route's `schema.response`. */
export const authErrorResponses = {
  401: errorResponseSchema,
  403: errorResponseSchema,
  429: errorResponseSchema,
  // The key is checked against PostgreSQL: while it cannot be reached, 503 with Retry-After (api/errors.ts).
  503: errorResponseSchema,
} as const;

const REASONS = { 401: 'Unauthorized', 403: 'Forbidden', 429: 'Too Many Requests' } as const;

export async function registerAuth(app: FastifyInstance, options: AuthOptions): Promise<void> {
  const publicRoutes = options.publicRoutes ?? DEFAULT_PUBLIC_ROUTES;
  const { max, timeWindowMs } = options.rateLimit;
  if (!Number.isInteger(max) || max < 1) throw new Error(`rateLimit.max must be a positive integer (got ${max})`);
  if (!Number.isInteger(timeWindowMs) || timeWindowMs < 1)
    throw new Error(`rateLimit.timeWindowMs must be a positive integer (got ${timeWindowMs})`);

  // global: false — the plugin adds no hooks of its own; the hook below calls the limiter once it
  // knows who is calling. A route may still add its own extra limit with `config: { rateLimit: {...} }`.
  await app.register(fastifyRateLimit, { global: false, max, timeWindow: timeWindowMs });
  const limit = app.createRateLimit({
    keyGenerator: (request) => (request.principal ? `key:${request.principal.keyId}` : `ip:${normalizeIP(request.ip)}`),
  });

  app.decorateRequest('principal', null);

  app.addHook('onRequest', async (request, reply) => {
    const access = accessFor(request, publicRoutes);
    if (access === 'public') return;

    const presented = presentedKey(request);
    const principal = typeof presented === 'string' ? await verifyApiKey(options.prisma, presented) : null;
    request.principal = principal;

    const rate = await limit(request);
    if (!rate.isAllowed) {
      void reply.header('x-ratelimit-limit', rate.max).header('x-ratelimit-reset', rate.ttlInSeconds);
      if (rate.isExceeded) {
        void reply.header('x-ratelimit-remaining', 0).header('retry-after', rate.ttlInSeconds);
        request.log.warn({ keyId: principal?.keyId }, 'rate limit exceeded');
        return sendError(
          request,
          reply,
          429,
          `rate limit exceeded: at most ${rate.max} requests per ${timeWindowMs / 1000}s; retry in ${rate.ttlInSeconds}s`,
        );
      }
      void reply.header('x-ratelimit-remaining', rate.remaining);
    }

    if (!principal) {
      // Never log the presented value: it may be some other secret pasted by mistake.
      const message =
        presented === null
          ? 'missing API key: send Authorization: Bearer <key> (or x-api-key: <key>)'
          : typeof presented === 'object'
            ? presented.problem
            : 'invalid API key (unknown or revoked)';
      request.log.info({ reason: message }, 'request not authenticated');
      void reply.header('www-authenticate', 'Bearer');
      return sendError(request, reply, 401, message);
    }
    if (!isAllowed(principal.role, access)) {
      const needed = access === 'authenticated' ? 'any role' : `role ${roleList(access)} (or admin)`;
      request.log.info({ keyId: principal.keyId, role: principal.role }, 'request forbidden');
      return sendError(
        request,
        reply,
        403,
        `API key "${principal.name}" has role ${principal.role}; this request needs ${needed}`,
      );
    }
  });
}

/** The caller of an authenticated route. Throws if used on a public route (a wiring mistake). */
export function requirePrincipal(request: FastifyRequest): Principal {
  if (!request.principal)
    throw new Error(
      `route ${request.method} ${request.routeOptions.url ?? request.url} has no principal: is it public?`,
    );
  return request.principal;
}

export function isAllowed(role: Role, access: Exclude<Access, 'public'>): boolean {
  if (access === 'authenticated' || role === 'admin') return true;
  return typeof access === 'string' ? access === role : access.includes(role);
}

function roleList(access: Role | readonly Role[]): string {
  return typeof access === 'string' ? access : access.join(' or ');
}

function accessFor(request: FastifyRequest, publicRoutes: readonly string[]): Access {
  const configured = request.routeOptions.config.access;
  if (configured !== undefined) {
    if (
      typeof configured === 'string' &&
      configured !== 'public' &&
      configured !== 'authenticated' &&
      !ROLES.includes(configured)
    ) {
      throw new Error(`route ${request.routeOptions.url}: unknown access ${JSON.stringify(configured)}`);
    }
    return configured;
  }
  // Judge by the matched route pattern, not the raw URL (which could be `/docs/../v1/loops`).
  const route = request.routeOptions.url;
  if (
    route !== undefined &&
    !request.is404 &&
    publicRoutes.some((p) => route === p || route.startsWith(p.endsWith('/') ? p : `${p}/`))
  ) {
    return 'public';
  }
  // Unknown URLs need a valid key (then 404): no probing for routes without one.
  if (request.is404) return 'authenticated';
  return request.method === 'GET' || request.method === 'HEAD' ? 'authenticated' : 'admin';
}

/**
 * The presented key; null when none; `{ problem }` when the headers are unusable. Exported for routes
 * that act for the caller with the caller's own key (api/routes/mcp.ts).
 */
export function presentedKey(request: FastifyRequest): string | null | { problem: string } {
  const authorization = request.headers.authorization;
  const headerKey = request.headers['x-api-key'];
  if (Array.isArray(headerKey)) return { problem: 'send one x-api-key header' };
  let bearer: string | undefined;
  if (authorization !== undefined) {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
    if (!match?.[1]) return { problem: 'unsupported Authorization header: use Authorization: Bearer <key>' };
    bearer = match[1];
  }
  if (bearer !== undefined && headerKey !== undefined && bearer !== headerKey.trim()) {
    return { problem: 'Authorization and x-api-key carry different keys: send one' };
  }
  return bearer ?? (headerKey?.trim() || null);
}

function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  statusCode: keyof typeof REASONS,
  message: string,
): FastifyReply {
  const body: z.infer<typeof errorResponseSchema> = {
    statusCode,
    error: REASONS[statusCode],
    message,
    requestId: request.id,
  };
  return reply.code(statusCode).send(body);
}
