import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { buildMakerPrompt } from '../domain/maker-prompt';
import type { MakerSettings } from '../domain/loop-request';
import { loadContract } from './contract';
import type { ActivityDeps } from './deps';
import { recordExecution } from './execution-records';
import { changedFiles, commitAll, diffText, headCommit, resetTo, sha256 } from './git';
import { childEnvironment } from './process/child-environment';
import { redactSecrets } from './process/redact';
import { runCommand } from './process/run-command';
import { serviceSecrets } from './service-secrets';

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
  checkpointCommit: string;
  /** sha256 of the whole diff against the base commit: equal hashes mean equal branch contents. */
  diffHash: string;
  changedFiles: string[];
  noChange: boolean;
  cumulativeDiffEmpty: boolean;
  exitCode: number | null;
  timeoutStatus: string;
}

const MAKER_OUTPUT_CAP = 256 * 1024;

/**
 * Runs the maker for one iteration and commits a checkpoint. Idempotent per (loop, sequence): a finished
 * iteration returns its stored result; an interrupted one is reset to its start commit and run again.
 */
export async function runMaker(deps: ActivityDeps, input: MakerInput): Promise<MakerResult> {
  const loop = await deps.prisma.loop.findUniqueOrThrow({ where: { id: input.loopId } });
  if (!loop.workspacePath || !loop.baseCommit) throw new Error(`loop ${input.loopId} has no prepared workspace`);
  const workspace = loop.workspacePath;

  const existing = await deps.prisma.iteration.findUnique({
    where: { loopId_sequence: { loopId: input.loopId, sequence: input.sequence } },
  });
  if (existing?.makerFinishedAt && existing.checkpointCommit) {
    return storedResult(existing, await isEmptyDiff(workspace, loop.baseCommit, existing.checkpointCommit));
  }
  let startCommit: string;
  if (existing) {
    startCommit = existing.startCommit;
    await resetTo(workspace, startCommit);
    await deps.prisma.iteration.update({ where: { id: existing.id }, data: { makerAttempts: { increment: 1 } } });
  } else {
    startCommit = await headCommit(workspace);
    await deps.prisma.iteration.create({
      data: {
        loopId: input.loopId,
        sequence: input.sequence,
        roundIteration: input.roundIteration,
        contractVersion: input.contractVersion,
        startCommit,
        makerAttempts: 1,
      },
    });
  }

  const frozen = await loadContract(deps, input.loopId, input.contractVersion);
  const prompt = buildMakerPrompt(frozen, input.directives, input);
  // The prompt file lives inside .git so it is never part of a checkpoint.
  const promptFile = path.join(workspace, '.git', 'engineering-loop', `prompt-${input.sequence}.md`);
  await fs.mkdir(path.dirname(promptFile), { recursive: true });
  await fs.writeFile(promptFile, prompt);

  const ctx = Context.current();
  const result = await runCommand({
    argv: input.maker.argv,
    cwd: workspace,
    workspaceRoot: workspace,
    timeoutMs: input.maker.timeoutSeconds * 1000,
    env: childEnvironment({
      LOOP_PROMPT_FILE: promptFile,
      LOOP_ID: input.loopId,
      LOOP_SEQUENCE: String(input.sequence),
      LOOP_ITERATION: String(input.roundIteration),
    }),
    stdin: prompt,
    outputCapBytes: MAKER_OUTPUT_CAP,
    heartbeat: () => ctx.heartbeat({ phase: 'maker', sequence: input.sequence }),
    signal: ctx.cancellationSignal,
  });
  await recordExecution(deps, {
    loopId: input.loopId,
    iterationSeq: input.sequence,
    role: 'maker',
    kind: 'AGENT_PROCESS',
    provider: 'command',
    pid: result.pid,
    latencyMs: result.endTime.getTime() - result.startTime.getTime(),
    outcome: result.spawnError ? 'SPAWN_FAILED' : result.timeoutStatus === 'COMPLETED' ? `EXIT_${result.exitCode}` : result.timeoutStatus,
    detail: redactSecrets(result.spawnError ?? `${result.stdout.slice(-2000)}\n${result.stderr.slice(-2000)}`, serviceSecrets(deps.config)).trim(),
  });
  if (result.timeoutStatus === 'CANCELLED') throw new CancelledFailure('the loop was cancelled while the maker ran');
  if (result.spawnError) {
    throw ApplicationFailure.create({
      type: 'MakerCommandFailed',
      message: `the maker command could not start: ${result.spawnError}`,
      nonRetryable: true,
    });
  }

  const commit = await commitAll(workspace, `engineering-loop: iteration ${input.sequence} checkpoint`);
  const checkpointCommit = commit ?? startCommit;
  const cumulativeDiff = await diffText(workspace, loop.baseCommit, checkpointCommit);
  const files = await changedFiles(workspace, startCommit, checkpointCommit);
  const updated = await deps.prisma.iteration.update({
    where: { loopId_sequence: { loopId: input.loopId, sequence: input.sequence } },
    data: {
      checkpointCommit,
      diffHash: sha256(cumulativeDiff),
      changedFiles: files,
      noChange: commit === null,
      makerExitCode: result.exitCode,
      makerTimeoutStatus: result.timeoutStatus,
      makerFinishedAt: new Date(),
    },
  });
  return storedResult(updated, cumulativeDiff === '');
}

function storedResult(
  row: { sequence: number; checkpointCommit: string | null; diffHash: string | null; changedFiles: unknown; noChange: boolean | null; makerExitCode: number | null; makerTimeoutStatus: string | null },
  cumulativeDiffEmpty: boolean,
): MakerResult {
  const files = Array.isArray(row.changedFiles) ? (row.changedFiles as string[]) : [];
  return {
    sequence: row.sequence,
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

async function isEmptyDiff(workspace: string, base: string, commit: string): Promise<boolean> {
  return (await diffText(workspace, base, commit)) === '';
}
