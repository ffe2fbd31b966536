import { z } from 'zod';
import type { Accepted, EscalationView, LoopDetail } from '../api-types';
import { defineCommand } from '../command';
import { CliError } from '../errors';
import { readObjectFile } from '../input-file';
import { enumArg, loopIdArg, textOption } from '../inputs';
import { openEscalation } from '../render/loop';

// POST /v1/loops/:id/decisions with { kind, escalationId, comment?, guidance? (retry), contract? (amend) }
// (domain/decision.ts decisionRequestSchema). The escalation defaults to the loop's open one.

const KINDS = ['approve', 'reject', 'retry', 'amend'] as const;

const input = z
  .object({
    loopId: loopIdArg,
    kind: z
      .string()
      .transform((s) => s.trim().toLowerCase())
      .pipe(enumArg(KINDS, 'the decision')),
    comment: z.string().trim().max(5000, { error: 'must be at most 5000 characters' }).optional(),
    guidance: textOption(5000),
    escalation: z
      .string()
      .trim()
      .regex(/^(\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i, {
        error: (iss) =>
          `must be an escalation number (1, 2, …) or an escalation id (UUID), got ${JSON.stringify(iss.input)}`,
      })
      .optional(),
    contract: z.string().min(1, { error: 'must name a file' }).optional(),
  })
  .superRefine((v, ctx) => {
    if (v.kind === 'retry' && !v.guidance)
      ctx.addIssue({
        code: 'custom',
        path: ['guidance'],
        message: 'a retry needs guidance: what the maker should do differently',
      });
    if (v.kind !== 'retry' && v.guidance)
      ctx.addIssue({ code: 'custom', path: ['guidance'], message: `only a retry takes guidance (this is ${v.kind})` });
    if (v.kind === 'amend' && !v.contract)
      ctx.addIssue({
        code: 'custom',
        path: ['contract'],
        message: 'an amend needs a contract file: JSON or YAML with the contract fields to replace',
      });
    if (v.kind !== 'amend' && v.contract)
      ctx.addIssue({
        code: 'custom',
        path: ['contract'],
        message: `only an amend takes a contract (this is ${v.kind})`,
      });
  });

export const decideCommand = defineCommand({
  name: 'decide',
  summary: 'Decide the escalation a loop waits on: approve, reject, retry (with guidance) or amend the contract',
  positionals: ['loopId', 'kind'],
  usage: '<loopId> <approve|reject|retry|amend> [--comment C] [--guidance G] [--escalation N] [--contract FILE]',
  details: [
    'approve   deliver the current checkpoint as it is',
    'reject    end the loop REJECTED',
    'retry     send the loop back to the maker with --guidance (required)',
    'amend     replace contract fields from --contract FILE (JSON or YAML; any of objective, outcome,',
    '          acceptanceCriteria, constraints, outOfScope, scope) and resume',
    '',
    "The decision answers the loop's open escalation unless --escalation names one (its number, as in",
    '"escalation #1", or its id); a decided or stale escalation is refused by the API (409).',
    'Needs an approver (or admin) API key.',
    '',
    'examples:',
    '  engineering-loop decide 3f2c… approve --comment "the precision finding is out of scope"',
    '  engineering-loop decide 3f2c… retry --guidance "use BigInt for large inputs"',
  ].join('\n'),
  options: {
    comment: { type: 'string', value: 'C', description: 'a comment stored with the decision' },
    guidance: { type: 'string', value: 'G', description: 'retry: what the maker should do differently' },
    escalation: { type: 'string', value: 'N', description: "the escalation's number or id (default: the open one)" },
    contract: { type: 'string', value: 'FILE', description: 'amend: the contract fields to replace (JSON or YAML)' },
  },
  input,
  run: async (input, ctx) => {
    const contract = input.contract ? readObjectFile(input.contract, 'contract amendment file') : undefined;
    const api = ctx.api();
    const loop = (await api.get<LoopDetail>(`/v1/loops/${input.loopId}`)).body;
    const escalation = chooseEscalation(loop, input.escalation);
    const body = {
      kind: input.kind,
      escalationId: escalation.id,
      ...(input.comment ? { comment: input.comment } : {}),
      ...(input.kind === 'retry' ? { guidance: input.guidance } : {}),
      ...(contract ? { contract } : {}),
    };
    const answer = (await api.post<Accepted>(`/v1/loops/${input.loopId}/decisions`, body)).body;
    if (ctx.json) {
      ctx.io.out(JSON.stringify(answer));
    } else {
      ctx.io.out(`${answer.message} (loop ${answer.loopId}, escalation #${escalation.sequence} ${escalation.trigger})`);
      if (input.kind !== 'reject') ctx.io.out(`  follow it: engineering-loop watch ${answer.loopId}`);
    }
    return 0;
  },
});

function chooseEscalation(loop: LoopDetail, wanted: string | undefined): EscalationView {
  if (wanted === undefined) {
    const open = openEscalation(loop);
    if (!open)
      throw new CliError(
        `loop ${loop.id} has no open escalation to decide (it is ${loop.status}, phase ${loop.phase})`,
      );
    return open;
  }
  const found = /^\d+$/.test(wanted)
    ? loop.escalations.find((e) => e.sequence === Number(wanted))
    : loop.escalations.find((e) => e.id.toLowerCase() === wanted.toLowerCase());
  if (!found) {
    const known = loop.escalations.map((e) => `#${e.sequence} ${e.status}`).join(', ') || 'none';
    throw new CliError(
      `loop ${loop.id} has no escalation ${/^\d+$/.test(wanted) ? `#${wanted}` : wanted} (escalations: ${known})`,
    );
  }
  return found;
}
