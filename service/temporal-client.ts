import { Client, Connection } from '@temporalio/client';
import { workflowClientInterceptors } from '../telemetry/tracing';
import { ensureSearchAttributes } from './temporal-dev-server';

/**
 * A Temporal client for the API, after making sure the loop's search attributes exist on the server.
 * When this process traces (telemetry/tracing.ts, started first), its calls carry trace context.
 */
export async function connectTemporalClient(address: string, namespace: string): Promise<Client> {
  // After an outage (a restarted dev server) the channel tries again within 5 s, not grpc-js's default of up
  // to 2 min between attempts, so the API answers soon after Temporal is back.
  const connection = await Connection.connect({ address, channelArgs: { 'grpc.max_reconnect_backoff_ms': 5000 } });
  await ensureSearchAttributes(connection, namespace);
  return new Client({ connection, namespace, interceptors: { workflow: workflowClientInterceptors() } });
}
