import { Context } from '@temporalio/activity';
import path from 'node:path';
import { baseCandidates } from '../../analysis/verification/proven-criteria';
import type { BaseInventory } from '../../analysis/verification/base-inventory';
import { sandboxEgress } from '../../domain/egress';
import type { ResolvedGate } from '../../domain/gates';
import { loopTestsEvidence } from '../../store/evidence';
import { loadContract } from '../contract';
import type { ActivityDeps } from '../deps';
import { resetTo } from '../git';
import { preparedLoop } from '../prepared-workspace';
import { handOver } from '../sandbox/hand-over';
import { loopCaches } from '../sandbox/loop-caches';
import type { SandboxPolicy } from '../sandbox/types';
import { setupPlanOf } from '../setup/run-setup';
import { setupEnvironment } from '../setup/setup-environment';
import { BASE_TESTS_GATE, BASE_TESTS_ORDER, baseTestsRun, inventoryOf } from './base-run';
import { storeExtraTestsRun } from './run-verification';
import { storedTestNames } from './stored-test-names';
import { freshBuildDir } from './verification-build-dir';
import { stopIfCancelled, verificationRunner } from './verification-runner';

// The contract's test names, resolved against the base commit before the first maker runs (docs/design.md
// §3.4): the base run — the tests gate on the base commit — runs in the maker's workspace, set up and not
// yet touched, as a gate runs (sandbox, no network unless the plan has it, caches read-only), and the
// workspace goes back to the base commit afterwards. Each name that several base tests answer to is
// returned with them, so a person can name one before any maker is paid for. The run is stored as the
// loop's base run; the first verification takes it as its own evidence instead of running it again.

export interface AcceptanceTestsInput {
  loopId: string;
  contractVersion: number;
  gates: ResolvedGate[];
}

export interface AmbiguousTest {
  acId: string;
  /** The name the contract gives. */
  name: string;
  /** The base tests it names, as the runner reports them: one of these is what the contract must say. */
  candidates: string[];
}

export async function resolveAcceptanceTests(
  deps: ActivityDeps,
  input: AcceptanceTestsInput,
): Promise<{ ambiguous: AmbiguousTest[] }> {
  const [loop, { contract }] = await Promise.all([
    preparedLoop(deps, input.loopId),
    loadContract(deps, input.loopId, input.contractVersion),
  ]);
  const named = contract.acceptanceCriteria.flatMap((ac) =>
    ac.verification.type === 'test' ? [{ acId: ac.id, name: ac.verification.name }] : [],
  );
  const testsGate = input.gates.find((g) => g.gate === 'tests');
  if (!named.length || !testsGate) return { ambiguous: [] };
  const stored = await loopTestsEvidence(deps.prisma, input.loopId, BASE_TESTS_GATE);
  const inventory = stored
    ? inventoryOf(stored)
    : await baseRunInWorkspace(
        deps,
        input.loopId,
        loop,
        testsGate,
        named.map((n) => n.name),
      );
  return {
    ambiguous: named
      .map((n) => ({ ...n, candidates: baseCandidates(n.name, inventory) }))
      .filter((n) => n.candidates.length > 1),
  };
}

async function baseRunInWorkspace(
  deps: ActivityDeps,
  loopId: string,
  loop: Awaited<ReturnType<typeof preparedLoop>>,
  testsGate: ResolvedGate,
  acceptanceTests: string[],
): Promise<BaseInventory | null> {
  const workspace = loop.workspacePath;
  // Whatever an interrupted attempt's tests left goes first; set-up's output is ignored by git and stays.
  if (Context.current().info.attempt > 1) await backToBase(deps, workspace, loop.baseCommit);
  const setupPlan = setupPlanOf(loop.gatePlan);
  const cacheDir = await loopCaches(deps, loopId);
  const toolchain = await setupEnvironment(deps.config.dataDir, workspace, setupPlan, cacheDir);
  const go = path.basename(testsGate.argv[0] ?? '') === 'go';
  const build = await freshBuildDir(deps, loopId, { go });
  const policy: SandboxPolicy = {
    workDir: workspace,
    readOnlyInWorkDir: ['.git'],
    readOnly: toolchain.readOnly,
    writable: [build.dir],
    egress: sandboxEgress(deps.config.sandbox.egress.gates, loop.gatePlan?.network ?? false),
    caches: { dir: cacheDir, access: 'use' },
  };
  const runner = verificationRunner(deps, { loopId, iterationSeq: 0 }, workspace, policy, toolchain.env, build);
  const commits = { base: loop.baseCommit, checkpoint: loop.baseCommit };
  const ran = await baseTestsRun(runner, workspace, commits, testsGate, {
    paths: [],
    alreadyBase: [],
    acceptanceTests,
  });
  await storeExtraTestsRun(deps, { loopId, iterationId: null }, ran, {
    gate: BASE_TESTS_GATE,
    source: { source: testsGate.source, detail: 'the tests gate on the base commit, before the first maker' },
    gateOrder: BASE_TESTS_ORDER,
  });
  stopIfCancelled(ran.result, 'the base run');
  // What the tests wrote (snapshots, reports) never reaches the maker's first checkpoint.
  await backToBase(deps, workspace, loop.baseCommit);
  return inventoryOf({
    testCounts: ran.counts,
    passedTests: ran.report && storedTestNames(ran.report.passedTests),
    failedTests: ran.report && storedTestNames(ran.report.failedTests),
  });
}

/** The workspace exactly at the base commit, every file the sandbox user's again (git's rewrites are the service's). */
async function backToBase(deps: ActivityDeps, workspace: string, baseCommit: string): Promise<void> {
  await resetTo(workspace, baseCommit);
  await handOver(deps.sandbox, workspace);
}
