// The network layer's cost (docs/threat-model.md, "Network"): a sandbox's start without network and with
// it (the egress proxy and the in-sandbox bridge), and one HTTP request from inside a sandbox through the
// proxy and through a forwarded loopback port, against the same request made directly on the host. Not a
// test: figures vary by machine and load. Run after `npm run build`: `npm run bench:egress`. Writes
// bench/results/egress.json.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { importDist, requireBuilt } from './lib/dist.mjs';
import { startResult, table } from './lib/results.mjs';
import { median, round } from './lib/util.mjs';

requireBuilt();
const result = startResult('egress');
const { runCommand } = await importDist('activities/process/run-command.js');
const { createSandbox } = await importDist('activities/sandbox/sandbox.js');
const { handOver } = await importDist('activities/sandbox/hand-over.js');
const { childEnvironment } = await importDist('activities/process/child-environment.js');
const { loadConfig } = await importDist('config/service-config.js');
const { parseEgressList } = await importDist('domain/egress.js');

const STARTS = 30;
const REQUESTS = 200;

const server = http.createServer((_req, res) => res.end('ok'));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = server.address().port;
const workDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-egress-')));
const sandbox = createSandbox(loadConfig({ SANDBOX: 'bwrap' }));
await handOver(sandbox, workDir);
const allow = parseEgressList(`127.0.0.1:${port}`);

async function run(argv, egress) {
  const started = performance.now();
  const result = await runCommand({
    argv,
    cwd: workDir,
    workspaceRoot: workDir,
    timeoutMs: 120_000,
    env: childEnvironment(),
    sandbox: { sandbox, policy: { workDir, egress } },
    outputCapBytes: 1024 * 1024,
  });
  if (result.exitCode !== 0) throw new Error(`${argv.join(' ')} failed: ${result.spawnError ?? result.stderr}`);
  return { ms: performance.now() - started, stdout: result.stdout };
}

// Sequential keep-alive-free GETs, each timed; prints the per-request times as JSON.
const client = (viaProxy) => `
const http = require('http');
const times = [];
const get = () => new Promise((resolve, reject) => {
  const started = performance.now();
  const options = ${viaProxy}
    ? { host: '127.0.0.1', port: 3128, path: 'http://127.0.0.1:${port}/', agent: false }
    : { host: '127.0.0.1', port: ${port}, path: '/', agent: false };
  http.get(options, (res) => { res.resume(); res.on('end', () => { times.push(performance.now() - started); resolve(); }); }).on('error', reject);
});
(async () => { for (let i = 0; i < ${REQUESTS}; i++) await get(); console.log(JSON.stringify(times)); })();`;

const starts = { none: [], network: [] };
await run(['true'], null);
await run(['true'], []);
for (let i = 0; i < STARTS; i++) {
  starts.none.push((await run(['true'], null)).ms);
  starts.network.push((await run(['true'], allow)).ms);
}
const requests = async (argv, egress) => median(JSON.parse((await run(argv, egress)).stdout));
const unconfined = createSandbox(loadConfig({ SANDBOX: 'none' }));
const hostDirect = median(
  JSON.parse(
    (
      await runCommand({
        argv: [process.execPath, '-e', client(false)],
        cwd: workDir,
        workspaceRoot: workDir,
        timeoutMs: 120_000,
        env: childEnvironment(),
        sandbox: { sandbox: unconfined, policy: { workDir, egress: null } },
        outputCapBytes: 1024 * 1024,
      })
    ).stdout,
  ),
);
const rows = [
  { what: 'sandbox start, no network (`true`)', medianMs: median(starts.none), runs: STARTS },
  { what: 'sandbox start with network (proxy + bridge, `true`)', medianMs: median(starts.network), runs: STARTS },
  { what: 'HTTP GET on the host, direct', medianMs: hostDirect, runs: REQUESTS },
  {
    what: 'HTTP GET from a sandbox through the proxy',
    medianMs: await requests([process.execPath, '-e', client(true)], allow),
    runs: REQUESTS,
  },
  {
    what: 'HTTP GET from a sandbox to a forwarded loopback port',
    medianMs: await requests([process.execPath, '-e', client(false)], allow),
    runs: REQUESTS,
  },
].map((r) => ({ ...r, medianMs: round(r.medianMs, 2) }));
server.close();
fs.rmSync(workDir, { recursive: true, force: true });

result.write(
  { starts: STARTS, requests: REQUESTS },
  { rows },
  table(
    ['what', 'median (ms)', 'runs'],
    rows.map((r) => [r.what, r.medianMs, r.runs]),
  ),
);
