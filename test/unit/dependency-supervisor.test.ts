import { SupervisedDependency, type RunningDependency } from '../../service/dependency-supervisor';

// The embedded PostgreSQL and dev server are restarted with a doubling wait (1 s, 2 s, 4 s … 30 s), say so
// in one line each time, and report their state for /readyz; stopping is never held up by a restart. The
// real processes are killed in test/e2e/supervision.e2e.test.ts; here the timing, on jest's clock.

interface Fake extends RunningDependency {
  die(how: string): void;
  stopped: boolean;
}

function fakeDependency(): Fake {
  let exit!: (how: string) => void;
  const fake: Fake = {
    exited: new Promise<string>((resolve) => (exit = resolve)),
    die: (how) => exit(how),
    stopped: false,
    stop: async () => {
      fake.stopped = true;
      exit('code 0');
    },
    kill: () => exit('signal SIGKILL'),
  };
  return fake;
}

/** A launcher whose attempts fail while `failing` is true; each success is kept in `started`. */
function launcher() {
  const control = {
    failing: false,
    launches: 0,
    started: [] as Fake[],
    pending: null as ((outcome: 'start' | 'fail') => void) | null,
    /** Hold the next attempt until `pending` is called. */
    hold: false,
    signal: null as AbortSignal | null,
    launch: async (signal: AbortSignal): Promise<Fake> => {
      control.launches += 1;
      control.signal = signal;
      if (control.hold) {
        const outcome = await new Promise<'start' | 'fail'>((resolve) => (control.pending = resolve));
        if (outcome === 'fail') throw new Error('held start failed');
      } else if (control.failing) {
        throw new Error(`FATAL: could not bind IPv4 address "127.0.0.1": Address already in use\nthe whole log`);
      }
      const fake = fakeDependency();
      control.started.push(fake);
      return fake;
    },
  };
  return control;
}

beforeEach(() => jest.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z') }));
afterEach(() => jest.useRealTimers());

test('a dependency that dies is restarted after 1 s, then 2 s, 4 s … while attempts fail, and says so in one line each', async () => {
  const control = launcher();
  const lines: string[] = [];
  let changes = 0;
  const pg = new SupervisedDependency(
    'PostgreSQL',
    control.launch,
    (l) => lines.push(l),
    () => (changes += 1),
  );
  await pg.start();
  expect(pg.state()).toEqual({
    state: 'up',
    since: '2030-01-01T00:00:00.000Z',
    attempts: 0,
    restarts: 0,
    lastExit: null,
  });

  await jest.advanceTimersByTimeAsync(60_000); // up long enough that a death starts the backoff over
  control.failing = true;
  control.started[0]!.die('signal SIGKILL');
  await jest.advanceTimersByTimeAsync(0);
  expect(lines).toEqual(['PostgreSQL exited unexpectedly (signal SIGKILL); restarting it in 1s']);
  expect(pg.state()).toEqual({
    state: 'restarting',
    since: '2030-01-01T00:01:00.000Z',
    attempts: 0,
    restarts: 0,
    lastExit: 'signal SIGKILL',
  });

  await jest.advanceTimersByTimeAsync(999);
  expect(control.launches).toBe(1); // only the first start so far
  await jest.advanceTimersByTimeAsync(1);
  await jest.advanceTimersByTimeAsync(2000);
  await jest.advanceTimersByTimeAsync(4000);
  expect(control.launches).toBe(4);
  expect(lines.slice(1)).toEqual([
    'PostgreSQL did not start again (attempt 1): FATAL: could not bind IPv4 address "127.0.0.1": Address already in use; next attempt in 2s',
    'PostgreSQL did not start again (attempt 2): FATAL: could not bind IPv4 address "127.0.0.1": Address already in use; next attempt in 4s',
    'PostgreSQL did not start again (attempt 3): FATAL: could not bind IPv4 address "127.0.0.1": Address already in use; next attempt in 8s',
  ]);
  expect(pg.state()).toMatchObject({ state: 'restarting', since: '2030-01-01T00:01:00.000Z', attempts: 3 });

  control.failing = false;
  await jest.advanceTimersByTimeAsync(8000);
  expect(lines.at(-1)).toBe('PostgreSQL is running again (attempt 4, 15s after it died)');
  expect(pg.state()).toEqual({
    state: 'up',
    since: '2030-01-01T00:01:15.000Z',
    attempts: 0,
    restarts: 1,
    lastExit: 'signal SIGKILL',
  });
  expect(changes).toBeGreaterThanOrEqual(6);

  // Dying again within 10 s of coming back keeps the backoff where it was.
  control.started[1]!.die('code 1');
  await jest.advanceTimersByTimeAsync(0);
  expect(lines.at(-1)).toBe('PostgreSQL exited unexpectedly (code 1); restarting it in 16s');
});

test('the wait never exceeds 30 s', async () => {
  const control = launcher();
  const lines: string[] = [];
  const dev = new SupervisedDependency('Temporal dev server', control.launch, (l) => lines.push(l));
  await dev.start();
  control.failing = true;
  control.started[0]!.die('signal SIGKILL');
  for (let i = 0; i < 8; i++) await jest.advanceTimersByTimeAsync(30_000);
  expect(lines.slice(-2).map((l) => l.replace(/.*; next attempt in /, ''))).toEqual(['30s', '30s']);
});

test('stopping during the wait starts nothing more; stopping during an attempt aborts it and stops what it started', async () => {
  const waiting = launcher();
  const pg = new SupervisedDependency('PostgreSQL', waiting.launch, () => undefined);
  await pg.start();
  waiting.started[0]!.die('signal SIGKILL');
  await jest.advanceTimersByTimeAsync(0);
  await pg.stop();
  await jest.advanceTimersByTimeAsync(60_000);
  expect(waiting.launches).toBe(1);
  expect(pg.state().state).toBe('stopped');

  const starting = launcher();
  const dev = new SupervisedDependency('Temporal dev server', starting.launch, () => undefined);
  await dev.start();
  starting.hold = true;
  starting.started[0]!.die('signal SIGKILL');
  await jest.advanceTimersByTimeAsync(1000);
  expect(starting.pending).not.toBeNull();
  let stopped = false;
  const stopping = dev.stop().then(() => (stopped = true));
  await jest.advanceTimersByTimeAsync(0);
  expect(stopped).toBe(false); // the attempt under way is told to give up, and waited for
  expect(starting.signal!.aborted).toBe(true);
  starting.pending!('start');
  await stopping;
  expect(starting.started.map((d) => d.stopped)).toEqual([false, true]);
  expect(dev.state().state).toBe('stopped');
});

test('a dependency that exits while the service stops it is not restarted', async () => {
  const control = launcher();
  const lines: string[] = [];
  const pg = new SupervisedDependency('PostgreSQL', control.launch, (l) => lines.push(l));
  await pg.start();
  await pg.stop();
  await jest.advanceTimersByTimeAsync(60_000);
  expect(control.launches).toBe(1);
  expect(lines).toEqual([]);
});
