import type { PullRequestSettings } from '../domain/delivery';

// Opens a GitHub pull request or a GitLab merge request for the loop's pushed branch, over their REST
// APIs. Idempotent: when one is already open for the branch (GitHub 422, GitLab 409), its URL is returned.

export interface PullRequestCall {
  provider: PullRequestSettings['provider'];
  /** REST API base: https://api.github.com, https://gitlab.com/api/v4 or a self-hosted one. */
  apiBaseUrl: string;
  token: string;
  /** `owner/repo` (GitHub) or `group/…/project` (GitLab). */
  project: string;
  head: string;
  base: string;
  title: string;
  body: string;
  draft: boolean;
  timeoutMs?: number;
}

export const DEFAULT_API_BASE_URLS: Record<PullRequestSettings['provider'], string> = {
  github: 'https://api.github.com',
  gitlab: 'https://gitlab.com/api/v4',
};

export class PullRequestError extends Error {}

/** Opens (or finds) the pull/merge request and returns its web URL. */
export async function openPullRequest(call: PullRequestCall): Promise<string> {
  return call.provider === 'github' ? openGitHub(call) : openGitLab(call);
}

async function openGitHub(call: PullRequestCall): Promise<string> {
  const base = call.apiBaseUrl.replace(/\/+$/, '');
  const [owner, repo] = call.project.split('/');
  const repoPath = `${base}/repos/${encodeURIComponent(owner!)}/${encodeURIComponent(repo!)}`;
  const headers = {
    authorization: `Bearer ${call.token}`,
    accept: 'application/vnd.github+json',
    'x-github-api-version': '2022-11-28',
    'user-agent': 'engineering-loop',
  };
  const created = await send(call, `${repoPath}/pulls`, 'POST', headers, {
    title: call.title,
    head: call.head,
    base: call.base,
    body: call.body,
    draft: call.draft,
  });
  if (created.status === 201) return urlOf(created.json, 'html_url');
  if (created.status === 422) {
    // "A pull request already exists for owner:branch": find the open one.
    const existing = await send(
      call,
      `${repoPath}/pulls?state=open&head=${encodeURIComponent(`${owner}:${call.head}`)}`,
      'GET',
      headers,
    );
    const first = Array.isArray(existing.json) ? (existing.json[0] as unknown) : undefined;
    if (existing.status === 200 && first) return urlOf(first, 'html_url');
  }
  throw new PullRequestError(
    `GitHub answered ${created.status} to POST ${repoPath}/pulls: ${created.text.slice(0, 500)}`,
  );
}

async function openGitLab(call: PullRequestCall): Promise<string> {
  const base = call.apiBaseUrl.replace(/\/+$/, '');
  const projectPath = `${base}/projects/${encodeURIComponent(call.project)}`;
  const headers = { 'private-token': call.token, accept: 'application/json', 'user-agent': 'engineering-loop' };
  const title = call.draft ? `Draft: ${call.title}` : call.title;
  const created = await send(call, `${projectPath}/merge_requests`, 'POST', headers, {
    source_branch: call.head,
    target_branch: call.base,
    title,
    description: call.body,
  });
  if (created.status === 201) return urlOf(created.json, 'web_url');
  if (created.status === 409) {
    const existing = await send(
      call,
      `${projectPath}/merge_requests?state=opened&source_branch=${encodeURIComponent(call.head)}`,
      'GET',
      headers,
    );
    const first = Array.isArray(existing.json) ? (existing.json[0] as unknown) : undefined;
    if (existing.status === 200 && first) return urlOf(first, 'web_url');
  }
  throw new PullRequestError(
    `GitLab answered ${created.status} to POST ${projectPath}/merge_requests: ${created.text.slice(0, 500)}`,
  );
}

async function send(
  call: PullRequestCall,
  url: string,
  method: 'GET' | 'POST',
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; text: string; json: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      // The token goes to the configured API only, never to wherever a redirect points.
      redirect: 'error',
      signal: AbortSignal.timeout(call.timeoutMs ?? 30_000),
    });
  } catch (err) {
    throw new PullRequestError(`${method} ${url} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: the status and text explain it.
  }
  return { status: res.status, text, json };
}

/**
 * The request's web address from the forge's answer: an http(s) URL, serialised as WHATWG URL does —
 * ASCII only (punycode host, percent-encoded path), so a length cut in characters is one in bytes too
 * (the Web UI's search attribute has a byte limit). Anything else is an answer the service cannot show.
 */
function urlOf(value: unknown, key: 'html_url' | 'web_url'): string {
  const url = (value as Record<string, unknown> | null)?.[key];
  if (typeof url !== 'string') throw new PullRequestError(`the answer has no ${key}`);
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (parsed?.protocol !== 'https:' && parsed?.protocol !== 'http:')
    throw new PullRequestError(`the answer's ${key} is not an http(s) URL`);
  return parsed.href;
}
