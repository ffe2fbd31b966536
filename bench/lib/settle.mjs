// The machine's state around a latency measurement. What ran just before (another bench's stack torn
// down and its files deleted, a burst of loops) can leave the disk busy, and every accepted loop is a
// durable commit: a request that lands in that storm waits for the disk, not for the service. settle()
// waits for quiet; startDiskProbe() records the disk's own latency while a measurement runs, so the
// figure can be read against it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { machineCpuSeconds } from './proc.mjs';
import { percentile, round, sleep } from './util.mjs';

const WINDOW_MS = 500;
const PROBE_EVERY_MS = 50;
const PAGE = Buffer.alloc(4096, 1);

const dirtyKb = () => Number(fs.readFileSync('/proc/meminfo', 'utf8').match(/^Dirty:\s+(\d+) kB/m)?.[1] ?? NaN);

/**
 * One 4 KB write and fdatasync to `file` (a FileHandle, off the event loop), in ms: what a durable commit
 * waits for at the least.
 */
async function syncedWriteMs(file) {
  const started = performance.now();
  await file.write(PAGE, 0, PAGE.length, 0);
  await file.datasync();
  return performance.now() - started;
}

/**
 * Flushes dirty pages (`sync`), then waits until two half-second windows in a row have the machine's CPU
 * under `maxBusy` (share of all cores), I/O wait under `maxIowait` and every synced 4 KB write (one each
 * 50 ms, in `dir`) under `maxSyncMs` — or `limitMs` passes. Returns what it saw, for the result file.
 */
export async function settle(dir, { maxBusy = 0.1, maxIowait = 0.02, maxSyncMs = 30, limitMs = 60_000 } = {}) {
  const started = Date.now();
  const dirtyBeforeKb = dirtyKb();
  execFileSync('sync');
  const file = await fs.promises.open(path.join(dir, 'settle-probe'), 'w');
  let quietWindows = 0;
  let last = { busy: null, iowait: null, syncMaxMs: null };
  try {
    while (Date.now() - started < limitMs) {
      const before = machineCpuSeconds();
      let syncMaxMs = 0;
      for (let t = 0; t < WINDOW_MS; t += PROBE_EVERY_MS) {
        syncMaxMs = Math.max(syncMaxMs, await syncedWriteMs(file));
        await sleep(PROBE_EVERY_MS);
      }
      const after = machineCpuSeconds();
      const all = after.all - before.all || (os.cpus().length * WINDOW_MS) / 1000;
      last = { busy: (after.busy - before.busy) / all, iowait: (after.iowait - before.iowait) / all, syncMaxMs };
      quietWindows = last.busy < maxBusy && last.iowait < maxIowait && syncMaxMs < maxSyncMs ? quietWindows + 1 : 0;
      if (quietWindows === 2) break;
    }
  } finally {
    await file.close();
  }
  return {
    settled: quietWindows === 2,
    seconds: round((Date.now() - started) / 1000),
    dirtyBeforeMiB: round(dirtyBeforeKb / 1024),
    lastWindow: {
      busyShare: round(last.busy, 3),
      iowaitShare: round(last.iowait, 3),
      syncedWriteMaxMs: round(last.syncMaxMs),
    },
  };
}

/**
 * Times a synced 4 KB write (in `dir`) every `everyMs` until stop(), which resolves to its percentiles in ms:
 * the disk's latency while a measurement ran beside it.
 */
export async function startDiskProbe(dir, everyMs = 100) {
  const file = await fs.promises.open(path.join(dir, 'disk-probe'), 'w');
  const samples = [];
  let running = true;
  const probing = (async () => {
    while (running) {
      samples.push(await syncedWriteMs(file));
      await sleep(everyMs);
    }
  })();
  return async () => {
    running = false;
    await probing;
    await file.close();
    return {
      samples: samples.length,
      p50Ms: round(percentile(samples, 50), 2),
      p95Ms: round(percentile(samples, 95)),
      p99Ms: round(percentile(samples, 99)),
      maxMs: round(Math.max(0, ...samples)),
      over100Ms: samples.filter((ms) => ms > 100).length,
    };
  };
}
