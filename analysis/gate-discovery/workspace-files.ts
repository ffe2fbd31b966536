// What gate discovery and setup inference read of a workspace: activities/ reads the checkout on disk
// (activities/verification/gate-discovery/workspace-directory.ts), tests hand in texts.

export type FileRead =
  { kind: 'absent' } | { kind: 'outside' } | { kind: 'unreadable'; reason: string } | { kind: 'file'; text: string };

export abstract class WorkspaceFiles {
  constructor(readonly notes: string[]) {}

  /** A path's text, relative to the workspace root; only a regular file inside the workspace is read. */
  abstract read(rel: string): Promise<FileRead>;

  abstract isFile(rel: string): Promise<boolean>;

  /** The first regular file (not a symlink) below `dir`, up to maxDepth levels, whose name matches; skips dot dirs. */
  abstract findFile(dir: string, name: RegExp, maxDepth: number): Promise<string | undefined>;

  /** Real directories (not symlinks) up to maxDepth below the root, skipping dependencies and dot dirs. */
  abstract directories(maxDepth: number): Promise<string[]>;

  /** A manifest's text, or undefined; anything odd about it becomes a note, not a failure. */
  async manifest(rel: string): Promise<string | undefined> {
    const read = await this.read(rel);
    if (read.kind === 'outside') this.notes.push(`${rel} resolves outside the workspace; ignored`);
    if (read.kind === 'unreadable') this.notes.push(`${rel} ignored: ${read.reason}`);
    return read.kind === 'file' ? read.text : undefined;
  }

  async firstFile(candidates: readonly string[]): Promise<string | undefined> {
    for (const rel of candidates) if (await this.isFile(rel)) return rel;
    return undefined;
  }
}
