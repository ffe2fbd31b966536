import { runCli } from '../../cli/cli';
import { COMMANDS } from '../../cli/commands';
import { durationOption } from '../../cli/inputs';
import type { Io } from '../../cli/io';

// Argument handling without a server: help, usage errors and their exit codes (in process).

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = {
    isTTY: false,
    out: (t) => (out += `${t}\n`),
    err: (t) => (err += `${t}\n`),
    write: (t) => (out += t),
  };
  // No key and an unreachable URL: a command that got as far as the API would say so.
  const code = await runCli(argv, io, { HOME: '/nonexistent-home', ENGINEERING_LOOP_URL: 'http://127.0.0.1:9' });
  return { code, out, err };
}

test('--help, -h and `help` list the commands; each command has its own help with its options', async () => {
  const main = await run('--help');
  expect(main).toMatchObject({ code: 0, err: '' });
  for (const command of COMMANDS) expect(main.out).toContain(`  ${command.name.padEnd(8)}  ${command.summary}`);
  expect((await run('help')).out).toBe(main.out);
  expect((await run('-h')).out).toBe(main.out);

  for (const command of COMMANDS) {
    const help = await run(command.name, '--help');
    expect(help).toMatchObject({ code: 0, err: '' });
    expect(help.out).toContain(`usage: engineering-loop ${command.name} ${command.usage}`);
    for (const option of Object.keys(command.options)) expect(help.out).toContain(`--${option}`);
    expect(help.out).toContain('--json');
    expect((await run('help', command.name)).out).toBe(help.out);
  }
  // Help needs neither a key nor a valid loop id.
  expect((await run('decide', '--help', 'not-a-uuid')).code).toBe(0);
});

test('no command: the help on stderr and exit 1', async () => {
  const none = await run();
  expect(none.code).toBe(1);
  expect(none.out).toBe('');
  expect(none.err).toContain('usage: engineering-loop <command>');
});

test('global flags go before or after the command', async () => {
  expect(await run('--json', 'show')).toMatchObject({
    code: 1,
    err: expect.stringContaining('show: missing <loopId>'),
  });
  expect(await run('show', '--json')).toMatchObject({
    code: 1,
    err: expect.stringContaining('show: missing <loopId>'),
  });
});

test('decision arguments are checked before anything is sent', async () => {
  const id = '3f2c9a1e-8d4b-4c1a-9e7f-0a1b2c3d4e5f';
  expect((await run('decide', id, 'amend')).err).toBe(
    'error: decide: --contract: an amend needs a contract file: JSON or YAML with the contract fields to replace\nhint: see: engineering-loop decide --help\n',
  );
  expect((await run('decide', id, 'retry', '--guidance', '   ')).err).toContain(
    'decide:\n  - --guidance: must not be empty\n  - --guidance: a retry needs guidance',
  );
  expect((await run('decide', id, 'reject', '--contract', 'x.yaml')).err).toContain(
    '--contract: only an amend takes a contract (this is reject)',
  );
  expect((await run('decide', id, 'approve', '--escalation', 'first')).err).toContain(
    '--escalation: must be an escalation number (1, 2, …) or an escalation id (UUID), got "first"',
  );
  expect((await run('decide', id, 'amend', '--contract', '/nonexistent/amend.yaml')).err).toBe(
    'error: cannot read contract amendment file /nonexistent/amend.yaml: no such file\n',
  );
  // Valid arguments reach the configuration, which has no key here.
  expect((await run('decide', id, 'APPROVE')).err).toMatch(/^error: no API key configured\n/);
});

test('--timeout takes a duration: 90s, 30m, 1h, 500ms, or seconds alone', () => {
  const timeout = durationOption(7 * 24 * 3_600_000);
  expect(['90s', '30m', '1h', '1.5h', '500ms', '45', ' 2m '].map((t) => timeout.parse(t))).toEqual([
    90_000, 1_800_000, 3_600_000, 5_400_000, 500, 45_000, 120_000,
  ]);
  expect(timeout.parse(undefined)).toBeUndefined();
  for (const bad of ['', '-1s', '1d', '1h30m', 'soon']) expect(timeout.safeParse(bad).success).toBe(false);
});

test('other usage errors: option values, extra arguments, options a command does not take', async () => {
  expect((await run('list', '--status', 'done')).err).toContain(
    'list: --status: the status must be one of RUNNING, AWAITING_DECISION, PAUSED, PASSED, APPROVED, REJECTED, CANCELLED, FAILED, TERMINATED, QUEUED, got "DONE"',
  );
  expect((await run('list', '--limit')).err).toContain('list: option --limit needs a value');
  expect((await run('list', '--json=yes')).err).toContain('list: option --json takes no value');
  expect((await run('watch', '3f2c9a1e-8d4b-4c1a-9e7f-0a1b2c3d4e5f', '--timeout', '10 minutes')).err).toContain(
    'watch: --timeout: must be a duration like 90s, 30m or 1h (at most 168h), got "10 minutes"',
  );
  expect((await run('submit', 'task.yaml', '--watch', '--timeout', '169h')).err).toContain(
    'submit: --timeout: must be a duration like 90s, 30m or 1h (at most 168h), got "169h"',
  );
  expect((await run('logs', '3f2c9a1e-8d4b-4c1a-9e7f-0a1b2c3d4e5f', '--setup', '--iteration', '2')).err).toContain(
    '--setup: use either --setup or --iteration, not both',
  );
  expect((await run('show', 'a', 'b')).err).toContain(
    'show: unexpected argument "b" (usage: engineering-loop show <loopId>)',
  );
  expect((await run('submit', 'task.yaml', '--status', 'PASSED')).err).toContain('submit: unknown option --status');
  for (const args of [['list', '--limit'], ['show', 'a', 'b'], ['nope']]) expect((await run(...args)).code).toBe(1);
});
