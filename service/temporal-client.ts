import { Client, Connection } from '@temporalio/client';
import { workflowClientInterceptors } from '../telemetry/tracing';
import { ensureSearchAttributes } from './temporal-dev-server';

/**
 * A Temporal client for the API, after making sure the loop's search attributes exist on the server.
 * When this process traces (telemetry/tracing.ts, started first), its calls carry trace context.
 */
export async function connectTemporalClient(address: string, namespace: string): Promise<Client> {
  const connection = await Connection.connect({ address });
  await ensureSearchAttributes(connection, namespace);
  return new Client({ connection, namespace, interceptors: { workflow: workflowClientInterceptors() } });
}
