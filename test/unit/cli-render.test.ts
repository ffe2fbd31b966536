import type { EvidenceRecord, LoopDetail, LoopSummary, TimelineEvent } from '../../cli/api-types';
import type { Io } from '../../cli/io';
import { evidenceText } from '../../cli/render/evidence';
import { duration, table, tail } from '../../cli/render/format';
import { decideHint, findingCounts, loopSummaryText, loopTable } from '../../cli/render/loop';
import { timelineText } from '../../cli/render/timeline';
import { LiveLine } from '../../cli/watch/live-line';
import { EventView } from '../../cli/watch/event-view';

// What the CLI prints, from the API's answers (times in UTC here).

process.env.TZ = 'UTC';

const ID = '3f2c9a1e-8d4b-4c1a-9e7f-0a1b2c3d4e5f';

const summary: LoopSummary = {
  id: ID,
  workflowId: `loop-${ID}`,
  status: 'RUNNING',
  phase: 'MAKER',
  repository: { url: '/srv/repos/widgets', baseRef: 'main' },
  iteration: 1,
  maxIterations: 3,
  lastVerdict: null,
  createdAt: '2025-03-01T10:00:00.000Z',
  updatedAt: '2025-03-01T10:00:05.000Z',
  finishedAt: null,
};

function detail(overrides: Partial<LoopDetail> = {}): LoopDetail {
  return { ...summary, iterations: [], escalations: [], ...overrides };
}

const failedTests = {
  id: 'ev-1',
  gate: 'tests',
  status: 'FAILED',
  command: ['node', '--test'],
  exitCode: 1,
  timeoutStatus: null,
  testCounts: { passed: 0, failed: 2 },
  failureReason: null,
};

test('durations and tables', () => {
  expect([0, 850, 4200, 65_000, 3_725_000].map(duration)).toEqual(['0ms', '850ms', '4.2s', '1m 05s', '1h 02m']);
  expect(duration(null)).toBe('-');
  expect(
    table(
      ['A', 'LONGER'],
      [
        ['xyz', '1'],
        ['q', '22'],
      ],
    ),
  ).toBe('A    LONGER\nxyz  1\nq    22');
  expect(tail('1\n2\n3\n4\n', 2)).toBe('3\n4');
});

test('list: one row per loop, or says there are none', () => {
  expect(loopTable([])).toBe('no loops');
  expect(loopTable([{ ...summary, status: 'PASSED', lastVerdict: 'PASS', iteration: 2 }]).split('\n')).toEqual([
    'ID                                    STATUS  PHASE  ITERATION  VERDICT  REPOSITORY                 CREATED',
    `${ID}  PASSED  MAKER  2/3        PASS     /srv/repos/widgets (main)  2025-03-01 10:00:00`,
  ]);
});

test('finding counts: valid ones by severity (most severe first), invalid ones apart', () => {
  const f = (severity: string, validity = 'VALID') => ({ findingId: 'F', title: 't', severity, validity });
  expect(findingCounts([])).toBe('none');
  expect(findingCounts([f('LOW'), f('BLOCKER'), f('LOW'), f('HIGH', 'INVALID')])).toBe(
    '3 valid (1 BLOCKER, 2 LOW), 1 invalid',
  );
});

test('show: state, iterations with gates, findings and verdicts, escalations, and how to decide the open one', () => {
  const loop = detail({
    status: 'AWAITING_DECISION',
    phase: 'AWAITING_DECISION',
    lastVerdict: 'ESCALATE',
    branch: `engineering-loop/${ID}`,
    iterations: [
      {
        sequence: 1,
        roundIteration: 1,
        contractVersion: 1,
        verdict: { verdict: 'ITERATE', trigger: null },
        evidence: [failedTests],
        findings: [],
      },
      {
        sequence: 2,
        roundIteration: 2,
        contractVersion: 1,
        verdict: { verdict: 'ESCALATE', trigger: 'MAX_ITERATIONS' },
        evidence: [{ ...failedTests, id: 'ev-2', status: 'PASSED', exitCode: 0 }],
        findings: [
          { findingId: 'F-2', title: 'a comment is stale', severity: 'LOW', validity: 'INVALID', location: null },
          {
            findingId: 'F-1',
            title: 'precision',
            severity: 'BLOCKER',
            validity: 'VALID',
            location: { file: 'src/sum.js', startLine: 1, endLine: 3 },
          },
        ],
      },
    ],
    escalations: [
      {
        id: 'esc-1',
        sequence: 1,
        trigger: 'MAX_ITERATIONS',
        status: 'OPEN',
        createdAt: '2025-03-01T10:05:00.000Z',
        decision: null,
      },
    ],
  });
  const text = loopSummaryText(loop);
  expect(text).toContain('status       AWAITING_DECISION (phase AWAITING_DECISION)');
  expect(text).toContain(`repository   /srv/repos/widgets (main), branch engineering-loop/${ID}`);
  expect(text).toContain('iteration    1/3, last verdict ESCALATE');
  expect(text).toContain(
    '  #  ROUND  CONTRACT  GATES         FINDINGS                        VERDICT\n  1  1/3    v1        tests FAILED  none                            ITERATE\n',
  );
  expect(text).toContain('2  2/3    v1        tests PASSED  1 valid (1 BLOCKER), 1 invalid  ESCALATE (MAX_ITERATIONS)');
  expect(text).toContain(
    [
      'findings     latest iteration #2: 1 valid (1 BLOCKER), 1 invalid; all iterations: 1 valid (1 BLOCKER), 1 invalid',
      '  ITER  SEVERITY  VALIDITY  WHERE           TITLE',
      '  #2    BLOCKER   VALID     src/sum.js:1-3  precision',
      '  #2    LOW       INVALID   -               a comment is stale',
    ].join('\n'),
  );
  expect(text).toContain('  #1 MAX_ITERATIONS OPEN, opened 2025-03-01 10:05:00');
  expect(text).toContain(`engineering-loop decide ${ID} retry --guidance`);
  expect(text).toContain(`read:    engineering-loop show ${ID}   (the report: engineering-loop report ${ID})`);
  expect(decideHint(ID, { sequence: 1, trigger: 'MAX_ITERATIONS' })).toMatch(
    /^loop .* is waiting for a human decision on escalation #1 \(MAX_ITERATIONS\)\./,
  );
});

