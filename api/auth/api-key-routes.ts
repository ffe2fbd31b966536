import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ApiError, bodyErrorResponses, errorResponseSchema, notFound } from '../errors';
import {
  ApiKeyInputError,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  roleSchema,
  type ApiKeyDb,
  type ApiKeyInfo,
} from './api-keys';
import { authErrorResponses } from './auth-plugin';

// Key management over HTTP (admin only). The same operations exist offline in service/admin-main.ts.

const apiKeySchema = z.object({
  id: z.uuid(),
  name: z.string(),
  role: roleSchema,
  prefix: z.string(),
  createdAt: z.string(),
  lastUsedAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
});
const createdApiKeySchema = apiKeySchema.extend({
  key: z.string().describe('The API key. Shown only in this response; store it now.'),
});
const createApiKeyBodySchema = z.strictObject({ name: z.string().trim().min(1).max(100), role: roleSchema });

function view(key: ApiKeyInfo): z.infer<typeof apiKeySchema> {
  return {
    id: key.id,
    name: key.name,
    role: key.role,
    prefix: key.prefix,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}

export const apiKeyRoutes: FastifyPluginAsyncZod<{ prisma: ApiKeyDb }> = async (r, deps) => {
  const errors = { 400: errorResponseSchema, ...authErrorResponses };

  r.post('/v1/api-keys', {
    config: { access: 'admin' },
    schema: {
      tags: ['api keys'],
      summary: 'Create an API key (admin). The key is in this response only.',
      body: createApiKeyBodySchema,
      response: { 201: createdApiKeySchema, ...errors, ...bodyErrorResponses },
    },
    handler: async (request, reply) => {
      try {
        const created = await createApiKey(deps.prisma, request.body);
        request.log.info({ keyId: created.id, role: created.role, by: request.principal?.keyId }, 'API key created');
        return reply.code(201).send({ ...view(created), key: created.key });
      } catch (err) {
        if (err instanceof ApiKeyInputError) throw new ApiError(400, err.message);
        throw err;
      }
    },
  });

  r.get('/v1/api-keys', {
    config: { access: 'admin' },
    schema: {
      tags: ['api keys'],
      summary: 'List API keys, revoked ones included (admin). Keys themselves are never stored.',
      response: { 200: z.object({ keys: z.array(apiKeySchema) }), ...errors },
    },
    handler: async () => ({ keys: (await listApiKeys(deps.prisma)).map(view) }),
  });

  r.post('/v1/api-keys/:id/revoke', {
    config: { access: 'admin' },
    schema: {
      tags: ['api keys'],
      summary: 'Revoke an API key (admin); takes effect on its next request',
      params: z.object({ id: z.uuid() }),
      response: { 200: apiKeySchema, 404: errorResponseSchema, ...errors },
    },
    handler: async (request) => {
      const revoked = await revokeApiKey(deps.prisma, request.params.id);
      if (!revoked) throw notFound(`API key ${request.params.id}`);
      request.log.info({ keyId: revoked.id, by: request.principal?.keyId }, 'API key revoked');
      return view(revoked);
    },
  });
};
