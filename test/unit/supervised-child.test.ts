import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config/service-config';
import { SupervisedChild } from '../../service/supervisor';
import { workerNodeArgs } from '../../service/worker-memory';

// A child of `npm start` as a real Node process: it hears the service's status over its IPC channel (the
// latest one, at each start), and one waiting out its restart backoff starts at once when told to (the
// dependency it kept failing on is back).

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'supervised-child-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A child that prints every IPC message it gets, says `ready`, and exits 1 once `exit-now` exists in `dir`. */
function writeChild(): string {
  const script = path.join(dir, 'child.js');
  fs.writeFileSync(
    script,
    `process.on('message', (m) => console.log('message ' + JSON.stringify(m)));
console.log('ready');
const poll = () => (require('node:fs').existsSync(${JSON.stringify(path.join(dir, 'exit-now'))}) ? process.exit(1) : setTimeout(poll, 20));
poll();
`,
  );
  return script;
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(check()).toBe(true);
}

test('the latest message reaches the child, again after its restart; a restart waiting out its backoff happens at once when asked', async () => {
  const lines: string[] = [];
  const output: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    if (String(chunk).startsWith('[child] ')) return output.push(String(chunk).trim()) > 0;
    return write(chunk);
  });
  const child = new SupervisedChild(
    { name: 'child', script: writeChild(), env: process.env, ready: { line: 'ready' }, ipc: true },
    (line) => lines.push(line),
  );
  try {
    child.send({ serviceStatus: 1 });
    await child.start();
    child.send({ serviceStatus: 2 });
    await until(() => output.includes('[child] message {"serviceStatus":2}'));
    expect(output.filter((l) => l.startsWith('[child] message'))).toEqual([
      '[child] message {"serviceStatus":1}',
      '[child] message {"serviceStatus":2}',
    ]);

    fs.writeFileSync(path.join(dir, 'exit-now'), '');
    await until(() => lines.some((l) => l.startsWith('child exited (code 1 / signal null); restarting in')));
    fs.rmSync(path.join(dir, 'exit-now'));
    child.restartNow();
    expect(lines.at(-1)).toBe('child: restarting now');
    await until(() => output.filter((l) => l === '[child] ready').length === 2);
    // The restarted child got the latest status, not the first one.
    await until(() => output.filter((l) => l.startsWith('[child] message')).length === 3);
    expect(output.at(-1)).toBe('[child] message {"serviceStatus":2}');
  } finally {
    await child.stop(5000);
    spy.mockRestore();
  }
});

test("a child starts with its Node options: the launcher's heap limit for the workflows worker reaches V8", async () => {
  const output: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    if (String(chunk).startsWith('[heap] ')) return output.push(String(chunk).trim()) > 0;
    return write(chunk);
  });
  const script = path.join(dir, 'heap.js');
  fs.writeFileSync(
    script,
    `console.log('heap ' + Math.round(require('node:v8').getHeapStatistics().heap_size_limit / 1024 ** 2));
console.log('ready');
setInterval(() => undefined, 1000);
`,
  );
  const child = new SupervisedChild(
    {
      name: 'heap',
      script,
      nodeArgs: workerNodeArgs('workflows', loadConfig({ WORKFLOWS_WORKER_HEAP_MB: '300' })),
      env: process.env,
      ready: { line: 'ready' },
    },
    () => undefined,
  );
  try {
    await child.start();
    const heapMb = Number(output.find((l) => l.startsWith('[heap] heap '))?.slice('[heap] heap '.length));
    // V8 adds its young generation to the old-space limit; Node's default here is several GiB.
    expect(heapMb).toBeGreaterThanOrEqual(300);
    expect(heapMb).toBeLessThan(400);
  } finally {
    await child.stop(5000);
    spy.mockRestore();
  }
});
