import { z } from 'zod';
import { argvSchema } from './argv';
import { gateNameSchema } from './gates';

// Goal Contract (docs/design.md §2): validated and frozen before any code changes.

export const MAX_ITERATIONS_CEILING = 5;

const acIdSchema = z.string().regex(/^AC-\d+$/, 'must look like AC-1');

/** How an acceptance criterion is proven: a passing gate, a named test, or a command of its own. */
export const acVerificationSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('gate'), gate: gateNameSchema }),
  z.strictObject({ type: z.literal('test'), name: z.string().trim().min(1) }),
  z.strictObject({
    type: z.literal('command'),
    argv: argvSchema,
    timeoutSeconds: z.number().int().min(1).max(600).default(120),
  }),
]);
export type AcVerification = z.infer<typeof acVerificationSchema>;

export const acceptanceCriterionSchema = z.strictObject({
  id: acIdSchema,
  statement: z.string().trim().min(1),
  verification: acVerificationSchema,
});
export type AcceptanceCriterion = z.infer<typeof acceptanceCriterionSchema>;

export const goalContractSchema = z
  .strictObject({
    objective: z.string().trim().min(1, 'objective must not be empty').max(1000),
    outcome: z.string().trim().min(1).max(2000),
    acceptanceCriteria: z
      .array(acceptanceCriterionSchema)
      .min(1, 'at least one acceptance criterion is required')
      .max(50),
    constraints: z.array(z.string().trim().min(1).max(2000)).max(100).default([]),
    outOfScope: z.array(z.string().trim().min(1).max(2000)).max(100).default([]),
    scope: z.array(z.string().trim().min(1).max(500)).max(100).optional(),
    /**
     * The task is to change existing tests: the maker's versions run without the frozen base versions
     * beside them, and changed tests are shown to the reviewer as such. Off unless asked for.
     */
    allowTestChanges: z.boolean().optional(),
    /** The task is to change how a gate runs (runner configuration, scripts): such changes are shown, not reverted. */
    allowGateConfigChanges: z.boolean().optional(),
  })
  .superRefine((contract, ctx) => {
    const seen = new Set<string>();
    contract.acceptanceCriteria.forEach((ac, index) => {
      if (seen.has(ac.id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['acceptanceCriteria', index, 'id'],
          message: `duplicate acceptance criterion id ${ac.id}`,
        });
      }
      seen.add(ac.id);
    });
  });
export type GoalContract = z.infer<typeof goalContractSchema>;

/** Frozen contract: a version and the canonical hash recorded when it was frozen. */
export interface FrozenContract {
  version: number;
  hash: string;
  contract: GoalContract;
}

/**
 * Canonical JSON (keys sorted at every level) so the same contract always hashes the same.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A human's retry guidance becomes a constraint of the next contract version (docs/design.md §7.2). */
export function withGuidance(contract: GoalContract, guidance: string): GoalContract {
  return { ...contract, constraints: [...contract.constraints, `Human guidance: ${guidance}`] };
}
