import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { explainMakerRun } from '../../domain/maker-outcome';
import { presetMakerSettingsSchema, type PresetBackend } from '../../domain/maker-presets';
import { insertAgentCheck, type AgentCheckRow } from '../../store/agent-checks';
import type { ActivityDeps } from '../deps';
import { git } from '../git';
import { handOver } from '../sandbox/hand-over';
import { childEnvironment } from '../process/child-environment';
import { runCommand, type CommandResult } from '../process/run-command';
import { agentEgress } from './agent-egress';
import { agentProcessFields, agentRunOutcome } from './agent-process-record';
import { launchPreset } from './launch-preset';
import { parseAgentUsage } from './presets';

// A preset's smoke test (docs/agents.md, "Checking the presets"): the installed CLI, run the way a maker runs
// it — its per-run home, the operator's endpoint, in the sandbox behind the same egress allow-list — in a
// scratch repository, asked for one word. It passes when the CLI exits 0 with no error of its own or of the
// model API; otherwise the record says why, in the words a maker run's failure gets (domain/maker-outcome.ts).

const CHECK_PROMPT =
  'This is a connectivity check by the engineering loop service. Reply with the single word OK. ' +
  'Do not read, run or change anything.';
const CHECK_TIMEOUT_MS = 120_000;
const VERSION_TIMEOUT_MS = 30_000;
const OUTPUT_CAP = 64 * 1024;

export type AgentCheckResult = AgentCheckRow & { checkedAt: string };

export async function checkAgent(deps: ActivityDeps, input: { backend: PresetBackend }): Promise<AgentCheckResult> {
  const ctx = Context.current();
  const settings = presetMakerSettingsSchema.parse({ backend: input.backend });
  const root = path.join(deps.config.dataDir, 'agent-checks', crypto.randomUUID());
  const workspace = path.join(root, 'workspace');
  const stateDir = path.join(root, 'state');
  const promptFile = path.join(root, 'prompt.md');
  try {
    await fs.mkdir(workspace, { recursive: true });
    await fs.writeFile(path.join(workspace, 'README.md'), '# Agent check\n');
    await git(workspace, ['init', '-q']);
    await git(workspace, ['add', '-A']);
    await git(workspace, [
      '-c',
      'user.name=Engineering loop',
      '-c',
      'user.email=loop@engineering-loop.invalid',
      'commit',
      '-qm',
      'check',
    ]);
    await fs.writeFile(promptFile, CHECK_PROMPT);
    // Owned by the sandbox's uid under a root service, as a maker's workspace is (a CLI may write its caches there).
    await handOver(deps.sandbox, workspace);
    const launch = await launchPreset(deps, settings, { prompt: CHECK_PROMPT, promptFile, stateDir, gateCommands: [] });
    const run = (argv: string[], timeoutMs: number, network: boolean) =>
      runCommand({
        argv,
        cwd: workspace,
        workspaceRoot: workspace,
        timeoutMs,
        sandbox: {
          sandbox: deps.sandbox,
          policy: {
            workDir: workspace,
            readOnlyInWorkDir: ['.git'],
            readOnly: [promptFile],
            writable: [stateDir],
            home: launch.home,
            egress: network ? agentEgress(deps.config, settings) : null,
          },
        },
        env: childEnvironment(launch.env),
        stdin: network ? launch.stdin : undefined,
        outputCapBytes: OUTPUT_CAP,
        heartbeat: () => ctx.heartbeat(),
        signal: ctx.cancellationSignal,
      });
    const version = await run([settings.binaryPath, '--version'], VERSION_TIMEOUT_MS, false);
    const result = await run(launch.argv, CHECK_TIMEOUT_MS, true);
    const row = checkRow(deps, input.backend, version, result);
    const stored = await insertAgentCheck(deps.prisma, row);
    return { ...row, checkedAt: stored.checkedAt.toISOString() };
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
}

function checkRow(
  deps: ActivityDeps,
  backend: PresetBackend,
  version: CommandResult,
  result: CommandResult,
): AgentCheckRow {
  const usage = parseAgentUsage(backend, result.stdout, result.stderr);
  const fields = agentProcessFields(deps.config, backend, result, usage);
  const { outcome, detail } = agentRunOutcome(result, usage);
  const refused = result.egressRefused.map((r) => `${r.host}:${r.port}`);
  const { explanation } = explainMakerRun({ provider: backend, outcome, detail, latencyMs: fields.latencyMs }, refused);
  return {
    backend,
    host: os.hostname(),
    version: version.exitCode === 0 ? (version.stdout.trim().split('\n')[0] ?? '').slice(0, 200) || null : null,
    // Refused side traffic (telemetry, update checks) is named in the explanation; the check is about the model.
    ok: outcome === 'EXIT_0' && !usage.apiErrorStatus,
    outcome,
    explanation,
    model: fields.model ?? null,
    promptTokens: fields.promptTokens ?? null,
    completionTokens: fields.completionTokens ?? null,
    latencyMs: fields.latencyMs,
  };
}
