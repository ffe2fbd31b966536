// Node's socket error codes for a peer that cannot be reached now (refused, reset, timed out, its host
// not found for now): nothing about the request is wrong, and it works once the peer is back. One list
// for the database's connections (prisma/connect-failures.ts) and the model provider's (llm-maker.ts).
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
