import type { AcceptanceCriterion, GoalContract } from '../../domain/contract';
import type { GateName } from '../../domain/gates';
import type { TestReport } from '../test-reports';

/**
 * AC ids a passing gate proves: ACs verified by this gate, and — for the tests gate — ACs whose test
 * name is among the tests the runner reported as passed (exactly, or as the last part of a qualified
 * name such as `file > describe > name` or `file::test_name`).
 */
export function provenBy(gate: GateName, report: TestReport | null, criteria: AcceptanceCriterion[]): string[] {
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

/** Whether a reported test name is the wanted one, alone or as the last part of a qualified name. */
export function namesTest(reported: string, wanted: string): boolean {
  return reported === wanted || NAME_SEPARATORS.some((sep) => reported.endsWith(`${sep}${wanted}`));
}

/** The test names the contract's acceptance criteria are proven by. */
export function acceptanceTestNames(contract: Pick<GoalContract, 'acceptanceCriteria'>): string[] {
  return contract.acceptanceCriteria.flatMap((ac) => (ac.verification.type === 'test' ? [ac.verification.name] : []));
}

/** A test's own name: the last part of a qualified one (`file > describe > name`, `file::name`, `pkg/TestName`), without parameters. */
export function testTitle(name: string): string {
  return name
    .split(/ > | › |::|\//)
    .pop()!
    .replace(/\[.*\]$/, '')
    .trim();
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
