import { CancelledFailure, Context } from '@temporalio/activity';
import type { TestReport } from '../../analysis/test-reports';
import type { GateSummary, ResolvedGate } from '../../domain/gates';
import { sanitise } from '../../domain/sanitise';
import type { ActivityDeps } from '../deps';
import { childEnvironment } from '../process/child-environment';
import { runCommand, type CommandResult } from '../process/run-command';
import type { SandboxPolicy } from '../sandbox/types';
import { gateFailureReason } from './gate-outcome';
import { instrumentTestsGate } from './test-reporter';
import { freshReportDir } from './verification-build-dir';
import { recordEgressRefusals } from '../egress-refusals';

// How verification runs a command in its checkout: in the sandbox, with the set-up's toolchain and the
// build directory, heartbeating as it goes (docs/design.md §3.3).

/** Stored per stream; the sha256 and byte count always cover the full stream. */
const STORED_OUTPUT_CAP = 1024 * 1024;
const OUTPUT_TAIL_CHARS = 2000;

export interface TestsGateRun {
  result: CommandResult;
  output: string;
  report: TestReport | null;
  counts: GateSummary['testCounts'];
  failureReason: string | null;
}

export interface VerificationRunner {
  run(
    argv: string[],
    timeoutSeconds: number,
    label: string,
    env?: Record<string, string>,
    unset?: string[],
  ): Promise<CommandResult>;
  /** The tests gate, with a machine-readable reporter added so every test's name is known; `unset` leaves variables out. */
  runTests(configured: ResolvedGate, name: string, unset?: string[]): Promise<TestsGateRun>;
  /** Any gate but tests. */
  runOther(configured: ResolvedGate): Promise<TestsGateRun>;
}

export function verificationRunner(
  deps: ActivityDeps,
  at: { loopId: string; iterationSeq: number },
  checkout: string,
  policy: SandboxPolicy,
  toolchainEnv: Record<string, string>,
  build: { dir: string; env: Record<string, string> },
  /** Called as each command starts. */
  onSpawn: () => void = () => undefined,
): VerificationRunner {
  const ctx = Context.current();
  const run = async (
    argv: string[],
    timeoutSeconds: number,
    label: string,
    env: Record<string, string> = {},
    unset: string[] = [],
  ): Promise<CommandResult> => {
    const childEnv = childEnvironment({ ...toolchainEnv, ...build.env, ...env });
    for (const name of unset) delete childEnv[name];
    const result = await runCommand({
      argv,
      cwd: checkout,
      workspaceRoot: checkout,
      timeoutMs: timeoutSeconds * 1000,
      sandbox: { sandbox: deps.sandbox, policy },
      env: childEnv,
      outputCapBytes: STORED_OUTPUT_CAP,
      confinePathArguments: true,
      heartbeat: () => ctx.heartbeat({ phase: 'verify', step: label }),
      signal: ctx.cancellationSignal,
      onSpawn,
    });
    await recordEgressRefusals(deps, { ...at, role: 'gate', step: label }, result);
    return result;
  };
  const runOther = async (configured: ResolvedGate): Promise<TestsGateRun> => {
    const result = await run(configured.argv, configured.timeoutSeconds, `gate ${configured.gate}`);
    return {
      result,
      output: `${result.stdout}\n${result.stderr}`,
      report: null,
      counts: null,
      failureReason: gateFailureReason(configured.gate, result, null),
    };
  };
  const runTests = async (configured: ResolvedGate, name: string, unset: string[] = []): Promise<TestsGateRun> => {
    const tests = await instrumentTestsGate(configured, checkout, await freshReportDir(deps, build.dir, name));
    const result = await run(tests.argv, configured.timeoutSeconds, `gate ${name}`, tests.env, unset);
    const output = `${result.stdout}\n${result.stderr}`;
    const report = await tests.read(output);
    const counts = report && { passed: report.passed, failed: report.failed, skipped: report.skipped };
    return { result, output, report, counts, failureReason: gateFailureReason('tests', result, counts) };
  };
  return { run, runTests, runOther };
}

/** A cancelled run is stored like any other (timeoutStatus CANCELLED), then the activity ends. */
export function stopIfCancelled(result: CommandResult, label: string): void {
  if (result.timeoutStatus === 'CANCELLED') throw new CancelledFailure(`the loop was cancelled during ${label}`);
}

export function outputTail(output: string): string {
  return sanitise(output.trim().slice(-OUTPUT_TAIL_CHARS));
}
