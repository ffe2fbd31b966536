import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ApiClient } from '../cli/api-client';
import { createMcpServer } from './server';

// The MCP server over stdio, for a client that starts it as a subprocess (`engineering-loop mcp`).
// stdout carries only the protocol. Resolves when the client closes stdin.

export const STDIO_POLL_INTERVAL_MS = 1000;

export async function serveStdio(api: ApiClient): Promise<void> {
  const stopping = new AbortController();
  const server = createMcpServer({ api, stopping: stopping.signal, pollIntervalMs: STDIO_POLL_INTERVAL_MS });
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  await server.connect(new StdioServerTransport());
  // The transport does not watch for the end of its input: without this, a wait in progress would keep
  // the process alive after the client has gone.
  process.stdin.once('end', () => {
    stopping.abort();
    void server.close();
  });
  await closed;
}
