// What a loop's Temporal history says: where the time went (task dispatch and processing, activity
// schedule-to-start and durations) and how big it is (events, payload bytes).
import protoModule from '@temporalio/proto';
import { round } from './util.mjs';

const { temporal } = protoModule;
const EventType = temporal.api.enums.v1.EventType;

/** All events of a loop's workflow (the latest run). */
export async function fetchLoopHistory(client, loopId) {
  return client.workflow.getHandle(`loop-${loopId}`).fetchHistory();
}

const num = (v) => (v == null ? 0 : typeof v === 'object' ? v.toNumber() : Number(v));
const timeMs = (event) => num(event.eventTime?.seconds) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;
const typeName = (event) => String(EventType[event.eventType] ?? event.eventType).replace(/^EVENT_TYPE_/, '');
/** The event's own attributes (exactly one `…EventAttributes` field is set). */
const attributesOf = (event) => Object.entries(event).find(([k, v]) => k.endsWith('EventAttributes') && v)?.[1] ?? {};

/** Bytes of payload data anywhere in a value (inputs, results, memo, search attributes, failures, markers). */
function payloadBytes(value, seen = new Set()) {
  if (!value || typeof value !== 'object' || seen.has(value)) return 0;
  seen.add(value);
  if (value instanceof Uint8Array) return 0;
  let total = 0;
  if ('metadata' in value && value.data instanceof Uint8Array) total += value.data.length;
  for (const child of Object.values(value))
    if (child && typeof child === 'object' && !(child instanceof Uint8Array)) total += payloadBytes(child, seen);
  return total;
}

/** Sizes: events, the history encoded as Temporal stores it, and the payload data in it. */
export function historySize(history) {
  return {
    events: history.events.length,
    encodedBytes: temporal.api.history.v1.History.encode(history).finish().length,
    payloadBytes: history.events.reduce((total, e) => total + payloadBytes(e), 0),
  };
}

/**
 * Where a loop's time went, in ms: workflow tasks (scheduled → started: dispatch; started → completed:
 * processing), activities by type (scheduled → started: waiting for a slot; started → closed: running),
 * local activities (markers: they run inside workflow tasks), and the whole run.
 */
export function historyTimings(history) {
  const byId = new Map();
  const workflowTasks = { count: 0, dispatchMs: 0, processingMs: 0, timedOut: 0 };
  const activities = {};
  let localActivities = 0;
  for (const event of history.events) {
    byId.set(num(event.eventId), event);
    const type = typeName(event);
    const a = attributesOf(event);
    if (type === 'WORKFLOW_TASK_STARTED') {
      workflowTasks.count += 1;
      workflowTasks.dispatchMs += timeMs(event) - timeMs(byId.get(num(a.scheduledEventId)));
    } else if (type === 'WORKFLOW_TASK_COMPLETED') {
      workflowTasks.processingMs += timeMs(event) - timeMs(byId.get(num(a.startedEventId)));
    } else if (type === 'WORKFLOW_TASK_TIMED_OUT') {
      workflowTasks.timedOut += 1;
    } else if (type === 'MARKER_RECORDED' && a.markerName === 'core_local_activity') {
      // Other markers are patches (patched()).
      localActivities += 1;
    } else if (
      ['ACTIVITY_TASK_COMPLETED', 'ACTIVITY_TASK_FAILED', 'ACTIVITY_TASK_TIMED_OUT', 'ACTIVITY_TASK_CANCELED'].includes(
        type,
      )
    ) {
      const scheduled = byId.get(num(a.scheduledEventId));
      const started = byId.get(num(a.startedEventId));
      const name = attributesOf(scheduled).activityType?.name ?? '?';
      const entry = (activities[name] ??= { count: 0, scheduleToStartMs: [], runMs: [], attempts: [] });
      entry.count += 1;
      if (started) {
        entry.scheduleToStartMs.push(timeMs(started) - timeMs(scheduled));
        entry.runMs.push(timeMs(event) - timeMs(started));
        entry.attempts.push(attributesOf(started).attempt ?? 1);
      }
    }
  }
  const first = history.events[0];
  const last = history.events.at(-1);
  return {
    totalMs: round(timeMs(last) - timeMs(first)),
    workflowTasks: {
      ...workflowTasks,
      dispatchMs: round(workflowTasks.dispatchMs),
      processingMs: round(workflowTasks.processingMs),
    },
    localActivities,
    activities,
  };
}

/** The first event after `afterMs` (epoch ms) recorded for the worker whose pid is `pid` (identity `pid@host`). */
export function firstEventOfWorker(history, pid, afterMs, types) {
  for (const event of history.events) {
    const type = typeName(event);
    if (timeMs(event) < afterMs || (types && !types.includes(type))) continue;
    if (String(attributesOf(event).identity ?? '').startsWith(`${pid}@`))
      return { type, atMs: timeMs(event), attempt: attributesOf(event).attempt ?? null };
  }
  return null;
}

/** Every event as [ms since the first, type, activity type or marker], for reading a history by eye. */
export function historyOutline(history) {
  const start = timeMs(history.events[0]);
  const scheduled = new Map();
  return history.events.map((event) => {
    const a = attributesOf(event);
    const type = typeName(event);
    if (type === 'ACTIVITY_TASK_SCHEDULED') scheduled.set(num(event.eventId), a.activityType?.name);
    const what = a.activityType?.name ?? scheduled.get(num(a.scheduledEventId)) ?? a.markerName ?? '';
    return [round(timeMs(event) - start, 0), type, what];
  });
}

export { timeMs as eventTimeMs };

/** Mean over the repetitions of each history figure (counts and summed milliseconds per loop). */
export function averageBreakdown(timings) {
  const mean = (pick) => round(timings.reduce((total, t) => total + pick(t), 0) / timings.length, 0);
  const sum = (values) => values.reduce((a, b) => a + b, 0);
  const names = [...new Set(timings.flatMap((t) => Object.keys(t.activities)))];
  const activities = Object.fromEntries(
    names.map((name) => [
      name,
      {
        count: mean((t) => t.activities[name]?.count ?? 0),
        scheduleToStartMs: mean((t) => sum(t.activities[name]?.scheduleToStartMs ?? [])),
        runMs: mean((t) => sum(t.activities[name]?.runMs ?? [])),
      },
    ]),
  );
  return {
    totalMs: mean((t) => t.totalMs),
    workflowTasks: {
      count: mean((t) => t.workflowTasks.count),
      dispatchMs: mean((t) => t.workflowTasks.dispatchMs),
      processingMs: mean((t) => t.workflowTasks.processingMs),
    },
    localActivities: mean((t) => t.localActivities),
    activityDispatchMs: round(sum(Object.values(activities).map((a) => a.scheduleToStartMs)), 0),
    activities,
  };
}
