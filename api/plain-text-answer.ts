import type { FastifySerializerCompiler } from 'fastify/types/schema';

/** For a route whose 200 is plain text (a patch, a diff): that text as it is, its errors as JSON like every answer. */
export const plainTextOn200: FastifySerializerCompiler<unknown> =
  ({ httpStatus }) =>
  (data) =>
    httpStatus === '200' ? String(data) : JSON.stringify(data);
