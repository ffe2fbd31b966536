import { z } from 'zod';
import type { EvidenceRecord, EvidenceView, LoopDetail } from '../api-types';
import { defineCommand } from '../command';
import { CliError } from '../errors';
import { intOption, loopIdArg } from '../inputs';
import { evidenceText } from '../render/evidence';

// The stored output of a loop's gate runs (GET /v1/loops/:id/evidence/:evidenceId).

export const logsCommand = defineCommand({
  name: 'logs',
  summary: "Gate output (stdout and stderr as stored: capped, secrets redacted) of a loop's iteration",
  positionals: ['loopId'],
  usage: '<loopId> [--iteration N] [--gate NAME] [--setup] [--tail N]',
  details: [
    'Without --iteration, the latest iteration that ran gates; without iterations yet, the set-up of the',
    "maker's workspace. --gate matches a gate's name, or its prefix before ':' (setup:1 … matches setup).",
    'With --json, prints each evidence record (GET /v1/loops/:id/evidence/:evidenceId) as one JSON line.',
  ].join('\n'),
  options: {
    iteration: {
      type: 'string',
      value: 'N',
      description: 'the iteration (its number # as in show, counted across rounds)',
    },
    gate: { type: 'string', value: 'NAME', description: 'only this gate (tests, typecheck, lint, build, setup, …)' },
    setup: { type: 'boolean', description: "the maker workspace's set-up runs instead of an iteration's gates" },
    tail: { type: 'string', value: 'N', description: 'only the last N lines of each stream' },
  },
  input: z
    .object({
      loopId: loopIdArg,
      iteration: intOption(1, 1_000_000),
      gate: z.string().trim().min(1, { error: 'must name a gate' }).optional(),
      setup: z.boolean().optional(),
      tail: intOption(1, 1_000_000),
    })
    .refine((v) => !(v.setup && v.iteration !== undefined), {
      path: ['setup'],
      message: 'use either --setup or --iteration, not both',
    }),
  run: async (input, ctx) => {
    const api = ctx.api();
    const loop = (await api.get<LoopDetail>(`/v1/loops/${input.loopId}`)).body;
    const selected = select(loop, input);
    if (!selected) {
      if (!ctx.json) ctx.io.out(`loop ${loop.id} has no gate output yet (${loop.status}, phase ${loop.phase})`);
      return 0;
    }
    for (const [index, evidence] of selected.evidence.entries()) {
      const record = (await api.get<EvidenceRecord>(`/v1/loops/${loop.id}/evidence/${evidence.id}`)).body;
      if (ctx.json) {
        ctx.io.out(JSON.stringify(record));
      } else {
        if (index > 0) ctx.io.out('');
        ctx.io.out(evidenceText(`${selected.label} ${evidence.gate}`, record, input.tail));
      }
    }
    return 0;
  },
});

interface Selection {
  label: string;
  evidence: EvidenceView[];
}

function select(loop: LoopDetail, input: { iteration?: number; gate?: string; setup?: boolean }): Selection | null {
  const setup = loop.workspaceSetup ?? [];
  let selection: Selection;
  if (input.iteration !== undefined) {
    const iteration = loop.iterations.find((i) => i.sequence === input.iteration);
    if (!iteration) {
      const known = loop.iterations.map((i) => `#${i.sequence}`).join(', ') || 'none yet';
      throw new CliError(`loop ${loop.id} has no iteration #${input.iteration} (iterations: ${known})`);
    }
    selection = { label: `#${iteration.sequence}`, evidence: iteration.evidence };
  } else if (input.setup) {
    selection = { label: 'set-up', evidence: setup };
  } else {
    const latest = [...loop.iterations].reverse().find((i) => i.evidence.length);
    selection = latest
      ? { label: `#${latest.sequence}`, evidence: latest.evidence }
      : { label: 'set-up', evidence: setup };
  }
  if (input.gate) {
    const gate = input.gate;
    const matching = selection.evidence.filter((e) => e.gate === gate || e.gate.startsWith(`${gate}:`));
    if (!matching.length) {
      const known = selection.evidence.map((e) => e.gate).join(', ') || 'none yet';
      throw new CliError(
        `loop ${loop.id} ${selection.label === 'set-up' ? 'set-up' : `iteration ${selection.label}`} has no gate ${JSON.stringify(gate)} (gates: ${known})`,
      );
    }
    selection = { ...selection, evidence: matching };
  }
  return selection.evidence.length ? selection : null;
}
