import { z } from 'zod';
import { defineCommand } from '../command';
import { serveStdio } from '../../mcp/stdio';

// `engineering-loop mcp`: the MCP server over stdio, for MCP clients that start it (docs/mcp.md).

export const mcpCommand = defineCommand({
  name: 'mcp',
  summary: 'Serve the MCP tools over stdio, for an MCP client (Claude Desktop, Claude Code, …)',
  positionals: [],
  usage: '',
  details: [
    'Speaks the Model Context Protocol on stdin/stdout until the client closes stdin; the client starts it.',
    'Its tools (submit_loop, get_loop, wait_for_loop, list_escalations, decide_escalation, get_report,',
    "get_patch, cancel_loop) call the REST API with the configured key, so the key's role decides what",
    'they may do. See docs/mcp.md for client configuration.',
    '',
    'example (Claude Code):',
    '  claude mcp add engineering-loop -e ENGINEERING_LOOP_API_KEY=elk_… -- node /path/to/dist/cli/main.js mcp',
  ].join('\n'),
  options: {},
  input: z.object({}),
  run: async (_input, ctx) => {
    await serveStdio(ctx.api());
    return 0;
  },
});
