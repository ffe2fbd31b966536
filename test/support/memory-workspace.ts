import { WorkspaceFiles, type FileRead } from '../../analysis/gate-discovery/workspace-files';

// A workspace held in memory (relative path → text), for the pure gate discovery and setup inference.

export class MemoryWorkspace extends WorkspaceFiles {
  constructor(private readonly texts: Record<string, string>) {
    super([]);
  }

  override async read(rel: string): Promise<FileRead> {
    return Object.hasOwn(this.texts, rel) ? { kind: 'file', text: this.texts[rel]! } : { kind: 'absent' };
  }

  override async isFile(rel: string): Promise<boolean> {
    return Object.hasOwn(this.texts, rel);
  }

  override async findFile(dir: string, name: RegExp, maxDepth: number): Promise<string | undefined> {
    return Object.keys(this.texts).find((file) => {
      const below = file.startsWith(`${dir}/`) ? file.slice(dir.length + 1).split('/') : [];
      return below.length > 0 && below.length <= maxDepth && name.test(below[below.length - 1]!);
    });
  }

  override async directories(maxDepth: number): Promise<string[]> {
    const dirs = new Set<string>();
    for (const file of Object.keys(this.texts)) {
      const parts = file.split('/').slice(0, -1);
      for (let depth = 1; depth <= Math.min(maxDepth, parts.length); depth++) {
        if (parts.slice(0, depth).some((part) => part.startsWith('.') || part === 'node_modules')) break;
        dirs.add(parts.slice(0, depth).join('/'));
      }
    }
    return [...dirs];
  }
}
