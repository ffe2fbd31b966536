import { parseMountinfo, within } from '../../activities/sandbox/mounts';
import { overlayPath } from '../../activities/sandbox/overlay-mount';

// The kernel's mount table as the service reads it to find its overlays (mounts.ts).

const TABLE = [
  '22 27 0:21 / /proc rw,relatime - proc proc rw',
  '47 27 0:40 / /data/verification/a\\040b/node_modules rw,relatime shared:1 - overlay overlay ' +
    'rw,lowerdir=/c/snap/files/node_modules,upperdir=/data/verification/a.layers/o-1/upper,workdir=/w,uuid=on',
  'not a mountinfo line',
].join('\n');

test('mount points are unescaped, optional fields skipped, and a file system’s own options read', () => {
  expect(parseMountinfo(TABLE)).toEqual([
    { mountPoint: '/proc', fsType: 'proc', superOptions: {} },
    {
      mountPoint: '/data/verification/a b/node_modules',
      fsType: 'overlay',
      superOptions: {
        lowerdir: '/c/snap/files/node_modules',
        upperdir: '/data/verification/a.layers/o-1/upper',
        workdir: '/w',
        uuid: 'on',
      },
    },
  ]);
});

test('a path is within a directory when it is the directory or below it, not a sibling sharing its prefix', () => {
  expect(within('/data/verification/a', '/data/verification/a')).toBe(true);
  expect(within('/data/verification/a', '/data/verification/a/node_modules')).toBe(true);
  expect(within('/data/verification/a', '/data/verification/a.layers/o-1')).toBe(false);
  expect(within('/data/verification/a', '/data/verification')).toBe(false);
});

test('an overlay is mounted only for absolute paths its options can name', () => {
  expect(overlayPath('/data/caches/private/l.snapshots/0a1b/files/node_modules')).toBe(true);
  for (const p of ['relative/dir', '/data,upperdir=/x', '/data:/other', '/data dir', '/data\\x'])
    expect(overlayPath(p)).toBe(false);
});
