import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  deliverySettingsSchema,
  projectPathFromUrl,
  type DeliveryResult,
  type DeliverySettings,
} from '../domain/delivery';
import type { JudgeReport } from '../domain/judge';
import { describeSandbox, renderFinalReport, renderMergeRequestDescription, type FinalReport } from '../domain/reports';
import { sanitise, sanitiseTokens } from '../domain/sanitise';
import type { ActivityDeps } from './deps';
import { contractVersionForDelivery } from '../store/contracts';
import { lastValidReview } from '../store/execution-records';
import { iterationWithVerdict } from '../store/iterations';
import { loopById, recordDelivery } from '../store/loops';
import { finalReport, storeFinalReport, storePatchReport } from '../store/reports';
import { baseDrift } from './base-drift';
import type { DeliveryPreparation } from './prepare-delivery';
import { changeImpact } from './context-impact';
import { git, GitError, pushBranch } from './git';
import { early, inOrder } from './in-order';
import { remoteAccessFor } from './git-askpass';
import { DEFAULT_API_BASE_URLS, openPullRequest, PullRequestError } from './pull-request';

export interface DeliverInput {
  loopId: string;
  sequence: number;
  outcome: FinalReport['outcome'];
  approvedBy: string | null;
}

export interface DeliverOutput {
  reportId: string;
  pushedBranch?: string | null;
  pullRequestUrl?: string | null;
  deliveryError?: string | null;
}

/** Attempts of the deliver activity that retry a failed push or pull request before it is recorded as failed. */
const DELIVERY_ATTEMPTS = 3;

/**
 * Delivers a loop that passed or was approved: stores the change as a patch, pushes the branch and opens
 * the pull request when the request asks for them, and writes the final report (branch, commits, the
 * judge report, how review ran — stated from recorded calls only — and where the branch went).
 *
 * A push or pull request that still fails on the last attempt does not fail the loop: its result is
 * verified and kept (workspace, patch, report); the failure is recorded (`deliveryError`) for a human.
 * Idempotent: once the final report exists, its delivery is the loop's.
 */
export async function deliver(
  deps: ActivityDeps,
  input: DeliverInput,
  prepared?: Pick<DeliveryPreparation, 'drift' | 'contextImpact'>,
): Promise<DeliverOutput> {
  // The rows are read together; the iteration is only awaited when there is something to deliver.
  const loopRead = early(loopById(deps.prisma, input.loopId));
  const iterationRead = early(iterationWithVerdict(deps.prisma, input.loopId, input.sequence));
  const existing = await finalReport(deps.prisma, input.loopId);
  if (existing) {
    const done = await loopRead;
    return {
      reportId: existing.id,
      pushedBranch: done.pushedBranch,
      pullRequestUrl: done.pullRequestUrl,
      deliveryError: done.deliveryError,
    };
  }
  const [loop, iteration] = await inOrder([loopRead, iterationRead]);
  const checkpoint = iteration.checkpointCommit ?? loop.baseCommit!;
  // The patch does not depend on the report: stored while the report's figures are read.
  const patchStored = early(storePatch(deps, input.loopId, loop.workspacePath!, loop.baseCommit!, checkpoint));
  const request = (loop.input ?? {}) as {
    repository?: { url?: string; baseRef?: string; credential?: string };
    delivery?: unknown;
  };
  const repositoryUrl = request.repository?.url ?? loop.repoUrl;
  const baseRef = request.repository?.baseRef ?? loop.baseRef;
  const [contract, commits, reviewCall, impact, drift] = await inOrder([
    contractVersionForDelivery(deps.prisma, input.loopId, iteration.contractVersion),
    git(loop.workspacePath!, ['log', '--format=%H', `${loop.baseCommit}..${checkpoint}`]).then((out) =>
      out.split('\n').filter(Boolean),
    ),
    lastValidReview(deps.prisma, input.loopId, input.sequence),
    // Read moments ago by the activity that prepared this delivery, when it is the one delivering.
    prepared
      ? Promise.resolve(prepared.contextImpact)
      : changeImpact(loop.workspacePath!, loop.baseCommit!, checkpoint),
    prepared
      ? Promise.resolve(prepared.drift)
      : remoteAccessFor(deps.config, repositoryUrl, request.repository?.credential, 'repository url').then((remote) =>
          baseDrift(loop.workspacePath!, { url: repositoryUrl, baseRef, remote }, loop.baseCommit!, checkpoint),
        ),
  ]);
  const report: FinalReport = {
    outcome: input.outcome,
    objective: (contract.contract as { objective: string }).objective,
    contract: { version: contract.version, hash: contract.hash },
    branch: loop.branch ?? '',
    baseCommit: loop.baseCommit ?? '',
    checkpointCommit: checkpoint,
    commits,
    reviewMode: !reviewCall
      ? 'review unavailable'
      : reviewCall.kind === 'MODEL_CALL'
        ? `independent model call (model ${reviewCall.model ?? 'unknown'}, response id ${reviewCall.responseId ?? 'not returned'})`
        : `independent agent review (${reviewCall.provider}, pid ${reviewCall.pid ?? 'unknown'}, session ${reviewCall.responseId ?? 'not reported'})`,
    judge: iteration.verdict!.report as unknown as JudgeReport,
    sandbox: describeSandbox(loop.sandbox),
    warnings: (loop.gatePlan as { warnings?: string[] } | null)?.warnings ?? [],
    contextImpact: impact,
    baseDrift: drift,
    ...(iteration.replayedFromBase && iteration.replayedFromCheckpoint
      ? { replayed: { fromBase: iteration.replayedFromBase, fromCheckpoint: iteration.replayedFromCheckpoint } }
      : {}),
    ...(input.approvedBy ? { approvedBy: input.approvedBy } : {}),
  };

  await patchStored;

  // Loops submitted before delivery existed carry no `delivery`: nothing leaves the worker for them.
  const settings = request.delivery === undefined ? null : deliverySettingsSchema.safeParse(request.delivery);
  let delivery: DeliveryResult | null = null;
  if (settings && !settings.success) {
    delivery = {
      pushedBranch: null,
      pushedTo: null,
      pullRequestUrl: null,
      error: 'the stored delivery settings are invalid',
    };
  } else if (settings?.data.push) {
    delivery = await pushAndOpen(deps, {
      settings: settings.data,
      repositoryUrl,
      baseRef,
      credential: request.repository?.credential,
      workspace: loop.workspacePath!,
      branch: loop.branch!,
      checkpoint,
      title: `${report.objective.split('\n')[0]!.slice(0, 200)}`,
      body: [
        `**Objective:** ${report.objective}`,
        '',
        renderMergeRequestDescription(report),
        '',
        `_Opened by the engineering loop (loop ${input.loopId}, checkpoint ${checkpoint})._`,
      ].join('\n'),
    });
  }
  if (delivery) {
    report.delivery = delivery;
    await recordDelivery(deps.prisma, input.loopId, {
      pushedBranch: delivery.pushedBranch,
      pullRequestUrl: delivery.pullRequestUrl,
      deliveryError: delivery.error,
    });
  }
  const reportId = await storeFinalReport(deps.prisma, input.loopId, {
    body: report as object,
    markdown: renderFinalReport(report),
  });
  return {
    reportId,
    pushedBranch: delivery?.pushedBranch ?? null,
    pullRequestUrl: delivery?.pullRequestUrl ?? null,
    deliveryError: delivery?.error ?? null,
  };
}

