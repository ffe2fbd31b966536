import {
  egressEntryFor,
  endpointEntry,
  formatEgressEntry,
  narrowEgress,
  networkRequestSchema,
  parseEgressEntry,
  parseEgressList,
  sandboxEgress,
} from '../../domain/egress';

describe('egress allow-list entries', () => {
  test('parse host, host:port, wildcards and address literals, and print them back', () => {
    for (const text of ['api.anthropic.com', 'registry.npmjs.org:443', '*.crates.io', '127.0.0.1:4010', '[::1]:8080']) {
      expect(formatEgressEntry(parseEgressEntry(text))).toBe(text);
    }
    expect(parseEgressEntry('API.Example.COM')).toEqual({ host: 'api.example.com', wildcard: false, port: null });
  });

  test('refuse what is not a host, with the entry named', () => {
    expect(() => parseEgressEntry('http://x.org')).toThrow('"http://x.org" is not a host');
    expect(() => parseEgressEntry('x.org:0')).toThrow('the port must be 1–65535');
    expect(() => parseEgressEntry('300.1.1.1')).toThrow('is not a host');
    expect(() => parseEgressList('pypi.org, bad host')).toThrow('"bad host"');
  });

  test('an entry without a port allows 443 and 80 only; a wildcard matches subdomains, not the domain', () => {
    const allow = parseEgressList('pypi.org,*.crates.io,127.0.0.1:4010');
    expect(egressEntryFor(allow, 'pypi.org', 443)).not.toBeNull();
    expect(egressEntryFor(allow, 'PyPI.org', 80)).not.toBeNull();
    expect(egressEntryFor(allow, 'pypi.org', 22)).toBeNull();
    expect(egressEntryFor(allow, 'static.crates.io', 443)).not.toBeNull();
    expect(egressEntryFor(allow, 'crates.io', 443)).toBeNull();
    expect(egressEntryFor(allow, 'evilcrates.io', 443)).toBeNull();
    expect(egressEntryFor(allow, '127.0.0.1', 4010)).not.toBeNull();
    expect(egressEntryFor(allow, '127.0.0.1', 7233)).toBeNull();
  });

  test('a model endpoint URL becomes its host and port', () => {
    expect(endpointEntry('https://api.anthropic.com/v1')).toEqual({
      host: 'api.anthropic.com',
      wildcard: false,
      port: 443,
    });
    expect(endpointEntry('http://127.0.0.1:4010/v1')).toEqual({ host: '127.0.0.1', wildcard: false, port: 4010 });
  });
});

describe('a request narrows the operator’s list and never widens it', () => {
  const operator = parseEgressList('*.example.com,pypi.org,127.0.0.1:4010');

  test('true keeps the whole list, false gives no network at all', () => {
    expect(narrowEgress(operator, true).allow).toEqual(operator);
    expect(sandboxEgress(operator, false)).toBeNull();
    expect(sandboxEgress([], true)).toEqual([]);
  });

  test('a list keeps what the operator covers and names the rest', () => {
    const { allow, dropped } = narrowEgress(operator, [
      'api.example.com',
      '*.sub.example.com',
      'pypi.org:443',
      'pypi.org:8443',
      '127.0.0.1:7233',
      'example.com',
      '*.com',
    ]);
    expect(allow.map(formatEgressEntry)).toEqual(['api.example.com', '*.sub.example.com', 'pypi.org:443']);
    expect(dropped).toEqual(['pypi.org:8443', '127.0.0.1:7233', 'example.com', '*.com']);
  });

  test('the request schema takes a boolean or entries, and names a bad entry', () => {
    expect(networkRequestSchema.parse(['pypi.org'])).toEqual(['pypi.org']);
    const bad = networkRequestSchema.safeParse(['pypi.org', 'not a host']);
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual([1]);
  });
});
