import { z } from 'zod';

// Egress allow-lists (docs/threat-model.md, "Network"): a sandbox with network reaches only the hosts its
// allow-list names, through the service's filtering proxy (activities/sandbox/egress-proxy.ts). The operator
// sets one list per role; a request can only narrow it. Pure: shared with the API's validation.

/** What a sandbox may reach: `host`, `host:port`, `*.suffix[:port]`, an IPv4 literal or `[v6]:port`. */
export interface EgressEntry {
  /** Lower-case host name or address; for a wildcard, the suffix after `*.`. */
  host: string;
  wildcard: boolean;
  /** null: the web's ports, 443 and 80. */
  port: number | null;
}

const DEFAULT_PORTS = [443, 80];
const HOST_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const IPV4 = /^(?:\d{1,3}\.){3}\d{1,3}$/;

/** Parses one allow-list entry; throws with the reason when it is not one. */
export function parseEgressEntry(text: string): EgressEntry {
  const raw = text.trim().toLowerCase();
  const v6 = /^\[([0-9a-f:.]+)\](?::(\d+))?$/.exec(raw);
  const [hostPart, portPart] = v6 ? [v6[1] ?? '', v6[2]] : splitPort(raw);
  if (portPart !== undefined && !/^\d{1,5}$/.test(portPart))
    throw new Error(`"${text}" is not a host, host:port or *.domain`);
  const port = portPart === undefined ? null : Number(portPart);
  if (port !== null && !(Number.isInteger(port) && port >= 1 && port <= 65535))
    throw new Error(`"${text}": the port must be 1–65535`);
  if (v6) return { host: hostPart, wildcard: false, port };
  const wildcard = hostPart.startsWith('*.');
  const host = wildcard ? hostPart.slice(2) : hostPart;
  const valid = IPV4.test(host) ? host.split('.').every((o) => Number(o) <= 255) : isHostName(host);
  if (!valid) throw new Error(`"${text}" is not a host, host:port or *.domain`);
  return { host, wildcard, port };
}

function splitPort(raw: string): [string, string | undefined] {
  const colon = raw.lastIndexOf(':');
  return colon === -1 ? [raw, undefined] : [raw.slice(0, colon), raw.slice(colon + 1)];
}

function isHostName(host: string): boolean {
  const labels = host.split('.');
  return host.length <= 253 && labels.length >= 1 && labels.every((l) => HOST_LABEL.test(l));
}

export function formatEgressEntry(e: EgressEntry): string {
  const host = e.host.includes(':') ? `[${e.host}]` : e.host;
  return `${e.wildcard ? '*.' : ''}${host}${e.port === null ? '' : `:${e.port}`}`;
}

/** The package registries set-up may reach unless the operator says otherwise (SANDBOX_EGRESS_SETUP). */
export const DEFAULT_SETUP_EGRESS = [
  'registry.npmjs.org',
  'registry.yarnpkg.com',
  'pypi.org',
  'files.pythonhosted.org',
  'proxy.golang.org',
  'sum.golang.org',
  'crates.io',
  'index.crates.io',
  'static.crates.io',
  'repo.maven.apache.org',
  'repo1.maven.org',
  'plugins.gradle.org',
  'services.gradle.org',
].join(',');

/** The entry that lets a sandbox reach an endpoint URL's host and port (a model API). */
export function endpointEntry(url: string): EgressEntry {
  const u = new URL(url);
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  return { host: u.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1'), wildcard: false, port };
}

/** A comma-separated list (operator settings); throws naming the bad entry. */
export function parseEgressList(text: string): EgressEntry[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(parseEgressEntry);
}

/** The entry of `allow` that lets a connection to host:port through, or null. */
export function egressEntryFor(allow: readonly EgressEntry[], host: string, port: number): EgressEntry | null {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return (
    allow.find(
      (e) =>
        (e.port === null ? DEFAULT_PORTS.includes(port) : e.port === port) &&
        (e.wildcard ? name.endsWith(`.${e.host}`) : name === e.host),
    ) ?? null
  );
}

/** Whether `inner` allows nothing that `outer` does not (a request narrowing the operator's list). */
function covers(outer: EgressEntry, inner: EgressEntry): boolean {
  const ports =
    outer.port === null ? inner.port === null || DEFAULT_PORTS.includes(inner.port) : outer.port === inner.port;
  if (!ports) return false;
  if (!outer.wildcard) return !inner.wildcard && inner.host === outer.host;
  return inner.host === outer.host ? inner.wildcard : inner.host.endsWith(`.${outer.host}`);
}

/**
 * What a sandbox may reach: the operator's list for its role, narrowed by the request — `true` keeps it
 * whole, `false` or absent (where the role is off by default) gives nothing, a list keeps those of its
 * entries the operator's list covers. `dropped` names requested entries the operator does not allow.
 */
export function narrowEgress(
  operator: readonly EgressEntry[],
  requested: boolean | readonly string[],
): { allow: EgressEntry[]; dropped: string[] } {
  if (requested === true) return { allow: [...operator], dropped: [] };
  if (requested === false) return { allow: [], dropped: [] };
  const allow: EgressEntry[] = [];
  const dropped: string[] = [];
  for (const text of requested) {
    const entry = parseEgressEntry(text);
    if (operator.some((o) => covers(o, entry))) allow.push(entry);
    else dropped.push(text);
  }
  return { allow, dropped };
}

/** One allow-list entry as written (parseEgressEntry's forms), refused with parseEgressEntry's reason. */
export const egressEntryTextSchema = z
  .string()
  .max(300)
  .superRefine((text, ctx) => {
    try {
      parseEgressEntry(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

/** A request's network setting: on (the operator's whole list), off, or only these of its hosts. */
export const networkRequestSchema = z.union([z.boolean(), z.array(egressEntryTextSchema).max(64)]);
export type NetworkRequest = z.infer<typeof networkRequestSchema>;

/** A sandbox's egress: null (no network at all) when nothing was asked for, else the narrowed list. */
export function sandboxEgress(operator: readonly EgressEntry[], requested: NetworkRequest): EgressEntry[] | null {
  return requested === false ? null : narrowEgress(operator, requested).allow;
}
