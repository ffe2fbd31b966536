import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { cleanLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, createFixtureRepo, scriptedMaker, commitFiles } from '../support/fixture-repo';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';
import { FIXTURES_DIR, sharedTestDir } from '../support/sandbox';

// The escape suite, network part (docs/threat-model.md, "Network"): sandboxes with network — a maker
// that asks for it, a gate the request opens it to — go for the service's infrastructure on the host:
// Temporal's frontend and UI, PostgreSQL, the API, the host's own interface address, a cloud metadata
// address. Each attempt, direct or through the proxy the sandbox is offered, must fail; the proxy's
// refusals must be on the loop's timeline; the one host the operator allowed must be reachable.

const HOSTILE_MAKER = path.join(FIXTURES_DIR, 'agents', 'hostile-maker.js');
const ENDED = ['PASSED', 'FAILED', 'AWAITING_DECISION', 'REJECTED', 'CANCELLED'];

let h: LoopHarness;
let allowed: net.Server;
let allowedPort: number;
let connections = 0;
const ports = {
  postgres: Number(new URL(process.env.TEST_DATABASE_ADMIN_URL!).port),
  temporal: Number(process.env.TEST_TEMPORAL_ADDRESS!.split(':').pop()),
  temporalUi: Number(new URL(process.env.TEST_TEMPORAL_UI_URL!).port),
  api: 0,
};
/** This host's own address on its network: a service listening on 0.0.0.0 answers there too. */
const hostAddress =
  Object.values(os.networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal)?.address ?? '127.0.0.2';

beforeAll(async () => {
  // The one destination the operator allows, for agents and for gates alike: a stand-in model API.
  allowed = net.createServer((socket) => {
    connections += 1;
    socket.end();
  });
  await new Promise<void>((resolve) => allowed.listen(0, '127.0.0.1', resolve));
  allowedPort = (allowed.address() as net.AddressInfo).port;
  h = await startLoopHarness({
    workerEnv: { SANDBOX_EGRESS_AGENTS: `127.0.0.1:${allowedPort}`, SANDBOX_EGRESS_GATES: `127.0.0.1:${allowedPort}` },
  });
  ports.api = Number(new URL(h.baseUrl).port);
});
afterAll(async () => {
  await h?.close();
  await new Promise((resolve) => allowed?.close(resolve));
});

/** What a networked sandbox tries against the host: directly, then through its proxy. */
function infrastructureAttempts(): Array<Record<string, unknown>> {
  const direct = (name: string, host: string, port: number) => ({ name, connect: { host, port } });
  const proxied = (name: string, host: string, port: number) => ({ name, proxyConnect: { host, port } });
  return [
    direct('temporal-grpc', '127.0.0.1', ports.temporal),
    direct('temporal-ui', '127.0.0.1', ports.temporalUi),
    direct('postgres', '127.0.0.1', ports.postgres),
    direct('api', '127.0.0.1', ports.api),
    direct('temporal-on-host-address', hostAddress, ports.temporal),
    proxied('proxy-temporal-grpc', '127.0.0.1', ports.temporal),
    proxied('proxy-temporal-ui', 'localhost', ports.temporalUi),
    proxied('proxy-postgres', '127.0.0.1', ports.postgres),
    proxied('proxy-api', '127.0.0.1', ports.api),
    proxied('proxy-temporal-on-host-address', hostAddress, ports.temporal),
    proxied('proxy-metadata', '169.254.169.254', 80),
    // The allowed host, both ways: the bridge forwards its loopback port, the proxy tunnels to it.
    direct('allowed', '127.0.0.1', allowedPort),
    proxied('proxy-allowed', '127.0.0.1', allowedPort),
  ];
}

const refusedThroughProxy = () =>
  [
    `127.0.0.1:${ports.temporal}`,
    `localhost:${ports.temporalUi}`,
    `127.0.0.1:${ports.postgres}`,
    `127.0.0.1:${ports.api}`,
    `${hostAddress}:${ports.temporal}`,
    '169.254.169.254:80',
  ].sort();

function expectInfrastructureDenied(results: Record<string, { outcome: string; detail: string }>): void {
  for (const name of ['temporal-grpc', 'temporal-ui', 'postgres', 'api', 'temporal-on-host-address']) {
    expect([name, results[name]?.outcome, results[name]?.detail]).toEqual([
      name,
      'DENIED',
      expect.stringMatching(/^(ECONNREFUSED|ENETUNREACH)$/),
    ]);
  }
  for (const name of ['temporal-grpc', 'temporal-ui', 'postgres', 'api', 'temporal-on-host-address', 'metadata']) {
    expect([name, results[`proxy-${name}`]]).toEqual([name, { outcome: 'DENIED', detail: 'HTTP/1.1 403 Forbidden' }]);
  }
  expect(results.allowed).toEqual({ outcome: 'OK', detail: `connected to 127.0.0.1:${allowedPort}` });
  expect(results['proxy-allowed']).toEqual({ outcome: 'OK', detail: 'HTTP/1.1 200 Connection Established' });
}

