import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * The base URL at which this process reaches its own API: the address it listens on, with a wildcard
 * address (0.0.0.0, ::) replaced by loopback. Routes that act for their caller through the REST routes
 * (api/routes/mcp.ts) call it, so every request passes authentication, rate limits and validation as
 * any other does.
 */
export function ownBaseUrl(app: FastifyInstance): string {
  const address = app.server.address();
  if (address === null || typeof address === 'string')
    throw new Error(`the API listens on ${address ?? 'nothing'}; it needs a TCP address to call itself`);
  return `http://${hostOf(address)}:${address.port}`;
}

function hostOf({ address, family }: AddressInfo): string {
  if (family === 'IPv6') return address === '::' ? '[::1]' : `[${address}]`;
  return address === '0.0.0.0' ? '127.0.0.1' : address;
}
