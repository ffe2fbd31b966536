// Calls to the service's REST API with an API key, answering { status, body, ms }.
import { performance } from 'node:perf_hooks';
import { importDist } from './dist.mjs';

export function apiClient(baseUrl) {
  return async function call(method, url, key, body, headers = {}) {
    const started = performance.now();
    const res = await fetch(`${baseUrl}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await res.text();
    const ms = performance.now() - started;
    let parsed = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON: kept as text.
    }
    return { status: res.status, body: parsed, ms };
  };
}

/** A submitter and an approver key, created straight in the database (as `npm run admin -- create-key` does). */
export async function createKeys(prisma) {
  const { createApiKey } = await importDist('api/auth/api-keys.js');
  return {
    submitter: (await createApiKey(prisma, { name: 'bench-submitter', role: 'submitter' })).key,
    approver: (await createApiKey(prisma, { name: 'bench-approver', role: 'approver' })).key,
  };
}
