// The worker and the API as their own processes from dist (service/worker-main.js, service/api-main.js),
// so each one's memory is its own and a worker can be killed like a crashed machine.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { distPath } from './dist.mjs';
import { percentile, sleep } from './util.mjs';

const START_LIMIT_MS = 120_000;

/**
 * Spawns `node <nodeArgs> <entry>` with only `env` (plus PATH and HOME), keeps the last 100 log lines and
 * groups warnings and errors by what they say (ids and numbers taken out), with an example of each.
 */
function spawnService(entry, env, nodeArgs = []) {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, distPath(entry)], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail = [];
  const problems = new Map();
  const slowTasksMs = [];
  const waiters = [];
  const onLine = (raw) => {
    const line = raw.replace(/\x1b\[[0-9;]*m/g, '');
    if (!line.trim()) return;
    tail.push(line);
    if (tail.length > 100) tail.shift();
    for (const w of waiters) if (!w.at && line.includes(w.text)) w.at = performance.now();
    if (/error|fail|warn|exception|out of memory/i.test(line)) {
      const duration = line.match(/workflow_task_duration=(\d+)/);
      if (duration) slowTasksMs.push(Number(duration[1]));
      const kind = line
        .replace(/^\S+Z\s+/, '')
        .replace(/[0-9a-f]{8}-[0-9a-f-]{27}[^\s]*/g, '<id>')
        .replace(/\d+/g, '#')
        .slice(0, 160);
      const group = problems.get(kind) ?? { count: 0, example: line.slice(0, 600) };
      group.count += 1;
      problems.set(kind, group);
    }
  };
  let partial = '';
  const onData = (chunk) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop();
    lines.forEach(onLine);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  let exit = null;
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve((exit = { code, signal }))));

  return {
    pid: child.pid,
    spawnedAt,
    exit: () => exit,
    tail: () => tail.slice(),
    /** Resolves with the time (performance.now()) a log line containing `text` appeared. */
    async waitForLine(text, what) {
      const waiter = { text, at: tail.some((l) => l.includes(text)) ? performance.now() : null };
      waiters.push(waiter);
      const deadline = performance.now() + START_LIMIT_MS;
      while (!waiter.at) {
        if (exit) throw new Error(`${what} exited during start-up (${JSON.stringify(exit)}):\n${tail.join('\n')}`);
        if (performance.now() > deadline)
          throw new Error(`${what} did not get ready in ${START_LIMIT_MS / 1000} s:\n${tail.join('\n')}`);
        await sleep(20);
      }
      return waiter.at;
    },
    problems: () => ({
      count: [...problems.values()].reduce((total, g) => total + g.count, 0),
      slowWorkflowTasks: slowTasksMs.length
        ? { count: slowTasksMs.length, medianMs: percentile(slowTasksMs, 50), maxMs: Math.max(...slowTasksMs) }
        : null,
      kinds: [...problems.values()].sort((a, b) => b.count - a.count).slice(0, 20),
    }),
    /** SIGKILL: no clean-up at all, like a crashed machine. */
    kill: async () => {
      if (!exit) child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (exit) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * A worker; resolves once it logged "worker ready" (its Temporal worker is created and about to poll).
 * `nodeArgs`: Node's options before the script, as the launcher gives them (service/worker-memory.ts).
 */
export async function startWorker(env, nodeArgs = []) {
  const worker = spawnService('service/worker-main.js', env, nodeArgs);
  // One that never got ready is not left running.
  worker.readyAt = await worker.waitForLine('worker ready', 'the worker').catch(async (err) => {
    await worker.kill();
    throw err;
  });
  worker.startSeconds = (worker.readyAt - worker.spawnedAt) / 1000;
  return worker;
}

/** The API; resolves once GET /readyz answers 200 (database and Temporal reachable). */
export async function startApi(env, port) {
  const api = spawnService('service/api-main.js', { ...env, API_HOST: '127.0.0.1', API_PORT: String(port) });
  api.baseUrl = `http://127.0.0.1:${port}`;
  const deadline = performance.now() + START_LIMIT_MS;
  for (;;) {
    if (api.exit())
      throw new Error(`the API exited during start-up (${JSON.stringify(api.exit())}):\n${api.tail().join('\n')}`);
    const ok = await fetch(`${api.baseUrl}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (performance.now() > deadline) {
      await api.kill();
      throw new Error(`the API did not get ready:\n${api.tail().join('\n')}`);
    }
    await sleep(100);
  }
  api.startSeconds = (performance.now() - api.spawnedAt) / 1000;
  return api;
}
