import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_SETUP_EGRESS, endpointEntry, parseEgressList, type EgressEntry } from '../domain/egress';
import { MAX_LLM_TIMEOUT_SECONDS, MAX_REVIEW_PARTS, MAX_REVIEW_REPAIR_ATTEMPTS } from '../domain/review-limits';
import { REVIEW_PART_CHARS } from '../domain/review-scope';
import { loadGitCredentials, type GitCredential } from './git-credentials';
import { DEFAULT_AGENT_TOOLS_DIR, presetEndpoints, type PresetEndpoint } from './agent-presets';
import type { PresetBackend } from '../domain/maker-presets';
import { operatorPolicySchema, type OperatorPolicy } from '../domain/operator-policy';

const booleanFlag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
/** An optional setting where an empty value (docker-compose's `${VAR:-}`) means unset. */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());
const httpUrl = z
  .string()
  .regex(/^https?:\/\/[^\s/]/, 'must be an http(s) URL')
  .pipe(z.string().url());
/** `host:port`, as a socket address to listen on. */
const listenAddress = z
  .string()
  .regex(/^(?:\[[0-9a-fA-F:]+\]|[^\s:]+):\d{1,5}$/, 'must be host:port, e.g. 127.0.0.1:9464');

const egressList = z.string().transform((text, ctx): EgressEntry[] => {
  try {
    return parseEgressList(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

// The service's whole configuration: parsed once from the environment at start, frozen, passed down.
export const envSchema = z.object({
  DATA_DIR: z.string().min(1).default('.data'),
  /** Working copies of finished loops are removed after this long. */
  WORKSPACE_RETENTION_HOURS: z.coerce.number().min(0).default(168),
  /** New loops are refused (507) while the data directory's disk has less free space than this. */
  MIN_FREE_DISK_MB: z.coerce.number().int().min(0).default(2048),
  /** Per-repository package and build caches (default $DATA_DIR/caches). */
  CACHE_DIR: z.string().min(1).optional(),
  DATABASE_URL: z.string().url().optional(),
  EMBEDDED_POSTGRES_PORT: z.coerce.number().int().min(1).max(65535).default(5433),
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('engineering-loop'),
  TEMPORAL_CLI_PATH: z.string().min(1).optional(),
  TEMPORAL_PORT: z.coerce.number().int().min(1).max(65535).default(7233),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233),
  TEMPORAL_UI_URL: z.string().url().optional(),
  /**
   * Loops a worker keeps in memory between workflow tasks; unset, as many as its heap limit holds
   * (service/worker-memory.ts). A loop waiting days for a decision needs none: evicted, it is replayed
   * from history when the decision comes, so memory stays bounded however many wait.
   */
  WORKER_MAX_CACHED_WORKFLOWS: optional(z.coerce.number().int().min(0).max(100_000)),
  /** The V8 heap limit (MB) `npm start` gives the workflows worker (--max-old-space-size). */
  WORKFLOWS_WORKER_HEAP_MB: z.coerce.number().int().min(256).max(65_536).default(512),
  /** What a worker process runs: loops and their record writes, the heavy activities, or both. */
  WORKER_ROLE: z.enum(['all', 'workflows', 'activities']).default('all'),
  /** Makers, gates, reviews and git steps one worker runs at once; default 4 per core (they mostly wait on their processes). */
  WORKER_ACTIVITY_CONCURRENCY: z.coerce.number().int().min(1).max(1000).optional(),
  /**
   * On SIGTERM a worker takes no new work and lets the makers, gates and reviews it runs finish for this
   * long before it cancels them (they run again after the restart). `npm start` gives up on the whole
   * shutdown this plus 30 s after the signal.
   */
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(300),
  API_HOST: z.string().min(1).default('127.0.0.1'),
  API_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  LLM_BASE_URL: z.string().url().default('https://api.openai.com/v1'),
  LLM_API_KEY: z.string().default(''),
  LLM_MODEL: z.string().min(1).default('gpt-4.1'),
  ANTHROPIC_BASE_URL: z.string().url().default('https://api.anthropic.com/v1'),
  ANTHROPIC_API_KEY: z.string().default(''),
  ANTHROPIC_MODEL: z.string().min(1).default('claude-sonnet-4-5'),
  LLM_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(MAX_LLM_TIMEOUT_SECONDS).default(120),
  REVIEW_REPAIR_ATTEMPTS: z.coerce.number().int().min(0).max(MAX_REVIEW_REPAIR_ATTEMPTS).default(2),
  /** Past these (exclusions aside) the review does not run and the loop escalates REVIEW_INCOMPLETE. */
  REVIEW_MAX_CHANGED_FILES: z.coerce.number().int().min(1).max(100_000).default(1000),
  REVIEW_MAX_DIFF_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_REVIEW_PARTS * REVIEW_PART_CHARS)
    .default(5 * REVIEW_PART_CHARS),
  /** USD per million tokens by model, e.g. {"gpt-4.1":{"input":2,"output":8}}; unknown models cost nothing known. */
  LLM_PRICES: z
    .string()
    .default('{}')
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON' });
        return z.NEVER;
      }
    })
    .pipe(z.record(z.string(), z.strictObject({ input: z.number().min(0), output: z.number().min(0) }))),
  RATE_LIMIT_MAX: z.coerce.number().int().min(1).default(600),
  RATE_LIMIT_WINDOW_MS: z.coerce.number().int().min(1000).default(60_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** bwrap: every untrusted command runs under bubblewrap; none: the operator explicitly accepts running unconfined. */
  SANDBOX: z.enum(['bwrap', 'none']).default('bwrap'),
  /** The unprivileged uid/gid untrusted commands run as when the service runs as root. */
  SANDBOX_UID: z.coerce
    .number()
    .int()
    .min(1)
    .max(2 ** 31 - 1)
    .default(65534),
  SANDBOX_GID: z.coerce
    .number()
    .int()
    .min(1)
    .max(2 ** 31 - 1)
    .default(65534),
  /** Extra host paths visible read-only inside the sandbox (colon-separated), e.g. where agent CLIs live. */
  SANDBOX_READONLY_PATHS: z.string().default(''),
  /** Host paths writable inside every sandbox (colon-separated): shared package caches, say. */
  SANDBOX_WRITABLE_PATHS: z.string().default(''),
  /**
   * Per-sandbox limits (docs/threat-model.md, "Limits"): processes and memory of the whole sandbox (with
   * cgroups; see SANDBOX_LIMITS), largest file one process writes, size of its /tmp, growth of its writable trees.
   */
  SANDBOX_MAX_PROCESSES: z.coerce.number().int().min(16).default(1024),
  SANDBOX_MAX_FILE_BYTES: z.coerce
    .number()
    .int()
    .min(1024 * 1024)
    .default(4 * 1024 ** 3),
  SANDBOX_MAX_MEMORY_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024 ** 2)
    .default(8 * 1024 ** 3),
  SANDBOX_MAX_TMP_BYTES: z.coerce
    .number()
    .int()
    .min(1024 * 1024)
    .default(1024 ** 3),
  SANDBOX_MAX_WORKSPACE_BYTES: z.coerce
    .number()
    .int()
    .min(1024 * 1024)
    .default(16 * 1024 ** 3),
  /** Seconds between two measurements of a running command's writable trees against SANDBOX_MAX_WORKSPACE_BYTES. */
  SANDBOX_WORKSPACE_CHECK_SECONDS: z.coerce.number().int().min(1).max(600).default(5),
  /**
   * How processes and memory are limited per sandbox: auto (a cgroup per command — v2 under SANDBOX_CGROUP or
   * the worker's own cgroup, else v1 — else, as root, a uid per sandbox from SANDBOX_UID_RANGE), cgroup
   * (refuse to start without one) or uid-range.
   */
  SANDBOX_LIMITS: z.enum(['auto', 'cgroup', 'uid-range']).default('auto'),
  /** A cgroup v2 directory the service may write, its children allowed the pids and memory controllers. */
  SANDBOX_CGROUP: optional(z.string().min(1)),
  /** first-last: the uids sandboxes run as under SANDBOX_LIMITS=uid-range (one per concurrent command). */
  SANDBOX_UID_RANGE: z
    .string()
    .regex(/^\d+-\d+$/, 'must be first-last, e.g. 200000-200255')
    .transform((text) => {
      const [first, last] = text.split('-').map(Number) as [number, number];
      return { first, last };
    })
    .refine((r) => r.first >= 1 && r.first <= r.last && r.last < 2 ** 31, 'must be 1 <= first <= last < 2^31')
    .default({ first: 200000, last: 200255 }),
  /**
   * What a sandbox with network may reach, per role (comma-separated host, host:port or *.domain; see
   * domain/egress.ts): agents (presets, command makers and reviewer agents with network) default to the
   * model endpoints LLM_BASE_URL and ANTHROPIC_BASE_URL; set-up to the public package registries; gates to
   * nothing. A request can only narrow these lists; a repository cannot widen them.
   */
  SANDBOX_EGRESS_AGENTS: optional(egressList),
  SANDBOX_EGRESS_SETUP: egressList.default(parseEgressList(DEFAULT_SETUP_EGRESS)),
  SANDBOX_EGRESS_GATES: egressList.default([]),
  /**
   * Names of service environment variables handed to agent processes (makers and reviewer agents, never
   * gates), comma-separated: the credentials an agent CLI logs in with, e.g. ANTHROPIC_API_KEY for Claude Code.
   */
  AGENT_CREDENTIALS: z.string().default(''),
  /**
   * Where scripts/install-agents.sh installs the preset CLIs (default .tools/agents): visible read-only in
   * every sandbox, its bin/ first on an agent's PATH. Each preset's own endpoint is read by
   * config/agent-presets.ts (CLAUDE_CODE_BASE_URL, CODEX_API_KEY, AIDER_MODEL, …).
   */
  AGENT_TOOLS_DIR: z.string().min(1).optional(),
  /** Claude Code's Anthropic API root, without /v1 (Claude Code appends /v1/messages); unset: its default. */
  CLAUDE_CODE_BASE_URL: optional(httpUrl),
  CLAUDE_CODE_API_KEY: optional(z.string()),
  CLAUDE_CODE_MODEL: optional(z.string().min(1).max(200)),
  /** Codex's Responses API base, with /v1 (a model provider of its own in its config.toml); unset: OpenAI's. */
  CODEX_BASE_URL: optional(httpUrl),
  CODEX_API_KEY: optional(z.string()),
  CODEX_MODEL: optional(z.string().min(1).max(200)),
  /** Aider's OpenAI-compatible base, with /v1 (OPENAI_API_BASE); AIDER_MODEL as LiteLLM names it, e.g. openai/gpt-4.1. */
  AIDER_BASE_URL: optional(httpUrl),
  AIDER_API_KEY: optional(z.string()),
  AIDER_MODEL: optional(z.string().min(1).max(200)),
  /** Gemini CLI's Gemini API root, without /v1beta (GOOGLE_GEMINI_BASE_URL; the SDK appends it); unset: Google's. */
  GEMINI_BASE_URL: optional(httpUrl),
  GEMINI_API_KEY: optional(z.string()),
  GEMINI_MODEL: optional(z.string().min(1).max(200)),
  /** The operator's ceilings on loop requests (domain/operator-policy.ts), as JSON inline or in a file. */
  OPERATOR_POLICY: optional(z.string()),
  OPERATOR_POLICY_FILE: optional(z.string().min(1)),
  /** Local paths and file:// URLs as repositories: handy on one machine, off in production. */
  ALLOW_LOCAL_REPOSITORIES: booleanFlag.default(true),
  /** Seconds before a clone or fetch that has not connected (or stalls) is abandoned. */
  GIT_CONNECT_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(300).default(20),
  /** Named git credentials (JSON, config/git-credentials.ts) inline, or in a file; requests name them. */
  GIT_CREDENTIALS: z.string().optional(),
  GIT_CREDENTIALS_FILE: z.string().min(1).optional(),
  /** A decision deadline may default to approve only when the operator allows it (never with system BLOCKERs). */
  ALLOW_DEADLINE_APPROVE: booleanFlag.default(false),
  /** An approver may not decide a loop submitted with their own key. */
  SEPARATION_OF_DUTIES: booleanFlag.default(false),
  /** A change whose context impact is MAJOR waits for a person's approval before delivery, whatever the request says. */
  MAJOR_IMPACT_NEEDS_APPROVAL: booleanFlag.default(false),
  /** Actors whose `decision` signals (Temporal CLI/UI) are honoured, comma-separated; "*" for any; empty: none. */
  DECISION_SIGNAL_ACTORS: z.string().default(''),
  /** When set, GET /metrics (API) and the worker's metrics endpoint answer only `Authorization: Bearer <token>`. */
  METRICS_TOKEN: optional(z.string().min(16, 'must be at least 16 characters')),
  /** A separate worker process serves its Prometheus metrics here (GET /metrics); off when unset. */
  WORKER_METRICS_PORT: optional(z.coerce.number().int().min(1).max(65535)),
  WORKER_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /** The Temporal SDK's own Prometheus exporter (worker task latencies, slots, polls), e.g. 127.0.0.1:9464; off when unset. */
  TEMPORAL_SDK_METRICS_ADDRESS: optional(listenAddress),
  /** OTLP/HTTP collector (standard OpenTelemetry names): traces go to <endpoint>/v1/traces, or to the traces endpoint as given. */
  OTEL_EXPORTER_OTLP_ENDPOINT: optional(httpUrl),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optional(httpUrl),
  OTEL_SERVICE_NAME: optional(z.string().min(1)),
});