/**
 * The change as `git format-patch` output (commits and all, binary-safe), for anyone without push
 * rights: `GET /v1/loops/:id/patch`. Stored in Postgres because the API may not see the worker's disk.
 */
async function storePatch(
  deps: ActivityDeps,
  loopId: string,
  workspace: string,
  base: string,
  checkpoint: string,
): Promise<void> {
  const patch = await git(workspace, [
    'format-patch',
    '--stdout',
    '--binary',
    '--no-signature',
    '--no-color',
    '--end-of-options',
    `${base}..${checkpoint}`,
  ]);
  // Only what is certainly a secret is redacted (a redacted patch no longer applies, which is the point).
  const text = sanitiseTokens(patch);
  await storePatchReport(deps.prisma, loopId, {
    body: { baseCommit: base, checkpointCommit: checkpoint, redacted: text !== patch },
    markdown: text,
  });
}

interface PushPlan {
  settings: DeliverySettings;
  repositoryUrl: string;
  baseRef: string;
  credential: string | undefined;
  workspace: string;
  branch: string;
  checkpoint: string;
  title: string;
  body: string;
}

async function pushAndOpen(deps: ActivityDeps, plan: PushPlan): Promise<DeliveryResult> {
  const target = plan.settings.pushUrl ?? plan.repositoryUrl;
  const result: DeliveryResult = { pushedBranch: null, pushedTo: target, pullRequestUrl: null, error: null };
  try {
    const remote = await remoteAccessFor(
      deps.config,
      target,
      plan.credential,
      plan.settings.pushUrl ? 'delivery.pushUrl' : 'repository url',
    );
    await pushBranch(plan.workspace, target, plan.checkpoint, plan.branch, remote);
    result.pushedBranch = plan.branch;
  } catch (err) {
    result.error = `push failed: ${deliveryProblem(err)}`;
    return result;
  }
  const pr = plan.settings.pullRequest;
  if (!pr) return result;
  try {
    const credential = plan.credential ? deps.config.gitCredentials?.[plan.credential] : undefined;
    if (!credential)
      throw ApplicationFailure.create({
        message: 'a pull request needs repository.credential configured on this worker',
        nonRetryable: true,
      });
    const project = pr.project ?? projectPathFromUrl(target);
    if (!project)
      throw ApplicationFailure.create({
        message: `cannot tell the ${pr.provider} project from ${target}; set delivery.pullRequest.project`,
        nonRetryable: true,
      });
    result.pullRequestUrl = await openPullRequest({
      provider: pr.provider,
      apiBaseUrl: credential.apiBaseUrl ?? DEFAULT_API_BASE_URLS[pr.provider],
      token: credential.apiToken ?? credential.password,
      project,
      head: plan.branch,
      base: pr.base ?? plan.baseRef,
      title: plan.title,
      body: plan.body,
      draft: pr.draft,
    });
  } catch (err) {
    result.error = `pull request failed: ${deliveryProblem(err)}`;
  }
  return result;
}

/**
 * The failure's text for the record, sanitised. A transient failure (git, the provider's API) is thrown
 * instead while attempts are left, so Temporal retries the activity with backoff.
 */
function deliveryProblem(err: unknown): string {
  const retryable = err instanceof GitError || err instanceof PullRequestError;
  if (retryable && attempt() < DELIVERY_ATTEMPTS) throw err;
  if (!(err instanceof Error)) throw err;
  if (!retryable && !(err instanceof ApplicationFailure)) throw err;
  return sanitise(err.message).slice(0, 2000);
}

function attempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return DELIVERY_ATTEMPTS;
  }
}
