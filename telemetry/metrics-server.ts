import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { metricsAuthorized } from './metrics-access';
import { exposition } from './registry';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/** A tiny HTTP server for a process without the API (the worker): GET /metrics, nothing else. */
export async function startMetricsServer(options: {
  host: string;
  port: number;
  registries: Registry[];
  token: string | null;
}): Promise<MetricsServer> {
  const contentType = options.registries[0]?.contentType ?? 'text/plain; version=0.0.4; charset=utf-8';
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    if (!metricsAuthorized(req.headers.authorization, options.token)) {
      res
        .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' })
        .end('metrics need Authorization: Bearer <METRICS_TOKEN>\n');
      return;
    }
    exposition(options.registries).then(
      (text) => res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) =>
        res
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(`collecting metrics failed: ${err instanceof Error ? err.message : String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
