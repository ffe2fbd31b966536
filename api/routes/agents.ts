import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { WorkflowFailedError } from '@temporalio/client';
import { z } from 'zod';
import type { agentChecks } from '../../workflows/agent-checks';
import { PRESET_BACKENDS } from '../../domain/maker-presets';
import { agentInventory, agentSchema } from '../agent-inventory';
import { authErrorResponses } from '../auth/auth-plugin';
import type { RouteDeps } from '../deps';
import { ApiError, bodyErrorResponses, errorResponseSchema } from '../errors';
import { requirePollingWorkers } from '../task-queue-pollers';
import { callTemporal } from '../temporal-calls';

// The coding-agent presets (docs/agents.md, "Checking the presets"): what is installed and configured, and a
// smoke test of each on a worker, which runs the real CLI against the operator's endpoint.

/** Checks run at once, each bounded (activities/makers/agent-check.ts); past this something is stuck. */
const CHECKS_WAIT_MS = 6 * 60_000;

const inventorySchema = z.object({ agents: z.array(agentSchema) });
const checkRequestSchema = z
  .strictObject({
    /** Which presets to check; all of them when left out. */
    backends: z.array(z.enum(PRESET_BACKENDS)).min(1).max(PRESET_BACKENDS.length).optional(),
  })
  .optional();

export const agentRoutes: FastifyPluginAsyncZod<RouteDeps> = async (r, deps) => {
  r.get('/v1/agents', {
    schema: {
      tags: ['agents'],
      summary: 'The coding-agent presets: pinned and installed versions, endpoint, policy, latest smoke test',
      response: { 200: inventorySchema, ...authErrorResponses },
    },
    handler: async () => ({ agents: await agentInventory(deps.prisma, deps.policy) }),
  });

  // Admin only (a POST without config.access): each check is a model call the operator pays for.
  r.post('/v1/agents/checks', {
    schema: {
      tags: ['agents'],
      summary: 'Smoke-test presets now: a worker runs each CLI against its endpoint; answers when all have ended',
      body: checkRequestSchema,
      response: {
        /** workflowId: the checks' workflow, to find in the Temporal Web UI. */
        200: inventorySchema.extend({ workflowId: z.string() }),
        400: errorResponseSchema,
        502: errorResponseSchema,
        504: errorResponseSchema,
        ...bodyErrorResponses,
        ...authErrorResponses,
      },
    },
    handler: async (request) => {
      const backends = [...new Set(request.body?.backends ?? PRESET_BACKENDS)];
      await requirePollingWorkers(deps.temporal, deps.taskQueue);
      const handle = await callTemporal(deps.temporal, 'no check was started; try again', () =>
        deps.temporal.workflow.start<typeof agentChecks>('agentChecks', {
          taskQueue: deps.taskQueue,
          workflowId: `agent-checks-${crypto.randomUUID()}`,
          args: [{ backends }],
          staticSummary: `Smoke test of ${backends.join(', ')}`,
        }),
      );
      let timer: NodeJS.Timeout | undefined;
      const stillRunning = new Promise<'still running'>((resolve) => {
        timer = setTimeout(() => resolve('still running'), CHECKS_WAIT_MS);
      });
      try {
        if ((await Promise.race([handle.result(), stillRunning])) === 'still running')
          throw new ApiError(
            504,
            `the checks are still running (workflow ${handle.workflowId}); GET /v1/agents shows them when they end`,
          );
      } catch (err) {
        if (!(err instanceof WorkflowFailedError)) throw err;
        throw new ApiError(502, `the checks did not complete: ${err.cause?.message ?? err.message}`);
      } finally {
        clearTimeout(timer);
      }
      return {
        agents: await agentInventory(deps.prisma, deps.policy, backends),
        workflowId: handle.workflowId,
      };
    },
  });
};
