import { createRequire } from 'node:module';
import type * as SmolToml from 'smol-toml' with { 'resolution-mode': 'import' };
import { isRecord } from './util';
import type { WorkspaceFiles } from './workspace-files';

// TOML manifests (pyproject.toml, Cargo.toml) read with smol-toml, a maintained TOML 1.0 parser.
// smol-toml ships CommonJS too (its `require` export), but its type declarations are ESM only, so
// the types are imported as ESM and the module is loaded with require.
const { parse, TomlError } = createRequire(__filename)('smol-toml') as typeof SmolToml;

export type TomlTable = Record<string, unknown>;

/** The parsed document, or undefined when absent or unusable; a file that is not TOML becomes a note. */
export async function readToml(files: WorkspaceFiles, rel: string): Promise<TomlTable | undefined> {
  const text = await files.manifest(rel);
  return text === undefined ? undefined : parseToml(text, rel, files.notes);
}

/** A manifest's text parsed; one that is not TOML is read as empty, with a note naming `rel`. */
export function parseToml(text: string, rel: string, notes: string[]): TomlTable {
  try {
    return parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    const reason = error instanceof TomlError ? error.message.split('\n')[0] : String(error);
    notes.push(`${rel} is not valid TOML (${reason}); read as empty`);
    return {};
  }
}

/** The table at a dotted path (`tool.pytest.ini_options`), or undefined when any part is missing or not a table. */
export function tableAt(doc: TomlTable | undefined, dotted: string): TomlTable | undefined {
  let at: unknown = doc;
  for (const key of dotted.split('.')) {
    if (!isRecord(at)) return undefined;
    at = at[key];
  }
  return isRecord(at) ? at : undefined;
}

/** The strings of an array value; anything else is left out. */
export function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
