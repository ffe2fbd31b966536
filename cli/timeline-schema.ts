import { z } from 'zod';

// The documented shape of timeline events (GET /v1/loops/:id/timeline, GET /v1/loops/:id/events), checked so
// a server that answers differently gets a clear message, not a crash.

export const timelineEventSchema = z.looseObject({
  at: z.string(),
  kind: z.string(),
  iteration: z.number().nullable(),
  title: z.string(),
  durationMs: z.number().nullable(),
  detail: z.record(z.string(), z.unknown()),
});

export const timelineSchema = z.looseObject({
  loopId: z.string(),
  status: z.string(),
  phase: z.string(),
  events: z.array(timelineEventSchema),
});

/** `events.3.at: expected string; …`: where an answer departs from the schema. */
export function shapeProblems(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || 'answer'}: ${i.message}`)
    .join('; ');
}
