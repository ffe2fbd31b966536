import path from 'node:path';
import { jvmWithoutComments } from './jvm-lexer';

// Test-marker, suppression and assertion syntax differs per language, so rules look at files by extension.

export type Language = 'javascript' | 'python' | 'go' | 'rust' | 'java' | 'kotlin';

const EXTENSIONS: Record<string, Language> = {
  '.js': 'javascript',
  '.jsx': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.ts': 'javascript',
  '.tsx': 'javascript',
  '.mts': 'javascript',
  '.cts': 'javascript',
  '.vue': 'javascript',
  '.svelte': 'javascript',
  '.astro': 'javascript',
  '.py': 'python',
  '.pyi': 'python',
  '.go': 'go',
  '.rs': 'rust',
  '.java': 'java',
  // `.kts` is a script (build.gradle.kts, settings.gradle.kts): build configuration, which the gate
  // entrypoint rule protects (gate-entrypoints.ts), never test source a runner loads.
  '.kt': 'kotlin',
};

/** Type stubs declare, they do not run: no test runner loads them. */
const DECLARATIONS_ONLY = new Set(['.pyi']);

export function languageOf(file: string): Language | null {
  return EXTENSIONS[path.posix.extname(file).toLowerCase()] ?? null;
}

/** Source a test runner would load: `sum.test.js` is, `sum.test.js.bak` and `x_test.txt` are not. */
export function isRunnableSource(file: string): boolean {
  return languageOf(file) !== null && !DECLARATIONS_ONLY.has(path.posix.extname(file).toLowerCase());
}

/** Text without comments, so a commented-out test or assertion no longer counts. */
export function withoutComments(text: string, language: Language): string {
  if (language === 'python') return text.replace(/#.*$/gm, '');
  // Java and Kotlin through their lexer: a `//` or `/*` inside a string or text block is no comment.
  if (language === 'java' || language === 'kotlin') return jvmWithoutComments(text, language);
  // `(?<!:)` keeps URLs such as http://host inside strings.
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(?<!:)\/\/.*$/gm, '');
}
