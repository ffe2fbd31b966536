import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { REDACTED, registerServiceSecrets, sanitise, sanitiseTokens } from '../../domain/sanitise';

const R = REDACTED;

describe('sanitise redacts', () => {
  test.each([
    [
      'a PEM private key block',
      'x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\ny',
      `x\n-----BEGIN RSA PRIVATE KEY-----${R}-----END RSA PRIVATE KEY-----\ny`,
    ],
    [
      'consecutive PEM blocks, keeping the text between them',
      '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\nnext\n-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIF\n-----END ENCRYPTED PRIVATE KEY-----',
      `-----BEGIN PRIVATE KEY-----${R}-----END PRIVATE KEY-----\nnext\n-----BEGIN ENCRYPTED PRIVATE KEY-----${R}-----END ENCRYPTED PRIVATE KEY-----`,
    ],
    [
      'a PEM block cut off before its END, to the end of the text',
      'key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\nAAAA',
      `key:\n-----BEGIN OPENSSH PRIVATE KEY-----${R}`,
    ],
    ['URL credentials, keeping the user', 'postgres://loop:s3cretpw@db:5432/x', `postgres://loop:${R}@db:5432/x`],
    [
      'URL credentials in a git remote',
      "fatal: 'https://x-access-token:abc123@github.com/o/r.git'",
      `fatal: 'https://x-access-token:${R}@github.com/o/r.git'`,
    ],
    ['a Bearer header', 'Authorization: Bearer abc.def.ghi-123456', `Authorization: Bearer ${R}`],
    ['a Basic header', 'Authorization: Basic dXNlcjpwYXNzd29yZA==', `Authorization: Basic ${R}`],
    ['an OpenAI key', 'using key sk-proj-abcdefghijklmnop1234567890', `using key ${R}`],
    ['an Anthropic key', 'ANTHROPIC sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA', `ANTHROPIC ${R}`],
    ...['ghp', 'gho', 'ghu', 'ghs', 'ghr'].map((p) => [
      `a GitHub ${p}_ token`,
      `token ${p}_0123456789abcdefghijABCDEFGHIJ012345`,
      `token ${R}`,
    ]),
    ['a fine-grained GitHub token', `x github_pat_11ABCDEFG0${'a1B2c3'.repeat(10)} y`, `x ${R} y`],
    ...['glpat', 'gldt', 'glrt'].map((p) => [`a GitLab ${p}- token`, `${p}-${'xY9_'.repeat(5)}`, R]),
    ['a Slack bot token', 'slack xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx.', `slack ${R}.`],
    ['a Slack app token', 'xapp-1-A0123456789-1234567890123-abcdef0123456789', R],
    ['an AWS access key id', 'aws AKIAIOSFODNN7EXAMPLE ok', `aws ${R} ok`],
    ['a temporary AWS access key id', '"ASIAY34FZKBOKMUTVV7A"', `"${R}"`],
    [
      'an AWS secret key standing alone',
      'creds AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY end',
      `creds ${R} ${R} end`,
    ],
    ['an AWS secret key in quotes', "['wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY']", `['${R}']`],
    ['a Google API key', `key=AIza${'Sy0_a-B'.repeat(5)}`, `key=${R}`],
    [
      'a JWT',
      'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
      `jwt ${R}`,
    ],
    ['a password assignment', 'DB_PASSWORD=hunter2hunter2 next', `DB_PASSWORD=${R} next`],
    ['a JSON api key', '{"api_key": "12345678abcdef"}', `{"api_key": "${R}"}`],
    ['a YAML client secret', 'client_secret: 0a1b2c3d4e', `client_secret: ${R}`],
    ['a command-line token', 'git push --token=abcd1234efgh', `git push --token=${R}`],
    ['an access key assignment', "AWS_SECRET_ACCESS_KEY='abc/def+ghi'", `AWS_SECRET_ACCESS_KEY='${R}'`],
    ['a private key assignment', 'signer.private_key = 0xdeadbeefcafe;', `signer.private_key = ${R};`],
  ])('%s', (_name, input, expected) => {
    expect(sanitise(input)).toBe(expected);
  });
});

