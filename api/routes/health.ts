import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteDeps } from '../deps';
import { ping } from '../../store/db';
import { describeDatabaseError } from '../../store/database-errors';
import { agentInventory } from '../agent-inventory';
import { serviceStatusSchema } from '../service-status';

const checkSchema = z.object({ ok: z.boolean(), error: z.string().optional() });
const limitsSchema = z.object({
  mechanism: z.enum(['cgroup-v2', 'cgroup-v1', 'uid-range', 'shared-uid']),
  where: z.string(),
  perSandbox: z.object({ processes: z.boolean(), memory: z.boolean() }),
  processes: z.number(),
  memoryBytes: z.number(),
  fileBytes: z.number(),
  tmpBytes: z.number(),
  workspaceBytes: z.number(),
  workspaceCheckSeconds: z.number(),
  note: z.string(),
});
const sandboxSchema = z.object({
  mode: z.enum(['bwrap', 'none']),
  confined: z.boolean(),
  note: z.string(),
  /** The limits per sandbox in force (docs/threat-model.md, "Limits"); null: unconfined or unknown here; a string: why none can be applied. */
  limits: z.union([limitsSchema, z.string()]).nullable(),
});
/** Each preset's installed version and latest smoke test (GET /v1/agents has the rest); they do not decide readiness. */
const agentStatusSchema = z.object({
  backend: z.string(),
  installedVersion: z.string().nullable(),
  lastCheck: z.object({ ok: z.boolean(), version: z.string().nullable(), checkedAt: z.string() }).nullable(),
});
const healthSchema = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.object({ postgres: checkSchema, temporal: checkSchema }),
  /**
   * Under `npm start`: whether the service is stopping, and the state of the PostgreSQL and Temporal dev
   * server it runs (up, or restarting since when, after how many attempts); null when run on its own.
   */
  service: serviceStatusSchema.nullable(),
  sandbox: sandboxSchema,
  /** null while PostgreSQL, which holds the checks, cannot be read. */
  agents: z.array(agentStatusSchema).nullable(),
});

/** What the operator chose for untrusted commands; workers refuse to start when bubblewrap cannot run. */
function sandboxStatus(sandbox: RouteDeps['policy']['sandbox']): z.infer<typeof sandboxSchema> {
  const { mode } = sandbox;
  return mode === 'bwrap'
    ? { mode, confined: true, note: 'makers, agents and gates run under bubblewrap', limits: sandbox.limits ?? null }
    : {
        mode,
        confined: false,
        note: "SANDBOX=none: makers, agents and gates run unsandboxed with the worker's own access",
        limits: null,
      };
}

async function agentStatus(deps: RouteDeps): Promise<Array<z.infer<typeof agentStatusSchema>> | null> {
  try {
    return (await agentInventory(deps.prisma, deps.policy)).map((a) => ({
      backend: a.backend,
      installedVersion: a.installedVersion,
      lastCheck: a.lastCheck && { ok: a.lastCheck.ok, version: a.lastCheck.version, checkedAt: a.lastCheck.checkedAt },
    }));
  } catch {
    return null;
  }
}

/** Each dependency gets this long: a health check that hangs during an outage tells nobody anything. */
const PROBE_DEADLINE_MS = 1500;

async function probe(check: () => Promise<unknown>): Promise<z.infer<typeof checkSchema>> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_DEADLINE_MS} ms`)), PROBE_DEADLINE_MS);
  });
  try {
    await Promise.race([check(), deadline]);
    return { ok: true };
  } catch (err) {
    // The database's failures in a sentence ("the database could not be reached"), not the client's dump.
    return { ok: false, error: describeDatabaseError(err) ?? (err instanceof Error ? err.message : String(err)) };
  } finally {
    clearTimeout(timer);
  }
}

export const healthRoutes: FastifyPluginAsyncZod<RouteDeps> = async (typed, deps) => {
  // Public (api/auth/auth-plugin.ts DEFAULT_PUBLIC_ROUTES): `security: []` lifts the document's global bearerAuth.
  // Liveness says only that this process answers: restarting it cannot fix PostgreSQL or Temporal.
  typed.get('/livez', {
    schema: {
      tags: ['health'],
      summary: 'Liveness: this process answers (no dependency is checked)',
      security: [],
      response: { 200: z.object({ status: z.literal('ok') }) },
    },
    handler: async () => ({ status: 'ok' as const }),
  });
  // Readiness: whether requests can be served now. /healthz is the same check under its older name.
  for (const url of ['/readyz', '/healthz']) {
    typed.get(url, {
      schema: {
        tags: ['health'],
        summary:
          'Readiness: checks PostgreSQL and Temporal, each within 1.5 s, and (under npm start) whether the service is stopping',
        security: [],
        response: { 200: healthSchema, 503: healthSchema },
      },
      handler: async (_request, reply) => {
        const [postgres, temporal] = await Promise.all([
          probe(() => ping(deps.prisma)),
          // The gRPC call itself is cut at the deadline too, so probes do not pile up during an outage.
          probe(() =>
            deps.temporal.connection.withDeadline(Date.now() + PROBE_DEADLINE_MS, () =>
              deps.temporal.workflowService.getSystemInfo({}),
            ),
          ),
        ]);
        const service = deps.serviceStatus();
        // A stopping service takes no new loops: a load balancer should send them elsewhere.
        const ok = postgres.ok && temporal.ok && !service?.stopping;
        const sandbox = sandboxStatus(deps.policy.sandbox);
        const agents = postgres.ok ? await agentStatus(deps) : null;
        return reply
          .code(ok ? 200 : 503)
          .send({ status: ok ? 'ok' : 'unavailable', checks: { postgres, temporal }, service, sandbox, agents });
      },
    });
  }
};
