import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app';
import { DEFAULT_API_POLICY } from '../../api/deps';
import { createApiKey } from '../../api/auth/api-keys';
import { loadConfig } from '../../config/service-config';
import { removeExpiredWorkspaces } from '../../service/workspace-janitor';
import { useTestDatabase } from '../support/database';
import { loopRequest } from '../support/loop-request';

// Disk use over time: finished loops' working copies go after the retention, and new loops are refused
// while the disk is nearly full.

const db = useTestDatabase();

async function loopRow(status: string, finishedAt: Date | null): Promise<string> {
  const id = crypto.randomUUID();
  await db.prisma.loop.create({
    data: {
      id,
      workflowId: `loop-${id}`,
      requestHash: 'x',
      status,
      phase: 'DONE',
      repoUrl: '/r',
      baseRef: 'main',
      maxIterations: 1,
      input: {},
      finishedAt,
    },
  });
  return id;
}

test('the janitor removes the directories of loops that ended before the retention, and nothing else', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'janitor-'));
  const config = loadConfig({ DATA_DIR: dataDir, WORKSPACE_RETENTION_HOURS: '24' });
  const now = new Date();
  const old = await loopRow('PASSED', new Date(now.getTime() - 48 * 3_600_000));
  const recent = await loopRow('REJECTED', new Date(now.getTime() - 3_600_000));
  const waiting = await loopRow('AWAITING_DECISION', null);
  const dirs = (id: string) =>
    [
      `workspaces/${id}`,
      `verification/${id}`,
      `control/${id}/1`,
      `review-checkouts/${id}-1`,
      `caches/private/${id}/cargo`,
      `caches/private/${id}.seeded`,
      `caches/private/${id}.snapshots/0123456789abcdef01234567/files`,
    ].map((d) => path.join(dataDir, d));
  for (const id of [old, recent, waiting]) for (const dir of dirs(id)) fs.mkdirSync(dir, { recursive: true });
  fs.mkdirSync(path.join(dataDir, 'workspaces', 'not-a-loop'), { recursive: true });

  expect(await removeExpiredWorkspaces(db.prisma, config, now)).toEqual([old]);
  expect(dirs(old).map((d) => fs.existsSync(d))).toEqual([false, false, false, false, false, false, false]);
  for (const id of [recent, waiting]) expect(dirs(id).every((d) => fs.existsSync(d))).toBe(true);
  expect(fs.existsSync(path.join(dataDir, 'workspaces', 'not-a-loop'))).toBe(true);
  fs.rmSync(dataDir, { recursive: true, force: true });
});

(process.getuid?.() === 0 ? test : test.skip)(
  'the janitor unmounts a dependency overlay a crashed worker left in a checkout before removing it',
  async () => {
    const dataDir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'janitor-overlay-')));
    const config = loadConfig({ DATA_DIR: dataDir, WORKSPACE_RETENTION_HOURS: '24' });
    const now = new Date();
    const old = await loopRow('PASSED', new Date(now.getTime() - 48 * 3_600_000));
    const lower = path.join(dataDir, 'caches', 'private', `${old}.snapshots`, 'k', 'files', 'node_modules');
    const layer = path.join(dataDir, 'verification', `${old}.layers`, 'o-1');
    const merged = path.join(dataDir, 'verification', old, 'node_modules');
    for (const d of [lower, `${layer}/upper`, `${layer}/work`, merged]) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(lower, 'index.js'), 'x');
    // Mounted by no process still running: only the kernel's mount table knows of it.
    execFileSync('mount', ['-t', 'overlay', 'overlay', '-o', overlayOptions(lower, layer), merged]);

    expect(await removeExpiredWorkspaces(db.prisma, config, now)).toEqual([old]);
    expect(fs.readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(dataDir);
    expect(fs.readdirSync(path.join(dataDir, 'verification'))).toEqual([]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  },
);

function overlayOptions(lower: string, layer: string): string {
  return `lowerdir=${lower},upperdir=${layer}/upper,workdir=${layer}/work`;
}

test('a submission while the disk is nearly full is a 507 that says how much is free and what the limit is', async () => {
  const started: unknown[] = [];
  const temporal = {
    workflow: { start: (_name: string, options: unknown) => Promise.resolve(void started.push(options)) },
  };
  const app: FastifyInstance = await buildApp({
    prisma: db.prisma,
    temporal: temporal as unknown as Client,
    taskQueue: 'q',
    logLevel: 'silent',
    // More than any disk here has free.
    policy: { ...DEFAULT_API_POLICY, disk: { path: os.tmpdir(), minFreeBytes: 2 ** 60 } },
  });
  try {
    const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    const submitter = await createApiKey(db.prisma, { name: 'sam', role: 'submitter' });
    const res = await fetch(`${baseUrl}/v1/loops`, {
      method: 'POST',
      headers: { authorization: `Bearer ${submitter.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(loopRequest('https://example.invalid/acme/app.git', ['agent'])),
    });
    expect(res.status).toBe(507);
    expect(((await res.json()) as { message: string }).message).toMatch(
      /^only \d+ MiB are free where loops keep their workspaces .*; new loops are refused below \d+ MiB \(MIN_FREE_DISK_MB\)$/,
    );
    expect(started).toEqual([]);
  } finally {
    await app.close();
  }
});
