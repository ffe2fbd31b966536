import { z } from 'zod';
import { goalContractSchema, MAX_ITERATIONS_CEILING } from './contract';
import { argvSchema, gateCommandSchema } from './gates';

// What a user submits to start a loop (POST /v1/loops) and what the workflow receives.

export const repositorySchema = z.strictObject({
  /** A local path or any URL `git clone` understands. */
  url: z.string().trim().min(1).max(2000),
  baseRef: z.string().trim().min(1).max(255).default('main'),
});

export const makerSettingsSchema = z.strictObject({
  backend: z.literal('command'),
  /** The agent command, run without a shell in the workspace; the prompt arrives on stdin and in $LOOP_PROMPT_FILE. */
  argv: argvSchema,
  timeoutSeconds: z.number().int().min(1).max(3600).default(900),
});
export type MakerSettings = z.infer<typeof makerSettingsSchema>;

/** The reviewer's endpoint and key come from the service configuration, never from a request. */
export const reviewerSettingsSchema = z.strictObject({
  model: z.string().trim().min(1).max(200).optional(),
});

export const loopRequestSchema = z.strictObject({
  repository: repositorySchema,
  contract: goalContractSchema,
  gates: z
    .array(gateCommandSchema)
    .max(4)
    .default([])
    .superRefine((gates, ctx) => {
      const seen = new Set<string>();
      gates.forEach((g, index) => {
        if (seen.has(g.gate)) ctx.addIssue({ code: 'custom', path: [index, 'gate'], message: `gate ${g.gate} is listed twice` });
        seen.add(g.gate);
      });
    }),
  maker: makerSettingsSchema,
  reviewer: reviewerSettingsSchema.default({}),
  maxIterations: z.number().int().min(1).max(MAX_ITERATIONS_CEILING).default(3),
});
export type LoopRequest = z.infer<typeof loopRequestSchema>;
/** The body as a client writes it (defaults not yet applied). */
export type LoopRequestBody = z.input<typeof loopRequestSchema>;

export const loopInputSchema = z.strictObject({
  loopId: z.string().min(1),
  request: loopRequestSchema,
});
export type LoopInput = z.infer<typeof loopInputSchema>;

export function loopWorkflowId(loopId: string): string {
  return `loop-${loopId}`;
}
