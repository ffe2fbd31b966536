import type { FastifyInstance } from 'fastify';

// One line per request would drown everything else at info (two were 65 % of all lines), so requests are
// logged at debug (LOG_LEVEL=debug shows them), and only an answer of 5xx is logged at warn. Build the app
// with Fastify's own request logging off (`disableRequestLogging`); errors are logged where they are handled
// (errors.ts). Every line carries the request id (`reqId`), as the `requestId` of the error answer does.

export function registerRequestLogging(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    request.log.debug({ req: request }, 'incoming request');
  });
  app.addHook('onResponse', async (request, reply) => {
    const fields = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (reply.statusCode >= 500) request.log.warn(fields, 'request answered with a server error');
    else request.log.debug(fields, 'request completed');
  });
}
