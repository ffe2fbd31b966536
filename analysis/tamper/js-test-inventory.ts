import path from 'node:path';
import ts from 'typescript';
import { JsCanonicalText } from './js-canonical-text';
import {
  OUTSIDE_TESTS,
  type Assertion,
  type MockCall,
  type Quoted,
  type SyntaxInventory,
  type TestCase,
} from './test-inventory';

// JS/TS test files read with the TypeScript compiler's parser (syntax only, nothing type-checked or
// run): describe/it/test blocks (jest, vitest, mocha, node:test, playwright), expect(…) and assert(…)
// assertions, whether each still runs, and the jest/vi/node:test mocks the file installs.

const SCRIPT_KINDS: Record<string, ts.ScriptKind> = {
  '.js': ts.ScriptKind.JS,
  '.cjs': ts.ScriptKind.JS,
  '.mjs': ts.ScriptKind.JS,
  '.jsx': ts.ScriptKind.JSX,
  '.ts': ts.ScriptKind.TS,
  '.cts': ts.ScriptKind.TS,
  '.mts': ts.ScriptKind.TS,
  '.tsx': ts.ScriptKind.TSX,
};

const SUITES = new Set(['describe', 'context', 'suite', 'fdescribe', 'xdescribe']);
const TESTS = new Set(['it', 'test', 'specify', 'fit', 'xit', 'xtest']);
/** `test.beforeEach(…)`, `test.step(…)`: calls on a test function that do not declare a test. */
const NOT_TESTS = new Set(['beforeEach', 'afterEach', 'beforeAll', 'afterAll', 'step', 'use', 'extend']);
const EXPECT_CALLEES = new Set(['expect', 'expect.soft', 'expect.poll']);
/** Chai's readability words: `expect(x).to.be.equal(1)` and `expect(x).equal(1)` are the same matcher. */
const CHAI_WORDS = new Set([
  'to',
  'be',
  'been',
  'is',
  'that',
  'which',
  'and',
  'has',
  'have',
  'with',
  'at',
  'of',
  'same',
  'but',
  'does',
  'still',
  'also',
]);
const ONE_ARGUMENT_ASSERTS = new Set(['assert', 'assert.ok', 'assert.ifError']);
const MODULE_MOCKS = new Set([
  'jest.mock',
  'vi.mock',
  'jest.doMock',
  'vi.doMock',
  'jest.unstable_mockModule',
  'jest.setMock',
  'mock.module',
]);
const SPIES = new Set(['jest.spyOn', 'vi.spyOn']);
/** node:test's `mock.method(object, name, implementation)`. */
const METHOD_MOCK = 'mock.method';
/** Calls in a catch block that still fail the test, so the catch does not swallow. */
const FAILING_CALLS = new Set(['fail', 'done', 'reject', 'assert.fail', 'expect.fail']);

export function parsesAsJavaScript(file: string): boolean {
  return path.posix.extname(file).toLowerCase() in SCRIPT_KINDS;
}

export function javascriptInventory(file: string, text: string): SyntaxInventory {
  const kind = SCRIPT_KINDS[path.posix.extname(file).toLowerCase()] ?? ts.ScriptKind.TS;
  return new TestFileReader(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind)).read();
}

interface Flow {
  unreachable: Quoted | null;
  swallowed: Quoted | null;
}

type Found = Pick<Assertion, 'actual' | 'matcher' | 'expected' | 'literal'> & { calls: ts.CallExpression[] };

class TestFileReader {
  private readonly tests: TestCase[] = [];
  private readonly buckets = new Map<string, TestCase>();
  private readonly mocks: MockCall[] = [];
  private readonly names: string[] = [];
  private current: TestCase | null = null;
  private readonly text: JsCanonicalText;
  /** Local binding → module specifier it was imported or required from. */
  private readonly imports = new Map<string, string>();
  /** Variables holding a spy that later gets `.mockReturnValue(…)` and the like. */
  private readonly mockedSpies = new Set<string>();

  constructor(private readonly source: ts.SourceFile) {
    this.text = new JsCanonicalText(source);
  }

  read(): SyntaxInventory {
    this.scanModule();
    this.visit(this.source, { unreachable: null, swallowed: null });
    return { tests: [...this.tests, ...this.buckets.values()], mocks: this.mocks };
  }

