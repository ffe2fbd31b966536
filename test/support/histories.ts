import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { resolveTemporalCli } from '../../service/temporal-dev-server';

// Histories of real end-to-end runs, committed so the replay test catches workflow changes that would
// break loops already running. `RECORD_HISTORIES=1 npx jest test/e2e` refreshes them. The JSON comes
// from the Temporal CLI (`temporal workflow show --output json`), the format the SDK's replayer reads.

export const HISTORIES_DIR = path.resolve(__dirname, '../fixtures/histories');

export function recordHistory(workflowId: string, name: string): void {
  if (process.env.RECORD_HISTORIES !== '1') return;
  const json = execFileSync(
    resolveTemporalCli({ temporal: { cliPath: process.env.TEMPORAL_CLI_PATH } }),
    ['workflow', 'show', '--workflow-id', workflowId, '--address', process.env.TEST_TEMPORAL_ADDRESS!, '--output', 'json'],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  fs.mkdirSync(HISTORIES_DIR, { recursive: true });
  fs.writeFileSync(path.join(HISTORIES_DIR, `${name}.json`), json);
}
