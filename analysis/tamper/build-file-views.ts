import { jvmWithoutComments, lexJvm, matchBrackets } from './jvm-lexer';

// The part of a JVM build file a gate reads, as a "section" of it (config-text.ts): the GATE_ENTRYPOINT_CHANGED
// rule compares it between base and checkpoint, and verification puts the base's back
// (activities/verification/protected-files.ts), as it does for an INI/TOML section.
//
// A pom.xml is the whole file except what a fix may legitimately add: the project's <dependencies> and
// <dependencyManagement>, and version properties (`<commons-lang3.version>`) nothing outside them names.
// Everything else changes what `mvn test` runs or how it judges it — <build> and its plugins (surefire's
// <skipTests>, <testFailureIgnore>, <excludes>), <properties> such as skipTests, maven.test.skip,
// maven.test.failure.ignore and surefire.*, <testSourceDirectory>, <modules>, <profiles>, <parent> — so
// it is protected whole. A Gradle build script is the whole script except its top-level
// `dependencies { … }` blocks, when they only declare dependencies: `test { … }` blocks, exclude,
// ignoreFailures, `enabled = false`, onlyIf and filters sit outside them. A dependency the maker drops
// (a JUnit engine, say) is left to the runner's counts: FEWER_TESTS_RUN.
//
// Each view is canonical text — comments and formatting left out, one XML tag per line — so
// reformatting a file is no change, and a view with the maker's dependencies put back reads as the
// base's view again, which is how the restore checks itself.

/** Section names of the views, as GateEntrypoints.sections keys them (`pom.xml#<name>`). */
export const POM_VIEW = 'project outside <dependencies>';
export const GRADLE_VIEW = 'build script outside dependencies { }';

export interface BuildFileView {
  /** The canonical text a gate reads; '' for an absent or empty file. */
  text(fileText: string): string;
  /** `fileText` with everything but the maker's part replaced by `view` (a base `text()`). */
  restore(fileText: string, view: string): string;
}

export const BUILD_FILE_VIEWS: Record<string, BuildFileView> = {
  [POM_VIEW]: { text: (file) => pomParts(file).kept.join('\n'), restore: withPomView },
  [GRADLE_VIEW]: { text: (file) => gradleParts(file).kept, restore: withGradleView },
};

// ---- pom.xml ----

interface XmlLine {
  text: string;
  kind: 'open' | 'close' | 'empty' | 'text' | 'other' | 'element';
  name: string;
  /** Elements open around it: 0 for the root element's own tags. */
  depth: number;
}

const MAKERS_ELEMENTS = new Set(['dependencies', 'dependencyManagement']);
/** `junit.version`, `version.junit`, `junit-version`, `junitVersion`. */
const VERSION_PROPERTY = /(?:^|[._-])version$|^version[._-]|[a-z\d]Version$/;

/** The pom's lines without the maker's part, and that part: dependency blocks and free version properties. */
function pomParts(text: string): { kept: string[]; dependencies: string[]; properties: string[] } {
  const lines = xmlLines(text);
  const dependencies: string[] = [];
  /** Version properties by the line that starts each, with all their lines. */
  const candidates = new Map<number, number[]>();
  const drop = new Set<number>();
  let propertiesOpen = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.depth === 1 && line.kind === 'open' && MAKERS_ELEMENTS.has(line.name)) {
      const end = closing(lines, i);
      for (let k = i; k <= end; k++) {
        drop.add(k);
        dependencies.push(lines[k]!.text);
      }
      i = end;
    } else if (line.depth === 1 && line.kind === 'open' && line.name === 'properties') propertiesOpen = i;
    else if (line.depth === 2 && propertiesOpen >= 0 && VERSION_PROPERTY.test(line.name) && line.kind !== 'close') {
      const end = line.kind === 'open' ? closing(lines, i) : i;
      candidates.set(
        i,
        Array.from({ length: end - i + 1 }, (_, k) => i + k),
      );
      i = end;
    } else if (line.depth === 1 && line.kind === 'close' && line.name === 'properties') propertiesOpen = -1;
  }
  const candidateLines = new Set([...candidates.values()].flat());
  const named = lines
    .filter((_, i) => !drop.has(i) && !candidateLines.has(i))
    .map((l) => l.text)
    .join('\n');
  const properties: string[] = [];
  for (const [start, own] of candidates) {
    // A version property named outside the dependencies (a plugin's version, say) is the build's.
    if (named.includes(`\${${lines[start]!.name}}`)) continue;
    for (const k of own) {
      drop.add(k);
      properties.push(lines[k]!.text);
    }
  }
  // A <properties> element left empty is no properties element.
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.depth !== 1 || line.name !== 'properties' || line.kind !== 'open') continue;
    const end = closing(lines, i);
    if (lines.slice(i + 1, end).every((_, k) => drop.has(i + 1 + k))) drop.add(i).add(end);
  }
  return { kept: lines.filter((_, i) => !drop.has(i)).map((l) => l.text), dependencies, properties };
}

/** The base's view with the checkpoint's dependencies and free version properties put back where they belong. */
function withPomView(fileText: string, view: string): string {
  const { dependencies, properties } = pomParts(fileText);
  if (!view) return fileText;
  const lines = xmlLines(view);
  const texts = lines.map((l) => l.text);
  let rootClose = lines.length - 1;
  while (rootClose >= 0 && !(lines[rootClose]!.depth === 0 && lines[rootClose]!.kind === 'close')) rootClose--;
  if (rootClose < 0) return fileText;
  const propertiesClose = lines.findIndex((l) => l.depth === 1 && l.kind === 'close' && l.name === 'properties');
  texts.splice(rootClose, 0, ...dependencies);
  if (properties.length && propertiesClose >= 0) texts.splice(propertiesClose, 0, ...properties);
  else if (properties.length) texts.splice(rootClose, 0, '<properties>', ...properties, '</properties>');
  return `${texts.join('\n')}\n`;
}

