// Which repository sources a loop may clone, and which base refs it may name. Everything here ends up on
// git's command line, so anything git could read as an option, a transport helper or a second argument
// is refused before it gets there.
import { z } from 'zod';

/** A repository URL as a request field: refused with the reason when git could misread it. */
export const repositoryUrlSchema = z
  .string()
  .trim()
  .min(1)
  .max(2000)
  .superRefine((url, ctx) => {
    const source = classifyRepositoryUrl(url);
    if (!source.ok) ctx.addIssue({ code: 'custom', message: source.problem });
  });

/** The git transport a clone uses; `protocol.<transport>.allow` is switched on for exactly this one. */
export type GitTransport = 'https' | 'ssh' | 'http' | 'file';

export type RepositorySource = { ok: true; transport: GitTransport; local: boolean } | { ok: false; problem: string };

const CONTROL = /[\u0000-\u001f\u007f]/;
const WHITESPACE = /\s/;
/** `<transport>::<address>` runs git-remote-<transport>: `ext::` runs a command, `fd::` reads a descriptor. */
const TRANSPORT_HELPER = /^([A-Za-z][A-Za-z0-9+.-]*)::/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
/** scp-like `[user@]host:path`: git's rule is a colon before the first slash. */
const SCP_LIKE = /^(?:([^@/:]+)@)?([^@/:]+|\[[^\]/]*\]):(.*)$/;
const LOOPBACK = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

export function classifyRepositoryUrl(url: string): RepositorySource {
  if (CONTROL.test(url)) return fail('must not contain control characters');
  if (url.startsWith('-')) return fail('must not begin with "-" (git would read it as an option)');
  const helper = TRANSPORT_HELPER.exec(url);
  if (helper) return fail(`the "${helper[1]}::" transport is not allowed; use an https:// or ssh URL`);
  if (WHITESPACE.test(url)) return fail('must not contain whitespace');
  const scheme = SCHEME.exec(url)?.[1];
  if (scheme !== undefined) return classifyUrl(scheme, url.slice(url.indexOf('://') + 3));
  const firstColon = url.indexOf(':');
  const firstSlash = url.indexOf('/');
  if (firstColon > 0 && (firstSlash < 0 || firstColon < firstSlash)) return classifyScpLike(url);
  // Anything else is a path on the worker's disk (absolute or relative), which git clones locally.
  return { ok: true, transport: 'file', local: true };
}

function classifyUrl(scheme: string, rest: string): RepositorySource {
  const slash = rest.indexOf('/');
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? null : authority.slice(0, at);
  const host = hostOf(authority.slice(at + 1));
  switch (scheme) {
    case 'file':
      return { ok: true, transport: 'file', local: true };
    case 'https':
      // A token as the user name is a credential too; credentials come from the operator's setup, never the request.
      if (userinfo !== null) return fail(CREDENTIALS);
      return host ? { ok: true, transport: 'https', local: false } : fail('must name a host');
    case 'ssh':
      if (userinfo?.includes(':')) return fail(CREDENTIALS);
      return checkSshHost(host);
    case 'http':
      // Plain http can be rewritten by anyone on the path, so only loopback is accepted (nothing on the
      // path); it reaches the worker's own machine, so it counts as local and obeys the same switch.
      if (userinfo !== null) return fail(CREDENTIALS);
      return LOOPBACK.test(host)
        ? { ok: true, transport: 'http', local: true }
        : fail('plain http:// is not allowed (unencrypted); use https://');
    case 'git':
      return fail('git:// is not allowed (unauthenticated and unencrypted); use https:// or ssh');
    default:
      return fail(`the "${scheme}://" scheme is not allowed; use https://, ssh:// or user@host:path`);
  }
}

function classifyScpLike(url: string): RepositorySource {
  // `user:password@host:path` parses as host "user" with an odd path; refuse it as what it is.
  if (/^[^/@]*:[^/]*@/.test(url)) return fail(CREDENTIALS);
  const match = SCP_LIKE.exec(url);
  if (!match || !match[3]) return fail('is neither a URL, user@host:path nor a path');
  return checkSshHost(hostOf(match[2]!));
}

function checkSshHost(host: string): RepositorySource {
  if (!host) return fail('must name a host');
  // ssh would read `-oProxyCommand=...` as an option.
  if (host.startsWith('-')) return fail('the host must not begin with "-"');
  return { ok: true, transport: 'ssh', local: false };
}

/** The host of `host[:port]` or `[ipv6][:port]`. */
function hostOf(hostPort: string): string {
  if (hostPort.startsWith('[')) return hostPort.slice(0, hostPort.indexOf(']') + 1);
  const colon = hostPort.indexOf(':');
  return colon < 0 ? hostPort : hostPort.slice(0, colon);
}

const CREDENTIALS = 'credentials must not be embedded in the URL';

function fail(problem: string): RepositorySource {
  return { ok: false, problem };
}

/**
 * The problem with a base ref (branch, tag or commit id), or null. The rules of `git check-ref-format`,
 * plus no leading "-": the ref reaches `git rev-parse` as an argument.
 */
export function baseRefProblem(ref: string): string | null {
  if (ref.startsWith('-')) return 'must not begin with "-"';
  if (CONTROL.test(ref) || /[\s~^:?*[\\]/.test(ref))
    return 'must not contain whitespace, control characters or any of ~ ^ : ? * [ \\';
  if (ref.includes('..')) return 'must not contain ".."';
  if (ref.includes('@{') || ref === '@') return 'must not contain "@{" or be "@"';
  if (ref.startsWith('/') || ref.endsWith('/') || ref.includes('//'))
    return 'must not begin or end with "/" or contain "//"';
  if (ref.endsWith('.')) return 'must not end with "."';
  if (ref.split('/').some((part) => part.startsWith('.') || part.endsWith('.lock')))
    return 'no "/"-separated part may begin with "." or end with ".lock"';
  return null;
}
