import type { Layer } from './layer';
import type { WorkspaceFiles } from './workspace-files';

// go.mod and go.work: which modules the repository holds, the modules they require, and the gates the
// Go toolchain provides.

export interface GoFacts {
  /** The root go.mod's text; undefined when the root is no module (a go.work over modules below it). */
  mod: string | undefined;
  /**
   * The module directories a root go.work `use`s, as `go` patterns relative to the root (`./...`,
   * `./api/...`); undefined without a go.work.
   */
  workModules: string[] | undefined;
  golangciConfig: string | undefined;
}

export async function readGoFacts(files: WorkspaceFiles): Promise<GoFacts | undefined> {
  const mod = await files.manifest('go.mod');
  const work = await files.manifest('go.work');
  if (mod === undefined && work === undefined) return undefined;
  const golangciConfig = await files.firstFile(['.golangci.yml', '.golangci.yaml', '.golangci.toml', '.golangci.json']);
  return { mod, workModules: work === undefined ? undefined : goWorkPatterns(work, files.notes), golangciConfig };
}

/** Module directories a go.work `use`s, in both the single-line and the block form, as written. */
export function goWorkUses(text: string): string[] {
  const modules: string[] = [];
  let inBlock = false;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (inBlock) {
      if (line === ')') inBlock = false;
      else if (line) modules.push(unquote(line));
    } else if (/^use\s*\($/.test(line)) inBlock = true;
    else if (/^use\s+\S/.test(line)) modules.push(unquote(line.replace(/^use\s+/, '')));
  }
  return modules;
}

function unquote(word: string): string {
  return word.replace(/^(["`])(.*)\1$/, '$2');
}

/**
 * One `./<dir>/...` pattern per used module inside the repository. `./...` from the root does not do:
 * it stops at every nested module, and where the root is no module of the workspace go refuses it
 * ("directory prefix . does not contain modules listed in go.work"). A module outside the repository is
 * left out with a note.
 */
export function goWorkPatterns(text: string, notes: string[]): string[] {
  const patterns: string[] = [];
  for (const used of goWorkUses(text)) {
    const dir = used
      .replace(/\\/g, '/')
      .replace(/^(\.\/)+/, '')
      .replace(/\/+$/, '');
    if (dir.startsWith('/') || dir.split('/').includes('..')) {
      notes.push(`go.work uses ${used}, outside the repository; its packages are not tested`);
      continue;
    }
    const pattern = dir === '' || dir === '.' ? './...' : `./${dir}/...`;
    if (!patterns.includes(pattern)) patterns.push(pattern);
  }
  if (!patterns.length) notes.push('go.work uses no module inside the repository; go commands cover ./...');
  return patterns;
}

export function goRequires(mod: string | undefined, modulePath: string): boolean {
  if (mod === undefined) return false;
  // Matches `require x v1` and lines inside a `require ( … )` block; a module path may carry a /vN suffix.
  const escaped = modulePath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^\\s*(?:require\\s+)?${escaped}(?:/v\\d+)?\\s+v`, 'm').test(mod);
}

export function goInference(go: GoFacts): Layer {
  const work = go.workModules?.length ? go.workModules : undefined;
  const packages = work ?? ['./...'];
  const scope = work ? `go.work: every package of its ${work.length} module(s) (${work.join(' ')})` : undefined;
  const layer: Layer = {
    // -json: one event per test and subtest, so passes are counted and named (plain `go test` prints neither).
    tests: {
      argv: ['go', 'test', '-json', ...packages],
      detail: scope
        ? `${scope}, go test -json (a result per test, named by package)`
        : 'go.mod: go test -json over every package (a result per test)',
    },
    typecheck: {
      argv: ['go', 'vet', ...packages],
      detail: scope ? `${scope}, go vet` : 'go.mod: go vet (type-checks and vets every package)',
    },
    build: {
      argv: ['go', 'build', ...packages],
      detail: scope ? `${scope}, go build` : 'go.mod: go build over every package',
    },
  };
  // golangci-lint is not part of the Go toolchain; its config file says the repository uses it.
  if (go.golangciConfig) {
    layer.lint = {
      argv: ['golangci-lint', 'run', ...(work ?? [])],
      detail: `${work ? 'go.work' : 'go.mod'} with ${go.golangciConfig}`,
    };
  }
  return layer;
}
