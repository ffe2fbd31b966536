/** Waits until `pid` no longer exists (orphans are reaped by PID 1 a moment after they die). */
export async function waitUntilDead(pid: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`process ${pid} is still alive`);
}
