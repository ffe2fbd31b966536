import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { HISTORIES_DIR } from '../support/histories';

// Every committed history must replay against today's workflow code without nondeterminism.
const files = fs.readdirSync(HISTORIES_DIR).filter((f) => f.endsWith('.json')).sort();

test('histories of the loop paths are committed', () => {
  expect(files).toEqual(
    expect.arrayContaining([
      // Recorded before decision tickets, set-up and delivery existed: loops started then must still replay.
      'fix-gate-then-pass.json',
      'escalate-retry-pass.json',
      'escalate-reject.json',
      'escalate-approve.json',
      'cancelled.json',
      // The paths those changes added, each behind its patched() marker.
      'deadline-spares-system-blockers.json',
      'refused-forged-update-then-signal.json',
      'setup-then-pass.json',
      'setup-environment-reject.json',
      'deliver-pull-request.json',
    ]),
  );
});

test.each(files)('%s replays deterministically', async (file) => {
  const history = historyFromJSON(JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR, file), 'utf8')));
  await expect(
    Worker.runReplayHistory({ workflowsPath: require.resolve('../../workflows') }, history, `replay-${file}`),
  ).resolves.toBeUndefined();
});
