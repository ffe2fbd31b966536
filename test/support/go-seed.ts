import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { goStdCache } from '../../activities/verification/go-std-cache';
import { createSandbox } from '../../activities/sandbox/sandbox';
import { loadConfig } from '../../config/service-config';
import { sandboxTestEnvironment } from './sandbox';

// The worker builds Go's std into a seed build cache once per data directory (go-std-cache.ts), some
// 22 s of CPU, and every harness has a data directory of its own: a harness starts from a seed left in
// TEST_GO_SEED_DIR (global-setup.ts), and leaves its own for later ones. Only complete seeds (their
// `ready` file written) are shared, and each arrives by a rename.
const GO_SEED = 'go-std-cache';

/** Copies the run's seeds into a harness's data directory, where its worker looks first. */
export function adoptGoSeed(dataDir: string): void {
  const shared = process.env.TEST_GO_SEED_DIR;
  if (!shared || !fs.existsSync(shared)) return;
  for (const version of fs.readdirSync(shared).filter((d) => !d.startsWith('.')))
    fs.cpSync(path.join(shared, version), path.join(dataDir, GO_SEED, version), { recursive: true });
}

/** Leaves the complete seeds a data directory holds for the files after it. */
export function leaveGoSeed(dataDir: string, shared = process.env.TEST_GO_SEED_DIR): void {
  const mine = path.join(dataDir, GO_SEED);
  if (!shared || !fs.existsSync(mine)) return;
  fs.mkdirSync(shared, { recursive: true });
  for (const version of fs.readdirSync(mine)) {
    const dir = path.join(mine, version);
    if (!fs.existsSync(path.join(dir, 'ready')) || fs.existsSync(path.join(shared, version))) continue;
    const staged = path.join(shared, `.${version}-${randomUUID()}`);
    fs.cpSync(dir, staged, { recursive: true });
    // Another file may have left the same seed meanwhile: then this copy goes.
    try {
      fs.renameSync(staged, path.join(shared, version));
    } catch {
      fs.rmSync(staged, { recursive: true, force: true });
    }
  }
}

/**
 * Builds the seed once for the whole run, before any file starts, with the service's own code
 * (goStdCache) in a sandbox configured as the harness configures its workers'. Without it, each file
 * with a Go loop that started before an earlier one had closed built its own (a harness leaves its seed
 * when it closes). Without Go it leaves nothing, and the workers find no seed, as before.
 */
export async function prebuildGoSeed(tempDir: string, shared: string): Promise<void> {
  const dataDir = path.join(tempDir, 'go-seed-build');
  const config = loadConfig({ DATA_DIR: dataDir, ...sandboxTestEnvironment() });
  await goStdCache({ config, sandbox: createSandbox(config) });
  leaveGoSeed(dataDir, shared);
  fs.rmSync(dataDir, { recursive: true, force: true });
}
