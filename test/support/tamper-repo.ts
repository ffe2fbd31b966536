import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TamperFinding, TamperInput } from '../../analysis/tamper/types';
import { detectTampering } from '../../activities/tamper/detect-tampering';
import { git } from './test-git';

// Real git repositories for the tamper rules: a base commit, the maker's change as the checkpoint,
// and the detector run between them. Call removeTamperRepos() in afterAll.

const dirs: string[] = [];

export function removeTamperRepos(): void {
  dirs.splice(0).forEach((dir) => fs.rmSync(dir, { recursive: true, force: true }));
}

export interface Change {
  write?: Record<string, string>;
  remove?: string[];
  rename?: [from: string, to: string][];
  /** Symbolic links to create: path → target. */
  link?: Record<string, string>;
}

function commit(dir: string, change: Change): string {
  for (const [file, text] of Object.entries(change.write ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  for (const [file, target] of Object.entries(change.link ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.symlinkSync(target, path.join(dir, file));
  }
  for (const file of change.remove ?? []) git(dir, 'rm', '--quiet', file);
  for (const [from, to] of change.rename ?? []) {
    fs.mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
    git(dir, 'mv', from, to);
  }
  git(dir, 'add', '--all');
  git(dir, 'commit', '--quiet', '--allow-empty', '-m', 'change');
  return git(dir, 'rev-parse', 'HEAD').trim();
}

/** A repository with `files` committed as the base and `change` as the maker's checkpoint. */
export function tamperRepo(
  files: Record<string, string>,
  change: Change,
): { dir: string; base: string; checkpoint: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tamper-'));
  dirs.push(dir);
  git(dir, 'init', '--quiet', '--initial-branch=main');
  const base = commit(dir, { write: files });
  return { dir, base, checkpoint: commit(dir, change) };
}

/** Commits `files` as the base, applies `change` as the maker's checkpoint, and runs the detector. */
export async function tamper(
  files: Record<string, string>,
  change: Change,
  input: Partial<TamperInput> = {},
): Promise<TamperFinding[]> {
  const { dir, base, checkpoint } = tamperRepo(files, change);
  return detectTampering({
    workspace: dir,
    baseCommit: base,
    checkpointCommit: checkpoint,
    gates: [],
    outOfScope: [],
    ...input,
  });
}

/** [rule, file, line] of every finding, for exact assertions. */
export function located(findings: TamperFinding[]): [string, string, number][] {
  return findings.map((f) => {
    expect(f.location.endLine).toBe(f.location.startLine);
    return [f.rule, f.location.file, f.location.startLine];
  });
}

export const lines = (...text: string[]) => `${text.join('\n')}\n`;
