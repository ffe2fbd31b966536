import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from './free-port';
import { waitUntilNoProcessMatching } from './processes';

// `npm start`'s process for real: dist/service/main.js with its embedded PostgreSQL and Temporal dev server,
// and the API and two workers as its children, on free ports with a data directory of the test's.

const MAIN = path.resolve(__dirname, '../../dist/service/main.js');

export interface ServiceProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** Free ports for the API, the dev server and its UI, and PostgreSQL. */
export async function servicePorts(): Promise<Record<string, string>> {
  return {
    API_PORT: String(await freePort()),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    EMBEDDED_POSTGRES_PORT: String(await freePort()),
  };
}

export function startService(dataDir: string, env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, [MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      DATA_DIR: dataDir,
      ...(process.env.TEMPORAL_CLI_PATH ? { TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Polls the service's output until `seen` holds; fails if the service exits first, or after `timeoutMs`. */
export async function outputUntil(
  service: ServiceProcess,
  seen: (output: string) => boolean,
  timeoutMs = 180_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (seen(service.output())) return;
    if (service.child.exitCode !== null) throw new Error(`the service exited:\n${service.output()}`);
    if (Date.now() > deadline) throw new Error(`not in the service's output yet:\n${service.output().slice(-8000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Until the banner's last line before the key. */
export const serviceReady = (service: ServiceProcess) => outputUntil(service, (output) => output.includes('Inbox'));

/**
 * Starts the service on free ports (with `env` besides) and waits until it is ready. A port found free can
 * be taken by another suite before the service binds it: that start is retried on other ports, like a restart.
 */
export async function startServiceReady(
  dir: string,
  env: Record<string, string> = {},
): Promise<{ service: ServiceProcess; env: Record<string, string> }> {
  for (let attempt = 1; ; attempt++) {
    const withPorts = { ...(await servicePorts()), ...env };
    const service = startService(dir, withPorts);
    try {
      await serviceReady(service);
      return { service, env: withPorts };
    } catch (err) {
      if (attempt === 3 || !/already in use/i.test(service.output())) throw err;
      await service.exited;
      await waitUntilNoProcessMatching(dir);
    }
  }
}
