import dns from 'node:dns/promises';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { egressEntryFor, type EgressEntry } from '../../domain/egress';

// The filtering proxy a networked sandbox's traffic leaves through (docs/threat-model.md, "Network"). The
// sandbox has a network namespace of its own with nothing but loopback; the only way out is a Unix socket
// to this proxy, which the in-sandbox bridge (egress-bridge.ts) offers as an HTTP proxy on loopback. It
// speaks HTTP CONNECT (https) and absolute-form requests (plain http), lets through only hosts on the
// sandbox's allow-list, and never an address of the host or a private range unless the entry names that
// address itself — so a DNS answer cannot turn an allowed name into Temporal on loopback.

/** A connection the proxy refused, once per host and port with how often it was tried. */
export interface EgressRefusal {
  host: string;
  port: number;
  reason: string;
  attempts: number;
}

export interface EgressProxy {
  readonly socketPath: string;
  /** Stops accepting, cuts open tunnels, removes the socket; what was refused, in order of first attempt. */
  close(): Promise<EgressRefusal[]>;
}

const MAX_HEAD_BYTES = 16 * 1024;
/** Distinct refused destinations kept per sandbox run (an attempt beyond is counted on none). */
const MAX_REFUSALS = 100;

const PRIVATE_RANGES: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['224.0.0.0', 3, 'ipv4'],
  ['::', 127, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];

/** Loopback, link-local, private and multicast ranges, and every address of this host's own interfaces. */
function hostAndPrivateAddresses(): net.BlockList {
  const list = new net.BlockList();
  for (const [address, prefix, type] of PRIVATE_RANGES) list.addSubnet(address, prefix, type);
  for (const infos of Object.values(os.networkInterfaces())) {
    for (const info of infos ?? [])
      list.addAddress(info.address.split('%')[0] ?? info.address, info.family === 'IPv6' ? 'ipv6' : 'ipv4');
  }
  return list;
}

/** Whether `address` is the host's or private; an IPv4-mapped IPv6 address counts as its IPv4 one. */
export function isHostOrPrivate(blocked: net.BlockList, address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return blocked.check(mapped[1], 'ipv4');
  return blocked.check(address, net.isIPv6(address) ? 'ipv6' : 'ipv4');
}

/** An entry naming an address (or localhost) itself: the operator chose that address, private or not. */
function namesAddress(entry: EgressEntry): boolean {
  return !entry.wildcard && (net.isIP(entry.host) !== 0 || entry.host === 'localhost');
}

export async function openEgressProxy(socketPath: string, allow: readonly EgressEntry[]): Promise<EgressProxy> {
  const blocked = hostAndPrivateAddresses();
  const refusals = new Map<string, EgressRefusal>();
  const open = new Set<net.Socket>();

  const refuse = (client: net.Socket, host: string, port: number, reason: string) => {
    const key = `${host}:${port}`;
    const known = refusals.get(key);
    if (known) known.attempts++;
    else if (refusals.size < MAX_REFUSALS) refusals.set(key, { host, port, reason, attempts: 1 });
    const body = `egress to ${key} refused: ${reason}\n`;
    client.end(
      `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };

  const destinationFor = async (host: string, port: number): Promise<string | { refused: string }> => {
    const entry = egressEntryFor(allow, host, port);
    if (!entry) return { refused: 'not on the allow-list' };
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    const addresses = net.isIP(bare) ? [bare] : (await dns.lookup(bare, { all: true })).map((a) => a.address);
    if (namesAddress(entry)) return addresses[0] ?? { refused: 'no address' };
    const inner = addresses.find((a) => isHostOrPrivate(blocked, a));
    if (inner) return { refused: `resolves to ${inner}, an address of the host or a private range` };
    return addresses[0] ?? { refused: 'no address' };
  };

  const serve = async (client: net.Socket, head: Buffer, rest: Buffer) => {
    const text = head.toString('latin1');
    const [requestLine = '', ...headerLines] = text.split('\r\n');
    const [method = '', target = '', version = 'HTTP/1.1'] = requestLine.split(' ');
    const connect = method.toUpperCase() === 'CONNECT';
    let host: string;
    let port: number;
    let path = '';
    try {
      if (connect) {
        // host:port as it stands (a URL would drop a port that is its scheme's default).
        const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(target);
        if (!m?.[1] || !m[2]) throw new Error('not host:port');
        host = m[1].toLowerCase();
        port = Number(m[2]);
      } else {
        const url = new URL(target);
        if (url.protocol !== 'http:') throw new Error('not http');
        host = url.hostname;
        port = url.port ? Number(url.port) : 80;
        path = `${url.pathname}${url.search}`;
      }
    } catch {
      client.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      return;
    }
    let destination: string | { refused: string };
    try {
      destination = await destinationFor(host, port);
    } catch (err) {
      client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n${(err as Error).message}\n`);
      return;
    }
    if (typeof destination !== 'string') {
      refuse(client, host.replace(/^\[(.*)\]$/, '$1'), port, destination.refused);
      return;
    }
    const upstream = net.connect({ host: destination, port });
    let connected = false;
    open.add(upstream);
    upstream.on('close', () => open.delete(upstream));
    upstream.on('error', () => {
      if (connected) client.destroy();
      else client.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n');
    });
    client.on('error', () => upstream.destroy());
    upstream.on('connect', () => {
      connected = true;
      if (connect) {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      } else {
        // Origin-form to the server, without the proxy's own headers; one request per connection, so a
        // later request on it cannot name another host.
        const headers = headerLines.filter((l) => l && !/^(proxy-|connection:|keep-alive:)/i.test(l));
        upstream.write(`${method} ${path} ${version}\r\n${[...headers, 'Connection: close'].join('\r\n')}\r\n\r\n`);
      }
      if (rest.length > 0) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
    });
  };

  const server = net.createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) {
        if (buffered.length > MAX_HEAD_BYTES) client.destroy();
        return;
      }
      client.off('data', onData);
      client.pause();
      void serve(client, buffered.subarray(0, end), buffered.subarray(end + 4)).finally(() => client.resume());
    };
    client.on('data', onData);
  });

  await fs.rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  // The sandbox's unprivileged uid must be able to connect.
  await fs.chmod(socketPath, 0o666);

  return {
    socketPath,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of open) socket.destroy();
      await closed;
      await fs.rm(socketPath, { force: true });
      return [...refusals.values()];
    },
  };
}

/** A proxy for one sandboxed command, its socket in a private directory of its own. */
export async function openSandboxEgress(allow: readonly EgressEntry[]): Promise<EgressProxy> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'egress-'));
  try {
    const proxy = await openEgressProxy(path.join(dir, 'proxy.sock'), allow);
    return {
      socketPath: proxy.socketPath,
      close: () => proxy.close().finally(() => fs.rm(dir, { recursive: true, force: true })),
    };
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
}
