import { execFileSync } from 'node:child_process';
import { ConfigError, loadConfig } from '../../config/service-config';
import {
  cacheSizeForHeap,
  MAX_CACHED_LOOPS,
  MIN_CACHED_LOOPS,
  workerNodeArgs,
  workflowCacheSize,
} from '../../service/worker-memory';

// The workflows worker's memory bound: the heap limit the launcher starts it with
// (WORKFLOWS_WORKER_HEAP_MB) and the workflow cache derived from it unless WORKER_MAX_CACHED_WORKFLOWS says.

/** The heap limit (MB) a Node process started with these options reports, as the worker reads its own. */
function heapLimitOfNodeWith(nodeArgs: string[]): number {
  const bytes = execFileSync(
    process.execPath,
    [...nodeArgs, '-p', 'require("node:v8").getHeapStatistics().heap_size_limit'],
    {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    },
  );
  return Math.round(Number(bytes) / 1024 ** 2);
}

test('by default the workflows worker gets a 512 MB heap and a cache derived from it; other workers get no limit', () => {
  const config = loadConfig({});
  expect(config.worker.workflowsHeapMb).toBe(512);
  expect(config.temporal.maxCachedWorkflows).toBeNull();
  expect(workerNodeArgs('workflows', config)).toEqual(['--max-old-space-size=512']);
  // The activities worker passes large diffs and gate output; a one-process worker runs them too.
  expect(workerNodeArgs('activities', config)).toEqual([]);
  expect(workerNodeArgs('all', config)).toEqual([]);
});

test('the cache fits the heap limit the options really give, or a smaller one the process has', () => {
  const config = loadConfig({});
  const heapMb = heapLimitOfNodeWith(workerNodeArgs('workflows', config));
  // V8 adds its young generation to the old-space limit the flag sets.
  expect(heapMb).toBeGreaterThanOrEqual(512);
  expect(heapMb).toBeLessThan(640);
  expect(workflowCacheSize(config, heapMb)).toBe(200);
  // Started without the flag (Node's default, 4 GiB here): the cache it would have with it.
  expect(workflowCacheSize(config, heapLimitOfNodeWith([]))).toBe(200);
  // Started with less heap than configured: what that holds.
  const smaller = heapLimitOfNodeWith(['--max-old-space-size=256']);
  expect(workflowCacheSize(config, smaller)).toBe(cacheSizeForHeap(smaller));
  expect(workflowCacheSize(config, smaller)).toBeLessThan(100);
  // More heap configured and given: more cache.
  const bigger = loadConfig({ WORKFLOWS_WORKER_HEAP_MB: '1024' });
  expect(workflowCacheSize(bigger, heapLimitOfNodeWith(workerNodeArgs('workflows', bigger)))).toBe(456);
  expect(cacheSizeForHeap(64)).toBe(MIN_CACHED_LOOPS);
  expect(cacheSizeForHeap(65_536)).toBe(MAX_CACHED_LOOPS);
});

test('WORKER_MAX_CACHED_WORKFLOWS, when set, is the cache whatever the heap; empty means unset', () => {
  expect(workflowCacheSize(loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '50' }), 4144)).toBe(50);
  expect(workflowCacheSize(loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '0' }), 560)).toBe(0);
  expect(loadConfig({ WORKER_MAX_CACHED_WORKFLOWS: '' }).temporal.maxCachedWorkflows).toBeNull();
  const bigger = loadConfig({ WORKFLOWS_WORKER_HEAP_MB: '1024' });
  expect(workerNodeArgs('workflows', bigger)).toEqual(['--max-old-space-size=1024']);
});

test.each([
  ['WORKFLOWS_WORKER_HEAP_MB', '100'],
  ['WORKFLOWS_WORKER_HEAP_MB', 'lots'],
  ['WORKFLOWS_WORKER_HEAP_MB', '512.5'],
  ['WORKER_MAX_CACHED_WORKFLOWS', '-1'],
  ['WORKER_MAX_CACHED_WORKFLOWS', 'many'],
])('%s=%s is a configuration error naming the variable', (name, value) => {
  expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}:`));
});
