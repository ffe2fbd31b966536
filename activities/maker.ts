import { collectedTestFiles } from '../analysis/verification/collected-test-files';
import { loopTestsEvidence } from '../store/evidence';
import { BASE_TESTS_GATE, inventoryOf } from './verification/base-run';
import { Context } from '@temporalio/activity';
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { Usage } from '../domain/budget';
import { AGENT_REPORT_KINDS, type AgentReport } from '../domain/judge';
import { buildMakerPrompt, type OpenFinding } from '../domain/maker-prompt';
import type { ResolvedGate } from '../domain/gates';
import type { FindingSummary } from '../domain/ledger';
import type { FrozenContract } from '../domain/contract';
import type { MakerSettings } from '../domain/loop-request';
import { sanitise } from '../domain/sanitise';
import { loadContract } from './contract';
import { preparedLoop, type PreparedLoop } from './prepared-workspace';
import { discardVerificationCheckout } from './verification/verification-checkout';
import { early, inOrder } from './in-order';
import type { ActivityDeps } from './deps';
import { blockingFindingsForMaker } from '../store/findings';
import { countMakerAttempt, createIteration, findIteration, recordMakerResult } from '../store/iterations';
import { countMakerRuns } from '../store/execution-records';
import { recordExecution } from './execution-records';
import { changedFiles, commitAllThen, diffText, headCommit, resetTo, sha256, type Checkpoint } from './git';
import { runAgent, type AgentOutcome } from './makers/run-agent';
import { handOver, handOverNewDirs } from './sandbox/hand-over';
import { loopCaches } from './sandbox/loop-caches';
import { stopPreviousAttempt } from './sandbox/stop-previous-attempt';
import { recordedUsage } from './usage';
import { agentRunCost } from './makers/agent-process-record';
import { isPresetBackend } from '../domain/maker-presets';
import { readPartialUsage } from './makers/partial-usage';
import { whileHeartbeating } from './heartbeat';
import { examineCheckpoint, inspectChanges, recordInspection } from './inspect-changes';
import { leftBehindFiles } from './left-behind-files';

export interface MakerInput {
  loopId: string;
  sequence: number;
  roundIteration: number;
  maxIterations: number;
  contractVersion: number;
  directives: string[];
  maker: MakerSettings;
}

export interface MakerResult {
  sequence: number;
  /** What the maker spent in this iteration (tokens, USD, wall time). */
  usage: Usage;
  /** The agent asked for a human: contradictory requirements, a destructive operation, an irreproducible failure. */
  agentReport: AgentReport | null;
  checkpointCommit: string;
  /** sha256 of the whole diff against the base commit: equal hashes mean equal branch contents. */
  diffHash: string;
  changedFiles: string[];
  noChange: boolean;
  cumulativeDiffEmpty: boolean;
  exitCode: number | null;
  timeoutStatus: string;
}

/**
 * Runs the maker for one iteration and commits a checkpoint, and checks that checkpoint for tampering
 * and scope too (no round trip through the workflow of its own). Idempotent per (loop,
 * sequence): a finished iteration returns its stored result; an interrupted one is reset to its start
 * commit and run again.
 */
export async function runMaker(
  deps: ActivityDeps,
  input: MakerInput & CheckpointInspection,
  hooks: IterationHooks = {},
): Promise<MakerResult & { inspected: FindingSummary[] }> {
  const { loop, existing, head } = await readIteration(deps, input);
  if (existing?.makerFinishedAt && existing.checkpointCommit) return finishedIteration(deps, input, existing);
  // The previous verification's checkout is of no more use: removed while the maker works (it can be large).
  const previousCheckoutGone = early(discardVerificationCheckout(deps, input.loopId));
  const frozenContract = early(loadContract(deps, input.loopId, input.contractVersion));
  const findings = early(openFindings(deps, input));
  const collectedTests = early(baseCollectedTests(deps, input.loopId));
  const cacheDir = early(loopCaches(deps, input.loopId));
  const attempt = await prepareWorkspace(deps, input, loop.workspacePath, existing, head);
  hooks.beforeAgent?.({ startCommit: attempt.startCommit, workspace: loop.workspacePath, previousCheckoutGone });
  const { frozen, prompt } = await writePrompt(deps, input, attempt, frozenContract, findings);
  const result = await runAgentInWorkspace(deps, input, loop, attempt, prompt, await cacheDir);
  const committed = await commitCheckpoint(input, loop, attempt, result, (commit) =>
    hooks.afterCheckpoint?.({
      commit,
      workspace: loop.workspacePath,
      iterationId: attempt.iterationId,
      loop,
      fresh: !existing,
    }),
  );
  const { checkpointCommit } = committed;
  // The tamper and scope check reads git while the maker's result is stored; its findings are stored after it.
  const inspection = {
    loopId: input.loopId,
    iterationId: attempt.iterationId,
    workspace: loop.workspacePath,
    baseCommit: loop.baseCommit,
    checkpointCommit,
    contract: frozen.contract,
    gates: input.inspect.gates,
    collectedTests: await collectedTests,
  };
  const examined = early(inspecting(examineCheckpoint(inspection, committed.leftBehind ?? undefined)));
  const made = await recordIteration(deps, input, loop, attempt, result, committed);
  // Nothing of this attempt outlives it.
  await previousCheckoutGone.catch(() => undefined);
  return { ...made, inspected: await recordInspection(deps, inspection, await examined) };
}