  private scanModule(): void {
    for (const statement of this.source.statements) {
      if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
        for (const name of importedNames(statement.importClause))
          this.imports.set(name, statement.moduleSpecifier.text);
      } else if (ts.isVariableStatement(statement)) {
        this.text.addConstants(statement.declarationList, true);
      }
    }
    const see = (node: ts.Node): void => {
      const required = ts.isVariableDeclaration(node) && node.initializer && requiredModule(node.initializer);
      if (required) for (const name of boundNames(node.name)) this.imports.set(name, required);
      const callee = ts.isCallExpression(node) ? node.expression : null;
      if (
        callee &&
        ts.isPropertyAccessExpression(callee) &&
        ts.isIdentifier(callee.expression) &&
        callee.name.text.startsWith('mock')
      ) {
        this.mockedSpies.add(callee.expression.text);
      }
      ts.forEachChild(node, see);
    };
    see(this.source);
  }

  private visit(node: ts.Node, flow: Flow): void {
    if (
      ts.isBlock(node) ||
      ts.isSourceFile(node) ||
      ts.isCaseClause(node) ||
      ts.isDefaultClause(node) ||
      ts.isModuleBlock(node)
    ) {
      this.visitSequence(node.statements, flow);
    } else if (ts.isIfStatement(node)) {
      this.visitIf(node, flow);
    } else if (ts.isTryStatement(node)) {
      this.visitTry(node, flow);
    } else if (!(ts.isCallExpression(node) && this.visitCall(node, flow)) && !this.visitAssertion(node, flow)) {
      ts.forEachChild(node, (child) => this.visit(child, flow));
    }
  }

  /** Statements after one that always returns do not run. */
  private visitSequence(statements: readonly ts.Statement[], flow: Flow): void {
    let unreachable = flow.unreachable;
    for (const statement of statements) {
      this.visit(statement, { ...flow, unreachable });
      unreachable ??= this.exitOf(statement);
    }
  }

  private visitIf(node: ts.IfStatement, flow: Flow): void {
    this.visit(node.expression, flow);
    const condition = this.text.constant(node.expression);
    const dead = { ...flow, unreachable: flow.unreachable ?? this.quote(node) };
    this.visit(node.thenStatement, condition === false ? dead : flow);
    if (node.elseStatement) this.visit(node.elseStatement, condition === true ? dead : flow);
  }

  private visitTry(node: ts.TryStatement, flow: Flow): void {
    const handler = node.catchClause;
    const swallows = handler && !failsAgain(handler.block);
    this.visit(node.tryBlock, swallows ? { ...flow, swallowed: flow.swallowed ?? this.quote(handler) } : flow);
    if (handler) this.visit(handler.block, flow);
    if (node.finallyBlock) this.visit(node.finallyBlock, flow);
  }

  /** The statement (a return, or an if whose taken branch returns) after which nothing runs; null if none. */
  private exitOf(statement: ts.Statement): Quoted | null {
    if (ts.isReturnStatement(statement)) return this.quote(statement);
    if (ts.isBlock(statement)) {
      for (const inner of statement.statements) {
        const exit = this.exitOf(inner);
        if (exit) return exit;
      }
      return null;
    }
    if (!ts.isIfStatement(statement)) return null;
    const condition = this.text.constant(statement.expression);
    const thenExits = condition !== false && this.exitOf(statement.thenStatement) !== null;
    const elseExits = condition !== true && !!statement.elseStatement && this.exitOf(statement.elseStatement) !== null;
    const exits = condition === true ? thenExits : condition === false ? elseExits : thenExits && elseExits;
    return exits ? this.quote(statement) : null;
  }

  /** A describe/it/test call: its body is read under its title. Mocks are noted on the way. */
  private visitCall(node: ts.CallExpression, flow: Flow): boolean {
    // node:test's test context mocks as the module's does: `t.mock.method` is `mock.method`.
    const callee = dottedName(node.expression)?.replace(/^\w+\.(?=mock\.)/, '');
    if (callee && MODULE_MOCKS.has(callee)) this.noteModuleMock(node);
    if (callee && (SPIES.has(callee) || callee === METHOD_MOCK)) this.noteSpy(node, callee === METHOD_MOCK);
    const role = roleOf(node);
    const body = [...node.arguments].reverse().find((arg) => ts.isArrowFunction(arg) || ts.isFunctionExpression(arg));
    const title = node.arguments[0];
    if (!role || !body || !title || title === body) return false;
    this.names.push(ts.isStringLiteralLike(title) ? title.text : collapse(title.getText(this.source)));
    if (role === 'suite') {
      this.visit(body, flow);
    } else {
      const test: TestCase = { name: this.names.join(' > '), line: this.lineOf(node), assertions: [] };
      this.tests.push(test);
      const outer = this.current;
      this.current = test;
      this.text.withLocals(body, () => this.visit(body, flow));
      this.current = outer;
    }
    this.names.pop();
    return true;
  }

  private visitAssertion(node: ts.Node, flow: Flow): boolean {
    const found =
      ts.isCallExpression(node) || ts.isPropertyAccessExpression(node)
        ? (this.expectChain(node) ?? this.assertCall(node))
        : null;
    if (!found) return false;
    const { calls, ...assertion } = found;
    this.bucketFor(node).assertions.push({
      line: this.lineOf(node),
      text: collapse(node.getText(this.source)).slice(0, 200),
      ...assertion,
      unreachable: flow.unreachable,
      swallowed: flow.swallowed,
    });
    // Callbacks passed to expect or a matcher may hold assertions of their own.
    for (const call of calls) for (const arg of call.arguments) this.visit(arg, flow);
    return true;
  }

  /** `expect(actual).[not.][resolves.]matcher(expected)`, read from its outermost node. */
  private expectChain(node: ts.CallExpression | ts.PropertyAccessExpression): Found | null {
    const names: string[] = [];
    const calls: ts.CallExpression[] = [];
    for (let e: ts.Expression = node; ;) {
      if (ts.isCallExpression(e)) {
        calls.push(e);
        if (EXPECT_CALLEES.has(dottedName(e.expression) ?? '')) {
          const actual = e.arguments[0];
          const matcherCall = ts.isCallExpression(node) && node !== e ? node : null;
          return {
            actual: actual ? this.text.canonical(actual) : '',
            matcher: names.filter((n) => !CHAI_WORDS.has(n)).join('.'),
            expected: matcherCall ? matcherCall.arguments.map((a) => this.text.canonical(a)).join(', ') : '',
            literal: !actual || this.text.isLiteral(actual),
            calls,
          };
        }
        e = e.expression;
      } else if (ts.isPropertyAccessExpression(e)) {
        names.unshift(e.name.text);
        e = e.expression;
      } else {
        return null;
      }
    }
  }

  /** `assert(x)`, `assert.strictEqual(actual, expected)`, node:test's `t.assert.equal(…)`. */
  private assertCall(node: ts.CallExpression | ts.PropertyAccessExpression): Found | null {
    if (!ts.isCallExpression(node)) return null;
    const names = dottedName(node.expression)?.split('.') ?? [];
    const at = names.indexOf('assert');
    if (at < 0 || at > 1) return null;
    const matcher = names.slice(at).join('.');
    const [actual, expected] = node.arguments;
    return {
      actual: actual ? this.text.canonical(actual) : '',
      matcher,
      expected: expected && !ONE_ARGUMENT_ASSERTS.has(matcher) ? this.text.canonical(expected) : '',
      literal: !actual || this.text.isLiteral(actual),
      calls: [node],
    };
  }

  private noteModuleMock(node: ts.CallExpression): void {
    const target = node.arguments[0];
    if (target && ts.isStringLiteralLike(target))
      this.mocks.push({ ...this.quoteWhole(node), target: target.text, member: '' });
  }

  /**
   * `jest.spyOn(importedModule, 'fn')` replaces the function only when given a mock implementation or
   * value; node:test's `mock.method(module, 'fn', implementation)` when given the implementation.
   */
  private noteSpy(node: ts.CallExpression, methodMock: boolean): void {
    const [object, member, implementation] = node.arguments;
    const target = object && (requiredModule(object) ?? this.imports.get(dottedName(object)?.split('.')[0] ?? ''));
    if (!target) return;
    const chained = ts.isPropertyAccessExpression(node.parent) && node.parent.name.text.startsWith('mock');
    const held =
      ts.isVariableDeclaration(node.parent) &&
      ts.isIdentifier(node.parent.name) &&
      this.mockedSpies.has(node.parent.name.text);
    if (methodMock ? !implementation : !chained && !held) return;
    const shown = chained && ts.isCallExpression(node.parent.parent) ? node.parent.parent : node;
    this.mocks.push({
      ...this.quoteWhole(shown),
      target,
      member: member && ts.isStringLiteralLike(member) ? member.text : '',
    });
  }

  /** Where an assertion outside any test is kept: one bucket per describe block. */
  private bucketFor(node: ts.Node): TestCase {
    if (this.current) return this.current;
    const name = [...this.names, OUTSIDE_TESTS].join(' > ');
    let bucket = this.buckets.get(name);
    if (!bucket) this.buckets.set(name, (bucket = { name, line: this.lineOf(node), assertions: [] }));
    return bucket;
  }

  private lineOf(node: ts.Node): number {
    return this.source.getLineAndCharacterOfPosition(node.getStart(this.source)).line + 1;
  }

  /** A statement's first line, for evidence. */
  private quote(node: ts.Node): Quoted {
    return { line: this.lineOf(node), text: collapse(node.getText(this.source).split('\n')[0]!).slice(0, 120) };
  }

  private quoteWhole(node: ts.Node): Quoted {
    return { line: this.lineOf(node), text: collapse(node.getText(this.source)).slice(0, 200) };
  }
}

