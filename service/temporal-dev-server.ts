import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import type { ServiceConfig } from '../config/service-config';
import { PROJECT_ROOT } from '../config/project-root';
import { LOOP_SEARCH_ATTRIBUTES } from './search-attributes';

// Local Temporal for the zero-configuration setup: the official CLI's `temporal server start-dev`
// (installed from PyPI by scripts/install-temporal.sh), persisted in <dataDir>/temporal/temporal.sqlite.

const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;

export interface TemporalDevServerOptions {
  cliPath: string;
  dataDir: string;
  port: number;
  uiPort: number;
  namespace: string;
  searchAttributes?: Record<string, string>;
  /** Gives up waiting for it to be ready (and stops it): the service is stopping. */
  signal?: AbortSignal;
}

export interface TemporalDevServer {
  /** gRPC frontend, host:port. */
  address: string;
  uiUrl: string;
  /** The CLI's pid (the leader of its own process group). */
  pid: number;
  /** Resolves when the CLI exits, for whatever reason, with how it ended ("signal SIGKILL"). */
  exited: Promise<string>;
  /** SIGTERM to its process group, SIGKILL after STOP_GRACE_MS; at once if it has exited. */
  stop(): Promise<void>;
  /** SIGKILL to its process group now (the SQLite file's write-ahead log keeps what was committed). */
  kill(): void;
}

/** config.temporal.cliPath, else the project-local install, else `temporal` on PATH. */
export function resolveTemporalCli(config: { temporal: Pick<ServiceConfig['temporal'], 'cliPath'> }): string {
  const candidates = [
    config.temporal.cliPath,
    path.join(PROJECT_ROOT, '.tools', 'temporal', 'bin', 'temporal'),
    ...(process.env.PATH ?? '')
      .split(path.delimiter)
      .filter(Boolean)
      .map((dir) => path.join(dir, 'temporal')),
  ];
  if (config.temporal.cliPath && !isExecutable(config.temporal.cliPath)) {
    throw new Error(`TEMPORAL_CLI_PATH=${config.temporal.cliPath} is not an executable file`);
  }
  const found = candidates.find((file): file is string => !!file && isExecutable(file));
  if (!found) {
    throw new Error(
      'Temporal CLI not found (TEMPORAL_CLI_PATH, .tools/temporal/bin/temporal, PATH). ' +
        'Run `bash scripts/install-temporal.sh`, or set TEMPORAL_ADDRESS to use an existing server.',
    );
  }
  return found;
}

export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const dbDir = path.join(path.resolve(options.dataDir), 'temporal');
  fs.mkdirSync(dbDir, { recursive: true });
  const searchAttributes = options.searchAttributes ?? LOOP_SEARCH_ATTRIBUTES;
  const args = [
    'server',
    'start-dev',
    '--db-filename',
    path.join(dbDir, 'temporal.sqlite'),
    // Write-ahead log, synced at checkpoints: a crash of any process loses nothing committed (only a
    // power cut can take the last transactions back, the database staying consistent). The default
    // rollback journal syncs several times per transaction — per workflow and activity task.
    '--sqlite-pragma',
    'journal_mode=wal',
    '--sqlite-pragma',
    'synchronous=normal',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--ui-port',
    String(options.uiPort),
    '--namespace',
    options.namespace,
    '--log-level',
    'warn',
    ...Object.entries(searchAttributes).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
  ];
  // detached: own process group, so stop() can take down everything the CLI started.
  const child = spawn(options.cliPath, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const remember = (chunk: Buffer) => {
    output.push(chunk.toString('utf8'));
    if (output.length > 200) output.shift();
  };
  child.stdout?.on('data', remember);
  child.stderr?.on('data', remember);
  const exitedHow = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code}`));
    child.once('error', (error) => {
      output.push(`spawn error: ${error.message}\n`);
      resolve(`spawn error: ${error.message}`);
    });
  });
  const exited = exitedHow.then(() => undefined);

  // A service that dies without stopping it (an uncaught error, process.exit) still takes it along.
  const killOnExit = () => signalGroup(child, 'SIGTERM');
  process.once('exit', killOnExit);
  void exited.then(() => process.off('exit', killOnExit));

  const address = `127.0.0.1:${options.port}`;
  const stop = () => stopProcessGroup(child, exited);
  try {
    await waitUntilReady(address, options.namespace, exited, options.signal);
  } catch (error) {
    await stop();
    // The first line says why (with the CLI's last line, e.g. the port in use); the command and output follow.
    const last = output.join('').trim().split('\n').at(-1)?.trim().slice(0, 300);
    throw new Error(
      `Temporal dev server did not start on ${address}: ${(error as Error).message}${last ? ` (${last})` : ''}\n` +
        `${options.cliPath} ${args.join(' ')}\n${output.join('')}`,
    );
  }
  return {
    address,
    uiUrl: `http://127.0.0.1:${options.uiPort}`,
    pid: child.pid!,
    exited: exitedHow,
    stop,
    kill: () => signalGroup(child, 'SIGKILL'),
  };
}

/**
 * Registers LOOP_SEARCH_ATTRIBUTES on a server we did not start (TEMPORAL_ADDRESS) if missing.
 * Fails if one exists with another type, since workflows would then write values the server rejects.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  searchAttributes: Record<string, string> = LOOP_SEARCH_ATTRIBUTES,
): Promise<void> {
  const existing = (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
  const missing: Record<string, number> = {};
  for (const [name, type] of Object.entries(searchAttributes)) {
    const wanted = encodeSearchAttributeIndexedValueType(type.toUpperCase() as 'KEYWORD');
    if (wanted === undefined) throw new Error(`Unknown search attribute type ${type} for ${name}`);
    if (existing[name] === undefined) missing[name] = wanted;
    else if (existing[name] !== wanted) {
      throw new Error(`Search attribute ${name} exists in namespace ${namespace} with another type than ${type}`);
    }
  }
  if (Object.keys(missing).length > 0) {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
  }
}

// Ready = the frontend answers and our namespace is registered.
async function waitUntilReady(
  address: string,
  namespace: string,
  exited: Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (hasExited) throw new Error('the process exited');
    if (signal?.aborted) throw new Error('the service is stopping');
    try {
      // A fresh subchannel each time: grpc-js shares subchannels by address across a process, and one that
      // failed (the port was held, or nothing listened) waits out a backoff of up to 2 min before it tries again.
      const connection = await Connection.connect({
        address,
        connectTimeout: '2s',
        channelArgs: { 'grpc.use_local_subchannel_pool': 1 },
      });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`no answer on ${address} within ${READY_TIMEOUT_MS / 1000}s: ${(lastError as Error)?.message}`);
}

async function stopProcessGroup(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  signalGroup(child, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Group already gone.
  }
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
