import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** Host pids of processes whose command line contains `marker` (sandboxed commands report only their namespace's pids). */
export function processesMatching(marker: string): number[] {
  const lines = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).split('\n');
  return lines
    .filter((line) => line.includes(marker) && !line.includes('ps -eo'))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

/** Waits until no process's command line contains `marker`. */
export async function waitUntilNoProcessMatching(marker: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (processesMatching(marker).length === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`a process matching ${marker} is still alive: ${processesMatching(marker).join(', ')}`);
}

/** Running: it exists and is not a zombie (a killed orphan waits for init to reap it). */
export function alive(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Polls (up to 5 s) until the process is no longer running. */
export async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 200 && alive(pid); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  return !alive(pid);
}
