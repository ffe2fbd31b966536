import { JVM_THROW_CALLS } from './jvm-throw-calls';
import type { Assertion } from './test-inventory';

// How much an assertion checks, so that swapping `toBe(180)` for `toBeDefined()` (or `== 180` for
// `is not None`, `assertEquals(180, x)` for `assertNotNull(x)`) reads as weaker. One order across frameworks and languages:
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
    // JUnit, TestNG, kotlin.test (assertEquals, assertTrue, assertFalse are covered above)
    assertSame: 4,
    assertNull: 4,
    assertArrayEquals: 4,
    assertIterableEquals: 4,
    assertLinesMatch: 4,
    assertContentEquals: 4,
    assertEqualsNoOrder: 4,
    assertEqualsDeep: 4,
    assertDoesNotThrow: 1,
    assertAll: 2,
    fail: 2,
    // AssertJ and Truth: assertThat(x).isEqualTo(…); assertThat(x) alone checks nothing
    assertThat: 0,
    isEqualTo: 4,
    isSameAs: 4,
    isNull: 4,
    isTrue: 4,
    isFalse: 4,
    isEmpty: 4,
    isZero: 4,
    isOne: 4,
    hasSize: 4,
    containsExactly: 4,
    containsExactlyInAnyOrder: 4,
    containsExactlyElementsOf: 4,
    containsOnly: 4,
    isEqualByComparingTo: 4,
    isEqualToComparingFieldByField: 4,
    isEqualToIgnoringCase: 4,
    isEqualToIgnoringWhitespace: 4,
    isCloseTo: 4,
    hasMessage: 4,
    hasValue: 4,
    isPresent: 1,
    // Hamcrest: assertThat(x, is(…)), equalTo(…)
    equalTo: 4,
    nullValue: 4,
    sameInstance: 4,
    closeTo: 4,
    // Mockito and MockK: verify(mock).charge(200); only any() arguments check only that the call happened
    verify: 4,
    verifyCalled: 2,
    verifyNoInteractions: 4,
    verifyNoMoreInteractions: 4,
    verifyZeroInteractions: 4,
    confirmVerified: 4,
    // Kotest
    shouldBe: 4,
    shouldBeNull: 4,
    shouldBeTrue: 4,
    shouldBeFalse: 4,
    shouldBeEmpty: 4,
    shouldHaveSize: 4,
    shouldContainExactly: 4,
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
  // JUnit, TestNG, kotlin.test, Kotest, AssertJ; `expected` is JUnit 4's @Test(expected = X.class) and TestNG's
  // expectedExceptions, `expectException` JUnit 4's ExpectedException rule (thrown.expect(X.class))
  ...JVM_THROW_CALLS,
  'expected',
  'expectException',
  'assertThatThrownBy',
  'assertThatExceptionOfType',
  'isInstanceOf',
  'isExactlyInstanceOf',
  'hasCauseInstanceOf',
  'hasRootCauseInstanceOf',
]);
/** Expecting one of these accepts (nearly) any failure: Java's and Kotlin's roots of the exception tree too. */
const ANY_ERROR = new Set(['', 'Error', 'Exception', 'BaseException', 'Throwable', 'RuntimeException']);
const ANY_OBJECT = new Set(['Object', 'object', 'Any']);
/** Matchers checking a value's type, which `Object` (or Kotlin's `Any`) always satisfies. */
const INSTANCE_OF = new Set([
  'toBeInstanceOf',
  'isinstance',
  'isInstanceOf',
  'instanceOf',
  'isA',
  'assertInstanceOf',
  'assertIs',
  'shouldBeInstanceOf',
]);

/**
 * The JDK's common exceptions, each with its parent: an expected exception changed to one of its
 * subclasses (IllegalArgumentException → NumberFormatException) checks more, not less. Any other
 * change of class (to a parent, a sibling, or a class this table does not know) counts as weakening:
 * the test would pass on a failure it used to reject.
 */
const EXCEPTION_PARENT: Record<string, string> = {
  Exception: 'Throwable',
  Error: 'Throwable',
  RuntimeException: 'Exception',
  IllegalArgumentException: 'RuntimeException',
  NumberFormatException: 'IllegalArgumentException',
  IllegalStateException: 'RuntimeException',
  NullPointerException: 'RuntimeException',
  UnsupportedOperationException: 'RuntimeException',
  ArithmeticException: 'RuntimeException',
  ClassCastException: 'RuntimeException',
  IndexOutOfBoundsException: 'RuntimeException',
  ArrayIndexOutOfBoundsException: 'IndexOutOfBoundsException',
  StringIndexOutOfBoundsException: 'IndexOutOfBoundsException',
  NoSuchElementException: 'RuntimeException',
  InputMismatchException: 'NoSuchElementException',
  ConcurrentModificationException: 'RuntimeException',
  DateTimeException: 'RuntimeException',
  DateTimeParseException: 'DateTimeException',
  UncheckedIOException: 'RuntimeException',
  IOException: 'Exception',
  FileNotFoundException: 'IOException',
  FileSystemException: 'IOException',
  NoSuchFileException: 'FileSystemException',
  InterruptedException: 'Exception',
  TimeoutException: 'Exception',
  ExecutionException: 'Exception',
  ReflectiveOperationException: 'Exception',
  ClassNotFoundException: 'ReflectiveOperationException',
  AssertionError: 'Error',
};

/** Whether exception class `after` is a subclass of `before` (by simple name, through EXCEPTION_PARENT). */
export function narrowerException(after: string, before: string): boolean {
  const simple = (name: string) => name.split('.').pop()!;
  const wanted = simple(before);
  for (let at = EXCEPTION_PARENT[simple(after)]; at; at = EXCEPTION_PARENT[at]) if (at === wanted) return true;
  return false;
}

/** Whether an assertion checks a thrown exception, so its expected value is an exception class. */
export function checksThrow(a: Assertion): boolean {
  return THROWS.has(a.matcher.split('.').at(-1)!);
}

export function strengthOf(a: Assertion): Strength {
  if (a.literal || !a.matcher) return 0;
  const names = a.matcher.split('.');
  const last = names.at(-1)!;
  const negated =
    names.includes('not') ||
    /^(?:not|assertNot|assertIsNot|isNot|doesNot|shouldNot)/.test(last) ||
    last === '!=' ||
    last === 'is not';
  // expect.anything(), expect.any(Number), mock.ANY, Hamcrest's anything() and `instanceof Object` accept
  // (nearly) every value.
  const acceptsAnything =
    a.expected.includes('expect . any') ||
    /(?:^|\.)ANY$/.test(a.expected) ||
    last === 'anything' ||
    (INSTANCE_OF.has(last) && ANY_OBJECT.has(a.expected));
  if (negated || acceptsAnything) return 1;
  if (THROWS.has(last)) return ANY_ERROR.has(a.expected.split('.').pop()!) ? 2 : 4;
  return MATCHERS.get(last) ?? 3;
}
