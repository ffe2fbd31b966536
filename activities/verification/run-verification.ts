import { CancelledFailure, Context } from '@temporalio/activity';
import type { AcceptanceCriterion } from '../../domain/contract';
import { sanitise } from '../../domain/sanitise';
import path from 'node:path';
import { GATE_ORDER, type GateName, type GateSummary, type ResolvedGate } from '../../domain/gates';
import type { AcceptanceCheckSummary } from '../../domain/judge';
import type { FindingSummary } from '../../domain/ledger';
import { loadContract } from '../contract';
import { assertGivenCheckpoint, preparedLoop } from '../prepared-workspace';
import { early, inOrder } from '../in-order';
import type { ActivityDeps } from '../deps';
import type { Prisma } from '../../prisma/client';
import { sha256 } from '../git';
import { childEnvironment } from '../process/child-environment';
import { runCommand, type CommandResult } from '../process/run-command';
import { COULD_NOT_START, environmentProblem, gateFailureReason, normaliseOutput } from './gate-outcome';
import { runSetupCommands, setupPlanOf } from '../setup/run-setup';
import { setupEnvironment } from '../setup/setup-environment';
import { repositoryCaches } from '../sandbox/repository-caches';
import type { SandboxPolicy } from '../sandbox/types';
import { storedTestNames } from './stored-test-names';
import { instrumentTestsGate } from './test-reporter';
import { freshBuildDir, freshReportDir } from './verification-build-dir';
import { freshVerificationCheckout } from './verification-checkout';
import { entrypointsToRestore, restoreInCheckout } from './protected-files';
import { frozenTestFindings, type TestsRun } from './frozen-test-findings';
import { editedBaseTestFiles, withBaseVersions } from './frozen-tests';
import { storeSystemFindings, storedSystemFindings, VERIFICATION_FINDING_PREFIX } from '../system-findings';
import type { FileChange } from '../../analysis/tamper/change-set';
import type { TestReport } from '../../analysis/test-reports';
import { loadChanges, readAt } from '../tamper/change-set';
import { observeGate } from '../../telemetry/loop-metrics';

export interface VerificationInput {
  loopId: string;
  sequence: number;
  contractVersion: number;
  gates: ResolvedGate[];
  /** The maker's checkpoint, as its result gave it (the iteration's row must name the same commit). */
  checkpointCommit: string;
}

export interface VerificationResult {
  gates: GateSummary[];
  acceptanceChecks: AcceptanceCheckSummary[];
  /** Why the checkout's set-up failed (no gate ran then), with the output's tail; null when it passed. */
  environmentProblem?: string | null;
  /** What running the frozen base tests beside the maker's showed (docs/design.md §3.4); stored as SYSTEM findings. */
  systemFindings: FindingSummary[];
}

/** Stored per stream; the sha256 and byte count always cover the full stream. */
const STORED_OUTPUT_CAP = 1024 * 1024;

/**
 * Runs the configured gates in order (tests → typecheck → lint → build), stopping at the first failure,
 * then each acceptance criterion's own command. Every run is stored as Evidence; the workflow gets
 * ids and one-line summaries. Idempotent per (loop, sequence).
 */
