import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { fileHash, projectModules } from '../../service/workflow-bundle';
import { HISTORIES_DIR } from './histories';

// Versioning discipline, checked: the hash of every project file in the workflow bundle, as of the last
// time the workflow code was covered by recorded histories. Changing workflow code (or anything it
// imports) fails the replay test until a history recorded on the new code is committed — the proof that
// loops started on it replay — and the fingerprint is updated with `npm run histories:fingerprint`.
// A change that cannot alter any history (a comment, a renamed local) is recorded with its reason in
// WORKFLOW_CHANGE_WITHOUT_HISTORY instead, so it shows in review.

export const FINGERPRINT_FILE = path.resolve(__dirname, '../fixtures/workflow-fingerprint.json');

const fingerprintSchema = z.object({
  modules: z.record(z.string(), z.string()),
  /** Each committed history's sha256 (a bare list of names before the version floor). */
  histories: z.union([
    z.record(z.string(), z.string()),
    z.array(z.string()).transform((names) => Object.fromEntries(names.map((n) => [n, '']))),
  ]),
  changesWithoutHistory: z.array(z.object({ modules: z.array(z.string()), reason: z.string().min(10) })).default([]),
});

/**
 * Null when the bundled workflow code matches the fingerprint, else what to do. With `update`, writes the
 * fingerprint instead, provided a history was added since the last one (or a reason was given).
 */
export function checkWorkflowFingerprint(bundleCode: string, histories: string[], update: boolean): string | null {
  const current = Object.fromEntries(projectModules(bundleCode).map((file) => [file, fileHash(file)]));
  const recorded = fs.existsSync(FINGERPRINT_FILE)
    ? fingerprintSchema.parse(JSON.parse(fs.readFileSync(FINGERPRINT_FILE, 'utf8')))
    : null;
  const changed = [...new Set([...Object.keys(current), ...Object.keys(recorded?.modules ?? {})])]
    .filter((file) => current[file] !== recorded?.modules[file])
    .sort();
  if (changed.length === 0) return null;
  if (!update) {
    return (
      `the workflow code changed since its last recorded history (${changed.join(', ')}). Guard new behaviour with patched(), ` +
      'record a history of it (RECORD_HISTORIES=1 npx jest <the e2e test that runs it>, with recordHistory under a new name), ' +
      'then run npm run histories:fingerprint'
    );
  }
  // A history counts as added when it is new, or recorded again under its name (on raising the floor).
  const historyHashes = Object.fromEntries(
    histories.map((file) => [
      file,
      createHash('sha256')
        .update(fs.readFileSync(path.join(HISTORIES_DIR, file)))
        .digest('hex'),
    ]),
  );
  const added = histories.filter((file) => recorded?.histories[file] !== historyHashes[file]);
  const reason = process.env.WORKFLOW_CHANGE_WITHOUT_HISTORY?.trim();
  if (added.length === 0 && !reason) {
    return `no history was added since the fingerprint (changed: ${changed.join(', ')}); record one, or set WORKFLOW_CHANGE_WITHOUT_HISTORY to why none is needed`;
  }
  const changesWithoutHistory = [
    ...(recorded?.changesWithoutHistory ?? []),
    ...(added.length === 0 && reason ? [{ modules: changed, reason }] : []),
  ];
  fs.writeFileSync(
    FINGERPRINT_FILE,
    `${JSON.stringify({ modules: current, histories: historyHashes, changesWithoutHistory }, null, 2)}\n`,
  );
  return null;
}
