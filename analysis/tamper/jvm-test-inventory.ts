import { JVM_THROW_CALLS } from './jvm-throw-calls';
import { lexJvm, matchBrackets, type Token } from './jvm-lexer';
import {
  OUTSIDE_TESTS,
  type Assertion,
  type MockCall,
  type Quoted,
  type SyntaxInventory,
  type TestCase,
} from './test-inventory';

// Java and Kotlin test files read from their tokens (jvm-lexer.ts says why not a parser): every test
// method — JUnit 4 and 5 (@Test, @ParameterizedTest, @RepeatedTest, …), TestNG, kotlin.test, JUnit 3's
// `testX()` — with its assertions, and the Mockito and MockK mocks the file installs. Assertions are
// JUnit's and kotlin.test's assert…(…) and fail(…), AssertJ and Truth chains (`assertThat(x).isEqualTo(1)`,
// one assertion per checking call), Hamcrest's `assertThat(x, is(1))`, thrown-exception checks
// (assertThrows, assertFailsWith, assertThatThrownBy, @Test(expected = …), JUnit 4's ExpectedException),
// Mockito's and MockK's verify, Kotest's `x shouldBe y`, and Java's `assert` statement. A test's
// timeout and the rows of its parameter source (@CsvSource, @ValueSource) count as checks too.

export function parsesAsJvm(file: string): boolean {
  return /\.(?:java|kt)$/i.test(file);
}

export function jvmInventory(file: string, text: string): SyntaxInventory {
  const dialect = /\.kt$/i.test(file) ? 'kotlin' : 'java';
  return new JvmTestReader(text, dialect).read();
}

/** Inclusive token index range; `to < from` is empty. */
interface Range {
  from: number;
  to: number;
}

interface Call {
  head: number;
  name: string;
  /** `Assertions` in `Assertions.assertEquals(…)`, `softly` in `softly.assertThat(…)`. */
  qualifier: string;
  typeArg: Range | null;
  args: Range[];
  /** A Kotlin trailing lambda: `assertFailsWith<X> { … }`, `verify { … }`. */
  lambda: Range | null;
  chain: { name: string; args: Range[]; lambda: Range | null; end: number }[];
  end: number;
}

interface Found {
  actual: string;
  matcher: string;
  expected: string;
  literal: boolean;
  from: number;
  to: number;
}

interface Method {
  name: number;
  /** Token range of the body: a block with its braces, or a Kotlin expression body. */
  body: Range;
  annotations: Annotation[];
}

interface Annotation {
  name: string;
  at: number;
  args: Range[];
  end: number;
}

interface Declaration {
  at: number;
  value: Range;
}

const TEST_ANNOTATIONS = new Set([
  'Test',
  'ParameterizedTest',
  'RepeatedTest',
  'TestFactory',
  'TestTemplate',
  'Property',
  'Example',
]);
const EQUALITY = new Set([
  'assertEquals',
  'assertNotEquals',
  'assertSame',
  'assertNotSame',
  'assertArrayEquals',
  'assertIterableEquals',
  'assertLinesMatch',
  'assertContentEquals',
  'assertEqualsNoOrder',
  'assertEqualsDeep',
]);
const ONE_VALUE = new Set(['assertNull', 'assertNotNull']);
const THROWS = new Set(JVM_THROW_CALLS);
/** AssertJ's heads for thrown exceptions; the rest name the class: assertThatIllegalArgumentException(). */
const THROWN_HEADS = new Set(['assertThatThrownBy', 'assertThatExceptionOfType']);
const VERIFY_BLOCKS = new Set([
  'verify',
  'coVerify',
  'verifyAll',
  'verifyOrder',
  'verifySequence',
  'coVerifyAll',
  'coVerifyOrder',
  'coVerifySequence',
]);
const NO_INTERACTIONS = new Set([
  'verifyNoInteractions',
  'verifyNoMoreInteractions',
  'verifyZeroInteractions',
  'confirmVerified',
]);
/** Calls in an AssertJ/Truth chain that describe or configure the check, checking nothing themselves. */
const DESCRIBING = new Set([
  'as',
  'describedAs',
  'withFailMessage',
  'overridingErrorMessage',
  'withRepresentation',
  'usingComparator',
  'usingElementComparator',
  'usingRecursiveComparison',
  'usingDefaultComparator',
  'usingComparatorForType',
  'usingRecursiveFieldByFieldElementComparator',
  'withThreadDumpOnError',
  'inHexadecimal',
  'inBinary',
  'info',
  'ignoringFields',
  'ignoringCase',
]);
/** Calls in a chain that move to another value: what follows checks that one. */
const NAVIGATION = new Set([
  'extracting',
  'extractingResultOf',
  'flatExtracting',
  'element',
  'first',
  'last',
  'singleElement',
  'asString',
  'asList',
  'asInstanceOf',
  'rootCause',
  'cause',
  'message',
  'getCause',
  'havingCause',
  'havingRootCause',
  'that',
  'isThrownBy',
]);
/** Mockito and MockK argument matchers accepting any value: a verify with only these checks only that a call happened. */
const ANY_ARGUMENT = /^(?:any\w*|isA|notNull|isNotNull|allAny)$/;
/** Exceptions a catch may take an assertion failure as (AssertionError and its subclasses, and their parents). */
const CATCHES_ASSERTIONS = new Set([
  'Throwable',
  'Error',
  'AssertionError',
  'AssertionFailedError',
  'ComparisonFailure',
  'MultipleFailuresError',
]);
const MOCK_CALLS = new Set([
  'mock',
  'spy',
  'mockStatic',
  'mockConstruction',
  'mockk',
  'spyk',
  'mockkObject',
  'mockkStatic',
  'mockkConstructor',
]);
const MOCK_ANNOTATIONS = new Set([
  'Mock',
  'Spy',
  'MockBean',
  'SpyBean',
  'MockitoBean',
  'MockitoSpyBean',
  'MockK',
  'RelaxedMockK',
  'SpyK',
  'MockkBean',
  'SpykBean',
]);
const MODIFIERS = new Set([
  'public',
  'protected',
  'private',
  'internal',
  'static',
  'final',
  'abstract',
  'open',
  'override',
  'suspend',
  'synchronized',
  'default',
  'fun',
  'inline',
  'lateinit',
  'var',
  'val',
  'transient',
  'volatile',
]);
/** Words before a call that start a statement or expression, so the call is no method declaration. */
const EXPRESSION_KEYWORDS = new Set(['return', 'else', 'throw', 'do', 'try', 'yield', 'in', 'is', 'assert', 'when']);
const CONTINUES_LINE = new Set([
  '.',
  '?.',
  '?:',
  '=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '&&',
  '||',
  '==',
  '!=',
  '===',
  '!==',
  '<',
  '>',
  '<=',
  '>=',
  ',',
  '(',
  '[',
  '->',
  '::',
]);

