import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configFilePath, DEFAULT_URL, requireApiKey, resolveConfig } from '../../cli/config';

// The CLI's configuration: environment first, then $XDG_CONFIG_HOME/engineering-loop/config.json, then defaults.

const homes: string[] = [];
afterAll(() => homes.forEach((home) => fs.rmSync(home, { recursive: true, force: true })));

function withConfigFile(content: string | object): { env: NodeJS.ProcessEnv; file: string } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-config-'));
  homes.push(home);
  const file = path.join(home, 'xdg', 'engineering-loop', 'config.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return { env: { HOME: home, XDG_CONFIG_HOME: path.join(home, 'xdg') }, file };
}

test('the config file lives under XDG_CONFIG_HOME, else ~/.config; a relative XDG_CONFIG_HOME is ignored', () => {
  expect(configFilePath({ XDG_CONFIG_HOME: '/etc/xdg', HOME: '/home/ana' })).toBe(
    '/etc/xdg/engineering-loop/config.json',
  );
  expect(configFilePath({ HOME: '/home/ana' })).toBe('/home/ana/.config/engineering-loop/config.json');
  expect(configFilePath({ XDG_CONFIG_HOME: 'relative/dir', HOME: '/home/ana' })).toBe(
    '/home/ana/.config/engineering-loop/config.json',
  );
  expect(configFilePath({ XDG_CONFIG_HOME: '', HOME: '/home/ana' })).toBe(
    '/home/ana/.config/engineering-loop/config.json',
  );
});

test('without environment or file: the default URL and no key, and asking for the key says where to put one', () => {
  const config = resolveConfig({ HOME: '/nonexistent-home' });
  expect(config).toMatchObject({ url: DEFAULT_URL, apiKey: null, sources: { url: 'default', apiKey: null } });
  expect(() => requireApiKey(config)).toThrow('no API key configured');
  try {
    requireApiKey(config);
  } catch (error) {
    expect((error as { hint: string }).hint).toContain(
      'ENGINEERING_LOOP_API_KEY, or "apiKey" in /nonexistent-home/.config/engineering-loop/config.json',
    );
  }
});

test('the file supplies what the environment does not; the environment wins field by field', () => {
  const { env } = withConfigFile({ url: 'http://file.example:4000/', apiKey: 'elk_file' });
  expect(resolveConfig(env)).toMatchObject({
    url: 'http://file.example:4000',
    apiKey: 'elk_file',
    sources: { url: 'config file', apiKey: 'config file' },
  });
  expect(resolveConfig({ ...env, ENGINEERING_LOOP_API_KEY: 'elk_env' })).toMatchObject({
    url: 'http://file.example:4000',
    apiKey: 'elk_env',
    sources: { url: 'config file', apiKey: 'environment' },
  });
  expect(
    resolveConfig({ ...env, ENGINEERING_LOOP_URL: 'https://env.example/base/', ENGINEERING_LOOP_API_KEY: ' elk_env ' }),
  ).toMatchObject({
    url: 'https://env.example/base',
    apiKey: 'elk_env',
    sources: { url: 'environment', apiKey: 'environment' },
  });
  // An empty variable counts as unset.
  expect(resolveConfig({ ...env, ENGINEERING_LOOP_URL: '  ' }).url).toBe('http://file.example:4000');
});

test('the file is not read when the environment has both settings, so a broken file does not matter then', () => {
  const read = jest.fn(() => '{ broken');
  expect(
    resolveConfig({ ENGINEERING_LOOP_URL: 'http://a:1', ENGINEERING_LOOP_API_KEY: 'k', HOME: '/h' }, read).url,
  ).toBe('http://a:1');
  expect(read).not.toHaveBeenCalled();
  expect(() => resolveConfig({ ENGINEERING_LOOP_URL: 'http://a:1', HOME: '/h' }, read)).toThrow(
    /^the config file \/h\/.config\/engineering-loop\/config.json is not valid JSON: /,
  );
});

test('a config file with unknown or mistyped fields, or an unusable URL, is refused with the reason', () => {
  expect(() => resolveConfig(withConfigFile({ url: 'http://x', apikey: 'typo' }).env)).toThrow(
    /config.json is invalid: config: Unrecognized key: "apikey"/,
  );
  expect(() => resolveConfig(withConfigFile({ apiKey: 42 }).env)).toThrow(/config.json is invalid: apiKey: /);
  expect(() => resolveConfig(withConfigFile({ url: 'localhost:3000' }).env)).toThrow(
    /"url" in .*config.json must be an http:\/\/ or https:\/\/ URL \(got "localhost:3000"\)/,
  );
  expect(() => resolveConfig({ HOME: '/h', ENGINEERING_LOOP_URL: 'not a url' })).toThrow(
    'ENGINEERING_LOOP_URL is not a URL: "not a url"',
  );
  expect(() => resolveConfig({ HOME: '/h', ENGINEERING_LOOP_URL: 'http://x/?a=1' })).toThrow(
    'must not have a query or fragment',
  );
});
