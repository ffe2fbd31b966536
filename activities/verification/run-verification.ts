import { CancelledFailure } from '@temporalio/activity';
import type { AcceptanceCriterion, FrozenContract } from '../../domain/contract';
import { sanitise } from '../../domain/sanitise';
import path from 'node:path';
import { GATE_ORDER, type GateName, type GateSummary, type ResolvedGate } from '../../domain/gates';
import type { AcceptanceCheckSummary } from '../../domain/judge';
import type { FindingSummary } from '../../domain/ledger';
import type { SetupPlan } from '../../domain/setup';
import { loadContract } from '../contract';
import { assertGivenCheckpoint, preparedLoop, type PreparedLoop } from '../prepared-workspace';
import { early, inOrder } from '../in-order';
import type { ActivityDeps } from '../deps';
import {
  adoptLoopEvidence,
  discardVerificationAttempt,
  gateEvidenceOf,
  insertGateEvidence,
  loopTestsEvidence,
  type GateEvidence,
} from '../../store/evidence';
import { iterationAt, markVerified } from '../../store/iterations';
import { sha256 } from '../git';
import type { CommandResult } from '../process/run-command';
import {
  ARTIFACT_NOT_RESOLVED,
  COULD_NOT_START,
  environmentProblem,
  gateFailureReason,
  LIMIT_REACHED,
  normaliseOutput,
} from './gate-outcome';
import { setupPlanOf } from '../setup/run-setup';
import { setUpCheckout } from '../setup/checkout-setup';
import { detachSnapshots } from '../setup/dependency-snapshots';
import { setupEnvironment } from '../setup/setup-environment';
import { loopCaches } from '../sandbox/loop-caches';
import type { SandboxPolicy } from '../sandbox/types';
import { storedTestName, storedTestNames } from './stored-test-names';
import { freshBuildDir } from './verification-build-dir';
import { freshVerificationCheckout } from './verification-checkout';
import {
  outputTail,
  stopIfCancelled,
  verificationRunner,
  type TestsGateRun,
  type VerificationRunner,
} from './verification-runner';
import { entrypointsToRestore, restoreInCheckout } from './protected-files';
import { frozenTestFindings, type TestsRun } from '../../analysis/verification/frozen-test-findings';
import { differentialFindings, type DifferentialRun } from '../../analysis/verification/differential-findings';
import { acceptanceTestNames, namesTest } from '../../analysis/verification/proven-criteria';
import type { SystemFinding } from '../../analysis/tamper/types';
import { testLocator, differentialRun, DIFFERENTIAL_UNSET } from './differential-run';
import { editedBaseTests, frozenPaths, withBaseVersions, type FrozenFiles } from './frozen-tests';
import { storeSystemFindings, storedSystemFindings, VERIFICATION_FINDING_PREFIX } from '../system-findings';
import type { FileChange } from '../../analysis/tamper/change-set';
import type { TestReport } from '../../analysis/test-reports';
import { provenBy } from '../../analysis/verification/proven-criteria';
import { baseInventoryFindings, type BaseInventory } from '../../analysis/verification/base-inventory';
import { BASE_TESTS_GATE, BASE_TESTS_ORDER, baseTestsRun, inventoryOf } from './base-run';
import { collectedTestFiles } from '../../analysis/verification/collected-test-files';
import { collectedTestsTampering } from './collected-tests-tamper';
import { systemFindings as systemFindingRows } from '../../store/findings';
import { TAMPER_FINDING_PREFIX } from '../inspect-changes';
import { loadChanges, readAt } from '../tamper/change-set';
import { observeGate } from '../../telemetry/loop-metrics';
import { sandboxEgress } from '../../domain/egress';

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

/** What the maker's activity started before it asked for the verification of the checkpoint it just made. */
export interface StartedVerification {
  /** The checkout of the checkpoint (freshVerificationCheckout or movedCheckout). */
  checkout?: Promise<string>;
  /**
   * The maker's iteration, whose result and inspection are still being stored: nothing verified it yet,
   * and its verification waits for those rows before it stores its own end (the inspection's findings
   * are read then).
   */
  storing?: {
    iterationId: string;
    stored: Promise<unknown>;
    /** The loop as the maker's activity read it. */
    loop: PreparedLoop;
    /** The iteration was made by this attempt: no earlier verification of it left anything to discard. */
    fresh: boolean;
  };
  /**
   * Called once the verification no longer needs the processor to itself: its first command (a set-up's or
   * a gate's) runs, or it needs the maker's rows (`storing`), which the maker's activity stores only after
   * this. May be called more than once.
   */
  besideGates?: () => void;
}

