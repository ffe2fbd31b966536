import { isConnectFailure, isUnavailableSqlState } from '../prisma/connect-failures';

// What a failed query says, for people: whether the database could not be reached (an outage the
// caller waits out: activities retry, the API answers 503), and a sentence without the client's
// internals (the call that failed, the caller's source lines, the driver's structures).

const PRISMA_ERRORS = new Set([
  'PrismaClientKnownRequestError',
  'PrismaClientUnknownRequestError',
  'PrismaClientInitializationError',
  'PrismaClientRustPanicError',
  'PrismaClientValidationError',
]);

/** Prisma's codes for a server it cannot reach, a connection it lost or a pool it waited too long for. */
const UNREACHABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);

/** The pg adapter's kinds for the same (@prisma/driver-adapter-utils). */
const UNREACHABLE_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'SocketTimeout', 'TooManyConnections']);

export const DATABASE_UNREACHABLE = 'the database could not be reached';

interface ErrorFields {
  name?: unknown;
  code?: unknown;
  meta?: { driverAdapterError?: { cause?: { kind?: unknown; code?: unknown } } };
}

/** Whether `err`, or an error it was caused by, says the database cannot be reached now. */
export function isDatabaseUnreachable(err: unknown): boolean {
  const seen = new Set<unknown>();
  // Duck-typed, like the errors' causes: some come from another realm (Node's own, under Jest).
  for (let e = err; typeof e === 'object' && e !== null && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    const { name, code, meta } = e as ErrorFields;
    if (name === 'PrismaClientInitializationError') return true;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
    const driver = meta?.driverAdapterError?.cause;
    if (driver && typeof driver.kind === 'string' && UNREACHABLE_KINDS.has(driver.kind)) return true;
    if (driver?.kind === 'postgres' && isUnavailableSqlState(driver.code)) return true;
    if (isConnectFailure(e)) return true;
  }
  return false;
}

/**
 * A sentence for a failed query: that the database could not be reached, or what the database refused
 * (the last line of the client's message, which follows the call and the caller's code); null for an
 * error that is not the database's.
 */
export function describeDatabaseError(err: unknown): string | null {
  if (isDatabaseUnreachable(err)) return DATABASE_UNREACHABLE;
  if (!(err instanceof Error) || !PRISMA_ERRORS.has(err.name)) return null;
  const said = err.message
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .at(-1);
  return said ? `a database operation failed: ${said}` : 'a database operation failed';
}