test('show: a loop without iterations, a failure reason and a decided escalation', () => {
  const text = loopSummaryText(
    detail({
      status: 'FAILED',
      phase: 'DONE',
      failureReason: 'invalid verification.json',
      finishedAt: '2025-03-01T10:01:00.000Z',
      escalations: [
        {
          id: 'e',
          sequence: 1,
          trigger: 'ENVIRONMENT',
          status: 'DECIDED',
          decision: {
            kind: 'reject',
            actor: 'ana (key k1)',
            comment: 'broken repo',
            createdAt: '2025-03-01T10:00:30.000Z',
          },
        },
      ],
    }),
  );
  expect(text).toContain('failure      invalid verification.json');
  expect(text).toContain('finished     2025-03-01 10:01:00');
  expect(text).toContain('iterations   none yet');
  expect(text).toContain('  #1 ENVIRONMENT DECIDED; reject by ana (key k1) at 2025-03-01 10:00:30 ("broken repo")');
  expect(text).not.toContain('decide:');
});

const event = (kind: string, at: string, iteration: number | null, title: string, detail: object): TimelineEvent => ({
  at: `2025-03-01T10:00:${at}.000Z`,
  kind,
  iteration,
  title,
  durationMs: kind === 'command' ? 1500 : null,
  detail: detail as Record<string, unknown>,
});
const phase = (at: string, phase: string, status = 'RUNNING', roundIteration = 1) =>
  event('phase', at, null, phase, { phase, status, roundIteration, lastVerdict: null, failureReason: null });

test('watch: a line per phase, command, verdict, escalation and decision; what comes again is not printed twice', () => {
  const view = new EventView(3);
  const tests = event('command', '03', 1, 'tests: FAILED', {
    evidenceId: 'ev-1',
    gate: 'tests',
    status: 'FAILED',
    exitCode: 1,
    timeoutStatus: 'COMPLETED',
    testCounts: { passed: 0, failed: 2 },
    endTime: '2025-03-01T10:00:03.500Z',
  });
  const escalation = (status: string) =>
    event('escalation', '05', 1, `Escalation #1: MAX_ITERATIONS (${status})`, {
      sequence: 1,
      trigger: 'MAX_ITERATIONS',
      status,
    });
  const lines = [
    phase('01', 'PREPARING', 'RUNNING', 0),
    event('command', '01', null, 'workspace-setup', {
      evidenceId: 'ev-0',
      gate: 'workspace-setup:npm:1',
      status: 'PASSED',
      exitCode: 0,
    }),
    event('contract', '01', null, 'Contract v1 frozen (initial)', { version: 1 }),
    phase('02', 'MAKER'),
    event('model_call', '02', 1, 'maker agent run: scripted → OK', {}),
    phase('02', 'VERIFY'),
    tests,
    tests,
    phase('04', 'JUDGE'),
    event('verdict', '04', 1, 'Verdict ESCALATE', {
      verdict: 'ESCALATE',
      trigger: 'MAX_ITERATIONS',
      directives: ['1. Fix the failing tests gate'],
    }),
    escalation('OPEN'),
  ].flatMap((e) => view.add(e));
  expect(lines).toEqual([
    '10:00:01  RUNNING            phase PREPARING          iteration 0/3',
    '10:00:01    set-up workspace-setup:npm:1  PASSED  1.5s  exit 0',
    '10:00:01    Contract v1 frozen (initial)',
    '10:00:02  RUNNING            phase MAKER              iteration 1/3',
    '10:00:02  RUNNING            phase VERIFY             iteration 1/3',
    '10:00:03    #1 gate tests  FAILED  1.5s  exit 1; 0 passed, 2 failed',
    '10:00:04  RUNNING            phase JUDGE              iteration 1/3',
    '10:00:04    #1 verdict ESCALATE (MAX_ITERATIONS): 1. Fix the failing tests gate',
    '10:00:05    escalation #1 opened: MAX_ITERATIONS',
  ]);
  // Open, but the loop does not say it waits yet.
  expect(view.awaitedEscalation()).toBeUndefined();
  expect(view.add(phase('06', 'AWAITING_DECISION', 'AWAITING_DECISION'))).toEqual([
    '10:00:06  AWAITING_DECISION  phase AWAITING_DECISION  iteration 1/3',
  ]);
  expect(view.awaitedEscalation()).toEqual({ sequence: 1, trigger: 'MAX_ITERATIONS' });

  // Decided: the escalation comes again with its new status, the decision has the line.
  expect(view.add(escalation('DECIDED'))).toEqual([]);
  expect(view.awaitedEscalation()).toBeUndefined();
  expect(
    view.add(
      event('decision', '09', 1, 'Decision: approve by ana', { escalationSequence: 1, kind: 'approve', actor: 'ana' }),
    ),
  ).toEqual(['10:00:09    escalation #1 decided: approve by ana']);
  expect(view.add(escalation('CANCELLED'))).toEqual(['10:00:05    escalation #1 closed (CANCELLED): MAX_ITERATIONS']);
  expect(
    view.add(
      event('phase', '10', null, 'DONE · FAILED', {
        phase: 'DONE',
        status: 'FAILED',
        roundIteration: 1,
        failureReason: 'the workspace is gone',
      }),
    ),
  ).toEqual(['10:00:10  FAILED             phase DONE               iteration 1/3  the workspace is gone']);
  expect(view.state).toEqual({ status: 'FAILED', phase: 'DONE', roundIteration: 1 });
});

