import fs from 'node:fs/promises';
import path from 'node:path';

export default async function globalTeardown(): Promise<void> {
  const file = process.env.TEST_WORKFLOW_BUNDLE;
  if (file) await fs.rm(path.dirname(file), { recursive: true, force: true });
}