/** What the caller does beside the iteration (not on a finished iteration's retry). */
export interface IterationHooks {
  /**
   * Called as the agent starts, the workspace at `startCommit`; `previousCheckoutGone`: the previous
   * verification's checkout being removed.
   */
  beforeAgent?: (start: { startCommit: string; workspace: string; previousCheckoutGone: Promise<unknown> }) => void;
  /**
   * Called once the checkpoint is committed, before it is inspected and stored (in the iteration's row,
   * `iterationId`; `fresh`: made by this attempt). What it returns, the maker's reads, records and inspection
   * wait for (it must settle): they do not compete with what the caller starts for the processor.
   */
  afterCheckpoint?: (checkpoint: {
    commit: string;
    workspace: string;
    iterationId: string;
    loop: PreparedLoop;
    fresh: boolean;
  }) => Promise<unknown> | void;
}

/** The loop, and the iteration's row if an attempt made it. */
async function readIteration(deps: ActivityDeps, input: MakerInput) {
  // The reads go out together; each is awaited where it was needed, so a failure surfaces where it did.
  const prepared = early(preparedLoop(deps, input.loopId));
  // A first attempt starts from HEAD, read beside the rows (a retry, rarer, starts where the first did).
  const head = early(prepared.then((loop) => headCommit(loop.workspacePath)));
  const [loop, existing] = await inOrder([prepared, findIteration(deps.prisma, input.loopId, input.sequence)]);
  return { loop, existing, head };
}

/** A finished iteration's stored result, with its checkpoint inspected again. */
async function finishedIteration(
  deps: ActivityDeps,
  input: MakerInput & CheckpointInspection,
  existing: IterationResultRow,
): Promise<MakerResult & { inspected: FindingSummary[] }> {
  const made = await storedResult(deps, input, existing, existing.diffHash === EMPTY_DIFF_HASH);
  return {
    ...made,
    inspected: await inspecting(
      inspectChanges(deps, {
        loopId: input.loopId,
        sequence: input.sequence,
        contractVersion: input.contractVersion,
        gates: input.inspect.gates,
      }),
    ),
  };
}

/** This attempt's start: its iteration row, start commit and fresh control directory. */
interface Attempt {
  iterationId: string;
  startCommit: string;
  control: ReturnType<typeof controlFiles>;
  /** The control directory, emptied and made again. */
  controlDir: Promise<unknown>;
}

/**
 * The workspace as the iteration starts it: a retry stops the previous attempt's agent and resets to its
 * start commit; a first attempt creates the iteration's row at HEAD.
 */
async function prepareWorkspace(
  deps: ActivityDeps,
  input: MakerInput,
  workspace: string,
  existing: {
    id: string;
    startCommit: string;
    makerPid: number | null;
    makerHost: string | null;
    makerStartedAt: Date | null;
    makerAttempts: number;
  } | null,
  head: Promise<string>,
): Promise<Attempt> {
  // The service's own files live outside the workspace: the maker reads the prompt and may write only
  // its report, and neither can become part of a checkpoint.
  const control = controlFiles(deps, input.loopId, input.sequence);
  const freshControlDir = () =>
    early(
      fs.rm(control.dir, { recursive: true, force: true }).then(() => fs.mkdir(control.reportDir, { recursive: true })),
    );
  let startCommit: string;
  let iterationId: string;
  let controlDir: Promise<unknown>;
  if (existing) {
    startCommit = existing.startCommit;
    iterationId = existing.id;
    // An agent left running by a worker that died must not keep writing while this attempt starts over.
    if (existing.makerPid && existing.makerHost === os.hostname()) {
      await stopPreviousAttempt(existing.makerPid, { LOOP_ID: input.loopId, LOOP_SEQUENCE: String(input.sequence) });
    }
    await recordInterruptedAttempt(deps, input, existing, control.stateDir);
    await resetTo(workspace, startCommit);
    await handOver(deps.sandbox, workspace);
    await countMakerAttempt(deps.prisma, existing.id);
    // Only now: the stopped attempt's agent could still have written its report.
    controlDir = freshControlDir();
  } else {
    controlDir = freshControlDir();
    startCommit = await head;
    ({ id: iterationId } = await createIteration(deps.prisma, {
      loopId: input.loopId,
      sequence: input.sequence,
      roundIteration: input.roundIteration,
      contractVersion: input.contractVersion,
      startCommit,
      makerAttempts: 1,
    }));
  }
  return { iterationId, startCommit, control, controlDir };
}

