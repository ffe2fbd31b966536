import os from 'node:os';
import { ConfigError, loadConfig } from '../../config/service-config';

// What a worker process runs (WORKER_ROLE), how many heavy activities at once (WORKER_ACTIVITY_CONCURRENCY)
// and how long they may finish after SIGTERM (SHUTDOWN_GRACE_SECONDS).

test('a worker runs loops and activities, 4 activities per core, and drains for 300 s, unless told otherwise', () => {
  expect(loadConfig({}).worker).toEqual({
    role: 'all',
    activityConcurrency: 4 * os.availableParallelism(),
    shutdownGraceSeconds: 300,
    workflowsHeapMb: 512,
  });
  expect(
    loadConfig({ WORKER_ROLE: 'workflows', WORKER_ACTIVITY_CONCURRENCY: '3', SHUTDOWN_GRACE_SECONDS: '0' }).worker,
  ).toEqual({
    role: 'workflows',
    activityConcurrency: 3,
    shutdownGraceSeconds: 0,
    workflowsHeapMb: 512,
  });
  expect(loadConfig({ WORKER_ROLE: 'activities' }).worker.role).toBe('activities');
});

test('an unknown role or a concurrency below 1 is a configuration error naming the variable', () => {
  expect(() => loadConfig({ WORKER_ROLE: 'everything' })).toThrow(ConfigError);
  expect(() => loadConfig({ WORKER_ROLE: 'everything' })).toThrow(/WORKER_ROLE/);
  expect(() => loadConfig({ WORKER_ACTIVITY_CONCURRENCY: '0' })).toThrow(/WORKER_ACTIVITY_CONCURRENCY/);
  expect(() => loadConfig({ SHUTDOWN_GRACE_SECONDS: '-1' })).toThrow(/SHUTDOWN_GRACE_SECONDS/);
  expect(() => loadConfig({ SHUTDOWN_GRACE_SECONDS: 'soon' })).toThrow(/SHUTDOWN_GRACE_SECONDS/);
});
