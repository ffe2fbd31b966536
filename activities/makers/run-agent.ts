import os from 'node:os';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { GatePlan } from '../../domain/gates';
import type { LlmMakerSettings, MakerSettings } from '../../domain/loop-request';
import type { ActivityDeps } from '../deps';
import { recordMakerProcess } from '../../store/iterations';
import { loopGatePlan } from '../../store/loops';
import { recordExecution } from '../execution-records';
import { early } from '../in-order';
import { excludeFromCheckpoints } from '../git';
import { childEnvironment } from '../process/child-environment';
import { runCommand } from '../process/run-command';
import { modelCallCost } from '../usage';
import { agentProcessFields, agentRunOutcome } from './agent-process-record';
import { LlmMakerCancelled, ProviderCallError, runLlmMaker, type ModelCallRecord } from './llm-maker';
import { interruptionCause } from '../interruption';
import { parseAgentUsage, type AgentUsage } from './presets';
import { readPartialUsage } from './partial-usage';
import { isPresetBackend } from '../../domain/maker-presets';
import { launchPreset } from './launch-preset';
import type { SetupPlan } from '../../domain/setup';
import { setupEnvironment } from '../setup/setup-environment';
import { recordEgressRefusals } from '../egress-refusals';
import { agentEgress } from './agent-egress';

export interface AgentRun {
  loopId: string;
  sequence: number;
  roundIteration: number;
  workspace: string;
  prompt: string;
  promptFile: string;
  /** A directory outside the workspace the agent may write (its report goes there). */
  reportDir: string;
  /** Where a preset CLI's home, history and logs go (created here; writable to the agent). */
  stateDir: string;
  reportFile: string;
  /** The loop's package caches (an agent that runs the tests installs from them). */
  cacheDir: string;
  /** What set-up installed in the workspace: the agent runs the tests as the gates do (venv, pnpm/yarn). */
  setupPlan?: SetupPlan;
  maker: MakerSettings;
}

/** How the agent ended, as the iteration records it. */
export interface AgentOutcome {
  exitCode: number | null;
  timeoutStatus: 'COMPLETED' | 'TIMED_OUT' | 'CANCELLED';
  /**
   * The write of the run's execution record, still going when the agent was an ordinary process that
   * ended: the caller commits the checkpoint meanwhile and awaits it before anything reads the records.
   */
  recorded: Promise<unknown>;
}

const MAKER_OUTPUT_CAP = 256 * 1024;

/**
 * Runs the configured maker once in the workspace and records exactly what ran (docs/design.md §5.3): the agent
 * process or session, and every model call a built-in agent made.
 */
export async function runAgent(deps: ActivityDeps, run: AgentRun): Promise<AgentOutcome> {
  if (run.maker.backend === 'llm') return runBuiltInAgent(deps, run, run.maker);

  const ctx = Context.current();
  const toolchain = await setupEnvironment(deps.config.dataDir, run.workspace, run.setupPlan, run.cacheDir);
  const launch =
    run.maker.backend === 'command'
      ? { argv: run.maker.argv, stdin: run.prompt, env: deps.config.agentCredentials, home: undefined }
      : await launchPreset(deps, run.maker, {
          prompt: run.prompt,
          promptFile: run.promptFile,
          stateDir: run.stateDir,
          gateCommands: await gateCommands(deps, run.loopId),
          path: toolchain.env.PATH,
        });
  if (run.maker.backend === 'aider') await excludeFromCheckpoints(run.workspace, ['.aider*']);
  const result = await runCommand({
    argv: launch.argv,
    cwd: run.workspace,
    workspaceRoot: run.workspace,
    timeoutMs: run.maker.timeoutSeconds * 1000,
    // The maker edits the working tree only: `.git` (hooks, config, info/exclude) stays the service's.
    sandbox: {
      sandbox: deps.sandbox,
      policy: {
        workDir: run.workspace,
        readOnlyInWorkDir: ['.git'],
        readOnly: [run.promptFile, ...toolchain.readOnly],
        writable: [run.reportDir, ...(launch.home ? [run.stateDir] : [])],
        home: launch.home,
        egress: agentEgress(deps.config, run.maker),
        caches: { dir: run.cacheDir, access: 'use' },
      },
    },
    env: childEnvironment({
      ...toolchain.env,
      ...launch.env,
      LOOP_PROMPT_FILE: run.promptFile,
      LOOP_REPORT_FILE: run.reportFile,
      LOOP_ID: run.loopId,
      LOOP_SEQUENCE: String(run.sequence),
      LOOP_ITERATION: String(run.roundIteration),
    }),
    stdin: launch.stdin,
    outputCapBytes: MAKER_OUTPUT_CAP,
    heartbeat: () => ctx.heartbeat({ step: `maker #${run.sequence}`, aliveAt: Date.now() }),
    signal: ctx.cancellationSignal,
    onSpawn: (pid) => {
      void recordMakerProcess(deps.prisma, run.loopId, run.sequence, { makerPid: pid, makerHost: os.hostname() }).catch(
        () => undefined,
      );
    },
  });
  await recordEgressRefusals(
    deps,
    { loopId: run.loopId, iterationSeq: run.sequence, role: 'maker', step: run.maker.backend },
    result,
  );
  const usage = await withLoggedUsage(
    parseAgentUsage(run.maker.backend, result.stdout, result.stderr),
    run.maker.backend,
    run.stateDir,
  );
  const fields = agentProcessFields(deps.config, run.maker.backend, result, usage);
  // Cut short by a worker shutdown (or a lost attempt) rather than by the loop: it runs again.
  const interrupted = result.timeoutStatus === 'CANCELLED' ? interruptionCause() : null;
  const recorded = early(
    recordExecution(deps, {
      loopId: run.loopId,
      iterationSeq: run.sequence,
      role: 'maker',
      ...fields,
      ...(interrupted
        ? { outcome: 'INTERRUPTED', detail: interruptedDetail(interrupted, fields.latencyMs) }
        : agentRunOutcome(result, usage)),
    }),
  );
  if (result.timeoutStatus === 'CANCELLED' || result.spawnError) await recorded;
  if (result.timeoutStatus === 'CANCELLED') throw new CancelledFailure('the loop was cancelled while the maker ran');
  if (result.spawnError) {
    throw ApplicationFailure.create({
      type: 'MakerCommandFailed',
      message: `the maker could not start: ${result.spawnError}`,
      nonRetryable: true,
    });
  }
  return { exitCode: result.exitCode, timeoutStatus: result.timeoutStatus, recorded };
}

