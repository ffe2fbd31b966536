import type { ApiClient } from '../cli/api-client';

// What every tool works with: the REST API as the caller (their key, so their role), and when to stop.

export interface ToolContext {
  /** The service's REST API, called with the MCP caller's own API key: the same routes, roles and checks. */
  api: ApiClient;
  /** Aborted when the server shuts down: long waits end early with what they have. */
  stopping: AbortSignal;
  /** How often wait_for_loop reads the loop. */
  pollIntervalMs: number;
}
