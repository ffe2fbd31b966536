// Everything a bench starts is stopped in reverse order: on success, on failure and on Ctrl-C.
const STOP_LIMIT_MS = 30_000;

export function createCleanup(name) {
  const steps = [];
  let running = null;
  let interrupted = false;
  const run = () => {
    if (running) return running;
    running = (async () => {
      for (const step of steps.splice(0).reverse()) {
        let timer;
        const limit = new Promise(
          (_, reject) => (timer = setTimeout(() => reject(new Error('timed out')), STOP_LIMIT_MS)),
        );
        await Promise.race([step.stop(), limit])
          .catch((err) => console.error(`[bench:${name}] stopping ${step.name} failed: ${err?.message ?? err}`))
          .finally(() => clearTimeout(timer));
      }
    })().finally(() => (running = null));
    return running;
  };
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      interrupted = true;
      console.error(`[bench:${name}] ${signal}: cleaning up`);
      void run().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
  return {
    /** Registers how to stop something just started. */
    add: (stepName, stop) => steps.push({ name: stepName, stop }),
    /** Stops everything registered so far (a bench that starts a fresh service per size). */
    stopAll: () => run(),
    /** Runs `main`, then cleans up; a failure is printed and exits 1 (after cleaning up). */
    async main(fn) {
      try {
        await fn();
        await run();
      } catch (err) {
        // Interrupted: the signal handler is cleaning up and exits by itself.
        if (interrupted) await new Promise(() => undefined);
        console.error(`[bench:${name}] failed:`, err?.stack ?? err);
        await run();
        process.exit(1);
      }
    },
  };
}
