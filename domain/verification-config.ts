import { z } from 'zod';
import { argvSchema } from './argv';
import { GATE_ORDER, PROJECT_PROFILES, workspaceRelativePathSchema } from './gates';
import { setupCommandSchema } from './setup';

// The target repository's own gate configuration, `.ai-engineering-loop/verification.json` (docs/design.md §3.2,
// docs/verification-config.md). Layer 2 of gate discovery: it beats profile defaults and manifest
// inference, and loses to the task contract. Read once from the base commit, so the maker cannot steer it.

export const VERIFICATION_CONFIG_PATH = '.ai-engineering-loop/verification.json';

/** Timeout for a gate command when no layer names one; the same default as a contract gate. */
export const DEFAULT_GATE_TIMEOUT_SECONDS = 300;

export const repositoryGateSchema = z.strictObject({
  /** Run without a shell, from the repository root. */
  argv: argvSchema,
  // No upper bound here: discovery clamps to MAX_COMMAND_TIMEOUT_SECONDS and says so in the plan's
  // notes, so a repository asking for more still gets a working (shorter) gate, visibly.
  timeoutSeconds: z.number().int().min(1).optional(),
  junitReport: workspaceRelativePathSchema.optional(),
});
export type RepositoryGate = z.infer<typeof repositoryGateSchema>;

const gatesShape = Object.fromEntries(GATE_ORDER.map((gate) => [gate, repositoryGateSchema.optional()])) as Record<
  (typeof GATE_ORDER)[number],
  z.ZodOptional<typeof repositoryGateSchema>
>;

// No maxIterations: the iteration budget belongs to whoever starts the loop (the loop request, capped at
// MAX_ITERATIONS_CEILING), not to the repository being changed. Strictness turns it into a clear error.
export const verificationConfigSchema = z.strictObject({
  /** Lets editors attach a JSON schema; ignored. */
  $schema: z.string().optional(),
  version: z.literal(1),
  /** Overrides profile detection. */
  profile: z.enum(PROJECT_PROFILES).optional(),
  /** Gates run without network unless the repository needs it (tests that call a local service, say). */
  network: z.boolean().optional(),
  gates: z.strictObject(gatesShape).default({}),
  /** Commands that install dependencies, with network, before the maker and the gates (replace inference; [] for none). */
  setup: z.array(setupCommandSchema).max(20).optional(),
});
export type VerificationConfig = z.infer<typeof verificationConfigSchema>;

export interface ConfigProblem {
  /** Dotted path of the offending field, e.g. `gates.tests.argv`; `(root)` for the document itself. */
  field: string;
  message: string;
}

export type VerificationConfigParse =
  { ok: true; config: VerificationConfig } | { ok: false; problems: ConfigProblem[] };

export function parseVerificationConfig(raw: unknown): VerificationConfigParse {
  const result = verificationConfigSchema.safeParse(raw);
  if (result.success) return { ok: true, config: result.data };
  return {
    ok: false,
    problems: result.error.issues.flatMap((issue): ConfigProblem[] =>
      // An unknown key is reported on its parent; name the key itself, which is what a person must fix.
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => ({ field: fieldPath([...issue.path, key]), message: 'unknown field' }))
        : [{ field: fieldPath(issue.path), message: issue.message }],
    ),
  };
}

function fieldPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path
    .map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`))
    .join('');
}

/**
 * The repository's verification config exists but cannot be used. Never ignored silently: falling back
 * to inference would run gates the repository did not choose. Callers treat it as non-retryable.
 */
export class VerificationConfigError extends Error {
  override readonly name = 'VerificationConfigError';
  /** The first offending field, or null when the file as a whole is unusable (bad JSON, symlink escape). */
  readonly field: string | null;

  constructor(
    readonly file: string,
    reason: string,
    readonly problems: ConfigProblem[] = [],
  ) {
    super(`${file} ${reason}`);
    this.field = problems[0]?.field ?? null;
  }

  static fromProblems(file: string, problems: ConfigProblem[]): VerificationConfigError {
    const listed = problems.map((p) => `${p.field}: ${p.message}`).join('; ');
    return new VerificationConfigError(file, `is invalid: ${listed}`, problems);
  }
}