/**
 * Runs the configured gates in order (tests → typecheck → lint → build), stopping at the first failure,
 * then each acceptance criterion's own command. Every run is stored as Evidence; the workflow gets
 * ids and one-line summaries. Idempotent per (loop, sequence).
 */
export async function runVerification(
  deps: ActivityDeps,
  input: VerificationInput,
  /**
   * Called as the verification's first command starts, a set-up's or a gate's (at once when a retry finds
   * the gates run): work that would only slow the checkout down goes beside the commands instead. May be
   * called more than once.
   */
  besideGates: () => void = () => undefined,
  started: StartedVerification = {},
): Promise<VerificationResult> {
  const beside = () => {
    besideGates();
    started.besideGates?.();
  };
  // Made while the rows are read: neither depends on them.
  const dirs = verificationDirs(deps, input);
  const { verifying, verified, checkout } = await readIteration(deps, input, started);
  if (verified) {
    beside();
    await Promise.allSettled([checkout, dirs.buildDir, dirs.cacheDir]);
    return storedVerification(deps, verifying.iteration.id, input, verifying.contract.acceptanceCriteria);
  }
  const prepared = await prepareCheckout(verifying, checkout, dirs, started.storing?.fresh === true);
  try {
    return await verify(verifying, prepared, beside);
  } finally {
    // The dependencies' overlays last as long as the verification: the checkout kept after it holds no mount.
    await detachSnapshots(prepared.dir);
  }
}

async function verify(
  verifying: Verifying,
  prepared: PreparedCheckout,
  besideGates: () => void,
): Promise<VerificationResult> {
  const setup = await installDependencies(verifying, prepared, besideGates);
  if (setup.problem) return setupFailed(verifying, setup.problem);
  const runner = await sandboxedRunner(verifying, prepared, setup.plan, besideGates);
  // The base and frozen runs go first, on the untouched set-up: nothing the maker's own test run writes can reach them.
  const base = await baseInventory(verifying, prepared, runner);
  const collected = new Set(base ? collectedTestFiles(base.names) : []);
  const frozen = await runFrozenTests(verifying, prepared, runner, collected);
  const { gates, failed, makerTests } = await runGates(verifying, runner, base);
  const acceptanceChecks = failed ? [] : await runAcceptanceChecks(verifying, runner);
  const differential = failed ? null : await runDifferential(verifying, prepared.dir, runner, makerTests);
  return recordVerified(
    verifying,
    { gates, acceptanceChecks },
    { base, frozen, makerTests, differential, collected, changes: await prepared.branchChanges() },
  );
}

/** What every step of one verification works from. */
interface Verifying {
  deps: ActivityDeps;
  input: VerificationInput;
  loop: PreparedLoop;
  iteration: { id: string };
  contract: FrozenContract['contract'];
  /** Settles once the maker's rows of the iteration are stored (StartedVerification.storing). */
  makerStored: () => Promise<unknown>;
}

/** The checkout the gates run in, ready but for the set-up. */
interface PreparedCheckout {
  dir: string;
  policy: SandboxPolicy;
  buildDir: Promise<{ dir: string; env: Record<string, string> }>;
  /** The branch's changes (base → checkpoint), read once for the entrypoint restore, the base run and the frozen tests. */
  branchChanges: () => Promise<FileChange[]>;
  /** The gate entrypoints put back at their base versions. */
  restored: string[];
}

/**
 * The loop, the iteration's row (unless the maker's activity is storing it) and its contract; given the
 * checkpoint, its checkout is made while the rows are read.
 */
