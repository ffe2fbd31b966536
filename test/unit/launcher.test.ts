import fs from 'node:fs';
import os from 'node:os';
import { launch, stopLauncher, type LaunchSpec } from '../../activities/process/launcher';
import { gone } from '../support/processes';

// The launcher starts the service's processes from a small helper process (fork+exec from the big worker
// blocks its event loop). Real processes: output complete and in order, real pids leading their own
// process groups, spawn failures reported, and nothing left running when the helper dies (when its
// owner dies: test/integration/launcher-owner.test.ts, which runs the compiled launcher).

async function run(command: string, args: string[], extra: Partial<LaunchSpec> = {}) {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  const child = await launch({
    command,
    args,
    cwd: os.tmpdir(),
    env: process.env,
    onStdout: (c) => stdout.push(c),
    onStderr: (c) => stderr.push(c),
    ...extra,
  });
  const exit = await child.closed;
  return {
    child,
    exit,
    stdout: Buffer.concat(stdout).toString('utf8'),
    stderr: Buffer.concat(stderr).toString('utf8'),
  };
}

/** The parent of a process: for a launched command, the helper process that spawned it. */
function parentOf(pid: number): number {
  return Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
}

const sleeper = () =>
  launch({
    command: 'sleep',
    args: ['30'],
    cwd: os.tmpdir(),
    env: process.env,
    onStdout: () => undefined,
    onStderr: () => undefined,
  });

test('delivers all output, in order, with the exit code and stdin', async () => {
  const script =
    'process.stdin.pipe(process.stdout); for (let i = 0; i < 20000; i++) process.stderr.write(`line ${i}\\n`); process.exitCode = 3;';
  const { exit, stdout, stderr } = await run(process.execPath, ['-e', script], { stdin: 'from stdin' });
  expect(exit).toEqual({ code: 3, signal: null });
  expect(stdout).toBe('from stdin');
  const lines = stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(20000);
  expect(lines[19999]).toBe('line 19999');
});

test('passes large output intact', async () => {
  const { stdout } = await run(process.execPath, ['-e', "process.stdout.write('x'.repeat(8 * 1024 * 1024))"]);
  expect(stdout.length).toBe(8 * 1024 * 1024);
});

test('the pid is real and leads its own process group, which the caller can signal', async () => {
  const child = await sleeper();
  expect(child.pid).not.toBeNull();
  const pgid = Number(fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[2]);
  expect(pgid).toBe(child.pid);
  process.kill(-child.pid!, 'SIGTERM');
  expect(await child.closed).toEqual({ code: null, signal: 'SIGTERM' });
});

test('a command or directory that does not exist is a spawn error, not an exit', async () => {
  const missing = await run('no-such-command-here', []);
  expect(missing.child.pid).toBeNull();
  expect(missing.child.spawnError?.code).toBe('ENOENT');
  expect(missing.exit).toEqual({ code: null, signal: null });
  const noDir = await run('true', [], { cwd: '/no/such/directory' });
  expect(noDir.child.spawnError?.code).toBe('ENOENT');
});

test('closeOutput ends a run whose pipes a background descendant still holds', async () => {
  const child = await launch({
    command: 'sh',
    args: ['-c', 'sleep 30 & echo started'],
    cwd: os.tmpdir(),
    env: process.env,
    onStdout: () => undefined,
    onStderr: () => undefined,
  });
  expect((await child.exited).code).toBe(0);
  process.kill(-child.pid!, 'SIGKILL');
  child.closeOutput();
  await expect(child.closed).resolves.toMatchObject({ code: 0 });
});

test('when the helper dies, what it ran is killed and its caller fails, and the next launch starts a new helper', async () => {
  const child = await sleeper();
  const helper = parentOf(child.pid!);
  expect(helper).not.toBe(process.pid);
  process.kill(helper, 'SIGKILL');
  // Not an outcome of the command's own (a gate "killed by SIGKILL"): the activity attempt fails and is retried.
  await expect(child.closed).rejects.toThrow('the process launcher exited while sleep ran (it was killed)');
  await expect(child.exited).rejects.toThrow('the process launcher exited');
  // SIGKILL is sent, not yet necessarily delivered.
  expect(await gone(child.pid!)).toBe(true);
  const next = await sleeper();
  expect(parentOf(next.pid!)).not.toBe(helper);
  process.kill(-next.pid!, 'SIGKILL');
  await next.closed;
});

test('a launch the helper dies before starting is a spawn error, and leaves no promise rejected unheard', async () => {
  const first = await sleeper();
  const helper = parentOf(first.pid!);
  // Stopped, the helper cannot start the next command before it is killed.
  process.kill(helper, 'SIGSTOP');
  const pending = sleeper();
  process.kill(helper, 'SIGKILL');
  const never = await pending;
  expect(never.pid).toBeNull();
  expect(never.spawnError).toMatchObject({ code: 'ELAUNCHER', message: 'the process launcher exited' });
  // Its caller reads spawnError and awaits neither promise: both settle without a rejection.
  await expect(never.closed).resolves.toEqual({ code: null, signal: null });
  await expect(never.exited).resolves.toEqual({ code: null, signal: null });
  await expect(first.closed).rejects.toThrow('the process launcher exited while sleep ran (it was killed)');
});

test('stopLauncher ends the helper, and a later launch starts a new one', async () => {
  const first = await sleeper();
  const helper = parentOf(first.pid!);
  process.kill(-first.pid!, 'SIGKILL');
  await first.closed;
  await stopLauncher();
  expect(await gone(helper)).toBe(true);
  const next = await run('echo', ['after']);
  expect(next.stdout).toBe('after\n');
});