test('watch on a terminal: a spinner line that printed lines go above; elsewhere plain lines only', () => {
  const written: string[] = [];
  const io = (isTTY: boolean): Io => ({
    isTTY,
    out: (t) => written.push(`${t}\n`),
    err: (t) => written.push(`stderr: ${t}\n`),
    write: (t) => written.push(t),
  });

  const plain = new LiveLine(io(false));
  plain.status('RUNNING · MAKER');
  plain.print('a line');
  plain.notice('warning: reconnecting');
  plain.stop();
  expect(written).toEqual(['a line\n', 'stderr: warning: reconnecting\n']);

  written.length = 0;
  const live = new LiveLine(io(true));
  live.status('RUNNING · MAKER');
  live.print('a line');
  live.notice('warning: reconnecting');
  live.stop();
  // Whatever goes to stderr starts on a cleared line, and the live line comes back below it.
  expect(written).toEqual([
    '\r\x1b[2K⠋ RUNNING · MAKER',
    '\r\x1b[2K',
    'a line\n',
    '\r\x1b[2K⠋ RUNNING · MAKER',
    '\r\x1b[2K',
    'stderr: warning: reconnecting\n',
    '\r\x1b[2K⠋ RUNNING · MAKER',
    '\r\x1b[2K',
  ]);
});

test('logs: the command, the facts and both streams (or their tails)', () => {
  const record: EvidenceRecord = {
    ...failedTests,
    command: ['node', '--test', 'a file.js'],
    stdout: 'line 1\nline 2\nline 3\n',
    stderr: '',
    stdoutBytes: 21,
    startTime: '2025-03-01T10:00:02.000Z',
    endTime: '2025-03-01T10:00:02.400Z',
  };
  expect(evidenceText('#1 tests', record, undefined)).toBe(
    [
      '== #1 tests  FAILED  (exit 1, 400ms, 0 passed, 2 failed)',
      "$ node --test 'a file.js'",
      '--- stdout (21 bytes)',
      'line 1\nline 2\nline 3',
      '--- stderr: empty',
    ].join('\n'),
  );
  expect(evidenceText('#1 tests', record, 1)).toContain('--- stdout (21 bytes, last 1 lines)\nline 3\n');
});

test('timeline: one line per event with time, kind, iteration, duration and title', () => {
  const text = timelineText({
    loopId: ID,
    status: 'PASSED',
    phase: 'DONE',
    events: [
      {
        at: '2025-03-01T10:00:00.000Z',
        kind: 'phase',
        iteration: null,
        title: 'CONTRACT',
        durationMs: null,
        detail: {},
      },
      {
        at: '2025-03-01T10:00:01.250Z',
        kind: 'command',
        iteration: 1,
        title: 'gate tests PASSED',
        durationMs: 1240,
        detail: { exitCode: 0 },
      },
    ],
  });
  expect(text.split('\n')).toEqual([
    `loop ${ID}  PASSED (phase DONE)`,
    'TIME                 KIND     ITER  DURATION  TITLE',
    '2025-03-01 10:00:00  phase    -     -         CONTRACT',
    '2025-03-01 10:00:01  command  #1    1.2s      gate tests PASSED',
  ]);
  expect(timelineText({ loopId: ID, status: 'QUEUED', phase: 'QUEUED', events: [] })).toContain('no events yet');
});