class JvmTestReader {
  private readonly tokens: Token[];
  private readonly pairs: Map<number, number>;
  /** Opener index of each closing bracket. */
  private readonly openers = new Map<number, number>();
  /** The innermost `{` around each token (-1 at the top level). */
  private readonly enclosing: number[] = [];
  /** Class, interface, enum, record and object bodies by their `{`, with the type's name. */
  private readonly classes = new Map<number, string>();
  private readonly declarations = new Map<number, Map<string, Declaration>>();
  private readonly reassigned = new Set<string>();
  /** JUnit 4 and JUnit 3 put an assertion's message first; TestNG puts the actual value first. */
  private readonly messageFirst: boolean;
  private readonly actualFirst: boolean;

  constructor(
    private readonly text: string,
    private readonly dialect: 'java' | 'kotlin',
  ) {
    this.tokens = lexJvm(text, dialect).tokens;
    this.pairs = matchBrackets(this.tokens);
    for (const [open, close] of this.pairs) this.openers.set(close, open);
    this.messageFirst = /^\s*import\s+(?:static\s+)?(?:org\.junit\.(?:Assert|Test)\b|junit\.framework\b)/m.test(text);
    this.actualFirst = /^\s*import\s+(?:static\s+)?org\.testng\b/m.test(text);
    this.scanStructure();
    this.scanDeclarations();
  }

  read(): SyntaxInventory {
    const methods = this.testMethods();
    const tests: TestCase[] = methods.map((m) => ({
      name: [...this.classPath(m.name), bare(this.tokens[m.name]!.text)].join(' > '),
      line: this.tokens[m.name]!.line,
      assertions: this.annotationChecks(m),
    }));
    const buckets = new Map<string, TestCase>();
    const swallowing = this.swallowingBlocks();
    for (const found of this.assertions()) {
      const index = methods.findIndex((m) => m.body.from <= found.from && found.from <= m.body.to);
      const flow = index >= 0 ? this.unreachable(methods[index]!, found.from) : null;
      const assertion: Assertion = {
        line: this.tokens[found.from]!.line,
        text: this.source({ from: found.from, to: found.to }),
        actual: found.actual,
        matcher: found.matcher,
        expected: found.expected,
        literal: found.literal,
        unreachable: flow,
        swallowed: swallowing.find((s) => s.range.from < found.from && found.from < s.range.to)?.quote ?? null,
      };
      if (index >= 0) tests[index]!.assertions.push(assertion);
      else {
        const name = [...this.classPath(found.from), OUTSIDE_TESTS].join(' > ');
        if (!buckets.has(name)) buckets.set(name, { name, line: assertion.line, assertions: [] });
        buckets.get(name)!.assertions.push(assertion);
      }
    }
    return { tests: [...tests, ...buckets.values()], mocks: this.mocks() };
  }

  // ---- structure ----

  private scanStructure(): void {
    const open: number[] = [];
    this.tokens.forEach((token, i) => {
      if (token.kind === 'symbol' && token.text === '}') {
        while (open.length && this.pairs.get(open.at(-1)!)! < i) open.pop();
        this.enclosing.push(open.at(-1) ?? -1);
        if (open.length && this.pairs.get(open.at(-1)!) === i) open.pop();
        return;
      }
      this.enclosing.push(open.at(-1) ?? -1);
      if (token.kind === 'symbol' && token.text === '{') {
        const name = this.typeDeclared(i);
        if (name !== null) this.classes.set(i, name);
        open.push(i);
      }
    });
  }

  /** The name of the class (interface, enum, record, object) whose body `{` at `brace` opens, else null. */
  private typeDeclared(brace: number): string | null {
    let fallback: string | null = null;
    for (let k = brace - 1; k >= 0 && brace - k < 200; k--) {
      const token = this.tokens[k]!;
      if (token.kind === 'symbol') {
        if (token.text === ';' || token.text === '{' || token.text === '}' || token.text === '=') return fallback;
        if (this.openers.has(k)) k = this.openers.get(k)!;
        continue;
      }
      if (token.kind !== 'word') continue;
      const prev = this.tokens[k - 1];
      const next = this.tokens[k + 1];
      if (prev && (prev.text === '.' || prev.text === '::')) continue;
      if (token.text === 'object' && prev?.text === 'companion')
        return next?.kind === 'word' ? bare(next.text) : 'Companion';
      if (['class', 'interface', 'object', 'record'].includes(token.text) && next?.kind === 'word')
        return bare(next.text);
      if (token.text === 'enum' && next?.kind === 'word' && next.text !== 'class') fallback = bare(next.text);
    }
    return fallback;
  }

  /** The names of the classes around token `at`, outermost first. */
  private classPath(at: number): string[] {
    const names: string[] = [];
    for (let brace = this.enclosing[at] ?? -1; brace >= 0; brace = this.enclosing[brace] ?? -1) {
      const name = this.classes.get(brace);
      if (name) names.unshift(name);
    }
    return names;
  }

  // ---- tests ----

  private testMethods(): Method[] {
    const methods = new Map<number, Method>();
    let annotated = false;
    for (let i = 0; i < this.tokens.length; i++) {
      if (this.tokens[i]!.text !== '@' || this.tokens[i + 1]?.kind !== 'word') continue;
      const annotation = this.annotationAt(i);
      if (!TEST_ANNOTATIONS.has(annotation.name.split('.').pop()!)) continue;
      annotated = true;
      const method = this.methodAfter(i);
      if (method && !methods.has(method.name)) methods.set(method.name, method);
    }
    // JUnit 3: `public void testTotal()` in a TestCase, with no annotation anywhere in the file.
    if (!annotated) {
      this.tokens.forEach((token, i) => {
        const name = this.tokens[i + 1];
        if (
          token.text === 'void' &&
          name?.kind === 'word' &&
          /^test/.test(name.text) &&
          this.tokens[i + 2]?.text === '('
        ) {
          const method = this.methodAfter(i);
          if (method) methods.set(method.name, method);
        }
      });
    }
    return [...methods.values()].sort((a, b) => a.name - b.name);
  }

  /** The method declared by the header that token `start` is in (its annotations, modifiers, types). */
  private methodAfter(start: number): Method | null {
    let name = -1;
    for (let j = start; j < this.tokens.length && j - start < 80; j++) {
      const token = this.tokens[j]!;
      if (token.text === '@') {
        j = this.annotationAt(j).end;
      } else if (token.kind === 'word' && this.tokens[j + 1]?.text === '(' && !MODIFIERS.has(token.text)) {
        name = j;
        break;
      } else if (token.text === '<') {
        j = this.angleEnd(j);
      } else if (token.kind !== 'word' && !['.', '?', '[', ']', '>', ','].includes(token.text)) return null;
    }
    if (name < 0) return null;
    const close = this.pairs.get(name + 1);
    if (close === undefined) return null;
    let k = close + 1;
    while (k < this.tokens.length && k - close < 40 && !['{', '=', ';', '}'].includes(this.tokens[k]!.text)) {
      k = this.openers.has(k) ? k + 1 : (this.pairs.get(k) ?? k) + 1;
    }
    const opener = this.tokens[k]?.text;
    let body: Range;
    if (opener === '{') body = { from: k, to: this.pairs.get(k) ?? this.tokens.length - 1 };
    else if (opener === '=' && this.dialect === 'kotlin') body = { from: k + 1, to: this.statementEnd(k + 1) };
    else return null;
    return { name, body, annotations: this.annotationsBefore(name) };
  }

