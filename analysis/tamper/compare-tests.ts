import { checksThrow, narrowerException, strengthOf } from './assertion-strength';
import { assertionKey, OUTSIDE_TESTS, type Assertion, type SyntaxInventory, type TestCase } from './test-inventory';

// Which tests of a file check less at the checkpoint than at base, and how. Tests are matched by name
// (so moving one within its file is no change), assertions within a test by what they check (so adding
// assertions or setup, reformatting, or renaming variables is no change).

export type Weakening =
  | { kind: 'test removed'; test: TestCase }
  | { kind: 'assertion removed'; before: Assertion }
  | {
      kind:
        'assertion weakened' | 'expected value changed' | 'assertion made unreachable' | 'assertion failure swallowed';
      before: Assertion;
      after: Assertion;
    }
  /** A test that expected no exception now passes when its code throws: JUnit 4's @Test(expected = …) added. */
  | { kind: 'exception now expected'; after: Assertion };

export interface PlacedTest {
  file: string;
  test: TestCase;
}

export interface WeakenedTest {
  name: string;
  /** Where the test is at the checkpoint; null when it is gone. */
  now: PlacedTest | null;
  weakenings: Weakening[];
}

/** A test new in another changed test file, by name: where one missing from its own file may have moved. */
export type MovedTest = (name: string) => PlacedTest | undefined;

/** Checks that make the whole test pass when its code throws (jvm-test-inventory.ts). */
const WHOLE_TEST_THROWS = new Set(['expected', 'expectException']);

export function weakenedTests(
  file: string,
  before: SyntaxInventory,
  after: SyntaxInventory,
  movedTo: MovedTest,
): WeakenedTest[] {
  const remaining = [...after.tests];
  const baseNames = new Set(before.tests.map((t) => t.name));
  const added = after.tests.filter((t) => !baseNames.has(t.name));
  const weakened: WeakenedTest[] = [];
  for (const test of before.tests) {
    const same = take(remaining, (t) => t.name === test.name);
    const now = same ? { file, test: same } : (movedTo(test.name) ?? renamed(test, added, file));
    // Assertions outside tests have no test to lose; they are compared with whatever is left there.
    if (!now && !test.name.endsWith(OUTSIDE_TESTS)) {
      weakened.push({ name: test.name, now: null, weakenings: [{ kind: 'test removed', test }] });
      continue;
    }
    const weakenings = compareAssertions(test.assertions, now?.test.assertions ?? []);
    const expects = now?.test.assertions.find((a) => WHOLE_TEST_THROWS.has(a.matcher));
    if (expects && !test.assertions.some((a) => WHOLE_TEST_THROWS.has(a.matcher)))
      weakenings.unshift({ kind: 'exception now expected', after: expects });
    if (weakenings.length) weakened.push({ name: test.name, now: now ?? null, weakenings });
  }
  return weakened;
}

/** A renamed test: a new one holding every assertion the old one had, unchanged. */
function renamed(test: TestCase, added: TestCase[], file: string): PlacedTest | undefined {
  if (!test.assertions.length) return undefined;
  const found = take(added, (candidate) => {
    const keys = candidate.assertions.map(assertionKey);
    return test.assertions.every((a) => take(keys, (k) => k === assertionKey(a)) !== undefined);
  });
  return found && { file, test: found };
}

/**
 * Pairs each base assertion with its checkpoint counterpart: unchanged first, then one checking the
 * same actual value, then one with the same matcher and expected value (its actual was renamed or set
 * up differently), then any left in order. Base assertions that never ran count for nothing.
 */
function compareAssertions(before: Assertion[], after: Assertion[]): Weakening[] {
  const unmatched = [...after];
  const partners = new Map<Assertion, Assertion>();
  const sameState = (b: Assertion, a: Assertion) => !b.unreachable === !a.unreachable && !b.swallowed === !a.swallowed;
  const passes: ((b: Assertion, a: Assertion) => boolean)[] = [
    (b, a) => assertionKey(b) === assertionKey(a) && sameState(b, a),
    (b, a) => assertionKey(b) === assertionKey(a),
    (b, a) => b.actual === a.actual,
    (b, a) => b.matcher === a.matcher && b.expected === a.expected,
    () => true,
  ];
  for (const matches of passes) {
    for (const b of before) {
      if (partners.has(b)) continue;
      const a = take(unmatched, (candidate) => matches(b, candidate));
      if (a) partners.set(b, a);
    }
  }
  return before.flatMap((b) => (b.unreachable ? [] : judge(b, partners.get(b))));
}

function judge(before: Assertion, after: Assertion | undefined): Weakening[] {
  if (!after) return [{ kind: 'assertion removed', before }];
  if (after.unreachable) return [{ kind: 'assertion made unreachable', before, after }];
  if (after.swallowed && !before.swallowed) return [{ kind: 'assertion failure swallowed', before, after }];
  if (strengthOf(after) < strengthOf(before)) return [{ kind: 'assertion weakened', before, after }];
  // An expected exception narrowed to a subclass checks more; any other change of class widens or moves it.
  if (after.matcher === before.matcher && after.expected !== before.expected) {
    if (checksThrow(after) && narrowerException(after.expected, before.expected)) return [];
    return [{ kind: 'expected value changed', before, after }];
  }
  return [];
}

/** Removes and returns the first item matching. */
function take<T>(items: T[], matches: (item: T) => boolean): T | undefined {
  const i = items.findIndex(matches);
  return i < 0 ? undefined : items.splice(i, 1)[0];
}
