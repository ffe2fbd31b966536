import type { CommandResult } from '../../activities/process/run-command';
import { bwrapArgv, type BwrapSettings } from '../../activities/sandbox/bwrap-argv';
import { createLimiter, LimitsUnavailableError } from '../../activities/sandbox/cgroups';
import {
  cgroupCandidates,
  enterArgv,
  formatBytes,
  instanceGroupName,
  instanceGroupPid,
  keyedCounter,
  limitsFromCounters,
  parseMountInfo,
  parseProcCgroup,
} from '../../activities/sandbox/limits';
import { environmentProblem, gateFailureReason, limitProblem } from '../../activities/verification/gate-outcome';
import { loadConfig } from '../../config/service-config';

// The pure part of the limits per sandbox: which cgroups a host offers, how a command enters them, and how a
// limit it hit is named. The kernel side is test/integration/sandbox-limits.test.ts.

const values = {
  processes: 512,
  memoryBytes: 1024 ** 3,
  fileBytes: 4 * 1024 ** 3,
  tmpBytes: 256 * 1024 ** 2,
  workspaceBytes: 2 * 1024 ** 3,
};

// This host: cgroup v1 hybrid, the worker's memory cgroup nested, pids at the root, a controller-less cgroup2.
const HYBRID_CGROUP = '9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n';
const HYBRID_MOUNTS = [
  '30 25 0:26 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory',
  '34 25 0:30 / /sys/fs/cgroup/pids rw,relatime shared:13 - cgroup cgroup rw,pids',
  '35 25 0:31 / /sys/fs/cgroup/cpu rw,relatime shared:14 - cgroup cgroup rw,cpu',
  '36 25 0:32 / /sys/fs/cgroup/unified rw,relatime shared:15 - cgroup2 cgroup2 rw',
].join('\n');

describe('where the sandboxes’ cgroups go', () => {
  it('reads /proc/self/cgroup and the cgroup mounts of /proc/self/mountinfo', () => {
    expect(parseProcCgroup(HYBRID_CGROUP)).toContainEqual({
      hierarchy: '4',
      controllers: ['memory'],
      path: '/process_api/abc',
    });
    expect(parseMountInfo(HYBRID_MOUNTS)).toEqual([
      { type: 'cgroup', root: '/', mountPoint: '/sys/fs/cgroup/memory', controllers: ['memory'] },
      { type: 'cgroup', root: '/', mountPoint: '/sys/fs/cgroup/pids', controllers: ['pids'] },
      { type: 'cgroup', root: '/', mountPoint: '/sys/fs/cgroup/cpu', controllers: ['cpu'] },
      { type: 'cgroup2', root: '/', mountPoint: '/sys/fs/cgroup/unified', controllers: [] },
    ]);
  });

  it('v1 hybrid: under the worker’s own cgroup of each hierarchy, after the (unusable) unified one', () => {
    expect(cgroupCandidates(parseProcCgroup(HYBRID_CGROUP), parseMountInfo(HYBRID_MOUNTS), null)).toEqual([
      { kind: 'cgroup-v2', dir: '/sys/fs/cgroup/unified' },
      { kind: 'cgroup-v1', pidsDir: '/sys/fs/cgroup/pids', memoryDir: '/sys/fs/cgroup/memory/process_api/abc' },
    ]);
  });

  it('v2: the delegated SANDBOX_CGROUP alone when set, else the worker’s own cgroup (a container’s root included)', () => {
    const v2 = '0::/system.slice/loop.service\n';
    const mount = '40 25 0:33 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate';
    expect(cgroupCandidates(parseProcCgroup(v2), parseMountInfo(mount), null)).toEqual([
      { kind: 'cgroup-v2', dir: '/sys/fs/cgroup/system.slice/loop.service' },
    ]);
    expect(cgroupCandidates(parseProcCgroup(v2), parseMountInfo(mount), '/sys/fs/cgroup/loop/sandboxes/')).toEqual([
      { kind: 'cgroup-v2', dir: '/sys/fs/cgroup/loop/sandboxes' },
    ]);
    // Inside a cgroup namespace the mount's root is the container's cgroup.
    const container = '41 25 0:33 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw';
    expect(cgroupCandidates(parseProcCgroup('0::/docker/abc\n'), parseMountInfo(container), null)).toEqual([
      { kind: 'cgroup-v2', dir: '/sys/fs/cgroup' },
    ]);
    expect(cgroupCandidates(parseProcCgroup('0::/elsewhere\n'), parseMountInfo(container), null)).toEqual([]);
  });

  it('names each service instance’s group by its pid, so a dead instance’s groups are found', () => {
    const name = instanceGroupName(4242, 'deadbeef');
    expect(name).toBe('loop-sandboxes.4242.deadbeef');
    expect(instanceGroupPid(name)).toBe(4242);
    expect(instanceGroupPid('loop-sandboxes.4242.deadbeef-probe')).toBeNull();
    expect(instanceGroupPid('user.slice')).toBeNull();
  });

  it('falls back to a uid range as root, and says so when even that is impossible', () => {
    const nowhere = { procCgroup: '0::/x\n', mountInfo: '' };
    const uidRange = { first: 200000, last: 200001 };
    expect(
      createLimiter(values, { mode: 'auto', delegated: null, uidRange, asRoot: true, ...nowhere }).mechanism,
    ).toEqual({
      kind: 'uid-range',
      ...uidRange,
    });
    expect(
      createLimiter(values, { mode: 'auto', delegated: null, uidRange, asRoot: false, ...nowhere }).mechanism,
    ).toEqual({
      kind: 'shared-uid',
    });
    expect(() =>
      createLimiter(values, { mode: 'cgroup', delegated: null, uidRange, asRoot: true, ...nowhere }),
    ).toThrow(LimitsUnavailableError);
    expect(() => createLimiter(values, { mode: 'uid-range', delegated: null, uidRange, asRoot: false })).toThrow(
      /needs the service to run as root/,
    );
  });

  it('gives each concurrent command of the uid range its own uid, and refuses when all are busy', async () => {
    const limiter = createLimiter(values, {
      mode: 'uid-range',
      delegated: null,
      uidRange: { first: 200000, last: 200001 },
      asRoot: true,
    });
    const [a, b] = [await limiter.lease(), await limiter.lease()];
    expect([a.uid, b.uid]).toEqual([200000, 200001]);
    await expect(limiter.lease()).rejects.toThrow(/every uid of SANDBOX_UID_RANGE \(200000-200001\) runs a sandbox/);
    await a.release({ exitCode: 0, signal: null, stderr: '' });
    expect((await limiter.lease()).uid).toBe(200000);
  });
});

