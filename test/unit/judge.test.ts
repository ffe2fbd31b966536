import type { GateSummary } from '../../domain/gates';
import { computeVerdict, environmentReport, type JudgeInput } from '../../domain/judge';
import type { FindingSummary } from '../../domain/ledger';

// The judge policy of docs/design.md §6, row by row.

function gate(gate: GateSummary['gate'], status: GateSummary['status'], extra: Partial<GateSummary> = {}): GateSummary {
  return {
    gate,
    status,
    evidenceId: status === 'PASSED' || status === 'FAILED' ? `ev-${gate}` : null,
    exitCode: status === 'FAILED' ? 1 : status === 'PASSED' ? 0 : null,
    timeoutStatus: status === 'PASSED' || status === 'FAILED' ? 'COMPLETED' : null,
    testCounts: gate === 'tests' && status === 'PASSED' ? { passed: 3, failed: 0, skipped: 0 } : null,
    failureReason: status === 'FAILED' ? `${gate} exited with code 1` : null,
    failureSignature: status === 'FAILED' ? `sig-${gate}` : null,
    provesAcceptanceCriteria: status === 'PASSED' && gate === 'tests' ? ['AC-1'] : [],
    ...extra,
  };
}

function finding(extra: Partial<FindingSummary> = {}): FindingSummary {
  return {
    findingId: 'COR-001',
    title: 'Division by zero',
    topic: 'correctness',
    severity: 'BLOCKER',
    validity: 'VALID',
    location: { file: 'src/calc.js', startLine: 3, endLine: 4 },
    acceptanceCriteria: ['AC-1'],
    signature: 'sig-cor-001',
    source: 'REVIEWER',
    ...extra,
  };
}

function input(overrides: Partial<JudgeInput> = {}): JudgeInput {
  return {
    roundIteration: 1,
    maxIterations: 3,
    gates: [
      gate('tests', 'PASSED'),
      gate('typecheck', 'NOT_CONFIGURED'),
      gate('lint', 'NOT_CONFIGURED'),
      gate('build', 'NOT_CONFIGURED'),
    ],
    acceptanceChecks: [],
    review: { status: 'COMPLETED', findings: [], responseIds: ['chatcmpl-1'] },
    systemFindings: [],
    acceptanceCriteria: [{ id: 'AC-1', statement: 'adds numbers', proof: 'the tests gate passes' }],
    maker: { noChange: false, diffHash: 'diff-1', cumulativeDiffEmpty: false, agentReport: null },
    budgetExhausted: null,
    previous: [],
    ...overrides,
  };
}

