import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { decisionRequestSchema } from '../../domain/decision';
import { loopRequestSchema } from '../../domain/loop-request';
import { TERMINAL_STATUSES, type LoopStatus } from '../../domain/loop-state';
import { authErrorResponses, requirePrincipal } from '../auth/auth-plugin';
import type { RouteDeps } from '../deps';
import { evidenceOfLoop, evidenceOutput } from '../../store/evidence';
import { loopsNewestFirst } from '../../store/read-model';
import { latestReport, patchOf } from '../../store/reports';
import { bodyErrorResponses, conflict, errorResponseSchema, notFound } from '../errors';
import { checkDeadlineDefault, checkSeparationOfDuties } from '../decision-policy';
import { sendDecision } from '../decision-submission';
import { submitLoop } from '../loop-submission';
import { submissionNotes } from '../submission-notes';
import { loopDetail, loopSummary } from '../loop-views';
import { DECISION_REFUSALS, SUBMIT_LOOP_REFUSALS } from '../refusal-rules';
import { checkRepositorySource } from '../repository-policy';
import { applyOperatorPolicy } from '../operator-policy';
import { checkFreeDisk } from '../disk-guard';
import { refuseWhileStopping } from '../service-status';
import { loadLoop } from '../load-loop';
import { plainTextOn200 } from '../plain-text-answer';
import { cancelLoop } from '../loop-cancellation';
import { recordRunEndedOutside } from '../run-ended-outside';
import { findLoop } from '../../store/loops';
import {
  acceptedSchema,
  evidenceSchema,
  listLoopsQuerySchema,
  loopDetailSchema,
  loopIdParamsSchema,
  loopSummarySchema,
  reportSchema,
  submitLoopHeadersSchema,
  submittedLoopSchema,
} from '../schemas';

/** With 503 (and Retry-After) while PostgreSQL, or Temporal for the routes that call it, cannot be reached. */
const errors = { 400: errorResponseSchema, 404: errorResponseSchema, 409: errorResponseSchema, ...authErrorResponses };

