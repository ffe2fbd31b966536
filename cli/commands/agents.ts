import { z } from 'zod';
import type { AgentView } from '../api-types';
import { defineCommand } from '../command';
import { agentTable } from '../render/agents';

// A smoke test runs each CLI once on a worker, up to two minutes each (activities/makers/agent-check.ts).
const CHECK_TIMEOUT_MS = 6 * 60_000;
const BACKEND = /^[a-z][a-z0-9-]*$/;

export const agentsCommand = defineCommand({
  name: 'agents',
  summary: 'The coding-agent presets: pinned and installed versions, endpoint, latest smoke test',
  positionals: [],
  usage: '[--check] [--backend B]',
  details:
    "With --check, a worker first runs each preset's real CLI once against its configured endpoint (admin key;\n" +
    'each check is a model call); exits 1 if any check failed. --backend limits --check to one preset.',
  options: {
    check: { type: 'boolean', description: 'smoke-test the presets now (GET /v1/agents shows the latest)' },
    backend: {
      type: 'string',
      value: 'B',
      description: 'with --check: only this preset (claude-code, codex, aider, gemini)',
    },
  },
  input: z.object({
    check: z.boolean().optional(),
    backend: z.string().trim().regex(BACKEND, { error: 'must be a preset name like claude-code' }).optional(),
  }),
  run: async (input, ctx) => {
    const answer = input.check
      ? await ctx
          .api()
          .post<{ agents: AgentView[] }>('/v1/agents/checks', input.backend ? { backends: [input.backend] } : {}, {
            timeoutMs: CHECK_TIMEOUT_MS,
          })
      : await ctx.api().get<{ agents: AgentView[] }>('/v1/agents');
    ctx.io.out(ctx.json ? JSON.stringify(answer.body) : agentTable(answer.body.agents));
    return input.check && answer.body.agents.some((a) => !a.lastCheck?.ok) ? 1 : 0;
  },
});