/**
 * An attempt that left no record of its agent run was cut short — its worker died, restarted or shut
 * down — and is recorded now, with what is known of it: the process, when it started, how long it was
 * seen alive (its last heartbeat or session log write), and what a preset CLI's session log says it had
 * spent by then.
 */
async function recordInterruptedAttempt(
  deps: ActivityDeps,
  input: MakerInput,
  existing: {
    makerPid: number | null;
    makerHost: string | null;
    makerStartedAt: Date | null;
    makerAttempts: number;
  },
  stateDir: string,
): Promise<void> {
  const recorded = await countMakerRuns(deps.prisma, input.loopId, input.sequence);
  if (recorded >= existing.makerAttempts) return;
  const process = existing.makerPid ? ` (pid ${existing.makerPid} on ${existing.makerHost ?? 'an unknown host'})` : '';
  const backend = input.maker.backend;
  const spent = isPresetBackend(backend) ? await readPartialUsage(backend, stateDir) : null;
  const started = existing.makerStartedAt?.getTime() ?? null;
  // Seen alive: its last heartbeat (Temporal keeps one every 16 s at most), or its last session log write.
  const aliveAt = Math.max(lastAliveAt(Context.current().info.heartbeatDetails) ?? 0, spent?.lastWrittenAt ?? 0);
  const ranMs = started !== null && aliveAt > started ? aliveAt - started : null;
  const ran =
    started === null
      ? ''
      : ranMs === null
        ? ` started at ${new Date(started).toISOString()} and`
        : ` started at ${new Date(started).toISOString()}, was last seen alive ${Math.round(ranMs / 1000)} s later, and`;
  await recordExecution(deps, {
    loopId: input.loopId,
    iterationSeq: input.sequence,
    role: 'maker',
    kind: 'AGENT_PROCESS',
    provider: backend,
    pid: existing.makerPid,
    model: spent?.model ?? null,
    promptTokens: spent?.promptTokens ?? null,
    completionTokens: spent?.completionTokens ?? null,
    costUsd: spent ? agentRunCost(deps.config, spent) : null,
    latencyMs: ranMs ?? 0,
    outcome: 'INTERRUPTED',
    detail: `attempt ${existing.makerAttempts}${process}${ran} ended without finishing: its worker stopped (a crash, a restart or a shutdown) and the attempt runs again; ${
      spent
        ? `by then it had used ${spent.promptTokens} input and ${spent.completionTokens} output tokens (its session log)`
        : 'what it spent was not reported'
    }`,
  });
}

/** When the attempt last heartbeat (its details carry aliveAt, activities/heartbeat.ts); null if unknown. */
function lastAliveAt(details: unknown): number | null {
  const at = details !== null && typeof details === 'object' ? (details as { aliveAt?: unknown }).aliveAt : null;
  return typeof at === 'number' && Number.isFinite(at) ? at : null;
}

/** The prompt, from the frozen contract and the findings left open, written where the agent reads it. */
async function writePrompt(
  deps: ActivityDeps,
  input: MakerInput,
  { control, controlDir }: Attempt,
  frozenContract: Promise<FrozenContract>,
  findings: Promise<OpenFinding[]>,
) {
  const frozen = await frozenContract;
  // The prompt goes to a model (and to a file the agent reads): no secret goes with it.
  const prompt = sanitise(
    buildMakerPrompt(frozen, { directives: input.directives, openFindings: await findings }, input),
  );
  await controlDir;
  await fs.writeFile(control.promptFile, prompt, { mode: 0o644 });
  await handOverNewDirs(deps.sandbox, control.reportDir);
  return { frozen, prompt };
}

function runAgentInWorkspace(
  deps: ActivityDeps,
  input: MakerInput,
  loop: PreparedLoop,
  { control }: Attempt,
  prompt: string,
  cacheDir: string,
): Promise<AgentOutcome> {
  return runAgent(deps, {
    loopId: input.loopId,
    sequence: input.sequence,
    roundIteration: input.roundIteration,
    workspace: loop.workspacePath,
    prompt,
    promptFile: control.promptFile,
    reportDir: control.reportDir,
    stateDir: control.stateDir,
    reportFile: control.reportFile,
    cacheDir,
    setupPlan: loop.gatePlan?.setup,
    maker: input.maker,
  });
}

