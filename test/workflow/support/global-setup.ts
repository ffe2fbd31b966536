import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_BUNDLE_OPTIONS } from '../../../service/workflow-bundle';

// The workflow code bundled once for the whole workflow tier, from the source as it is when the run
// starts: every file's worker (test-environment.ts) loads this one bundle instead of bundling it again,
// about 3.4 s of CPU (webpack) a file.

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

export default async function globalSetup(): Promise<void> {
  const { code } = await bundleWorkflowCode({ ...WORKFLOW_BUNDLE_OPTIONS, logger: quiet });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'workflow-tests-'));
  const file = path.join(dir, 'workflow-bundle.js');
  await fs.writeFile(file, code);
  // Test files are started after the global set-up and inherit its environment.
  process.env.TEST_WORKFLOW_BUNDLE = file;
}
