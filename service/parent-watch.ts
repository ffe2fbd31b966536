// A child of `npm start` (the API, a worker) is told its parent's pid. If that parent is SIGKILLed,
// nothing would supervise or ever stop the child: it notices within a second and stops itself.

export const PARENT_PID_VARIABLE = 'ENGINEERING_LOOP_PARENT_PID';

/** Calls `stop` once the process that started this one (named in the environment) is gone. */
export function stopWhenOrphaned(stop: () => void, env: NodeJS.ProcessEnv = process.env): void {
  const parent = Number(env[PARENT_PID_VARIABLE]);
  if (!parent) return;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    console.log(`the service process ${parent} is gone; stopping`);
    stop();
  }, 1000);
  timer.unref();
}
