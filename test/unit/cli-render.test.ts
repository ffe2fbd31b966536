import type { EvidenceRecord, LoopDetail, LoopSummary } from '../../cli/api-types';
import type { Io } from '../../cli/io';
import { evidenceText } from '../../cli/render/evidence';
import { duration, table, tail } from '../../cli/render/format';
import { decideHint, findingCounts, loopSummaryText, loopTable } from '../../cli/render/loop';
import { timelineText } from '../../cli/render/timeline';
import { LiveLine } from '../../cli/watch/live-line';
import { ProgressTracker } from '../../cli/watch/tracker';

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
        findings: [{ findingId: 'F-1', title: 'precision', severity: 'BLOCKER', validity: 'VALID' }],
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
    '  #  ROUND  CONTRACT  GATES         FINDINGS             VERDICT\n  1  1/3    v1        tests FAILED  none                 ITERATE\n',
  );
  expect(text).toContain('2  2/3    v1        tests PASSED  1 valid (1 BLOCKER)  ESCALATE (MAX_ITERATIONS)');
  expect(text).toContain('findings     latest iteration #2: 1 valid (1 BLOCKER); all iterations: 1 valid (1 BLOCKER)');
  expect(text).toContain('  #1 MAX_ITERATIONS OPEN, opened 2025-03-01 10:05:00');
  expect(text).toContain(`engineering-loop decide ${ID} retry --guidance`);
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

test('watch: each change once — gates with durations, verdicts, escalations, then the new state', () => {
  const tracker = new ProgressTracker();
  const now = new Date('2025-03-01T10:00:01.000Z');
  expect(tracker.update(detail(), new Map(), now)).toEqual([
    '10:00:01  RUNNING            phase MAKER              iteration 1/3',
  ]);
  expect(tracker.update(detail(), new Map(), now)).toEqual([]);

  const withGate = detail({
    phase: 'REVIEW',
    iterations: [{ sequence: 1, roundIteration: 1, verdict: null, evidence: [failedTests], findings: [] }],
  });
  expect(tracker.unseenEvidence(withGate).map((e) => e.id)).toEqual(['ev-1']);
  const record: EvidenceRecord = {
    ...failedTests,
    stdout: '',
    stderr: '',
    startTime: '2025-03-01T10:00:02.000Z',
    endTime: '2025-03-01T10:00:03.500Z',
  };
  expect(tracker.update(withGate, new Map([['ev-1', record]]), now)).toEqual([
    '10:00:03    #1 gate tests  FAILED  1.5s  exit 1; 0 passed, 2 failed',
    '10:00:01  RUNNING            phase REVIEW             iteration 1/3',
  ]);
  expect(tracker.unseenEvidence(withGate)).toEqual([]);

  const escalated = detail({
    status: 'AWAITING_DECISION',
    phase: 'AWAITING_DECISION',
    workspaceSetup: [
      { id: 'ev-0', gate: 'workspace-setup:npm:1', status: 'PASSED', command: ['npm', 'ci'], exitCode: 0 },
    ],
    iterations: [
      {
        sequence: 1,
        roundIteration: 1,
        verdict: { verdict: 'ESCALATE', trigger: 'MAX_ITERATIONS', directives: ['1. Fix the failing tests gate'] },
        evidence: [failedTests],
        findings: [],
      },
    ],
    escalations: [
      { id: 'esc-1', sequence: 1, trigger: 'MAX_ITERATIONS', status: 'OPEN', createdAt: '2025-03-01T10:00:04.000Z' },
    ],
  });
  expect(tracker.update(escalated, new Map(), now)).toEqual([
    '10:00:01    set-up workspace-setup:npm:1  PASSED  -  exit 0',
    '10:00:01    #1 verdict ESCALATE (MAX_ITERATIONS): 1. Fix the failing tests gate',
    '10:00:04    escalation #1 opened: MAX_ITERATIONS',
    '10:00:01  AWAITING_DECISION  phase AWAITING_DECISION  iteration 1/3',
  ]);
  const decided = {
    ...escalated,
    status: 'APPROVED',
    phase: 'DONE',
    escalations: [
      {
        ...escalated.escalations[0]!,
        status: 'DECIDED',
        decision: { kind: 'approve', actor: 'ana', createdAt: '2025-03-01T10:00:09.000Z' },
      },
    ],
  };
  expect(tracker.update(decided, new Map(), now)).toEqual([
    '10:00:09    escalation #1 decided: approve by ana',
    '10:00:01  APPROVED           phase DONE               iteration 1/3',
  ]);
});

test('watch on a terminal: a spinner line that printed lines go above; elsewhere plain lines only', () => {
  const written: string[] = [];
  const io = (isTTY: boolean): Io => ({
    isTTY,
    out: (t) => written.push(`${t}\n`),
    err: () => undefined,
    write: (t) => written.push(t),
  });

  const plain = new LiveLine(io(false));
  plain.status('RUNNING · MAKER');
  plain.print('a line');
  plain.stop();
  expect(written).toEqual(['a line\n']);

  written.length = 0;
  const live = new LiveLine(io(true));
  live.status('RUNNING · MAKER');
  live.print('a line');
  live.stop();
  expect(written).toEqual([
    '\r\x1b[2K⠋ RUNNING · MAKER',
    '\r\x1b[2K',
    'a line\n',
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
