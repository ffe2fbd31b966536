import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { operatorPolicySchema } from '../../domain/operator-policy';
import { authErrorResponses } from '../auth/auth-plugin';
import type { RouteDeps } from '../deps';

/** GET /v1/policy: the operator's ceilings in force (OPERATOR_POLICY), so a client can stay within them. */
export const policyRoutes: FastifyPluginAsyncZod<RouteDeps> = async (r, deps) => {
  r.get('/v1/policy', {
    schema: {
      tags: ['policy'],
      summary: "The operator's ceilings no loop request may exceed ({} when none are set)",
      response: { 200: operatorPolicySchema, ...authErrorResponses },
    },
    handler: async () => deps.policy.operator ?? {},
  });
};
