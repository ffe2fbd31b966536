import { goalContractSchema } from '../../domain/contract';
import { buildMakerPrompt, WORK_SECTION_BUDGET_CHARS } from '../../domain/maker-prompt';

const contract = goalContractSchema.parse({
  objective: 'Make sum() add.',
  outcome: 'Callers get sums.',
  acceptanceCriteria: [
    { id: 'AC-1', statement: 'sum adds', verification: { type: 'test', name: 'sum adds two numbers' } },
  ],
  constraints: ['Human guidance: use BigInt'],
  scope: ['src/**'],
});
const frozen = { version: 2, hash: 'abc123', contract };
const iteration = { roundIteration: 2, maxIterations: 3 };
const finding = {
  findingId: 'COR-001',
  severity: 'BLOCKER',
  title: 'loses precision',
  location: { file: 'src/sum.js', startLine: 1, endLine: 2 },
  evidence: 'sum(2**53, 1) is wrong',
  concreteAlternativeDiff: '- a + b\n+ BigInt(a) + BigInt(b)',
};

describe('buildMakerPrompt', () => {
  test('carries the frozen contract, the numbered directives and the open findings with their suggested change', () => {
    const prompt = buildMakerPrompt(
      frozen,
      { directives: ['1. Resolve COR-001 (BLOCKER, src/sum.js:1-2): loses precision.'], openFindings: [finding] },
      iteration,
    );
    expect(prompt).toContain('# Task (contract v2, hash abc123)');
    expect(prompt).toContain('- AC-1: sum adds (proven by a passing test named "sum adds two numbers")');
    expect(prompt).toContain('- Human guidance: use BigInt');
    expect(prompt).toContain('- src/**');
    expect(prompt).toContain('1. Resolve COR-001');
    expect(prompt).toContain('### COR-001 (BLOCKER) src/sum.js:1-2: loses precision');
    expect(prompt).toContain('+ BigInt(a) + BigInt(b)');
    expect(prompt).toContain('LOOP_REPORT_FILE');
  });

  test('stays bounded however many directives there are, and never cuts the contract', () => {
    const directives = Array.from(
      { length: 500 },
      (_, i) => `${i + 1}. Fix the failing tests gate: ${'x'.repeat(200)}`,
    );
    const prompt = buildMakerPrompt(frozen, { directives, openFindings: [finding] }, iteration);
    expect(prompt.length).toBeLessThan(WORK_SECTION_BUDGET_CHARS + 3000);
    expect(prompt).toMatch(/\(\d+ more item\(s\) left out to keep this prompt bounded/);
    expect(prompt).toContain('1. Fix the failing tests gate');
    expect(prompt).toContain('- AC-1: sum adds');
    expect(prompt).toContain('Objective: Make sum() add.');
  });

  test('the first attempt has no directives', () => {
    expect(
      buildMakerPrompt(frozen, { directives: [], openFindings: [] }, { roundIteration: 1, maxIterations: 3 }),
    ).toContain('First attempt');
  });
});
