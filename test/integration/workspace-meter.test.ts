import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stopLauncher } from '../../activities/process/launcher';
import { unmountUnder } from '../../activities/sandbox/mounts';
import { mountOverlay } from '../../activities/sandbox/overlay-mount';
import { treeBytes } from '../../activities/sandbox/workspace-meter';

// The workspace meter (activities/sandbox/workspace-meter.ts) on a checkout whose dependencies are a kernel
// overlay of a snapshot (root only: only a root service mounts them): the snapshot's files, however many,
// are not walked or counted; what a command writes through the overlay is. Real mounts, real du.

const asRoot = process.getuid?.() === 0;
const MB = 1024 * 1024;
let dir: string;

beforeAll(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'workspace-meter-')));
});
afterAll(async () => {
  await unmountUnder(dir);
  fs.rmSync(dir, { recursive: true, force: true });
  await stopLauncher();
});

(asRoot ? test : test.skip)(
  "a dependency overlay's snapshot is not counted, what is written through it is",
  async () => {
    const checkout = path.join(dir, 'checkout');
    const layers = {
      lower: path.join(dir, 'snapshot'),
      upper: path.join(dir, 'o', 'upper'),
      work: path.join(dir, 'o', 'work'),
    };
    for (const d of [checkout, ...Object.values(layers)]) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(checkout, 'index.js'), 'x'.repeat(MB));
    fs.writeFileSync(path.join(layers.lower, 'installed.bin'), Buffer.alloc(8 * MB, 1));
    const at = path.join(checkout, 'node_modules');
    fs.mkdirSync(at);
    const plain = await treeBytes([checkout]);
    await mountOverlay({ ...layers, at });
    expect(fs.statSync(path.join(at, 'installed.bin')).size).toBe(8 * MB);

    const mounted = await treeBytes([checkout]);
    // The checkout's own megabyte, not the snapshot's eight.
    expect(mounted).toBeGreaterThanOrEqual(MB);
    expect(mounted - plain).toBeLessThan(MB);

    fs.writeFileSync(path.join(at, 'written.bin'), Buffer.alloc(3 * MB, 2));
    expect(fs.existsSync(path.join(layers.upper, 'written.bin'))).toBe(true);
    const grown = (await treeBytes([checkout])) - mounted;
    expect(grown).toBeGreaterThanOrEqual(3 * MB);
    expect(grown).toBeLessThan(4 * MB);
  },
);
