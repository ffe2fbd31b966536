// Just enough TOML for the few tables and keys inference reads; not a TOML parser.

/** Table name → body text (comments removed). Keys before the first header are under ''. */
export function tomlTables(text: string): Map<string, string> {
  const tables = new Map<string, string>();
  let current = '';
  const body: string[] = [];
  const flush = () => tables.set(current, [tables.get(current), ...body.splice(0)].filter(Boolean).join('\n'));
  for (const line of text.split(/\r?\n/).map(stripTomlComment)) {
    const header = /^\s*\[{1,2}\s*([^\]]+?)\s*\]{1,2}\s*$/.exec(line);
    if (header) {
      flush();
      current = header[1]!.replace(/\s*\.\s*/g, '.').replace(/"/g, '');
      tables.set(current, tables.get(current) ?? '');
    } else {
      body.push(line);
    }
  }
  flush();
  return tables;
}

function stripTomlComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#') return line.slice(0, i);
  }
  return line;
}

export function quotedStrings(text: string): string[] {
  return [...text.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'/g)].map((m) => m[1] ?? m[2] ?? '');
}

/** The text of the array assigned to `key` in a table body, brackets in strings (extras) respected. */
export function tomlArray(body: string, key: string): string {
  const start = new RegExp(`^\\s*"?${key}"?\\s*=\\s*\\[`, 'm').exec(body);
  if (!start) return '';
  let depth = 0;
  let quote: string | null = null;
  for (let i = start.index + start[0].length - 1; i < body.length; i++) {
    const c = body[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return body.slice(start.index, i + 1);
  }
  return body.slice(start.index);
}
