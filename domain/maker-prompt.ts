import type { FrozenContract } from './contract';
import { describeProof } from './proof';

// The maker's prompt is rebuilt from durable state every iteration — never from a transcript.

export function buildMakerPrompt(frozen: FrozenContract, directives: string[], iteration: { roundIteration: number; maxIterations: number }): string {
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
    lines.push('', 'The previous attempt was judged not done. Address these directives, in order:', ...directives);
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