  /** Every annotation in the declaration header that ends with the name at `name`. */
  private annotationsBefore(name: number): Annotation[] {
    let start = name;
    let functions = 0;
    for (let k = name - 1; k >= 0; k--) {
      const token = this.tokens[k]!;
      if (token.text === ')' || token.text === ']') {
        k = this.openers.get(k) ?? k;
        start = k;
        continue;
      }
      // Kotlin members need no `;`: the `fun` before this one's is another member's.
      if (token.text === ';' || token.text === '{' || token.text === '}' || (token.text === 'fun' && functions++))
        break;
      start = k;
    }
    const annotations: Annotation[] = [];
    for (let k = start; k < name; k++) {
      if (this.tokens[k]!.text === '@' && this.tokens[k + 1]?.kind === 'word') {
        const annotation = this.annotationAt(k);
        annotations.push(annotation);
        k = annotation.end;
      }
    }
    return annotations;
  }

  private annotationAt(at: number): Annotation {
    if (this.tokens[at + 1]?.kind !== 'word') return { name: '', at, args: [], end: at };
    let j = at + 1;
    const parts = [this.tokens[j]!.text];
    // Kotlin's use-site targets: @field:Mock, @file:Suppress
    while (
      (this.tokens[j + 1]?.text === '.' || this.tokens[j + 1]?.text === ':') &&
      this.tokens[j + 2]?.kind === 'word'
    ) {
      if (this.tokens[j + 1]!.text === ':') parts.length = 0;
      parts.push(this.tokens[j + 2]!.text);
      j += 2;
    }
    if (this.tokens[j + 1]?.text === '(') {
      const close = this.pairs.get(j + 1) ?? j + 1;
      return { name: parts.join('.'), at, args: this.splitArgs(j + 2, close - 1), end: close };
    }
    return { name: parts.join('.'), at, args: [], end: j };
  }

  /** Checks a test's annotations make: an expected exception, a timeout, its parameter rows. */
  private annotationChecks(method: Method): Assertion[] {
    const checks: Assertion[] = [];
    // What such a check is about is the annotation itself (`@Timeout`, `@Test expected`), so checks of
    // different annotations never pair up when several change.
    const add = (range: Range, actual: string, matcher: string, expected: string) =>
      checks.push({
        line: this.tokens[range.from]!.line,
        text: this.source(range),
        actual,
        matcher,
        expected,
        literal: false,
        unreachable: null,
        swallowed: null,
      });
    for (const annotation of method.annotations) {
      const simple = annotation.name.split('.').pop()!;
      const whole = { from: annotation.at, to: annotation.end };
      if (simple === 'Test') {
        for (const [key, value] of this.namedArgs(annotation.args)) {
          if (key === 'expected' || key === 'expectedExceptions')
            add(whole, '@Test expected', 'expected', this.classNames(value));
          else if (key === 'timeout' || key === 'timeOut')
            add(whole, '@Test timeout', 'timeout', this.canonical(value));
        }
      } else if (simple === 'Timeout') {
        add(whole, '@Timeout', 'timeout', annotation.args.map((a) => this.canonical(a)).join(' , '));
      } else if (/Source$/.test(simple) && simple !== 'MethodSource' && simple !== 'ArgumentsSource') {
        for (const row of this.parameterRows(annotation)) add(row.range, `@${simple}`, 'parameters', row.value);
      }
    }
    return checks;
  }

  /** `key = value` arguments; a lone value is `value`. */
  private namedArgs(args: Range[]): [string, Range][] {
    return args.map((arg) => {
      const [key, eq] = [this.tokens[arg.from], this.tokens[arg.from + 1]];
      return key?.kind === 'word' && eq?.text === '=' ? [key.text, { from: arg.from + 2, to: arg.to }] : ['value', arg];
    });
  }

  /** Each row of @CsvSource, @ValueSource and the like: array elements, or the lines of a text block. */
  private parameterRows(annotation: Annotation): { range: Range; value: string }[] {
    const rows: { range: Range; value: string }[] = [];
    for (const [key, value] of this.namedArgs(annotation.args)) {
      if (
        ![
          'value',
          'textBlock',
          'ints',
          'longs',
          'doubles',
          'floats',
          'shorts',
          'bytes',
          'chars',
          'booleans',
          'strings',
          'classes',
          'names',
        ].includes(key)
      )
        continue;
      const open = this.tokens[value.from]!;
      const elements =
        (open.text === '{' || open.text === '[') && this.pairs.get(value.from) === value.to
          ? this.splitArgs(value.from + 1, value.to - 1)
          : [value];
      for (const element of elements) {
        const token = this.tokens[element.from]!;
        if (element.from === element.to && token.kind === 'string' && token.text.startsWith('"""')) {
          for (const line of unquote(token.text).split('\n')) {
            const row = line.trim();
            if (row && !row.startsWith('#')) rows.push({ range: element, value: row });
          }
        } else rows.push({ range: element, value: this.canonical(element) });
      }
    }
    return rows;
  }

  // ---- assertions ----

  private assertions(): Found[] {
    const found: Found[] = [];
    for (let i = 0; i < this.tokens.length; i++) {
      const token = this.tokens[i]!;
      if (token.kind !== 'word') continue;
      if (this.dialect === 'java' && token.text === 'assert' && this.isStatementStart(i)) {
        found.push(...this.assertStatement(i));
        continue;
      }
      if (this.dialect === 'kotlin' && /^should(?!Throw)[A-Z]\w*$/.test(token.text)) {
        const infix = this.kotestMatcher(i);
        if (infix) found.push(infix);
        continue;
      }
      if (!isAssertionName(token.text)) continue;
      const qualifier = this.qualifierOf(i);
      if (qualifier === null) continue;
      const call = this.callAt(i, qualifier);
      if (call) found.push(...this.checksOf(call));
    }
    return found;
  }

  /** The qualifier before a call (`Assertions`, `softly`, '' for none), or null where `at` is no call: a declaration or a method of a value. */
  private qualifierOf(at: number): string | null {
    const prev = this.tokens[at - 1];
    if (!prev) return '';
    if (prev.text === '.' || prev.text === '?.') {
      let k = at - 1;
      const parts: string[] = [];
      while ((this.tokens[k]?.text === '.' || this.tokens[k]?.text === '?.') && this.tokens[k - 1]?.kind === 'word') {
        parts.unshift(this.tokens[k - 1]!.text);
        k -= 2;
      }
      const before = this.tokens[k];
      if (!parts.length || (before && (before.text === '.' || before.text === '?.' || this.openers.has(k))))
        return null;
      return parts.join('.');
    }
    if (prev.kind === 'word' && !EXPRESSION_KEYWORDS.has(prev.text)) return null;
    if (prev.text === '::' || prev.text === '@') return null;
    return '';
  }