async function readIteration(deps: ActivityDeps, input: VerificationInput, started: StartedVerification) {
  const prepared = early(started.storing ? Promise.resolve(started.storing.loop) : preparedLoop(deps, input.loopId));
  const { checkpointCommit } = input;
  const earlyCheckout =
    started.checkout ??
    early(prepared.then((loop) => freshVerificationCheckout(deps, input.loopId, loop.workspacePath, checkpointCommit)));
  const { storing } = started;
  const [loop, iteration, { contract }] = await inOrder([
    prepared,
    storing
      ? Promise.resolve({ id: storing.iterationId, checkpointCommit, verifiedAt: null })
      : iterationAt(deps.prisma, input.loopId, input.sequence),
    loadContract(deps, input.loopId, input.contractVersion),
  ]);
  assertGivenCheckpoint(input.loopId, input.sequence, checkpointCommit, iteration.checkpointCommit);
  const stored = storing ? early(storing.stored) : Promise.resolve();
  // Asking for the rows lets the maker's activity store them, if no command did so before.
  const makerStored = () => {
    started.besideGates?.();
    return stored;
  };
  const verifying: Verifying = { deps, input, loop, iteration, contract, makerStored };
  return { verifying, verified: iteration.verifiedAt !== null, checkout: earlyCheckout };
}

/** The verification's own build dir and the loop's caches, made (and the caches stripped) for it. */
function verificationDirs(deps: ActivityDeps, input: VerificationInput) {
  const go = input.gates.some((g) => path.basename(g.argv[0] ?? '') === 'go');
  return {
    buildDir: early(freshBuildDir(deps, input.loopId, { go })),
    cacheDir: early(loopCaches(deps, input.loopId)),
  };
}

/**
 * Discards an interrupted attempt's evidence (none when the iteration is `fresh`) and puts the base
 * versions of the gates' entrypoints back in the checkout.
 */
async function prepareCheckout(
  { deps, input, loop, iteration, contract }: Verifying,
  earlyCheckout: Promise<string>,
  { buildDir, cacheDir }: ReturnType<typeof verificationDirs>,
  fresh: boolean,
): Promise<PreparedCheckout> {
  const { checkpointCommit } = input;
  let changes: Promise<FileChange[]> | undefined;
  const branchChanges = () => (changes ??= early(loadChanges(loop.workspacePath, loop.baseCommit, checkpointCommit)));
  const testsGate = input.gates.find((g) => g.gate === 'tests');
  // Read while the checkout is made, when either use below needs them.
  if (!contract.allowGateConfigChanges || (testsGate && !contract.allowTestChanges)) void branchChanges();
  const commits = {
    workspace: loop.workspacePath,
    baseCommit: loop.baseCommit,
    checkpointCommit: checkpointCommit,
    gates: input.gates,
  };
  const toRestore = contract.allowGateConfigChanges
    ? null
    : early(branchChanges().then((changed) => entrypointsToRestore(commits, changed)));
  // Evidence of an interrupted attempt is discarded (before any is stored): this attempt re-runs every gate.
  const [, checkout] = await inOrder([
    fresh ? Promise.resolve() : discardVerificationAttempt(deps.prisma, iteration.id, VERIFICATION_FINDING_PREFIX),
    earlyCheckout,
  ]);
  // Gates (and set-up, which reads .npmrc and pip.conf) run with the base versions of their
  // entrypoints unless the contract allows changing them; the tamper rule reports the change.
  const restored = toRestore ? await restoreInCheckout(checkout, loop.baseCommit, await toRestore) : [];
  const policy: SandboxPolicy = {
    workDir: checkout,
    // The worktree's git directory, so `git` inside a gate can answer (read-only).
    readOnly: [path.join(loop.workspacePath, '.git')],
    egress: sandboxEgress(deps.config.sandbox.egress.gates, loop.gatePlan?.network ?? false),
    caches: { dir: await cacheDir, access: 'use' },
  };
  return { dir: checkout, policy, buildDir, branchChanges, restored };
}

/**
 * Dependencies are installed in the fresh checkout from the checkpoint's own manifests, with network,
 * before any gate — or, when an earlier verification of the loop installed them for the same key, copied
 * from its snapshot (checkout-setup.ts): nothing the maker installed in its workspace can reach a gate.
 */
async function installDependencies(
  { deps, input, loop, iteration }: Verifying,
  { dir: checkout, policy, restored }: PreparedCheckout,
  besideGates: () => void,
) {
  const setupPlan = setupPlanOf(loop.gatePlan);
  if (!setupPlan) return { plan: setupPlan, problem: null };
  // An install may take minutes: what waits for the first command goes on beside it.
  if (setupPlan.commands.length > 0) besideGates();
  const setup = await setUpCheckout(deps, {
    loopId: input.loopId,
    iterationId: iteration.id,
    iterationSeq: input.sequence,
    prefix: 'setup',
    workDir: checkout,
    readOnly: policy.readOnly ?? [],
    plan: setupPlan,
    repoUrl: loop.repoUrl,
    phase: 'verify',
    restored,
  });
  return { plan: setupPlan, problem: setup.problem };
}

