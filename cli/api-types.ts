import { LOOP_STATUSES } from '../domain/loop-state';

// The parts of the API's answers the CLI reads (api/schemas.ts, api/loop-views.ts). Everything else is
// passed through untouched by --json. Fields newer than the oldest supported server are optional.

export interface LoopSummary {
  id: string;
  workflowId: string;
  status: string;
  phase: string;
  repository: { url: string; baseRef: string };
  /** K of N: the iteration within the current round. */
  iteration: number;
  maxIterations: number;
  lastVerdict: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

/** The answer to POST /v1/loops. */
export interface SubmittedLoop extends LoopSummary {
  /** What to know before the loop runs (delivery into a local repository, …); absent from older APIs. */
  notes?: string[];
}

export interface TestCounts {
  passed?: number;
  failed?: number;
  skipped?: number;
}

/** An evidence record as the loop view lists it (no output). */
export interface EvidenceView {
  id: string;
  gate: string;
  status: string;
  command: string[];
  exitCode: number | null;
  timeoutStatus?: string | null;
  testCounts?: TestCounts | null;
  failureReason?: string | null;
}

/** GET /v1/loops/:id/evidence/:evidenceId: the record with its stored (capped, redacted) output. */
export interface EvidenceRecord extends EvidenceView {
  stdout: string;
  stderr: string;
  startTime?: string | null;
  endTime?: string | null;
  stdoutBytes?: number;
  stderrBytes?: number;
  outputTruncated?: boolean;
}

export interface FindingView {
  findingId: string;
  title: string;
  severity: string;
  validity: string;
  source?: string;
  /** `{ file, startLine, endLine }` for a reviewer's finding; other shapes (or none) for system findings. */
  location?: unknown;
}

export interface IterationView {
  sequence: number;
  roundIteration: number;
  contractVersion?: number;
  changedFiles?: string[];
  noChange?: boolean;
  makerExitCode?: number | null;
  verdict: { verdict: string; trigger: string | null; directives?: string[] } | null;
  evidence: EvidenceView[];
  findings: FindingView[];
}

export interface EscalationView {
  id: string;
  sequence: number;
  trigger: string;
  status: string;
  createdAt?: string;
  decision?: {
    kind: string;
    actor: string;
    guidance?: string | null;
    comment?: string | null;
    createdAt: string;
  } | null;
}

export interface LoopDetail extends LoopSummary {
  baseCommit?: string | null;
  branch?: string | null;
  failureReason?: string | null;
  /** Set while the current step waits out an outage of the model provider. */
  waiting?: { reason: string; since: string | null } | null;
  sandbox?: string | null;
  delivery?: {
    pushedBranch: string | null;
    pullRequestUrl: string | null;
    deliveryError: string | null;
    contextImpact?: string | null;
  };
  contractVersions?: Array<{ version: number; hash: string; reason?: string | null }>;
  workspaceSetup?: EvidenceView[];
  iterations: IterationView[];
  escalations: EscalationView[];
  refusedDecisions?: Array<{ channel: string; reason: string; createdAt: string }>;
}

export interface Accepted {
  loopId: string;
  status: string;
  message: string;
}

export const TIMELINE_KINDS = [
  'phase',
  'contract',
  'command',
  'model_call',
  'verdict',
  'escalation',
  'decision',
  'refused_decision',
  'egress_refused',
  'waiting',
] as const;

/** One event of a loop's timeline (GET /v1/loops/:id/timeline), as the event stream sends it too. */
export interface TimelineEvent {
  at: string;
  kind: string;
  iteration: number | null;
  title: string;
  durationMs: number | null;
  detail: Record<string, unknown>;
}

/** GET /v1/loops/:id/timeline. */
export interface Timeline {
  loopId: string;
  status: string;
  phase: string;
  events: TimelineEvent[];
}

/** GET /v1/loops/:id/report. */
export interface Report {
  kind: 'FINAL' | 'ESCALATION';
  key: string;
  createdAt: string;
  markdown: string;
}

export const SUCCESS_STATUSES = ['PASSED', 'APPROVED'];
export const FAILURE_STATUSES = ['FAILED', 'REJECTED', 'CANCELLED', 'TERMINATED'];
/** What `list --status` accepts: the service's own statuses (GET /v1/loops validates the same list). */
export const LIST_STATUSES = [...LOOP_STATUSES, 'QUEUED'] as const;

/** GET /v1/agents: one coding-agent preset (api/agent-inventory.ts). */
export interface AgentView {
  backend: string;
  package: string;
  pinnedVersion: string;
  installedVersion: string | null;
  endpoint: { baseUrl: string | null; model: string | null; apiKeySet: boolean } | null;
  allowed: boolean;
  network: string[] | null;
  lastCheck: {
    host: string;
    version: string | null;
    ok: boolean;
    outcome: string;
    explanation: string;
    latencyMs: number;
    checkedAt: string;
  } | null;
}