/** Index of the line closing the element opened at `open`. */
function closing(lines: XmlLine[], open: number): number {
  const { depth, name } = lines[open]!;
  for (let k = open + 1; k < lines.length; k++) {
    const line = lines[k]!;
    if (line.depth === depth && line.kind === 'close' && line.name === name) return k;
    if (line.depth < depth) return k - 1;
  }
  return lines.length - 1;
}

/**
 * A pom as canonical lines: comments dropped, whitespace in tags and text collapsed, one tag per line,
 * and an element holding only text (`<skipTests>true</skipTests>`) on one line.
 */
function xmlLines(text: string): XmlLine[] {
  const tokens: Omit<XmlLine, 'depth'>[] = [];
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i + 4);
      i = end < 0 ? text.length : end + 3;
    } else if (text.startsWith('<![CDATA[', i)) {
      const end = text.indexOf(']]>', i);
      const stop = end < 0 ? text.length : end + 3;
      tokens.push({ kind: 'text', name: '', text: text.slice(i, stop) });
      i = stop;
    } else if (text[i] === '<') {
      let j = i + 1;
      let quote: string | null = null;
      while (j < text.length && (quote || text[j] !== '>')) {
        if (quote) {
          if (text[j] === quote) quote = null;
        } else if (text[j] === '"' || text[j] === "'") quote = text[j]!;
        j++;
      }
      const tag = text
        .slice(i, j + 1)
        .replace(/\s+/g, ' ')
        .replace(/\s*(\/?>)$/, '$1');
      i = j + 1;
      const name = /^<\/?\s*([^\s/>]+)/.exec(tag)?.[1] ?? '';
      if (/^<[?!]/.test(tag)) tokens.push({ kind: 'other', name: '', text: tag });
      else if (tag.startsWith('</')) tokens.push({ kind: 'close', name, text: tag });
      else tokens.push({ kind: tag.endsWith('/>') ? 'empty' : 'open', name, text: tag });
    } else {
      const next = text.indexOf('<', i);
      const stop = next < 0 ? text.length : next;
      const words = text.slice(i, stop).replace(/\s+/g, ' ').trim();
      if (words) tokens.push({ kind: 'text', name: '', text: words });
      i = stop;
    }
  }
  const lines: XmlLine[] = [];
  let depth = 0;
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k]!;
    const [second, third] = [tokens[k + 1], tokens[k + 2]];
    if (token.kind === 'open' && second?.kind === 'text' && third?.kind === 'close' && third.name === token.name) {
      lines.push({ kind: 'element', name: token.name, text: token.text + second.text + third.text, depth });
      k += 2;
    } else if (token.kind === 'open' && second?.kind === 'close' && second.name === token.name) {
      lines.push({ kind: 'element', name: token.name, text: token.text + second.text, depth });
      k += 1;
    } else if (token.kind === 'open') lines.push({ ...token, depth: depth++ });
    else if (token.kind === 'close') lines.push({ ...token, depth: (depth = Math.max(0, depth - 1)) });
    else lines.push({ ...token, depth });
  }
  return lines;
}

// ---- Gradle build scripts ----

/** Words that configure tasks or the build rather than declare a dependency. */
const NOT_A_DEPENDENCY = new Set([
  'tasks',
  'task',
  'test',
  'Test',
  'enabled',
  'ignoreFailures',
  'onlyIf',
  'filter',
  'afterEvaluate',
  'beforeEvaluate',
  'gradle',
  'rootProject',
  'allprojects',
  'subprojects',
  'System',
  'doFirst',
  'doLast',
  'configure',
  'configureEach',
  'withType',
  'exec',
  'javaexec',
  'ant',
  'ext',
  'extra',
  'apply',
  'plugins',
  'setProperty',
  'startParameter',
  'buildscript',
]);

/** The script without its top-level declarative `dependencies { … }` blocks (canonical), and those blocks. */
function gradleParts(text: string): { kept: string; blocks: string[] } {
  const tokens = lexJvm(text, 'groovy').tokens;
  const pairs = matchBrackets(tokens);
  const blocks: [number, number][] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (pairs.has(i)) {
      i = pairs.get(i)!; // nested blocks are the build's: only top-level dependency blocks are the maker's
      continue;
    }
    if (token.text !== 'dependencies' || tokens[i + 1]?.text !== '{') continue;
    const close = pairs.get(i + 1) ?? i + 1;
    const inside = tokens.slice(i + 2, close);
    // `libs.test.junit` (a version catalog entry) names a dependency; a bare `test` configures a task.
    const declarative = inside.every(
      (t, k) =>
        !(t.kind === 'word' && NOT_A_DEPENDENCY.has(t.text) && !['.', '?.'].includes(inside[k - 1]?.text ?? '')) &&
        !(t.kind === 'symbol' && (t.text === '=' || t.text === '+=')) &&
        !(t.text === 'project' && inside[k + 1]?.text === '.'),
    );
    if (declarative) blocks.push([token.start, tokens[close]!.end]);
    i = close;
  }
  let kept = '';
  let at = 0;
  for (const [start, end] of blocks) {
    kept += `${text.slice(at, start)}\n`;
    at = end;
  }
  kept += text.slice(at);
  return {
    kept: jvmWithoutComments(kept, 'groovy')
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .join('\n'),
    blocks: blocks.map(([start, end]) => text.slice(start, end)),
  };
}

/** The base's view, then the checkpoint's dependency blocks. */
function withGradleView(fileText: string, view: string): string {
  const { blocks } = gradleParts(fileText);
  return `${[view, ...blocks].filter(Boolean).join('\n\n')}\n`;
}