/** A failed set-up ends the verification: no gate ran. */
async function setupFailed(
  { deps, input, iteration, makerStored }: Verifying,
  problem: string,
): Promise<VerificationResult> {
  await makerStored();
  await markVerified(deps.prisma, iteration.id);
  return {
    gates: GATE_ORDER.map((gate) =>
      summary(gate, input.gates.some((g) => g.gate === gate) ? 'NOT_RUN' : 'NOT_CONFIGURED'),
    ),
    acceptanceChecks: [],
    environmentProblem: problem,
    systemFindings: [],
  };
}

/** The venv's bin first on PATH (gates run `python -m pytest`), pnpm/yarn through corepack. */
async function sandboxedRunner(
  { deps, input }: Verifying,
  { dir: checkout, policy, buildDir }: PreparedCheckout,
  setupPlan: SetupPlan | undefined,
  onSpawn: () => void,
): Promise<VerificationRunner> {
  const toolchain = await setupEnvironment(deps.config.dataDir, checkout, setupPlan, policy.caches!.dir);
  policy.readOnly = [...(policy.readOnly ?? []), ...toolchain.readOnly];
  const build = await buildDir;
  policy.writable = [build.dir];
  return verificationRunner(
    deps,
    { loopId: input.loopId, iterationSeq: input.sequence },
    checkout,
    policy,
    toolchain.env,
    build,
    onSpawn,
  );
}

/**
 * The loop's base inventory: stored before the first maker or by an earlier verification, else the base run's, stored now
 * (base-run.ts). Skipped when nothing would read it: no tests gate, or a contract that allows test
 * changes and names no test.
 */
async function baseInventory(
  { deps, input, loop, iteration, contract }: Verifying,
  prepared: PreparedCheckout,
  runner: VerificationRunner,
): Promise<BaseInventory | null> {
  const testsGate = input.gates.find((g) => g.gate === 'tests');
  const acceptanceTests = acceptanceTestNames(contract);
  if (!testsGate || (contract.allowTestChanges && acceptanceTests.length === 0)) return null;
  const stored = await loopTestsEvidence(deps.prisma, input.loopId, BASE_TESTS_GATE);
  if (stored) {
    // Run before the first maker (acceptance-tests.ts): the first verification takes it as its own evidence.
    await adoptLoopEvidence(deps.prisma, input.loopId, BASE_TESTS_GATE, iteration.id);
    return inventoryOf(stored);
  }
  const ran = await baseTestsRun(
    runner,
    prepared.dir,
    { base: loop.baseCommit, checkpoint: input.checkpointCommit },
    testsGate,
    { paths: await prepared.branchChanges(), alreadyBase: prepared.restored, acceptanceTests },
  );
  await storeExtraTestsRun(deps, { loopId: input.loopId, iterationId: iteration.id }, ran, {
    gate: BASE_TESTS_GATE,
    source: {
      source: testsGate.source,
      detail: 'the tests gate on the base commit: every file the branch changed put back',
    },
    gateOrder: BASE_TESTS_ORDER,
  });
  stopIfCancelled(ran.result, 'the base run');
  // Read back as a later verification will: the stored names are capped and redacted.
  return inventoryOf({
    testCounts: ran.counts,
    passedTests: ran.report && storedTestNames(ran.report.passedTests),
    failedTests: ran.report && storedTestNames(ran.report.failedTests),
  });
}

/** The tests gate with the base versions of the test files the maker edited put back on the maker's code, when the contract forbids editing tests. */
async function runFrozenTests(
  verifying: Verifying,
  prepared: PreparedCheckout,
  runner: VerificationRunner,
  collected: ReadonlySet<string>,
): Promise<FrozenRun | null> {
  const { input, contract, loop } = verifying;
  const testsGate = input.gates.find((g) => g.gate === 'tests');
  if (!testsGate || contract.allowTestChanges) return null;
  const files = await editedBaseTests(
    await prepared.branchChanges(),
    (file) => readAt(loop.workspacePath, loop.baseCommit, file),
    collected,
  );
  return frozenPaths(files).length > 0
    ? { files, run: await frozenTestsRun(verifying, prepared.dir, runner, testsGate, files) }
    : null;
}

