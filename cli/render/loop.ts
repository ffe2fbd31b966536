import type { EscalationView, FindingView, IterationView, LoopDetail, LoopSummary } from '../api-types';
import { dateTime, table, truncate } from './format';

// How loops look in the terminal: the `list` table, the `show` summary, and what to run to decide.

export function loopTable(loops: LoopSummary[]): string {
  if (!loops.length) return 'no loops';
  return table(
    ['ID', 'STATUS', 'PHASE', 'ITERATION', 'VERDICT', 'REPOSITORY', 'CREATED'],
    loops.map((l) => [
      l.id,
      l.status,
      l.phase,
      `${l.iteration}/${l.maxIterations}`,
      l.lastVerdict ?? '-',
      truncate(`${l.repository.url} (${l.repository.baseRef})`, 60),
      dateTime(l.createdAt),
    ]),
  );
}

/** "2 valid (1 BLOCKER, 1 LOW), 1 invalid", or "none". */
export function findingCounts(findings: FindingView[]): string {
  if (!findings.length) return 'none';
  const valid = findings.filter((f) => f.validity === 'VALID');
  const invalid = findings.length - valid.length;
  const bySeverity = new Map<string, number>();
  for (const f of valid) bySeverity.set(f.severity, (bySeverity.get(f.severity) ?? 0) + 1);
  const order = ['BLOCKER', 'HIGH', 'MEDIUM', 'LOW'];
  const severities = [...bySeverity.entries()]
    .sort(([a], [b]) => rank(order, a) - rank(order, b))
    .map(([severity, n]) => `${n} ${severity}`);
  const parts = [];
  if (valid.length) parts.push(`${valid.length} valid (${severities.join(', ')})`);
  if (invalid) parts.push(`${invalid} invalid`);
  return parts.join(', ');
}

/** Every finding: iteration, severity, validity, file:line, title; the most severe first within an iteration. */
function findingsTable(iterations: IterationView[]): string {
  const order = ['BLOCKER', 'HIGH', 'MEDIUM', 'LOW'];
  const rows = iterations.flatMap((i) =>
    [...i.findings]
      .sort((a, b) => rank(order, a.severity) - rank(order, b.severity))
      .map((f) => [`#${i.sequence}`, f.severity, f.validity, findingLocation(f.location), truncate(f.title, 100)]),
  );
  return table(['ITER', 'SEVERITY', 'VALIDITY', 'WHERE', 'TITLE'], rows);
}

/** `src/sum.js:3` or `src/sum.js:3-7` for a reviewer's location; the file alone, or '-', for other shapes. */
export function findingLocation(location: unknown): string {
  if (location === null || typeof location !== 'object') return '-';
  const { file, startLine, endLine } = location as { file?: unknown; startLine?: unknown; endLine?: unknown };
  if (typeof file !== 'string' || !file) return '-';
  if (typeof startLine !== 'number') return file;
  return typeof endLine === 'number' && endLine !== startLine
    ? `${file}:${startLine}-${endLine}`
    : `${file}:${startLine}`;
}

function rank(order: string[], value: string): number {
  const i = order.indexOf(value);
  return i === -1 ? order.length : i;
}

function gateSummary(iteration: IterationView): string {
  if (!iteration.evidence.length) return '-';
  return iteration.evidence.map((e) => `${e.gate} ${e.status}`).join(', ');
}

function iterationsTable(loop: LoopDetail): string {
  return table(
    ['#', 'ROUND', 'CONTRACT', 'GATES', 'FINDINGS', 'VERDICT'],
    loop.iterations.map((i) => [
      String(i.sequence),
      `${i.roundIteration}/${loop.maxIterations}`,
      i.contractVersion === undefined ? '-' : `v${i.contractVersion}`,
      gateSummary(i),
      findingCounts(i.findings),
      i.verdict ? `${i.verdict.verdict}${i.verdict.trigger ? ` (${i.verdict.trigger})` : ''}` : '-',
    ]),
  );
}

