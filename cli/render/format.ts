// Plain-text building blocks: tables, durations, times. Pure functions (times in the local zone; TZ decides).

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** 850ms, 4.2s, 3m 05s, 1h 02m. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
}

/** Milliseconds between two ISO times, or null when either is missing. */
export function between(start: string | null | undefined, end: string | null | undefined): number | null {
  if (!start || !end) return null;
  const ms = Date.parse(end) - Date.parse(start);
  return Number.isFinite(ms) ? ms : null;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** HH:MM:SS of an ISO time (or a Date), local time. */
export function clock(at: string | Date): string {
  const d = typeof at === 'string' ? new Date(at) : at;
  if (Number.isNaN(d.getTime())) return String(at);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** YYYY-MM-DD HH:MM:SS of an ISO time, local time; '-' for none. */
export function dateTime(at: string | null | undefined): string {
  if (!at) return '-';
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return at;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${clock(d)}`;
}

/** Cuts text to `max` characters with an ellipsis; flattens newlines. */
export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return flat.length > max ? `${flat.slice(0, Math.max(0, max - 1))}…` : flat;
}

/** "3 passed, 1 failed, 0 skipped" from a runner's counts. */
export function testCounts(
  counts: { passed?: number; failed?: number; skipped?: number } | null | undefined,
): string | null {
  if (!counts) return null;
  const parts = (['passed', 'failed', 'skipped'] as const)
    .filter((k) => typeof counts[k] === 'number')
    .map((k) => `${counts[k]} ${k}`);
  return parts.length ? parts.join(', ') : null;
}

/** The last `lines` lines of a text. */
export function tail(text: string, lines: number): string {
  const all = text.replace(/\n$/, '').split('\n');
  return all.length > lines ? all.slice(-lines).join('\n') : text.replace(/\n$/, '');
}

/** "timed out" / "cancelled" for a command that did not end by itself; null when it completed. */
export function abnormalEnd(timeoutStatus: string | null | undefined): string | null {
  if (!timeoutStatus || timeoutStatus === 'COMPLETED') return null;
  return timeoutStatus.toLowerCase().replace(/_/g, ' ');
}