export interface ServiceConfig {
  dataDir: string;
  workspacesDir: string;
  /** Package and build caches, one directory per repository. */
  cachesDir: string;
  workspaceRetentionHours: number;
  minFreeDiskBytes: number;
  databaseUrl?: string;
  embeddedPostgresPort: number;
  temporal: {
    address?: string;
    namespace: string;
    taskQueue: string;
    cliPath?: string;
    port: number;
    uiPort: number;
    uiUrl?: string;
    /** WORKER_MAX_CACHED_WORKFLOWS; null: derived from the worker's heap limit (service/worker-memory.ts). */
    maxCachedWorkflows: number | null;
  };
  worker: {
    role: 'all' | 'workflows' | 'activities';
    activityConcurrency: number;
    /** How long running activities may finish after SIGTERM before they are cancelled. */
    shutdownGraceSeconds: number;
    /** The V8 heap limit in MB the launcher starts the workflows worker with. */
    workflowsHeapMb: number;
  };
  api: { host: string; port: number; rateLimit: { max: number; timeWindowMs: number } };
  /** The OpenAI-compatible endpoint: the reviewer, triage, and the built-in maker with provider "openai". */
  llm: { baseUrl: string; apiKey: string; model: string; timeoutSeconds: number; repairAttempts: number };
  /** What one review will take (domain/review-scope.ts); a larger change escalates REVIEW_INCOMPLETE. */
  review: { maxChangedFiles: number; maxDiffBytes: number };
  /** The Anthropic Messages endpoint for the built-in maker with provider "anthropic". */
  anthropic: { baseUrl: string; apiKey: string; model: string };
  /** USD per million input/output tokens, by model name. */
  prices: Record<string, { input: number; output: number }>;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  sandbox: {
    mode: 'bwrap' | 'none';
    uid: number;
    gid: number;
    readOnlyPaths: string[];
    writablePaths: string[];
    maxProcesses: number;
    maxFileBytes: number;
    maxMemoryBytes: number;
    maxTmpBytes: number;
    maxWorkspaceBytes: number;
    workspaceCheckSeconds: number;
    limits: 'auto' | 'cgroup' | 'uid-range';
    /** SANDBOX_CGROUP; null: look for a usable cgroup. */
    cgroup: string | null;
    uidRange: { first: number; last: number };
    /** Allow-lists of the egress proxy, by role (domain/egress.ts). */
    egress: { agents: EgressEntry[]; setup: EgressEntry[]; gates: EgressEntry[] };
  };
  repositories: { allowLocal: boolean; connectTimeoutSeconds: number };
  /** Named credentials for clone, push and pull requests; null when this process was given none. */
  gitCredentials: Record<string, GitCredential> | null;
  /** Variables (name → value) every agent process gets; their values are secrets like the service's own. */
  agentCredentials: Record<string, string>;
  /** Ceilings no loop request may exceed (OPERATOR_POLICY); {} when none are set. */
  operatorPolicy: OperatorPolicy;
  /** The preset CLIs: where they are installed, and each one's model endpoint (config/agent-presets.ts). */
  agents: { toolsDir: string; endpoints: Record<PresetBackend, PresetEndpoint> };
  decisions: {
    allowDeadlineApprove: boolean;
    separationOfDuties: boolean;
    signalActors: string[];
    /** Every MAJOR context impact waits for a person before delivery (MAJOR_IMPACT_NEEDS_APPROVAL). */
    majorImpactNeedsApproval: boolean;
  };
  telemetry: {
    /** Bearer token the metrics endpoints require; null: they are public, like /healthz. */
    metricsToken: string | null;
    /** Where a separate worker process serves its metrics; null: not served. */
    workerMetrics: { host: string; port: number } | null;
    /** The Temporal SDK's Prometheus exporter's address (host:port); null: off. */
    temporalSdkMetricsAddress: string | null;
    /** OTLP/HTTP traces URL; null: no tracing at all. */
    tracesUrl: string | null;
    /** OTEL_SERVICE_NAME; null: the process's default (engineering-loop-api, -worker, or engineering-loop). */
    serviceName: string | null;
  };
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<ServiceConfig> {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  const presets = presetEndpoints(e);
  const agentToolsDir = e.AGENT_TOOLS_DIR ? path.resolve(e.AGENT_TOOLS_DIR) : DEFAULT_AGENT_TOOLS_DIR;
  const presetUrls = Object.values(presets).flatMap((p) => (p.baseUrl ? [p.baseUrl] : []));
  const dataDir = path.resolve(e.DATA_DIR);
  return Object.freeze({
    dataDir,
    workspacesDir: path.join(dataDir, 'workspaces'),
    cachesDir: e.CACHE_DIR ? path.resolve(e.CACHE_DIR) : path.join(dataDir, 'caches'),
    workspaceRetentionHours: e.WORKSPACE_RETENTION_HOURS,
    minFreeDiskBytes: e.MIN_FREE_DISK_MB * 1024 * 1024,
    databaseUrl: e.DATABASE_URL,
    embeddedPostgresPort: e.EMBEDDED_POSTGRES_PORT,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      cliPath: e.TEMPORAL_CLI_PATH,
      port: e.TEMPORAL_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      uiUrl: e.TEMPORAL_UI_URL,
      maxCachedWorkflows: e.WORKER_MAX_CACHED_WORKFLOWS ?? null,
    },
    worker: {
      role: e.WORKER_ROLE,
      activityConcurrency: e.WORKER_ACTIVITY_CONCURRENCY ?? 4 * os.availableParallelism(),
      shutdownGraceSeconds: e.SHUTDOWN_GRACE_SECONDS,
      workflowsHeapMb: e.WORKFLOWS_WORKER_HEAP_MB,
    },
    api: {
      host: e.API_HOST,
      port: e.API_PORT,
      rateLimit: { max: e.RATE_LIMIT_MAX, timeWindowMs: e.RATE_LIMIT_WINDOW_MS },
    },
    llm: {
      baseUrl: e.LLM_BASE_URL,
      apiKey: e.LLM_API_KEY,
      model: e.LLM_MODEL,
      timeoutSeconds: e.LLM_TIMEOUT_SECONDS,
      repairAttempts: e.REVIEW_REPAIR_ATTEMPTS,
    },
    review: { maxChangedFiles: e.REVIEW_MAX_CHANGED_FILES, maxDiffBytes: e.REVIEW_MAX_DIFF_BYTES },
    anthropic: { baseUrl: e.ANTHROPIC_BASE_URL, apiKey: e.ANTHROPIC_API_KEY, model: e.ANTHROPIC_MODEL },
    prices: e.LLM_PRICES,
    logLevel: e.LOG_LEVEL,
    sandbox: {
      mode: e.SANDBOX,
      uid: e.SANDBOX_UID,
      gid: e.SANDBOX_GID,
      // The installed agent CLIs are there for every agent (bound only if the directory exists).
      readOnlyPaths: [
        agentToolsDir,
        ...e.SANDBOX_READONLY_PATHS.split(':')
          .filter(Boolean)
          .map((p) => path.resolve(p)),
      ],
      writablePaths: e.SANDBOX_WRITABLE_PATHS.split(':')
        .filter(Boolean)
        .map((p) => path.resolve(p)),
      maxProcesses: e.SANDBOX_MAX_PROCESSES,
      maxFileBytes: e.SANDBOX_MAX_FILE_BYTES,
      maxMemoryBytes: e.SANDBOX_MAX_MEMORY_BYTES,
      maxTmpBytes: e.SANDBOX_MAX_TMP_BYTES,
      maxWorkspaceBytes: e.SANDBOX_MAX_WORKSPACE_BYTES,
      workspaceCheckSeconds: e.SANDBOX_WORKSPACE_CHECK_SECONDS,
      limits: e.SANDBOX_LIMITS,
      cgroup: e.SANDBOX_CGROUP ? path.resolve(e.SANDBOX_CGROUP) : null,
      uidRange: e.SANDBOX_UID_RANGE,
      egress: {
        agents: e.SANDBOX_EGRESS_AGENTS ?? [e.LLM_BASE_URL, e.ANTHROPIC_BASE_URL, ...presetUrls].map(endpointEntry),
        setup: e.SANDBOX_EGRESS_SETUP,
        gates: e.SANDBOX_EGRESS_GATES,
      },
    },
    repositories: { allowLocal: e.ALLOW_LOCAL_REPOSITORIES, connectTimeoutSeconds: e.GIT_CONNECT_TIMEOUT_SECONDS },
    agentCredentials: agentCredentials(e.AGENT_CREDENTIALS, env),
    agents: { toolsDir: agentToolsDir, endpoints: presets },
    operatorPolicy: loadOperatorPolicy(e.OPERATOR_POLICY, e.OPERATOR_POLICY_FILE),
    gitCredentials: loadGitCredentials(e.GIT_CREDENTIALS, e.GIT_CREDENTIALS_FILE),
    decisions: {
      allowDeadlineApprove: e.ALLOW_DEADLINE_APPROVE,
      separationOfDuties: e.SEPARATION_OF_DUTIES,
      majorImpactNeedsApproval: e.MAJOR_IMPACT_NEEDS_APPROVAL,
      signalActors: e.DECISION_SIGNAL_ACTORS.split(',')
        .map((a) => a.trim())
        .filter(Boolean),
    },
    telemetry: {
      metricsToken: e.METRICS_TOKEN ?? null,
      workerMetrics: e.WORKER_METRICS_PORT ? { host: e.WORKER_METRICS_HOST, port: e.WORKER_METRICS_PORT } : null,
      temporalSdkMetricsAddress: e.TEMPORAL_SDK_METRICS_ADDRESS ?? null,
      tracesUrl: tracesUrl(e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, e.OTEL_EXPORTER_OTLP_ENDPOINT),
      serviceName: e.OTEL_SERVICE_NAME ?? null,
    },
  });
}

