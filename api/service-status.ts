import { z } from 'zod';
import { unavailable } from './errors';

// What `npm start`'s main process (service/main.ts) tells its API child about the service as a whole:
// the state of the embedded PostgreSQL and Temporal dev server it supervises, and whether it is stopping.
// Sent over the child's IPC channel on every change and on each (re)start of the API; an API run on its
// own (docker-compose) has no channel and reports none of this.

export const dependencyStateSchema = z.object({
  /** up: running; restarting: it died and is being restarted (with backoff); stopped: the service stopped it. */
  state: z.enum(['up', 'restarting', 'stopped']),
  /** When it entered this state (ISO 8601). */
  since: z.string(),
  /** Restart attempts made since it died (0 while up). */
  attempts: z.number().int().min(0),
  /** How many times it was restarted since the service started. */
  restarts: z.number().int().min(0),
  /** How it last died, e.g. "signal SIGKILL"; null if it never did. */
  lastExit: z.string().nullable(),
});
export type DependencyState = z.infer<typeof dependencyStateSchema>;

export const serviceStatusSchema = z.object({
  /** The service is shutting down: running activities drain, new loops are refused. */
  stopping: z.boolean(),
  /** null: not run by this service (an external DATABASE_URL / TEMPORAL_ADDRESS). */
  dependencies: z.object({ postgres: dependencyStateSchema.nullable(), temporal: dependencyStateSchema.nullable() }),
});
export type ServiceStatus = z.infer<typeof serviceStatusSchema>;

const messageSchema = z.object({ serviceStatus: serviceStatusSchema });

/** The message main sends its API child. */
export function serviceStatusMessage(status: ServiceStatus): z.infer<typeof messageSchema> {
  return { serviceStatus: status };
}

/**
 * The latest status the parent sent, or null without an IPC channel (or before the first message). A
 * message that does not parse is ignored: the channel is the service's own, so it means a version skew.
 */
export function listenForServiceStatus(proc: NodeJS.Process = process): () => ServiceStatus | null {
  let latest: ServiceStatus | null = null;
  if (!proc.send) return () => null;
  proc.on('message', (message: unknown) => {
    const parsed = messageSchema.safeParse(message);
    if (parsed.success) latest = parsed.data.serviceStatus;
  });
  // The channel must not keep the API alive by itself: it stops on a signal or when orphaned.
  proc.channel?.unref();
  return () => latest;
}

/** Retry-After of a loop refused while the service stops: about what a restart takes. */
const STOPPING_RETRY_AFTER_SECONDS = 30;

/** New loops are refused (503) once the service is stopping: its workers take no new work while they drain. */
export function refuseWhileStopping(deps: { serviceStatus: () => ServiceStatus | null }): void {
  if (!deps.serviceStatus()?.stopping) return;
  throw unavailable(
    'the service is shutting down and takes no new loops; send the same request again (with its Idempotency-Key, if any) once it is back',
    STOPPING_RETRY_AFTER_SECONDS,
  );
}
