import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// The `engineering-loop` CLI as users run it: the compiled dist/cli/main.js in its own process, run
// asynchronously (the API under test often listens in the test's own process).

export const CLI = path.resolve(__dirname, '../../dist/cli/main.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Throws unless the CLI was built (npx tsc -p tsconfig.build.json). */
export function requireBuiltCli(): void {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -p tsconfig.build.json)`);
}

/** A CLI process still running: its output so far, and its end. */
export interface RunningCli {
  stdout(): string;
  stderr(): string;
  /** Resolves when it exits; rejects when it has not within the timeout (it is killed then). */
  done: Promise<CliRun>;
}

/** Starts the CLI with only PATH, `home` (no config file of whoever runs the tests) and `env`. */
export function startCliProcess(
  args: string[],
  home: string,
  env: Record<string, string>,
  timeoutMs = 240_000,
): RunningCli {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: path.join(home, 'xdg'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<CliRun>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `engineering-loop ${args.join(' ')} did not end within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`,
        ),
      );
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  return { stdout: () => stdout, stderr: () => stderr, done };
}

/** Runs the CLI to its end (see startCliProcess). */
export function runCliProcess(
  args: string[],
  home: string,
  env: Record<string, string>,
  timeoutMs = 240_000,
): Promise<CliRun> {
  return startCliProcess(args, home, env, timeoutMs).done;
}