interface Committed {
  /** Null when the agent changed nothing. */
  checkpoint: Checkpoint | null;
  /** The checkpoint, or the start commit when nothing changed. */
  checkpointCommit: string;
  /** The cumulative diff, read with the commit; null when nothing was committed. */
  cumulativeDiff: string | null;
  /** The files git ignores, listed as soon as the commit was made; null when nothing was committed. */
  leftBehind: Promise<string[]> | null;
}

/**
 * Commits what the agent changed; the cumulative diff and the files git ignores are read once the checkpoint
 * is HEAD, beside the reading of its ids. `onCheckpoint` hears the checkpoint (the start commit when nothing
 * changed) once: as soon as HEAD's files name it, before those reads, which wait for what it returns.
 */
async function commitCheckpoint(
  input: MakerInput,
  loop: PreparedLoop,
  { startCommit }: Attempt,
  result: AgentOutcome,
  onCheckpoint: (commit: string) => Promise<unknown> | void,
): Promise<Committed> {
  const workspace = loop.workspacePath;
  const baseCommit = loop.baseCommit;
  let leftBehind: Promise<string[]> | null = null;
  let told = false;
  let clear!: (wait?: Promise<unknown> | void) => void;
  const cleared = new Promise<unknown>((resolve) => (clear = resolve));
  const tell = (commit: string) => {
    // A failed wait is the caller's to report: the reads go on all the same.
    if (!told) clear(Promise.resolve(onCheckpoint(commit)).catch(() => undefined));
    told = true;
  };
  const [, committed] = await inOrder([
    result.recorded,
    commitAllThen(workspace, `engineering-loop: iteration ${input.sequence} checkpoint`, () => {
      // Read apart from the reads below (git show names it too, when they end); an error leaves it to them.
      headCommit(workspace)
        .then(tell)
        .catch(() => clear());
      return cleared.then(() => {
        leftBehind = early(leftBehindFiles(workspace));
        return diffText(workspace, baseCommit, 'HEAD');
      });
    }),
  ]);
  const checkpoint = committed?.checkpoint ?? null;
  tell(checkpoint?.commit ?? startCommit);
  return {
    checkpoint,
    checkpointCommit: checkpoint?.commit ?? startCommit,
    cumulativeDiff: committed ? committed.after : null,
    leftBehind,
  };
}

/** Stores what the iteration made: its checkpoint, diff hash, changed files and how the agent ended. */
async function recordIteration(
  deps: ActivityDeps,
  input: MakerInput,
  loop: PreparedLoop,
  { startCommit }: Attempt,
  result: AgentOutcome,
  { checkpoint, checkpointCommit, cumulativeDiff: committedDiff }: Committed,
): Promise<MakerResult> {
  const workspace = loop.workspacePath;
  const baseCommit = loop.baseCommit;
  const [cumulativeDiff, files] = await inOrder([
    committedDiff !== null ? Promise.resolve(committedDiff) : diffText(workspace, baseCommit, checkpointCommit),
    iterationFiles(workspace, startCommit, checkpoint),
  ]);
  const updated = recordMakerResult(
    deps.prisma,
    input.loopId,
    input.sequence,
    {
      checkpointCommit,
      diffHash: sha256(cumulativeDiff),
      changedFiles: files,
      noChange: checkpoint === null,
      makerExitCode: result.exitCode,
      makerTimeoutStatus: result.timeoutStatus,
      makerFinishedAt: new Date(),
    },
    cumulativeDiff,
  );
  return storedResult(deps, input, updated, cumulativeDiff === '');
}

/** What the maker's activity checks its checkpoint against for tampering and scope. */
export interface CheckpointInspection {
  inspect: { gates: ResolvedGate[] };
}

/** The inspection heartbeats on its own: on a large repository it outlasts the heartbeat timeout. */
function inspecting<T>(work: Promise<T>): Promise<T> {
  return whileHeartbeating(work, 'inspect changes');
}

