import { PrismaPg } from '@prisma/adapter-pg';
import { Prisma, PrismaClient } from './generated/client';

// The one way the service builds a Prisma client: the generated client (JS query compiler, no native
// engine) talking to Postgres through @prisma/adapter-pg. Run `npx prisma generate` first (setup.sh does).
export { Prisma, PrismaClient };

export function createPrismaClient(databaseUrl: string): PrismaClient {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl }) });
}
