import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ASKPASS_SCRIPT, ensureAskPass, remoteAccessFor } from '../../activities/git-askpass';
import { gitConfigArgs, gitEnvironment } from '../../activities/git-isolation';
import { openPullRequest } from '../../activities/pull-request';
import { projectPathFromUrl } from '../../domain/delivery';
import { loopRequestSchema } from '../../domain/loop-request';
import { loadConfig } from '../../config/service-config';
import { gitCredentialSecrets, loadGitCredentials } from '../../config/git-credentials';
import { serviceSecrets } from '../../config/service-secrets';
import { startFakeForgeServer, type FakeForgeServer } from '../support/fake-forge-server';
import { loopRequest } from '../support/loop-request';

// Delivery's parts on their own: the askpass script, credential configuration and host binding, the
// request shape, project paths from URLs, and the GitHub/GitLab wire formats against a local server.

const SECRET = 'tok-3f9a1c77e2b54d0d9e1f';
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'delivery-'));
  dirs.push(d);
  return d;
}

describe('askpass', () => {
  test("answers git's username and password prompts from its environment, never from argv", async () => {
    const dataDir = tempDir();
    const script = await ensureAskPass(dataDir);
    expect(fs.readFileSync(script, 'utf8')).toBe(ASKPASS_SCRIPT);
    expect(fs.statSync(script).mode & 0o777).toBe(0o700);
    expect(ASKPASS_SCRIPT).not.toContain(SECRET);
    const env = { PATH: process.env.PATH, LOOP_GIT_USERNAME: 'x-access-token', LOOP_GIT_PASSWORD: SECRET };
    expect(execFileSync(script, ["Username for 'https://github.com': "], { env, encoding: 'utf8' })).toBe(
      'x-access-token\n',
    );
    expect(
      execFileSync(script, ["Password for 'https://x-access-token@github.com': "], { env, encoding: 'utf8' }),
    ).toBe(`${SECRET}\n`);
    // Rewriting is idempotent.
    expect(await ensureAskPass(dataDir)).toBe(script);
  });

  test('a credentialed call sets the askpass program and the secret only in the environment', async () => {
    const dataDir = tempDir();
    const config = loadConfig({
      DATA_DIR: dataDir,
      GIT_CREDENTIALS: JSON.stringify({
        acme: { username: 'x-access-token', password: SECRET, hosts: ['github.com'] },
      }),
    });
    const access = await remoteAccessFor(config, 'https://github.com/acme/widgets.git', 'acme', 'repository url');
    const args = gitConfigArgs(access);
    expect(args.join(' ')).not.toContain(SECRET);
    expect(args).toContain(`core.askPass=${path.join(dataDir, 'git-askpass.sh')}`);
    expect(args).toContain('http.followRedirects=false');
    const env = gitEnvironment(dataDir, access);
    expect(env).toMatchObject({
      GIT_ASKPASS: path.join(dataDir, 'git-askpass.sh'),
      LOOP_GIT_PASSWORD: SECRET,
      LOOP_GIT_USERNAME: 'x-access-token',
    });
    // Without a credential: no askpass, no secret.
    const plain = await remoteAccessFor(config, 'https://github.com/acme/widgets.git', undefined, 'repository url');
    expect(gitEnvironment(dataDir, plain).LOOP_GIT_PASSWORD).toBeUndefined();
    expect(gitConfigArgs(plain)).toContain('core.askPass=');
  });

  test('a credential goes only to its hosts; an unknown name is refused', async () => {
    const config = loadConfig({
      DATA_DIR: tempDir(),
      GIT_CREDENTIALS: JSON.stringify({ acme: { username: 'u', password: SECRET, hosts: ['github.com'] } }),
    });
    await expect(
      remoteAccessFor(config, 'https://evil.example/acme/widgets.git', 'acme', 'repository url'),
    ).rejects.toThrow('repository.credential: "acme" is not for host evil.example');
    await expect(remoteAccessFor(config, 'https://github.com/a/b', 'other', 'repository url')).rejects.toThrow(
      '"other" is not configured on this worker',
    );
  });
});

