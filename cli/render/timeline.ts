import type { Timeline } from '../api-types';
import { dateTime, duration, table } from './format';

// `timeline`: one line per event — time, kind, iteration, title, duration.

export function timelineText(timeline: Timeline): string {
  const head = `loop ${timeline.loopId}  ${timeline.status} (phase ${timeline.phase})`;
  if (!timeline.events.length) return `${head}\nno events yet`;
  const rows = timeline.events.map((e) => [
    dateTime(e.at),
    e.kind,
    e.iteration === null ? '-' : `#${e.iteration}`,
    e.durationMs === null ? '-' : duration(e.durationMs),
    e.title,
  ]);
  return `${head}\n${table(['TIME', 'KIND', 'ITER', 'DURATION', 'TITLE'], rows)}`;
}
