import type { NetworkRequest } from '../domain/egress';
import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import type { GateCommand, GatePlan } from '../domain/gates';
import { SERVICE_EXCLUDES, type SetupCommand, type SetupPlan } from '../domain/setup';
import { VerificationConfigError } from '../domain/verification-config';
import type { ActivityDeps } from './deps';
import { loopById, recordPreparedWorkspace } from '../store/loops';
import { cloneFromMirror, excludeFromCheckpoints, git, GitError, sha256, updateMirror } from './git';
import { resolveSetupPlan } from './setup/infer-setup';
import { remoteAccessFor } from './git-askpass';
import { handOver } from './sandbox/hand-over';
import { inOrder } from './in-order';
import { discoverGates } from './verification/gate-discovery';

export interface PrepareWorkspaceInput {
  loopId: string;
  /** `credential` names an operator-configured credential (activities/git-askpass.ts), never a secret. */
  repository: { url: string; baseRef: string; credential?: string };
  /** The task contract's gate commands, the most specific layer of gate discovery. */
  contractGates: GateCommand[];
}
export interface PreparedWorkspace {
  workspacePath: string;
  baseCommit: string;
  branch: string;
  /** Resolved from the base commit, before the maker can touch anything that would steer it. */
  gatePlan: GatePlan;
}

export function workspacePathFor(deps: ActivityDeps, loopId: string): string {
  return path.join(deps.config.workspacesDir, loopId);
}

export function loopBranch(loopId: string): string {
  return `engineering-loop/${loopId}`;
}

/**
 * Clones the repository into the loop's own workspace, creates the loop's branch at the base ref and
 * resolves the gate plan from the base commit. Idempotent.
 */
export async function prepareWorkspace(deps: ActivityDeps, input: PrepareWorkspaceInput): Promise<PreparedWorkspace> {
  const loop = await loopById(deps.prisma, input.loopId);
  const workspacePath = workspacePathFor(deps, input.loopId);
  const branch = loopBranch(input.loopId);
  if (loop.baseCommit && loop.workspacePath && loop.gatePlan && (await exists(path.join(loop.workspacePath, '.git')))) {
    return {
      workspacePath: loop.workspacePath,
      baseCommit: loop.baseCommit,
      branch,
      gatePlan: loop.gatePlan as unknown as GatePlan,
    };
  }

  // A half-finished clone from an earlier attempt is discarded and redone.
  await fs.rm(workspacePath, { recursive: true, force: true });
  await fs.mkdir(path.dirname(workspacePath), { recursive: true });
  let baseCommit: string;
  try {
    const remote = await remoteAccessFor(
      deps.config,
      input.repository.url,
      input.repository.credential,
      'repository url',
    );
    const mirror = mirrorPathFor(deps, input.repository.url, input.repository.credential);
    await fs.mkdir(path.dirname(mirror), { recursive: true });
    // The clone too: it copies the mirror's object files, which an update in progress adds and removes.
    await oneAtATime(mirror, async () => {
      await updateMirror(deps.config.workspacesDir, input.repository.url, mirror, remote);
      await cloneFromMirror(deps.config.workspacesDir, mirror, input.repository.url, workspacePath);
    });
    // A full commit id: the branch checked out at it has it as HEAD.
    baseCommit = await resolveBaseRef(workspacePath, input.repository.baseRef);
    await git(workspacePath, ['checkout', '--quiet', '-b', branch, baseCommit, '--']);
  } catch (err) {
    if (err instanceof GitError) {
      throw ApplicationFailure.create({ type: 'WorkspaceError', message: err.message, nonRetryable: true });
    }
    throw err;
  }
  // The plans only read the base files: worked out while the workspace changes owner.
  const [, setup, discovered] = await inOrder([
    handOver(deps.sandbox, workspacePath),
    resolveSetup(workspacePath, loop.input),
    resolveGatePlan(workspacePath, input.contractGates),
  ]);
  const gatePlan: GatePlan = { ...withRequestedNetwork(discovered, loop.input), setup };
  await excludeFromCheckpoints(workspacePath, [...SERVICE_EXCLUDES, ...setup.outputs]);
  await recordPreparedWorkspace(deps.prisma, input.loopId, {
    workspacePath,
    baseCommit,
    branch,
    gatePlan: gatePlan as object,
    sandbox: deps.sandbox.mode,
  });
  return { workspacePath, baseCommit, branch, gatePlan };
}

/** How dependencies get installed: the request's `setup`, the repository's, or inferred from its manifests. */
function resolveSetup(workspacePath: string, request: unknown): Promise<SetupPlan> {
  const requested = (request as { setup?: SetupCommand[] } | null)?.setup;
  return failOnConfigError(resolveSetupPlan({ workspace: workspacePath, requested }));
}

function resolveGatePlan(workspacePath: string, contractGates: GateCommand[]): Promise<GatePlan> {
  return failOnConfigError(discoverGates({ workspace: workspacePath, contractGates }));
}

/** A broken repository config is the repository owner's to fix; retrying cannot help. */
async function failOnConfigError<T>(resolving: Promise<T>): Promise<T> {
  try {
    return await resolving;
  } catch (err) {
    if (err instanceof VerificationConfigError) {
      throw ApplicationFailure.create({ type: 'VerificationConfigError', message: err.message, nonRetryable: true });
    }
    throw err;
  }
}

/** A branch name resolves through the clone's remote; a tag or commit id resolves as it is. */
async function resolveBaseRef(workspacePath: string, ref: string): Promise<string> {
  for (const candidate of [`origin/${ref}`, ref]) {
    const commit = await git(workspacePath, [
      'rev-parse',
      '--verify',
      '--quiet',
      '--end-of-options',
      `${candidate}^{commit}`,
    ]).catch(() => '');
    if (commit.trim()) return commit.trim();
  }
  throw new GitError(`base ref "${ref}" does not exist in the repository`);
}

async function exists(p: string): Promise<boolean> {
  return fs.stat(p).then(
    () => true,
    () => false,
  );
}

/** Only the request opens the network to gates (`gateNetwork`), within the operator's SANDBOX_EGRESS_GATES. */
function withRequestedNetwork(plan: GatePlan, request: unknown): GatePlan {
  const requested = (request as { gateNetwork?: NetworkRequest } | null)?.gateNetwork ?? false;
  if (requested === false) return plan;
  const hosts = requested === true ? 'the hosts of SANDBOX_EGRESS_GATES' : requested.join(', ');
  return {
    ...plan,
    network: requested,
    notes: [...plan.notes, `gates may reach ${hosts} (the request sets gateNetwork)`],
  };
}

/** One bare mirror per repository (and credential): later loops on it fetch what changed instead of cloning. */
function mirrorPathFor(deps: ActivityDeps, url: string, credential: string | undefined): string {
  return path.join(deps.config.cachesDir, 'mirrors', `${sha256(`${url}\n${credential ?? ''}`).slice(0, 16)}.git`);
}

// Two loops of one worker updating the same mirror would race for git's ref locks, and a clone copying its
// object files would race an update's new and removed ones.
const mirrorWork = new Map<string, Promise<unknown>>();

function oneAtATime(key: string, work: () => Promise<void>): Promise<void> {
  const run = (mirrorWork.get(key) ?? Promise.resolve()).catch(() => undefined).then(work);
  mirrorWork.set(key, run);
  return run.finally(() => {
    if (mirrorWork.get(key) === run) mirrorWork.delete(key);
  });
}