export async function runVerification(deps: ActivityDeps, input: VerificationInput): Promise<VerificationResult> {
  const prepared = early(preparedLoop(deps, input.loopId));
  // Given the checkpoint, its checkout is made while the rows are read.
  const { checkpointCommit } = input;
  const earlyCheckout = early(prepared.then((loop) => freshVerificationCheckout(deps, input.loopId, loop.workspacePath, checkpointCommit)));
  const [loop, iteration, { contract }] = await inOrder([
    prepared,
    deps.prisma.iteration.findUniqueOrThrow({ where: { loopId_sequence: { loopId: input.loopId, sequence: input.sequence } } }),
    loadContract(deps, input.loopId, input.contractVersion),
  ]);
  assertGivenCheckpoint(input.loopId, input.sequence, checkpointCommit, iteration.checkpointCommit);
  if (iteration.verifiedAt) {
    await earlyCheckout.catch(() => undefined);
    return storedVerification(deps, iteration.id, input, contract.acceptanceCriteria);
  }
  const buildDir = early(freshBuildDir(deps, input.loopId));
  // The branch's changes (base → checkpoint), read once for both the entrypoint restore and the frozen tests.
  let changes: Promise<FileChange[]> | undefined;
  const branchChanges = () => (changes ??= early(loadChanges(loop.workspacePath, loop.baseCommit, checkpointCommit)));
  const testsGate = input.gates.find((g) => g.gate === 'tests');
  // Read while the checkout is made, when either use below needs them.
  if (!contract.allowGateConfigChanges || (testsGate && !contract.allowTestChanges)) void branchChanges();
  const cacheDir = early(repositoryCaches(deps, loop.repoUrl));
  const commits = { workspace: loop.workspacePath, baseCommit: loop.baseCommit, checkpointCommit: checkpointCommit, gates: input.gates };
  const toRestore = contract.allowGateConfigChanges ? null : early(branchChanges().then((changed) => entrypointsToRestore(commits, changed)));
  // Evidence of an interrupted attempt is discarded (before any is stored): this attempt re-runs every gate.
  const [, checkout] = await inOrder([
    deps.prisma.$transaction([
      deps.prisma.evidence.deleteMany({ where: { iterationId: iteration.id } }),
      deps.prisma.finding.deleteMany({ where: { iterationId: iteration.id, findingId: { startsWith: VERIFICATION_FINDING_PREFIX } } }),
    ]),
    earlyCheckout,
  ]);
  // Gates (and set-up, which reads .npmrc and pip.conf) run with the base versions of their
  // entrypoints unless the contract allows changing them; the tamper rule reports the change.
  if (toRestore) await restoreInCheckout(checkout, loop.baseCommit, await toRestore);
  const policy: SandboxPolicy = {
    workDir: checkout,
    // The worktree's git directory, so `git` inside a gate can answer (read-only).
    readOnly: [path.join(loop.workspacePath, '.git')],
    network: loop.gatePlan?.network ?? false,
    caches: { dir: await cacheDir, access: 'use' },
  };

  // Dependencies are installed in the fresh checkout from the checkpoint's own manifests, with network,
  // before any gate: nothing the maker installed in its workspace can reach a gate.
  const setupPlan = setupPlanOf(loop.gatePlan);
  const setup = setupPlan
    ? await runSetupCommands(deps, { loopId: input.loopId, iterationId: iteration.id, prefix: 'setup', workDir: checkout, readOnly: policy.readOnly ?? [], plan: setupPlan, repoUrl: loop.repoUrl, phase: 'verify' })
    : { problem: null, evidenceIds: [] };
  if (setup.problem) {
    await deps.prisma.iteration.update({ where: { id: iteration.id }, data: { verifiedAt: new Date() }, select: { id: true } });
    return { gates: GATE_ORDER.map((gate) => summary(gate, input.gates.some((g) => g.gate === gate) ? 'NOT_RUN' : 'NOT_CONFIGURED')), acceptanceChecks: [], environmentProblem: setup.problem, systemFindings: [] };
  }
  // The venv's bin first on PATH (gates run `python -m pytest`), pnpm/yarn through corepack.
  const toolchain = await setupEnvironment(deps.config.dataDir, checkout, setupPlan);
  policy.readOnly = [...(policy.readOnly ?? []), ...toolchain.readOnly];
  const build = await buildDir;
  policy.writable = [build.dir];

  const ctx = Context.current();
  const run = async (argv: string[], timeoutSeconds: number, label: string, env: Record<string, string> = {}): Promise<CommandResult> => {
    const result = await runCommand({
      argv,
      cwd: checkout,
      workspaceRoot: checkout,
      timeoutMs: timeoutSeconds * 1000,
      sandbox: { sandbox: deps.sandbox, policy },
      env: childEnvironment({ ...toolchain.env, ...build.env, ...env }),
      outputCapBytes: STORED_OUTPUT_CAP,
      confinePathArguments: true,
      heartbeat: () => ctx.heartbeat({ phase: 'verify', step: label }),
      signal: ctx.cancellationSignal,
    });
    return result;
  };
  // A cancelled run is stored like any other (timeoutStatus CANCELLED), then the activity ends.
  const stopIfCancelled = (result: CommandResult, label: string) => {
    if (result.timeoutStatus === 'CANCELLED') throw new CancelledFailure(`the loop was cancelled during ${label}`);
  };

  const runOther = async (configured: ResolvedGate): Promise<TestsGateRun> => {
    const result = await run(configured.argv, configured.timeoutSeconds, `gate ${configured.gate}`);
    return { result, output: `${result.stdout}\n${result.stderr}`, report: null, counts: null, failureReason: gateFailureReason(configured.gate, result, null) };
  };
  /** The tests gate with the base versions of `files` put back on the maker's code, stored as its own evidence. */
  const runFrozenTests = async (configured: ResolvedGate, files: string[]): Promise<TestsRun> => {
    let ran: TestsGateRun;
    try {
      ran = await withBaseVersions(checkout, loop.baseCommit, checkpointCommit, files, () => runTests(configured, 'frozen-tests'));
    } catch (err) {
      if (err instanceof CancelledFailure) throw err;
      // A path the maker turned into a symlink or directory can stop git; the base tests then did not run.
      return { failureReason: `the base versions could not be put back: ${(err as Error).message}`, report: null, outputTail: '' };
    }
    await storeEvidence(deps, {
      loopId: input.loopId,
      iterationId: iteration.id,
      gate: FROZEN_TESTS_GATE,
      source: { source: configured.source, detail: `the tests gate with the base versions of ${files.join(', ')} restored` },
      gateOrder: FROZEN_TESTS_ORDER,
      result: ran.result,
      testCounts: ran.counts,
      testNames: ran.report,
      failureReason: ran.failureReason,
      failureSignature: null,
      proves: [],
    });
    stopIfCancelled(ran.result, 'the frozen tests');
    return { failureReason: ran.failureReason, report: ran.report, outputTail: outputTail(ran.output) };
  };

  // The tests gate runs with a machine-readable reporter added, so every test's name is known.
  const runTests = async (configured: ResolvedGate, name: string): Promise<TestsGateRun> => {
    const tests = await instrumentTestsGate(configured, checkout, await freshReportDir(deps, build.dir, name));
    const result = await run(tests.argv, configured.timeoutSeconds, `gate ${name}`, tests.env);
    const output = `${result.stdout}\n${result.stderr}`;
    const report = await tests.read(output);
    const counts = report && { passed: report.passed, failed: report.failed, skipped: report.skipped };
    return { result, output, report, counts, failureReason: gateFailureReason('tests', result, counts) };
  };

  // The frozen run goes first, on the untouched set-up: nothing the maker's own test run writes can reach it.
  const frozenFiles = testsGate && !contract.allowTestChanges ? editedBaseTestFiles(await branchChanges()) : [];
  const frozen = testsGate && frozenFiles.length > 0 ? await runFrozenTests(testsGate, frozenFiles) : null;

  const gates: GateSummary[] = [];
  let failed = false;
  let makerTests: TestsRun | null = null;
  for (const [order, gate] of GATE_ORDER.entries()) {
    const configured = input.gates.find((g) => g.gate === gate);
    if (!configured) {
      gates.push(summary(gate, 'NOT_CONFIGURED'));
      continue;
    }
    if (failed) {
      gates.push(summary(gate, 'NOT_RUN'));
      continue;
    }
    const { result, output, report, counts, failureReason } =
      gate === 'tests' ? await runTests(configured, 'tests') : await runOther(configured);
    if (gate === 'tests') makerTests = { failureReason, report, outputTail: outputTail(output) };
    const evidence = await storeEvidence(deps, {
      loopId: input.loopId,
      iterationId: iteration.id,
      gate,
      source: configured,
      gateOrder: order,
      result,
      testCounts: counts,
      testNames: report,
      failureReason,
      failureSignature: failureReason ? sha256(`${gate}|${result.exitCode}|${normaliseOutput(output)}`) : null,
      proves: failureReason ? [] : provenBy(gate, report, contract.acceptanceCriteria),
    });
    stopIfCancelled(result, `gate ${gate}`);
    gates.push(gateSummary(evidence));
    failed ||= failureReason !== null;
  }

  const acceptanceChecks: AcceptanceCheckSummary[] = [];
  if (!failed) {
    for (const [index, ac] of contract.acceptanceCriteria.entries()) {
      if (ac.verification.type !== 'command') continue;
      const result = await run(ac.verification.argv, ac.verification.timeoutSeconds, `check ${ac.id}`);
      const failureReason = gateFailureReason(`acceptance:${ac.id}`, result, null);
      const evidence = await storeEvidence(deps, {
        loopId: input.loopId,
        iterationId: iteration.id,
        gate: `acceptance:${ac.id}`,
        source: { source: 'contract', detail: `acceptance criterion ${ac.id}` },
        gateOrder: GATE_ORDER.length + index,
        result,
        testCounts: null,
        failureReason,
        failureSignature: null,
        proves: failureReason ? [] : [ac.id],
      });
      stopIfCancelled(result, `check ${ac.id}`);
      acceptanceChecks.push({ acId: ac.id, status: failureReason ? 'FAILED' : 'PASSED', evidenceId: evidence.id });
    }
  }

  const markVerified = deps.prisma.iteration.update({ where: { id: iteration.id }, data: { verifiedAt: new Date() }, select: { id: true } });
  if (!frozen || !makerTests) {
    await markVerified;
    return { gates, acceptanceChecks, systemFindings: [] };
  }
  const baseTexts = new Map(await Promise.all(frozenFiles.map(async (file) => [file, await readAt(loop.workspacePath, loop.baseCommit, file)] as const)));
  // The findings and the verified mark are written together: a retry finds both or neither.
  const systemFindings = await storeSystemFindings(
    deps,
    {
      loopId: input.loopId,
      iterationId: iteration.id,
      baseCommit: loop.baseCommit,
      checkpointCommit: checkpointCommit,
      contract,
      findings: frozenTestFindings(frozenFiles, makerTests, frozen, (file) => baseTexts.get(file) ?? null),
    },
    [markVerified],
  );
  return { gates, acceptanceChecks, systemFindings };
}