  private callAt(head: number, qualifier: string): Call | null {
    let j = head + 1;
    let typeArg: Range | null = null;
    if (this.tokens[j]?.text === '<') {
      const close = this.angleEnd(j);
      typeArg = { from: j + 1, to: close - 1 };
      j = close + 1;
    }
    let args: Range[] | null = null;
    let lambda: Range | null = null;
    if (this.tokens[j]?.text === '(') {
      const close = this.pairs.get(j) ?? j;
      args = this.splitArgs(j + 1, close - 1);
      j = close + 1;
    }
    if (this.dialect === 'kotlin' && this.tokens[j]?.text === '{') {
      const close = this.pairs.get(j) ?? j;
      lambda = { from: j, to: close };
      j = close + 1;
    }
    if (!args && !lambda) return null;
    const chain: Call['chain'] = [];
    while (
      (this.tokens[j]?.text === '.' || this.tokens[j]?.text === '?.') &&
      this.tokens[j + 1]?.kind === 'word' &&
      (this.tokens[j + 2]?.text === '(' || (this.dialect === 'kotlin' && this.tokens[j + 2]?.text === '{'))
    ) {
      const name = this.tokens[j + 1]!.text;
      let k = j + 2;
      let itemArgs: Range[] = [];
      let itemLambda: Range | null = null;
      if (this.tokens[k]?.text === '(') {
        const close = this.pairs.get(k) ?? k;
        itemArgs = this.splitArgs(k + 1, close - 1);
        k = close + 1;
      }
      if (this.dialect === 'kotlin' && this.tokens[k]?.text === '{') {
        const close = this.pairs.get(k) ?? k;
        itemLambda = { from: k, to: close };
        k = close + 1;
      }
      chain.push({ name, args: itemArgs, lambda: itemLambda, end: k - 1 });
      j = k;
    }
    const name = this.tokens[head]!.text;
    return { head, name, qualifier, typeArg, args: args ?? [], lambda, chain, end: j - 1 };
  }

  /** What one assertion call checks: one entry, or one per checking call of an AssertJ/Truth chain. */
  private checksOf(call: Call): Found[] {
    const { name, head } = call;
    // Kotlin's named arguments: assertEquals(expected = 180, actual = total)
    const args = call.args.map((a) => this.unnamed(a));
    const swapped = this.argName(call.args[0]) === 'actual';
    const at = head - (call.qualifier ? call.qualifier.split('.').length * 2 : 0);
    const whole = (actual: string, matcher: string, expected: string, literal = false): Found => ({
      actual,
      matcher,
      expected,
      literal,
      from: at,
      to: call.chain.at(-1)?.end ?? call.end,
    });
    const receiver =
      /^[a-z_]/.test(call.qualifier) && !/^(?:org|com|net|io|java|javax|jakarta|kotlin|junit)\b/.test(call.qualifier);
    const values = args.filter((a) => !this.isMessage(a));
    if (EQUALITY.has(name)) {
      let rest = args;
      if (this.messageFirst && !call.qualifier.endsWith('Assertions')) {
        const delta = rest.length === 3 && this.isNumber(rest[2]!);
        if (rest.length === 4 || (rest.length === 3 && !delta)) rest = rest.slice(1);
      }
      const [first, second, ...extra] = rest.filter((a, i) => i < 2 || !this.isMessage(a));
      if (!first) return [];
      const [expected, actual] = this.actualFirst !== swapped ? [second, first] : [first, second];
      const expectedText = [expected, ...extra]
        .filter((r): r is Range => !!r)
        .map((r) => this.canonical(r))
        .join(' , ');
      return [whole(actual ? this.canonical(actual) : '', name, expectedText, !!actual && this.isLiteral(actual))];
    }
    if (name === 'assertTrue' || name === 'assertFalse' || (name === 'assert' && this.dialect === 'kotlin')) {
      const condition =
        (this.messageFirst && args.length >= 2 ? args.at(-1) : args.find((a) => !this.isMessage(a))) ?? call.lambda;
      if (!condition) return [];
      return [{ ...this.condition(condition, name !== 'assertFalse', name), from: at, to: call.end }];
    }
    if (ONE_VALUE.has(name)) {
      const value = this.messageFirst && args.length >= 2 ? args[1] : values[0];
      return value ? [whole(this.canonical(value), name, '', this.isLiteral(value))] : [];
    }
    if (name === 'assertInstanceOf' || name === 'assertIs' || name === 'assertIsNot') {
      const type = call.typeArg ? this.className(call.typeArg) : values[0] ? this.classNames(values[0]) : '';
      const value = call.typeArg ? values[0] : values[1];
      return [whole(value ? this.canonical(value) : '', name, type, !!value && this.isLiteral(value))];
    }
    if (THROWS.has(name)) {
      const type = call.typeArg ? this.className(call.typeArg) : values.find((a) => this.isClassLiteral(a));
      const code = call.lambda ?? values.find((a) => !this.isClassLiteral(a));
      const expected = typeof type === 'string' ? type : type ? this.classNames(type) : '';
      return [whole(code ? this.canonical(code) : '', name, expected, !!code && this.isLiteral(code))];
    }
    if (name === 'assertDoesNotThrow' || name === 'assertTimeout' || name === 'assertTimeoutPreemptively') {
      const code = call.lambda ?? values.at(-1);
      const limit = name === 'assertDoesNotThrow' || values.length < 2 ? '' : this.canonical(values[0]!);
      return [whole(code ? this.canonical(code) : '', name, limit, !!code && this.isLiteral(code))];
    }
    if (name === 'fail') return [whole('', 'fail', '')];
    if (name === 'assertAll') return receiver && !args.length ? [whole(call.qualifier, 'assertAll', '')] : [];
    if (name === 'expect' || name === 'expectMessage' || name === 'expectCause') {
      // JUnit 4's ExpectedException rule: thrown.expect(X.class); kotlin.test's expect(expected) { actual }.
      if (receiver && name === 'expect' && values[0]) return [whole('', 'expectException', this.classNames(values[0]))];
      if (receiver) return values[0] ? [whole('', name, this.canonical(values[0]))] : [];
      if (name === 'expect' && call.lambda && values[0])
        return [whole(this.canonical(call.lambda), 'assertEquals', this.canonical(values[0]))];
      return [];
    }
    if (name === 'assertThat' && args.length >= 2) return [this.hamcrest(call, at)];
    if (name === 'verify' && !call.lambda && call.chain.length && args.length >= 1 && args.length <= 2) {
      return [this.verified(args[0]!, args[1] ?? null, call.chain[0]!, at, call.chain[0]!.end)];
    }
    if (name === 'then' && call.chain[0]?.name === 'should' && call.chain[1] && args[0]) {
      return [this.verified(args[0], call.chain[0].args[0] ?? null, call.chain[1], at, call.chain[1].end)];
    }
    if (VERIFY_BLOCKS.has(name) && call.lambda) return this.verifiedBlock(call, at);
    if (NO_INTERACTIONS.has(name)) return [whole(args.map((a) => this.canonical(a)).join(' , '), name, '')];
    if (/^assertThat\w*$/.test(name) || name === 'assertWithMessage' || (name === 'then' && call.chain.length)) {
      return this.chained(call, at);
    }
    // Any other assert…/verify… call: a custom assertion helper.
    const [first, ...rest] = values;
    const actual = first ?? call.lambda;
    return [
      whole(
        actual ? this.canonical(actual) : '',
        name,
        rest.map((r) => this.canonical(r)).join(' , '),
        !!actual && this.isLiteral(actual),
      ),
    ];
  }

