import type { Layer } from './layer';
import { tomlTables } from './toml-scan';
import type { WorkspaceFiles } from './workspace-files';

// Cargo.toml: its tables, the crates it depends on, and the gates cargo provides.

export interface CargoFacts {
  tables: Map<string, string>;
  clippyConfig: string | undefined;
}

export async function readCargoFacts(files: WorkspaceFiles): Promise<CargoFacts | undefined> {
  const text = await files.manifest('Cargo.toml');
  if (text === undefined) return undefined;
  return { tables: tomlTables(text), clippyConfig: await files.firstFile(['clippy.toml', '.clippy.toml']) };
}

export function cargoDependsOn(cargo: CargoFacts | undefined, crate: string): boolean {
  const deps = cargo?.tables.get('dependencies') ?? '';
  return new RegExp(`^\\s*${crate}\\s*=`, 'm').test(deps) || cargo?.tables.has(`dependencies.${crate}`) === true;
}

export function cargoInference(cargo: CargoFacts): Layer {
  const ws = cargo.tables.has('workspace') ? ['--workspace'] : [];
  const scope = ws.length ? 'Cargo.toml [workspace]: every member' : 'Cargo.toml';
  const layer: Layer = {
    tests: { argv: ['cargo', 'test', ...ws], detail: `${scope}, cargo test` },
    typecheck: { argv: ['cargo', 'check', ...ws], detail: `${scope}, cargo check` },
    build: { argv: ['cargo', 'build', ...ws], detail: `${scope}, cargo build` },
  };
  // Clippy only when the repository configured it: it is an optional rustup component, and code that never
  // ran it often has warnings that `-D warnings` would turn into a failure the change did not cause.
  const clippy = cargo.clippyConfig ?? (clippyLintsTable(cargo.tables) ? 'Cargo.toml [lints.clippy]' : undefined);
  if (clippy) {
    layer.lint = { argv: ['cargo', 'clippy', ...ws, '--', '-D', 'warnings'], detail: `${scope}, clippy configured in ${clippy}` };
  }
  return layer;
}

function clippyLintsTable(tables: Map<string, string>): boolean {
  return ['lints', 'workspace.lints'].some(
    (t) => tables.has(`${t}.clippy`) || /^\s*clippy\s*=/m.test(tables.get(t) ?? ''),
  );
}
