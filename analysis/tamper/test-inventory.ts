// What a test file checks, read from its syntax tree (JS/TS by the TypeScript compiler, Python by its
// own `ast`, Java and Kotlin from their tokens): every test with its assertions, and the mocks the file installs. Comparing the base and
// checkpoint inventories of a file says which checks a maker removed or loosened.

/** A statement, quoted: where an assertion stops running, or where its failure is caught. */
export interface Quoted {
  line: number;
  text: string;
}

export interface Assertion {
  line: number;
  /** The assertion as written (whitespace collapsed), for evidence. */
  text: string;
  /**
   * What is checked: expect's argument, assert's first argument, a comparison's left side. Canonical:
   * formatting-free, and single-assignment locals replaced by their values, so renames compare equal.
   */
  actual: string;
  /** `not.toBe`, `resolves.toEqual`, `assert.strictEqual`; Python `==`, `is not`, `assertEqual`, `truthy`. */
  matcher: string;
  /** Canonical expected argument(s); empty when the matcher takes none. */
  expected: string;
  /** The actual is a literal (`expect(1).toBe(1)`, `assert True`): it checks nothing about the code. */
  literal: boolean;
  /** The earlier exit (return, constant-false if, pytest.skip) that keeps this assertion from running. */
  unreachable: Quoted | null;
  /** The try/catch (or suppress) that catches this assertion's failure without re-raising it. */
  swallowed: Quoted | null;
}

export interface TestCase {
  /** Describe/class path and title joined with ` > `, the test's identity within its file. */
  name: string;
  line: number;
  assertions: Assertion[];
}

/** A mock a test file installs. */
export interface MockCall {
  line: number;
  text: string;
  /** The module path it names: `../src/sum` (JS specifier), `app.pricing.total`, `.pricing` (Python, dotted). */
  target: string;
  /** The function or attribute replaced (`jest.spyOn(m, 'total')`, `patch.object(m, 'total')`); empty for a whole path. */
  member: string;
}

export interface SyntaxInventory {
  tests: TestCase[];
  mocks: MockCall[];
}

/** Assertions outside any test (helpers, hooks) are kept under this name, so removing them counts too. */
export const OUTSIDE_TESTS = '(outside tests)';

/** The identity of an assertion when nothing about it changed. */
export function assertionKey(a: Assertion): string {
  return `${a.actual}\u0000${a.matcher}\u0000${a.expected}`;
}
