import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

// The loop worker as a real, separate process (compiled entry point), so tests can kill and restart it.

const WORKER_ENTRY = path.resolve(__dirname, '../../dist/service/worker-main.js');

export interface WorkerProcess {
  pid: number;
  output(): string;
  /** SIGKILL: the worker dies without any clean-up, like a crashed machine. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export async function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  const child: ChildProcess = spawn(process.execPath, [WORKER_ENTRY], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (output.includes('worker ready')) {
        clearInterval(timer);
        resolve();
      } else if (child.exitCode !== null) {
        clearInterval(timer);
        reject(new Error(`worker exited during start-up:\n${output}`));
      }
    }, 100);
  });

  const signal = async (sig: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    await exited;
  };
  return { pid: child.pid!, output: () => output, kill: () => signal('SIGKILL'), stop: () => signal('SIGTERM') };
}