  /** AssertJ and Truth: `assertThat(actual)` then one check per call, past describing and navigating calls. */
  private chained(call: Call, at: number): Found[] {
    const { name } = call;
    let actual = call.args[0] ? this.canonical(call.args[0]) : '';
    let literal = !!call.args[0] && this.isLiteral(call.args[0]);
    const found: Found[] = [];
    const thrownType = /^assertThat(\w+(?:Exception|Error))$/.exec(name)?.[1];
    const thrown = THROWN_HEADS.has(name) || !!thrownType;
    let expectedType =
      name === 'assertThatExceptionOfType' && call.args[0] ? this.classNames(call.args[0]) : (thrownType ?? '');
    if (name === 'assertThatNoException') expectedType = '';
    for (const item of call.chain) {
      const itemArgs = item.args.map((a) => this.canonical(a)).join(' , ');
      if (DESCRIBING.has(item.name)) continue;
      if (item.name === 'isThrownBy' || item.name === 'that') {
        const code = item.args[0] ?? item.lambda;
        actual = code ? this.canonical(code) : '';
        literal = !!code && this.isLiteral(code);
        continue;
      }
      if (NAVIGATION.has(item.name)) {
        actual = `${actual} . ${item.name} ( ${itemArgs} )`;
        continue;
      }
      const expected = item.args
        .map((a) => (this.isClassLiteral(a) ? this.classNames(a) : this.canonical(a)))
        .join(' , ');
      found.push({ actual, matcher: `${name}.${item.name}`, expected, literal, from: at, to: item.end });
    }
    const end = call.chain.at(-1)?.end ?? call.end;
    if (name === 'assertThatNoException')
      return [{ actual, matcher: 'assertDoesNotThrow', expected: '', literal, from: at, to: end }];
    if (thrown)
      found.unshift({
        actual,
        matcher: name === 'assertThatThrownBy' ? name : 'assertThatExceptionOfType',
        expected: expectedType,
        literal,
        from: at,
        to: end,
      });
    // `assertThat(x)` alone checks nothing.
    if (!found.length) found.push({ actual, matcher: name, expected: '', literal, from: at, to: end });
    return found;
  }

  /** Hamcrest: `assertThat([reason,] actual, matcher)`, the matcher read through is(…), not(…) and the like. */
  private hamcrest(call: Call, at: number): Found {
    const [actual, matcher] = call.args.slice(-2) as [Range, Range];
    const names = ['assertThat'];
    let expected = '';
    let range: Range | null = matcher;
    while (range) {
      const inner = this.wholeCall(range);
      if (!inner) {
        expected = this.canonical(range);
        break;
      }
      names.push(inner.name);
      const innerArgs = inner.args;
      if (innerArgs.length === 1 && this.wholeCall(innerArgs[0]!)) range = innerArgs[0]!;
      else {
        expected = innerArgs.map((a) => (this.isClassLiteral(a) ? this.classNames(a) : this.canonical(a))).join(' , ');
        range = null;
      }
    }
    return {
      actual: this.canonical(actual),
      matcher: names.join('.'),
      expected,
      literal: this.isLiteral(actual),
      from: at,
      to: call.end,
    };
  }

  /** A range that is one call, `name(args)` (qualified or not), with its name and arguments. */
  private wholeCall(range: Range): { name: string; args: Range[] } | null {
    let k = range.from;
    while (this.tokens[k]?.kind === 'word' && this.tokens[k + 1]?.text === '.' && k + 2 <= range.to) k += 2;
    const name = this.tokens[k];
    if (name?.kind !== 'word' || this.tokens[k + 1]?.text !== '(' || this.pairs.get(k + 1) !== range.to) return null;
    return { name: name.text, args: this.splitArgs(k + 2, range.to - 1) };
  }

  /** Mockito: verify(mock[, mode]).method(args); BDDMockito: then(mock).should([mode]).method(args). */
  private verified(mock: Range, mode: Range | null, call: Call['chain'][number], from: number, to: number): Found {
    const expected = call.args.map((a) => this.canonical(a)).join(' , ') + (mode ? ` ; ${this.canonical(mode)}` : '');
    return {
      actual: `${this.canonical(mock)} . ${call.name}`,
      // `never()` with any arguments still checks exactly: no such call at all.
      matcher:
        call.args.every((a) => this.isAnyArgument(a)) && !/\b(?:never|times \( 0 \))/.test(expected)
          ? 'verifyCalled'
          : 'verify',
      expected,
      literal: false,
      from,
      to,
    };
  }

  /** MockK: verify { mock.method(args) } (and coVerify, verifyOrder …), one check per call in the block. */
  private verifiedBlock(call: Call, at: number): Found[] {
    const mode = call.args.map((a) => this.canonical(a)).join(' , ');
    const found: Found[] = [];
    const block = call.lambda!;
    for (let k = block.from + 1; k < block.to; k++) {
      if (this.openers.has(k)) continue;
      const token = this.tokens[k]!;
      if (token.text === '{' || (token.text === '(' && this.tokens[k - 1]?.kind !== 'word')) {
        k = this.pairs.get(k) ?? k;
        continue;
      }
      if (token.text !== '(' || this.tokens[k - 2]?.text !== '.') continue;
      let start = k - 1;
      while (
        (this.tokens[start - 1]?.text === '.' || this.tokens[start - 1]?.text === '?.') &&
        this.tokens[start - 2]?.kind === 'word'
      )
        start -= 2;
      const close = this.pairs.get(k) ?? k;
      const args = this.splitArgs(k + 1, close - 1);
      found.push({
        actual: this.canonical({ from: start, to: k - 1 }),
        matcher: args.every((a) => this.isAnyArgument(a)) ? 'verifyCalled' : 'verify',
        expected: args.map((a) => this.canonical(a)).join(' , ') + (mode ? ` ; ${mode}` : ''),
        literal: false,
        from: at,
        to: call.end,
      });
      k = close;
    }
    return found;
  }

