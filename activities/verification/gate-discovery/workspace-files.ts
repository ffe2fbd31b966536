import fs from 'node:fs/promises';
import path from 'node:path';

// Reading the workspace: only regular files whose real path stays inside it.

const MAX_MANIFEST_BYTES = 1024 * 1024;

export type FileRead =
  | { kind: 'absent' }
  | { kind: 'outside' }
  | { kind: 'unreadable'; reason: string }
  | { kind: 'file'; text: string };

export class WorkspaceFiles {
  constructor(
    readonly root: string,
    readonly notes: string[],
  ) {}

  async read(rel: string): Promise<FileRead> {
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
    if (stat.size > MAX_MANIFEST_BYTES) return { kind: 'unreadable', reason: `larger than ${MAX_MANIFEST_BYTES} bytes` };
    return { kind: 'file', text: await fs.readFile(real, 'utf8') };
  }

  /** A manifest's text, or undefined; anything odd about it becomes a note, not a failure. */
  async manifest(rel: string): Promise<string | undefined> {
    const read = await this.read(rel);
    if (read.kind === 'outside') this.notes.push(`${rel} resolves outside the workspace; ignored`);
    if (read.kind === 'unreadable') this.notes.push(`${rel} ignored: ${read.reason}`);
    return read.kind === 'file' ? read.text : undefined;
  }

  async isFile(rel: string): Promise<boolean> {
    try {
      const real = await fs.realpath(path.join(this.root, rel));
      if (!real.startsWith(this.root + path.sep)) return false;
      return (await fs.stat(real)).isFile();
    } catch {
      return false;
    }
  }

  async firstFile(candidates: readonly string[]): Promise<string | undefined> {
    for (const rel of candidates) if (await this.isFile(rel)) return rel;
    return undefined;
  }

  /** The first regular file (not a symlink) below `dir`, up to maxDepth levels, whose name matches; skips dot dirs. */
  async findFile(dir: string, name: RegExp, maxDepth: number): Promise<string | undefined> {
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

  /** Real directories (not symlinks) up to maxDepth below the root, skipping dependencies and dot dirs. */
  async directories(maxDepth: number): Promise<string[]> {
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
