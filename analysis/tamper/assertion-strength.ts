import type { Assertion } from './test-inventory';

// How much an assertion checks, so that swapping `toBe(180)` for `toBeDefined()` (or `== 180` for
// `is not None`) reads as weaker. One order across frameworks and languages:
//   4 an exact value  >  3 part of a value (a pattern, range, member, type)  >  2 that something
//   happened (threw, was called)  >  1 that a value exists, is truthy, or differs from one value  >
//   0 nothing (no matcher, or a literal checked instead of the code).

export type Strength = 0 | 1 | 2 | 3 | 4;

export const STRENGTH_MEANING: Record<Strength, string> = {
  0: 'checks nothing',
  1: 'checks only that a value exists, is truthy or differs',
  2: 'checks only that something happened',
  3: 'checks part of a value',
  4: 'checks an exact value',
};

/** By the matcher's last name; any other matcher counts as checking part of a value. */
const MATCHERS = new Map<string, Strength>(
  Object.entries({
    // jest / vitest
    toBe: 4,
    toEqual: 4,
    toStrictEqual: 4,
    toBeNull: 4,
    toBeUndefined: 4,
    toBeNaN: 4,
    toHaveLength: 4,
    toBeCloseTo: 4,
    toHaveBeenCalledWith: 4,
    toHaveBeenLastCalledWith: 4,
    toHaveBeenNthCalledWith: 4,
    toHaveBeenCalledTimes: 4,
    toHaveReturnedWith: 4,
    toHaveLastReturnedWith: 4,
    toHaveNthReturnedWith: 4,
    toHaveReturnedTimes: 4,
    toMatchSnapshot: 4,
    toMatchInlineSnapshot: 4,
    toThrowErrorMatchingSnapshot: 4,
    toThrowErrorMatchingInlineSnapshot: 4,
    toHaveBeenCalled: 2,
    toHaveReturned: 2,
    toBeDefined: 1,
    toBeTruthy: 1,
    toBeFalsy: 1,
    // chai
    equal: 4,
    equals: 4,
    eql: 4,
    lengthOf: 4,
    true: 4,
    false: 4,
    null: 4,
    undefined: 4,
    NaN: 4,
    empty: 4,
    ok: 1,
    exist: 1,
    // node:assert (assert.equal, assert.ok are covered above)
    assert: 1,
    strictEqual: 4,
    deepStrictEqual: 4,
    deepEqual: 4,
    ifError: 2,
    doesNotThrow: 1,
    doesNotReject: 1,
    doesNotMatch: 1,
    // Python: assert statements, unittest, unittest.mock
    '==': 4,
    is: 4,
    truthy: 1,
    assertEqual: 4,
    assertEquals: 4,
    assertDictEqual: 4,
    assertListEqual: 4,
    assertTupleEqual: 4,
    assertSetEqual: 4,
    assertSequenceEqual: 4,
    assertMultiLineEqual: 4,
    assertCountEqual: 4,
    assertIs: 4,
    assertIsNone: 4,
    assertAlmostEqual: 4,
    assertTrue: 1,
    assertFalse: 1,
    assert_called_with: 4,
    assert_called_once_with: 4,
    assert_any_call: 4,
    assert_has_calls: 4,
    assert_not_called: 4,
    assert_awaited_with: 4,
    assert_awaited_once_with: 4,
    assert_called: 2,
    assert_called_once: 2,
    assert_awaited: 2,
    assert_awaited_once: 2,
  }) as [string, Strength][],
);

/** Matchers checking a throw: exact when told which error, else only that something was thrown. */
const THROWS = new Set([
  'toThrow',
  'toThrowError',
  'throw',
  'throws',
  'rejects',
  'raises',
  'warns',
  'assertRaises',
  'assertRaisesRegex',
  'assertWarns',
  'assertWarnsRegex',
]);
const ANY_ERROR = new Set(['', 'Error', 'Exception', 'BaseException']);
const ANY_OBJECT = new Set(['Object', 'object']);

export function strengthOf(a: Assertion): Strength {
  if (a.literal || !a.matcher) return 0;
  const names = a.matcher.split('.');
  const last = names.at(-1)!;
  const negated =
    names.includes('not') || /^(?:not|assertNot|assertIsNot)/.test(last) || last === '!=' || last === 'is not';
  // expect.anything(), expect.any(Number), mock.ANY and `instanceof Object` accept (nearly) every value.
  const acceptsAnything =
    a.expected.includes('expect . any') ||
    /(?:^|\.)ANY$/.test(a.expected) ||
    ((last === 'toBeInstanceOf' || last === 'isinstance') && ANY_OBJECT.has(a.expected));
  if (negated || acceptsAnything) return 1;
  if (THROWS.has(last)) return ANY_ERROR.has(a.expected) ? 2 : 4;
  return MATCHERS.get(last) ?? 3;
}