describe('credential configuration', () => {
  test('GIT_CREDENTIALS and GIT_CREDENTIALS_FILE merge; invalid JSON never echoes the secret; secrets reach the sanitiser', () => {
    const file = path.join(tempDir(), 'credentials.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        'gitlab-acme': {
          username: 'oauth2',
          password: `${SECRET}-gl`,
          hosts: ['gitlab.com'],
          apiToken: `${SECRET}-api`,
        },
      }),
    );
    const merged = loadGitCredentials(
      JSON.stringify({ 'github-acme': { username: 'x', password: SECRET, hosts: ['github.com'] } }),
      file,
    );
    expect(Object.keys(merged!).sort()).toEqual(['github-acme', 'gitlab-acme']);
    expect(gitCredentialSecrets(merged).sort()).toEqual([SECRET, `${SECRET}-api`, `${SECRET}-gl`].sort());
    expect(loadGitCredentials(undefined, undefined)).toBeNull();
    expect(() => loadGitCredentials(`{"a": "${SECRET}"`, undefined)).toThrow(
      /^Invalid configuration: GIT_CREDENTIALS must be JSON$/,
    );
    expect(() =>
      loadGitCredentials(JSON.stringify({ 'Bad Name': { username: 'u', password: SECRET, hosts: ['h'] } }), undefined),
    ).toThrow('GIT_CREDENTIALS: Bad Name: Invalid key in record');
    const config = loadConfig({ GIT_CREDENTIALS_FILE: file });
    expect(serviceSecrets(config)).toEqual(expect.arrayContaining([`${SECRET}-gl`, `${SECRET}-api`]));
  });
});

describe('the request shape', () => {
  const base = loopRequest('/repo', ['true']);

  test('delivery defaults to a push; a pull request needs a credential and a push', () => {
    expect(loopRequestSchema.parse(base).delivery).toEqual({ push: true, majorImpactNeedsApproval: false });
    const withPr = loopRequestSchema.parse({
      ...base,
      repository: { url: '/repo', credential: 'github-acme' },
      delivery: { pullRequest: { provider: 'github' } },
    });
    expect(withPr.delivery.pullRequest).toEqual({ provider: 'github', draft: true });
    const noCredential = loopRequestSchema.safeParse({ ...base, delivery: { pullRequest: { provider: 'github' } } });
    expect(noCredential.error?.issues.map((i) => i.path.join('.'))).toEqual(['delivery.pullRequest']);
    const noPush = loopRequestSchema.safeParse({
      ...base,
      repository: { url: '/repo', credential: 'c' },
      delivery: { push: false, pullRequest: { provider: 'gitlab' } },
    });
    expect(noPush.error?.issues[0]?.message).toContain('delivery.push: true');
  });

  test('credential names and push URLs are validated like repository URLs', () => {
    const bad = loopRequestSchema.safeParse({ ...base, repository: { url: '/repo', credential: '../../etc' } });
    expect(bad.error?.issues[0]?.path).toEqual(['repository', 'credential']);
    const embedded = loopRequestSchema.safeParse({
      ...base,
      delivery: { pushUrl: `https://x:${SECRET}@github.com/a/b.git` },
    });
    expect(embedded.error?.issues[0]).toMatchObject({
      path: ['delivery', 'pushUrl'],
      message: 'credentials must not be embedded in the URL',
    });
    expect(loopRequestSchema.safeParse({ ...base, delivery: { pushUrl: 'ext::sh -c evil' } }).success).toBe(false);
  });

  test('owner/repo from GitHub and GitLab style URLs', () => {
    expect(projectPathFromUrl('https://github.com/acme/widgets.git')).toBe('acme/widgets');
    expect(projectPathFromUrl('git@github.com:acme/widgets.git')).toBe('acme/widgets');
    expect(projectPathFromUrl('ssh://git@gitlab.com/group/sub/project')).toBe('group/sub/project');
    expect(projectPathFromUrl('/srv/repos/widgets')).toBeNull();
    expect(projectPathFromUrl('https://github.com/just-owner')).toBeNull();
  });
});

