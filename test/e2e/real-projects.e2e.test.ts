import { cleanLedger } from '../support/fake-llm-server';
import { scriptedMaker } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import {
  corepackWorkerEnv,
  REAL_PROJECTS,
  realProjectRepo,
  realProjectRequest,
  REGISTRY_LOOP_WAIT_MS,
  REGISTRY_TEST_TIMEOUT_MS,
  type Ecosystem,
} from '../support/real-projects';

// Issue 9: real projects with real dependencies from their registries — pnpm pinned through
// `packageManager`, Python with pytest and its config only in tox.ini, a Go module and a
// Cargo crate with one dependency each — go from a fresh submission (no gates, no set-up in the request)
// to PASS (and, issue 28, a Maven library: plugins, dependencies and the test provider resolved by
// set-up, gates offline, surefire's reports read; and a Gradle library on Debian's Gradle 4.4.1, its
// runtime-only dependency resolved by set-up, its offline gates on a Gradle home of their own): set-up and gates are inferred from the repository, the dependencies are installed in the
// maker's workspace and in the verification checkout, and a named test proves the first acceptance
// criterion through the runner's per-test report. The npm + jest project is in setup.e2e.test.ts.
//
// The worker gets COREPACK_INTEGRITY_KEYS=0 and the host's NODE_EXTRA_CA_CERTS (real-projects.ts): this
// machine's npm registry mirror serves no signatures for corepack to check the pnpm it downloads
// against, and sits behind a TLS-inspecting proxy; set-up passes both on.

let h: LoopHarness;
beforeAll(async () => {
  h = await startLoopHarness({ workerEnv: corepackWorkerEnv() });
});
afterAll(async () => {
  await h?.close();
});

const CASES: Array<[Ecosystem, string]> = [
  ['pnpm', 'pnpm pinned through packageManager, jest from pnpm-lock.yaml'],
  ['python', "Python with pytest only in tox.ini's [testenv] deps, and its config only there"],
  ['go', 'a Go module depending on github.com/google/uuid'],
  ['cargo', 'a Cargo crate depending on itoa'],
  ['maven', 'a Maven library on JUnit 5 depending on commons-lang3, its test named as surefire names it'],
  [
    'gradle',
    "a Gradle 4.4.1 library on JUnit 4 with a runtime-only dependency, its test named as Gradle's --tests names it",
  ],
];

// The loops run at once (jest's maxConcurrency, 5): their set-ups wait on the registries (corepack and pnpm,
// PyPI, Maven Central) while the others compile, and they share nothing but the harness and the reviewer's
// answers, which are all alike.
test.concurrent.each(CASES)(
  '%s (%s): failing test → PASS with inferred set-up and gates, the named test proving AC-1',
  async (ecosystem) => {
    const project = REAL_PROJECTS[ecosystem]();
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
    // Anything but PASS shows why: the failure, or the report that went to a human.
    const why =
      loop.status === 'PASSED'
        ? ''
        : (loop.failureReason ?? (await h.request('GET', `/v1/loops/${loop.id}/report`)).body?.markdown);
    expect({ status: loop.status, why }).toEqual({ status: 'PASSED', why: '' });

    // Set-up and gates came from the repository alone.
    expect(loop.gatePlan.setup.commands.map((c: any) => [c.argv, c.source])).toEqual(
      project.setupArgv.map((argv) => [argv, 'manifest-inference']),
    );
    const testsGate = loop.gatePlan.gates.find((g: any) => g.gate === 'tests');
    expect(testsGate).toMatchObject({
      argv: project.testsArgv,
      source: 'manifest-inference',
      detail: expect.stringContaining(project.testsDetail),
    });
    expect(loop.gatePlan.gates.every((g: any) => g.source === 'manifest-inference')).toBe(true);

    // The maker's workspace was set up before the maker ran (loop-level evidence) …
    expect(loop.workspaceSetup.map((e: any) => [e.gate, e.status])).toEqual(
      project.setupArgv.map((_, i) => [`workspace-setup:0.0:${i + 1}`, 'PASSED']),
    );
    // … and so was the verification checkout, before every inferred gate passed.
    const [iteration] = loop.iterations;
    expect(loop.iterations).toHaveLength(1);
    const evidence = iteration.evidence;
    // The crate's tests are inline in the src/lib.rs the fix edits: their base versions ran next (frozen).
    // Last, the named test ran again with CI unset (the differential run).
    expect(evidence.map((e: any) => [e.gate, e.status])).toEqual([
      ...project.setupArgv.map((_, i) => [`setup:${i + 1}`, 'PASSED']),
      // The base run: the tests gate on the base commit, where the named test fails.
      ['tests:base', 'FAILED'],
      ...(ecosystem === 'cargo' ? [['tests:frozen', 'PASSED']] : []),
      ...loop.gatePlan.gates.map((g: any) => [g.gate, 'PASSED']),
      ['tests:differential', 'PASSED'],
    ]);
    expect(evidence.filter((e: any) => e.gate.startsWith('setup:')).map((e: any) => e.command)).toEqual(
      project.setupArgv,
    );

    // AC-1 is proven by the named test, as the runner reported it.
    const tests = evidence.find((e: any) => e.gate === 'tests');
    expect(tests.testCounts).toEqual({ passed: project.passedTests, failed: 0, skipped: 0 });
    // … whichever runner: the API lists every test the tests gate ran, by name (issue 10).
    expect(tests.passedTests).toHaveLength(project.passedTests);
    expect(tests.passedTests).toContain(project.reportedTestName);
    expect(tests.failedTests).toEqual([]);
    expect(tests.assertionEvidence).toEqual(['AC-1', 'AC-2']);
    if (ecosystem === 'gradle') {
      // The differential run narrowed Gradle to the acceptance test with its test filter.
      const differential = evidence.find((e: any) => e.gate === 'tests:differential');
      expect(differential.command).toEqual([...project.testsArgv, '--tests', '*.adds']);
      expect(differential.passedTests).toEqual([project.reportedTestName]);
    }
    const report = await h.request('GET', `/v1/loops/${loop.id}/report`);
    expect(report.body.markdown).toContain(`| AC-1 | the test ${project.testName} passes | PROVEN |`);

    // The checkpoint is the fix alone: nothing set-up or the gates made (.venv, node_modules, target, caches).
    expect(iteration.changedFiles).toEqual(Object.keys(project.fix));

    const ms = (e: { startTime: Date | null; endTime: Date | null }) => e.endTime!.getTime() - e.startTime!.getTime();
    const rows = await h.db.prisma.evidence.findMany({
      where: { loopId: loop.id, OR: [{ iterationId: null }, { gate: { startsWith: 'setup:' } }] },
    });
    const workspace = rows.filter((e) => e.iterationId === null).reduce((t, e) => t + ms(e), 0);
    const checkout = rows.filter((e) => e.iterationId !== null).reduce((t, e) => t + ms(e), 0);
    console.log(
      `${ecosystem}: set-up ${workspace} ms (workspace), ${checkout} ms (checkout); whole loop ${Date.now() - started} ms`,
    );
  },
  REGISTRY_TEST_TIMEOUT_MS,
);
