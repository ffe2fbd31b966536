import type { Layer } from './layer';
import type { WorkspaceFiles } from './workspace-files';

// go.mod: its presence, the modules it requires, and the gates the Go toolchain provides.

export interface GoFacts {
  mod: string;
  golangciConfig: string | undefined;
}

export async function readGoFacts(files: WorkspaceFiles): Promise<GoFacts | undefined> {
  const mod = await files.manifest('go.mod');
  if (mod === undefined) return undefined;
  const golangciConfig = await files.firstFile(['.golangci.yml', '.golangci.yaml', '.golangci.toml', '.golangci.json']);
  return { mod, golangciConfig };
}

export function goRequires(mod: string, modulePath: string): boolean {
  // Matches `require x v1` and lines inside a `require ( … )` block; a module path may carry a /vN suffix.
  const escaped = modulePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^\\s*(?:require\\s+)?${escaped}(?:/v\\d+)?\\s+v`, 'm').test(mod);
}

export function goInference(go: GoFacts): Layer {
  const layer: Layer = {
    // -json: one event per test and subtest, so passes are counted and named (plain `go test` prints neither).
    tests: {
      argv: ['go', 'test', '-json', './...'],
      detail: 'go.mod: go test -json over every package (a result per test)',
    },
    typecheck: { argv: ['go', 'vet', './...'], detail: 'go.mod: go vet (type-checks and vets every package)' },
    build: { argv: ['go', 'build', './...'], detail: 'go.mod: go build over every package' },
  };
  // golangci-lint is not part of the Go toolchain; its config file says the repository uses it.
  if (go.golangciConfig) layer.lint = { argv: ['golangci-lint', 'run'], detail: `go.mod with ${go.golangciConfig}` };
  return layer;
}