/** Evidence of the tests gate run with the frozen (base) test files; before the maker's own run. */
const FROZEN_TESTS_GATE = 'tests:frozen';
const FROZEN_TESTS_ORDER = -1;
const OUTPUT_TAIL_CHARS = 2000;

interface TestsGateRun {
  result: CommandResult;
  output: string;
  report: TestReport | null;
  counts: GateSummary['testCounts'];
  failureReason: string | null;
}

function outputTail(output: string): string {
  return sanitise(output.trim().slice(-OUTPUT_TAIL_CHARS));
}

function summary(gate: GateName, status: 'NOT_CONFIGURED' | 'NOT_RUN'): GateSummary {
  return {
    gate,
    status,
    evidenceId: null,
    exitCode: null,
    timeoutStatus: null,
    testCounts: null,
    failureReason: null,
    failureSignature: null,
    provesAcceptanceCriteria: [],
    environmentProblem: null,
  };
}

/**
 * AC ids a passing gate proves: ACs verified by this gate, and — for the tests gate — ACs whose test
 * name is among the tests the runner reported as passed (exactly, or as the last part of a qualified
 * name such as `file > describe > name` or `file::test_name`).
 */
function provenBy(gate: GateName, report: TestReport | null, criteria: AcceptanceCriterion[]): string[] {
  const passed = report?.passedTests ?? [];
  return criteria
    .filter((ac) => {
      const v = ac.verification;
      if (v.type === 'gate') return v.gate === gate;
      if (v.type === 'test') return gate === 'tests' && passed.some((name) => namesTest(name, v.name));
      return false;
    })
    .map((ac) => ac.id);
}