async function refusedOnTimeline(loopId: string, role: string): Promise<string[]> {
  const res = await h.request('GET', `/v1/loops/${loopId}/timeline`);
  expect(res.status).toBe(200);
  return res.body.events
    .filter((e: any) => e.kind === 'egress_refused' && e.detail.role === role)
    .map((e: any) => e.detail.destination as string);
}

test('a maker with network reaches only the allowed host: Temporal, PostgreSQL, the API and the host are refused, and on record', async () => {
  const dir = sharedTestDir('escape-network-');
  const planFile = path.join(dir, 'plan.json');
  fs.writeFileSync(
    planFile,
    JSON.stringify({ outDir: dir, write: { 'src/sum.js': CORRECT_SUM }, attempts: infrastructureAttempts() }),
  );
  const argv = [process.execPath, HOSTILE_MAKER, planFile];
  h.llm.enqueue({ content: cleanLedger });
  const before = connections;
  const id = await h.submit(
    loopRequest(createFixtureRepo(), argv, { maker: { backend: 'command', argv, timeoutSeconds: 120, network: true } }),
  );
  const loop = await h.waitForLoop(id, ENDED);
  expect(loop.status).toBe('PASSED');
  expectInfrastructureDenied(JSON.parse(fs.readFileSync(path.join(dir, 'results.json'), 'utf8')).results);
  expect(connections).toBe(before + 2);
  expect((await refusedOnTimeline(id, 'maker')).sort()).toEqual(refusedThroughProxy());
});

describe('a gate running the repository’s hostile lint script', () => {
  let repo: string;

  beforeAll(() => {
    // The repository's own lint script is the attacker (gates run repository code), and its
    // verification.json asks for network, which a repository cannot grant itself.
    repo = createFixtureRepo();
    commitFiles(
      repo,
      {
        '.ai-engineering-loop/verification.json': JSON.stringify({ version: 1, network: true }),
        'scripts/lint.js': fs.readFileSync(HOSTILE_MAKER, 'utf8'),
        'scripts/lint.json': JSON.stringify({ attempts: infrastructureAttempts() }),
      },
      'lint script',
    );
  });

  const request = (overrides: Record<string, unknown>) =>
    loopRequest(repo, scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } }).argv, {
      gates: [
        { gate: 'tests', argv: ['node', '--test'], timeoutSeconds: 120 },
        { gate: 'lint', argv: ['node', 'scripts/lint.js', 'scripts/lint.json'], timeoutSeconds: 60 },
      ],
      ...overrides,
    });

  async function lintOutput(loop: any): Promise<string> {
    const lint = loop.iterations[0].evidence.find((e: any) => e.gate === 'lint');
    return (await h.request('GET', `/v1/loops/${loop.id}/evidence/${lint.id}`)).body.stdout as string;
  }

  test('gets no network from the repository’s own verification.json, and the plan says it was ignored', async () => {
    h.llm.enqueue({ content: cleanLedger });
    const before = connections;
    const id = await h.submit(request({}));
    const loop = await h.waitForLoop(id, ENDED);
    expect(loop.status).toBe('PASSED');
    expect(loop.gatePlan.network).toBe(false);
    expect(loop.gatePlan.warnings).toContain(
      ".ai-engineering-loop/verification.json sets network: true, which a repository cannot do: gates get network only from the request's gateNetwork, within the operator's SANDBOX_EGRESS_GATES",
    );
    const stdout = await lintOutput(loop);
    expect(stdout).toMatch(/^ATTEMPT allowed DENIED (ECONNREFUSED|ENETUNREACH)$/m);
    expect(stdout).toMatch(/^ATTEMPT proxy-temporal-grpc DENIED NO_PROXY_OFFERED$/m);
    expect(connections).toBe(before);
  });

  test('with gateNetwork: true it reaches the operator’s gate host and nothing of the service; the refusals are on the timeline', async () => {
    h.llm.enqueue({ content: cleanLedger });
    const before = connections;
    const id = await h.submit(request({ gateNetwork: true }));
    const loop = await h.waitForLoop(id, ENDED);
    expect(loop.status).toBe('PASSED');
    const stdout = await lintOutput(loop);
    const results = Object.fromEntries(
      [...stdout.matchAll(/^ATTEMPT (\S+) (OK|DENIED) (.*)$/gm)].map(([, name, outcome, detail]) => [
        name,
        { outcome, detail },
      ]),
    );
    expectInfrastructureDenied(results);
    expect(connections).toBe(before + 2);
    expect((await refusedOnTimeline(id, 'gate')).sort()).toEqual(refusedThroughProxy());
  });
});
