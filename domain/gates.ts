import type { NetworkRequest } from './egress';
import { z } from 'zod';
import { argvSchema } from './argv';
import type { SetupPlan } from './setup';

// The four verification gates, in the order they run (docs/design.md §3.1).
export const GATE_ORDER = ['tests', 'typecheck', 'lint', 'build'] as const;
export const gateNameSchema = z.enum(GATE_ORDER);
export type GateName = z.infer<typeof gateNameSchema>;

// Global ceiling no configuration layer may raise (docs/design.md §3.2).
export const MAX_COMMAND_TIMEOUT_SECONDS = 600;

// A report path the verifier joins under the workspace, so it must not climb out of it.
export const workspaceRelativePathSchema = z
  .string()
  .min(1)
  .max(1024)
  .refine((p) => !/^([/\\]|[A-Za-z]:)/.test(p), 'must be relative to the repository root')
  .refine((p) => !p.split(/[/\\]/).includes('..'), 'must not contain ".." segments')
  .refine((p) => !p.includes('\0'), 'must not contain NUL');

// A gate of the loop request: which gate, with every field a gate of verification.json takes.
export const gateCommandSchema = z.strictObject({
  gate: gateNameSchema,
  argv: argvSchema,
  timeoutSeconds: z.number().int().min(1).max(MAX_COMMAND_TIMEOUT_SECONDS).default(300),
  junitReport: workspaceRelativePathSchema.optional(),
});
export type GateCommand = z.infer<typeof gateCommandSchema>;

/** NOT_RUN: configured, but an earlier gate failed first. */
export type GateStatus = 'PASSED' | 'FAILED' | 'NOT_CONFIGURED' | 'NOT_RUN';
export type TimeoutStatus = 'COMPLETED' | 'TIMED_OUT' | 'CANCELLED';

export interface TestCounts {
  passed: number;
  failed: number;
  skipped: number;
}

/** What the workflow keeps of one gate run; the full record lives in the Evidence table. */
export interface GateSummary {
  gate: GateName;
  status: GateStatus;
  evidenceId: string | null;
  exitCode: number | null;
  timeoutStatus: TimeoutStatus | null;
  testCounts: TestCounts | null;
  /** Why the gate failed, in one line a maker can act on. */
  failureReason: string | null;
  /** Hash of the normalised failing output, to spot the same failure repeating. */
  failureSignature: string | null;
  /** AC ids this run proves. */
  provesAcceptanceCriteria: string[];
  /** Set when the command could not start (not found, not executable): the machine's problem, not the code's. */
  environmentProblem?: string | null;
}

/** Where a gate command came from, most specific first (docs/design.md §3.2). */
export const GATE_SOURCES = ['contract', 'repository-config', 'profile-default', 'manifest-inference'] as const;
export type GateSource = (typeof GATE_SOURCES)[number];

export const PROJECT_PROFILES = ['web-app', 'backend-api', 'library', 'monorepo'] as const;
export type ProjectProfile = (typeof PROJECT_PROFILES)[number];

/** A gate command with its provenance, resolved once from the base commit so the maker cannot steer it. */
export interface ResolvedGate {
  gate: GateName;
  argv: string[];
  timeoutSeconds: number;
  source: GateSource;
  /** Human-readable provenance, e.g. "package.json scripts.test, run with pnpm (pnpm-lock.yaml)". */
  detail: string;
  /** Workspace-relative path of a JUnit XML report the command writes, when counts come from there. */
  junitReport?: string;
}

export interface GatePlan {
  gates: ResolvedGate[];
  profile: ProjectProfile | null;
  /** Anything a person should know about the resolution (ceilings applied, config problems). */
  notes: string[];
  /**
   * What makes the verification weaker than it should be, shown in the API and every report (e.g. no
   * tests gate). Absent in plans resolved before warnings existed.
   */
  warnings?: string[];
  /** What network gate commands ask for (the request's gateNetwork; never the repository's), within SANDBOX_EGRESS_GATES. */
  network?: NetworkRequest;
  /** How dependencies are installed before the maker and the gates (absent: planned before set-up existed). */
  setup?: SetupPlan;
}