const NAME_SEPARATORS = [' > ', ' › ', '::', '/'];

function namesTest(reported: string, wanted: string): boolean {
  return reported === wanted || NAME_SEPARATORS.some((sep) => reported.endsWith(`${sep}${wanted}`));
}

interface EvidenceInput {
  loopId: string;
  iterationId: string;
  gate: string;
  source: Pick<ResolvedGate, 'source' | 'detail'>;
  gateOrder: number;
  result: CommandResult;
  testCounts: GateSummary['testCounts'];
  /** The tests gate's passed and failed tests, by name. */
  testNames?: Pick<TestReport, 'passedTests' | 'failedTests'> | null;
  failureReason: string | null;
  failureSignature: string | null;
  proves: string[];
}

/** What a gate's summary reads of its evidence row: not the stored output, up to a megabyte a stream. */
const SUMMARY_FIELDS = {
  id: true,
  gate: true,
  status: true,
  command: true,
  exitCode: true,
  stderr: true,
  timeoutStatus: true,
  testCounts: true,
  failureReason: true,
  failureSignature: true,
  assertionEvidence: true,
} as const satisfies Prisma.EvidenceSelect;

async function storeEvidence(deps: ActivityDeps, e: EvidenceInput) {
  const r = e.result;
  const row = await deps.prisma.evidence.create({
    data: {
      loopId: e.loopId,
      iterationId: e.iterationId,
      gate: e.gate,
      gateOrder: e.gateOrder,
      status: e.failureReason ? 'FAILED' : 'PASSED',
      source: e.source.source,
      sourceDetail: e.source.detail,
      command: r.argv,
      executionId: r.executionId,
      pid: r.pid,
      startTime: r.startTime,
      endTime: r.endTime,
      exitCode: r.exitCode,
      timeoutStatus: r.timeoutStatus,
      stdout: sanitise(r.stdout),
      stderr: sanitise(r.spawnError ? `${r.stderr}${r.spawnError}` : r.stderr),
      stdoutSha256: r.stdoutSha256,
      stderrSha256: r.stderrSha256,
      stdoutBytes: r.stdoutBytes,
      stderrBytes: r.stderrBytes,
      outputTruncated: r.truncated,
      testCounts: e.testCounts ? { ...e.testCounts } : undefined,
      passedTests: e.testNames ? storedTestNames(e.testNames.passedTests) : undefined,
      failedTests: e.testNames ? storedTestNames(e.testNames.failedTests) : undefined,
      // Quotes the command line and spawn errors, and goes on to the workflow and the report.
      failureReason: e.failureReason && sanitise(e.failureReason),
      failureSignature: e.failureSignature,
      assertionEvidence: e.proves,
    },
    select: SUMMARY_FIELDS,
  });
  observeGate(row.gate, row.status, r.startTime, r.endTime);
  return row;
}

