import { CancelledFailure, Context } from '@temporalio/activity';
import type { GatePlan } from '../../domain/gates';
import { sanitise } from '../../domain/sanitise';
import { outputTail, type SetupPlan } from '../../domain/setup';
import type { ActivityDeps } from '../deps';
import { insertSetupEvidence } from '../../store/evidence';
import { childEnvironment } from '../process/child-environment';
import { runCommand, type CommandResult } from '../process/run-command';
import { seedLoopCaches } from '../sandbox/loop-caches';
import { stripToolConfig } from '../sandbox/strip-tool-config';
import { fetchSharedCaches } from './cache-fetch';
import { operatorHint } from './operator-hints';
import { environmentProblem, gateFailureReason, limitProblem } from '../verification/gate-outcome';
import { setupEnvironment } from './setup-environment';
import { recordEgressRefusals, refusedEgressLine } from '../egress-refusals';

// Runs a loop's set-up commands (installing dependencies) in one work dir, with network, each stored as
// Evidence (gate `setup:<n>`, its layer as source). The first failure stops it; the problem, with the
// tail of the output, goes to a human as an ENVIRONMENT escalation — never to the maker.

/** Stored per stream, like gate output. */
const STORED_OUTPUT_CAP = 1024 * 1024;
/** Set-up rows sort before the gates of the same iteration. */
export const SETUP_GATE_ORDER = -100;

export interface SetupRun {
  loopId: string;
  /** The iteration the evidence belongs to; null for the maker workspace's set-up (loop-level evidence). */
  iterationId: string | null;
  iterationSeq: number | null;
  /** Evidence gate name prefix: `setup` in a verification, `workspace-setup:<key>` in the maker's workspace. */
  prefix: string;
  workDir: string;
  /** Sub-paths of the work dir the commands must not write (the maker workspace's `.git`: hooks, exclude). */
  readOnlyInWorkDir?: string[];
  /** Other host paths the commands may read (a worktree's .git). */
  readOnly: string[];
  plan: SetupPlan;
  repoUrl: string;
  phase: string;
}

export interface SetupOutcome {
  /** Null when every command passed (or there was none). */
  problem: string | null;
  evidenceIds: string[];
}

export function setupPlanOf(gatePlan: unknown): SetupPlan | undefined {
  return (gatePlan as GatePlan | null)?.setup;
}

export async function runSetupCommands(deps: ActivityDeps, run: SetupRun): Promise<SetupOutcome> {
  if (run.plan.commands.length === 0) return { problem: null, evidenceIds: [] };
  const ctx = Context.current();
  const cacheDir = await setupCaches(deps, run, ctx);
  try {
    return await runEach(deps, run, ctx, cacheDir);
  } finally {
    // What the commands left in the caches steers nothing after them: no tool config survives set-up.
    await stripToolConfig(deps.sandbox, cacheDir);
  }
}

/**
 * The loop's own caches, seeded from the shared ones for the work dir's lockfiles (fetched first when no
 * loop fetched them yet). Set-up commands run the repository's code, so they write only the loop's copy.
 */
async function setupCaches(deps: ActivityDeps, run: SetupRun, ctx: Context): Promise<string> {
  const shared = await fetchSharedCaches(deps, {
    loopId: run.loopId,
    iterationSeq: run.iterationSeq,
    repoUrl: run.repoUrl,
    workDir: run.workDir,
    heartbeat: () => ctx.heartbeat({ phase: run.phase, step: 'cache-fetch' }),
    signal: ctx.cancellationSignal,
  });
  return seedLoopCaches(deps, run.loopId, shared);
}

async function runEach(deps: ActivityDeps, run: SetupRun, ctx: Context, cacheDir: string): Promise<SetupOutcome> {
  const extra = await setupEnvironment(deps.config.dataDir, run.workDir, run.plan, cacheDir, process.env, true);
  const evidenceIds: string[] = [];
  for (const [index, command] of run.plan.commands.entries()) {
    const label = `${run.prefix}:${index + 1}`;
    const result = await runCommand({
      argv: command.argv,
      cwd: run.workDir,
      workspaceRoot: run.workDir,
      timeoutMs: command.timeoutSeconds * 1000,
      // Installing needs the registries (SANDBOX_EGRESS_SETUP); the gates after it get no network unless asked for.
      sandbox: {
        sandbox: deps.sandbox,
        policy: {
          workDir: run.workDir,
          readOnlyInWorkDir: run.readOnlyInWorkDir,
          readOnly: [...run.readOnly, ...extra.readOnly],
          egress: deps.config.sandbox.egress.setup,
          caches: { dir: cacheDir, access: 'install' },
        },
      },
      env: childEnvironment(extra.env),
      outputCapBytes: STORED_OUTPUT_CAP,
      confinePathArguments: true,
      heartbeat: () => ctx.heartbeat({ phase: run.phase, step: label }),
      signal: ctx.cancellationSignal,
    });
    await recordEgressRefusals(
      deps,
      { loopId: run.loopId, iterationSeq: run.iterationSeq, role: 'setup', step: label },
      result,
    );
    const failure = gateFailureReason(label, result, null);
    const problem = failure && describeFailure(result, failure, command.detail);
    const evidenceId = await insertSetupEvidence(deps.prisma, {
      loopId: run.loopId,
      iterationId: run.iterationId,
      gate: label,
      gateOrder: SETUP_GATE_ORDER + index,
      status: failure ? 'FAILED' : 'PASSED',
      source: command.source,
      sourceDetail: command.detail,
      command: result.argv,
      executionId: result.executionId,
      pid: result.pid,
      startTime: result.startTime,
      endTime: result.endTime,
      exitCode: result.exitCode,
      timeoutStatus: result.timeoutStatus,
      stdout: sanitise(result.stdout),
      stderr: sanitise(result.spawnError ? `${result.stderr}${result.spawnError}` : result.stderr),
      stdoutSha256: result.stdoutSha256,
      stderrSha256: result.stderrSha256,
      stdoutBytes: result.stdoutBytes,
      stderrBytes: result.stderrBytes,
      outputTruncated: result.truncated,
      failureReason: problem && sanitise(problem),
      failureSignature: null,
      assertionEvidence: [],
    });
    evidenceIds.push(evidenceId);
    if (result.timeoutStatus === 'CANCELLED') throw new CancelledFailure(`the loop was cancelled during ${label}`);
    if (problem) return { problem: sanitise(problem), evidenceIds };
  }
  return { problem: null, evidenceIds };
}

/** One paragraph a person can act on: what failed, what was missing, and the end of what it printed. */
function describeFailure(result: CommandResult, failure: string, detail: string): string {
  const missing = environmentProblem({ ...result, limit: limitProblem(result) });
  const refused = refusedEgressLine(result.egressRefused);
  const tail = outputTail([result.stdout, result.stderr, result.spawnError ?? ''].filter((t) => t.trim()).join('\n'));
  const hint = operatorHint(`${result.stdout}\n${result.stderr}`);
  return [
    `set-up command \`${result.argv.join(' ')}\` (${detail}) failed: ${missing ?? failure}${refused ? `; ${refused}` : ''}`,
    ...(hint ? [`To fix: ${hint}.`] : []),
    tail ? `\n\`\`\`\n${tail}\n\`\`\`` : '',
  ].join('\n');
}