function escalationLine(e: EscalationView): string {
  const opened = e.createdAt ? `, opened ${dateTime(e.createdAt)}` : '';
  const decided = e.decision
    ? `; ${e.decision.kind} by ${e.decision.actor} at ${dateTime(e.decision.createdAt)}${e.decision.comment ? ` ("${truncate(e.decision.comment, 80)}")` : ''}`
    : '';
  return `  #${e.sequence} ${e.trigger} ${e.status}${opened}${decided}`;
}

export function openEscalation(loop: Pick<LoopDetail, 'escalations'>): EscalationView | undefined {
  return loop.escalations.filter((e) => e.status === 'OPEN').at(-1);
}

/** The `show` summary of one loop. */
export function loopSummaryText(loop: LoopDetail): string {
  const lines: string[] = [];
  const field = (name: string, value: string) => lines.push(`${name.padEnd(12)} ${value}`);
  field('loop', loop.id);
  field('status', `${loop.status} (phase ${loop.phase})`);
  field(
    'repository',
    `${loop.repository.url} (${loop.repository.baseRef})${loop.branch ? `, branch ${loop.branch}` : ''}`,
  );
  field(
    'iteration',
    `${loop.iteration}/${loop.maxIterations}${loop.lastVerdict ? `, last verdict ${loop.lastVerdict}` : ''}`,
  );
  field('created', dateTime(loop.createdAt));
  if (loop.finishedAt) field('finished', dateTime(loop.finishedAt));
  else field('updated', dateTime(loop.updatedAt));
  if (loop.failureReason) field('failure', loop.failureReason);
  if (loop.waiting)
    field(
      'waiting',
      `for ${loop.waiting.reason}${loop.waiting.since ? ` (since ${dateTime(loop.waiting.since)})` : ''}`,
    );
  if (loop.sandbox) field('sandbox', loop.sandbox);
  const delivery = loop.delivery;
  if (delivery && (delivery.pushedBranch || delivery.pullRequestUrl || delivery.deliveryError)) {
    const parts = [
      delivery.pushedBranch ? `pushed ${delivery.pushedBranch}` : null,
      delivery.pullRequestUrl ? `pull request ${delivery.pullRequestUrl}` : null,
      delivery.deliveryError ? `error: ${delivery.deliveryError}` : null,
    ].filter(Boolean);
    field('delivery', parts.join(', '));
  }
  const versions = loop.contractVersions ?? [];
  if (versions.length > 1) field('contract', `v${versions.at(-1)?.version} (${versions.length} versions)`);

  lines.push('', loop.iterations.length ? `iterations\n${indent(iterationsTable(loop))}` : 'iterations   none yet');

  const latest = loop.iterations.at(-1);
  if (latest) {
    const all = loop.iterations.flatMap((i) => i.findings);
    lines.push(
      '',
      `findings     latest iteration #${latest.sequence}: ${findingCounts(latest.findings)}; all iterations: ${findingCounts(all)}`,
    );
    if (all.length) lines.push(indent(findingsTable(loop.iterations)));
  }

  if (loop.escalations.length) lines.push('', 'escalations', ...loop.escalations.map(escalationLine));
  if (loop.refusedDecisions?.length) {
    lines.push(
      '',
      'refused decisions',
      ...loop.refusedDecisions.map((r) => `  ${dateTime(r.createdAt)} ${r.channel}: ${r.reason}`),
    );
  }
  const open = openEscalation(loop);
  if (open && loop.status === 'AWAITING_DECISION') lines.push('', decideHint(loop.id, open));
  return lines.join('\n');
}

/** What to run to decide the escalation a loop waits on. */
export function decideHint(
  loopId: string,
  escalation: Pick<EscalationView, 'sequence' | 'trigger'> | undefined,
): string {
  const what = escalation ? ` on escalation #${escalation.sequence} (${escalation.trigger})` : '';
  return [
    `loop ${loopId} is waiting for a human decision${what}.`,
    `  read:    engineering-loop show ${loopId}   (the report: engineering-loop report ${loopId})`,
    `  decide:  engineering-loop decide ${loopId} approve [--comment "…"]`,
    `           engineering-loop decide ${loopId} reject [--comment "…"]`,
    `           engineering-loop decide ${loopId} retry --guidance "what the maker should do differently"`,
    `           engineering-loop decide ${loopId} amend --contract amendment.yaml`,
  ].join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
