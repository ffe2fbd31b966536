import type { PrismaClient } from '../prisma/client';
import { notFound } from './errors';

export type LoopRow = Awaited<ReturnType<PrismaClient['loop']['findUniqueOrThrow']>>;

/** The loop a `/v1/loops/:id` route names, or 404. */
export async function loadLoop(prisma: PrismaClient, id: string): Promise<LoopRow> {
  const loop = await prisma.loop.findUnique({ where: { id } });
  if (!loop) throw notFound(`loop ${id}`);
  return loop;
}
