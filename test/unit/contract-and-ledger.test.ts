import { canonicalJson, goalContractSchema } from '../../domain/contract';
import { decisionSchema, applyDecision } from '../../domain/decision';
import { describeIssues, findingLedgerSchema, signatureMaterial } from '../../domain/ledger';
import { loopRequestSchema } from '../../domain/loop-request';
import { parseLedger } from '../../activities/review/parse-ledger';

const contract = {
  objective: 'Add a sum function.',
  outcome: 'Callers can add numbers.',
  acceptanceCriteria: [
    { id: 'AC-1', statement: 'sum adds', verification: { type: 'test', name: 'sum adds two numbers' } },
  ],
};

const blocker = {
  id: 'COR-001',
  title: 'Overflow',
  topic: 'correctness',
  severity: 'BLOCKER',
  validity: 'VALID',
  disposition: 'STRONG',
  location: { file: 'src/sum.js', startLine: 1, endLine: 2 },
  acceptanceCriteria: ['AC-1'],
  evidence: 'e',
  failureScenario: 'f',
  reproduction: 'r',
  concreteAlternativeDiff: '--- a\n+++ b',
};

function issuesOf(result: { success: boolean; error?: { issues: unknown[] } }): string[] {
  return result.success ? [] : describeIssues(result.error!.issues as never);
}

describe('goal contract', () => {
  test('a valid contract parses with defaults', () => {
    const parsed = goalContractSchema.parse(contract);
    expect(parsed.constraints).toEqual([]);
    expect(parsed.outOfScope).toEqual([]);
  });

  test.each([
    ['no acceptance criteria', { ...contract, acceptanceCriteria: [] }, 'acceptanceCriteria'],
    ['an empty objective', { ...contract, objective: '  ' }, 'objective'],
    [
      'an AC without verification',
      { ...contract, acceptanceCriteria: [{ id: 'AC-1', statement: 's' }] },
      'acceptanceCriteria.0.verification',
    ],
    [
      'duplicate AC ids',
      { ...contract, acceptanceCriteria: [contract.acceptanceCriteria[0], contract.acceptanceCriteria[0]] },
      'acceptanceCriteria.1.id',
    ],
    ['an unknown field', { ...contract, priority: 'high' }, '(root)'],
  ])('rejects %s, naming the field', (_name, value, field) => {
    const issues = issuesOf(goalContractSchema.safeParse(value));
    expect(issues.some((i) => i.startsWith(`${field}:`))).toBe(true);
  });

  test('the canonical hash input ignores key order', () => {
    const reordered = {
      acceptanceCriteria: contract.acceptanceCriteria,
      outcome: contract.outcome,
      objective: contract.objective,
    };
    expect(canonicalJson(goalContractSchema.parse(reordered))).toBe(canonicalJson(goalContractSchema.parse(contract)));
  });

  test('loop requests cap maxIterations at 5 and default it to 3', () => {
    const base = { repository: { url: '/tmp/repo' }, contract, maker: { backend: 'command', argv: ['agent'] } };
    expect(loopRequestSchema.parse(base).maxIterations).toBe(3);
    expect(issuesOf(loopRequestSchema.safeParse({ ...base, maxIterations: 9 }))[0]).toMatch(/^maxIterations:/);
  });

  test('request gates take what verification.json gates take: a JUnit report inside the repository', () => {
    const base = { repository: { url: '/tmp/repo' }, contract, maker: { backend: 'command', argv: ['agent'] } };
    const tests = { gate: 'tests', argv: ['make', 'test'], junitReport: 'reports/junit.xml' };
    expect(loopRequestSchema.parse({ ...base, gates: [tests] }).gates[0]!.junitReport).toBe('reports/junit.xml');
    expect(issuesOf(loopRequestSchema.safeParse({ ...base, gates: [{ ...tests, junitReport: '../x.xml' }] }))).toEqual([
      'gates.0.junitReport: must not contain ".." segments',
    ]);
  });

  test('retry guidance becomes a contract constraint', () => {
    const decision = decisionSchema.parse({ kind: 'retry', actor: 'ana', guidance: 'use BigInt' });
    const effect = applyDecision(decision, goalContractSchema.parse(contract));
    expect(effect).toMatchObject({ action: 'RESUME', contract: { constraints: ['Human guidance: use BigInt'] } });
    expect(issuesOf(decisionSchema.safeParse({ kind: 'retry', actor: 'ana' }))[0]).toMatch(/^guidance:/);
  });
});

describe('finding ledger', () => {
  test('a valid ledger parses', () => {
    expect(findingLedgerSchema.parse({ findings: [blocker] }).findings).toHaveLength(1);
  });

  test('VALID BLOCKER/HIGH findings need a concrete alternative diff', () => {
    const { concreteAlternativeDiff: _omit, ...withoutDiff } = blocker;
    expect(issuesOf(findingLedgerSchema.safeParse({ findings: [withoutDiff] }))).toEqual([
      'findings.0.concreteAlternativeDiff: required for VALID BLOCKER/HIGH findings',
    ]);
    expect(findingLedgerSchema.safeParse({ findings: [{ ...withoutDiff, severity: 'MEDIUM' }] }).success).toBe(true);
  });

  test('rejects unknown topics, bad ids and inverted line ranges', () => {
    const bad = { ...blocker, id: 'cor-1', topic: 'style', location: { file: 'a', startLine: 5, endLine: 2 } };
    const issues = issuesOf(findingLedgerSchema.safeParse({ findings: [bad] }));
    expect(issues.map((i) => i.split(':')[0])).toEqual(expect.arrayContaining(['findings.0.id', 'findings.0.topic']));
  });

  test('parseLedger reports non-JSON and schema errors, and accepts fenced JSON', () => {
    expect(parseLedger('not json')).toMatchObject({ ok: false });
    expect(parseLedger('{"findings": [{"id": "X"}]}')).toMatchObject({ ok: false });
    expect(parseLedger('```json\n{"findings": []}\n```')).toEqual({ ok: true, ledger: { findings: [] } });
  });

  test('signature material ignores line numbers, case and punctuation', () => {
    const a = signatureMaterial({
      topic: 'correctness',
      title: 'Off-by-one in loop!',
      location: { file: './src/A.js', startLine: 1, endLine: 2 },
    });
    const b = signatureMaterial({
      topic: 'correctness',
      title: 'off by one in loop',
      location: { file: 'src/a.js', startLine: 40, endLine: 41 },
    });
    expect(a).toBe(b);
  });
});