interface FrozenRun {
  /** The base tests put back (base paths). */
  files: FrozenFiles;
  run: TestsRun;
}

/** The tests gate with the base versions of `files` put back on the maker's code, stored as its own evidence. */
async function frozenTestsRun(
  { deps, input, loop, iteration }: Verifying,
  checkout: string,
  runner: VerificationRunner,
  configured: ResolvedGate,
  files: FrozenFiles,
): Promise<TestsRun> {
  const { checkpointCommit } = input;
  let ran: TestsGateRun;
  try {
    ran = await withBaseVersions(checkout, loop.baseCommit, checkpointCommit, files, () =>
      runner.runTests(configured, 'frozen-tests'),
    );
  } catch (err) {
    if (err instanceof CancelledFailure) throw err;
    // A path the maker turned into a symlink or directory can stop git; the base tests then did not run.
    return {
      failureReason: `the base versions could not be put back: ${(err as Error).message}`,
      report: null,
      outputTail: '',
    };
  }
  await storeExtraTestsRun(deps, { loopId: input.loopId, iterationId: iteration.id }, ran, {
    gate: FROZEN_TESTS_GATE,
    source: {
      source: configured.source,
      detail: `the tests gate with the base versions of ${frozenPaths(files).join(', ')} restored`,
    },
    gateOrder: FROZEN_TESTS_ORDER,
  });
  stopIfCancelled(ran.result, 'the frozen tests');
  return { failureReason: ran.failureReason, report: ran.report, outputTail: outputTail(ran.output) };
}

interface GateRuns {
  gates: GateSummary[];
  failed: boolean;
  /** The maker's own tests gate run; null when it did not run. */
  makerTests: TestsRun | null;
}

/** Each configured gate in order, stopping at the first failure; every run stored as evidence. */
async function runGates(
  { deps, input, iteration, contract }: Verifying,
  runner: VerificationRunner,
  base: BaseInventory | null,
): Promise<GateRuns> {
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
      gate === 'tests' ? await runner.runTests(configured, 'tests') : await runner.runOther(configured);
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
      proves: failureReason ? [] : provenBy(gate, report, contract.acceptanceCriteria, base, storedTestName),
    });
    stopIfCancelled(result, `gate ${gate}`);
    gates.push(gateSummary(evidence));
    failed ||= failureReason !== null;
  }
  return { gates, failed, makerTests };
}