test('AWS secret keys standing alone are redacted, 2,000 random ones of them', () => {
  const keys = Array.from({ length: 2000 }, (_, i) =>
    createHash('sha256').update(`key ${i}`).digest('base64').slice(0, 40),
  );
  const mixed = (key: string) => [/[A-Z]/, /[a-z]/, /[0-9]/].every((p) => p.test(key));
  const kept = keys.filter((key) => mixed(key) && sanitise(`k ${key} .`) !== `k ${R} .`);
  expect(kept).toEqual([]);
});

test('real test names and paths are never redacted: a corpus of 5,900 from Go, Python, JVM jars and npm packages', () => {
  const corpus = fs
    .readFileSync(path.join(__dirname, '..', 'fixtures', 'redaction', 'real-names.txt'), 'utf8')
    .split('\n')
    .filter((line) => line && !line.startsWith('#'));
  expect(corpus.length).toBeGreaterThan(5900);
  // Each alone and as a report line shows it; six of the Go names were redacted before the package-path rule.
  expect(corpus.filter((name) => sanitise(name) !== name || sanitise(`--- PASS: ${name} (0.01s)`).includes(R))).toEqual(
    [],
  );
});

describe('sanitise keeps', () => {
  test.each([
    ['a git sha (40 hex characters)', 'commit c99a5d7e9d74e3f167c366ab50b9c806586989e3 (HEAD)'],
    ['a call assigned to a token', 'const token = nextToken();'],
    ['a comparison with a token', 'if (token == null) return;'],
    [
      'code reading a secret',
      'const token = await getToken();\npassword = process.env.DB_PASSWORD; secret: this.secret, apiKey: null',
    ],
    ['token counts', '"max_tokens": 4096, "input_tokens": 1234, prompt_tokens=5678'],
    [
      'base64 of 39 and 41 characters',
      'AbCdEfGhIj0123456789/+AbCdEfGhIj0123456 AbCdEfGhIj0123456789/+AbCdEfGhIj012345678',
    ],
    ['padded base64 of 32 bytes', 'F2vEN7YKuQednutf06gn9dKznmqvsj2nUtIMXYqc+Do='],
    // 40 characters of names and paths, as test reports and logs print them.
    ['a Go test in its package path', 'ok github.com/google/uuid/TestVersion7Monotonicity (0.01s)'],
    ['a long Go test name', '--- PASS: TestParseXMLDocumentWithNamespaces1234ab'],
    ['a JUnit class path', 'at org/apache/commons/lang3/StringUtilsTest.java:42'],
    ['a TypeScript source path', 'src/components/checkout/PaymentForm2Step.tsx'],
    [
      'lockfile integrity values',
      '"integrity": "sha512-rufdvQ5zfKIRsdPUHCkQkUaZCZPwY9PoGiSOtQ1qP+cwRC79ZNeRNJqsssuT4n+c8W3Ood6B3l0R+OznrvT43Q=="',
    ],
    ['the service’s own API keys (base64url)', `elk_${'A1b-C2d_'.repeat(5)}xyz elk_${'Ab1'.repeat(14)}x`],
    ['a certificate', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----'],
    [
      'URLs without credentials',
      'see https://example.com/docs/password-reset and ssh://git@github.com/o/r, git@github.com:o/r.git',
    ],
    ['ordinary output', 'Tests:       2 passed, 2 total\nok 1 - tokenizer splits words\nsk-short\nthe Bearer scheme'],
  ])('%s', (_name, input) => {
    expect(sanitise(input)).toBe(input);
  });
});

describe('sanitiseTokens', () => {
  test('redacts token shapes but leaves name=value text to its owner', () => {
    expect(sanitiseTokens('password=hunter2hunter2 key sk-proj-abcdefghijklmnop1234567890')).toBe(
      `password=hunter2hunter2 key ${R}`,
    );
  });

  test('is idempotent, like sanitise', () => {
    const text =
      'x\n-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\nhttps://u:p4ss@h DB_PASSWORD=hunter22 -----BEGIN EC PRIVATE KEY-----\nabc';
    expect(sanitise(sanitise(text))).toBe(sanitise(text));
    expect(sanitiseTokens(sanitiseTokens(text))).toBe(sanitiseTokens(text));
  });
});

// Every pattern on 1 MiB built to make a backtracking pattern rescan: each must finish (jest's timeout
// is the backstop; the figures are in bench/sanitiser.mjs) and give the right output.
describe('adversarial input of 1 MiB', () => {
  const MiB = 1024 * 1024;
  const same = (input: string) => input;
  /** Each repetition of `unit` becomes `redacted`. */
  const each = (unit: string, redacted: string) => (input: string) => redacted.repeat(input.length / unit.length);

  test.each<[string, string, (input: string) => string]>([
    ['PEM: BEGIN with no END', '-----BEGIN RSA PRIVATE KEY-----', () => `-----BEGIN RSA PRIVATE KEY-----${R}`],
    ['PEM: BEGIN without a label', '-----BEGIN ', same],
    ['PEM: END without a BEGIN', '-----END RSA PRIVATE KEY-----', same],
    [
      'PEM: whole blocks',
      '-----BEGIN EC PRIVATE KEY-----k-----END EC PRIVATE KEY-----',
      each(
        '-----BEGIN EC PRIVATE KEY-----k-----END EC PRIVATE KEY-----',
        `-----BEGIN EC PRIVATE KEY-----${R}-----END EC PRIVATE KEY-----`,
      ),
    ],
    ['URL: scheme and user, no @', 'https://a:', same],
    ['URL: one long scheme-like run', 'a.', same],
    ['URL: credentials', 'a://b:c@', each('a://b:c@', `a://b:${R}@`)],
    ['Authorization: no value', 'Bearer ', same],
    ['Authorization: values', 'Bearer abcdefgh ', each('Bearer abcdefgh ', `Bearer ${R} `)],
    ['sk-: one run', 'sk-', () => R],
    ['sk-: inside a run', '-sk-', same],
    ['GitHub: prefixes only', 'ghp_', same],
    ['GitLab: one run', 'glpat-', () => R],
    ['Slack: one run', 'xoxb-', () => R],
    ['AWS key id: prefixes only', 'AKIA', same],
    ['Google: one run', 'AIza', (input) => R + input.slice(39)],
    ['JWT: prefixes inside a run', '-eyJ', same],
    ['JWT: header without payload', 'eyJ', same],
    ['JWT: tokens', 'eyJabcdefgh.eyJabcdefgh.sig ', each('eyJabcdefgh.eyJabcdefgh.sig ', `${R} `)],
    [
      'AWS secret: 40-character token soup',
      'AbCdEfGhIj0123456789/+AbCdEfGhIj01234567 ',
      each('AbCdEfGhIj0123456789/+AbCdEfGhIj01234567 ', `${R} `),
    ],
    ['AWS secret: one long run', 'AbCdEfGhIj0123456789/+AbCdEfGhIj012345678', same],
    ['AWS secret: 40-character runs joined by -', 'AbCdEfGhIj0123456789/+AbCdEfGhIj01234567-', same],
    ['assignment: 1-1-1-…', '1-', same],
    ['assignment: a:a:a:…', 'a:', same],
    ['assignment: password=password=…', 'password=', () => `password=${R}`],
    ['assignment: secretsecret…', 'secret', same],
    ['assignment: names without values', 'password ', same],
    ['assignment: calls', 'token=nextToken(', same],
    ['assignment: a secret after a plain name', 'x=password=', () => `x=password=${R}`],
  ])('%s', (_name, unit, expected) => {
    const input = unit.repeat(Math.ceil(MiB / unit.length));
    expect(sanitise(input)).toBe(expected(input));
  });

  test('known secrets', () => {
    const unit = 'x=my-llm-key-value;';
    const input = unit.repeat(Math.ceil(MiB / unit.length));
    expect(sanitise(input, ['my-llm-key-value'])).toBe(`x=${R};`.repeat(input.length / unit.length));
  });
});

// Last: the registry is process-wide, and this file's other tests run without it.
describe('service secrets', () => {
  test('registered and known secrets are redacted wherever they appear; short ones are ignored', () => {
    registerServiceSecrets(['registered-db-password', 'short']);
    expect(sanitise('pw registered-db-password!')).toBe(`pw ${R}!`);
    expect(sanitiseTokens('xregistered-db-passwordx')).toBe(`x${R}x`);
    expect(sanitise('echo my-llm-key-value here', ['my-llm-key-value'])).toBe(`echo ${R} here`);
    expect(sanitise('a short word', ['short'])).toBe('a short word');
  });

  test('a secret containing another is redacted whole', () => {
    registerServiceSecrets(['abcdefgh', 'abcdefgh-longer']);
    expect(sanitise('v=abcdefgh-longer.')).toBe(`v=${R}.`);
  });
});
