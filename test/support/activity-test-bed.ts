import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { freezeContract } from '../../activities/contract';
import type { ActivityDeps } from '../../activities/deps';
import { stopLauncher } from '../../activities/process/launcher';
import { createSandbox } from '../../activities/sandbox/sandbox';
import { prepareWorkspace } from '../../activities/workspace';
import { loadConfig } from '../../config/service-config';
import { goalContractSchema } from '../../domain/contract';
import type { ResolvedGate } from '../../domain/gates';
import { createTestDatabase, insertLoop, type TestDatabase } from './database';
import { createFixtureRepo } from './fixture-repo';
import { loopRequest } from './loop-request';

// Activities called directly, as a worker would (MockActivityEnvironment), against a real database, real
// git and real processes (unsandboxed): for retries and crashes that an end-to-end loop cannot time.

export interface ActivityTestBed {
  db: TestDatabase;
  deps: ActivityDeps;
  dir: string;
}

/** A fresh database and data directory for the file's tests, dropped after them. */
export function useActivityTestBed(name: string): ActivityTestBed {
  const bed = {} as ActivityTestBed;
  beforeAll(async () => {
    bed.db = await createTestDatabase();
    bed.dir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
    const config = loadConfig({ DATA_DIR: bed.dir, SANDBOX: 'none' });
    bed.deps = { prisma: bed.db.prisma, config, sandbox: createSandbox(config) };
  });
  afterAll(async () => {
    await stopLauncher();
    await bed.db?.drop();
    fs.rmSync(bed.dir, { recursive: true, force: true });
  });
  return bed;
}

export const TESTS_GATE: ResolvedGate = {
  gate: 'tests',
  argv: ['node', '--test'],
  timeoutSeconds: 60,
  source: 'contract',
  detail: 'the contract',
};

/** The maker input of a loop's first iteration, running `script` as a command maker (sh -c) checked against `gates`. */
export function firstMakerInput(loopId: string, script: string, gates: ResolvedGate[] = [TESTS_GATE]) {
  return {
    loopId,
    sequence: 1,
    roundIteration: 1,
    maxIterations: 3,
    contractVersion: 1,
    directives: [],
    maker: { backend: 'command' as const, argv: ['sh', '-c', script], timeoutSeconds: 60 },
    inspect: { gates },
  };
}

/** The environment of attempt `attempt` of an activity of the loop's first run. */
export function loopActivity(loopId: string, attempt = 1): MockActivityEnvironment {
  return new MockActivityEnvironment({ attempt, workflowExecution: { workflowId: `loop-${loopId}`, runId: 'run-1' } });
}

/** Runs `work` as an activity in `env`. */
export function inActivity<T>(env: MockActivityEnvironment, work: () => Promise<T>): Promise<T> {
  return env.run<[], T, () => Promise<T>>(work);
}

/** A loop on a fresh fixture repository, its workspace prepared and its contract frozen as v1. */
export async function preparedLoop({ deps, db }: ActivityTestBed): Promise<{ repo: string; loopId: string }> {
  const repo = createFixtureRepo();
  const request = loopRequest(repo, []);
  const loopId = await insertLoop(db.prisma, {
    repoUrl: repo,
    status: 'RUNNING',
    phase: 'MAKER',
    input: request as object,
  });
  await inActivity(loopActivity(loopId), () =>
    prepareWorkspace(deps, { loopId, repository: { url: repo, baseRef: 'main' }, contractGates: [TESTS_GATE] }),
  );
  await freezeContract(deps, {
    loopId,
    version: 1,
    contract: goalContractSchema.parse(request.contract),
    reason: 'submitted',
  });
  return { repo, loopId };
}