describe('computeVerdict', () => {
  test('PASS when gates pass, no blocking findings and every AC is proven', () => {
    const r = computeVerdict(input());
    expect(r.verdict).toBe('PASS');
    expect(r.trigger).toBeNull();
    expect(r.rule).toBe('ALL_CLEAR');
    expect(r.acCompliance).toEqual([
      { id: 'AC-1', statement: 'adds numbers', status: 'PROVEN', evidenceIds: ['ev-tests'] },
    ]);
    expect(r.directives).toEqual([]);
  });

  test('rule 1: a failed gate → ITERATE with a directive to fix it', () => {
    const r = computeVerdict(
      input({
        gates: [gate('tests', 'FAILED'), gate('typecheck', 'NOT_RUN')],
        review: { status: 'SKIPPED', reason: 'gate failed' },
      }),
    );
    expect(r.verdict).toBe('ITERATE');
    expect(r.directives).toEqual(['1. Fix the failing tests gate: tests exited with code 1.']);
    expect(r.record.failureSignature).toBe('sig-tests');
    expect(r.rule).toBe('GATES_FAILED');
  });

  test('NOT_CONFIGURED gates are not failures and not passes', () => {
    const r = computeVerdict(input({ gates: [gate('tests', 'PASSED'), gate('lint', 'NOT_CONFIGURED')] }));
    expect(r.verdict).toBe('PASS');
    expect(r.gateAudit.find((g) => g.gate === 'lint')?.status).toBe('NOT_CONFIGURED');
  });

  test('rule 2: VALID BLOCKER or HIGH findings → ITERATE with the findings as directives', () => {
    for (const severity of ['BLOCKER', 'HIGH'] as const) {
      const r = computeVerdict(
        input({ review: { status: 'COMPLETED', findings: [finding({ severity })], responseIds: [] } }),
      );
      expect(r.verdict).toBe('ITERATE');
      expect(r.directives).toEqual([`1. Resolve COR-001 (${severity}, src/calc.js:3-4): Division by zero.`]);
      expect(r.findingTriage[0]?.outcome).toBe('BLOCKING');
      expect(r.rule).toBe('BLOCKING_FINDINGS');
    }
  });

  test('rule 3: an AC without passing evidence → ITERATE with "prove AC-n"', () => {
    const r = computeVerdict(input({ gates: [gate('tests', 'PASSED', { provesAcceptanceCriteria: [] })] }));
    expect(r.verdict).toBe('ITERATE');
    expect(r.directives).toEqual(['1. Prove AC-1 (adds numbers) with passing evidence: the tests gate passes.']);
    expect(r.rule).toBe('ACCEPTANCE_UNPROVEN');
  });

  test('an AC proven by its own command check counts', () => {
    const r = computeVerdict(
      input({
        gates: [gate('tests', 'PASSED', { provesAcceptanceCriteria: [] })],
        acceptanceChecks: [{ acId: 'AC-1', status: 'PASSED', evidenceId: 'ev-ac1' }],
      }),
    );
    expect(r.verdict).toBe('PASS');
    expect(r.acCompliance[0]?.evidenceIds).toEqual(['ev-ac1']);
  });

  test('rule 4: VALID MEDIUM/LOW are accepted trade-offs, INVALID findings are dismissed — disposition never overrides', () => {
    const findings = [
      finding({ findingId: 'MNT-001', severity: 'MEDIUM' }),
      finding({ findingId: 'PRF-001', severity: 'LOW' }),
      finding({ findingId: 'SEC-001', severity: 'BLOCKER', validity: 'INVALID' }),
    ];
    const r = computeVerdict(input({ review: { status: 'COMPLETED', findings, responseIds: [] } }));
    expect(r.verdict).toBe('PASS');
    expect(r.rule).toBe('ALL_CLEAR');
    expect(r.findingTriage.map((f) => [f.findingId, f.outcome])).toEqual([
      ['MNT-001', 'ACCEPTED_TRADE_OFF'],
      ['PRF-001', 'ACCEPTED_TRADE_OFF'],
      ['SEC-001', 'DISMISSED'],
    ]);
  });

  test('rule order: a failed gate wins over blocking findings and unproven ACs', () => {
    const r = computeVerdict(
      input({
        gates: [gate('tests', 'FAILED')],
        review: { status: 'COMPLETED', findings: [finding()], responseIds: [] },
      }),
    );
    expect(r.directives).toEqual(['1. Fix the failing tests gate: tests exited with code 1.']);
    expect(r.rule).toBe('GATES_FAILED');
  });

  test('ESCALATE at max iterations (K ≥ N)', () => {
    const r = computeVerdict(input({ roundIteration: 3, maxIterations: 3, gates: [gate('tests', 'FAILED')] }));
    expect(r.verdict).toBe('ESCALATE');
    expect(r.trigger).toBe('MAX_ITERATIONS');
    expect(r.rule).toBe('MAX_ITERATIONS');
    // The rule before the escalation stays in the reasons, in order.
    expect(r.reasons).toEqual(['gate tests failed', 'escalated: MAX_ITERATIONS']);
    expect(r.directives).toHaveLength(1);
  });

  test('max iterations does not block a PASS', () => {
    expect(computeVerdict(input({ roundIteration: 3, maxIterations: 3 })).verdict).toBe('PASS');
  });

  test('ESCALATE when a blocking signature repeats in two consecutive iterations', () => {
    const r = computeVerdict(
      input({
        roundIteration: 2,
        review: { status: 'COMPLETED', findings: [finding()], responseIds: [] },
        previous: [
          {
            roundIteration: 1,
            diffHash: 'diff-0',
            blockingSignatures: ['sig-cor-001'],
            tamperSignatures: [],
            failureSignature: null,
          },
        ],
      }),
    );
    expect(r.verdict).toBe('ESCALATE');
    expect(r.trigger).toBe('REPEATED_BLOCKING_SIGNATURE');
    expect(r.rule).toBe('REPEATED_BLOCKING_SIGNATURE');
  });

  test('a blocking signature seen two iterations back (not consecutive) does not escalate', () => {
    const r = computeVerdict(
      input({
        roundIteration: 3,
        maxIterations: 5,
        review: { status: 'COMPLETED', findings: [finding()], responseIds: [] },
        previous: [
          {
            roundIteration: 1,
            diffHash: 'a',
            blockingSignatures: ['sig-cor-001'],
            tamperSignatures: [],
            failureSignature: null,
          },
          {
            roundIteration: 2,
            diffHash: 'b',
            blockingSignatures: ['other'],
            tamperSignatures: [],
            failureSignature: null,
          },
        ],
      }),
    );
    expect(r.verdict).toBe('ITERATE');
  });

  test('ESCALATE on ping-pong: the diff equals the one of two iterations back', () => {
    const r = computeVerdict(
      input({
        roundIteration: 3,
        maxIterations: 5,
        gates: [gate('tests', 'FAILED', { failureSignature: 'x3' })],
        maker: { noChange: false, diffHash: 'diff-A', cumulativeDiffEmpty: false, agentReport: null },
        previous: [
          {
            roundIteration: 1,
            diffHash: 'diff-A',
            blockingSignatures: [],
            tamperSignatures: [],
            failureSignature: 'x1',
          },
          {
            roundIteration: 2,
            diffHash: 'diff-B',
            blockingSignatures: [],
            tamperSignatures: [],
            failureSignature: 'x2',
          },
        ],
      }),
    );
    expect(r.trigger).toBe('PING_PONG_DIFF');
    expect(r.rule).toBe('PING_PONG_DIFF');
  });

  test('ESCALATE when the same gate failure repeats', () => {
    const r = computeVerdict(
      input({
        roundIteration: 2,
        gates: [gate('tests', 'FAILED')],
        maker: { noChange: false, diffHash: 'diff-2', cumulativeDiffEmpty: false, agentReport: null },
        previous: [
          {
            roundIteration: 1,
            diffHash: 'diff-1',
            blockingSignatures: [],
            tamperSignatures: [],
            failureSignature: 'sig-tests',
          },
        ],
      }),
    );
    expect(r.trigger).toBe('REPEATED_GATE_FAILURE');
    expect(r.rule).toBe('REPEATED_GATE_FAILURE');
  });

  test('ESCALATE when the maker produced no change and the work is not done', () => {
    const r = computeVerdict(
      input({
        gates: [gate('tests', 'FAILED')],
        maker: { noChange: true, diffHash: 'd', cumulativeDiffEmpty: true, agentReport: null },
      }),
    );
    expect(r.trigger).toBe('NO_CHANGE');
    expect(r.rule).toBe('NO_CHANGE');
  });

  test('no change on the last iteration is reported as NO_CHANGE, not as the iteration limit', () => {
    const r = computeVerdict(
      input({
        roundIteration: 3,
        maxIterations: 3,
        gates: [gate('tests', 'FAILED')],
        maker: { noChange: true, diffHash: 'd', cumulativeDiffEmpty: true, agentReport: null },
      }),
    );
    expect(r.trigger).toBe('NO_CHANGE');
  });

  test('a "success" with no diff against the base is a stall, not a PASS', () => {
    const r = computeVerdict(
      input({ maker: { noChange: true, diffHash: 'empty', cumulativeDiffEmpty: true, agentReport: null } }),
    );
    expect(r.verdict).toBe('ESCALATE');
    expect(r.trigger).toBe('NO_CHANGE');
    // Not the maker's empty iteration but an empty branch: its own rule, the same trigger.
    expect(r.rule).toBe('EMPTY_DIFF');
  });

  test('no PASS without a review: a review skipped while every gate passed escalates', () => {
    const r = computeVerdict(input({ review: { status: 'SKIPPED', reason: 'cost budget reached' } }));
    expect(r.verdict).toBe('ESCALATE');
    expect(r.trigger).toBe('REVIEW_UNAVAILABLE');
    expect(r.rule).toBe('REVIEW_UNAVAILABLE');
  });

  test('no PASS without a review: a failed review escalates', () => {
    const r = computeVerdict(input({ review: { status: 'FAILED', reason: 'ledger invalid after 2 repairs' } }));
    expect(r.verdict).toBe('ESCALATE');
    expect(r.trigger).toBe('REVIEW_UNAVAILABLE');
  });

  test('no PASS on a review that did not see every changed file: REVIEW_INCOMPLETE names what was not reviewed', () => {
    const reason = "1201 changed files exceed the review's ceiling of 1000; not reviewed: 1201 changed file(s)";
    const r = computeVerdict(input({ review: { status: 'INCOMPLETE', reason } }));
    expect(r.verdict).toBe('ESCALATE');
    expect(r.trigger).toBe('REVIEW_INCOMPLETE');
    expect(r.rule).toBe('REVIEW_INCOMPLETE');
    expect(r.reasons).toEqual([`review incomplete: ${reason}`]);
  });

  test('files a completed review left out by rule are named in the reasons of its PASS', () => {
    const coverage = {
      parts: 2,
      excluded: [
        { rule: 'LOCKFILE', files: 1, sample: ['package-lock.json'] },
        { rule: 'LINGUIST_GENERATED', files: 7, sample: ['gen/a.ts', 'gen/b.ts'] },
      ],
    };
    const r = computeVerdict(input({ review: { status: 'COMPLETED', findings: [], responseIds: [], coverage } }));
    expect(r.verdict).toBe('PASS');
    expect(r.reasons.slice(1)).toEqual([
      'not reviewed (LOCKFILE): 1 file(s): package-lock.json',
      'not reviewed (LINGUIST_GENERATED): 7 file(s): gen/a.ts, gen/b.ts, 5 more',
    ]);
  });

  const tamper = finding({
    findingId: 'TMP-001',
    title: 'test skip marker added',
    topic: 'testing_gaps',
    location: { file: 'test/sum.test.js', startLine: 4, endLine: 4 },
    signature: 'sig-tmp-skip',
    source: 'SYSTEM',
  });

  test('a tamper finding blocks PASS like a VALID BLOCKER, with a revert directive', () => {
    const r = computeVerdict(input({ systemFindings: [tamper] }));
    expect(r.verdict).toBe('ITERATE');
    expect(r.directives).toEqual(['1. Revert TMP-001 (BLOCKER, test/sum.test.js:4-4): test skip marker added.']);
    expect(r.record.tamperSignatures).toEqual(['sig-tmp-skip']);
    expect(r.rule).toBe('BLOCKING_FINDINGS');
  });

  test('tampering is directed even while a gate fails', () => {
    const r = computeVerdict(
      input({
        gates: [gate('tests', 'FAILED')],
        systemFindings: [tamper],
        review: { status: 'SKIPPED', reason: 'gate failed' },
      }),
    );
    expect(r.directives).toEqual([
      '1. Fix the failing tests gate: tests exited with code 1.',
      '2. Revert TMP-001 (BLOCKER, test/sum.test.js:4-4): test skip marker added.',
    ]);
  });

  test('ESCALATE when the same tamper rule fires in two consecutive iterations', () => {
    const r = computeVerdict(
      input({
        roundIteration: 2,
        systemFindings: [tamper],
        previous: [
          {
            roundIteration: 1,
            diffHash: 'd0',
            blockingSignatures: ['sig-tmp-skip'],
            tamperSignatures: ['sig-tmp-skip'],
            failureSignature: null,
          },
        ],
      }),
    );
    expect(r.trigger).toBe('REPEATED_TAMPER');
    expect(r.rule).toBe('REPEATED_TAMPER');
  });

  test('ESCALATE with BUDGET_EXHAUSTED when the budget is reached and the work is not done', () => {
    const r = computeVerdict(
      input({ gates: [gate('tests', 'FAILED')], budgetExhausted: 'token budget reached: 120 of 100 tokens used' }),
    );
    expect(r.verdict).toBe('ESCALATE');
    expect(r.trigger).toBe('BUDGET_EXHAUSTED');
    expect(r.rule).toBe('BUDGET_EXHAUSTED');
    expect(r.reasons).toContain('token budget reached: 120 of 100 tokens used');
  });

  test('a finished PASS stands even when the budget was reached on the way', () => {
    expect(computeVerdict(input({ budgetExhausted: 'cost budget reached' }))).toMatchObject({
      verdict: 'PASS',
      rule: 'ALL_CLEAR',
    });
  });

  test.each(['CONTRADICTION', 'DESTRUCTIVE_OPERATION', 'IRREPRODUCIBLE_FAILURE'] as const)(
    'ESCALATE when the agent reports %s, even if everything passes',
    (kind) => {
      const r = computeVerdict(
        input({
          maker: {
            noChange: false,
            diffHash: 'd',
            cumulativeDiffEmpty: false,
            agentReport: { kind, reason: 'AC-1 and AC-2 exclude each other' },
          },
        }),
      );
      expect(r.verdict).toBe('ESCALATE');
      expect(r.trigger).toBe(`AGENT_${kind}`);
      expect(r.rule).toBe(`AGENT_${kind}`);
    },
  );

  test('the judge is deterministic', () => {
    const i = input({ review: { status: 'COMPLETED', findings: [finding({ severity: 'LOW' })], responseIds: [] } });
    expect(computeVerdict(i)).toEqual(computeVerdict(structuredClone(i)));
  });

  describe('ENVIRONMENT', () => {
    test('a gate that could not start escalates ENVIRONMENT instead of sending the maker back', () => {
      const tests = gate('tests', 'FAILED', {
        exitCode: 127,
        environmentProblem: '`npm test` exited with code 127, a command it needs was not found: sh: 1: jest: not found',
      });
      const r = computeVerdict(
        input({
          gates: [tests, gate('typecheck', 'NOT_RUN'), gate('lint', 'NOT_CONFIGURED'), gate('build', 'NOT_CONFIGURED')],
        }),
      );
      expect(r.verdict).toBe('ESCALATE');
      expect(r.trigger).toBe('ENVIRONMENT');
      expect(r.rule).toBe('ENVIRONMENT');
      expect(r.reasons[0]).toContain('jest: not found');
      expect(r.directives).toEqual([]);
    });

    test('a failed set-up of the verification checkout escalates ENVIRONMENT, first of all rules', () => {
      const notRun = [
        gate('tests', 'NOT_RUN'),
        gate('typecheck', 'NOT_CONFIGURED'),
        gate('lint', 'NOT_CONFIGURED'),
        gate('build', 'NOT_CONFIGURED'),
      ];
      const r = computeVerdict(
        input({
          gates: notRun,
          environmentProblem: 'set-up command `npm ci` failed: ETARGET',
          roundIteration: 3,
          maxIterations: 3,
        }),
      );
      expect(r.verdict).toBe('ESCALATE');
      expect(r.trigger).toBe('ENVIRONMENT');
      expect(r.reasons).toEqual(['environment problem: set-up command `npm ci` failed: ETARGET']);
      expect(r.rule).toBe('ENVIRONMENT');
    });

    test('an ordinary gate failure still iterates', () => {
      const r = computeVerdict(input({ gates: [gate('tests', 'FAILED', { environmentProblem: null })] }));
      expect(r.verdict).toBe('ITERATE');
      expect(r.rule).toBe('GATES_FAILED');
    });

    test('environmentReport: the shape recordEscalation needs before any verdict', () => {
      const r = environmentReport('`corepack pnpm install` could not start', 0, 3);
      expect(r).toMatchObject({
        verdict: 'ESCALATE',
        trigger: 'ENVIRONMENT',
        rule: 'ENVIRONMENT',
        roundIteration: 0,
        gateAudit: [],
        directives: [],
      });
    });
  });
});
