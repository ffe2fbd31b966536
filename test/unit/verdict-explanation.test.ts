import type { GateSummary } from '../../domain/gates';
import { computeVerdict, VERDICT_RULES, type JudgeInput } from '../../domain/judge';
import type { FindingSummary } from '../../domain/ledger';
import {
  explainVerdict,
  RULE_DESCRIPTIONS,
  verdictRuleOf,
  type StoredJudgeReport,
} from '../../domain/verdict-explanation';

// Explaining stored verdicts: the recorded rule, or one derived for verdicts stored before rules were.

const tests = (status: GateSummary['status']): GateSummary => ({
  gate: 'tests',
  status,
  evidenceId: 'ev-tests',
  exitCode: status === 'PASSED' ? 0 : 1,
  timeoutStatus: 'COMPLETED',
  testCounts: status === 'PASSED' ? { passed: 2, failed: 0, skipped: 0 } : { passed: 0, failed: 2, skipped: 0 },
  failureReason: status === 'FAILED' ? '2 tests failed' : null,
  failureSignature: status === 'FAILED' ? 'sig' : null,
  provesAcceptanceCriteria: status === 'PASSED' ? ['AC-1'] : [],
});

const input = (overrides: Partial<JudgeInput> = {}): JudgeInput => ({
  roundIteration: 1,
  maxIterations: 3,
  gates: [tests('PASSED')],
  acceptanceChecks: [],
  review: { status: 'COMPLETED', findings: [], responseIds: ['r1'] },
  systemFindings: [],
  acceptanceCriteria: [{ id: 'AC-1', statement: 'adds', proof: 'the tests gate passes' }],
  maker: { noChange: false, diffHash: 'd', cumulativeDiffEmpty: false, agentReport: null },
  budgetExhausted: null,
  previous: [],
  ...overrides,
});

const blocker: FindingSummary = {
  findingId: 'COR-001',
  title: 'loses precision',
  topic: 'correctness',
  severity: 'BLOCKER',
  validity: 'VALID',
  location: { file: 'src/sum.js', startLine: 1, endLine: 3 },
  acceptanceCriteria: ['AC-1'],
  signature: 'sig-cor',
  source: 'REVIEWER',
};

/** A report as stored before `rule` existed. */
function legacy(report: ReturnType<typeof computeVerdict>): StoredJudgeReport {
  const { rule: _rule, ...rest } = report;
  return rest;
}

test('every rule has a description', () => {
  expect(Object.keys(RULE_DESCRIPTIONS).sort()).toEqual([...VERDICT_RULES].sort());
});

test.each([
  ['ALL_CLEAR', input()],
  ['GATES_FAILED', input({ gates: [tests('FAILED')], review: { status: 'SKIPPED', reason: 'gate failed' } })],
  ['BLOCKING_FINDINGS', input({ review: { status: 'COMPLETED', findings: [blocker], responseIds: [] } })],
  ['ACCEPTANCE_UNPROVEN', input({ gates: [{ ...tests('PASSED'), provesAcceptanceCriteria: [] }] })],
  [
    'MAX_ITERATIONS',
    input({ roundIteration: 3, review: { status: 'COMPLETED', findings: [blocker], responseIds: [] } }),
  ],
  ['EMPTY_DIFF', input({ maker: { noChange: false, diffHash: 'd', cumulativeDiffEmpty: true, agentReport: null } })],
  ['REVIEW_UNAVAILABLE', input({ review: { status: 'FAILED', reason: 'provider down' } })],
] as const)('%s: recorded, and derived the same for a verdict stored without it', (rule, judged) => {
  const report = computeVerdict(judged);
  expect(verdictRuleOf(report)).toEqual({ rule, recorded: true });
  expect(verdictRuleOf(legacy(report))).toEqual({ rule, recorded: false });
});

test('an unrecognisable stored report is UNKNOWN, not a guess', () => {
  expect(verdictRuleOf({ verdict: 'ITERATE', reasons: ['something'] })).toEqual({ rule: 'UNKNOWN', recorded: false });
  expect(explainVerdict({ verdict: 'ITERATE', reasons: ['something'] })[0]).toBe('ITERATE: something.');
});

test('the explanation names the rule, the blocking finding and every input table', () => {
  const report = computeVerdict(
    input({ roundIteration: 3, review: { status: 'COMPLETED', findings: [blocker], responseIds: [] } }),
  );
  const lines = explainVerdict(report, [
    { findingId: 'COR-001', source: 'REVIEWER', rule: null, location: blocker.location },
  ]);
  expect(lines).toEqual([
    'ESCALATE (MAX_ITERATIONS) at iteration 3 of 3: the work is not done and the iteration limit is reached. Still blocking: COR-001 BLOCKER VALID “loses precision”.',
    'Rule MAX_ITERATIONS: the work is not done and the iteration limit is reached.',
    "Judge's reasons, in order: 1) 1 valid blocking finding(s) 2) escalated: MAX_ITERATIONS.",
    'Gates: tests PASSED (exit 0, 2 passed, 0 failed, 0 skipped).',
    'Acceptance criteria: AC-1 PROVEN.',
    'Findings: COR-001 BLOCKER VALID “loses precision” → BLOCKING.',
    'System findings: none.',
  ]);
});

test('a PASS says all configured gates passed; system findings are listed with their rule and place', () => {
  const report = computeVerdict(input());
  const [headline] = explainVerdict(report);
  expect(headline).toBe(
    'PASS: all configured gates passed (tests), no valid blocking findings, every acceptance criterion proven (1 of 1).',
  );
  const gated = computeVerdict(
    input({ gates: [tests('FAILED')], review: { status: 'SKIPPED', reason: 'gate failed' } }),
  );
  const lines = explainVerdict(gated, [
    {
      findingId: 'TMP-001',
      source: 'SYSTEM',
      rule: 'SKIP_OR_ONLY_ADDED',
      location: { file: 'test/a.test.js', startLine: 4, endLine: 4 },
    },
  ]);
  expect(lines[0]).toBe('ITERATE: the tests gate failed at iteration 1 of 3; the maker is sent back to fix it.');
  expect(lines[3]).toBe('Gates: tests FAILED (exit 1, 0 passed, 2 failed, 0 skipped, 2 tests failed).');
  expect(lines[6]).toBe('System findings: TMP-001 (SKIP_OR_ONLY_ADDED) at test/a.test.js:4.');
});
