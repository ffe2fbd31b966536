import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { callTemporal, TEMPORAL_RETRY_AFTER_SECONDS } from './temporal-calls';
import { unavailable } from './errors';

// Work the API waits for (a smoke test) needs a worker that runs workflows and one that runs activities on
// the task queue: without them the request would hang, so it is answered 503 at once instead. Temporal
// lists the pollers it saw in the last minutes (a worker killed just now may still be listed).

const { TaskQueueType } = temporal.api.enums.v1;

/** Throws 503 naming what is missing unless workers poll `taskQueue` for workflow and activity tasks. */
export async function requirePollingWorkers(client: Client, taskQueue: string): Promise<void> {
  const pollers = (type: temporal.api.enums.v1.TaskQueueType) =>
    callTemporal(client, 'nothing was started', () =>
      client.workflowService.describeTaskQueue({
        namespace: client.options.namespace,
        taskQueue: { name: taskQueue },
        taskQueueType: type,
      }),
    ).then((answer) => answer.pollers?.length ?? 0);
  const [workflows, activities] = await Promise.all([
    pollers(TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW),
    pollers(TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY),
  ]);
  const missing = [workflows ? null : 'workflow', activities ? null : 'activity'].filter(Boolean);
  if (missing.length)
    throw unavailable(
      `no worker polls task queue ${taskQueue} for ${missing.join(' or ')} tasks: start a worker (npm start runs one)`,
      TEMPORAL_RETRY_AFTER_SECONDS,
    );
}
