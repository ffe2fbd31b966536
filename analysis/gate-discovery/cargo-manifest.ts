import type { Layer } from './layer';
import { readToml, stringsOf, tableAt, type TomlTable } from './toml';
import type { WorkspaceFiles } from './workspace-files';

// Cargo.toml: its tables, the crates it depends on, and the gates cargo provides.

export interface CargoFacts {
  doc: TomlTable;
  clippyConfig: string | undefined;
}

export async function readCargoFacts(files: WorkspaceFiles): Promise<CargoFacts | undefined> {
  const doc = await readToml(files, 'Cargo.toml');
  if (doc === undefined) return undefined;
  return { doc, clippyConfig: await files.firstFile(['clippy.toml', '.clippy.toml']) };
}

export function cargoDependsOn(cargo: CargoFacts | undefined, crate: string): boolean {
  return tableAt(cargo?.doc, 'dependencies')?.[crate] !== undefined;
}

/** A `[workspace]` table: cargo commands then cover every member. */
export function cargoWorkspace(cargo: CargoFacts | undefined): boolean {
  return tableAt(cargo?.doc, 'workspace') !== undefined;
}

/** Workspace members declared in `[workspace] members`; a monorepo only when there are some. */
export function cargoMembers(cargo: CargoFacts | undefined): string[] {
  return stringsOf(tableAt(cargo?.doc, 'workspace')?.members);
}

export function cargoInference(cargo: CargoFacts): Layer {
  const ws = cargoWorkspace(cargo) ? ['--workspace'] : [];
  const scope = ws.length ? 'Cargo.toml [workspace]: every member' : 'Cargo.toml';
  const layer: Layer = {
    tests: { argv: ['cargo', 'test', ...ws], detail: `${scope}, cargo test` },
    typecheck: { argv: ['cargo', 'check', ...ws], detail: `${scope}, cargo check` },
    build: { argv: ['cargo', 'build', ...ws], detail: `${scope}, cargo build` },
  };
  // Clippy only when the repository configured it: it is an optional rustup component, and code that never
  // ran it often has warnings that `-D warnings` would turn into a failure the change did not cause.
  const clippy = cargo.clippyConfig ?? (clippyLintsTable(cargo.doc) ? 'Cargo.toml [lints.clippy]' : undefined);
  if (clippy) {
    layer.lint = {
      argv: ['cargo', 'clippy', ...ws, '--', '-D', 'warnings'],
      detail: `${scope}, clippy configured in ${clippy}`,
    };
  }
  return layer;
}

function clippyLintsTable(doc: TomlTable): boolean {
  return ['lints', 'workspace.lints'].some((t) => tableAt(doc, t)?.clippy !== undefined);
}
