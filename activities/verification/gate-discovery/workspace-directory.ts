import fs from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceFiles, type FileRead } from '../../../analysis/gate-discovery/workspace-files';

// Reading the workspace on disk: only regular files whose real path stays inside it.

const MAX_MANIFEST_BYTES = 1024 * 1024;

export class WorkspaceDirectory extends WorkspaceFiles {
  constructor(
    readonly root: string,
    notes: string[],
  ) {
    super(notes);
  }

  override async read(rel: string): Promise<FileRead> {
    const full = path.join(this.root, rel);
    let real: string;
    try {
      real = await fs.realpath(full);
    } catch {
      // A dangling symlink is there but unusable; only a missing path means absent.
      const there = await fs.lstat(full).then(
        () => true,
        () => false,
      );
      return there ? { kind: 'unreadable', reason: 'a symlink to nothing' } : { kind: 'absent' };
    }
    if (real !== this.root && !real.startsWith(this.root + path.sep)) return { kind: 'outside' };
    const stat = await fs.stat(real);
    if (!stat.isFile()) return { kind: 'unreadable', reason: 'not a regular file' };
    if (stat.size > MAX_MANIFEST_BYTES)
      return { kind: 'unreadable', reason: `larger than ${MAX_MANIFEST_BYTES} bytes` };
    return { kind: 'file', text: await fs.readFile(real, 'utf8') };
  }

  override async isFile(rel: string): Promise<boolean> {
    try {
      const real = await fs.realpath(path.join(this.root, rel));
      if (!real.startsWith(this.root + path.sep)) return false;
      return (await fs.stat(real)).isFile();
    } catch {
      return false;
    }
  }

  override async findFile(dir: string, name: RegExp, maxDepth: number): Promise<string | undefined> {
    // lstat: a symlinked directory may lead outside the workspace.
    if (!(await fs.lstat(path.join(this.root, dir)).catch(() => null))?.isDirectory()) return undefined;
    let level = [dir];
    for (let depth = 1; depth <= maxDepth; depth++) {
      const next: string[] = [];
      for (const d of level) {
        const entries = await fs.readdir(path.join(this.root, d), { withFileTypes: true }).catch(() => []);
        for (const e of entries) {
          if (e.isFile() && name.test(e.name)) return `${d}/${e.name}`;
          if (e.isDirectory() && !e.name.startsWith('.') && e.name !== 'node_modules') next.push(`${d}/${e.name}`);
        }
      }
      level = next.slice(0, 200);
    }
    return undefined;
  }

  override async directories(maxDepth: number): Promise<string[]> {
    const found: string[] = [];
    let level = [''];
    for (let depth = 1; depth <= maxDepth && found.length < 2000; depth++) {
      const next: string[] = [];
      for (const dir of level) {
        const entries = await fs.readdir(path.join(this.root, dir), { withFileTypes: true }).catch(() => []);
        for (const e of entries) {
          if (!e.isDirectory() || e.name === 'node_modules' || e.name.startsWith('.')) continue;
          next.push(dir ? `${dir}/${e.name}` : e.name);
        }
      }
      found.push(...next);
      level = next;
    }
    return found;
  }
}
