import type { PrismaClient } from '../prisma/client';
import type { ServiceConfig } from '../service/config';

/** What activities are built from (injected once when the worker starts). */
export interface ActivityDeps {
  prisma: PrismaClient;
  config: Readonly<ServiceConfig>;
}
