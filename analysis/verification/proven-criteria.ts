import type { AcceptanceCriterion, GoalContract } from '../../domain/contract';
import type { GateName } from '../../domain/gates';
import type { TestReport } from '../test-reports';
import type { BaseInventory } from './base-inventory';

/**
 * AC ids a passing gate proves: ACs verified by this gate, and — for the tests gate — ACs whose test
 * is among the tests the runner reported as passed. A test name that picks out one test of the base
 * inventory is proven by that test alone (`storedName` turns a reported name into its stored form, as
 * the inventory holds it); one naming several base tests proves nothing until the contract says which;
 * one naming none (a test the maker adds) is proven by a passed test of that name, exactly or as the
 * last part of a qualified name such as `file > describe > name` or `file::test_name`.
 */
export function provenBy(
  gate: GateName,
  report: TestReport | null,
  criteria: AcceptanceCriterion[],
  base: BaseInventory | null = null,
  storedName: (name: string) => string = (name) => name,
): string[] {
  const passed = report?.passedTests ?? [];
  return criteria
    .filter((ac) => {
      const v = ac.verification;
      if (v.type === 'gate') return v.gate === gate;
      if (v.type !== 'test' || gate !== 'tests') return false;
      const candidates = baseCandidates(v.name, base);
      if (candidates.length > 1) return false;
      if (candidates.length === 1) return passed.some((name) => storedName(name) === candidates[0]);
      return passed.some((name) => namesTest(name, v.name));
    })
    .map((ac) => ac.id);
}

/** The base tests `wanted` names: one, several (ambiguous), or none (a test the maker is to add). */
export function baseCandidates(wanted: string, base: BaseInventory | null): string[] {
  return base ? [...new Set(base.names.filter((name) => namesTest(name, wanted)))] : [];
}

const NAME_SEPARATORS = [' > ', ' › ', '::', '/'];

/** Whether a reported test name is the wanted one, alone or as the last part of a qualified name. */
export function namesTest(reported: string, wanted: string): boolean {
  return (
    reported === wanted ||
    NAME_SEPARATORS.some((sep) => reported.endsWith(`${sep}${wanted}`)) ||
    namesJvmTest(reported, wanted)
  );
}

const JVM_TEST_NAME = /^([\w$]+(?:\.[\w$]+)*) > (.+)$/;

/**
 * A JVM test, reported as `com.example.CalcTest > adds` (analysis/test-reports/junit.ts), is also named
 * the ways Java people write it: `CalcTest#adds` (surefire's -Dtest), `CalcTest.adds` (its failure summary),
 * `CalcTest > adds`, with the class qualified as far as wanted.
 */
function namesJvmTest(reported: string, wanted: string): boolean {
  const match = JVM_TEST_NAME.exec(reported);
  if (!match) return false;
  const [, cls = '', method = ''] = match;
  return ['#', '.', ' > '].some((sep) => {
    if (!wanted.endsWith(`${sep}${method}`)) return false;
    const named = wanted.slice(0, -(sep.length + method.length));
    return named === cls || cls.endsWith(`.${named}`);
  });
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
