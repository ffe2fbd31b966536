import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CliError } from '../cli/errors';

// What a tool answers: the REST answer as structured content with a short text for people and models,
// or an MCP tool error (isError) carrying the API's own message — never a stack trace.

export function toolResult(structured: Record<string, unknown>, text: string): CallToolResult {
  return { structuredContent: structured, content: [{ type: 'text', text }] };
}

/**
 * An API error keeps its message (a 400 lists each invalid field: `body.contract.objective: …`), its
 * status and request id, and the hint; an unreachable API says so. No structured content: a client
 * checks it against the tool's output schema even on errors.
 */
export function toolError(error: unknown): CallToolResult {
  const text =
    error instanceof CliError
      ? `${error.message}${error.hint ? `\nhint: ${error.hint}` : ''}`
      : `unexpected failure: ${error instanceof Error ? error.message : String(error)}`;
  return { isError: true, content: [{ type: 'text', text }] };
}

/** Runs a tool's work and turns any failure into a tool error. */
export async function answer(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    return toolError(error);
  }
}