describe('the command line', () => {
  const settings: BwrapSettings = {
    asRoot: true,
    uid: 65534,
    gid: 65534,
    readOnlyPaths: [],
    writablePaths: [],
    limits: values,
    processLimit: 'cgroup',
  };
  const policy = { workDir: '/w', egress: null };

  it('enters the cgroups in a shell that then becomes bwrap, with a bounded /tmp and no per-uid process limit', () => {
    const argv = bwrapArgv(settings, policy, '/w', ['node', 't.js'], undefined, {
      uid: null,
      entryFiles: ['/cg/pids/1/tasks', '/cg/memory/1/tasks'],
    });
    expect(argv.slice(0, 7)).toEqual([
      '/bin/sh',
      '-c',
      expect.stringContaining('exec "$@"'),
      'sandbox-enter',
      '2',
      '/cg/pids/1/tasks',
      '/cg/memory/1/tasks',
    ]);
    expect(argv[7]).toBe('bwrap');
    expect(argv.join(' ')).toContain(`--perms 1777 --size ${256 * 1024 ** 2} --tmpfs /tmp`);
    expect(argv.join(' ')).toContain(`prlimit --fsize=${4 * 1024 ** 3} --data=${1024 ** 3} -- setpriv --reuid=65534`);
  });

  it('under a uid range: the lease’s uid, RLIMIT_NPROC of it, and a group-writable umask', () => {
    const argv = bwrapArgv({ ...settings, processLimit: 'uid' }, policy, '/w', ['true'], undefined, {
      uid: 200007,
      entryFiles: [],
    });
    expect(argv[2]).toContain('umask 002');
    expect(argv.join(' ')).toContain('prlimit --nproc=512 ');
    expect(argv).toContain('--reuid=200007');
    expect(argv).toContain('--regid=65534');
  });

  it('is bwrap itself when there is nothing to enter', () => {
    expect(enterArgv([], null, ['bwrap', 'x'])).toEqual(['bwrap', 'x']);
  });
});

