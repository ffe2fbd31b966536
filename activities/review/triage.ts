import { ApplicationFailure, CancelledFailure } from '@temporalio/activity';
import { z } from 'zod';
import { describeIssues, isBlocking, type Finding } from '../../domain/ledger';
import { sanitise } from '../../domain/sanitise';
import type { ActivityDeps } from '../deps';
import { git } from '../git';
import { askForStructuredAnswer } from './structured-answer';
import { newBoundary, untrustedBlock, untrustedNotice } from './untrusted';

// Triage (docs/design.md §5.2): a separate model call checks the findings that decide the verdict — every VALID
// BLOCKER/HIGH and every INVALID claim — against the repository: the code at the finding's location
// and the diff. An INVALID verdict must cite counter-evidence from the repository.

export interface TriageDecision {
  validity: 'VALID' | 'INVALID';
  reasoning: string;
  counterEvidence: string | null;
}

/** findingId → triage decision; findings without an entry keep the reviewer's validity. */
export type TriageResult = Map<string, TriageDecision>;

const triageAnswerSchema = z.strictObject({
  decisions: z.array(
    z
      .strictObject({
        findingId: z.string(),
        validity: z.enum(['VALID', 'INVALID']),
        reasoning: z.string().trim().min(1).max(5000),
        counterEvidence: z.string().trim().max(5000).optional(),
      })
      .refine((d) => d.validity === 'VALID' || !!d.counterEvidence, {
        message: 'an INVALID decision must cite counterEvidence from the repository',
        path: ['counterEvidence'],
      }),
  ),
});

const EXCERPT_CONTEXT_LINES = 15;
const MAX_FILE_DIFF_CHARS = 20_000;

export async function triageFindings(
  deps: ActivityDeps,
  input: {
    loopId: string;
    sequence: number;
    model: string;
    workspace: string;
    checkpointCommit: string;
    diff: string;
    findings: Finding[];
    /** Where the triage call's record goes while it is written (StructuredRequest.recording). */
    recording?: Promise<unknown>[];
  },
): Promise<TriageResult> {
  const toCheck = input.findings.filter((f) => isBlocking(f) || f.validity === 'INVALID');
  const result: TriageResult = new Map();
  if (toCheck.length === 0) return result;

  // The checkpoint's files were written before the boundary is drawn, so only the diff needs checking.
  const boundary = newBoundary([input.diff]);
  // Code excerpts leave the service for a model: sanitised like everything else that does.
  const sections = await Promise.all(
    toCheck.map(async (f) =>
      sanitise(await findingSection(input.workspace, input.checkpointCommit, input.diff, f, boundary)),
    ),
  );
  // Best effort: if triage cannot be had at all, the conservative fallback below applies.
  const answer = await askForStructuredAnswer(deps, {
    loopId: input.loopId,
    sequence: input.sequence,
    role: 'triage',
    model: input.model,
    messages: [
      {
        role: 'system',
        content:
          'You triage code-review findings. For each finding decide, from the code and the diff shown, whether it is VALID (the defect is real) ' +
          'or INVALID (the repository shows it is not). An INVALID decision must quote counter-evidence from the code. Answer with ONE JSON object: ' +
          '{"decisions":[{"findingId":"COR-001","validity":"VALID"|"INVALID","reasoning":"...","counterEvidence":"required when INVALID"}]}\n' +
          untrustedNotice(boundary),
      },
      { role: 'user', content: sections.join('\n\n') },
    ],
    parse: (content) => {
      let json: unknown;
      try {
        json = JSON.parse(
          content
            .trim()
            .replace(/^```(?:json)?\s*/i, '')
            .replace(/\s*```$/, ''),
        );
      } catch (err) {
        return { ok: false, errors: [`the answer is not JSON: ${(err as Error).message}`] };
      }
      const parsed = triageAnswerSchema.safeParse(json);
      return parsed.success
        ? { ok: true, value: parsed.data }
        : { ok: false, errors: describeIssues(parsed.error.issues) };
    },
    outcomes: { valid: 'VALID_TRIAGE', invalid: 'INVALID_TRIAGE' },
    recording: input.recording,
  }).catch((err: unknown): { ok: false; errors: string[] } => {
    // A cancel, or a failure the activity retry policy can fix (429/5xx), goes up; anything else falls back.
    if (err instanceof CancelledFailure || (err instanceof ApplicationFailure && !err.nonRetryable)) throw err;
    return { ok: false, errors: [err instanceof Error ? err.message : String(err)] };
  });
  if (!answer.ok) {
    // Without a confirmed counter-evidence nothing is dismissed: an unverified INVALID claim counts as VALID.
    for (const f of toCheck) {
      result.set(f.id, {
        validity: 'VALID',
        reasoning: `triage unavailable (${answer.errors.slice(0, 3).join('; ')}); an INVALID claim is not accepted without confirmed counter-evidence`,
        counterEvidence: null,
      });
    }
    return result;
  }
  for (const d of answer.value.decisions) {
    const index = toCheck.findIndex((f) => f.id === d.findingId);
    if (index < 0 || result.has(d.findingId)) continue;
    const quoted = d.validity === 'INVALID' && quotesShownCode(d.counterEvidence ?? '', sections[index]!);
    result.set(
      d.findingId,
      d.validity === 'INVALID' && !quoted
        ? {
            validity: 'VALID',
            reasoning: `triage said INVALID, but its counter-evidence quotes nothing from the code it was shown: ${d.reasoning}`,
            counterEvidence: null,
          }
        : { validity: d.validity, reasoning: d.reasoning, counterEvidence: d.counterEvidence ?? null },
    );
  }
  // Silence is not counter-evidence: a reviewer's INVALID claim on a blocking-severity finding that
  // triage did not answer for stands refuted, so the finding blocks.
  for (const f of toCheck) {
    if (result.has(f.id) || f.validity !== 'INVALID' || !BLOCKING_SEVERITIES.has(f.severity)) continue;
    result.set(f.id, {
      validity: 'VALID',
      reasoning:
        "triage returned no decision for this finding, so the reviewer's INVALID claim has no confirmed counter-evidence",
      counterEvidence: null,
    });
  }
  return result;
}

