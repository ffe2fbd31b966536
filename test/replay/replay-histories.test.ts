import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { HISTORIES_DIR } from '../support/histories';
import { checkWorkflowFingerprint } from '../support/workflow-fingerprint';
import { WORKFLOW_BUNDLE_OPTIONS } from '../../service/workflow-bundle';
import { workflowTracingSinks } from '../../telemetry/tracing';

// Every committed history must replay against today's workflow code without nondeterminism.
const files = fs
  .readdirSync(HISTORIES_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

let bundle: WorkflowBundleWithSourceMap;
beforeAll(async () => {
  bundle = await bundleWorkflowCode({ ...WORKFLOW_BUNDLE_OPTIONS, logger: quiet });
});

test('histories of the loop paths are committed', () => {
  expect(files).toEqual(
    expect.arrayContaining([
      // Recorded on the release before the version floor (CONTRIBUTING.md): loops it started carry the
      // retired patches' markers and must keep replaying until the next floor raise.
      'checkpoint-in-inputs-fix-gate-then-pass.json',
      'fewer-round-trips-fix-gate-then-pass.json',
      'fewer-round-trips-escalate-retry-pass.json',
      'numbered-moves-fix-gate-then-pass.json',
      'numbered-moves-escalate-retry-pass.json',
      // Every loop path, recorded on the floor's workflow code.
      'fix-gate-then-pass.json',
      'escalate-retry-pass.json',
      'escalate-reject.json',
      'escalate-approve.json',
      'cancelled.json',
      'deadline-spares-system-blockers.json',
      'refused-forged-update-then-signal.json',
      'setup-then-pass.json',
      'setup-environment-reject.json',
      'deliver-pull-request.json',
      'amend-continue-as-new.json',
      'amend-resumed-run-passes.json',
      'contract-approval-then-pass.json',
      'deadline-default-reject.json',
      'budget-exhausted-escalates.json',
      'agent-contradiction-escalates.json',
      'backtrack-then-pass.json',
      'no-change-escalates.json',
      'refused-invalid-signals-then-retry.json',
      // Started with trace context, so the bundled OpenTelemetry workflow interceptors run (test/e2e/metrics.e2e.test.ts).
      'traced-pass.json',
      'traced-escalate-approve.json',
      // A smoke test of a preset (workflows/agent-checks.ts).
      'agent-check-fails.json',
      // A loop with the gemini preset (the fourth preset; domain/maker-presets.ts).
      'gemini-preset-pass.json',
    ]),
  );
});

test.each(files)('%s replays deterministically', async (file) => {
  const history = historyFromJSON(JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR, file), 'utf8')));
  // The sink a traced workflow's spans leave through, as every worker registers it (dropped during replay).
  await expect(
    Worker.runReplayHistory({ workflowBundle: bundle, sinks: workflowTracingSinks() }, history, `replay-${file}`),
  ).resolves.toBeUndefined();
});

test('the workflow code has not changed since the last recorded history', () => {
  // UPDATE_WORKFLOW_FINGERPRINT=1 (npm run histories:fingerprint) records the current code once a history covers it.
  const problem = checkWorkflowFingerprint(bundle.code, files, process.env.UPDATE_WORKFLOW_FINGERPRINT === '1');
  expect(problem).toBeNull();
});

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
