import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether a scrape may read metrics: always without a METRICS_TOKEN (the endpoints are public, like
 * /healthz), else only with `Authorization: Bearer <token>` (compared in constant time).
 */
export function metricsAuthorized(authorization: string | undefined, token: string | null | undefined): boolean {
  if (!token) return true;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) return false;
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}
