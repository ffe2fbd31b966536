// Why a maker run ended as it did, in a sentence a person can act on: read from the run's execution record
// (outcome EXIT_<n>, TIMED_OUT, CANCELLED, SPAWN_FAILED, AGENT_ERROR, INTERRUPTED; detail = the agent's
// last message or its output's tail) and the hosts the egress proxy refused it. The escalation report and
// GET /v1/loops/:id show it beside "no change", so nobody has to open the timeline to learn the model API
// answered 404. Pure: shared with the workflow sandbox.

export interface MakerRunRecord {
  /** The backend (claude-code, codex, aider, command, built-in/anthropic …). */
  provider: string | null;
  outcome: string | null;
  detail: string | null;
  latencyMs: number | null;
}

export interface MakerRunOutcome {
  outcome: string;
  /** One or two sentences; the detail's tail at most TAIL_CHARS. */
  explanation: string;
}

const TAIL_CHARS = 600;

// How the CLIs word a model API's HTTP error: Claude Code "API Error: 404 …", Codex "unexpected status
// 404 Not Found", aider/LiteLLM "NotFoundError: … Error code: 404", the built-in agent "HTTP 404".
const API_STATUS =
  /\b(?:API Error:?|unexpected status|status(?: code)?:?|Error code:?|HTTP(?:\/\d(?:\.\d)?)?)\s*([45]\d\d)\b/i;

// LiteLLM (aider) names the status by its exception class only.
const LITELLM_ERROR = /\blitellm\.(\w+Error)\b/;
const LITELLM_ERRORS: Record<string, string> = {
  BadRequestError: '400',
  AuthenticationError: '401',
  PermissionDeniedError: '403',
  NotFoundError: '404',
  UnprocessableEntityError: '422',
  RateLimitError: '429',
  InternalServerError: '500',
  ServiceUnavailableError: '503',
};

export function explainMakerRun(run: MakerRunRecord, refusedHosts: readonly string[]): MakerRunOutcome {
  const who = run.provider ?? 'the maker';
  const outcome = run.outcome ?? 'UNKNOWN';
  const detail = (run.detail ?? '').trim();
  const tail = detail.length > TAIL_CHARS ? `…${detail.slice(-TAIL_CHARS)}` : detail;
  const seconds = run.latencyMs === null ? null : Math.round(run.latencyMs / 1000);
  const parts: string[] = [];
  const exit = /^EXIT_(\d+)$/.exec(outcome);
  if (outcome === 'TIMED_OUT') parts.push(`${who} timed out after ${seconds ?? '?'} s and was killed`);
  else if (outcome === 'CANCELLED') parts.push(`${who} was stopped: the loop was cancelled`);
  else if (outcome === 'INTERRUPTED') parts.push(`${who} was interrupted: ${detail || 'its worker stopped'}`);
  else if (outcome === 'SPAWN_FAILED') parts.push(`${who} could not start: ${tail}`);
  else if (outcome === 'AGENT_ERROR') parts.push(`${who} reported an error`);
  else if (exit && exit[1] !== '0') parts.push(`${who} exited with code ${exit[1]}`);
  else if (exit) parts.push(`${who} exited 0`);
  else parts.push(`${who} ended ${outcome}`);
  const status = API_STATUS.exec(detail)?.[1] ?? LITELLM_ERRORS[LITELLM_ERROR.exec(detail)?.[1] ?? ''];
  if (status) parts.push(`the model API answered HTTP ${status}`);
  if (refusedHosts.length) parts.push(`the egress policy refused connections to ${refusedHosts.join(', ')}`);
  const said = outcome === 'SPAWN_FAILED' || outcome === 'INTERRUPTED' || !tail ? '' : ` Its last output: ${tail}`;
  return { outcome, explanation: `${parts.join('; ')}.${said}` };
}

/** Execution rows as store/execution-records.ts makerRunRecords reads them. */
export interface MakerRunRow extends MakerRunRecord {
  iterationSeq: number | null;
  kind: string;
}

/** Each iteration's last maker run, explained (a retried attempt's earlier runs are not what ended it). */
export function makerOutcomesBySequence(rows: readonly MakerRunRow[]): Map<number, MakerRunOutcome> {
  const last = new Map<number, MakerRunRow>();
  const refused = new Map<number, string[]>();
  for (const row of rows) {
    if (row.iterationSeq === null) continue;
    if (row.kind === 'EGRESS') {
      if (row.outcome === 'REFUSED' && row.provider) {
        refused.set(row.iterationSeq, [...(refused.get(row.iterationSeq) ?? []), row.provider]);
      }
    } else {
      last.set(row.iterationSeq, row);
    }
  }
  return new Map([...last].map(([seq, run]) => [seq, explainMakerRun(run, refused.get(seq) ?? [])]));
}