/** The result from the iteration's row (`stored` may still be being written; the records it sums are). */
async function storedResult(
  deps: ActivityDeps,
  input: MakerInput,
  stored: IterationResultRow | Promise<IterationResultRow>,
  cumulativeDiffEmpty: boolean,
): Promise<MakerResult> {
  const [row, usage, agentReport] = await inOrder([
    Promise.resolve(stored),
    recordedUsage(deps, input.loopId, input.sequence, ['maker']),
    readAgentReport(controlFiles(deps, input.loopId, input.sequence).reportFile),
  ]);
  const files = Array.isArray(row.changedFiles) ? (row.changedFiles as string[]) : [];
  return {
    sequence: row.sequence,
    usage,
    agentReport,
    checkpointCommit: row.checkpointCommit ?? '',
    diffHash: row.diffHash ?? '',
    // Bounded so a sweeping change cannot bloat workflow history; the full list is in Postgres.
    changedFiles: files.slice(0, 100),
    noChange: row.noChange ?? false,
    cumulativeDiffEmpty,
    exitCode: row.makerExitCode,
    timeoutStatus: row.makerTimeoutStatus ?? 'COMPLETED',
  };
}

type IterationResultRow = {
  sequence: number;
  checkpointCommit: string | null;
  diffHash: string | null;
  changedFiles: unknown;
  noChange: boolean | null;
  makerExitCode: number | null;
  makerTimeoutStatus: string | null;
};

/** The blocking findings (reviewer's and the system's) the previous iteration left open. */
async function openFindings(deps: ActivityDeps, input: MakerInput): Promise<OpenFinding[]> {
  if (input.directives.length === 0) return [];
  const rows = await blockingFindingsForMaker(deps.prisma, input.loopId, input.sequence - 1);
  return rows.map((f) => ({
    findingId: f.findingId,
    severity: f.severity,
    title: f.title,
    location: f.location as OpenFinding['location'],
    evidence: f.evidence.slice(0, 2000),
    concreteAlternativeDiff: f.concreteAlternativeDiff?.slice(0, 4000) ?? null,
  }));
}

/** Per iteration, under $DATA_DIR/control: the prompt (read-only to the agent), its report directory, a preset's home. */
function controlFiles(deps: ActivityDeps, loopId: string, sequence: number) {
  const dir = path.join(deps.config.dataDir, 'control', loopId, String(sequence));
  const reportDir = path.join(dir, 'out');
  return {
    dir,
    promptFile: path.join(dir, 'prompt.md'),
    reportDir,
    reportFile: path.join(reportDir, 'report.json'),
    stateDir: path.join(dir, 'agent'),
  };
}

const agentReportSchema = z.object({ kind: z.enum(AGENT_REPORT_KINDS), reason: z.string().trim().min(1).max(5000) });

/** The report an agent left in $LOOP_REPORT_FILE; one that does not parse is itself worth a human's look. */
async function readAgentReport(file: string): Promise<AgentReport | null> {
  const text = await readOwnFile(file, 64 * 1024);
  if (text === null) return null;
  try {
    // The reason goes into workflow history, the escalation and the report.
    const report = agentReportSchema.parse(JSON.parse(text));
    return { ...report, reason: sanitise(report.reason) };
  } catch {
    return {
      kind: 'IRREPRODUCIBLE_FAILURE',
      reason: `the agent wrote an unreadable report: ${sanitise(text.slice(0, 500))}`,
    };
  }
}

/** The stored diffHash of an empty cumulative diff: a finished iteration's emptiness without diffing again. */
const EMPTY_DIFF_HASH = sha256('');

/** What this iteration changed (start → checkpoint): the commit's own files when it was made on the start commit. */
async function iterationFiles(
  workspace: string,
  startCommit: string,
  checkpoint: Checkpoint | null,
): Promise<string[]> {
  if (!checkpoint) return [];
  // Only an unconfined maker (SANDBOX=none) could have moved HEAD since the iteration started.
  if (checkpoint.parents.length === 1 && checkpoint.parents[0] === startCommit) return checkpoint.changedFiles;
  return changedFiles(workspace, startCommit, checkpoint.commit);
}

/**
 * A regular file's text, never through a symlink: the agent controls this directory and must not make
 * the service read (and quote) a file the agent itself cannot see.
 */
async function readOwnFile(file: string, maxBytes: number): Promise<string | null> {
  const handle = await fs
    .open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK)
    .catch(() => null);
  if (!handle) return null;
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return null;
    const buffer = Buffer.alloc(Math.min(stat.size, maxBytes));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * The files the loop's base run collected tests from (run before the first maker when the contract names
 * tests): a `spec/` only the runner's configuration names is checked as tests from the first iteration on.
 */
async function baseCollectedTests(deps: ActivityDeps, loopId: string): Promise<string[]> {
  const base = await loopTestsEvidence(deps.prisma, loopId, BASE_TESTS_GATE);
  const inventory = base && inventoryOf(base);
  return inventory ? collectedTestFiles(inventory.names) : [];
}
