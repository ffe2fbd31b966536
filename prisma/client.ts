import { PrismaPg } from '@prisma/adapter-pg';
import type { PoolConfig } from 'pg';
import { Prisma, PrismaClient } from './generated/client';
import { WaitingPool, type ConnectWait } from './waiting-pool';

// The one way the service builds a Prisma client: the generated client (JS query compiler, no native
// engine) talking to Postgres through @prisma/adapter-pg. Run `npx prisma generate` first (setup.sh does).
export { Prisma, PrismaClient };
export type { ConnectWait };

/**
 * The connection pool's settings. A few idle connections stay open: pg closes every idle one after 10 s
 * by default, so a loop submitted after a quiet spell paid for new connections in the API and both
 * workers, each a new PostgreSQL backend with cold catalog caches — measured about 0.1 s more per loop
 * started after 12 s idle. Connections beyond `min` (a burst of loops) still close after those 10 s.
 * Idle ones do not keep a process from exiting (allowExitOnIdle), and one that breaks while idle (a
 * database restart) leaves the pool, which opens another when asked.
 */
const POOL_SETTINGS = { min: 4, allowExitOnIdle: true } as const satisfies PoolConfig;

/** `wait`: how connections wait for an unreachable database (waiting-pool.ts); without it they fail at once. */
export function createPrismaClient(databaseUrl: string, wait?: ConnectWait): PrismaClient {
  const config = { connectionString: databaseUrl, ...POOL_SETTINGS };
  const adapter = wait
    ? new PrismaPg(new WaitingPool(config, wait), { disposeExternalPool: true })
    : new PrismaPg(config);
  return new PrismaClient({ adapter });
}
