import fs from 'node:fs/promises';

/**
 * Kills the process group a previous attempt of this step left running (its worker died), but only
 * if that pid still belongs to it: the recorded pid may have been reused by another loop's command
 * since. Sandboxed steps die with their worker anyway (--die-with-parent); this covers SANDBOX=none.
 */
export async function stopPreviousAttempt(pid: number, marker: Record<string, string>): Promise<void> {
  const environ = await fs.readFile(`/proc/${pid}/environ`, 'utf8').catch(() => null);
  if (environ === null) return;
  const variables = new Set(environ.split('\0'));
  if (!Object.entries(marker).every(([name, value]) => variables.has(`${name}=${value}`))) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Gone meanwhile (ESRCH): nothing to stop.
  }
}