  /** Kotest: `actual shouldBe expected`, `actual.shouldBe(expected)`, `actual.shouldBeNull()`. */
  private kotestMatcher(at: number): Found | null {
    const prev = this.tokens[at - 1];
    if (!prev) return null;
    const dotted = prev.text === '.' || prev.text === '?.';
    const actualEnd = dotted ? at - 2 : at - 1;
    const ends = this.tokens[actualEnd];
    if (!ends || !(ends.kind !== 'symbol' || [')', ']', '!!'].includes(ends.text))) return null;
    const actual = { from: this.operandStart(actualEnd), to: actualEnd };
    let expected: Range;
    let to: number;
    if (dotted && this.tokens[at + 1]?.text === '(') {
      to = this.pairs.get(at + 1) ?? at + 1;
      expected = { from: at + 2, to: to - 1 };
    } else if (dotted) {
      to = at;
      expected = { from: at + 1, to: at };
    } else {
      to = this.statementEnd(at + 1);
      expected = { from: at + 1, to };
    }
    return {
      actual: this.canonical(actual),
      matcher: this.tokens[at]!.text,
      expected: expected.to >= expected.from ? this.canonical(expected) : '',
      literal: this.isLiteral(actual),
      from: actual.from,
      to,
    };
  }

  /** Java's `assert condition [: message];`. */
  private assertStatement(at: number): Found[] {
    let end = at + 1;
    while (end < this.tokens.length && this.tokens[end]!.text !== ';' && this.tokens[end]!.text !== ':') {
      end = this.openers.has(end) ? end + 1 : (this.pairs.get(end) ?? end) + 1;
    }
    if (end === at + 1) return [];
    return [{ ...this.condition({ from: at + 1, to: end - 1 }, true, 'assert'), from: at, to: end - 1 }];
  }

  /** A boolean condition checked true (or false): a comparison reads as one (`==`, `!=`, `.equals(…)`). */
  private condition(range: Range, truthy: boolean, name: string): Omit<Found, 'from' | 'to'> {
    let inner = range;
    while (this.tokens[inner.from]?.text === '(' && this.pairs.get(inner.from) === inner.to)
      inner = { from: inner.from + 1, to: inner.to - 1 };
    for (let k = inner.from; k <= inner.to; k++) {
      const text = this.tokens[k]!.text;
      if (this.pairs.has(k)) {
        k = this.pairs.get(k)!;
        continue;
      }
      if (['==', '!=', '===', '!=='].includes(text)) {
        const equal = text.startsWith('=') === truthy;
        const left = { from: inner.from, to: k - 1 };
        return {
          actual: this.canonical(left),
          matcher: equal ? '==' : '!=',
          expected: this.canonical({ from: k + 1, to: inner.to }),
          literal: this.isLiteral(left) && this.isLiteral({ from: k + 1, to: inner.to }),
        };
      }
      if (text === '&&' || text === '||' || text === '?' || text === '?:') break;
    }
    // `actual.equals(expected)`
    const last = this.openers.get(inner.to);
    if (
      this.tokens[inner.to]?.text === ')' &&
      last !== undefined &&
      this.tokens[last - 1]?.text === 'equals' &&
      this.tokens[last - 2]?.text === '.'
    ) {
      const receiver = { from: inner.from, to: last - 3 };
      return {
        actual: this.canonical(receiver),
        matcher: truthy ? 'equals' : 'notEquals',
        expected: this.canonical({ from: last + 1, to: inner.to - 1 }),
        literal: this.isLiteral(receiver),
      };
    }
    return { actual: this.canonical(range), matcher: name, expected: '', literal: this.isLiteral(range) };
  }

  // ---- flow ----

  /** The exit before `at` in the test's body that keeps it from running: a return, `if (true) return`, an `if (false)` block. */
  private unreachable(method: Method, at: number): Quoted | null {
    const body = method.body;
    if (this.tokens[body.from]?.text !== '{') return null;
    for (let k = body.from + 1; k < at; k++) {
      const token = this.tokens[k]!;
      if (token.text === 'if' && this.tokens[k + 1]?.text === '(') {
        const close = this.pairs.get(k + 1) ?? k + 1;
        const constant = this.constant({ from: k + 2, to: close - 1 });
        const branch =
          this.tokens[close + 1]?.text === '{'
            ? { from: close + 1, to: this.pairs.get(close + 1) ?? close + 1 }
            : { from: close + 1, to: this.statementEnd(close + 1) };
        if (constant === false && branch.from <= at && at <= branch.to)
          return { line: token.line, text: this.source({ from: k, to: close }) };
        const first = this.tokens[branch.from]?.text === '{' ? branch.from + 1 : branch.from;
        if (
          constant === true &&
          this.enclosing[k] === body.from &&
          this.tokens[first]?.text === 'return' &&
          branch.to < at
        )
          return { line: token.line, text: this.source({ from: k, to: branch.to }) };
      }
      if (token.text !== 'return' || this.enclosing[k] !== body.from || this.conditional(k)) continue;
      return { line: token.line, text: this.source({ from: k, to: this.statementEnd(k) }) };
    }
    return null;
  }

  /** Whether the return at `k` is the branch of an if, else, loop or elvis. */
  private conditional(k: number): boolean {
    const prev = this.tokens[k - 1];
    if (!prev) return false;
    if (prev.text === 'else' || prev.text === '?:' || prev.text === '->' || prev.text === '=') return true;
    if (prev.text !== ')') return false;
    const open = this.openers.get(k - 1);
    return open !== undefined && ['if', 'while', 'for'].includes(this.tokens[open - 1]?.text ?? '');
  }

  /** true or false for a constant condition (`true`, `!false`, `1 == 1`), else null. */
  private constant(range: Range): boolean | null {
    const text = this.tokens
      .slice(range.from, range.to + 1)
      .map((t) => t.text)
      .join(' ');
    if (text === 'true' || text === '! false') return true;
    if (text === 'false' || text === '! true') return false;
    const equal = /^(-?\d+) (==|!=) (-?\d+)$/.exec(text);
    return equal ? (equal[1] === equal[3]) === (equal[2] === '==') : null;
  }

  /** Try blocks whose catch takes an assertion failure and neither rethrows nor fails; Kotlin's runCatching { … }. */
  private swallowingBlocks(): { range: Range; quote: Quoted }[] {
    const blocks: { range: Range; quote: Quoted }[] = [];
    this.tokens.forEach((token, i) => {
      if (token.text === 'runCatching' && this.tokens[i + 1]?.text === '{') {
        const close = this.pairs.get(i + 1) ?? i + 1;
        const rethrown = this.tokens[close + 1]?.text === '.' && this.tokens[close + 2]?.text === 'getOrThrow';
        if (!rethrown)
          blocks.push({ range: { from: i + 1, to: close }, quote: { line: token.line, text: 'runCatching { … }' } });
        return;
      }
      if (token.text !== 'try') return;
      let k = i + 1;
      if (this.tokens[k]?.text === '(') k = (this.pairs.get(k) ?? k) + 1;
      if (this.tokens[k]?.text !== '{') return;
      const block = { from: k, to: this.pairs.get(k) ?? k };
      k = block.to + 1;
      while (this.tokens[k]?.text === 'catch' && this.tokens[k + 1]?.text === '(') {
        const paramsEnd = this.pairs.get(k + 1) ?? k + 1;
        const bodyEnd =
          this.tokens[paramsEnd + 1]?.text === '{' ? (this.pairs.get(paramsEnd + 1) ?? paramsEnd + 1) : paramsEnd;
        const types = this.tokens
          .slice(k + 2, paramsEnd)
          .filter((t, n, all) => t.kind === 'word' && all[n + 1]?.text !== '.')
          .map((t) => t.text);
        const handled = this.tokens
          .slice(paramsEnd + 1, bodyEnd + 1)
          .some((t) => t.text === 'throw' || t.text === 'fail' || /^assert[A-Z]/.test(t.text));
        if (!handled && types.some((t) => CATCHES_ASSERTIONS.has(t))) {
          blocks.push({
            range: block,
            quote: { line: this.tokens[k]!.line, text: this.source({ from: k, to: paramsEnd }) },
          });
          break;
        }
        k = bodyEnd + 1;
      }
    });
    return blocks;
  }

