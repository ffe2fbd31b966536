// A Rust file's unit tests live in it beside the code (`#[cfg(test)] mod tests { … }`). The frozen run
// (docs/design.md §3.4) must run the base tests against the maker's code, so for such a file it cannot
// put the whole base file back: it takes the maker's file with every test module replaced by the
// base's — a module the maker disabled, emptied, renamed or moved away is replaced or put back.

interface Span {
  /** Where the module's attributes start, and where its closing brace ends. */
  start: number;
  end: number;
  name: string;
}

/** The maker's `checkpoint` text with the test modules of `base` in place of its own. */
export function withBaseTestModules(base: string, checkpoint: string): string {
  const baseModules = testModules(base);
  const names = new Set(baseModules.map((m) => m.name));
  // The maker's modules of the same names go (whatever their attributes), and so do its test modules.
  const ours = modules(checkpoint).filter((m) => names.has(m.name) || isTestModule(checkpoint, m));
  let text = checkpoint;
  for (const m of [...ours].sort((a, b) => b.start - a.start)) text = text.slice(0, m.start) + text.slice(m.end);
  const restored = baseModules.map((m) => base.slice(m.start, m.end)).join('\n\n');
  return restored ? `${text.replace(/\s*$/, '')}\n\n${restored}\n` : text;
}

/** Whether a 1-based line of `text` lies inside one of its test modules. */
export function inTestModule(text: string): (line: number) => boolean {
  const starts = lineStarts(text);
  const ranges = testModules(text).map((m) => [lineAt(starts, m.start), lineAt(starts, m.end - 1)] as const);
  return (line) => ranges.some(([from, to]) => from <= line && line <= to);
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

function lineAt(starts: number[], offset: number): number {
  let line = 0;
  while (line + 1 < starts.length && starts[line + 1]! <= offset) line++;
  return line + 1;
}

/** The modules of `text` marked `#[cfg(test)]`. */
export function testModules(text: string): Span[] {
  return modules(text).filter((m) => isTestModule(text, m));
}

function isTestModule(text: string, m: Span): boolean {
  return /#\[\s*cfg\s*\(\s*test\s*\)\s*\]/.test(text.slice(m.start, text.indexOf('mod', m.start)));
}

/** Inline modules at any depth (`mod name { … }`), each with the attributes above it. */
function modules(text: string): Span[] {
  const code = masked(text);
  const spans: Span[] = [];
  const declaration = /(?:^|\n)([ \t]*(?:#\[[^\n]*\][ \t]*\n[ \t]*)*)(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*\{/g;
  for (const m of code.matchAll(declaration)) {
    const start = m.index + m[0].indexOf(m[1]!);
    const open = m.index + m[0].length - 1;
    const close = matchingBrace(code, open);
    if (close < 0) continue;
    spans.push({ start, end: close + 1, name: m[2]! });
  }
  // A module inside another is removed with it.
  return spans.filter((s) => !spans.some((o) => o !== s && o.start <= s.start && s.end <= o.end));
}

function matchingBrace(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    if (code[i] === '{') depth++;
    else if (code[i] === '}' && --depth === 0) return i;
  }
  return -1;
}

/**
 * `text` with comments, strings and character literals blanked (same length), so braces and `mod`
 * inside them do not count. Raw strings (`r#"…"#`) included; lifetimes (`'a`) are left alone.
 */
function masked(text: string): string {
  const out = text.split('');
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i, i + 3);
    if (rest.startsWith('//')) {
      const end = text.indexOf('\n', i);
      blank(i, end < 0 ? text.length : end);
      i = end < 0 ? text.length : end;
    } else if (rest.startsWith('/*')) {
      let depth = 0;
      let j = i;
      do {
        if (text.startsWith('/*', j)) {
          depth++;
          j += 2;
        } else if (text.startsWith('*/', j)) {
          depth--;
          j += 2;
        } else j++;
      } while (depth > 0 && j < text.length);
      blank(i, j);
      i = j;
    } else if (/^r#*"/.test(rest) || /^br#*"/.test(rest)) {
      const raw = /^b?r(#*)"/.exec(text.slice(i))!;
      const end = text.indexOf(`"${raw[1]}`, i + raw[0].length);
      const to = end < 0 ? text.length : end + 1 + raw[1]!.length;
      blank(i, to);
      i = to;
    } else if (text[i] === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      blank(i, j + 1);
      i = j + 1;
    } else if (text[i] === "'" && /^'(?:\\.[^']*|[^\\'])'/.test(text.slice(i, i + 12))) {
      const j = text.indexOf("'", i + 2);
      blank(i, j + 1);
      i = j + 1;
    } else i++;
  }
  return out.join('');
}
