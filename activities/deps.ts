import type { PrismaClient } from '../store/db';
import type { ServiceConfig } from '../config/service-config';
import type { Sandbox } from './sandbox/types';

/** What activities are built from (injected once when the worker starts). */
export interface ActivityDeps {
  prisma: PrismaClient;
  config: Readonly<ServiceConfig>;
  /** How every untrusted command is confined. */
  sandbox: Sandbox;
}