  // ---- mocks ----

  private mocks(): MockCall[] {
    const mocks: MockCall[] = [];
    const lines = this.text.split('\n');
    const add = (at: number, target: string) => {
      const line = this.tokens[at]!.line;
      if (target) mocks.push({ line, text: (lines[line - 1] ?? '').trim(), target, member: '' });
    };
    for (let i = 0; i < this.tokens.length; i++) {
      const token = this.tokens[i]!;
      if (token.text === '@' && this.tokens[i + 1]?.kind === 'word') {
        const annotation = this.annotationAt(i);
        if (MOCK_ANNOTATIONS.has(annotation.name.split('.').pop()!)) add(i, this.annotatedType(annotation.end + 1));
        i = annotation.end;
        continue;
      }
      if (token.kind !== 'word' || !MOCK_CALLS.has(token.text) || this.qualifierOf(i) === null) continue;
      const call = this.callAt(i, '');
      if (!call) continue;
      const [first] = call.args;
      if (call.typeArg) add(i, this.className(call.typeArg));
      else if (first && this.isClassLiteral(first)) add(i, this.classNames(first));
      else if (first && this.tokens[first.from]?.text === 'new')
        add(i, this.className({ from: first.from + 1, to: first.to }));
      else if (first && this.tokens[first.from]?.kind === 'string') add(i, unquote(this.tokens[first.from]!.text));
      else if (first) add(i, this.className(first));
    }
    return mocks;
  }

  /** The type of the field or parameter a mock annotation marks: `private Price price;`, `lateinit var price: Price`. */
  private annotatedType(from: number): string {
    let k = from;
    while (this.tokens[k]?.text === '@') k = this.annotationAt(k).end + 1;
    while (this.tokens[k]?.kind === 'word' && MODIFIERS.has(this.tokens[k]!.text)) k++;
    if (this.tokens[k + 1]?.text === ':') return this.className({ from: k + 2, to: k + 12 });
    return this.className({ from: k, to: k + 12 });
  }

  // ---- text ----

  /** `X.class`, `X::class`, `X::class.java`, or a `{A.class, B.class}` list: the class names, `java.lang.` left off. */
  private classNames(range: Range): string {
    const open = this.tokens[range.from]?.text;
    if ((open === '{' || open === '[') && this.pairs.get(range.from) === range.to)
      return this.splitArgs(range.from + 1, range.to - 1)
        .map((r) => this.className(r))
        .join(' , ');
    return this.isClassLiteral(range) ? this.className(range) : this.canonical(range);
  }

  /** A dotted type name from the start of `range` (its type arguments and `.class` left off). */
  private className(range: Range): string {
    const parts: string[] = [];
    for (let k = range.from; k <= range.to && k < this.tokens.length; k += 2) {
      const token = this.tokens[k]!;
      if (token.kind !== 'word' || token.text === 'class') break;
      parts.push(bare(token.text));
      if (this.tokens[k + 1]?.text !== '.') break;
    }
    return parts.join('.').replace(/^(?:java\.lang|kotlin)\./, '');
  }

  private isClassLiteral(range: Range): boolean {
    const words = this.tokens.slice(range.from, range.to + 1).map((t) => t.text);
    const text = words.join(' ');
    return (
      /(?:^|\s)(?:\.|::) class(?: \. java)?$/.test(text) ||
      ((words[0] === '{' || words[0] === '[') && /\bclass\b/.test(text))
    );
  }

  private isMessage(range: Range): boolean {
    const tokens = this.tokens.slice(range.from, range.to + 1);
    return (
      (tokens.length === 1 && tokens[0]!.kind === 'string') ||
      (tokens.some((t) => t.text === '->') && tokens.some((t) => t.kind === 'string') && tokens.length <= 6)
    );
  }

  /** The name of a Kotlin named argument (`expected = 180`), else null. */
  private argName(range: Range | undefined): string | null {
    const [name, eq] = range ? [this.tokens[range.from], this.tokens[range.from + 1]] : [];
    return this.dialect === 'kotlin' && name?.kind === 'word' && eq?.text === '=' && range!.to > range!.from + 1
      ? name.text
      : null;
  }

  private unnamed(range: Range): Range {
    return this.argName(range) === null ? range : { from: range.from + 2, to: range.to };
  }

  private isNumber(range: Range): boolean {
    const tokens = this.tokens.slice(range.from, range.to + 1).filter((t) => t.text !== '-');
    return tokens.length === 1 && tokens[0]!.kind === 'number';
  }

  /** Only literals and operators: nothing about the code under test. */
  private isLiteral(range: Range): boolean {
    if (range.to < range.from) return false;
    return this.tokens
      .slice(range.from, range.to + 1)
      .every((t) => t.kind !== 'word' || t.text === 'true' || t.text === 'false' || t.text === 'null');
  }

  private isAnyArgument(range: Range): boolean {
    const call = this.wholeCall(range);
    return !!call && ANY_ARGUMENT.test(call.name);
  }

  private isStatementStart(at: number): boolean {
    const prev = this.tokens[at - 1];
    return (
      !prev || prev.text === ';' || prev.text === '{' || prev.text === '}' || prev.text === ')' || prev.text === 'else'
    );
  }

  /** The source text of a token range, whitespace collapsed. */
  private source(range: Range): string {
    const first = this.tokens[range.from];
    const last = this.tokens[Math.max(range.from, range.to)];
    return first && last ? this.text.slice(first.start, last.end).replace(/\s+/g, ' ').trim() : '';
  }

  /**
   * Formatting-free text of a token range, each local or constant that is assigned once replaced by its
   * value (so renaming it, or moving a value into one, compares equal), up to a few levels deep.
   */
  private canonical(range: Range, depth = 0): string {
    const out: string[] = [];
    for (let k = range.from; k <= range.to && k < this.tokens.length; k++) {
      const token = this.tokens[k]!;
      const prev = this.tokens[k - 1]?.text;
      const value =
        token.kind === 'word' &&
        depth < 4 &&
        prev !== '.' &&
        prev !== '?.' &&
        prev !== '::' &&
        this.tokens[k + 1]?.text !== '('
          ? this.valueOf(token.text, k)
          : null;
      out.push(value ? this.canonical(value, depth + 1) : token.kind === 'word' ? bare(token.text) : token.text);
    }
    return out.join(' ');
  }

