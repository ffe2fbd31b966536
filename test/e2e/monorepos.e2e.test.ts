import { cleanLedger } from '../support/fake-llm-server';
import { scriptedMaker } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { MONOREPO_PROJECTS, type MonorepoShape } from '../support/monorepo-projects';
import {
  corepackWorkerEnv,
  realProjectRepo,
  realProjectRequest,
  REGISTRY_LOOP_WAIT_MS,
  REGISTRY_TEST_TIMEOUT_MS,
} from '../support/real-projects';

// Real monorepos (issue "Real repositories, round 2", item 4): npm workspaces, a pnpm workspace, a Go
// workspace (go.work over two modules, no root module) and a virtual Cargo workspace, each with two
// packages, real dependencies from the registries, the bug in the package depended on and the failing
// test in the dependent one. From a fresh submission (no gates, no set-up in the request) each goes to
// PASS: set-up runs once at the root, the tests gate runs every package's tests from one command at the
// root, and the named test — qualified by its package, since both packages have a test of the same
// title — proves AC-1. One loop per shape.
//
// The worker gets corepack's variables for pnpm, as in real-projects.e2e.test.ts.

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness({ workerEnv: corepackWorkerEnv() });
});
afterAll(async () => {
  await h?.close();
});

const CASES: Array<[MonorepoShape, string]> = [
  ['npm-workspaces', 'npm workspaces, jest hoisted to the root: npm test --workspaces --if-present'],
  ['pnpm-workspace', 'pnpm-workspace.yaml, workspace:* and jest in each package: pnpm -r --no-bail run test'],
  ['go-work', 'go.work over two modules and no root module: go test -json ./cart/... ./money/...'],
  ['cargo-workspace', 'a virtual Cargo workspace, crates depending by path: cargo test --workspace'],
];

// The loops run at once: their set-ups wait on the registries (npm, corepack and pnpm) while the others
// compile, and they share nothing but the harness and the reviewer's answers, which are all alike.
test.concurrent.each(CASES)(
  '%s (%s): failing test in the dependent package → PASS, the package-qualified test proving AC-1',
  async (shape) => {
    const project = MONOREPO_PROJECTS[shape]();
    const repo = realProjectRepo(project);
    const maker = scriptedMaker({ steps: { '1': { write: project.fix } } });
    h.llm.enqueue({ content: cleanLedger });
    const started = Date.now();
    const submitted = await h.request('POST', '/v1/loops', realProjectRequest(repo, project, maker.argv));
    expect(submitted.status).toBe(201);
    const loop = await h.waitForLoop(
      submitted.body.id,
      ['PASSED', 'FAILED', 'AWAITING_DECISION', 'REJECTED'],
      REGISTRY_LOOP_WAIT_MS,
    );
    const why =
      loop.status === 'PASSED'
        ? ''
        : (loop.failureReason ?? (await h.request('GET', `/v1/loops/${loop.id}/report`)).body?.markdown);
    expect({ status: loop.status, why }).toEqual({ status: 'PASSED', why: '' });

    // Set-up once, at the root; gates from the repository alone, every package's from one root command.
    expect(loop.gatePlan.profile).toBe('monorepo');
    expect(loop.gatePlan.setup.commands.map((c: any) => [c.argv, c.source])).toEqual(
      project.setupArgv.map((argv) => [argv, 'manifest-inference']),
    );
    expect(Object.fromEntries(loop.gatePlan.gates.map((g: any) => [g.gate, [g.source, g.argv]]))).toEqual(
      project.gates,
    );
    const testsGate = loop.gatePlan.gates.find((g: any) => g.gate === 'tests');
    expect(testsGate.detail).toContain(project.testsDetail);

    const [iteration] = loop.iterations;
    expect(loop.iterations).toHaveLength(1);
    const evidence = iteration.evidence;
    expect(evidence.map((e: any) => [e.gate, e.status])).toEqual([
      ...project.setupArgv.map((_, i) => [`setup:${i + 1}`, 'PASSED']),
      // The base run: the dependent package's test fails on the base commit.
      ['tests:base', 'FAILED'],
      ...loop.gatePlan.gates.map((g: any) => [g.gate, 'PASSED']),
      ['tests:differential', 'PASSED'],
    ]);
    const base = evidence.find((e: any) => e.gate === 'tests:base');
    expect(base.failedTests).toContain(project.reportedTestName);

    // Every package's tests ran, each named with its package; AC-1 is proven by the dependent's test.
    const tests = evidence.find((e: any) => e.gate === 'tests');
    expect(tests.testCounts).toEqual({ passed: project.passedTests, failed: 0, skipped: 0 });
    expect([...tests.passedTests].sort()).toEqual(project.passedTestNames);
    expect(tests.failedTests).toEqual([]);
    expect(tests.assertionEvidence).toEqual(['AC-1', 'AC-2']);
    const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
    expect(report.body.markdown).toContain(`| AC-1 | the test ${project.testName} passes | PROVEN |`);

    // The checkpoint is the fix alone: nothing set-up or the gates made in any package.
    expect(iteration.changedFiles).toEqual(Object.keys(project.fix));

    const ms = (e: { startTime: Date | null; endTime: Date | null }) => e.endTime!.getTime() - e.startTime!.getTime();
    const rows = await h.db.prisma.evidence.findMany({
      where: { loopId: loop.id, OR: [{ iterationId: null }, { gate: { startsWith: 'setup:' } }] },
    });
    const workspace = rows.filter((e) => e.iterationId === null).reduce((t, e) => t + ms(e), 0);
    const checkout = rows.filter((e) => e.iterationId !== null).reduce((t, e) => t + ms(e), 0);
    console.log(
      `${shape}: set-up ${workspace} ms (workspace), ${checkout} ms (checkout); whole loop ${Date.now() - started} ms`,
    );
  },
  REGISTRY_TEST_TIMEOUT_MS,
);