export const loopRoutes: FastifyPluginAsyncZod<RouteDeps> = async (r, deps) => {
  const { policy } = deps;

  r.post('/v1/loops', {
    config: { access: 'submitter' },
    schema: {
      tags: ['loops'],
      summary: 'Submit a coding task; starts its engineering loop',
      description: SUBMIT_LOOP_REFUSALS,
      headers: submitLoopHeadersSchema,
      body: loopRequestSchema,
      response: {
        200: submittedLoopSchema,
        201: submittedLoopSchema,
        507: errorResponseSchema,
        ...errors,
        ...bodyErrorResponses,
      },
    },
    handler: async (request, reply) => {
      refuseWhileStopping(deps);
      checkRepositorySource(policy, request.body);
      checkDeadlineDefault(policy, request.body);
      const body = applyOperatorPolicy(policy, request.body);
      await checkFreeDisk(policy);
      const { loop, created } = await submitLoop(
        { prisma: deps.prisma, temporal: deps.temporal, taskQueue: deps.taskQueue },
        body,
        request.headers['idempotency-key'],
        requirePrincipal(request).keyId,
      );
      return reply.code(created ? 201 : 200).send({ ...loopSummary(loop), notes: submissionNotes(loop.id, body) });
    },
  });

  r.get('/v1/loops', {
    schema: {
      tags: ['loops'],
      summary: 'List loops, newest first',
      querystring: listLoopsQuerySchema,
      response: {
        200: z.object({ loops: z.array(loopSummarySchema) }),
        400: errorResponseSchema,
        ...authErrorResponses,
      },
    },
    handler: async (request) => {
      const loops = await loopsNewestFirst(deps.prisma, request.query);
      return { loops: loops.map(loopSummary) };
    },
  });

  r.get('/v1/loops/:id', {
    schema: {
      tags: ['loops'],
      summary: 'A loop with its contract versions, iterations, evidence, findings, verdicts and escalations',
      params: loopIdParamsSchema,
      response: { 200: loopDetailSchema, ...errors },
    },
    handler: async (request) => {
      const row = await findLoop(deps.prisma, request.params.id);
      if (row) await recordRunEndedOutside(deps, row);
      const detail = await loopDetail(deps.prisma, request.params.id);
      if (!detail) throw notFound(`loop ${request.params.id}`);
      return detail;
    },
  });

  r.get('/v1/loops/:id/report', {
    schema: {
      tags: ['loops'],
      summary: 'The final report, or the latest escalation report while none exists',
      params: loopIdParamsSchema,
      response: { 200: reportSchema, ...errors },
    },
    handler: async (request) => {
      const { id } = await loadLoop(deps.prisma, request.params.id);
      const report = await latestReport(deps.prisma, id);
      if (!report) throw notFound(`a report for loop ${id} (none written yet)`);
      return {
        kind: report.kind as 'FINAL' | 'ESCALATION',
        key: report.key,
        createdAt: report.createdAt.toISOString(),
        body: report.body,
        markdown: report.markdown,
      };
    },
  });

  r.get('/v1/loops/:id/patch', {
    schema: {
      tags: ['loops'],
      summary:
        'The delivered change as `git format-patch` output (apply with `git am` or `git apply` on the base commit), for anyone without push rights',
      params: loopIdParamsSchema,
      response: { 200: { content: { 'text/x-patch': { schema: z.string() } } }, ...errors },
    },
    serializerCompiler: plainTextOn200,
    handler: async (request, reply) => {
      const { id } = await loadLoop(deps.prisma, request.params.id);
      // Written by the worker at delivery: the API may not see the worker's disk.
      const patch = await patchOf(deps.prisma, id);
      if (!patch) throw notFound(`a patch for loop ${id} (none until the loop is delivered)`);
      return reply
        .type('text/x-patch; charset=utf-8')
        .header('content-disposition', `attachment; filename="loop-${id}.patch"`)
        .send(patch.markdown);
    },
  });

  r.get('/v1/loops/:id/evidence/:evidenceId', {
    schema: {
      tags: ['loops'],
      summary: 'One evidence record with its stored (capped) output',
      params: z.object({ id: z.uuid(), evidenceId: z.uuid() }),
      response: { 200: evidenceSchema, ...errors },
    },
    handler: async (request) => {
      const evidence = await evidenceOfLoop(deps.prisma, request.params.id, request.params.evidenceId);
      if (!evidence) throw notFound(`evidence ${request.params.evidenceId}`);
      return {
        ...evidence,
        passedTests: evidence.passedTests as string[] | null,
        failedTests: evidence.failedTests as string[] | null,
        startTime: evidence.startTime?.toISOString() ?? null,
        endTime: evidence.endTime?.toISOString() ?? null,
        createdAt: evidence.createdAt.toISOString(),
      };
    },
  });

  r.get('/v1/loops/:id/evidence/:evidenceId/log', {
    schema: {
      tags: ['loops'],
      summary:
        "An evidence record's stored output as plain text (capped, secrets redacted; sha256 of the full stream in the record)",
      params: z.object({ id: z.uuid(), evidenceId: z.uuid() }),
      querystring: z.strictObject({ stream: z.enum(['stdout', 'stderr']).default('stdout') }),
      response: {
        200: { content: { 'text/plain': { schema: z.string() } } },
        400: errorResponseSchema,
        404: errorResponseSchema,
        ...authErrorResponses,
      },
    },
    serializerCompiler: plainTextOn200,
    handler: async (request, reply) => {
      const output = await evidenceOutput(
        deps.prisma,
        request.params.id,
        request.params.evidenceId,
        request.query.stream,
      );
      if (output === null) throw notFound(`evidence ${request.params.evidenceId}`);
      return reply.type('text/plain; charset=utf-8').send(output);
    },
  });

  r.post('/v1/loops/:id/decisions', {
    config: { access: 'approver' },
    schema: {
      tags: ['decisions'],
      summary: 'Decide the open escalation it names: approve, reject, retry with guidance, or amend the contract',
      description: DECISION_REFUSALS,
      params: loopIdParamsSchema,
      body: decisionRequestSchema,
      response: { 202: acceptedSchema, 422: errorResponseSchema, ...errors, ...bodyErrorResponses },
    },
    handler: async (request, reply) => {
      const id = request.params.id;
      const loop = await loadLoop(deps.prisma, id);
      if (TERMINAL_STATUSES.includes(loop.status as LoopStatus))
        throw conflict(`loop ${id} has ended (${loop.status}); there is nothing to decide`);
      if (loop.status === 'QUEUED') throw conflict(`loop ${id} has not started yet; there is nothing to decide`);
      const principal = requirePrincipal(request);
      checkSeparationOfDuties(policy, loop, principal);
      // Every decision stores its actor: the API key's name (and id), never a name the body claims.
      const receipt = await sendDecision(deps, loop, request.body, `${principal.name} (key ${principal.keyId})`);
      return reply.code(202).send({
        loopId: id,
        status: 'DECISION_ACCEPTED',
        message: `${receipt.kind} accepted for escalation ${receipt.escalationSequence}`,
      });
    },
  });

  r.post('/v1/loops/:id/cancel', {
    config: { access: 'submitter' },
    schema: {
      tags: ['loops'],
      summary: 'Cancel a loop: running commands are stopped and the loop is recorded as cancelled',
      params: loopIdParamsSchema,
      response: { 202: acceptedSchema, ...errors },
    },
    handler: async (request, reply) => {
      const id = request.params.id;
      const loop = await loadLoop(deps.prisma, id);
      if (TERMINAL_STATUSES.includes(loop.status as LoopStatus))
        throw conflict(`loop ${id} has already ended (${loop.status})`);
      await cancelLoop(deps.temporal, loop);
      return reply.code(202).send({ loopId: id, status: 'CANCELLING', message: 'cancellation requested' });
    },
  });
};
