// Small helpers every bench uses: logging, timing, statistics, ports, the machine it ran on.
import net from 'node:net';
import os from 'node:os';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
export const round = (n, digits = 1) => (n == null || Number.isNaN(n) ? null : Number(n.toFixed(digits)));
export const mib = (kb) => (kb == null || Number.isNaN(kb) ? null : round(kb / 1024));

/** A logger whose lines name the bench and the time of day. */
export const logger = (name) => (line) =>
  console.log(`[bench:${name} ${new Date().toISOString().slice(11, 19)}] ${line}`);

/** The nearest-rank percentile (p in 0–100) of a list of numbers; null for an empty list. */
export function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
export const median = (values) => percentile(values, 50);

/** A positive integer from an environment variable or argument, with a clear error otherwise. */
export function positiveInt(value, name) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer (got ${value})`);
  return n;
}
/** A comma-separated list of positive integers, e.g. "10,50,200". */
export const positiveList = (value, name) =>
  String(value)
    .split(',')
    .map((v) => positiveInt(v.trim(), name));

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export const loadavg = () => os.loadavg().map((l) => round(l, 2));

export function machine() {
  return {
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model,
    memoryGiB: round(os.totalmem() / 1024 ** 3),
    availableMemoryGiB: round(os.freemem() / 1024 ** 3),
  };
}