/** The OpenTelemetry rule: the signal-specific endpoint as it is, else the base endpoint plus v1/traces. */
function tracesUrl(tracesEndpoint: string | undefined, endpoint: string | undefined): string | null {
  if (tracesEndpoint) return tracesEndpoint;
  if (!endpoint) return null;
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

function loadOperatorPolicy(inline: string | undefined, file: string | undefined): OperatorPolicy {
  if (inline !== undefined && file !== undefined) {
    throw new ConfigError('Invalid configuration: set OPERATOR_POLICY or OPERATOR_POLICY_FILE, not both');
  }
  const name = file === undefined ? 'OPERATOR_POLICY' : 'OPERATOR_POLICY_FILE';
  let text: string | undefined;
  try {
    text = file === undefined ? inline : fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`Invalid configuration: ${name}: ${(err as Error).message}`);
  }
  if (text === undefined) return {};
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`Invalid configuration: ${name} is not JSON: ${(err as Error).message}`);
  }
  const parsed = operatorPolicySchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(policy)'}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid configuration: ${name}: ${problems}`);
  }
  return parsed.data;
}

function agentCredentials(names: string, env: NodeJS.ProcessEnv): Record<string, string> {
  const credentials: Record<string, string> = {};
  for (const name of names
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean)) {
    const value = env[name];
    if (value === undefined)
      throw new ConfigError(`Invalid configuration: AGENT_CREDENTIALS names ${name}, which is not set`);
    credentials[name] = value;
  }
  return credentials;
}
