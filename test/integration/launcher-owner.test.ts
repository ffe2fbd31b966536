import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { alive, gone } from '../support/processes';

// The launcher's owner dying (test/unit/launcher.test.ts has the rest): the owner is a separate plain
// node process, so it needs the compiled launcher in dist/, which puts the test in this tier.

test('when the process that launched them dies, the helper kills what it started', async () => {
  // A separate process runs the compiled launcher (npm test builds dist/ first), starts `sleep`, and is SIGKILLed.
  const launcher = require.resolve('../../dist/activities/process/launcher.js');
  const script = `require(${JSON.stringify(launcher)}).launch({ command: 'sleep', args: ['30'], cwd: '/', env: process.env, onStdout() {}, onStderr() {} }).then((c) => console.log(c.pid));`;
  const owner = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: owner.stdout }), 'line')) as [string];
  const sleepPid = Number(line);
  expect(alive(sleepPid)).toBe(true);
  owner.kill('SIGKILL');
  expect(await gone(sleepPid)).toBe(true);
});