  // ---- declarations ----

  /** Locals and constants with an initial value: `int total = 180;`, `val total = 180`, `static final int X = 1;`. */
  private scanDeclarations(): void {
    this.tokens.forEach((token, i) => {
      if (
        token.kind === 'word' &&
        (this.tokens[i + 1]?.text === '++' || this.tokens[i - 1]?.text === '++' || this.tokens[i + 1]?.text === '--')
      )
        this.reassigned.add(token.text);
      if (token.kind === 'symbol' && /^[-+*/%]=$/.test(token.text) && this.tokens[i - 1]?.kind === 'word')
        this.reassigned.add(this.tokens[i - 1]!.text);
      if (token.text !== '=' || this.tokens[i - 1]?.kind !== 'word') return;
      const declared = this.declaredName(i);
      if (declared === null) {
        if (this.tokens[i - 2]?.text !== '(' && this.tokens[i - 2]?.text !== ',')
          this.reassigned.add(this.tokens[i - 1]!.text);
        return;
      }
      const scope = this.enclosing[i] ?? -1;
      const end = this.statementEnd(i + 1);
      const names = this.declarations.get(scope) ?? new Map<string, Declaration>();
      if (names.has(declared)) this.reassigned.add(declared);
      names.set(declared, { at: i, value: { from: i + 1, to: end } });
      this.declarations.set(scope, names);
    });
  }

  /**
   * The name a `=` at `eq` declares, or null where it assigns: a Kotlin `val`/`var`, a Java local, or a
   * Java field only when it is `final` (any other field may be set again anywhere).
   */
  private declaredName(eq: number): string | null {
    if (this.dialect === 'kotlin') {
      for (let k = eq - 1; k >= 0 && eq - k < 16 && this.tokens[k]!.line === this.tokens[eq]!.line; k--) {
        const text = this.tokens[k]!.text;
        if (text === 'val' || text === 'var')
          return this.tokens[k + 1]?.kind === 'word' ? this.tokens[k + 1]!.text : null;
        if (text === ';' || text === '{' || text === '}' || text === '(' || text === '=') return null;
      }
      return null;
    }
    const type = this.tokens[eq - 2];
    if (
      !type ||
      !(type.kind === 'word' || type.text === '>' || type.text === ']') ||
      EXPRESSION_KEYWORDS.has(type.text)
    )
      return null;
    if (this.classes.has(this.enclosing[eq] ?? -1)) {
      let final = false;
      for (let k = eq - 3; k >= 0 && eq - k < 20; k--) {
        const text = this.tokens[k]!.text;
        if (text === 'final') final = true;
        if (text === ';' || text === '{' || text === '}') break;
      }
      if (!final) return null;
    }
    return this.tokens[eq - 1]!.text;
  }

  /** The value of the local or constant `name` as seen from token `at`, if it is assigned exactly once. */
  private valueOf(name: string, at: number): Range | null {
    if (this.reassigned.has(name)) return null;
    for (let scope = this.enclosing[at] ?? -1; ; scope = this.enclosing[scope] ?? -1) {
      const declaration = this.declarations.get(scope)?.get(name);
      if (declaration && (this.classes.has(scope) || scope < 0 || declaration.at < at)) {
        return declaration.value.from <= at && at <= declaration.value.to ? null : declaration.value;
      }
      if (scope < 0) return null;
    }
  }

  // ---- token helpers ----

  /** Argument ranges between `from` and `to`, split at top-level commas. */
  private splitArgs(from: number, to: number): Range[] {
    const args: Range[] = [];
    let start = from;
    for (let k = from; k <= to; k++) {
      if (this.pairs.has(k)) k = Math.min(this.pairs.get(k)!, to);
      else if (this.tokens[k]!.text === ',') {
        if (k > start) args.push({ from: start, to: k - 1 });
        start = k + 1;
      }
    }
    if (to >= start) args.push({ from: start, to });
    return args;
  }

  /** The `>` closing a type argument list opened at `open`. */
  private angleEnd(open: number): number {
    let depth = 0;
    for (let k = open; k < this.tokens.length && k - open < 60; k++) {
      const text = this.tokens[k]!.text;
      if (text === '<') depth++;
      else if (text === '>' && --depth === 0) return k;
      else if (text === ';' || text === '{' || text === '=') return open;
    }
    return open;
  }

  /**
   * The last token of the statement or expression starting at `from` (`from - 1` when it is empty): it
   * ends before a `;`, a top-level comma or the bracket closing around it, and Kotlin's also at a line
   * break that does not continue it.
   */
  private statementEnd(from: number): number {
    let last = from - 1;
    for (let k = from; k < this.tokens.length; k++) {
      const token = this.tokens[k]!;
      if (token.text === ';' || token.text === ',' || this.openers.has(k)) return last;
      if (
        this.dialect === 'kotlin' &&
        k > from &&
        last >= from &&
        token.line > this.tokens[last]!.line &&
        !CONTINUES_LINE.has(this.tokens[last]!.text) &&
        !CONTINUES_LINE.has(token.text)
      )
        return last;
      last = this.pairs.get(k) ?? k;
      k = last;
    }
    return last;
  }

  /** Where the operand ending at `end` starts: back over names, calls, indexes and member accesses. */
  private operandStart(end: number): number {
    let k = end;
    for (;;) {
      if (this.openers.has(k)) k = this.openers.get(k)!;
      const prev = this.tokens[k - 1];
      if (this.tokens[k]?.text === '(' || this.tokens[k]?.text === '[') {
        if (prev?.kind === 'word' || prev?.text === ')' || prev?.text === ']') {
          k--;
          continue;
        }
        return k;
      }
      if (prev && (prev.text === '.' || prev.text === '?.' || prev.text === '!!') && this.tokens[k - 2]) {
        k -= prev.text === '!!' ? 1 : 2;
        continue;
      }
      if (this.tokens[k]?.text === '!!') {
        k--;
        continue;
      }
      return k;
    }
  }
}

/** Assertion calls by name: assert…, fail, verify…, expect… (JUnit 4's rule, kotlin.test), then (BDD). */
function isAssertionName(name: string): boolean {
  return (
    /^assert(?:[A-Z]\w*)?$/.test(name) ||
    /^(?:verify|coVerify)\w*$/.test(name) ||
    /^shouldThrow\w*$/.test(name) ||
    ['fail', 'expect', 'expectThrows', 'expectMessage', 'expectCause', 'then', 'confirmVerified'].includes(name)
  );
}

/** A Kotlin name without its backticks. */
function bare(name: string): string {
  return name.startsWith('`') ? name.slice(1, -1) : name;
}

function unquote(literal: string): string {
  const triple = literal.startsWith('"""');
  return literal.slice(triple ? 3 : 1, literal.length - (triple ? 3 : 1));
}
