import type { Client } from '@temporalio/client';
import type { EgressEntry } from '../domain/egress';
import type { SandboxLimitsStatus } from '../activities/sandbox/limits';
import type { ServiceConfig } from '../config/service-config';
import type { PrismaClient } from '../store/db';
import type { LoopWrites } from '../store/loop-writes';
import type { OperatorPolicy } from '../domain/operator-policy';
import type { ServiceStatus } from './service-status';

// What the API is built from, below the app and its routes so they both import it (service/api-main.ts
// injects the real clients; tests inject their own).

export interface AppDeps {
  prisma: PrismaClient;
  temporal: Client;
  taskQueue: string;
  logLevel?: string;
  /** Where log lines go; standard output when absent (tests read them). */
  logStream?: { write(line: string): void };
  /** Requests per API key (or per IP without one) in each window. */
  rateLimit?: { max: number; timeWindowMs: number };
  /** The operator's switches the API enforces (repository sources, decision rules, sandbox status). */
  policy?: ApiPolicy;
  /** What `npm start` says of the service as a whole (api/service-status.ts); absent or null: nothing said. */
  serviceStatus?: () => ServiceStatus | null;
  /** Commits of each loop's records (store/loop-writes.ts): event streams send them at once; absent, they poll only. */
  loopWrites?: LoopWrites;
}

export type ApiPolicy = Pick<ServiceConfig, 'repositories' | 'decisions'> & {
  sandbox: Pick<ServiceConfig['sandbox'], 'mode'> & {
    /**
     * The limits per sandbox a worker on this host applies (activities/sandbox/sandbox.ts sandboxLimitsStatus): null
     * when unconfined or not known to this process, a string when SANDBOX_LIMITS cannot be met.
     */
    limits?: SandboxLimitsStatus | string | null;
  };
  /** New loops are refused while the disk holding `path` has less than `minFreeBytes` free. */
  disk: { path: string; minFreeBytes: number };
  /** Names of the configured git credentials (no secrets); null or absent: this process has none, the worker checks. */
  credentialNames?: string[] | null;
  /** GET /metrics answers only `Authorization: Bearer <token>` when set; null or absent: public. */
  metricsToken?: string | null;
  /** The operator's ceilings on loop requests (OPERATOR_POLICY); absent: none. */
  operator?: OperatorPolicy;
  /** The coding-agent presets as configured here, and the agents' egress allow-list (GET /v1/agents); absent: unknown. */
  agents?: ServiceConfig['agents'] & { egress: readonly EgressEntry[] };
};

/** Without configuration the API enforces the same defaults as the service's environment schema. */
export const DEFAULT_API_POLICY: ApiPolicy = {
  repositories: { allowLocal: true, connectTimeoutSeconds: 20 },
  decisions: {
    allowDeadlineApprove: false,
    separationOfDuties: false,
    signalActors: [],
    majorImpactNeedsApproval: false,
  },
  sandbox: { mode: 'bwrap' },
  disk: { path: '.', minFreeBytes: 0 },
};

export function apiPolicy(
  config: Readonly<ServiceConfig>,
  limits: SandboxLimitsStatus | string | null = null,
): ApiPolicy {
  return {
    repositories: config.repositories,
    decisions: config.decisions,
    sandbox: { mode: config.sandbox.mode, limits },
    disk: { path: config.dataDir, minFreeBytes: config.minFreeDiskBytes },
    credentialNames: config.gitCredentials ? Object.keys(config.gitCredentials) : null,
    metricsToken: config.telemetry.metricsToken,
    operator: config.operatorPolicy,
    agents: { ...config.agents, egress: config.sandbox.egress.agents },
  };
}

/**
 * What a route plugin is registered with: the clients and the policy in force. No `logLevel` or `prefix`:
 * Fastify reads those keys of a plugin's options as its own settings.
 */
export interface RouteDeps {
  prisma: PrismaClient;
  temporal: Client;
  taskQueue: string;
  policy: ApiPolicy;
  serviceStatus: () => ServiceStatus | null;
  loopWrites: LoopWrites | null;
}
