import { z } from 'zod';
import { networkRequestSchema } from './egress';
import { budgetSchema, type Usage } from './budget';
import type { LoopPause } from './loop-state';
import { goalContractSchema, MAX_ITERATIONS_CEILING, type GoalContract } from './contract';
import { argvSchema } from './argv';
import { gateCommandSchema, type GatePlan } from './gates';
import { setupCommandSchema } from './setup';
import { presetMakerSettingsSchemas } from './maker-presets';
import { credentialNameSchema, deliverySettingsSchema } from './delivery';
import { baseRefProblem, repositoryUrlSchema } from './repository-url';

// What a user submits to start a loop (POST /v1/loops) and what the workflow receives.

export const repositorySchema = z.strictObject({
  /** https://, ssh:// or user@host:path; a local path or file:// URL where the operator allows them. */
  url: repositoryUrlSchema,
  baseRef: z
    .string()
    .trim()
    .min(1)
    .max(255)
    .superRefine((ref, ctx) => {
      const problem = baseRefProblem(ref);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .default('main'),
  /** The name of a credential the operator configured on the workers (never the secret itself). */
  credential: credentialNameSchema.optional(),
});

export const commandMakerSettingsSchema = z.strictObject({
  backend: z.literal('command'),
  /** The agent command, run without a shell in the workspace; the prompt arrives on stdin and in $LOOP_PROMPT_FILE. */
  argv: argvSchema,
  timeoutSeconds: z.number().int().min(1).max(3600).default(900),
  /** Network inside the sandbox: off unless asked for (true: SANDBOX_EGRESS_AGENTS; a list narrows it). */
  network: networkRequestSchema.optional(),
});

/** The built-in tool-using agent; its endpoint and key come from the service configuration. */
export const llmMakerSettingsSchema = z.strictObject({
  backend: z.literal('llm'),
  provider: z.enum(['openai', 'anthropic']),
  model: z.string().trim().min(1).max(200).optional(),
  maxSteps: z.number().int().min(1).max(200).default(40),
  /** argv prefixes the agent may run besides the loop's own gate commands. */
  allowedCommands: z.array(argvSchema).max(50).default([]),
  timeoutSeconds: z.number().int().min(1).max(3600).default(900),
});

export const makerSettingsSchema = z.discriminatedUnion('backend', [
  commandMakerSettingsSchema,
  llmMakerSettingsSchema,
  ...presetMakerSettingsSchemas,
]);
export type MakerSettings = z.infer<typeof makerSettingsSchema>;
export type LlmMakerSettings = z.infer<typeof llmMakerSettingsSchema>;

/**
 * The reviewer: an independent model call (endpoint and key from the service configuration, never from
 * a request), or a coding-agent CLI run on a separate, disposable checkout of the checkpoint.
 */
export const reviewerSettingsSchema = z.preprocess(
  // `backend` may be left out for the model reviewer: `{ "model": "gpt-4.1" }` (and loops started before it existed).
  (value) => (value && typeof value === 'object' && !('backend' in value) ? { backend: 'llm', ...value } : value),
  z.discriminatedUnion('backend', [
    // The default only documents (OpenAPI) that `backend` may be left out; the preprocess above fills it in.
    z.strictObject({ backend: z.literal('llm').default('llm'), model: z.string().trim().min(1).max(200).optional() }),
    z.strictObject({
      backend: z.literal('agent'),
      agent: z.discriminatedUnion('backend', [commandMakerSettingsSchema, ...presetMakerSettingsSchemas]),
    }),
  ]),
);
export type ReviewerSettings = z.infer<typeof reviewerSettingsSchema>;

export const loopRequestSchema = z
  .strictObject({
    repository: repositorySchema,
    contract: goalContractSchema,
    gates: z
      .array(gateCommandSchema)
      .max(4)
      .default([])
      .superRefine((gates, ctx) => {
        const seen = new Set<string>();
        gates.forEach((g, index) => {
          if (seen.has(g.gate))
            ctx.addIssue({ code: 'custom', path: [index, 'gate'], message: `gate ${g.gate} is listed twice` });
          seen.add(g.gate);
        });
      }),
    maker: makerSettingsSchema,
    reviewer: reviewerSettingsSchema.default({ backend: 'llm' }),
    maxIterations: z.number().int().min(1).max(MAX_ITERATIONS_CEILING).default(3),
    budget: budgetSchema.default({}),
    escalation: z
      .strictObject({
        /** After this long without a decision, `defaultDecision` applies (durable timer). */
        decisionDeadlineSeconds: z
          .number()
          .int()
          .min(1)
          .max(90 * 24 * 3600)
          .optional(),
        defaultDecision: z.enum(['reject', 'approve']).default('reject'),
      })
      .default({ defaultDecision: 'reject' }),
    /** Commands that install dependencies (replace the repository's and inferred ones; [] installs nothing). */
    setup: z.array(setupCommandSchema).max(20).optional(),
    /** Network for gates inside the sandbox: true gives SANDBOX_EGRESS_GATES, a list narrows it; a repository cannot ask. */
    gateNetwork: networkRequestSchema.default(false),
    /** The maker waits until a human approves the frozen contract. */
    requireContractApproval: z.boolean().default(false),
    /** On PASS or approval: push the loop's branch, optionally open a pull/merge request (domain/delivery.ts). */
    delivery: deliverySettingsSchema.default({ push: true, majorImpactNeedsApproval: false }),
  })
  .superRefine((request, ctx) => {
    if (request.delivery.pullRequest && !request.delivery.push) {
      ctx.addIssue({
        code: 'custom',
        path: ['delivery', 'pullRequest'],
        message: 'a pull request needs the branch pushed (delivery.push: true)',
      });
    }
    if (request.delivery.pullRequest && !request.repository.credential) {
      ctx.addIssue({
        code: 'custom',
        path: ['delivery', 'pullRequest'],
        message: "a pull request needs repository.credential (the provider's API token)",
      });
    }
  });
export type LoopRequest = z.infer<typeof loopRequestSchema>;
/** The body as a client writes it (defaults not yet applied). */
export type LoopRequestBody = z.input<typeof loopRequestSchema>;

export const loopInputSchema = z.strictObject({
  loopId: z.string().min(1),
  request: loopRequestSchema,
  /** Set when the loop continues as a new run after a human decision (keeps history bounded). */
  resume: z.custom<LoopResume>().optional(),
});
export type LoopInput = z.infer<typeof loopInputSchema>;

/** Everything a loop carries into its next run. */
export interface LoopResume {
  contract: GoalContract;
  contractVersion: number;
  contractHash: string;
  sequence: number;
  escalations: number;
  directives: string[];
  gatePlan: GatePlan;
  /** The maker's workspace must be set up again first (after an ENVIRONMENT escalation, a changed manifest). */
  setupDue?: boolean;
  usage: Usage;
  /** A pause that stood when the loop was sent back: the next run holds before its maker too. */
  pause?: LoopPause | null;
}

export function loopWorkflowId(loopId: string): string {
  return `loop-${loopId}`;
}
