import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { PROJECT_ROOT } from '../../config/project-root';
import { ApiError } from '../errors';

// GET /inbox: a small static page (api/inbox/index.html: plain HTML, inline CSS and vanilla JS, no build
// step) listing open escalations and posting decisions through the JSON API. The file is found from the
// project root, not __dirname, so the compiled API (dist/api/routes/) serves the same file as the sources.
// The page holds no data itself: everything comes from /v1/... with the API key the user types in.

export const INBOX_HTML_PATH = path.join(PROJECT_ROOT, 'api', 'inbox', 'index.html');

interface InboxPage {
  html: string;
  contentSecurityPolicy: string;
}

/**
 * A strict policy: only the page's own inline <script> and <style> (by hash) run, requests go to this
 * origin only, nothing may frame the page. A report that somehow got markup into the DOM still could
 * not run script.
 */
function contentSecurityPolicy(html: string): string {
  const hashes = (tag: string) =>
    [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map(
      (m) =>
        `'sha256-${createHash('sha256')
          .update(m[1] ?? '', 'utf8')
          .digest('base64')}'`,
    );
  return [
    "default-src 'none'",
    `script-src ${hashes('script').join(' ') || "'none'"}`,
    `style-src ${hashes('style').join(' ') || "'none'"}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

export const inboxRoutes: FastifyPluginAsync = async (app) => {
  let page: InboxPage | undefined;
  const load = async (): Promise<InboxPage> => {
    if (page) return page;
    let html: string;
    try {
      html = await fs.readFile(INBOX_HTML_PATH, 'utf8');
    } catch (err) {
      app.log.error({ err, path: INBOX_HTML_PATH }, 'the escalation inbox page is missing');
      throw new ApiError(
        503,
        `the escalation inbox page is not installed (${path.relative(PROJECT_ROOT, INBOX_HTML_PATH)} is missing)`,
      );
    }
    page = { html, contentSecurityPolicy: contentSecurityPolicy(html) };
    return page;
  };

  app.get('/inbox', { schema: { hide: true } }, async (_request, reply) => {
    const { html, contentSecurityPolicy } = await load();
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', contentSecurityPolicy)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .send(html);
  });
};
