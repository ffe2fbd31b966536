import os from 'node:os';
import { ConfigError, loadConfig } from '../../config/service-config';

// What a worker process runs (WORKER_ROLE) and how many heavy activities at once (WORKER_ACTIVITY_CONCURRENCY).

test('a worker runs loops and activities, 4 activities per core, unless told otherwise', () => {
  expect(loadConfig({}).worker).toEqual({ role: 'all', activityConcurrency: 4 * os.availableParallelism() });
  expect(loadConfig({ WORKER_ROLE: 'workflows', WORKER_ACTIVITY_CONCURRENCY: '3' }).worker).toEqual({
    role: 'workflows',
    activityConcurrency: 3,
  });
  expect(loadConfig({ WORKER_ROLE: 'activities' }).worker.role).toBe('activities');
});

test('an unknown role or a concurrency below 1 is a configuration error naming the variable', () => {
  expect(() => loadConfig({ WORKER_ROLE: 'everything' })).toThrow(ConfigError);
  expect(() => loadConfig({ WORKER_ROLE: 'everything' })).toThrow(/WORKER_ROLE/);
  expect(() => loadConfig({ WORKER_ACTIVITY_CONCURRENCY: '0' })).toThrow(/WORKER_ACTIVITY_CONCURRENCY/);
});
