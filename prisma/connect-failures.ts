import { NETWORK_ERROR_CODES } from '../domain/network-errors';

// What pg says when the database cannot be reached now, as opposed to a query it refused: nothing
// about the request is wrong, and the same request works once the server is back.

/**
 * PostgreSQL's SQLSTATEs for the same: class 08 (connection exception), 57P01–57P03 (shut down by an
 * administrator or a crash, or not accepting connections yet: starting up or shutting down) and 53300
 * (too many connections).
 */
export function isUnavailableSqlState(code: unknown): boolean {
  return typeof code === 'string' && (code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code));
}

/** pg's own words for a connection that broke, or a pool that could not open one in time. */
const LOST_CONNECTION =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * The error of a connection that could not be opened or was lost: the database is unreachable now.
 * Duck-typed: socket errors come from Node's own realm, where `instanceof Error` of a sandbox (Jest's) fails.
 */
export function isConnectFailure(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  return (
    (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) ||
    isUnavailableSqlState(code) ||
    (typeof message === 'string' && LOST_CONNECTION.test(message))
  );
}
