import { randomUUID } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ActivityDeps } from '../deps';
import { recordEgressRefusals } from '../egress-refusals';
import { childEnvironment } from '../process/child-environment';
import { runCommand } from '../process/run-command';
import { lockfileKey, sharedCacheDir } from '../sandbox/cache-layout';
import { handOver } from '../sandbox/hand-over';
import type { SharedCache } from '../sandbox/loop-caches';
import { stripToolConfig } from '../sandbox/strip-tool-config';
import { FETCH_STEPS, type FetchStep } from './cache-fetch-steps';

// Fills the repository's shared caches for the work dir's lockfiles, once per (repository, lockfile):
// each fetch step (cache-fetch-steps.ts) runs in the sandbox on a scratch project with only the manifest
// and lockfile — no repository script, config or build file is there to run — into a staging cache that
// is renamed into place only when the step succeeded. A failed fetch leaves nothing shared; the loop's
// set-up then fills its own caches from the network.

const FETCH_TIMEOUT_MS = 600_000;
/** Manifests and lockfiles larger than this are not fetched for (the set-up still installs). */
const MAX_INPUT_BYTES = 32 * 1024 * 1024;

export interface FetchContext {
  loopId: string;
  iterationSeq: number | null;
  repoUrl: string;
  workDir: string;
  heartbeat?: () => void;
  signal?: AbortSignal;
}

export async function fetchSharedCaches(deps: ActivityDeps, at: FetchContext): Promise<SharedCache[]> {
  const shared: SharedCache[] = [];
  for (const step of FETCH_STEPS) {
    const inputs = await readInputs(at.workDir, step.files);
    if (!inputs || inputs.some((i) => step.declines?.test(i.content.toString('utf8')))) continue;
    const dir = sharedCacheDir(deps.config.cachesDir, at.repoUrl, step.tool, lockfileKey(inputs));
    if ((await fs.stat(dir).catch(() => null)) || (await fetchInto(deps, at, step, inputs, dir))) {
      shared.push({ dir, subdir: step.subdir });
    }
  }
  return shared;
}

/** Runs one fetch step and publishes its cache at `dir`; false when it failed. */
async function fetchInto(
  deps: ActivityDeps,
  at: FetchContext,
  step: FetchStep,
  inputs: { path: string; content: Buffer }[],
  dir: string,
): Promise<boolean> {
  const scratch = path.join(path.dirname(dir), `.fetch-${randomUUID()}`);
  const project = path.join(scratch, 'project');
  const staging = path.join(scratch, 'cache');
  try {
    for (const file of [...inputs.map((i) => i.path), ...step.stubs]) {
      await fs.mkdir(path.dirname(path.join(project, file)), { recursive: true });
    }
    for (const input of inputs) await fs.writeFile(path.join(project, input.path), input.content);
    for (const stub of step.stubs) await fs.writeFile(path.join(project, stub), '', { flag: 'wx' }).catch(() => {});
    await fs.mkdir(path.join(staging, step.subdir), { recursive: true });
    await fs.chmod(scratch, 0o755);
    await handOver(deps.sandbox, project, staging);
    const result = await runCommand({
      argv: step.argv,
      cwd: project,
      workspaceRoot: project,
      timeoutMs: FETCH_TIMEOUT_MS,
      sandbox: {
        sandbox: deps.sandbox,
        policy: {
          workDir: project,
          egress: deps.config.sandbox.egress.setup,
          caches: { dir: staging, access: 'install' },
        },
      },
      env: childEnvironment(step.env),
      outputCapBytes: 64 * 1024,
      heartbeat: at.heartbeat,
      signal: at.signal,
    });
    const where = { loopId: at.loopId, iterationSeq: at.iterationSeq, role: 'setup' as const };
    await recordEgressRefusals(deps, { ...where, step: `cache-fetch:${step.tool}` }, result);
    if (result.exitCode !== 0) return false;
    await stripToolConfig(deps.sandbox, staging);
    // Another loop may have published the same cache meanwhile: either copy is the fetcher's.
    await fs.rename(path.join(staging, step.subdir), dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST' && err.code !== 'ENOTEMPTY') throw err;
    });
    return true;
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

/** The step's files from the work dir's root, each a regular file (never a symlink the maker made); null when one is not. */
async function readInputs(workDir: string, files: string[]): Promise<{ path: string; content: Buffer }[] | null> {
  const inputs = [];
  for (const file of files) {
    const handle = await fs
      .open(path.join(workDir, file), fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK)
      .catch(() => null);
    if (!handle) return null;
    try {
      const stat = await handle.stat();
      if (!stat.isFile() || stat.size > MAX_INPUT_BYTES) return null;
      inputs.push({ path: file, content: await handle.readFile() });
    } finally {
      await handle.close();
    }
  }
  return inputs;
}
