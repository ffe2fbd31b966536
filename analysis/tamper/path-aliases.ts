import path from 'node:path';
import ts from 'typescript';
import { escapeRegExp } from '../verification/proven-criteria';

// Path aliases: how a bare specifier such as `@/price` names a repository file. A mock of the module
// under test through an alias (`jest.mock('@/price')`) is as much a stand-in as `jest.mock('../src/price')`
// (mocked-module-under-test.ts). Read from the files that define them, at the repository's root:
// tsconfig.json / jsconfig.json `compilerOptions.paths` (with `baseUrl`), jest's `moduleNameMapper` (in
// package.json, or a jest config's `'^@/(.*)$': '<rootDir>/src/$1'` entries), and a Vite or Vitest config's
// `alias` entries naming a directory (`'@': path.resolve(__dirname, './src')`, `'@': '/src'`).

export interface PathAlias {
  pattern: RegExp;
  /** The repository path the specifier becomes, with `$1`… from the pattern's groups. */
  target: string;
}

export const ALIAS_FILES = [
  'tsconfig.json',
  'jsconfig.json',
  'package.json',
  'jest.config.js',
  'jest.config.cjs',
  'jest.config.mjs',
  'jest.config.ts',
  'vitest.config.ts',
  'vitest.config.mts',
  'vitest.config.js',
  'vitest.config.mjs',
  'vite.config.ts',
  'vite.config.js',
  'vite.config.mjs',
];

/** The aliases the files define (`texts`: each of ALIAS_FILES that exists, by name). */
export function pathAliases(texts: Record<string, string>): PathAlias[] {
  const aliases: PathAlias[] = [];
  for (const [file, text] of Object.entries(texts)) {
    if (file === 'tsconfig.json' || file === 'jsconfig.json') aliases.push(...compilerPaths(text));
    else if (file === 'package.json') aliases.push(...packageMapper(text));
    else if (file.startsWith('jest.config.')) aliases.push(...mapperEntries(text));
    else aliases.push(...viteAliases(text));
  }
  return aliases;
}

/** The repository paths `specifier` names through `aliases`, before extensions are tried; none when no alias matches. */
export function throughAliases(specifier: string, aliases: PathAlias[]): string[] {
  return aliases.flatMap(({ pattern, target }) => {
    const m = pattern.exec(specifier);
    if (!m) return [];
    const resolved = path.posix.normalize(target.replace(/\$(\d)/g, (_, n: string) => m[Number(n)] ?? ''));
    return resolved.startsWith('../') ? [] : [resolved.replace(/^\.\//, '').replace(/\/$/, '')];
  });
}

function compilerPaths(text: string): PathAlias[] {
  const { config } = ts.parseConfigFileTextToJson('tsconfig.json', text);
  const options = (config as { compilerOptions?: { baseUrl?: unknown; paths?: unknown } } | undefined)?.compilerOptions;
  if (!options || !isRecord(options.paths)) return [];
  const baseUrl = typeof options.baseUrl === 'string' ? options.baseUrl : '.';
  return Object.entries(options.paths).flatMap(([key, targets]) =>
    (Array.isArray(targets) ? targets : [])
      .filter((t): t is string => typeof t === 'string')
      .map((t) => ({
        pattern: new RegExp(`^${escapeRegExp(key).replace('\\*', '(.*)')}$`),
        target: path.posix.join(baseUrl, t.replace('*', '$1')),
      })),
  );
}

function packageMapper(text: string): PathAlias[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return [];
  }
  const mapper = isRecord(json) && isRecord(json.jest) ? json.jest.moduleNameMapper : undefined;
  if (!isRecord(mapper)) return [];
  return Object.entries(mapper).flatMap(([key, value]) => (typeof value === 'string' ? mapperAlias(key, value) : []));
}

/** `'^@/(.*)$': '<rootDir>/src/$1'` entries of a jest config, however it is written around them. */
function mapperEntries(text: string): PathAlias[] {
  const entry = /(['"`])(\^[^'"`]+)\1\s*:\s*(['"`])<rootDir>\/([^'"`]*)\3/g;
  return [...text.matchAll(entry)].flatMap((m) => mapperAlias(m[2]!, `<rootDir>/${m[4]!}`));
}

function mapperAlias(key: string, value: string): PathAlias[] {
  if (!value.startsWith('<rootDir>/')) return [];
  try {
    return [{ pattern: new RegExp(key), target: value.slice('<rootDir>/'.length) }];
  } catch {
    return [];
  }
}

/** `'@': path.resolve(__dirname, './src')`, `'@': fileURLToPath(new URL('./src', import.meta.url))`, `'@': '/src'`. */
function viteAliases(text: string): PathAlias[] {
  const entry =
    /(['"`])([@~#$][\w/-]*)\1\s*:\s*(?:[\w.]+\(\s*(?:__dirname\s*,\s*)?(?:new URL\(\s*)?)?(['"`])\.?\/([\w./-]*)\3/g;
  return [...text.matchAll(entry)].map((m) => ({
    pattern: new RegExp(`^${escapeRegExp(m[2]!)}(?:/(.*))?$`),
    target: `${m[4]!.replace(/\/$/, '')}/$1`,
  }));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
