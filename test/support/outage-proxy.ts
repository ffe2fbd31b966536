import net from 'node:net';
import { freePort } from './free-port';

/** A TCP proxy to `target` (host:port) that can be taken down and brought back, as an outage would. */
export async function outageProxy(
  target: string,
): Promise<{ address: string; down(): Promise<void>; up(): Promise<void> }> {
  const [host, port] = target.split(':') as [string, string];
  const sockets = new Set<net.Socket>();
  const listenPort = await freePort();
  let server: net.Server | null = null;
  const up = () =>
    new Promise<void>((resolve) => {
      if (server) return resolve();
      server = net.createServer((client) => {
        const upstream = net.connect(Number(port), host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('error', () => undefined);
          s.on('close', () => sockets.delete(s));
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(listenPort, '127.0.0.1', () => resolve());
    });
  const down = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      if (server) server.close(() => resolve());
      else resolve();
      server = null;
    });
  await up();
  return { address: `127.0.0.1:${listenPort}`, down, up };
}
