import ts from 'typescript';

// Formatting-free text of JS/TS expressions, so that reformatting a test or renaming its variables
// reads as no change: whitespace, quote style, parentheses and trailing commas are dropped, and a
// const is replaced by its value. `const expected = 180; expect(total).toBe(expected)` reads as
// `toBe(180)`, so changing 180 there changes the expected value, and renaming `expected` changes nothing.

export class JsCanonicalText {
  private values = new Map<string, ts.Expression>();

  constructor(private readonly source: ts.SourceFile) {}

  /** Records `const name = value` declarations; at module level only literal ones (`const EXPECTED = 180`). */
  addConstants(list: ts.VariableDeclarationList, literalOnly: boolean): void {
    if (!(list.flags & ts.NodeFlags.Const)) return;
    for (const { name, initializer } of list.declarations) {
      if (ts.isIdentifier(name) && initializer && (!literalOnly || this.isLiteral(initializer)))
        this.values.set(name.text, initializer);
    }
  }

  /** Reads a test body with its own consts known, then forgets them. */
  withLocals(body: ts.Node, read: () => void): void {
    const outer = this.values;
    this.values = new Map(outer);
    const see = (node: ts.Node): void => {
      if (ts.isVariableDeclarationList(node)) this.addConstants(node, false);
      ts.forEachChild(node, see);
    };
    see(body);
    read();
    this.values = outer;
  }

  canonical(node: ts.Node, seen: ReadonlySet<string> = new Set()): string {
    if (ts.isParenthesizedExpression(node)) return this.canonical(node.expression, seen);
    if (ts.isStringLiteralLike(node)) return JSON.stringify(node.text);
    if (ts.isNumericLiteral(node)) return node.text;
    if (ts.isIdentifier(node)) {
      const value = isReference(node) && !seen.has(node.text) ? this.values.get(node.text) : undefined;
      return value ? this.canonical(value, new Set(seen).add(node.text)) : node.text;
    }
    const children = node.getChildren(this.source);
    if (!children.length) return node.getText(this.source);
    const trailingComma = node.kind === ts.SyntaxKind.SyntaxList && children.at(-1)?.kind === ts.SyntaxKind.CommaToken;
    return (trailingComma ? children.slice(0, -1) : children).map((child) => this.canonical(child, seen)).join(' ');
  }

  /** A value written out in the source (`180`, `'x'`, `true`, `[1, 2]`), so checking it checks no code. */
  isLiteral(node: ts.Expression): boolean {
    const e = this.resolve(node);
    if (ts.isArrayLiteralExpression(e)) return e.elements.every((element) => this.isLiteral(element));
    if (ts.isObjectLiteralExpression(e))
      return e.properties.every((p) => ts.isPropertyAssignment(p) && this.isLiteral(p.initializer));
    if (ts.isPrefixUnaryExpression(e)) return ts.isNumericLiteral(e.operand);
    return ts.isLiteralExpression(e) || this.constant(e) !== null;
  }

  /** The truth of a constant condition (`true`, `0`, `!1`, a const bound to one); null when it depends on the code. */
  constant(node: ts.Expression): boolean | null {
    const e = this.resolve(node);
    if (e.kind === ts.SyntaxKind.TrueKeyword) return true;
    if (e.kind === ts.SyntaxKind.FalseKeyword || e.kind === ts.SyntaxKind.NullKeyword) return false;
    if (ts.isIdentifier(e) && e.text === 'undefined') return false;
    if (ts.isNumericLiteral(e)) return Number(e.text) !== 0;
    if (ts.isStringLiteralLike(e)) return e.text !== '';
    if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.ExclamationToken) {
      const operand = this.constant(e.operand);
      return operand === null ? null : !operand;
    }
    return null;
  }

  private resolve(node: ts.Expression): ts.Expression {
    const seen = new Set<string>();
    for (let e = node; ;) {
      if (ts.isParenthesizedExpression(e)) e = e.expression;
      else if (ts.isIdentifier(e) && !seen.has(e.text) && this.values.has(e.text)) {
        seen.add(e.text);
        e = this.values.get(e.text)!;
      } else return e;
    }
  }
}

/** An identifier read as a value, not a property, key or declared name (`a.total`, `{ total: 1 }`, `const total`). */
function isReference(id: ts.Identifier): boolean {
  const parent = id.parent as ts.Node & { name?: ts.Node; propertyName?: ts.Node };
  return !parent || (parent.name !== id && parent.propertyName !== id);
}