const BLOCKING_SEVERITIES = new Set<Finding['severity']>(['BLOCKER', 'HIGH']);
/** A quoted line shorter than this proves nothing (`}`, `return x;`). */
const MIN_QUOTED_CHARS = 8;

/**
 * Counter-evidence must quote the repository: at least one of its lines (line-number prefixes and
 * whitespace aside) must appear in the code or diff triage was shown for that finding.
 */
export function quotesShownCode(counterEvidence: string, shown: string): boolean {
  const normalise = (line: string) =>
    line
      .replace(/^\s*(?:\d+:|[+-](?![+-]))\s?/, '')
      .replace(/\s+/g, ' ')
      .trim();
  const haystack = shown.split('\n').map(normalise).join('\n');
  return counterEvidence
    .split('\n')
    .map((line) => normalise(line.replace(/^\s*[`>]+|`+\s*$/g, '')))
    .some((line) => line.replace(/\s/g, '').length >= MIN_QUOTED_CHARS && haystack.includes(line));
}

async function findingSection(
  workspace: string,
  commit: string,
  diff: string,
  f: Finding,
  boundary: string,
): Promise<string> {
  const text = await git(workspace, ['show', `${commit}:${f.location.file}`]).catch(() => null);
  const from = Math.max(1, f.location.startLine - EXCERPT_CONTEXT_LINES);
  const excerpt =
    text === null
      ? '(the file does not exist at the checkpoint)'
      : text
          .split('\n')
          .slice(from - 1, f.location.endLine + EXCERPT_CONTEXT_LINES)
          .map((line, i) => `${from + i}: ${line}`)
          .join('\n');
  const fileDiff =
    diff.split(/^(?=diff --git )/m).find((chunk) => chunk.startsWith(`diff --git a/${f.location.file} `)) ??
    '(no change to this file)';
  return [
    `## ${f.id} (${f.severity}, reviewer says ${f.validity}): ${f.title}`,
    `Location: ${f.location.file}:${f.location.startLine}-${f.location.endLine}`,
    `Reviewer's evidence: ${f.evidence}`,
    `Failure scenario: ${f.failureScenario}`,
    '### Code at the checkpoint',
    ...untrustedBlock(boundary, `${f.location.file} at the checkpoint, numbered`, excerpt),
    '### Diff of this file',
    ...untrustedBlock(boundary, `the diff of ${f.location.file}`, fileDiff.slice(0, MAX_FILE_DIFF_CHARS)),
  ].join('\n');
}
