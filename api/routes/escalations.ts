import type { FastifyBaseLogger } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { operatorPolicySchema } from '../../domain/operator-policy';
import { authErrorResponses } from '../auth/auth-plugin';
import type { RouteDeps } from '../deps';
import { openEscalations } from '../../store/escalations';
import { reportsById } from '../../store/reports';
import { errorResponseSchema } from '../errors';

// The escalation inbox (docs/design.md §7): every escalation still waiting for a human decision, oldest first,
// with the loop it belongs to and its six-part report (structured body + Markdown). Decisions are
// posted to POST /v1/loops/:id/decisions (routes/loops.ts).

/** The stored escalation report body (domain/reports.ts EscalationReport); extra fields pass through. */
export const escalationReportBodySchema = z.looseObject({
  trigger: z.string(),
  roundIteration: z.number().int(),
  maxIterations: z.number().int(),
  attempts: z.array(
    z.looseObject({
      sequence: z.number().int(),
      roundIteration: z.number().int(),
      changedFiles: z.array(z.string()),
      verdict: z.string(),
      reasons: z.array(z.string()),
      /** How the maker's run ended and why (domain/maker-outcome.ts); null when it left no record. */
      maker: z.object({ outcome: z.string(), explanation: z.string() }).nullable().optional(),
    }),
  ),
  coreBlocker: z.string(),
  openFindings: z.array(
    z.looseObject({ findingId: z.string(), title: z.string(), severity: z.string(), location: z.string() }),
  ),
  options: z.array(z.looseObject({ decision: z.string(), description: z.string() })),
  workspace: z.looseObject({
    branch: z.string(),
    checkpointCommit: z.string(),
    gates: z.array(z.looseObject({ gate: z.string(), status: z.string() })),
  }),
  /** The operator's ceilings in force when it was written (GET /v1/policy's shape); absent from older reports. */
  operatorPolicy: operatorPolicySchema.optional(),
});

export const openEscalationSchema = z.object({
  id: z.string(),
  loopId: z.string(),
  workflowId: z.string(),
  repository: z.object({ url: z.string(), baseRef: z.string() }),
  objective: z.string().nullable(),
  trigger: z.string(),
  sequence: z.number().int(),
  status: z.literal('OPEN'),
  createdAt: z.string(),
  report: z
    .object({
      id: z.string(),
      key: z.string(),
      createdAt: z.string(),
      /** null only when the stored body does not have the documented shape (the Markdown still does). */
      body: escalationReportBodySchema.nullable(),
      markdown: z.string(),
    })
    .nullable(),
});

export const listEscalationsQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(100),
});

export const escalationRoutes: FastifyPluginAsyncZod<RouteDeps> = async (r, deps) => {
  r.get('/v1/escalations', {
    schema: {
      tags: ['decisions'],
      summary: 'Open escalations awaiting a human decision, oldest first, each with its escalation report',
      querystring: listEscalationsQuerySchema,
      response: {
        200: z.object({ escalations: z.array(openEscalationSchema) }),
        400: errorResponseSchema,
        ...authErrorResponses,
      },
    },
    handler: async (request) => {
      const escalations = await openEscalations(deps.prisma, request.query.limit);
      // Escalation.reportId is a plain column (no relation), so the reports come in one second query.
      const reportIds = escalations.map((e) => e.reportId);
      const reports = reportIds.length ? await reportsById(deps.prisma, reportIds) : [];
      const byId = new Map(reports.map((report) => [report.id, report]));
      return {
        escalations: escalations.map((e) => {
          const report = byId.get(e.reportId);
          return {
            id: e.id,
            loopId: e.loopId,
            workflowId: e.loop.workflowId,
            repository: { url: e.loop.repoUrl, baseRef: e.loop.baseRef },
            objective: objectiveOf(e.loop.input),
            trigger: e.trigger,
            sequence: e.sequence,
            status: 'OPEN' as const,
            createdAt: e.createdAt.toISOString(),
            report: report
              ? {
                  id: report.id,
                  key: report.key,
                  createdAt: report.createdAt.toISOString(),
                  body: reportBody(report.body, report.id, request.log),
                  markdown: report.markdown,
                }
              : null,
          };
        }),
      };
    },
  });
};

/** The structured report, or null (logged) if it drifted from the documented shape: one odd report must not break the inbox. */
function reportBody(
  body: unknown,
  reportId: string,
  log: FastifyBaseLogger,
): z.infer<typeof escalationReportBodySchema> | null {
  const parsed = escalationReportBodySchema.safeParse(body);
  if (parsed.success) return parsed.data;
  log.warn(
    { reportId, issues: parsed.error.issues },
    'escalation report body does not match the documented shape; sent as null',
  );
  return null;
}

/** The task's objective from the stored submission, if it has one. */
function objectiveOf(input: unknown): string | null {
  const objective = (input as { contract?: { objective?: unknown } } | null)?.contract?.objective;
  return typeof objective === 'string' ? objective : null;
}
