// Python source as logical lines of tokens: just enough of Python's lexer to read a noxfile without
// running it (noxfile.ts). Brackets and backslashes join physical lines, comments are dropped, and a
// string is a literal only when nothing about it is computed (no f-string, bytes or escape) and it ends.

export interface Token {
  /** `op` is one character: an operator, a bracket, a digit; `computed` a string that is not a plain literal. */
  kind: 'name' | 'string' | 'computed' | 'op';
  text: string;
}

export interface LogicalLine {
  /** Columns of indentation of its first physical line. */
  indent: number;
  tokens: Token[];
}

const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const STRING_START = /([rRbBuUfF]{0,2})('''|"""|'|")/y;

export function logicalLines(source: string): LogicalLine[] {
  const lines: LogicalLine[] = [];
  let tokens: Token[] = [];
  let indent = 0;
  let depth = 0;
  let atLineStart = true;
  let i = 0;
  const endLine = () => {
    if (tokens.length) lines.push({ indent, tokens });
    tokens = [];
    atLineStart = true;
  };
  while (i < source.length) {
    const c = source[i]!;
    if (atLineStart) {
      const start = i;
      while (source[i] === ' ' || source[i] === '\t') i++;
      indent = i - start;
      atLineStart = false;
      continue;
    }
    if (c === '\n') {
      i++;
      if (depth === 0) endLine();
      continue;
    }
    if (c === '\\' && source[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (c === '#') {
      while (i < source.length && source[i] !== '\n') i++;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\f') {
      i++;
      continue;
    }
    STRING_START.lastIndex = i;
    const string = STRING_START.exec(source);
    if (string) {
      const [whole, prefix, quote] = string as unknown as [string, string, string];
      const end = closingQuote(source, i + whole.length, quote);
      const text = source.slice(i + whole.length, end.at);
      const literal = end.closed && !/[fFbB]/.test(prefix) && !end.escaped;
      tokens.push({ kind: literal ? 'string' : 'computed', text });
      i = end.at + (end.closed ? quote.length : 0);
      continue;
    }
    NAME.lastIndex = i;
    const name = NAME.exec(source);
    if (name) {
      tokens.push({ kind: 'name', text: name[0] });
      i += name[0].length;
      continue;
    }
    if ('([{'.includes(c)) depth++;
    if (')]}'.includes(c)) depth = Math.max(0, depth - 1);
    tokens.push({ kind: 'op', text: c });
    i++;
  }
  endLine();
  return lines;
}

/** Where a string's closing quote is; a one-line string ends unclosed at the end of its line. */
function closingQuote(source: string, from: number, quote: string): { at: number; closed: boolean; escaped: boolean } {
  let escaped = false;
  for (let i = from; i < source.length; i++) {
    if (source[i] === '\\') {
      escaped = true;
      i++;
    } else if (source.startsWith(quote, i)) {
      return { at: i, closed: true, escaped };
    } else if (source[i] === '\n' && quote.length === 1) {
      return { at: i, closed: false, escaped };
    }
  }
  return { at: source.length, closed: false, escaped };
}
