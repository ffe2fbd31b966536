// A lexer for Java, Kotlin and Gradle's Groovy: enough to tell code from comments, strings and character
// literals, so a `//` inside a string, a brace in a text block or an assertion in a comment is read for
// what it is. The test-file inventory (jvm-test-inventory.ts) and the build-file views
// (build-file-views.ts) work from its tokens.
//
// Why not a real parser: `java-parser` (the Chevrotain grammar behind prettier-plugin-java) parses Java 17
// in milliseconds, but it and Chevrotain 11 are published as ES modules only, which the project's
// CommonJS runtime under jest cannot load without transforming node_modules; Kotlin and Groovy would
// still need a lexer like this one; and an inventory of test methods, annotations and assertion calls
// needs tokens and bracket matching, not a full syntax tree (as rust-test-modules.ts does for Rust).

export type JvmDialect = 'java' | 'kotlin' | 'groovy';

export interface Token {
  kind: 'word' | 'number' | 'string' | 'char' | 'symbol';
  /** As written; a Kotlin identifier in backticks keeps them. */
  text: string;
  /** 1-based line of the token's first character. */
  line: number;
  start: number;
  end: number;
}

export interface Lexed {
  tokens: Token[];
  /** [start, end) of every comment. */
  comments: [number, number][];
}

/** Longest first: `===` before `==`. */
const SYMBOLS = [
  '===',
  '!==',
  '...',
  '->',
  '::',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '?.',
  '?:',
  '!!',
  '++',
  '--',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
];
const NUMBER = /^(?:0[xX][\da-fA-F_]+|0[bB][01_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)[lLfFdDuU]*/;
const WORD = /^[A-Za-z_$\u00C0-\uFFFF][\w$\u00C0-\uFFFF]*/;

export function lexJvm(text: string, dialect: JvmDialect): Lexed {
  const tokens: Token[] = [];
  const comments: [number, number][] = [];
  let line = 1;
  let i = 0;
  const push = (kind: Token['kind'], end: number) => {
    tokens.push({ kind, text: text.slice(i, end), line, start: i, end });
    line += countNewlines(text, i, end);
    i = end;
  };
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '\n') {
      line++;
      i++;
    } else if (/\s/.test(ch)) i++;
    else if (text.startsWith('//', i)) {
      const end = text.indexOf('\n', i);
      comments.push([i, end < 0 ? text.length : end]);
      i = end < 0 ? text.length : end;
    } else if (text.startsWith('/*', i)) {
      const end = blockCommentEnd(text, i, dialect !== 'java');
      comments.push([i, end]);
      line += countNewlines(text, i, end);
      i = end;
    } else if (ch === '"' || (ch === "'" && dialect === 'groovy')) push('string', stringEnd(text, i, dialect));
    else if (ch === "'") push('char', charEnd(text, i));
    else if (ch === '`' && dialect === 'kotlin') {
      const end = text.indexOf('`', i + 1);
      push('word', end < 0 || text.slice(i, end).includes('\n') ? i + 1 : end + 1);
    } else if (/\d/.test(ch)) push('number', i + NUMBER.exec(text.slice(i, i + 80))![0].length);
    else {
      const word = WORD.exec(text.slice(i, i + 256));
      if (word) push('word', i + word[0].length);
      else push('symbol', i + (SYMBOLS.find((s) => text.startsWith(s, i))?.length ?? 1));
    }
  }
  return { tokens, comments };
}

/** `text` with every comment blanked (newlines kept, so line numbers hold); strings are left as they are. */
export function jvmWithoutComments(text: string, dialect: JvmDialect): string {
  const { comments } = lexJvm(text, dialect);
  let out = '';
  let at = 0;
  for (const [start, end] of comments) {
    out += text.slice(at, start) + text.slice(start, end).replace(/[^\n]/g, ' ');
    at = end;
  }
  return out + text.slice(at);
}

const OPENERS: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

/** For each opening bracket token ( [ {, the index of its closing token (the last token when unclosed). */
export function matchBrackets(tokens: Token[]): Map<number, number> {
  const pairs = new Map<number, number>();
  const open: number[] = [];
  tokens.forEach((token, index) => {
    if (token.kind !== 'symbol') return;
    if (token.text === '(' || token.text === '[' || token.text === '{') open.push(index);
    const opener = OPENERS[token.text];
    if (!opener) return;
    let at = open.length - 1;
    while (at >= 0 && tokens[open[at]!]!.text !== opener) at--;
    // A stray closer closes nothing; openers left unclosed inside this pair end with it.
    if (at >= 0) for (const o of open.splice(at)) pairs.set(o, index);
  });
  for (const o of open) pairs.set(o, tokens.length - 1);
  return pairs;
}

function countNewlines(text: string, from: number, to: number): number {
  let n = 0;
  for (let k = from; k < to; k++) if (text.charCodeAt(k) === 10) n++;
  return n;
}

/** Kotlin and Groovy block comments nest; Java's do not. */
function blockCommentEnd(text: string, start: number, nested: boolean): number {
  let depth = 0;
  let j = start;
  while (j < text.length) {
    if (text.startsWith('/*', j)) {
      depth = nested ? depth + 1 : 1;
      j += 2;
    } else if (text.startsWith('*/', j)) {
      depth--;
      j += 2;
      if (depth === 0) return j;
    } else j++;
  }
  return text.length;
}

/**
 * The end of the string starting at `start`: a text block or raw string (`"""…"""`), or a one-line
 * string with escapes. Kotlin and Groovy templates (`"${a["k"]}"`) may hold strings of their own.
 */
function stringEnd(text: string, start: number, dialect: JvmDialect): number {
  const quote = text[start]!;
  const triple = quote.repeat(3);
  const templates = dialect !== 'java' && quote === '"';
  if (text.startsWith(triple, start)) {
    let j = start + 3;
    while (j < text.length) {
      if (text[j] === '\\' && dialect !== 'kotlin') j += 2;
      else if (templates && text.startsWith('${', j)) j = templateEnd(text, j + 2, dialect);
      else if (text.startsWith(triple, j)) {
        j += 3;
        while (text[j] === quote) j++; // `""""` closes with the last three
        return j;
      } else j++;
    }
    return text.length;
  }
  let j = start + 1;
  while (j < text.length && text[j] !== '\n') {
    if (text[j] === '\\') j += 2;
    else if (templates && text.startsWith('${', j)) j = templateEnd(text, j + 2, dialect);
    else if (text[j] === quote) return j + 1;
    else j++;
  }
  return j; // unterminated: the string ends with its line
}

/** The index after the `}` closing a `${` template expression that starts at `from`. */
function templateEnd(text: string, from: number, dialect: JvmDialect): number {
  let depth = 1;
  let j = from;
  while (j < text.length) {
    const ch = text[j]!;
    if (ch === '"' || (ch === "'" && dialect === 'groovy')) j = stringEnd(text, j, dialect);
    else if (ch === '{') {
      depth++;
      j++;
    } else if (ch === '}') {
      j++;
      if (--depth === 0) return j;
    } else j++;
  }
  return text.length;
}

/** `'a'`, `'\n'`, `'\u0041'`; a lone quote is one character. */
function charEnd(text: string, start: number): number {
  const literal = /^'(?:\\u[\da-fA-F]{4}|\\.|[^\\'\n])'/.exec(text.slice(start, start + 10));
  return start + (literal ? literal[0].length : 1);
}
