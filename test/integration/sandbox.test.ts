import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { childEnvironment } from '../../activities/process/child-environment';
import { runCommand, type CommandResult } from '../../activities/process/run-command';
import { handOver } from '../../activities/sandbox/hand-over';
import { probeSandbox } from '../../activities/sandbox/probe';
import { loopCaches } from '../../activities/sandbox/loop-caches';
import { stopPreviousAttempt } from '../../activities/sandbox/stop-previous-attempt';
import { loadConfig } from '../../config/service-config';
import { parseEgressList } from '../../domain/egress';
import type { SandboxPolicy } from '../../activities/sandbox/types';
import { testSandbox } from '../support/sandbox';

// The sandbox against real bubblewrap: each case is something an untrusted command tries, and each
// must fail visibly while the same command's legitimate work still succeeds.

const sandbox = testSandbox('bwrap', { SANDBOX_MAX_PROCESSES: '64', SANDBOX_MAX_FILE_BYTES: String(1024 * 1024) });
let root: string;
let workspace: string;
let secretDir: string;

beforeAll(async () => {
  await probeSandbox(sandbox);
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-test-')));
  workspace = path.join(root, 'workspace');
  secretDir = path.join(root, 'data');
  fs.mkdirSync(path.join(workspace, '.git'), { recursive: true });
  fs.mkdirSync(secretDir);
  fs.writeFileSync(path.join(secretDir, 'bootstrap-admin-key'), 'elk_secret\n', { mode: 0o600 });
  await handOver(sandbox, workspace);
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function run(script: string, policy: Partial<SandboxPolicy> = {}, args: string[] = []): Promise<CommandResult> {
  return runCommand({
    argv: [process.execPath, '-e', script, ...args],
    cwd: workspace,
    workspaceRoot: workspace,
    timeoutMs: 60_000,
    env: childEnvironment({ LOOP_ID: 'sandbox-test' }, { ...process.env, LLM_API_KEY: 'sk-must-not-leak-0123456789' }),
    sandbox: { sandbox, policy: { workDir: workspace, egress: null, readOnlyInWorkDir: ['.git'], ...policy } },
    outputCapBytes: 64 * 1024,
  });
}

/** Runs `fn` (source of a function body) and prints what it returned, or the error code it threw. */
const attempt = (body: string) =>
  `try { const r = (() => { ${body} })(); console.log('OK', String(r).slice(0, 200)); } catch (e) { console.log('DENIED', e.code || e.message); }`;

describe('bubblewrap sandbox', () => {
  it('runs as an unprivileged uid in its own pid namespace', async () => {
    const result = await run(
      `console.log(process.getuid(), fs.readdirSync('/proc').filter((p) => /^\\d+$/.test(p)).length)`.replace(
        'fs.',
        "require('fs').",
      ),
    );
    const [uid, processes] = result.stdout.trim().split(' ').map(Number);
    expect(result.exitCode).toBe(0);
    if (process.getuid?.() === 0) expect(uid).toBe(65534);
    // bwrap's init, the command itself: the worker and every other host process are invisible.
    expect(processes).toBeLessThanOrEqual(3);
  });

  it("cannot read the worker's environment or its secrets", async () => {
    const result = await run(
      attempt(`return require('fs').readFileSync('/proc/${process.pid}/environ', 'utf8')`) +
        `; console.log('KEY', process.env.LLM_API_KEY ?? 'absent')`,
    );
    expect(result.stdout).toMatch(/^DENIED ENOENT/m);
    expect(result.stdout).toContain('KEY absent');
  });

  it('cannot see the data directory, other workspaces or the host /tmp', async () => {
    const result = await run(
      attempt(
        `return require('fs').readFileSync(${JSON.stringify(path.join(secretDir, 'bootstrap-admin-key'))}, 'utf8')`,
      ) +
        ';' +
        attempt(`return require('fs').readdirSync(${JSON.stringify(root)})`),
    );
    expect(result.stdout).toMatch(/^DENIED ENOENT\n/);
    // Only the workspace itself is mounted under the root it lives in.
    expect(result.stdout).toMatch(/^OK workspace$/m);
  });

  it('writes its workspace but not .git, the system or the host', async () => {
    const outside = path.join(root, 'escaped.txt');
    const result = await run(
      [
        attempt(`require('fs').writeFileSync('made.txt', 'x'); return 'workspace'`),
        attempt(`require('fs').writeFileSync('.git/hooks-post-commit', 'x')`),
        attempt(`require('fs').writeFileSync('/usr/local/pwned', 'x')`),
        attempt(`require('fs').writeFileSync(${JSON.stringify(outside)}, 'x')`),
        attempt(`require('fs').writeFileSync('/tmp/private.txt', 'x'); return 'tmp'`),
      ].join(';'),
    );
    expect(result.stdout.trim().split('\n')).toEqual([
      'OK workspace',
      'DENIED EROFS',
      'DENIED EROFS',
      expect.stringMatching(/^DENIED (ENOENT|EROFS|EACCES)/),
      'OK tmp',
    ]);
    expect(fs.existsSync(path.join(workspace, 'made.txt'))).toBe(true);
    expect(fs.existsSync(outside)).toBe(false);
    expect(fs.existsSync('/tmp/private.txt')).toBe(false);
  });

  describe('network', () => {
    let server: net.Server;
    let port: number;
    let other: net.Server;
    let otherPort: number;
    const listen = async (srv: net.Server) => {
      await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
      return (srv.address() as net.AddressInfo).port;
    };
    beforeAll(async () => {
      server = net.createServer((socket) => socket.end('hello\n'));
      other = net.createServer((socket) => socket.end('secret\n'));
      port = await listen(server);
      otherPort = await listen(other);
    });
    afterAll(() => {
      server.close();
      other.close();
    });
    const connect = (p: number) =>
      `{ const s = require('net').connect(${p}, '127.0.0.1'); s.on('data', (d) => { console.log('CONNECTED', String(d).trim()); s.destroy(); }); s.on('error', (e) => console.log('REFUSED', e.code)); }`;
    /** A CONNECT request to the proxy the bridge offers on 127.0.0.1:3128; prints its status line. */
    const viaProxy = (target: string) =>
      `{ const s = require('net').connect(3128, '127.0.0.1', () => s.write('CONNECT ${target} HTTP/1.1\\r\\nHost: ${target}\\r\\n\\r\\n')); s.once('data', (d) => { console.log('PROXY', String(d).split('\\r\\n')[0]); s.destroy(); }); s.on('error', (e) => console.log('REFUSED', e.code)); }`;

    it('has none without an allow-list: the host’s loopback is not there', async () => {
      expect((await run(connect(port))).stdout).toMatch(/^REFUSED (ECONNREFUSED|ENETUNREACH)/);
    });

    it('reaches an allow-listed loopback port through the bridge, and nothing else of the host', async () => {
      const allowed = await run(`${connect(port)} ${connect(otherPort)}`, {
        egress: parseEgressList(`127.0.0.1:${port}`),
      });
      expect(allowed.stdout).toContain('CONNECTED hello');
      expect(allowed.stdout).not.toContain('secret');
      expect(allowed.stdout).toMatch(/REFUSED ECONNREFUSED/);
      expect(allowed.egressRefused).toEqual([]);
    });

    it('refuses through the proxy what the list does not name, and records each destination once with its attempts', async () => {
      const result = await run(
        `${viaProxy(`127.0.0.1:${otherPort}`)} setTimeout(() => { ${viaProxy(`127.0.0.1:${otherPort}`)} ${viaProxy('localhost:7233')} }, 300);`,
        { egress: parseEgressList(`127.0.0.1:${port}`) },
      );
      expect(result.stdout).toContain('PROXY HTTP/1.1 403 Forbidden');
      expect(result.stdout).not.toContain('200');
      expect(result.egressRefused).toEqual([
        { host: '127.0.0.1', port: otherPort, reason: 'not on the allow-list', attempts: 2 },
        { host: 'localhost', port: 7233, reason: 'not on the allow-list', attempts: 1 },
      ]);
    });

    it('never lets an allowed name through to an address of the host or a private range', async () => {
      // /etc/hosts maps this machine's own name to loopback (or its interface address): a DNS answer
      // cannot turn an allowed name into the host's services.
      const name = os.hostname();
      const result = await run(viaProxy(`${name}:${otherPort}`), { egress: parseEgressList(`${name}:${otherPort}`) });
      expect(result.stdout).toContain('PROXY HTTP/1.1 403 Forbidden');
      expect(result.egressRefused[0]?.reason).toMatch(/^resolves to .*, an address of the host or a private range$/);
    });

    it('sees the proxy in the usual variables, and a command that cannot start still says so', async () => {
      const result = await run('console.log(process.env.HTTPS_PROXY, process.env.NO_PROXY)', { egress: [] });
      expect(result.stdout.trim()).toBe('http://127.0.0.1:3128 localhost,127.0.0.1,::1');
      const missing = await runCommand({
        argv: ['no-such-command-anywhere'],
        cwd: workspace,
        workspaceRoot: workspace,
        timeoutMs: 10_000,
        env: childEnvironment({}),
        sandbox: { sandbox, policy: { workDir: workspace, egress: [] } },
        outputCapBytes: 4096,
      });
      expect(missing.spawnError).toMatch(/^ENOENT: command not found: no-such-command-anywhere/);
    });
  });

  it('ends the step when the command exits, whatever it left behind (setsid daemon, a child holding stdout)', async () => {
    const marker = `sandbox-daemon-${process.pid}-${Date.now()}`;
    const result = await run(
      `const { spawn } = require('child_process');
       spawn('setsid', ['sh', '-c', 'exec -a ${marker} sleep 600'], { detached: true, stdio: 'ignore' }).unref();
       spawn('sh', ['-c', 'exec -a ${marker} sleep 600'], { stdio: ['ignore', 'inherit', 'inherit'] }).unref();
       console.log('left them running');`,
    );
    expect(result.timeoutStatus).toBe('COMPLETED');
    expect(result.stdout).toContain('left them running');
    expect(execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })).not.toContain(marker);
  });

  it('limits processes and file sizes', async () => {
    const forks = await run(
      `const { spawn } = require('child_process'); let ok = 0, failed = 0;
       for (let i = 0; i < 200; i++) { try { const c = spawn('sleep', ['30']); c.on('error', () => failed++); if (c.pid) ok++; } catch { failed++; } }
       setTimeout(() => { console.log('spawned', ok, 'failed', failed); process.exit(0); }, 500);`,
    );
    const [, spawned] = forks.stdout.match(/spawned (\d+)/) ?? [];
    expect(Number(spawned)).toBeLessThan(64);
    const big = await run(
      `require('fs').writeFileSync('big.bin', Buffer.alloc(2 * 1024 * 1024)); console.log('wrote')`,
    );
    expect(big.stdout).not.toContain('wrote');
    expect(big.exitCode === 0 && big.signal === null).toBe(false);
  });

  it('reports a missing program as not found', async () => {
    const result = await runCommand({
      argv: ['no-such-agent-cli'],
      cwd: workspace,
      workspaceRoot: workspace,
      timeoutMs: 10_000,
      env: childEnvironment(),
      sandbox: { sandbox, policy: { workDir: workspace, egress: null } },
      outputCapBytes: 4096,
    });
    expect(result.spawnError).toMatch(
      /^ENOENT: command not found: no-such-agent-cli \(the sandbox shows only the system, toolchains, SANDBOX_READONLY_PATHS and the workspace\)$/,
    );
  });
});

