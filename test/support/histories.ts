import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { resolveTemporalCli } from '../../service/temporal-dev-server';

// Histories of real end-to-end runs, committed so the replay test catches workflow changes that would
// break loops already running. `RECORD_HISTORIES=1 npx jest test/e2e` records the missing ones. The JSON comes
// from the Temporal CLI (`temporal workflow show --output json`), the format the SDK's replayer reads.

export const HISTORIES_DIR = path.resolve(__dirname, '../fixtures/histories');

/**
 * Writes the history of `workflowId` (its latest run, or `runId`) as `name`.json. An existing file is kept:
 * it shows what loops started on older workflow code look like, and those must keep replaying; a new
 * behaviour gets a history under a new name (RECORD_HISTORIES=overwrite replaces them all the same).
 */
export function recordHistory(workflowId: string, name: string, runId?: string): void {
  const mode = process.env.RECORD_HISTORIES;
  if (mode !== '1' && mode !== 'overwrite') return;
  const file = path.join(HISTORIES_DIR, `${name}.json`);
  if (mode === '1' && fs.existsSync(file)) return;
  const json = execFileSync(
    resolveTemporalCli({ temporal: { cliPath: process.env.TEMPORAL_CLI_PATH } }),
    [
      'workflow',
      'show',
      '--workflow-id',
      workflowId,
      ...(runId ? ['--run-id', runId] : []),
      '--address',
      process.env.TEST_TEMPORAL_ADDRESS!,
      '--output',
      'json',
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  fs.mkdirSync(HISTORIES_DIR, { recursive: true });
  fs.writeFileSync(file, json);
}
