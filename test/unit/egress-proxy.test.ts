import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { openEgressProxy, type EgressProxy } from '../../activities/sandbox/egress-proxy';
import { parseEgressList } from '../../domain/egress';

// The egress proxy on its own, over its Unix socket, as the in-sandbox bridge reaches it.

let dir: string;
let web: http.Server;
let webPort: number;
let seen: Array<{ url: string | undefined; headers: http.IncomingHttpHeaders }>;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'egress-proxy-test-'));
  seen = [];
  web = http.createServer((req, res) => {
    seen.push({ url: req.url, headers: req.headers });
    res.end('from the allowed server\n');
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  webPort = (web.address() as net.AddressInfo).port;
});
afterAll(() => {
  web.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Sends `request` over the proxy's socket and returns all it answered. */
function exchange(proxy: EgressProxy, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(proxy.socketPath, () => socket.write(request));
    socket.on('data', (c) => {
      chunks.push(c);
      // A tunnel stays open: the answer to CONNECT is all we wait for.
      if (request.startsWith('CONNECT') && Buffer.concat(chunks).includes('\r\n\r\n')) socket.destroy();
    });
    socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
    socket.on('error', reject);
  });
}

test('forwards a plain-http request to an allowed server in origin form, without proxy headers', async () => {
  const proxy = await openEgressProxy(path.join(dir, 'a.sock'), parseEgressList(`127.0.0.1:${webPort}`));
  try {
    const answer = await exchange(
      proxy,
      `GET http://127.0.0.1:${webPort}/simple/pkg?x=1 HTTP/1.1\r\nHost: 127.0.0.1:${webPort}\r\nProxy-Authorization: Basic eA==\r\nConnection: keep-alive\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(answer).toContain('from the allowed server');
    expect(seen.at(-1)?.url).toBe('/simple/pkg?x=1');
    expect(seen.at(-1)?.headers['proxy-authorization']).toBeUndefined();
    expect(seen.at(-1)?.headers.connection).toBe('close');
    expect(await proxy.close()).toEqual([]);
  } finally {
    await proxy.close();
  }
});

test('tunnels CONNECT to an allowed port and refuses another with 403, on record', async () => {
  const proxy = await openEgressProxy(path.join(dir, 'b.sock'), parseEgressList(`127.0.0.1:${webPort}`));
  expect(await exchange(proxy, `CONNECT 127.0.0.1:${webPort} HTTP/1.1\r\n\r\n`)).toMatch(
    /^HTTP\/1\.1 200 Connection Established/,
  );
  const refused = await exchange(proxy, `CONNECT 127.0.0.1:7233 HTTP/1.1\r\n\r\n`);
  expect(refused).toMatch(/^HTTP\/1\.1 403 Forbidden/);
  expect(refused).toContain('egress to 127.0.0.1:7233 refused: not on the allow-list');
  expect(await exchange(proxy, `GET http://169.254.169.254/latest/meta-data HTTP/1.1\r\n\r\n`)).toMatch(
    /^HTTP\/1\.1 403/,
  );
  expect(await proxy.close()).toEqual([
    { host: '127.0.0.1', port: 7233, reason: 'not on the allow-list', attempts: 1 },
    { host: '169.254.169.254', port: 80, reason: 'not on the allow-list', attempts: 1 },
  ]);
  expect(fs.existsSync(proxy.socketPath)).toBe(false);
});

test('an allowed name that resolves to an address of the host is refused', async () => {
  const proxy = await openEgressProxy(path.join(dir, 'c.sock'), parseEgressList(`${os.hostname()}:${webPort}`));
  const answer = await exchange(proxy, `GET http://${os.hostname()}:${webPort}/ HTTP/1.1\r\n\r\n`);
  expect(answer).toMatch(/^HTTP\/1\.1 403/);
  expect(answer).toMatch(/resolves to .*, an address of the host or a private range/);
  await proxy.close();
});

test('answers 400 to what is not a proxy request, and drops an endless head', async () => {
  const proxy = await openEgressProxy(path.join(dir, 'd.sock'), []);
  expect(await exchange(proxy, 'GET /relative HTTP/1.1\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
  expect(await exchange(proxy, `GET https://x.org/ HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 400/);
  expect(await exchange(proxy, `GET http://x.org/ HTTP/1.1\r\nX: ${'a'.repeat(20_000)}`)).toBe('');
  expect(await proxy.close()).toEqual([]);
});

test('CONNECT keeps the port it names, a scheme’s default one included', async () => {
  const proxy = await openEgressProxy(path.join(dir, 'e.sock'), []);
  await exchange(proxy, 'CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n');
  expect(await exchange(proxy, 'CONNECT nonsense HTTP/1.1\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
  expect((await proxy.close()).map((r) => `${r.host}:${r.port}`)).toEqual(['169.254.169.254:80']);
});