function roleOf(node: ts.CallExpression): 'suite' | 'test' | null {
  const [root, ...rest] = calleeNames(node.expression) ?? [];
  if (!root) return null;
  if (SUITES.has(root) || (TESTS.has(root) && rest.some((n) => SUITES.has(n)))) return 'suite';
  if (TESTS.has(root)) return rest.some((n) => NOT_TESTS.has(n)) ? null : 'test';
  // node:test subtests: test('…', async (t) => { await t.test('…', …) })
  return rest.length === 1 && rest[0] === 'test' ? 'test' : null;
}

/** Names along a callee, through calls and tagged templates: `it.each([...])` and it.each`…` give [it, each]. */
function calleeNames(expr: ts.Expression): string[] | null {
  const names: string[] = [];
  for (let e = expr; ;) {
    if (ts.isIdentifier(e)) return [e.text, ...names];
    if (ts.isPropertyAccessExpression(e)) {
      names.unshift(e.name.text);
      e = e.expression;
    } else if (ts.isCallExpression(e)) e = e.expression;
    else if (ts.isTaggedTemplateExpression(e)) e = e.tag;
    else return null;
  }
}

/** `a.b.c` for a plain property path, else null. */
function dottedName(expr: ts.Expression): string | null {
  if (ts.isIdentifier(expr)) return expr.text;
  if (!ts.isPropertyAccessExpression(expr)) return null;
  const object = dottedName(expr.expression);
  return object === null ? null : `${object}.${expr.name.text}`;
}

