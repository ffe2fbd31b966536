import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { childEnvironment } from '../../activities/process/child-environment';
import { unconfined } from '../support/sandbox';
import { runCommand, WorkspaceEscapeError, type CommandSpec } from '../../activities/process/run-command';

// Every test runs real node subprocesses; these bounds only stop a broken test from hanging.
const SLOW_TEST_MS = 30_000;

let workspace: string;
let outside: string;

beforeAll(async () => {
  workspace = await realpath(await mkdtemp(path.join(tmpdir(), 'run-command-workspace-')));
  outside = await realpath(await mkdtemp(path.join(tmpdir(), 'run-command-outside-')));
});

afterAll(async () => {
  await rm(workspace, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

function nodeScript(script: string): string[] {
  return [process.execPath, '-e', script];
}

function command(argv: string[], overrides: Partial<CommandSpec> = {}): CommandSpec {
  return {
    argv,
    cwd: workspace,
    workspaceRoot: workspace,
    timeoutMs: SLOW_TEST_MS,
    env: childEnvironment(),
    sandbox: unconfined(workspace),
    outputCapBytes: 64 * 1024,
    ...overrides,
  };
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

// Polls a condition; killed orphans are reaped by PID 1 asynchronously, so "dead" is not instant.
async function eventually(condition: () => boolean, withinMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await sleep(25);
  }
  return condition();
}

// A node script that installs a SIGTERM handler which does nothing, then records its pid in a file
// (so the file's existence proves the handler is in place) and runs forever.
function ignoresSigtermScript(pidFile: string): string {
  return [
    `process.on('SIGTERM', () => {});`,
    `require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));`,
    `setInterval(() => {}, 1e6);`,
  ].join('\n');
}

describe('runCommand', () => {
  it('records the exit code and the execution identity', async () => {
    const argv = nodeScript('process.exit(3)');
    const result = await runCommand(command(argv));

    expect(result).toMatchObject({
      argv,
      exitCode: 3,
      signal: null,
      timeoutStatus: 'COMPLETED',
      spawnError: null,
      truncated: false,
    });
    expect(result.executionId).toMatch(/^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/);
    expect(result.pid).toEqual(expect.any(Number));
    expect(result.endTime.getTime()).toBeGreaterThanOrEqual(result.startTime.getTime());
  });

  it('captures stdout and stderr separately with their hashes and sizes', async () => {
    const result = await runCommand(
      command(nodeScript(`process.stdout.write('to stdout'); process.stderr.write('to stderr ✓')`)),
    );

    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('to stdout');
    expect(result.stderr).toBe('to stderr ✓');
    expect(result.stdoutSha256).toBe(sha256('to stdout'));
    expect(result.stderrSha256).toBe(sha256('to stderr ✓'));
    expect(result.stdoutBytes).toBe(9);
    expect(result.stderrBytes).toBe(Buffer.byteLength('to stderr ✓'));
  });

  it('delivers stdin and then closes it', async () => {
    const result = await runCommand(
      command(nodeScript('process.stdin.pipe(process.stdout)'), { stdin: 'line one\nline two\n' }),
    );

    expect(result.stdout).toBe('line one\nline two\n');
  });

  it('closes stdin when there is none, so a reading child sees end of input', async () => {
    const result = await runCommand(
      command(nodeScript(`process.stdin.resume(); process.stdin.on('end', () => console.log('eof'))`)),
    );

    expect(result.stdout).toBe('eof\n');
    expect(result.timeoutStatus).toBe('COMPLETED');
  });

  it('ignores a child that exits without reading its stdin', async () => {
    const result = await runCommand(command(nodeScript('process.exit(0)'), { stdin: 'x'.repeat(4 * 1024 * 1024) }));

    expect(result.exitCode).toBe(0);
  });

  it(
    'keeps only the head and the tail of a large stream but hashes and counts all of it',
    async () => {
      const fiveMegabytes = 5 * 1024 * 1024;
      const cap = 64 * 1024;
      const result = await runCommand(
        command(
          nodeScript(
            `process.stdout.write(Buffer.alloc(${fiveMegabytes}, 'abcdefghij\\n')); process.stdout.write('SUMMARY 3 passed')`,
          ),
          { outputCapBytes: cap },
        ),
      );

      const full = Buffer.concat([Buffer.alloc(fiveMegabytes, 'abcdefghij\n'), Buffer.from('SUMMARY 3 passed')]);
      const head = cap - cap / 4;
      expect(result.truncated).toBe(true);
      expect(result.stdoutBytes).toBe(full.length);
      expect(result.stdoutSha256).toBe(sha256(full));
      expect(result.stdout.startsWith(full.subarray(0, head).toString('utf8'))).toBe(true);
      // The end of the stream, where runners print their summaries, is kept too.
      expect(result.stdout.endsWith(full.subarray(full.length - cap / 4).toString('utf8'))).toBe(true);
      expect(result.stdout.endsWith('SUMMARY 3 passed')).toBe(true);
      expect(result.stdout).toContain(
        `[output truncated: kept the first ${head} and the last ${cap / 4} of ${full.length} bytes, ${full.length - cap} bytes omitted]`,
      );
      expect(Buffer.byteLength(result.stdout)).toBeLessThan(cap + 200);
      expect(result.stderr).toBe('');
      expect(result.stderrSha256).toBe(sha256(''));
    },
    SLOW_TEST_MS,
  );

  it('does not split a UTF-8 character at the cap', async () => {
    // 'é' is 2 bytes; a 5-byte cap falls in the middle of the third one.
    const result = await runCommand(command(nodeScript(`process.stdout.write('é'.repeat(10))`), { outputCapBytes: 5 }));

    // 4 bytes of head (two characters) and 1 byte of tail (half a character, dropped).
    expect(result.stdout).toBe(
      'éé\n[output truncated: kept the first 4 and the last 1 of 20 bytes, 15 bytes omitted]\n',
    );
    expect(result.stdout).not.toContain('\uFFFD');
    expect(result.stdoutSha256).toBe(sha256('é'.repeat(10)));
  });

  it(
    'kills the whole process tree on timeout, including a grandchild that ignores SIGTERM',
    async () => {
      const pidFile = path.join(outside, 'grandchild-on-timeout.pid');
      const grandchildArgv = JSON.stringify(['-e', ignoresSigtermScript(pidFile)]);
      const leader = [
        `const { spawn } = require('child_process');`,
        // stdio 'ignore': the grandchild does not hold the pipes, so only a group kill reaches it.
        `spawn(process.execPath, ${grandchildArgv}, { stdio: 'ignore' });`,
        `setInterval(() => {}, 1e6);`,
      ].join('\n');

      const result = await runCommand(command(nodeScript(leader), { timeoutMs: 5_000 }));

      expect(result.timeoutStatus).toBe('TIMED_OUT');
      expect(result.exitCode).toBeNull();
      expect(result.signal).toBe('SIGTERM');
      expect(existsSync(pidFile)).toBe(true);
      const grandchild = Number(readFileSync(pidFile, 'utf8'));
      expect(await eventually(() => !isAlive(grandchild))).toBe(true);
    },
    SLOW_TEST_MS,
  );

  it(
    'sends SIGKILL after the grace period to a command that ignores SIGTERM',
    async () => {
      const readyFile = path.join(outside, 'stubborn-leader.pid');
      const abort = new AbortController();
      const running = runCommand(command(nodeScript(ignoresSigtermScript(readyFile)), { signal: abort.signal }));
      expect(await eventually(() => existsSync(readyFile))).toBe(true);
      abort.abort();

      const result = await running;
      expect(result.timeoutStatus).toBe('CANCELLED');
      expect(result.signal).toBe('SIGKILL');
    },
    SLOW_TEST_MS,
  );

  it(
    'cancels promptly when the abort signal fires',
    async () => {
      const abort = new AbortController();
      const running = runCommand(command(nodeScript('setInterval(() => {}, 1e6)'), { signal: abort.signal }));
      await sleep(200);
      const abortedAt = Date.now();
      abort.abort();

      const result = await running;
      expect(result.timeoutStatus).toBe('CANCELLED');
      expect(result.exitCode).toBeNull();
      expect(result.signal).toBe('SIGTERM');
      expect(Date.now() - abortedAt).toBeLessThan(10_000);
    },
    SLOW_TEST_MS,
  );

  it('cancels a command whose signal is already aborted', async () => {
    const result = await runCommand(command(nodeScript('setInterval(() => {}, 1e6)'), { signal: AbortSignal.abort() }));

    expect(result.timeoutStatus).toBe('CANCELLED');
    expect(result.exitCode).toBeNull();
  });

  it('calls the heartbeat while the command runs', async () => {
    const heartbeat = jest.fn();
    await runCommand(command(nodeScript('setTimeout(() => {}, 600)'), { heartbeat, heartbeatIntervalMs: 50 }));

    expect(heartbeat.mock.calls.length).toBeGreaterThanOrEqual(2);
  });

  it('records a command that cannot be found instead of throwing', async () => {
    const result = await runCommand(command(['definitely-not-a-command-7f3a9c']));

    expect(result.spawnError).toBe('ENOENT: command not found: definitely-not-a-command-7f3a9c');
    expect(result.exitCode).toBeNull();
    expect(result.pid).toBeNull();
    expect(result.timeoutStatus).toBe('COMPLETED');
    expect(result.stdoutSha256).toBe(sha256(''));
  });

  it('rejects an empty argv', async () => {
    await expect(runCommand(command([]))).rejects.toThrow('argv is empty');
  });
});

describe('runCommand cwd confinement', () => {
  it('runs in a subdirectory given relative to the workspace', async () => {
    await mkdir(path.join(workspace, 'packages', 'api'), { recursive: true });
    const result = await runCommand(
      command(nodeScript('process.stdout.write(process.cwd())'), { cwd: 'packages/api' }),
    );

    expect(result.stdout).toBe(path.join(workspace, 'packages', 'api'));
  });

  it('rejects a cwd that climbs out with .., before spawning anything', async () => {
    const marker = path.join(outside, 'must-not-exist');
    const writesMarker = nodeScript(`require('fs').writeFileSync(${JSON.stringify(marker)}, '')`);

    await expect(runCommand(command(writesMarker, { cwd: '..' }))).rejects.toThrow(WorkspaceEscapeError);
    await expect(
      runCommand(command(writesMarker, { cwd: path.join(workspace, 'packages', '..', '..') })),
    ).rejects.toThrow(WorkspaceEscapeError);
    expect(existsSync(marker)).toBe(false);
  });

  it('rejects a symlink inside the workspace that points outside it', async () => {
    await symlink(outside, path.join(workspace, 'escape-link'));

    await expect(runCommand(command(nodeScript('0'), { cwd: path.join(workspace, 'escape-link') }))).rejects.toThrow(
      WorkspaceEscapeError,
    );
  });

  it('rejects a sibling directory whose name starts with the workspace name', async () => {
    const sibling = `${workspace}-sibling`;
    await mkdir(sibling);
    try {
      await expect(runCommand(command(nodeScript('0'), { cwd: sibling }))).rejects.toThrow(WorkspaceEscapeError);
    } finally {
      await rm(sibling, { recursive: true });
    }
  });

  it('rejects a cwd that does not exist', async () => {
    await expect(runCommand(command(nodeScript('0'), { cwd: 'no-such-dir' }))).rejects.toThrow(WorkspaceEscapeError);
  });
});

describe('child environment', () => {
  it('does not pass the service secrets to the child', async () => {
    process.env.DATABASE_URL = 'postgres://service:secret@db/loop';
    process.env.LLM_API_KEY = 'sk-service-secret';
    try {
      const result = await runCommand(
        command(nodeScript('process.stdout.write(JSON.stringify(process.env))'), {
          env: childEnvironment({ GATE_NAME: 'tests' }),
        }),
      );
      const seen = JSON.parse(result.stdout) as Record<string, string>;

      expect(result.stdout).not.toContain('secret');
      expect(seen).not.toHaveProperty('DATABASE_URL');
      expect(seen).not.toHaveProperty('LLM_API_KEY');
      expect(seen).toMatchObject({ CI: 'true', GATE_NAME: 'tests', PATH: process.env.PATH });
    } finally {
      delete process.env.DATABASE_URL;
      delete process.env.LLM_API_KEY;
    }
  });

  it('keeps only allow-listed variables of the parent, then adds CI and the extras', () => {
    const parent = {
      PATH: '/usr/bin',
      HOME: '/home/loop',
      LANG: 'C.UTF-8',
      TEMPORAL_ADDRESS: 'temporal:7233',
      GITHUB_TOKEN: 'ghp_secret',
      NODE_OPTIONS: '--require /tmp/evil.js',
    };

    expect(childEnvironment({ CI: 'false', NPM_CONFIG_CACHE: '/cache' }, parent)).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/loop',
      LANG: 'C.UTF-8',
      CI: 'false',
      NPM_CONFIG_CACHE: '/cache',
    });
  });
});

describe('path arguments of confined commands', () => {
  let workspace: string;
  let outside: string;
  beforeAll(() => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'confine-ws-'));
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'confine-out-'));
    fs.writeFileSync(path.join(outside, 'secret.js'), 'console.log("outside")');
    fs.writeFileSync(path.join(workspace, 'inside.js'), 'console.log("inside")');
    fs.symlinkSync(path.join(outside, 'secret.js'), path.join(workspace, 'link.js'));
  });
  afterAll(() => {
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });
  const run = (argv: string[]) =>
    runCommand({
      argv,
      cwd: workspace,
      workspaceRoot: workspace,
      timeoutMs: 10_000,
      env: { PATH: process.env.PATH ?? '' },
      sandbox: unconfined(workspace),
      outputCapBytes: 4096,
      confinePathArguments: true,
    });

  test.each([
    ['a `..` escape', ['node', '../secret.js']],
    ['an absolute path outside', ['node', '/etc/passwd']],
    ['a flag value escaping', ['node', '--require=../../x.js', 'inside.js']],
    ['a symlink leading outside', ['node', 'link.js']],
  ])('refuses %s without running it', async (_name, argv) => {
    const result = await run(argv);
    expect(result.spawnError).toMatch(
      /^refused: argument ".*" (points outside the workspace|is a symlink that leads outside the workspace)$/,
    );
    expect(result.pid).toBeNull();
    expect(result.exitCode).toBeNull();
  });

  test('runs paths inside the workspace', async () => {
    const result = await run(['node', './inside.js']);
    expect(result.spawnError).toBeNull();
    expect(result.stdout.trim()).toBe('inside');
  });

  test('runs paths inside a directory the policy makes writable (where a test report goes), and no other', async () => {
    const policy = { workDir: workspace, egress: null, writable: [outside] };
    const report = `--outputFile=${path.join(outside, 'report.json')}`;
    const spec = {
      cwd: workspace,
      workspaceRoot: workspace,
      timeoutMs: 10_000,
      env: { PATH: process.env.PATH ?? '' },
      outputCapBytes: 4096,
      confinePathArguments: true,
    };
    const result = await runCommand({
      ...spec,
      argv: ['node', './inside.js', report],
      sandbox: { ...unconfined(workspace), policy },
    });
    expect(result.spawnError).toBeNull();
    expect(result.stdout.trim()).toBe('inside');
    const elsewhere = await runCommand({
      ...spec,
      argv: ['node', './inside.js', '--outputFile=/etc/report.json'],
      sandbox: { ...unconfined(workspace), policy },
    });
    expect(elsewhere.spawnError).toMatch(
      /^refused: argument "--outputFile=\/etc\/report.json" points outside the workspace$/,
    );
  });
});
