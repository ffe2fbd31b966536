import type { Client } from '@temporalio/client';

/**
 * A Temporal client for API tests that need no server: workflow starts are pushed onto `started` (their
 * options as given) and answered with a run id; nothing runs.
 */
export function recordingTemporal(started: unknown[]): Client {
  const client = {
    workflow: {
      start: (_name: string, options: unknown) => {
        started.push(options);
        return Promise.resolve({ firstExecutionRunId: `run-${started.length}` });
      },
    },
    withDeadline: <T>(_deadline: number, call: () => Promise<T>) => call(),
  };
  return client as unknown as Client;
}
