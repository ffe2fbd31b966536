import type { PrismaClient } from '../store/db';
import { findLoop, type LoopRow } from '../store/loops';
import { notFound } from './errors';

export type { LoopRow };

/** The loop a `/v1/loops/:id` route names, or 404. */
export async function loadLoop(prisma: PrismaClient, id: string): Promise<LoopRow> {
  const loop = await findLoop(prisma, id);
  if (!loop) throw notFound(`loop ${id}`);
  return loop;
}
