import fs from 'node:fs/promises';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { FindingLedger } from '../../domain/ledger';
import type { ReviewerSettings } from '../../domain/loop-request';
import { sanitise } from '../../domain/sanitise';
import type { ActivityDeps } from '../deps';
import { settlePendingLedger } from '../../store/execution-records';
import { recordExecution } from '../execution-records';
import { git } from '../git';
import { agentProcessFields } from '../makers/agent-process-record';
import { extractAgentText, parseAgentUsage } from '../makers/presets';
import { launchPreset } from '../makers/launch-preset';
import { childEnvironment } from '../process/child-environment';
import { runCommand } from '../process/run-command';
import { handOver } from '../sandbox/hand-over';
import type { ChatMessage } from './chat-completions';
import { parseLedger } from './parse-ledger';
import type { StructuredAnswer } from './structured-answer';
import { recordEgressRefusals } from '../egress-refusals';
import { agentEgress } from '../makers/agent-egress';

type AgentReviewer = Extract<ReviewerSettings, { backend: 'agent' }>['agent'];

/**
 * Review by a coding-agent CLI. It runs on a disposable detached checkout of the checkpoint, so nothing
 * it does can touch the loop's workspace; its final text must be the finding ledger, re-asked with the
 * validation errors a bounded number of times. Each run is recorded like any agent process.
 */
export async function reviewWithAgent(
  deps: ActivityDeps,
  input: {
    loopId: string;
    sequence: number;
    workspace: string;
    checkpointCommit: string;
    agent: AgentReviewer;
    messages: ChatMessage[];
  },
): Promise<StructuredAnswer<FindingLedger>> {
  const checkout = path.join(deps.config.dataDir, 'review-checkouts', `${input.loopId}-${input.sequence}`);
  await fs.rm(checkout, { recursive: true, force: true });
  await git(input.workspace, ['worktree', 'prune']);
  await git(input.workspace, ['worktree', 'add', '--detach', '--force', checkout, input.checkpointCommit]);
  await handOver(deps.sandbox, checkout);
  try {
    let prompt = input.messages.map((m) => m.content).join('\n\n');
    let errors: string[] = [];
    const responseIds: string[] = [];
    for (let attempt = 0; attempt <= deps.config.llm.repairAttempts; attempt++) {
      const { text, sessionId } = await runReviewer(deps, input, checkout, prompt, attempt);
      if (sessionId) responseIds.push(sessionId);
      const parsed = parseLedger(text);
      await settlePendingLedger(deps.prisma, input.loopId, input.sequence, {
        outcome: parsed.ok ? 'VALID_LEDGER' : 'INVALID_LEDGER',
        detail: parsed.ok ? null : sanitise(parsed.errors.join('\n').slice(0, 4000)),
      });
      if (parsed.ok) return { ok: true, value: parsed.ledger, responseIds };
      errors = parsed.errors;
      prompt = `${prompt}\n\nYour previous answer is not a valid finding ledger:\n${errors.map((e) => `- ${e}`).join('\n')}\nAnswer again with only the corrected JSON object.`;
    }
    return { ok: false, errors };
  } finally {
    await git(input.workspace, ['worktree', 'remove', '--force', checkout]).catch(() =>
      fs.rm(checkout, { recursive: true, force: true }),
    );
  }
}

async function runReviewer(
  deps: ActivityDeps,
  input: { loopId: string; sequence: number; workspace: string; agent: AgentReviewer },
  checkout: string,
  prompt: string,
  attempt: number,
): Promise<{ text: string; sessionId: string | null }> {
  const ctx = Context.current();
  const promptFile = path.join(path.dirname(checkout), `${path.basename(checkout)}-prompt-${attempt}.md`);
  await fs.writeFile(promptFile, prompt);
  const agent = input.agent;
  const stateDir = path.join(path.dirname(checkout), `${path.basename(checkout)}-agent-${attempt}`);
  const launch =
    agent.backend === 'command'
      ? { argv: agent.argv, stdin: prompt, env: deps.config.agentCredentials, home: undefined }
      : await launchPreset(deps, agent, { prompt, promptFile, stateDir, gateCommands: [] });
  const result = await runCommand({
    argv: launch.argv,
    cwd: checkout,
    workspaceRoot: checkout,
    timeoutMs: agent.timeoutSeconds * 1000,
    sandbox: {
      sandbox: deps.sandbox,
      // The checkout's git directory lives in the loop's workspace: readable, never writable.
      policy: {
        workDir: checkout,
        readOnly: [path.join(input.workspace, '.git'), promptFile],
        writable: launch.home ? [stateDir] : [],
        home: launch.home,
        egress: agentEgress(deps.config, agent),
      },
    },
    env: childEnvironment({
      ...launch.env,
      LOOP_PROMPT_FILE: promptFile,
      LOOP_ID: input.loopId,
      LOOP_SEQUENCE: String(input.sequence),
    }),
    stdin: launch.stdin,
    outputCapBytes: 1024 * 1024,
    heartbeat: () => ctx.heartbeat({ phase: 'review', sequence: input.sequence }),
    signal: ctx.cancellationSignal,
  });
  await Promise.all([fs.rm(promptFile, { force: true }), fs.rm(stateDir, { recursive: true, force: true })]);
  await recordEgressRefusals(
    deps,
    { loopId: input.loopId, iterationSeq: input.sequence, role: 'reviewer', step: agent.backend },
    result,
  );
  const usage = parseAgentUsage(agent.backend, result.stdout, result.stderr);
  await recordExecution(deps, {
    loopId: input.loopId,
    iterationSeq: input.sequence,
    role: 'reviewer',
    ...agentProcessFields(deps.config, agent.backend, result, usage),
    // Settled to VALID_LEDGER / INVALID_LEDGER once the answer is parsed.
    outcome:
      result.timeoutStatus === 'COMPLETED' && result.exitCode === 0
        ? 'PENDING_LEDGER'
        : result.spawnError
          ? 'SPAWN_FAILED'
          : `EXIT_${result.exitCode ?? result.timeoutStatus}`,
    detail: result.spawnError,
  });
  if (result.timeoutStatus === 'CANCELLED') throw new CancelledFailure('the loop was cancelled during review');
  if (result.spawnError || result.exitCode !== 0 || result.timeoutStatus !== 'COMPLETED') {
    throw ApplicationFailure.create({
      type: 'ReviewerAgentFailed',
      message: `the reviewer agent ${result.spawnError ? `could not start: ${result.spawnError}` : `ended with ${result.timeoutStatus === 'COMPLETED' ? `exit code ${result.exitCode}` : result.timeoutStatus}`}`,
      nonRetryable: result.spawnError !== null,
    });
  }
  return { text: extractAgentText(agent.backend, result.stdout), sessionId: usage.sessionId };
}
