import { ApiError, ConnectionError, type ApiClient } from '../api-client';
import { FAILURE_STATUSES, SUCCESS_STATUSES, type EvidenceRecord, type LoopDetail } from '../api-types';
import type { Context } from '../command';
import { CliError } from '../errors';
import { decideHint, openEscalation } from '../render/loop';
import { duration } from '../render/format';
import { LiveLine } from './live-line';
import { ProgressTracker } from './tracker';

// `watch`: polls GET /v1/loops/:id until the loop ends or waits for a person, printing what changes.
// Exit codes: 0 PASSED/APPROVED, 2 AWAITING_DECISION, 1 FAILED/REJECTED/CANCELLED (and errors).

/** How long the API may stay unreachable (or answer 429/5xx) before watch gives up. */
const GIVE_UP_AFTER_MS = 30_000;

export const EXIT_AWAITING_DECISION = 2;

export async function followLoop(loopId: string, ctx: Context, intervalMs: number): Promise<number> {
  const api = ctx.api();
  const { io, json } = ctx;
  const tracker = new ProgressTracker();
  const records = new Map<string, EvidenceRecord>();
  const live = new LiveLine(io);
  let failingSince: number | null = null;
  try {
    for (;;) {
      let loop: LoopDetail;
      try {
        loop = (await api.get<LoopDetail>(`/v1/loops/${loopId}`)).body;
        failingSince = null;
      } catch (error) {
        if (!isTransient(error)) throw error;
        failingSince ??= Date.now();
        if (Date.now() - failingSince > GIVE_UP_AFTER_MS) throw error;
        io.err(`warning: ${(error as Error).message}; trying again`);
        await sleep(intervalMs);
        continue;
      }

      if (!json) await fetchNewRecords(api, loopId, tracker, loop, records);
      const lines = tracker.update(loop, records, new Date());
      if (json) {
        if (lines.length) io.out(JSON.stringify(loop));
      } else {
        for (const line of lines) live.print(line);
      }

      const exitCode = outcome(loop);
      if (exitCode !== null) {
        live.stop();
        finish(loop, exitCode, ctx);
        return exitCode;
      }
      live.status(
        `${loop.status} · ${loop.phase} · iteration ${loop.iteration}/${loop.maxIterations} · ${duration(Date.now() - Date.parse(loop.createdAt))}`,
      );
      await sleep(intervalMs);
    }
  } finally {
    live.stop();
  }
}

/** The exit code once the loop has ended or waits for a decision; null while it is still moving. */
function outcome(loop: LoopDetail): number | null {
  if (SUCCESS_STATUSES.includes(loop.status)) return 0;
  if (FAILURE_STATUSES.includes(loop.status)) return 1;
  // Right after a decision the loop may still say AWAITING_DECISION for a moment: wait for an open escalation.
  if (loop.status === 'AWAITING_DECISION' && openEscalation(loop)) return EXIT_AWAITING_DECISION;
  return null;
}

function finish(loop: LoopDetail, exitCode: number, ctx: Context): void {
  // With --json, stdout carries only JSON: the closing words go to stderr.
  const say = (text: string) => (ctx.json ? ctx.io.err(text) : ctx.io.out(text));
  if (exitCode === EXIT_AWAITING_DECISION) return say(decideHint(loop.id, openEscalation(loop)));
  const reason = loop.failureReason ? `: ${loop.failureReason}` : '';
  say(`loop ${loop.id} ended ${loop.status}${exitCode === 0 ? '' : reason}`);
  if (loop.delivery?.pullRequestUrl) say(`pull request: ${loop.delivery.pullRequestUrl}`);
  else if (loop.delivery?.pushedBranch) say(`pushed branch: ${loop.delivery.pushedBranch}`);
  if (loop.delivery?.deliveryError) say(`delivery: ${loop.delivery.deliveryError}`);
}

/** Full records of gates not reported yet (for their start and end times); a record that cannot be read is shown without. */
async function fetchNewRecords(
  api: ApiClient,
  loopId: string,
  tracker: ProgressTracker,
  loop: LoopDetail,
  records: Map<string, EvidenceRecord>,
) {
  for (const evidence of tracker.unseenEvidence(loop)) {
    try {
      records.set(evidence.id, (await api.get<EvidenceRecord>(`/v1/loops/${loopId}/evidence/${evidence.id}`)).body);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
    }
  }
}

function isTransient(error: unknown): boolean {
  return error instanceof ConnectionError || (error instanceof ApiError && error.transient);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
