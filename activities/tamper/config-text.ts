// Locating the part of a config file a gate reads: a JSON key (package.json scripts) or an
// INI/TOML section (pyproject.toml [tool.pytest…]), so a finding can point at the right line.

/** 1-based line of the object key at `keyPath` (e.g. ['scripts', 'test']), or null when absent. */
export function jsonKeyLine(text: string, keyPath: readonly string[]): number | null {
  const open: string[] = []; // the key each open object/array sits under ('' for the root and array items)
  let lastKey = '';
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\n') line++;
    else if (ch === '{' || ch === '[') {
      open.push(lastKey);
      lastKey = '';
    } else if (ch === '}' || ch === ']') open.pop();
    else if (ch === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      const raw = text.slice(i + 1, end); // unescaped text is enough: gate script names carry no escapes
      i = end;
      if (!/^\s*:/.test(text.slice(end + 1, end + 64))) continue;
      lastKey = raw;
      const here = [...open.slice(1), lastKey];
      if (here.length === keyPath.length && here.every((key, k) => key === keyPath[k])) return line;
    }
  }
  return null;
}

export interface SectionText {
  /** The header and body of every section named `section` or nested under it, in file order. */
  text: string;
  /** 1-based line of the first such header, or null when there is none. */
  line: number | null;
}

/** Sections of an INI/TOML file named `section` or `section.<sub>` (TOML sub-tables). */
export function sectionText(fileText: string, section: string): SectionText {
  const picked: string[] = [];
  let line: number | null = null;
  let inside = false;
  fileText.split('\n').forEach((text, index) => {
    const header = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:[#;].*)?$/.exec(text);
    if (header) {
      const name = header[1]!.replace(/["']/g, '');
      inside = name === section || name.startsWith(`${section}.`);
      if (inside) line ??= index + 1;
    }
    if (inside) picked.push(text.trimEnd());
  });
  return { text: picked.join('\n').trim(), line };
}
