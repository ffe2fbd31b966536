import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { buildApp } from '../../api/app';
import { COMMANDS } from '../../cli/commands';
import { KEY_VARIABLE } from '../../cli/config';
import { loadConfig } from '../../config/service-config';
import { loopRequestSchema } from '../../domain/loop-request';
import type { PrismaClient } from '../../prisma/client';

// The README's first loop runs as written on a fresh clone: its commands use only variables they set
// themselves, files that exist, routes the API has, CLI commands the CLI has, and a request the API takes
// that needs no model, agent CLI or credential. (It was once a `claude-code` loop with an undefined $KEY.)

const ROOT = path.resolve(__dirname, '../..');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const section = /\n## A first loop[^\n]*\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? '';
const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
const commands = blocks.join('\n');

test('the section is there, in shell blocks', () => {
  expect(blocks.length).toBeGreaterThanOrEqual(4);
});

test('every variable is set by an earlier command (or is the shell’s own $PWD)', () => {
  const set = new Set(['PWD']);
  for (const line of commands.split('\n')) {
    for (const [, name] of line.matchAll(/\$\{?([A-Za-z_]\w*)/g)) expect([name, set.has(name!)]).toEqual([name, true]);
    for (const [, name] of line.matchAll(/(?:^|\s)([A-Za-z_]\w*)=/g)) set.add(name!);
  }
  // The key comes from the file npm start writes, where the default DATA_DIR puts it.
  expect(commands).toContain('KEY=$(cat .data/bootstrap-admin-key)');
  expect(path.relative(ROOT, loadConfig({}).dataDir)).toBe('.data');
});

test('the files it names exist, and the examples directory is what the sandbox is told to show', () => {
  const files = [...commands.matchAll(/(?:\$PWD\/)?(docs\/examples\/[\w.-]+)/g)].map((m) => m[1]!);
  expect(files.length).toBeGreaterThanOrEqual(3);
  for (const file of files) expect([file, fs.existsSync(path.join(ROOT, file))]).toEqual([file, true]);
  expect(commands).toContain('SANDBOX_READONLY_PATHS="$PWD/docs/examples" npm start');
  expect(loadConfig({ SANDBOX_READONLY_PATHS: `${ROOT}/docs/examples` }).sandbox.readOnlyPaths).toContain(
    `${ROOT}/docs/examples`,
  );
});

test('the request is one the API takes, and needs no model, agent CLI or credential', () => {
  const heredoc = /<<EOF[^\n]*\n([\s\S]*?)\nEOF/.exec(commands)?.[1];
  expect(heredoc).toBeDefined();
  const request = loopRequestSchema.parse(JSON.parse(heredoc!.replaceAll('$PWD', ROOT)));
  expect(request.maker.backend).toBe('command');
  expect(request.reviewer).toMatchObject({ backend: 'agent', agent: { backend: 'command' } });
  expect(request.repository.credential).toBeUndefined();
  for (const argv of [request.maker, request.reviewer.backend === 'agent' ? request.reviewer.agent : null]) {
    const script = argv && 'argv' in argv ? argv.argv[1]! : '';
    expect([script, fs.existsSync(script)]).toEqual([script, true]);
  }
});

test('the URLs are the API’s default address and its routes; the CLI has the command, reading $KEY from its variable', async () => {
  const { host, port } = loadConfig({}).api;
  const urls = [...commands.matchAll(/http:\/\/([\d.]+:\d+)(\/v1\/[\w/$]*)/g)];
  expect(urls.length).toBeGreaterThanOrEqual(4);
  const app = await buildApp({
    prisma: {} as unknown as PrismaClient,
    temporal: {} as unknown as Client,
    taskQueue: 'q',
    logLevel: 'silent',
  });
  await app.ready();
  try {
    for (const [, address, route] of urls) {
      expect(address).toBe(`${host}:${port}`);
      const url = route!.replace('$LOOP', ':id');
      const method = url === '/v1/loops' ? 'POST' : 'GET';
      expect([method, url, app.hasRoute({ method, url })]).toEqual([method, url, true]);
    }
  } finally {
    await app.close();
  }
  const cli = /(\w+)=\$KEY npx engineering-loop (\w+)/.exec(commands);
  expect(cli?.[1]).toBe(KEY_VARIABLE);
  expect(COMMANDS.map((c) => c.name)).toContain(cli?.[2]);
});
