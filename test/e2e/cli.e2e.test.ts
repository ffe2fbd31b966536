import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { requireBuiltCli, runCliProcess, type CliRun } from '../support/cli-process';
import { blockerLedger, cleanLedger } from '../support/fake-llm-server';
import { CORRECT_SUM, WRONG_SUM, createFixtureRepo, scriptedMaker } from '../support/fixture-repo';
import { freePort } from '../support/free-port';
import { startLoopHarness, type LoopHarness } from '../support/loop-harness';
import { loopRequest } from '../support/loop-request';

// The `engineering-loop` CLI as users run it (test/support/cli-process.ts), against
// the real API (Temporal dev server, PostgreSQL, worker process, fake reviewer LLM). The timeline
// command runs against the API's own route, and against a small local server for what an older server
// (without the route) answers.

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const STACK_TRACE = /\n\s+at .+\(.+:\d+:\d+\)/;

let home: string;
beforeAll(() => {
  requireBuiltCli();
  // A home of its own, so no config file of whoever runs the tests is read.
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-home-'));
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

const cli = (args: string[], env: Record<string, string>, timeoutMs?: number): Promise<CliRun> =>
  runCliProcess(args, home, env, timeoutMs);

function writeFile(name: string, content: string): string {
  const file = path.join(fs.mkdtempSync(path.join(home, 'input-')), name);
  fs.writeFileSync(file, content);
  return file;
}

const jsonLines = (text: string): any[] =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

describe('against the real API', () => {
  let h: LoopHarness;
  let env: Record<string, string>;
  beforeAll(async () => {
    h = await startLoopHarness();
    env = {
      ENGINEERING_LOOP_URL: h.baseUrl,
      ENGINEERING_LOOP_API_KEY: h.keys.submitter,
    };
  });
  afterAll(async () => {
    await h?.close();
  });

  test('submit a YAML loop with --watch: progress lines to PASSED, exit 0; then list, show, logs, watch and --json', async () => {
    const repo = createFixtureRepo();
    const maker = scriptedMaker({
      steps: { '1': { write: { 'src/sum.js': WRONG_SUM } }, '2': { write: { 'src/sum.js': CORRECT_SUM } } },
    });
    h.llm.enqueue({ content: cleanLedger });
    const file = writeFile('task.yaml', YAML.stringify(loopRequest(repo, maker.argv)));

    const submitted = await cli(['submit', file, '--watch', '--idempotency-key', 'cli-task-1'], env);
    expect(submitted).toMatchObject({ code: 0, stderr: '' });
    const id = new RegExp(`^submitted loop (${UUID.source}) \\(QUEUED\\)$`, 'm').exec(submitted.stdout)?.[1];
    expect(id).toBeDefined();
    const out = submitted.stdout;
    expect(out).toContain(`  ${h.baseUrl}/v1/loops/${id}\n`);
    // Gate results with their durations, verdicts, state changes, and the end.
    expect(out).toMatch(
      /^\d\d:\d\d:\d\d {4}#1 gate tests {2}FAILED {2}\d+(ms|\.\ds) {2}exit 1; 0 passed, 2 failed, 0 skipped$/m,
    );
    expect(out).toMatch(
      /^\d\d:\d\d:\d\d {4}#2 gate tests {2}PASSED {2}\d+(ms|\.\ds) {2}exit 0; 2 passed, 0 failed, 0 skipped$/m,
    );
    expect(out).toMatch(/#1 verdict ITERATE: 1\. Fix the failing tests gate/);
    expect(out).toMatch(/#2 verdict PASS\n/);
    expect(out).toMatch(/RUNNING +phase (PREPARING|CONTRACT|SETUP|MAKER|VERIFY|REVIEW|JUDGE) +iteration 1\/3/);
    expect(out).toMatch(/iteration 2\/3/);
    expect(out).toMatch(/PASSED +phase DONE +iteration 2\/3\n/);
    expect(out).toContain(`loop ${id} ended PASSED`);
    // Lines come in the order things happened.
    expect(out.indexOf('#1 gate tests')).toBeLessThan(out.indexOf('#1 verdict'));
    expect(out.indexOf('#1 verdict')).toBeLessThan(out.indexOf('#2 gate tests'));

    // The same idempotency key answers with the same loop (200, no new loop).
    const again = await cli(['submit', file, '--idempotency-key', 'cli-task-1', '--json'], env);
    expect(again.code).toBe(0);
    expect(jsonLines(again.stdout)).toEqual([expect.objectContaining({ id, status: 'PASSED' })]);
    const againText = await cli(['submit', file, '--idempotency-key', 'cli-task-1'], env);
    expect(againText.stdout).toContain(`already submitted with idempotency key "cli-task-1": loop ${id} (PASSED)`);

    const listed = await cli(['list', '--status', 'passed', '--limit', '10'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID +STATUS +PHASE +ITERATION +VERDICT +REPOSITORY +CREATED$/);
    expect(listed.stdout).toMatch(
      new RegExp(`^${id} +PASSED +DONE +2/3 +PASS +${repo.replace(/[/.]/g, '\\$&')} \\(main\\)`, 'm'),
    );
    const listedJson = await cli(['--json', 'list', '--limit', '1'], env);
    expect(jsonLines(listedJson.stdout)).toEqual([{ loops: [expect.objectContaining({ id, status: 'PASSED' })] }]);

    const shown = await cli(['show', id!], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('status       PASSED (phase DONE)');
    expect(shown.stdout).toContain('iteration    2/3, last verdict PASS');
    // The base run first: the bug the task is about fails there too.
    expect(shown.stdout).toMatch(/ {2}1 {2}1\/3 +v1 +tests:base FAILED, tests FAILED +none +ITERATE\n/);
    // The named test ran again with CI unset (the differential run), after the gate passed.
    expect(shown.stdout).toMatch(/ {2}2 {2}2\/3 +v1 +tests PASSED, tests:differential PASSED +none +PASS\n/);
    expect(shown.stdout).toContain('findings     latest iteration #2: none; all iterations: none');
    const shownJson = jsonLines((await cli(['show', id!, '--json'], env)).stdout);
    expect(shownJson).toHaveLength(1);
    expect(shownJson[0].iterations.map((i: any) => i.verdict.verdict)).toEqual(['ITERATE', 'PASS']);

    // logs: the failing runs' stored output, the base run's and the maker's (--gate tests matches both);
    // by default the latest iteration.
    const logs = await cli(['logs', id!, '--iteration', '1', '--gate', 'tests'], env);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toMatch(
      /^== #1 tests:base {2}FAILED {2}\(exit 1, \d+(ms|\.\ds), 0 passed, 2 failed, 0 skipped\)\n\$ node --test --test-reporter=spec/,
    );
    expect(logs.stdout).toMatch(
      /^== #1 tests {2}FAILED {2}\(exit 1, \d+(ms|\.\ds), 0 passed, 2 failed, 0 skipped\)\n\$ node --test --test-reporter=spec/m,
    );
    expect(logs.stdout).toContain('--- stdout (');
    expect(logs.stdout).toContain('sum adds two numbers');
    const latest = await cli(['logs', id!, '--tail', '3'], env);
    expect(latest.stdout).toMatch(/^== #2 tests {2}PASSED/);
    expect(latest.stdout).toContain('last 3 lines');
    const logsJson = jsonLines((await cli(['logs', id!, '--iteration', '1', '--json'], env)).stdout);
    expect(logsJson).toEqual(
      ['tests:base', 'tests'].map((gate) =>
        expect.objectContaining({ gate, status: 'FAILED', stdout: expect.stringContaining('sum adds two numbers') }),
      ),
    );
    const noGate = await cli(['logs', id!, '--gate', 'lint'], env);
    expect(noGate).toMatchObject({
      code: 1,
      stderr: `error: loop ${id} iteration #2 has no gate "lint" (gates: tests, tests:differential)\n`,
    });

    // watch on a loop that has ended prints its history and exits with its outcome.
    const watched = await cli(['watch', id!], env);
    expect(watched.code).toBe(0);
    expect(watched.stdout).toMatch(/#2 gate tests {2}PASSED/);
    const watchedJson = jsonLines((await cli(['watch', id!, '--json'], env)).stdout);
    expect(watchedJson.at(-1)).toEqual({
      id: expect.any(String),
      event: 'end',
      data: { loopId: id, status: 'PASSED', phase: 'DONE' },
    });

    // timeline, from the API's own GET /v1/loops/:id/timeline.
    const timeline = await cli(['timeline', id!], env);
    expect(timeline).toMatchObject({ code: 0, stderr: '' });
    const [head, columns, ...events] = timeline.stdout.trimEnd().split('\n');
    expect(head).toBe(`loop ${id}  PASSED (phase DONE)`);
    expect(columns).toMatch(/^TIME +KIND +ITER +DURATION +TITLE$/);
    const kinds = new Set(events.map((line) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}(\w+) /.exec(line)?.[1]));
    expect([...kinds]).toEqual(expect.arrayContaining(['phase', 'contract', 'command', 'model_call', 'verdict']));
    expect(events).toContainEqual(expect.stringMatching(/ command +#1 +\d+(ms|\.\ds) +tests: FAILED/));
    const timelineJson = jsonLines((await cli(['timeline', id!, '--json'], env)).stdout);
    expect(timelineJson).toEqual([
      expect.objectContaining({ loopId: id, status: 'PASSED', events: expect.any(Array) }),
    ]);
    expect(timelineJson[0].events).toHaveLength(events.length);
  }, 400_000);

  test('an escalating loop: watch exits 2 and says how to decide; decide approve (approver key) → APPROVED', async () => {
    const repo = createFixtureRepo();
    const maker = scriptedMaker({ steps: { '1': { write: { 'src/sum.js': CORRECT_SUM } } } });
    h.llm.enqueue({ content: blockerLedger() });
    const file = writeFile('task.json', JSON.stringify(loopRequest(repo, maker.argv, { maxIterations: 1 })));
    const submitted = await cli(['submit', file], env);
    expect(submitted.code).toBe(0);
    const id = new RegExp(`^submitted loop (${UUID.source})`, 'm').exec(submitted.stdout)![1]!;
    expect(submitted.stdout).toContain(`follow it: engineering-loop watch ${id}`);
    // The fixture is a local repository: the submitter is told delivery pushes into it, and how to turn that off.
    expect(submitted.stdout).toContain(
      `  note: When the loop passes or is approved, delivery pushes the branch engineering-loop/${id} into the local repository ${repo}. To leave it untouched, submit with "delivery": { "push": false }`,
    );

    const waiting = await cli(['watch', id], env);
    expect(waiting.code).toBe(2);
    expect(waiting.stdout).toMatch(/#1 gate tests {2}PASSED/);
    expect(waiting.stdout).toMatch(/#1 verdict ESCALATE \([A-Z_]+\)/);
    expect(waiting.stdout).toMatch(/escalation #1 opened: [A-Z_]+\n/);
    expect(waiting.stdout).toMatch(/AWAITING_DECISION +phase AWAITING_DECISION/);
    expect(waiting.stdout).toContain(`loop ${id} is waiting for a human decision on escalation #1`);
    expect(waiting.stdout).toContain(`engineering-loop decide ${id} approve`);

    const shown = await cli(['show', id], env);
    expect(shown.stdout).toContain('findings     latest iteration #1: 1 valid (1 BLOCKER)');
    expect(shown.stdout).toMatch(/ {2}#1 [A-Z_]+ OPEN, opened /);

    // Refused before anything is sent, and by the API: the wrong decision shape, an unknown escalation, the wrong role.
    const misuse = await cli(['decide', id, 'approve', '--guidance', 'try harder'], {
      ...env,
      ENGINEERING_LOOP_API_KEY: h.keys.approver,
    });
    expect(misuse).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('decide: --guidance: only a retry takes guidance (this is approve)'),
    });
    const unknownEscalation = await cli(['decide', id, 'approve', '--escalation', '7'], {
      ...env,
      ENGINEERING_LOOP_API_KEY: h.keys.approver,
    });
    expect(unknownEscalation).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`loop ${id} has no escalation #7 (escalations: #1 OPEN)`),
    });
    const submitterDecides = await cli(['decide', id, 'approve'], env);
    // The key is refused for this: exit 4, like a key the API does not know.
    expect(submitterDecides.code).toBe(4);
    expect(submitterDecides.stderr).toMatch(
      /^error: API key "test-submitter" has role submitter; this request needs role approver \(or admin\) \(HTTP 403 Forbidden, request [\w-]+\)\n$/,
    );

    const decided = await cli(
      ['decide', id, 'approve', '--comment', 'the precision finding is out of scope', '--escalation', '1'],
      {
        ...env,
        ENGINEERING_LOOP_API_KEY: h.keys.approver,
      },
    );
    expect(decided).toMatchObject({ code: 0, stderr: '' });
    expect(decided.stdout).toMatch(/^approve accepted for escalation 1 \(loop [0-9a-f-]+, escalation #1 [A-Z_]+\)\n/);

    const done = await cli(['watch', id], env);
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/escalation #1 decided: approve by ana/);
    expect(done.stdout).toContain(`loop ${id} ended APPROVED`);
    const after = await cli(['show', id], env);
    expect(after.stdout).toContain('status       APPROVED (phase DONE)');
    expect(after.stdout).toMatch(
      /#1 [A-Z_]+ DECIDED, opened .*; approve by ana \(key [\w-]+\) at .* \("the precision finding is out of scope"\)/,
    );
    const nothingOpen = await cli(['decide', id, 'reject'], { ...env, ENGINEERING_LOOP_API_KEY: h.keys.approver });
    expect(nothingOpen).toMatchObject({
      code: 1,
      stderr: `error: loop ${id} has no open escalation to decide (it is APPROVED, phase DONE)\n`,
    });
  }, 400_000);

  test('bad input, a bad key, an unknown loop, an unreachable API: one clear message, exit 1 (4 for the key and the API), no stack trace', async () => {
    const cases: Array<[string[], Record<string, string>, string | RegExp, number?]> = [
      [
        ['submit', path.join(home, 'missing.yaml')],
        env,
        `error: cannot read loop file ${path.join(home, 'missing.yaml')}: no such file\n`,
      ],
      [
        ['submit', writeFile('broken.yaml', 'repository: [unclosed\n')],
        env,
        /^error: loop file .*broken\.yaml is not valid YAML: /,
      ],
      [
        ['submit', writeFile('list.yaml', '- a\n- b\n')],
        env,
        /^error: loop file .*list\.yaml must hold an object \(a YAML mapping\), not a list\n$/,
      ],
      [
        ['submit', writeFile('bad.yaml', 'repository: { url: /tmp/x }\nmaxIterations: 0\n')],
        env,
        /^error: the API refused the request \(HTTP 400 Bad Request, request [\w-]+\):\n {2}- body\.\S+: /,
      ],
      [
        ['frobnicate'],
        env,
        'error: unknown command "frobnicate"; commands: submit, watch, list, show, decide, report, diff, cancel, pause, resume, logs, timeline, agents, mcp\nhint: see: engineering-loop --help\n',
      ],
      [
        ['decide', '3f2c9a1e-8d4b-4c1a-9e7f-0a1b2c3d4e5f', 'maybe'],
        env,
        'error: decide: <kind>: the decision must be one of approve, reject, retry, amend, got "maybe"\nhint: see: engineering-loop decide --help\n',
      ],
      [['show', 'not-a-loop'], env, /^error: show: <loopId>: must be a loop id \(a UUID/],
      [
        ['list', '--limit', '0'],
        env,
        'error: list: --limit: must be a whole number from 1 to 200, got "0"\nhint: see: engineering-loop list --help\n',
      ],
      [['list', '--verbose'], env, 'error: list: unknown option --verbose\nhint: see: engineering-loop list --help\n'],
      [
        ['list'],
        { ...env, ENGINEERING_LOOP_API_KEY: 'elk_not_a_real_key' },
        /^error: invalid API key \(unknown or revoked\) \(HTTP 401 Unauthorized, request [\w-]+\)\nhint: check the API key \(ENGINEERING_LOOP_API_KEY, or "apiKey" in the config file\)\n$/,
        4,
      ],
      [
        ['list'],
        { ENGINEERING_LOOP_URL: h.baseUrl },
        /^error: no API key configured\nhint: set ENGINEERING_LOOP_API_KEY, or "apiKey" in .*\/xdg\/engineering-loop\/config\.json/,
      ],
      [
        ['show', '3f2c9a1e-8d4b-4c1a-9e7f-0a1b2c3d4e5f'],
        env,
        /^error: loop 3f2c9a1e-8d4b-4c1a-9e7f-0a1b2c3d4e5f was not found \(HTTP 404 Not Found, request [\w-]+\)\n$/,
      ],
    ];
    const closedPort = await freePort();
    cases.push([
      ['list'],
      { ...env, ENGINEERING_LOOP_URL: `http://127.0.0.1:${closedPort}` },
      `error: cannot reach the API at http://127.0.0.1:${closedPort} (connection refused)\nhint: is the service running? Set ENGINEERING_LOOP_URL (or "url" in the config file) to its address\n`,
      4,
    ]);
    for (const [args, runEnv, expected, code = 1] of cases) {
      const run = await cli(args, runEnv);
      expect({ args, code: run.code, stdout: run.stdout }).toEqual({ args, code, stdout: '' });
      if (typeof expected === 'string') expect(run.stderr).toBe(expected);
      else expect(run.stderr).toMatch(expected);
      expect(run.stderr).not.toMatch(STACK_TRACE);
    }
  }, 120_000);

  test('the config file supplies the URL and key; the environment wins over it', async () => {
    const file = path.join(home, 'xdg', 'engineering-loop', 'config.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ url: h.baseUrl, apiKey: h.keys.submitter }));
    try {
      const fromFile = await cli(['list', '--json', '--limit', '1'], {});
      expect(fromFile.code).toBe(0);
      expect(jsonLines(fromFile.stdout)[0].loops).toHaveLength(1);
      const envWins = await cli(['list'], { ENGINEERING_LOOP_API_KEY: 'elk_wrong' });
      expect(envWins.stderr).toMatch(/^error: invalid API key/);
      fs.writeFileSync(file, '{ "url": ');
      const broken = await cli(['list'], {});
      expect(broken).toMatchObject({
        code: 1,
        stderr: expect.stringMatching(/^error: the config file .*config\.json is not valid JSON: /),
      });
    } finally {
      fs.rmSync(file);
    }
  });
});

describe('timeline, against a local server answering the documented shape', () => {
  const LOOP = '3f2c9a1e-8d4b-4c1a-9e7f-0a1b2c3d4e5f';
  const OLD_SERVER_LOOP = '11111111-2222-4333-8444-555555555555';
  const timeline = {
    loopId: LOOP,
    status: 'PASSED',
    phase: 'DONE',
    events: [
      {
        at: '2025-03-01T10:00:00.000Z',
        kind: 'phase',
        iteration: null,
        title: 'phase CONTRACT',
        durationMs: null,
        detail: {},
      },
      {
        at: '2025-03-01T10:00:01.000Z',
        kind: 'contract',
        iteration: null,
        title: 'contract v1 frozen',
        durationMs: null,
        detail: { version: 1 },
      },
      {
        at: '2025-03-01T10:00:03.000Z',
        kind: 'command',
        iteration: 1,
        title: 'gate tests PASSED',
        durationMs: 1500,
        detail: { exitCode: 0 },
      },
      {
        at: '2025-03-01T10:00:05.000Z',
        kind: 'model_call',
        iteration: 1,
        title: 'review (scripted-reviewer)',
        durationMs: 820,
        detail: {},
      },
      { at: '2025-03-01T10:00:06.000Z', kind: 'verdict', iteration: 1, title: 'PASS', durationMs: null, detail: {} },
    ],
  };
  let server: http.Server;
  let url: string;
  const requests: Array<{ url: string; authorization: string | undefined }> = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.url === `/v1/loops/${LOOP}/timeline`) return send(200, timeline);
      if (req.url === `/v1/loops/${OLD_SERVER_LOOP}/timeline`) {
        // What a server without the route answers (api/errors.ts setNotFoundHandler).
        return send(404, {
          statusCode: 404,
          error: 'Not Found',
          message: `no route GET ${req.url}`,
          requestId: 'req-1',
        });
      }
      return send(404, {
        statusCode: 404,
        error: 'Not Found',
        message: `loop ${req.url?.split('/')[3]} was not found`,
        requestId: 'req-2',
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('one line per event: time, kind, iteration, duration, title; --json prints the answer; an old server is named as such', async () => {
    const env = { ENGINEERING_LOOP_URL: url, ENGINEERING_LOOP_API_KEY: 'elk_timeline', TZ: 'UTC' };
    const text = await cli(['timeline', LOOP], env);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout.split('\n')).toEqual([
      `loop ${LOOP}  PASSED (phase DONE)`,
      'TIME                 KIND        ITER  DURATION  TITLE',
      '2025-03-01 10:00:00  phase       -     -         phase CONTRACT',
      '2025-03-01 10:00:01  contract    -     -         contract v1 frozen',
      '2025-03-01 10:00:03  command     #1    1.5s      gate tests PASSED',
      '2025-03-01 10:00:05  model_call  #1    820ms     review (scripted-reviewer)',
      '2025-03-01 10:00:06  verdict     #1    -         PASS',
      '',
    ]);
    expect(requests[0]).toEqual({ url: `/v1/loops/${LOOP}/timeline`, authorization: 'Bearer elk_timeline' });

    const json = await cli(['timeline', LOOP, '--json'], env);
    expect(jsonLines(json.stdout)).toEqual([timeline]);

    const old = await cli(['timeline', OLD_SERVER_LOOP], env);
    expect(old).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `error: the server at ${url} is too old for timeline: it has no GET /v1/loops/:id/timeline\nhint: upgrade the service, or use: engineering-loop show\n`,
    });
    const unknown = await cli(['timeline', '99999999-2222-4333-8444-555555555555'], env);
    expect(unknown).toMatchObject({
      code: 1,
      stderr: 'error: loop 99999999-2222-4333-8444-555555555555 was not found (HTTP 404 Not Found, request req-2)\n',
    });
  });
});