async function runBuiltInAgent(deps: ActivityDeps, run: AgentRun, settings: LlmMakerSettings): Promise<AgentOutcome> {
  const ctx = Context.current();
  const endpoint = settings.provider === 'openai' ? deps.config.llm : deps.config.anthropic;
  const model = settings.model ?? endpoint.model;
  const allowedGates = await gateCommands(deps, run.loopId);
  const started = Date.now();
  const record = (calls: ModelCallRecord[]) =>
    Promise.all(
      calls.map((c) =>
        recordExecution(deps, {
          loopId: run.loopId,
          iterationSeq: run.sequence,
          role: 'maker',
          kind: 'MODEL_CALL',
          provider: c.provider,
          model: c.model,
          responseId: c.responseId,
          requestId: c.requestId,
          promptTokens: c.promptTokens,
          completionTokens: c.completionTokens,
          costUsd: modelCallCost(deps.config, c.model, c.promptTokens, c.completionTokens),
          latencyMs: c.latencyMs,
          outcome: c.outcome,
        }),
      ),
    );
  const session = (outcome: string, detail: string) =>
    recordExecution(deps, {
      loopId: run.loopId,
      iterationSeq: run.sequence,
      role: 'maker',
      kind: 'AGENT_SESSION',
      provider: `built-in/${settings.provider}`,
      model,
      latencyMs: Date.now() - started,
      outcome,
      detail,
    });
  try {
    const result = await runLlmMaker({
      provider: settings.provider,
      baseUrl: endpoint.baseUrl,
      apiKey: endpoint.apiKey,
      model,
      workspace: run.workspace,
      sandbox: deps.sandbox,
      prompt: run.prompt,
      maxSteps: settings.maxSteps,
      allowedCommands: [...settings.allowedCommands, ...allowedGates],
      commandTimeoutMs: 5 * 60_000,
      requestTimeoutMs: deps.config.llm.timeoutSeconds * 1000,
      maxOutputTokens: 8192,
      signal: ctx.cancellationSignal,
      heartbeat: () => ctx.heartbeat({ step: `maker #${run.sequence}`, aliveAt: Date.now() }),
    });
    await record(result.calls);
    await session(
      result.stopReason === 'completed' ? 'COMPLETED' : 'STEP_LIMIT',
      [
        `${result.steps} step(s), ${result.toolCalls.length} tool call(s)`,
        ...result.toolCalls.slice(-20).map((t) => `${t.ok ? 'ok' : 'refused'} ${t.tool}: ${t.summary}`),
        result.finalMessage.slice(0, 2000),
      ].join('\n'),
    );
    return { exitCode: null, timeoutStatus: 'COMPLETED', recorded: Promise.resolve() };
  } catch (err) {
    if (err instanceof LlmMakerCancelled) {
      // What it spent before the cancel counts; the session says it was cut short and why.
      await record(err.calls);
      const interrupted = interruptionCause();
      await (interrupted
        ? session('INTERRUPTED', interruptedDetail(interrupted, Date.now() - started))
        : session('CANCELLED', 'the loop was cancelled'));
      throw new CancelledFailure('the maker was cancelled');
    }
    if (!(err instanceof ProviderCallError)) throw err;
    await record(err.calls);
    await session(err.status ? `HTTP_${err.status}` : 'PROVIDER_ERROR', err.message.slice(0, 2000));
    // 429/5xx: the activity retry policy backs off and tries again; 401/403 and other 4xx cannot recover.
    throw ApplicationFailure.create({ type: 'MakerProviderError', message: err.message, nonRetryable: !err.retryable });
  }
}

/** An interrupted run's detail: why, after how long, and that the attempt runs again. */
function interruptedDetail(cause: string, ranMs: number): string {
  return `stopped after ${Math.round(ranMs / 1000)} s: ${cause}; the attempt runs again`;
}

/** The loop's gate commands: an agent may run these, so it can check its work as the judge will. */
async function gateCommands(deps: ActivityDeps, loopId: string): Promise<string[][]> {
  const loop = await loopGatePlan(deps.prisma, loopId);
  return ((loop.gatePlan as GatePlan | null)?.gates ?? []).map((g) => g.argv);
}

/**
 * A preset CLI killed at its timeout or by a cancel prints no usage: what its session log says it spent
 * (partial-usage.ts) is recorded instead, so the run's cost is not lost.
 */
async function withLoggedUsage(usage: AgentUsage, backend: string, stateDir: string): Promise<AgentUsage> {
  if (usage.promptTokens !== null || !isPresetBackend(backend)) return usage;
  const logged = await readPartialUsage(backend, stateDir);
  return logged
    ? {
        ...usage,
        model: usage.model ?? logged.model,
        promptTokens: logged.promptTokens,
        completionTokens: logged.completionTokens,
        costUsd: usage.costUsd ?? logged.costUsd,
      }
    : usage;
}
