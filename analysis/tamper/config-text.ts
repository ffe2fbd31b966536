import { BUILD_FILE_VIEWS } from './build-file-views';

// The part of a config file a gate reads: a JSON key (package.json scripts), an INI/TOML section
// (pyproject.toml [tool.pytest…]) or a build file's view (pom.xml outside its dependencies:
// build-file-views.ts) — its value, the line a finding points at, and putting back the base version of
// a section for verification.

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

/**
 * Sections of an INI/TOML file named `section` or `section.<sub>` (TOML sub-tables), or, for a section
 * build-file-views.ts names, that part of a pom.xml or Gradle build script.
 */
export function sectionText(fileText: string, section: string): SectionText {
  const view = BUILD_FILE_VIEWS[section];
  if (view) {
    const text = view.text(fileText);
    return { text, line: text ? 1 : null };
  }
  const picked: string[] = [];
  let line: number | null = null;
  let inside = false;
  fileText.split('\n').forEach((text, index) => {
    const name = headerName(text);
    if (name !== null) {
      inside = inSection(name, section);
      if (inside) line ??= index + 1;
    }
    if (inside) picked.push(text.trimEnd());
  });
  return { text: picked.join('\n').trim(), line };
}

/**
 * `fileText` with every block of `section` (as sectionText reads it) replaced by `replacement`, a
 * sectionText text: where the first block stood, else at the end. An empty replacement removes it.
 */
export function withSectionText(fileText: string, section: string, replacement: string): string {
  const view = BUILD_FILE_VIEWS[section];
  if (view) return view.restore(fileText, replacement);
  const kept: string[] = [];
  let at: number | null = null;
  let inside = false;
  for (const text of fileText.split('\n')) {
    const name = headerName(text);
    if (name !== null) inside = inSection(name, section);
    if (inside) at ??= kept.length;
    else kept.push(text);
  }
  const block = replacement ? [...replacement.split('\n'), ''] : [];
  if (at === null) {
    at = kept.length;
    if (block.length && kept.length && kept[kept.length - 1] !== '') block.unshift('');
  }
  kept.splice(at, 0, ...block);
  return kept.join('\n');
}

function headerName(line: string): string | null {
  const header = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:[#;].*)?$/.exec(line);
  return header ? header[1]!.replace(/["']/g, '') : null;
}

function inSection(name: string, section: string): boolean {
  return name === section || name.startsWith(`${section}.`);
}

export function parseJson(text: string | null): unknown {
  try {
    return text === null ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined; // a package.json that no longer parses has lost every script a gate named
  }
}

/** `scripts.test:unit` → ['scripts', 'test:unit']; top-level tool keys (`jest`) have no dot. */
export function packageKeyPath(key: string): string[] {
  const dot = key.indexOf('.');
  return dot < 0 ? [key] : [key.slice(0, dot), key.slice(dot + 1)];
}

export function valueAt(json: unknown, keyPath: readonly string[]): unknown {
  return keyPath.reduce<unknown>((node, key) => (isObject(node) ? node[key] : undefined), json);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}
