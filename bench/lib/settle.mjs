// Waits for the machine to go quiet before a latency measurement: what ran just before (another bench's
// stack torn down, its files deleted, a burst of loops) leaves dirty pages to write back and processes
// finishing, and a request that lands in that write-back waits for the disk, not for the service.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { round, sleep } from './util.mjs';

const WINDOW_MS = 500;

/** Core-seconds busy and waiting for I/O, from /proc/stat's first line (cpu user nice system idle iowait irq softirq steal). */
function cpuSeconds() {
  const [, user, nice, system, idle, iowait, irq, softirq, steal] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const perSecond = 100; // USER_HZ on Linux
  return { busy: (user + nice + system + irq + softirq + steal) / perSecond, iowait: iowait / perSecond, all: (user + nice + system + idle + iowait + irq + softirq + steal) / perSecond };
}

const dirtyKb = () => Number(fs.readFileSync('/proc/meminfo', 'utf8').match(/^Dirty:\s+(\d+) kB/m)?.[1] ?? NaN);

/**
 * Flushes dirty pages (`sync`), then waits until two half-second windows in a row have the machine's CPU
 * under `maxBusy` (share of all cores) and I/O wait under `maxIowait`, or `limitMs` passes. Returns what
 * it saw, for the result file: whether it settled, how long it took, and the last window's shares.
 */
export async function settle({ maxBusy = 0.1, maxIowait = 0.02, limitMs = 60_000 } = {}) {
  const started = Date.now();
  const dirtyBeforeKb = dirtyKb();
  execFileSync('sync');
  let quietWindows = 0;
  let last = { busy: null, iowait: null };
  while (Date.now() - started < limitMs) {
    const before = cpuSeconds();
    await sleep(WINDOW_MS);
    const after = cpuSeconds();
    const all = after.all - before.all || (os.cpus().length * WINDOW_MS) / 1000;
    last = { busy: (after.busy - before.busy) / all, iowait: (after.iowait - before.iowait) / all };
    quietWindows = last.busy < maxBusy && last.iowait < maxIowait ? quietWindows + 1 : 0;
    if (quietWindows === 2) break;
  }
  return {
    settled: quietWindows === 2,
    seconds: round((Date.now() - started) / 1000),
    dirtyBeforeMiB: round(dirtyBeforeKb / 1024),
    lastWindow: { busyShare: round(last.busy, 3), iowaitShare: round(last.iowait, 3) },
  };
}