function importedNames(clause: ts.ImportClause | undefined): string[] {
  if (!clause) return [];
  const bindings = clause.namedBindings;
  const named = !bindings
    ? []
    : ts.isNamespaceImport(bindings)
      ? [bindings.name.text]
      : bindings.elements.map((e) => e.name.text);
  return clause.name ? [clause.name.text, ...named] : named;
}

/** `require('x')`, `require('x').y`: the specifier. */
function requiredModule(expr: ts.Expression): string | null {
  let e = expr;
  while (ts.isPropertyAccessExpression(e)) e = e.expression;
  if (!ts.isCallExpression(e) || !ts.isIdentifier(e.expression) || e.expression.text !== 'require') return null;
  const specifier = e.arguments[0];
  return specifier && ts.isStringLiteralLike(specifier) ? specifier.text : null;
}

function boundNames(name: ts.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((element) => (ts.isBindingElement(element) ? boundNames(element.name) : []));
}

function failsAgain(block: ts.Block): boolean {
  let fails = false;
  const see = (node: ts.Node): void => {
    if (
      ts.isThrowStatement(node) ||
      (ts.isCallExpression(node) && FAILING_CALLS.has(dottedName(node.expression) ?? ''))
    )
      fails = true;
    else ts.forEachChild(node, see);
  };
  see(block);
  return fails;
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