type EvidenceRow = Awaited<ReturnType<typeof storeEvidence>>;

function gateSummary(row: EvidenceRow): GateSummary {
  const couldNotStart = row.failureReason?.startsWith(COULD_NOT_START) ? row.failureReason.slice(COULD_NOT_START.length) : null;
  return {
    environmentProblem:
      row.status === 'FAILED' ? environmentProblem({ argv: row.command as string[], exitCode: row.exitCode, spawnError: couldNotStart, stderr: row.stderr }) : null,
    gate: row.gate as GateName,
    status: row.status as 'PASSED' | 'FAILED',
    evidenceId: row.id,
    exitCode: row.exitCode,
    timeoutStatus: row.timeoutStatus as GateSummary['timeoutStatus'],
    testCounts: row.testCounts as GateSummary['testCounts'],
    failureReason: row.failureReason,
    failureSignature: row.failureSignature,
    provesAcceptanceCriteria: row.assertionEvidence as string[],
  };
}

/** Rebuilds the result of an iteration that was already verified (the activity retried after it finished). */
async function storedVerification(deps: ActivityDeps, iterationId: string, input: VerificationInput, criteria: AcceptanceCriterion[]): Promise<VerificationResult> {
  const systemFindings = await storedSystemFindings(deps, iterationId, VERIFICATION_FINDING_PREFIX);
  const rows = await deps.prisma.evidence.findMany({ where: { iterationId }, orderBy: { gateOrder: 'asc' }, select: SUMMARY_FIELDS });
  const gates = GATE_ORDER.map((gate): GateSummary => {
    const row = rows.find((r) => r.gate === gate);
    if (row) return gateSummary(row);
    return summary(gate, input.gates.some((g) => g.gate === gate) ? 'NOT_RUN' : 'NOT_CONFIGURED');
  });
  const setupFailure = rows.find((r) => r.gate.startsWith('setup:') && r.status === 'FAILED');
  if (setupFailure) return { gates, acceptanceChecks: [], environmentProblem: setupFailure.failureReason, systemFindings: [] };
  const acceptanceChecks = criteria.flatMap((ac) => {
    const row = rows.find((r) => r.gate === `acceptance:${ac.id}`);
    return row ? [{ acId: ac.id, status: row.status as 'PASSED' | 'FAILED', evidenceId: row.id }] : [];
  });
  return { gates, acceptanceChecks, systemFindings };
}
