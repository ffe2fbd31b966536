import { recordVerdict } from '../../activities/records';
import type { GateSummary } from '../../domain/gates';
import { computeVerdict } from '../../domain/judge';
import { verdicts } from '../../telemetry/loop-metrics';
import { insertLoop, useTestDatabase } from '../support/database';

// The verdict is one statement through its iteration (a local activity, on the loop's critical path): a
// retry replaces it, the verdict counter counts it once, and the report quotes the gate plan's warnings.

const db = useTestDatabase();

async function iterationOfNewLoop(warnings: string[]): Promise<string> {
  const id = await insertLoop(db.prisma, {
    status: 'RUNNING',
    phase: 'JUDGE',
    gatePlan: { gates: [], profile: null, notes: [], warnings },
  });
  await db.prisma.iteration.create({
    data: {
      loopId: id,
      sequence: 1,
      roundIteration: 1,
      contractVersion: 1,
      startCommit: 'a'.repeat(40),
      makerAttempts: 1,
    },
  });
  return id;
}

const gate = (name: GateSummary['gate'], status: GateSummary['status']): GateSummary => ({
  gate: name,
  status,
  evidenceId: status === 'NOT_CONFIGURED' ? null : `ev-${name}`,
  exitCode: status === 'NOT_CONFIGURED' ? null : status === 'PASSED' ? 0 : 1,
  timeoutStatus: status === 'NOT_CONFIGURED' ? null : 'COMPLETED',
  testCounts: null,
  failureReason: status === 'FAILED' ? `${name} exited with code 1` : null,
  failureSignature: status === 'FAILED' ? `sig-${name}` : null,
  provesAcceptanceCriteria: status === 'PASSED' && name === 'tests' ? ['AC-1'] : [],
});

function report(testsStatus: 'PASSED' | 'FAILED') {
  return computeVerdict({
    roundIteration: 1,
    maxIterations: 3,
    gates: [
      gate('tests', testsStatus),
      gate('typecheck', 'NOT_CONFIGURED'),
      gate('lint', 'NOT_CONFIGURED'),
      gate('build', 'NOT_CONFIGURED'),
    ],
    acceptanceChecks: [],
    review:
      testsStatus === 'PASSED'
        ? { status: 'COMPLETED', findings: [], responseIds: ['r-1'] }
        : { status: 'SKIPPED', reason: 'a configured gate failed' },
    systemFindings: [],
    acceptanceCriteria: [{ id: 'AC-1', statement: 'adds numbers', proof: 'the tests gate passes' }],
    maker: { noChange: false, diffHash: 'd', cumulativeDiffEmpty: false, agentReport: null },
    budgetExhausted: null,
    previous: [],
  });
}

const counted = async (verdict: string) =>
  (await verdicts.get()).values.filter((v) => v.labels.verdict === verdict).reduce((n, v) => n + v.value, 0);

test('a retried verdict write replaces the first and is counted once', async () => {
  const loopId = await iterationOfNewLoop([]);
  const [iterate, pass] = [report('FAILED'), report('PASSED')];
  expect([iterate.verdict, pass.verdict]).toEqual(['ITERATE', 'PASS']);
  const before = { iterate: await counted('ITERATE'), pass: await counted('PASS') };

  await recordVerdict(db.deps, { loopId, sequence: 1, report: iterate, warnings: [] });
  const first = await db.prisma.verdict.findFirstOrThrow({ where: { loopId } });
  await recordVerdict(db.deps, { loopId, sequence: 1, report: pass, warnings: [] });

  const stored = await db.prisma.verdict.findMany({ where: { loopId } });
  expect(stored).toHaveLength(1);
  expect(stored[0]).toMatchObject({
    id: first.id,
    verdict: 'PASS',
    trigger: null,
    directives: pass.directives,
    createdAt: first.createdAt,
  });
  expect(stored[0]!.report).toEqual(JSON.parse(JSON.stringify(pass)));
  expect(Math.abs(first.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
  expect(stored[0]!.markdown).toContain('## Judge report — PASS');
  // The first write created the row and was counted; the second only replaced it.
  expect(await counted('ITERATE')).toBe(before.iterate + 1);
  expect(await counted('PASS')).toBe(before.pass);
});

test('the report quotes the warnings it is given', async () => {
  const given = await iterationOfNewLoop(['stored warning']);
  await recordVerdict(db.deps, { loopId: given, sequence: 1, report: report('PASSED'), warnings: ['no tests gate'] });
  const markdown = (await db.prisma.verdict.findFirstOrThrow({ where: { loopId: given } })).markdown;
  expect(markdown).toContain('**Warning: no tests gate**');
  expect(markdown).not.toContain('stored warning');
});

test('a verdict for an iteration that does not exist fails, writing nothing', async () => {
  const loopId = await iterationOfNewLoop([]);
  await expect(recordVerdict(db.deps, { loopId, sequence: 2, report: report('PASSED'), warnings: [] })).rejects.toThrow(
    `loop ${loopId} has no iteration 2: its verdict cannot be recorded`,
  );
  expect(await db.prisma.verdict.count({ where: { loopId } })).toBe(0);
});