describe('a limit that was hit', () => {
  it('is named with its value', () => {
    expect(formatBytes(1024 ** 3)).toBe('1 GiB');
    expect(formatBytes(1.5 * 1024 ** 3)).toBe('1.5 GiB');
    expect(formatBytes(512 * 1024 ** 2)).toBe('512 MiB');
    expect(formatBytes(100)).toBe('100 bytes');
    const exit = { exitCode: 1, signal: null, stderr: '' };
    expect(limitsFromCounters({ pidsMax: 3, oomKills: 0 }, exit, values)).toEqual([
      { limit: 'processes', message: 'sandbox process limit (512) reached: a fork failed' },
    ]);
    expect(limitsFromCounters({ oomKills: 1 }, exit, values)).toEqual([
      { limit: 'memory', message: 'sandbox memory limit (1 GiB) reached — OOM kill' },
    ]);
    // v1 without an oom_kill counter: failures at the limit and a SIGKILL.
    expect(limitsFromCounters({ memoryFailures: 9 }, { ...exit, signal: 'SIGKILL' }, values)[0]?.limit).toBe('memory');
    expect(limitsFromCounters({ memoryFailures: 9 }, exit, values)).toEqual([]);
    expect(limitsFromCounters({}, { exitCode: null, signal: 'SIGXFSZ', stderr: '' }, values)).toEqual([
      { limit: 'file', message: 'sandbox file size limit (4 GiB) reached' },
    ]);
    expect(limitsFromCounters({}, { exitCode: 1, signal: null, stderr: 'Error: ENOSPC: write' }, values)).toEqual([
      {
        limit: 'tmp',
        message: 'sandbox /tmp limit (256 MiB) reached: the command reported ENOSPC (or the host disk is full)',
      },
    ]);
    expect(keyedCounter('max 0\n', 'max')).toBe(0);
    expect(keyedCounter('oom_kill_disable 0\nunder_oom 0\noom_kill 2\n', 'oom_kill')).toBe(2);
  });

  const result = (over: Partial<CommandResult>): CommandResult => ({
    executionId: 'e',
    argv: ['node', '--test'],
    pid: 1,
    startTime: new Date(0),
    endTime: new Date(0),
    exitCode: 134,
    signal: null,
    timeoutStatus: 'COMPLETED',
    stdout: '',
    stderr: 'uv_thread_create',
    stdoutSha256: '',
    stderrSha256: '',
    stdoutBytes: 0,
    stderrBytes: 0,
    truncated: false,
    spawnError: null,
    egressRefused: [],
    limitsReached: [],
    ...over,
  });

  it('fails a gate as the environment’s problem, not the code’s; a command that coped with it passes', () => {
    const hit = result({
      limitsReached: [{ limit: 'processes', message: 'sandbox process limit (512) reached: a fork failed' }],
    });
    expect(gateFailureReason('tests', hit, null)).toBe(
      'the command ran into a limit of its sandbox: sandbox process limit (512) reached: a fork failed',
    );
    expect(environmentProblem({ ...hit, limit: limitProblem(hit) })).toBe(
      '`node --test` ran into a limit of its sandbox: sandbox process limit (512) reached: a fork failed',
    );
    expect(limitProblem({ ...hit, exitCode: 0 })).toBeNull();
    expect(gateFailureReason('tests', result({}), null)).toBe('`node --test` exited with code 134');
  });
});

describe('configuration', () => {
  it('has defaults for the new limits and reads the uid range', () => {
    const s = loadConfig({}).sandbox;
    expect([s.maxTmpBytes, s.maxWorkspaceBytes, s.workspaceCheckSeconds, s.limits, s.cgroup]).toEqual([
      1024 ** 3,
      16 * 1024 ** 3,
      5,
      'auto',
      null,
    ]);
    expect(s.uidRange).toEqual({ first: 200000, last: 200255 });
    expect(loadConfig({ SANDBOX_UID_RANGE: '300000-300009' }).sandbox.uidRange).toEqual({
      first: 300000,
      last: 300009,
    });
    expect(() => loadConfig({ SANDBOX_UID_RANGE: '10-5' })).toThrow(/SANDBOX_UID_RANGE/);
  });
});
