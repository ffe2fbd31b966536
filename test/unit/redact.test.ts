import { redactSecrets } from '../../activities/process/redact';

describe('redactSecrets', () => {
  test.each([
    ['an OpenAI key', 'using key sk-proj-abcdefghijklmnop1234567890', 'using key [REDACTED]'],
    ['an Anthropic key', 'ANTHROPIC sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA', 'ANTHROPIC [REDACTED]'],
    ['a GitHub token', 'token ghp_0123456789abcdefghijABCDEFGHIJ0123456789', 'token [REDACTED]'],
    ['an AWS access key id', 'aws AKIAIOSFODNN7EXAMPLE ok', 'aws [REDACTED] ok'],
    ['a bearer header', 'Authorization: Bearer abc.def.ghi-123456', 'Authorization: Bearer [REDACTED]'],
    ['a password assignment', 'DB_PASSWORD=hunter2hunter2 next', 'DB_PASSWORD=[REDACTED] next'],
    ['a JSON api key', '{"api_key": "12345678abcdef"}', '{"api_key": "[REDACTED]"}'],
    ['URL credentials', 'postgres://loop:s3cretpw@db:5432/x', 'postgres://loop:[REDACTED]@db:5432/x'],
    [
      'a private key block',
      'x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\ny',
      'x\n-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\ny',
    ],
  ])('redacts %s', (_name, input, expected) => {
    expect(redactSecrets(input)).toBe(expected);
  });

  test('redacts the service’s own secrets wherever they appear', () => {
    expect(redactSecrets('echo my-llm-key-value here', ['my-llm-key-value'])).toBe('echo [REDACTED] here');
  });

  test('leaves ordinary output alone', () => {
    const output = [
      'Tests:       2 passed, 2 total',
      'ok 1 - tokenizer splits words',
      'see https://example.com/docs/password-reset for details',
      'const token = nextToken();',
      'sk-short',
    ].join('\n');
    expect(redactSecrets(output)).toBe(output);
  });
});
