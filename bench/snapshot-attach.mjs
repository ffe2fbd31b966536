// `npm run bench:attach [-- <dir>]`: how long a verification checkout takes to receive a dependency
// snapshot of a large tree (default: this repository's node_modules), by a copy (`cp -a`, what a service
// that is not root does) and by an overlay mount (a root service), three times each, and how long undoing
// each takes. Not a test: figures vary by machine, disk cache and load. Run after `npm run build`, as root
// for the overlay. Writes bench/results/snapshot-attach.json.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { importDist, requireBuilt } from './lib/dist.mjs';
import { startResult } from './lib/results.mjs';

requireBuilt();
const { attachSnapshot, detachSnapshots } = await importDist('activities/setup/dependency-snapshots.js');
const { copyTree } = await importDist('activities/sandbox/copy-tree.js');
const { canMountOverlays } = await importDist('activities/sandbox/overlay-mount.js');
const { stopLauncher } = await importDist('activities/process/launcher.js');

const RUNS = 3;
const source = fs.realpathSync(process.argv[2] ?? 'node_modules');
const result = startResult('snapshot-attach');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'snapshot-attach-'));
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const timed = async (work) => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

try {
  // The snapshot, as takeSnapshot lays it out (a copy of what set-up installed).
  const snapshot = {
    dir: path.join(root, 'snapshot'),
    meta: { key: 'bench', iterationSeq: 1, evidenceIds: [], outputs: ['node_modules'] },
  };
  fs.mkdirSync(path.join(snapshot.dir, 'files', 'node_modules'), { recursive: true });
  const take = await timed(() => copyTree(source, path.join(snapshot.dir, 'files', 'node_modules')));
  const files = fs.readdirSync(source, { recursive: true }).length;
  const overlay = await canMountOverlays(path.join(root, 'verification'));
  const checkout = (n) => fs.mkdirSync(path.join(root, 'verification', `c${n}`), { recursive: true });
  const figures = { copy: { attach: [], remove: [] }, overlay: { attach: [], remove: [] } };
  for (let n = 0; n < RUNS; n++) {
    const at = checkout(`copy-${n}`);
    figures.copy.attach.push(
      await timed(async () => {
        fs.mkdirSync(path.join(at, 'node_modules'));
        await copyTree(path.join(snapshot.dir, 'files', 'node_modules'), path.join(at, 'node_modules'));
      }),
    );
    figures.copy.remove.push(await timed(() => fs.promises.rm(at, { recursive: true, force: true })));
    if (!overlay) continue;
    const mounted = checkout(`overlay-${n}`);
    figures.overlay.attach.push(await timed(() => attachSnapshot(mounted, snapshot)));
    figures.overlay.remove.push(
      await timed(async () => {
        await detachSnapshots(mounted);
        await fs.promises.rm(mounted, { recursive: true, force: true });
      }),
    );
  }
  const ms = (values) => (values.length ? `${Math.round(median(values))} ms` : 'n/a (not root)');
  const lines = [
    `A tree of ${files} entries (${source}), kept as a snapshot by a copy in ${Math.round(take)} ms; median of ${RUNS}:`,
    '',
    '| attach by | attach | undo (unmount, remove) |',
    '|---|---:|---:|',
    `| copy (\`cp -a\`) | ${ms(figures.copy.attach)} | ${ms(figures.copy.remove)} |`,
    `| overlay mount | ${ms(figures.overlay.attach)} | ${ms(figures.overlay.remove)} |`,
  ];
  result.write({ source, files, runs: RUNS }, { takeMs: take, ...figures }, lines);
} finally {
  const checkouts = path.join(root, 'verification');
  for (const name of fs.existsSync(checkouts) ? fs.readdirSync(checkouts) : [])
    await detachSnapshots(path.join(checkouts, name));
  fs.rmSync(root, { recursive: true, force: true });
  await stopLauncher();
}