/** Each acceptance criterion's own command, once every gate passed. */
async function runAcceptanceChecks(
  { deps, input, iteration, contract }: Verifying,
  runner: VerificationRunner,
): Promise<AcceptanceCheckSummary[]> {
  const acceptanceChecks: AcceptanceCheckSummary[] = [];
  for (const [index, ac] of contract.acceptanceCriteria.entries()) {
    if (ac.verification.type !== 'command') continue;
    const result = await runner.run(ac.verification.argv, ac.verification.timeoutSeconds, `check ${ac.id}`);
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
  return acceptanceChecks;
}

/**
 * The acceptance tests once more with CI unset (differential-run.ts), when the tests gate passed and
 * the contract names tests; stored as evidence of its own.
 */
async function runDifferential(
  { deps, input, iteration, contract }: Verifying,
  checkout: string,
  runner: VerificationRunner,
  makerTests: TestsRun | null,
): Promise<Differential | null> {
  const testsGate = input.gates.find((g) => g.gate === 'tests');
  const acceptanceTests = acceptanceTestNames(contract);
  if (!testsGate || !makerTests?.report || acceptanceTests.length === 0) return null;
  const ran = await differentialRun(runner, testsGate, checkout, acceptanceTests);
  await storeExtraTestsRun(deps, { loopId: input.loopId, iterationId: iteration.id }, ran, {
    gate: DIFFERENTIAL_GATE,
    source: {
      source: testsGate.source,
      detail: `the acceptance tests again, without ${DIFFERENTIAL_UNSET.join(', ')}`,
    },
    gateOrder: GATE_ORDER.length + contract.acceptanceCriteria.length,
  });
  stopIfCancelled(ran.result, 'the differential run');
  return { gate: makerTests.report, acceptanceTests, run: { report: ran.report, failureReason: ran.failureReason } };
}

interface Differential {
  /** The tests gate's report, and the acceptance tests it proved. */
  gate: TestReport;
  acceptanceTests: string[];
  run: DifferentialRun;
}

/** What the runs beside the maker's own tests gate run showed. */
interface BesideRuns {
  base: BaseInventory | null;
  frozen: FrozenRun | null;
  makerTests: TestsRun | null;
  differential: Differential | null;
  /** The base files the base run's runner named tests in, and the branch's changes. */
  collected: ReadonlySet<string>;
  changes: FileChange[];
}

/** Marks the iteration verified, with what the base, frozen and differential runs showed as system findings. */
async function recordVerified(
  verifying: Verifying,
  ran: Pick<VerificationResult, 'gates' | 'acceptanceChecks'>,
  { base, frozen, makerTests, differential, collected, changes }: BesideRuns,
): Promise<VerificationResult> {
  const { deps, input, loop, iteration, contract, makerStored } = verifying;
  const { gates, acceptanceChecks } = ran;
  const { checkpointCommit } = input;
  // The inspection's findings are read below, and the iteration is marked verified after its maker's result.
  await makerStored();
  const verified = markVerified(deps.prisma, iteration.id);
  const frozenFound = frozen && makerTests ? await frozenFindings(verifying, frozen, makerTests) : [];
  // The maker's run names the test files it adds; the base run, those it changes.
  const collectedByEither = new Set([
    ...collected,
    ...collectedTestFiles([...(makerTests?.report?.passedTests ?? []), ...(makerTests?.report?.failedTests ?? [])]),
  ]);
  const findings = [
    ...(await collectedTestsTampering(
      { workspace: loop.workspacePath, baseCommit: loop.baseCommit, checkpointCommit, gates: input.gates, contract },
      collectedByEither,
      changes,
      () => systemFindingRows(deps.prisma, iteration.id, TAMPER_FINDING_PREFIX),
    )),
    ...frozenFound,
    ...(base ? await baseFindings(verifying, base, makerTests, frozenFound) : []),
    ...(differential
      ? differentialFindings(
          differential.acceptanceTests,
          differential.gate,
          differential.run,
          await testLocator(
            loop.workspacePath,
            checkpointCommit,
            differential.gate.passedTests.filter((name) =>
              differential.acceptanceTests.some((t) => namesTest(name, t)),
            ),
          ),
        )
      : []),
  ];
  if (!findings.length) {
    await verified;
    return { gates, acceptanceChecks, systemFindings: [] };
  }
  // The findings and the verified mark are written together: a retry finds both or neither.
  const systemFindings = await storeSystemFindings(
    deps,
    {
      loopId: input.loopId,
      iterationId: iteration.id,
      baseCommit: loop.baseCommit,
      checkpointCommit: checkpointCommit,
      contract,
      findings,
    },
    [verified],
  );
  return { gates, acceptanceChecks, systemFindings };
}

/** What the base inventory says of the contract's test names and of the maker's run (base-inventory.ts). */
async function baseFindings(
  { loop, contract }: Verifying,
  base: BaseInventory,
  makerTests: TestsRun | null,
  frozenFound: SystemFinding[],
): Promise<SystemFinding[]> {
  const acceptanceTests = acceptanceTestNames(contract);
  // The maker's names as the inventory's are stored, so the two compare.
  const report = makerTests?.report && {
    ...makerTests.report,
    passedTests: makerTests.report.passedTests.map(storedTestName),
    failedTests: makerTests.report.failedTests.map(storedTestName),
  };
  const maker = makerTests && { failureReason: makerTests.failureReason, report: report ?? null };
  const alsoFrozen = frozenFound.some((f) => f.rule === 'FEWER_TESTS_RUN');
  const found = baseInventoryFindings(acceptanceTests, base, maker, () => null, alsoFrozen);
  if (!found.length) return [];
  // Located only when something was found: each name not in the file it starts with costs a `git grep`.
  const ran = new Set([...(report?.passedTests ?? []), ...(report?.failedTests ?? [])]);
  const locate = await testLocator(loop.workspacePath, loop.baseCommit, [
    ...base.names.filter((name) => acceptanceTests.some((wanted) => namesTest(name, wanted))),
    ...base.names.filter((name) => !ran.has(name)).slice(0, 20),
  ]);
  return baseInventoryFindings(acceptanceTests, base, maker, locate, alsoFrozen);
}

/** What the frozen run showed against the maker's own run (frozen-test-findings.ts). */
async function frozenFindings({ loop }: Verifying, frozen: FrozenRun, makerTests: TestsRun): Promise<SystemFinding[]> {
  const frozenFiles = frozenPaths(frozen.files);
  const baseTexts = new Map(
    await Promise.all(
      frozenFiles.map(async (file) => [file, await readAt(loop.workspacePath, loop.baseCommit, file)] as const),
    ),
  );
  return frozenTestFindings(frozenFiles, makerTests, frozen.run, (file) => baseTexts.get(file) ?? null);
}

/** Evidence of the acceptance tests run without CI's markers; after every other gate and check. */
const DIFFERENTIAL_GATE = 'tests:differential';

/** Evidence of the tests gate run with the frozen (base) test files; before the maker's own run. */
const FROZEN_TESTS_GATE = 'tests:frozen';
const FROZEN_TESTS_ORDER = -1;

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

interface EvidenceInput {
  loopId: string;
  /** null: the loop's own evidence, before any iteration (the base run before the first maker). */
  iterationId: string | null;
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

/** A run of the tests gate beside the gates (frozen, differential): its own evidence, proving nothing. */
export function storeExtraTestsRun(
  deps: ActivityDeps,
  at: { loopId: string; iterationId: string | null },
  ran: TestsGateRun,
  as: Pick<EvidenceInput, 'gate' | 'source' | 'gateOrder'>,
): Promise<GateEvidence> {
  return storeEvidence(deps, {
    ...at,
    ...as,
    result: ran.result,
    testCounts: ran.counts,
    testNames: ran.report,
    failureReason: ran.failureReason,
    failureSignature: null,
    proves: [],
  });
}

async function storeEvidence(deps: ActivityDeps, e: EvidenceInput): Promise<GateEvidence> {
  const r = e.result;
  const row = await insertGateEvidence(deps.prisma, {
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
  });
  observeGate(row.gate, row.status, r.startTime, r.endTime);
  return row;
}

function gateSummary(row: GateEvidence): GateSummary {
  const couldNotStart = row.failureReason?.startsWith(COULD_NOT_START)
    ? row.failureReason.slice(COULD_NOT_START.length)
    : null;
  const limit = row.failureReason?.startsWith(LIMIT_REACHED) ? row.failureReason.slice(LIMIT_REACHED.length) : null;
  const missingArtifact = row.failureReason?.startsWith(ARTIFACT_NOT_RESOLVED)
    ? row.failureReason.slice(ARTIFACT_NOT_RESOLVED.length)
    : null;
  return {
    environmentProblem:
      row.status === 'FAILED'
        ? environmentProblem({
            argv: row.command as string[],
            exitCode: row.exitCode,
            spawnError: couldNotStart,
            stderr: row.stderr,
            limit,
            missingArtifact,
          })
        : null,
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
async function storedVerification(
  deps: ActivityDeps,
  iterationId: string,
  input: VerificationInput,
  criteria: AcceptanceCriterion[],
): Promise<VerificationResult> {
  const systemFindings = await storedSystemFindings(deps, iterationId, VERIFICATION_FINDING_PREFIX);
  const rows = await gateEvidenceOf(deps.prisma, iterationId);
  const gates = GATE_ORDER.map((gate): GateSummary => {
    const row = rows.find((r) => r.gate === gate);
    if (row) return gateSummary(row);
    return summary(gate, input.gates.some((g) => g.gate === gate) ? 'NOT_RUN' : 'NOT_CONFIGURED');
  });
  const setupFailure = rows.find((r) => r.gate.startsWith('setup:') && r.status === 'FAILED');
  if (setupFailure)
    return { gates, acceptanceChecks: [], environmentProblem: setupFailure.failureReason, systemFindings: [] };
  const acceptanceChecks = criteria.flatMap((ac) => {
    const row = rows.find((r) => r.gate === `acceptance:${ac.id}`);
    return row ? [{ acId: ac.id, status: row.status as 'PASSED' | 'FAILED', evidenceId: row.id }] : [];
  });
  return { gates, acceptanceChecks, systemFindings };
}
