import type { FrozenContract } from './contract';
import { describeProof } from './proof';

// The maker's prompt is rebuilt from durable state every iteration — never from a transcript: the
// frozen contract (never cut), the last verdict's numbered directives and the findings still open.

export interface OpenFinding {
  findingId: string;
  severity: string;
  title: string;
  location: { file: string; startLine: number; endLine: number };
  evidence: string;
  concreteAlternativeDiff: string | null;
}

/** How much of the prompt directives and findings may take; the contract itself is always whole. */
export const WORK_SECTION_BUDGET_CHARS = 24_000;

export function buildMakerPrompt(
  frozen: FrozenContract,
  work: { directives: string[]; openFindings: OpenFinding[] },
  iteration: { roundIteration: number; maxIterations: number },
): string {
  const directives = work.directives;
  const c = frozen.contract;
  const lines = [
    `# Task (contract v${frozen.version}, hash ${frozen.hash})`,
    '',
    `Objective: ${c.objective}`,
    `Outcome: ${c.outcome}`,
    '',
    '## Acceptance criteria',
    ...c.acceptanceCriteria.map((ac) => `- ${ac.id}: ${ac.statement} (proven by ${describeProof(ac.verification)})`),
  ];
  if (c.constraints.length) lines.push('', '## Constraints', ...c.constraints.map((x) => `- ${x}`));
  if (c.outOfScope.length) lines.push('', '## Out of scope', ...c.outOfScope.map((x) => `- ${x}`));
  if (c.scope?.length) lines.push('', '## Only touch these paths', ...c.scope.map((x) => `- ${x}`));
  lines.push('', `## Iteration ${iteration.roundIteration} of ${iteration.maxIterations}`);
  if (directives.length) {
    const findings = work.openFindings.map((f) =>
      [
        `### ${f.findingId} (${f.severity}) ${f.location.file}:${f.location.startLine}-${f.location.endLine}: ${f.title}`,
        f.evidence,
        ...(f.concreteAlternativeDiff ? ['Suggested change:', '```diff', f.concreteAlternativeDiff, '```'] : []),
      ].join('\n'),
    );
    lines.push(
      '',
      ...withinBudget(
        [
          'The previous attempt was judged not done. Address these directives, in order:',
          ...directives,
          ...(findings.length ? ['', '## Open findings', ...findings] : []),
        ],
        WORK_SECTION_BUDGET_CHARS,
      ),
    );
  } else {
    lines.push('', 'First attempt: implement the objective so every acceptance criterion is proven.');
  }
  lines.push(
    '',
    'Rules: change files in this working tree only; do not commit; do not edit tests, gate scripts or configuration to make checks pass.',
    'If the requirements contradict each other, the task needs a destructive operation (deleting data, rewriting history, dropping tables),',
    'or you hit a failure you cannot reproduce, stop and write {"kind": "CONTRADICTION" | "DESTRUCTIVE_OPERATION" | "IRREPRODUCIBLE_FAILURE", "reason": "..."}',
    'as JSON to the file named by the environment variable LOOP_REPORT_FILE; a human will decide.',
  );
  return lines.join('\n');
}

/** Keeps whole entries, in order, while they fit; says how many were left out. */
function withinBudget(entries: string[], budget: number): string[] {
  const kept: string[] = [];
  let used = 0;
  for (const [index, entry] of entries.entries()) {
    if (used + entry.length > budget) {
      kept.push(`(${entries.length - index} more item(s) left out to keep this prompt bounded; see the loop's report)`);
      break;
    }
    kept.push(entry);
    used += entry.length + 1;
  }
  return kept;
}
