import fs from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, makeTelemetryFilterString, Runtime, Worker } from '@temporalio/worker';
import type { LoopInput } from '../../../domain/loop-request';
import { loopLogicAttempts, withRetryClasses } from '../../../activities/retry-classes';
import { PROJECT_ROOT } from '../../../config/project-root';
import { LOOP_SEARCH_ATTRIBUTES } from '../../../service/search-attributes';
import { workflowTracingSinks } from '../../../telemetry/tracing';
import { WORKFLOW_BUNDLE_OPTIONS } from '../../../service/workflow-bundle';
import { runLoop, type RunningLoop } from './loop-run';
import { ScriptedLoops, type LoopScript } from './scripted-activities';

// Temporal's time-skipping test server (the Java SDK's, installed from Maven Central by
// scripts/install-temporal-test-server.sh): durable timers such as a decision deadline fire as soon as
// nothing else is pending, instead of after their real duration.

const TEST_SERVER = path.join(PROJECT_ROOT, '.tools', 'temporal-test-server', 'bin', 'temporal-test-server');

const { INDEXED_VALUE_TYPE_INT, INDEXED_VALUE_TYPE_KEYWORD } = temporal.api.enums.v1.IndexedValueType;

export interface LoopTestEnvironment {
  /** Runs one loop with these scripted activities on this file's test server (see runLoop). */
  run<T>(script: LoopScript, input: LoopInput, drive: (loop: RunningLoop) => Promise<T>): Promise<T>;
  /** The test server's clock, in ms since the epoch. */
  now(): Promise<number>;
}

/**
 * One test server and one worker with the real workflow code for the whole test file (its beforeAll and
 * afterAll): a worker takes seconds to create, a loop on a running one under a second.
 */
export function loopTestEnvironment(): LoopTestEnvironment {
  let env: TestWorkflowEnvironment | undefined;
  let worker: Worker | undefined;
  let running: Promise<void>;
  const scripted = new ScriptedLoops();
  const taskQueue = 'workflow-tests';

  beforeAll(async () => {
    // Errors only: the tests fail activities and refuse decisions on purpose, and the worker logs each at WARN.
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
    });
    // The tier's bundle (global-setup.ts); a file run outside it bundles its own.
    const bundled = process.env.TEST_WORKFLOW_BUNDLE;
    const [started, workflowBundle] = await Promise.all([
      startTestEnvironment(),
      bundled ? { codePath: bundled } : bundleWorkflowCode({ ...WORKFLOW_BUNDLE_OPTIONS, logger: quiet }),
    ]);
    env = started;
    worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle,
      // Failures classed as the worker classes them (infrastructure retried without limit, logic errors 5 or 10 times).
      activities: withRetryClasses(loopLogicAttempts, scripted.activities),
      sinks: workflowTracingSinks(),
    });
    running = worker.run();
  });
  afterAll(async () => {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running;
    await env?.teardown();
  });

  return {
    run: (script, input, drive) =>
      runLoop(env!, { taskQueue, activities: scripted.add(input.loopId, script), running }, input, drive),
    now: () => env!.currentTimeMs(),
  };
}

/** A fresh test server with the loop's search attributes registered (the workflow upserts them: unknown ones fail its task). */
async function startTestEnvironment(): Promise<TestWorkflowEnvironment> {
  if (!fs.existsSync(TEST_SERVER))
    throw new Error(`${TEST_SERVER} is missing: run bash scripts/install-temporal-test-server.sh`);
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: TEST_SERVER } },
  });
  const searchAttributes = Object.fromEntries(
    Object.entries(LOOP_SEARCH_ATTRIBUTES).map(([name, type]) => [
      name,
      type === 'Int' ? INDEXED_VALUE_TYPE_INT : INDEXED_VALUE_TYPE_KEYWORD,
    ]),
  );
  await env.connection.operatorService.addSearchAttributes({ namespace: env.namespace ?? 'default', searchAttributes });
  return env;
}

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