describe('a worker without a working sandbox', () => {
  it('refuses to start, naming what is missing and the explicit way out', async () => {
    const broken = { ...sandbox, wrap: (argv: string[]) => ['/nonexistent/bwrap', ...argv] };
    await expect(probeSandbox(broken)).rejects.toThrow(/bwrap is not installed .*or set SANDBOX=none/);
  });

  it('SANDBOX=none runs commands as they are, and is the only mode that does', () => {
    expect(testSandbox('none').wrap(['node', '-v'], { workDir: '/w', egress: null }, '/w')).toEqual(['node', '-v']);
    expect(sandbox.wrap(['node', '-v'], { workDir: '/w', egress: null }, '/w').slice(0, 1)).toEqual(['bwrap']);
  });
});

describe('a retried step stopping its previous attempt', () => {
  it('kills the recorded process group only while it still belongs to this loop and iteration', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn('sleep', ['600'], {
      detached: true,
      stdio: 'ignore',
      env: { PATH: process.env.PATH ?? '', LOOP_ID: 'other-loop', LOOP_SEQUENCE: '1' },
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      // The pid was reused by another loop's command: it must survive.
      await stopPreviousAttempt(child.pid!, { LOOP_ID: 'this-loop', LOOP_SEQUENCE: '1' });
      expect(child.exitCode).toBeNull();
      expect(() => process.kill(child.pid!, 0)).not.toThrow();
      await stopPreviousAttempt(child.pid!, { LOOP_ID: 'other-loop', LOOP_SEQUENCE: '1' });
      await expect(exited).resolves.toBeNull();
      expect(child.signalCode).toBe('SIGKILL');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});

describe('agent credentials', () => {
  it('hands agents only the variables the operator names, and refuses a name that is not set', () => {
    const config = loadConfig({ AGENT_CREDENTIALS: 'ANTHROPIC_API_KEY', ANTHROPIC_API_KEY: 'sk-ant-test-0123456789' });
    expect(config.agentCredentials).toEqual({ ANTHROPIC_API_KEY: 'sk-ant-test-0123456789' });
    expect(() => loadConfig({ AGENT_CREDENTIALS: 'NOT_SET_ANYWHERE' })).toThrow(
      /AGENT_CREDENTIALS names NOT_SET_ANYWHERE, which is not set/,
    );
  });
});

describe('package caches', () => {
  it("point every tool at the loop's own caches: writable for set-up, read-only for makers and gates", async () => {
    const config = loadConfig({ DATA_DIR: root });
    const cacheDir = await loopCaches({ config, sandbox }, 'loop-a');
    expect(await loopCaches({ config, sandbox }, 'loop-b')).not.toBe(cacheDir);
    const inCaches = (script: string, access: 'install' | 'use') =>
      runCommand({
        argv: ['sh', '-c', script],
        cwd: workspace,
        workspaceRoot: workspace,
        timeoutMs: 60_000,
        env: childEnvironment(),
        sandbox: { sandbox, policy: { workDir: workspace, egress: null, caches: { dir: cacheDir, access } } },
        outputCapBytes: 4096,
      });
    const installing = await inCaches(
      'touch "$npm_config_cache/written" && go env GOMODCACHE && echo "$CARGO_HOME $PIP_CACHE_DIR"',
      'install',
    );
    expect(installing.exitCode).toBe(0);
    expect(installing.stdout).toBe(`${cacheDir}/go-mod\n${cacheDir}/cargo ${cacheDir}/pip\n`);
    expect(fs.existsSync(path.join(cacheDir, 'npm', 'written'))).toBe(true);
    // A maker or a gate reads the caches but cannot plant anything in them; build caches are its own.
    const using = await inCaches(
      'cat "$npm_config_cache/written" && touch "$CARGO_HOME/planted"; echo "exit $? GOCACHE=$(go env GOCACHE)"',
      'use',
    );
    expect(using.stdout).toMatch(/^exit 1 GOCACHE=\/tmp\/home\/\.cache\/go-build$/m);
    expect(using.stderr).toContain('Read-only file system');
    expect(fs.existsSync(path.join(cacheDir, 'cargo', 'planted'))).toBe(false);
  });
});

describe('Gradle with read-only caches', () => {
  // Gradle writes its home on every build, and a wrapper locks its distribution's directory: a maker or a
  // gate gets a home of its own in the sandbox's /tmp, made from the loop's (activities/sandbox/gradle-home.ts).
  // The distribution here is Debian's Gradle 4.4.1 zipped as Gradle publishes one, served from a file: URL.
  it("runs a repository's Gradle wrapper on the distribution set-up left in the loop cache, downloading nothing", async () => {
    const project = path.join(root, 'wrapped');
    const host = { ...process.env, GRADLE_USER_HOME: path.join(root, 'host-gradle') };
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'settings.gradle'), "rootProject.name = 'wrapped'\n");
    execFileSync('gradle', ['--no-daemon', '--quiet', 'wrapper'], { cwd: project, env: host, stdio: 'pipe' });
    const dist = path.join(root, 'dist');
    fs.mkdirSync(dist);
    fs.cpSync('/usr/share/gradle', path.join(dist, 'gradle-4.4.1'), { recursive: true, dereference: true });
    execFileSync('python3', ['-m', 'zipfile', '-c', 'gradle-4.4.1-bin.zip', 'gradle-4.4.1'], { cwd: dist });
    fs.writeFileSync(
      path.join(project, 'gradle', 'wrapper', 'gradle-wrapper.properties'),
      `distributionUrl=file\\:${dist}/gradle-4.4.1-bin.zip\ndistributionBase=GRADLE_USER_HOME\ndistributionPath=wrapper/dists\nzipStoreBase=GRADLE_USER_HOME\nzipStorePath=wrapper/dists\n`,
    );
    await handOver(sandbox, project);
    // What set-up does with the wrapper: fetch the distribution into the loop's Gradle home.
    const cacheDir = await loopCaches({ config: loadConfig({ DATA_DIR: root }), sandbox }, 'loop-gradle');
    const loopHome = path.join(cacheDir, 'gradle');
    const fetched = execFileSync('./gradlew', ['--version'], {
      cwd: project,
      env: { ...host, GRADLE_USER_HOME: loopHome },
      encoding: 'utf8',
    });
    expect(fetched).toContain('Downloading file:');
    const before = execFileSync('find', [loopHome, '-printf', '%p %s %T@\n'], { encoding: 'utf8' });

    const gate = await runCommand({
      argv: ['./gradlew', '--no-daemon', '--offline', '--version'],
      cwd: project,
      workspaceRoot: project,
      timeoutMs: 120_000,
      env: childEnvironment(),
      sandbox: {
        sandbox,
        policy: { workDir: project, egress: null, caches: { dir: cacheDir, access: 'use' } },
      },
      outputCapBytes: 64 * 1024,
    });
    expect({ exitCode: gate.exitCode, stderr: gate.stderr }).toMatchObject({ exitCode: 0 });
    expect(gate.stdout).toContain('Gradle 4.4.1');
    expect(gate.stdout).not.toContain('Downloading');
    // The loop's Gradle home is as set-up left it: the lock, the hashes and the caches went to the sandbox's own.
    expect(execFileSync('find', [loopHome, '-printf', '%p %s %T@\n'], { encoding: 'utf8' })).toBe(before);
  }, 120_000);
});
