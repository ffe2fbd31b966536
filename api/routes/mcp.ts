import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyPluginAsync } from 'fastify';
import { ApiClient } from '../../cli/api-client';
import { createMcpServer } from '../../mcp/server';
import { presentedKey } from '../auth/auth-plugin';
import { ownBaseUrl } from '../own-address';

// The MCP server over streamable HTTP (docs/mcp.md): POST /mcp, stateless (a server and transport per
// request, so any API process can answer any request). Any valid API key may connect; each tool calls
// the REST route it stands for on this same process with the caller's key, so the route's role, rate
// limit and checks apply as they do to a REST client. (Over loopback HTTP rather than fastify's inject:
// inject loads an ECMAScript-module-only dependency that jest's CommonJS runtime cannot.)

/** How often wait_for_loop reads the loop. */
const POLL_INTERVAL_MS = 1000;

export const mcpRoutes: FastifyPluginAsync = async (app) => {
  // Closing the app waits for open requests: long waits end at once (outcome "interrupted") instead.
  const stopping = new AbortController();
  app.addHook('preClose', async () => stopping.abort());

  app.post('/mcp', {
    config: { access: 'authenticated' },
    // JSON-RPC, not a REST resource: documented in docs/mcp.md, left out of the OpenAPI document.
    schema: { hide: true },
    handler: async (request, reply) => {
      const key = presentedKey(request);
      if (typeof key !== 'string') throw new Error('POST /mcp reached its handler without an API key');
      const api = new ApiClient(ownBaseUrl(app), key);
      const server = createMcpServer({ api, stopping: stopping.signal, pollIntervalMs: POLL_INTERVAL_MS });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      // The transport writes the answer (JSON or an event stream) itself.
      reply.hijack();
      reply.raw.once('close', () => void server.close());
      try {
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (err) {
        // The SDK answers protocol errors itself; this is a bug. Hijacked, so the error handler cannot answer.
        request.log.error({ err }, 'MCP request failed');
        if (!reply.raw.headersSent)
          reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              jsonrpc: '2.0',
              error: { code: -32603, message: `internal error; see the server log for request ${request.id}` },
              id: null,
            }),
          );
      }
    },
  });

  // Stateless: no stream of server-initiated messages to GET, no session to DELETE.
  app.route({
    method: ['GET', 'DELETE'],
    url: '/mcp',
    config: { access: 'authenticated' },
    schema: { hide: true },
    handler: async (request, reply) =>
      reply
        .code(405)
        .header('allow', 'POST')
        .send({
          statusCode: 405,
          error: 'Method Not Allowed',
          message: `${request.method} /mcp is not supported: this MCP server is stateless; send JSON-RPC with POST /mcp`,
          requestId: request.id,
        }),
  });
};
