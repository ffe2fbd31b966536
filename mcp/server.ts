import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ToolContext } from './tool-context';
import { registerCancelLoop } from './tools/cancel-loop';
import { registerDecideEscalation } from './tools/decide-escalation';
import { registerGetLoop } from './tools/get-loop';
import { registerGetDiff } from './tools/get-diff';
import { registerGetPatch } from './tools/get-patch';
import { registerGetReport } from './tools/get-report';
import { registerListEscalations } from './tools/list-escalations';
import { registerPauseLoop } from './tools/pause-loop';
import { registerSubmitLoop } from './tools/submit-loop';
import { registerWaitForLoop } from './tools/wait-for-loop';

// The MCP server (docs/mcp.md): one tool per REST route it stands for, each calling that route with the
// caller's API key, so roles, validation and refusals are the REST API's own. Served over stdio
// (mcp/stdio.ts, `engineering-loop mcp`) and streamable HTTP (api/routes/mcp.ts, POST /mcp).

export const SERVER_INFO = { name: 'engineering-loop', version: '0.1.0' };

const INSTRUCTIONS = [
  'Runs coding tasks as durable engineering loops: a maker changes the repository until the verification gates and an independent review pass, or a human must decide.',
  'Typical use: submit_loop, then wait_for_loop (again on timed_out) until the outcome is ended or awaiting_decision;',
  'then get_report and get_patch, or list_escalations, get_diff (the change in question) and decide_escalation. cancel_loop stops a loop; pause_loop holds it before its next maker until resume_loop.',
].join(' ');

export function createMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer(SERVER_INFO, { instructions: INSTRUCTIONS });
  registerSubmitLoop(server, ctx);
  registerGetLoop(server, ctx);
  registerWaitForLoop(server, ctx);
  registerListEscalations(server, ctx);
  registerDecideEscalation(server, ctx);
  registerGetReport(server, ctx);
  registerGetDiff(server, ctx);
  registerGetPatch(server, ctx);
  registerCancelLoop(server, ctx);
  registerPauseLoop(server, ctx);
  return server;
}