describe('pull requests on the wire', () => {
  let forge: FakeForgeServer;
  beforeAll(async () => {
    forge = await startFakeForgeServer();
  });
  afterAll(() => forge.close());

  const call = {
    token: SECRET,
    head: 'engineering-loop/l1',
    base: 'main',
    title: 'Make sum add',
    body: '### Definition of Done\n| AC-1 |',
    draft: true,
  };

  test('GitHub: POST /repos/{owner}/{repo}/pulls with a bearer token; a second call finds the open one', async () => {
    const before = forge.requests.length;
    const url = await openPullRequest({
      ...call,
      provider: 'github',
      apiBaseUrl: forge.baseUrl,
      project: 'acme/widgets',
    });
    expect(url).toBe('https://github.example/acme/widgets/pull/1');
    const [sent] = forge.requests.slice(before);
    expect(sent).toMatchObject({
      method: 'POST',
      path: '/repos/acme/widgets/pulls',
      body: { title: 'Make sum add', head: 'engineering-loop/l1', base: 'main', draft: true, body: call.body },
    });
    expect(sent!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(sent!.headers.accept).toBe('application/vnd.github+json');
    expect(
      await openPullRequest({ ...call, provider: 'github', apiBaseUrl: forge.baseUrl, project: 'acme/widgets' }),
    ).toBe(url);
    expect(forge.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /repos/acme/widgets/pulls',
      'POST /repos/acme/widgets/pulls',
      'GET /repos/acme/widgets/pulls?state=open&head=acme%3Aengineering-loop%2Fl1',
    ]);
  });

  test('GitLab: POST /projects/{encoded path}/merge_requests with PRIVATE-TOKEN, draft as a title prefix; 409 finds the open one', async () => {
    const before = forge.requests.length;
    const gl = { ...call, provider: 'gitlab' as const, apiBaseUrl: `${forge.baseUrl}/`, project: 'group/sub/widgets' };
    const url = await openPullRequest(gl);
    expect(url).toBe('https://gitlab.example/group/sub/widgets/-/merge_requests/2');
    const [sent] = forge.requests.slice(before);
    expect(sent).toMatchObject({
      method: 'POST',
      path: '/projects/group%2Fsub%2Fwidgets/merge_requests',
      body: {
        source_branch: 'engineering-loop/l1',
        target_branch: 'main',
        title: 'Draft: Make sum add',
        description: call.body,
      },
    });
    expect(sent!.headers['private-token']).toBe(SECRET);
    expect(await openPullRequest(gl)).toBe(url);
  });

  test("the request's address is kept as an ASCII http(s) URL; any other answer is an error", async () => {
    let answer: unknown = null;
    const server = http.createServer((_req, res) =>
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(answer)),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const apiBaseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const open = () => openPullRequest({ ...call, provider: 'github', apiBaseUrl, project: 'a/b' });
    try {
      answer = { html_url: 'https://bücher.example/équipe/wïdgets/pull/7' };
      const url = await open();
      expect(url).toBe('https://xn--bcher-kva.example/%C3%A9quipe/w%C3%AFdgets/pull/7');
      expect(Buffer.byteLength(url, 'utf8')).toBe(url.length);
      for (const html_url of ['javascript:alert(1)', 'file:///etc/passwd', 'not a url', 42]) {
        answer = { html_url };
        await expect(open()).rejects.toThrow(
          typeof html_url === 'string' ? 'is not an http(s) URL' : 'has no html_url',
        );
      }
    } finally {
      server.close();
    }
  });

  test('an error answer fails with the status', async () => {
    await expect(
      openPullRequest({ ...call, provider: 'github', apiBaseUrl: `${forge.baseUrl}/nowhere`, project: 'a/b' }),
    ).rejects.toThrow('GitHub answered 404');
  });
});
