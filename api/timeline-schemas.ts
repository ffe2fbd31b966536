import { z } from 'zod';

// Answers of GET /v1/loops/:id/timeline and GET /v1/loops/:id/iterations/:n/explain (OpenAPI at /docs).

export const TIMELINE_EVENT_KINDS = [
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
export type TimelineEventKind = (typeof TIMELINE_EVENT_KINDS)[number];

export const timelineEventSchema = z.object({
  at: z.string().describe('When it began (ISO 8601)'),
  kind: z.enum(TIMELINE_EVENT_KINDS),
  iteration: z
    .number()
    .int()
    .nullable()
    .describe("The loop's iteration sequence number (as in /iterations/:n), null for loop-level events"),
  title: z.string(),
  durationMs: z
    .number()
    .int()
    .nullable()
    .describe(
      'phase: until the next phase began (null for the current one); command and model_call: how long it ran; escalation: how long it waited for a decision; waiting: null (shown only while the loop waits out an outage)',
    ),
  detail: z.record(z.string(), z.unknown()),
});
export type TimelineEvent = z.infer<typeof timelineEventSchema>;

export const timelineSchema = z.object({
  loopId: z.string(),
  status: z.string(),
  phase: z.string(),
  events: z.array(timelineEventSchema).describe('Sorted by time'),
});

export const explainParamsSchema = z.object({
  id: z.uuid(),
  n: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .describe("The iteration's sequence number in the loop (1, 2, …; it does not restart after an escalation)"),
});

const gateAuditSchema = z.looseObject({
  gate: z.string(),
  status: z.string(),
  exitCode: z.number().int().nullable().optional(),
  timeoutStatus: z.string().nullable().optional(),
  testCounts: z.unknown().optional(),
  evidenceId: z.string().nullable().optional(),
  failureReason: z.string().nullable().optional(),
});

const findingTriageSchema = z.looseObject({
  findingId: z.string(),
  title: z.string(),
  severity: z.string(),
  validity: z.string(),
  outcome: z.string(),
  source: z.string().nullable(),
  rule: z.string().nullable(),
  location: z.unknown(),
});

export const explainSchema = z.object({
  loopId: z.string(),
  iteration: z.number().int(),
  roundIteration: z.number().int(),
  maxIterations: z.number().int().nullable(),
  contractVersion: z.number().int(),
  verdict: z.string(),
  trigger: z.string().nullable(),
  rule: z
    .string()
    .describe(
      "The judge's rule that decided the verdict, e.g. GATES_FAILED, BLOCKING_FINDINGS, ALL_CLEAR, MAX_ITERATIONS",
    ),
  ruleRecorded: z
    .boolean()
    .describe(
      'false: the verdict was stored before rules were recorded; the rule is derived from verdict, trigger and tables',
    ),
  ruleDescription: z.string(),
  reasons: z.array(z.string()).describe("The judge's reasons, in the order its rules fired"),
  directives: z.array(z.string()),
  explanation: z
    .array(z.string())
    .describe('The same in sentences: the verdict and its rule first, then one line per input'),
  inputs: z.object({
    gateAudit: z.array(gateAuditSchema),
    acCompliance: z.array(
      z.looseObject({ id: z.string(), status: z.string(), evidenceIds: z.array(z.string()).optional() }),
    ),
    findingTriage: z.array(findingTriageSchema),
    systemFindings: z.array(
      z.object({
        findingId: z.string(),
        rule: z.string().nullable(),
        title: z.string(),
        severity: z.string(),
        validity: z.string(),
        location: z.unknown(),
      }),
    ),
  }),
  decidedAt: z.string(),
});
export type Explanation = z.infer<typeof explainSchema>;
