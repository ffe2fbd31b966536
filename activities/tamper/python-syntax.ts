import { execFile } from 'node:child_process';
import os from 'node:os';
import { PYTHON_INVENTORY_SCRIPT } from './python-inventory-script';
import type { SyntaxInventory } from '../../analysis/tamper/test-inventory';

// The one tamper module that starts a process (eslint.config.mjs allows it): python3 reads the maker's
// Python test files with its own `ast` module. Parsing runs none of the file's code; `-I -S` keep
// PYTHON* variables, the user's site-packages and site hooks out, the working directory is not the
// workspace, and the run is bounded in time and output. All files go through one run.

const TIMEOUT_MS = 30_000;
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

let warnedMissing = false;

/** One inventory per text, in order; null for a text that does not parse, or for all when python3 cannot run. */
export async function pythonInventories(texts: string[]): Promise<(SyntaxInventory | null)[]> {
  if (!texts.length) return [];
  try {
    const inventories: unknown = JSON.parse(await runPython(JSON.stringify(texts)));
    if (Array.isArray(inventories) && inventories.length === texts.length)
      return inventories as (SyntaxInventory | null)[];
    console.warn(
      'tamper: the Python test inventory returned an unexpected shape; Python test files are compared by counting',
    );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      console.warn(
        `tamper: reading Python test files failed (${(err as Error).message.split('\n')[0]}); they are compared by counting`,
      );
    } else if (!warnedMissing) {
      warnedMissing = true;
      console.warn(
        'tamper: python3 is not installed, so Python test files are compared by counting and their mocks are not checked',
      );
    }
  }
  return texts.map(() => null);
}

function runPython(input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'python3',
      ['-I', '-S', '-c', PYTHON_INVENTORY_SCRIPT],
      {
        cwd: os.tmpdir(),
        env: { PATH: process.env.PATH ?? '' },
        timeout: TIMEOUT_MS,
        killSignal: 'SIGKILL',
        maxBuffer: MAX_OUTPUT_BYTES,
      },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    );
    // A python3 that is missing or died early closes stdin; the callback reports why.
    child.stdin?.on('error', () => {});
    child.stdin?.end(input);
  });
}
