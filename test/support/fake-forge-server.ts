import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A real HTTP server speaking the pull-request wire formats of GitHub (POST /repos/{owner}/{repo}/pulls,
// 201 with html_url; 422 when one is already open; GET …/pulls?head=owner:branch) and GitLab
// (POST /projects/{id}/merge_requests, 201 with web_url; 409 when one is open; GET …?source_branch=).
// Every request is recorded.

export interface RecordedForgeRequest {
  method: string;
  /** The path as sent (percent-encoding kept). */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface FakeForgeServer {
  /** http://127.0.0.1:<port>, the apiBaseUrl of a credential. */
  baseUrl: string;
  requests: RecordedForgeRequest[];
  close(): Promise<void>;
}

export async function startFakeForgeServer(): Promise<FakeForgeServer> {
  const requests: RecordedForgeRequest[] = [];
  const open = new Map<string, string>(); // "<project> <branch>" → web URL
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text ? (JSON.parse(text) as unknown) : null;
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const url = new URL(req.url ?? '/', 'http://localhost');
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      const github = /^\/repos\/([^/]+)\/([^/]+)\/pulls$/.exec(url.pathname);
      if (github) {
        const project = `${github[1]}/${github[2]}`;
        if (req.method === 'POST') {
          const b = body as { head: string };
          const key = `${project} ${b.head}`;
          if (open.has(key))
            return send(422, {
              message: 'Validation Failed',
              errors: [{ message: `A pull request already exists for ${github[1]}:${b.head}.` }],
            });
          const htmlUrl = `https://github.example/${project}/pull/${open.size + 1}`;
          open.set(key, htmlUrl);
          return send(201, {
            number: open.size,
            html_url: htmlUrl,
            draft: (body as { draft?: boolean }).draft ?? false,
          });
        }
        const head = url.searchParams.get('head')?.split(':')[1] ?? '';
        const found = open.get(`${project} ${head}`);
        return send(200, found ? [{ html_url: found }] : []);
      }
      const gitlab = /^\/projects\/([^/]+)\/merge_requests$/.exec(req.url?.split('?')[0] ?? '');
      if (gitlab) {
        const project = decodeURIComponent(gitlab[1]!);
        if (req.method === 'POST') {
          const b = body as { source_branch: string };
          const key = `${project} ${b.source_branch}`;
          if (open.has(key))
            return send(409, { message: ['Another open merge request already exists for this source branch: !1'] });
          const webUrl = `https://gitlab.example/${project}/-/merge_requests/${open.size + 1}`;
          open.set(key, webUrl);
          return send(201, { iid: open.size, web_url: webUrl });
        }
        const found = open.get(`${project} ${url.searchParams.get('source_branch') ?? ''}`);
        return send(200, found ? [{ web_url: found }] : []);
      }
      send(404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
