import { loopRequestSchema } from '../../domain/loop-request';
import { baseRefProblem, classifyRepositoryUrl } from '../../domain/repository-url';
import { loopRequest } from '../support/loop-request';

// Repository URLs and base refs end up on git's command line: the accepted forms, and everything git could
// read as an option, a transport helper or a credential.

describe('repository URLs', () => {
  test.each([
    ['https://github.com/acme/app.git', 'https', false],
    ['https://git.example.com:8443/acme/app', 'https', false],
    ['ssh://git@github.com/acme/app.git', 'ssh', false],
    ['ssh://git@[2001:db8::1]:2222/acme/app.git', 'ssh', false],
    ['git@github.com:acme/app.git', 'ssh', false],
    ['example.com:acme/app.git', 'ssh', false],
    ['file:///srv/git/app.git', 'file', true],
    ['/tmp/loop-fixture-HGcL3y', 'file', true],
    ['./repo', 'file', true],
    ['../repos/app', 'file', true],
    ['repo', 'file', true],
    ['/srv/git/user@host', 'file', true],
    ['http://127.0.0.1:8080/app.git', 'http', true],
    ['http://localhost/app.git', 'http', true],
    ['http://[::1]:9418/app.git', 'http', true],
  ] as const)('%s is accepted (%s, local: %s)', (url, transport, local) => {
    expect(classifyRepositoryUrl(url)).toEqual({ ok: true, transport, local });
  });

  test.each([
    ['fd::17', /"fd::" transport is not allowed/],
    ['ext::sh -c touch% /tmp/pwned', /"ext::" transport is not allowed/],
    ['foo+bar::https://example.com/x', /"foo\+bar::" transport/],
    ['-oProxyCommand=touch /tmp/pwned', /must not begin with "-"/],
    ['--upload-pack=touch /tmp/pwned', /must not begin with "-"/],
    ['git@-oProxyCommand=x:acme/app', /host must not begin with "-"/],
    ['ssh://-oProxyCommand=x/acme/app', /host must not begin with "-"/],
    ['https://u:p@github.com/acme/app.git', /^credentials must not be embedded in the URL$/],
    ['https://ghp_token@github.com/acme/app.git', /^credentials must not be embedded in the URL$/],
    ['ssh://git:secret@github.com/acme/app.git', /^credentials must not be embedded in the URL$/],
    ['git:secret@github.com:acme/app.git', /^credentials must not be embedded in the URL$/],
    ['http://u:p@localhost/app.git', /^credentials must not be embedded in the URL$/],
    ['https://github.com/acme/app\u0000.git', /control characters/],
    ['https://github.com/acme/app.git\n--upload-pack=x', /control characters/],
    ['/tmp/my repo', /whitespace/],
    ['git://github.com/acme/app.git', /git:\/\/ is not allowed \(unauthenticated and unencrypted\)/],
    ['http://github.com/acme/app.git', /plain http:\/\/ is not allowed/],
    ['HTTPS://github.com/acme/app.git', /"HTTPS:\/\/" scheme is not allowed/],
    ['ftp://example.com/app.git', /"ftp:\/\/" scheme is not allowed/],
    ['https:///acme/app.git', /must name a host/],
    ['github.com:', /neither a URL/],
  ])('%j is refused', (url, problem) => {
    const result = classifyRepositoryUrl(url);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.problem).toMatch(problem);
  });
});

describe('base refs', () => {
  test.each(['main', 'release/2.x', 'v1.2.3', 'feature/a-b_c', '0123456789abcdef0123456789abcdef01234567', 'HEAD'])(
    '%s is accepted',
    (ref) => {
      expect(baseRefProblem(ref)).toBeNull();
    },
  );

  test.each([
    ['--upload-pack=x', /begin with "-"/],
    ['-b', /begin with "-"/],
    ['main..evil', /".."/],
    ['main@{1}', /"@\{"/],
    ['@', /"@"/],
    ['main~1', /~/],
    ['main^', /~ \^/],
    ['a:b', /:/],
    ['a?b', /\?/],
    ['a*b', /\*/],
    ['a[b', /\[/],
    ['a\\b', /\\/],
    ['a b', /whitespace/],
    ['a\u0000b', /control/],
    ['main.lock', /\.lock/],
    ['a.lock/b', /\.lock/],
    ['main/', /"\/"/],
    ['/main', /"\/"/],
    ['a//b', /"\/\/"/],
    ['a/.hidden', /begin with "\."/],
    ['main.', /end with "\."/],
  ])('%j is refused', (ref, problem) => {
    expect(baseRefProblem(ref)).toMatch(problem);
  });
});

describe('the loop request schema', () => {
  test('names the field of a refused URL or base ref', () => {
    const result = loopRequestSchema.safeParse(
      loopRequest('fd::17', ['agent'], { repository: { url: 'fd::17', baseRef: '--orphan' } }),
    );
    expect(result.success).toBe(false);
    const issues = result.error!.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: 'repository.url', message: expect.stringMatching(/"fd::" transport/) },
        { path: 'repository.baseRef', message: expect.stringMatching(/begin with "-"/) },
      ]),
    );
  });

  test('accepts the local fixture paths of the committed workflow histories, and defaults the base ref', () => {
    const parsed = loopRequestSchema.parse(
      loopRequest('/tmp/loop-fixture-SkLOuC', ['agent'], { repository: { url: ' /tmp/loop-fixture-SkLOuC ' } }),
    );
    expect(parsed.repository).toEqual({ url: '/tmp/loop-fixture-SkLOuC', baseRef: 'main' });
  });
});
