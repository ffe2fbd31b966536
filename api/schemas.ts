import { z } from 'zod';
import { LOOP_STATUSES } from '../domain/loop-state';

// Response and parameter schemas of the HTTP API (request bodies come from domain/).

export const loopIdParamsSchema = z.object({ id: z.uuid() });

export const loopSummarySchema = z.object({
  id: z.string(),
  workflowId: z.string(),
  status: z.string(),
  phase: z.string(),
  repository: z.object({ url: z.string(), baseRef: z.string() }),
  iteration: z.number().int(),
  maxIterations: z.number().int(),
  lastVerdict: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  finishedAt: z.string().nullable(),
});

/** The detail view declares its main fields; nested records pass through as stored. */
export const loopDetailSchema = z.looseObject({
  ...loopSummarySchema.shape,
  baseCommit: z.string().nullable(),
  branch: z.string().nullable(),
  failureReason: z.string().nullable(),
  waiting: z
    .object({ reason: z.string(), since: z.string().nullable() })
    .nullable()
    // Optional for clients (the MCP tools, the CLI) reading a service from before it.
    .optional()
    .describe(
      "Set while the current step's attempts meet an outage of the model provider (429, 5xx, unreachable): what it waits for and since when. Such attempts are retried until the provider answers.",
    ),
  contractVersions: z.array(z.looseObject({ version: z.number().int(), hash: z.string() })),
  iterations: z.array(z.looseObject({ sequence: z.number().int(), roundIteration: z.number().int() })),
  escalations: z.array(
    z.looseObject({ id: z.string(), sequence: z.number().int(), trigger: z.string(), status: z.string() }),
  ),
  refusedDecisions: z.array(z.object({ channel: z.string(), reason: z.string(), createdAt: z.string() })),
});

/** The answer to POST /v1/loops: the loop, and what the submitter should know before it runs. */
export const submittedLoopSchema = loopSummarySchema.extend({
  notes: z
    .array(z.string())
    .describe(
      'What to know before the loop runs, such as that delivery will push its branch into a local repository (and how to turn that off); empty when nothing needs saying',
    ),
});

export const listLoopsQuerySchema = z.strictObject({
  status: z.enum([...LOOP_STATUSES, 'QUEUED']).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const submitLoopHeadersSchema = z.object({
  'idempotency-key': z.string().trim().min(1).max(200).optional(),
});

export const reportSchema = z.object({
  kind: z.enum(['FINAL', 'ESCALATION']),
  key: z.string(),
  createdAt: z.string(),
  body: z.unknown(),
  markdown: z.string(),
});

/** Test names a tests gate's runner reported (the first MAX_STORED_TEST_NAMES, redacted); null for other gates. */
const testNamesSchema = z.array(z.string()).nullable();

export const evidenceSchema = z.looseObject({
  id: z.string(),
  gate: z.string(),
  status: z.string(),
  command: z.unknown(),
  stdout: z.string(),
  stderr: z.string(),
  passedTests: testNamesSchema.describe(
    'Names of the tests the runner reported as passed (first 500, redacted); null unless a tests gate',
  ),
  failedTests: testNamesSchema.describe(
    'Names of the tests the runner reported as failed (first 500, redacted); null unless a tests gate',
  ),
});

export const acceptedSchema = z.object({ loopId: z.string(), status: z.string(), message: z.string() });

/** POST /v1/loops/:id/pause (api/routes/pause.ts). */
export const pauseBodySchema = z
  .strictObject({
    reason: z.string().trim().min(1).max(2000).optional().describe('Why, shown with the loop while it is paused'),
  })
  .optional();

export const pauseAnswerSchema = z.object({
  loopId: z.string(),
  paused: z.boolean().describe('A pause stands'),
  holding: z.boolean().describe('The loop holds now (status PAUSED); false while it finishes its current step'),
  message: z.string(),
});
