import { eventFrames, EventStreams } from '../../api/loop-event-stream';
import { ApiError, ConnectionError } from '../../cli/api-client';
import type { TimelineEvent } from '../../api/timeline-schemas';
import { CliError } from '../../cli/errors';
import {
  EXIT_AWAITING_DECISION,
  EXIT_ERROR,
  EXIT_LOOP_FAILED,
  EXIT_OK,
  EXIT_UNREACHABLE,
  exitCodeOfStatus,
} from '../../cli/exit-codes';
import { EventView } from '../../cli/watch/event-view';
import { Reconnection } from '../../cli/watch/reconnect';
import { SseParser, type SseMessage } from '../../cli/watch/sse-parser';

// `watch` on the loop's event stream: the server's frames as the CLI parses them (however the bytes are
// cut), what it prints of a whole loop, how long it reconnects, and its exit codes.

process.env.TZ = 'UTC';

const phase = (second: number, name: string, roundIteration: number): TimelineEvent => ({
  at: `2025-03-01T10:00:${String(second).padStart(2, '0')}.000Z`,
  kind: 'phase',
  iteration: roundIteration || null,
  title: name,
  durationMs: null,
  detail: { phase: name, status: 'RUNNING', roundIteration, lastVerdict: null, failureReason: null },
});

/** A loop that iterates once: every phase of both iterations within seconds, as a fast loop does. */
const PHASES: Array<[string, number]> = [
  ['PREPARING', 0],
  ['CONTRACT', 0],
  ['MAKER', 1],
  ['VERIFY', 1],
  ['REVIEW', 1],
  ['JUDGE', 1],
  ['MAKER', 2],
  ['VERIFY', 2],
  ['REVIEW', 2],
  ['JUDGE', 2],
];
const events = PHASES.map(([name, round], i) => phase(i, name, round));

/** Every event its own transaction but MAKER and VERIFY of iteration 2, which share one (as a batch write would). */
const frames = eventFrames(events.map((event, i) => ({ event, xid: 100 + (i === 7 ? 6 : i) })));

function parseAll(chunks: string[]): SseMessage[] {
  const parser = new SseParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

test('the server frames every event with its data, and an id on the last event of each transaction', () => {
  const messages = parseAll([frames]);
  expect(messages.map((m) => JSON.parse(m.data))).toEqual(events);
  expect(messages.map((m) => m.lastEventId)).toEqual([
    '100',
    '101',
    '102',
    '103',
    '104',
    '105',
    // No id of its own: a client cut here resumes after 105 and gets both events of transaction 106 again.
    '105',
    '106',
    '108',
    '109',
  ]);
  expect(messages.every((m) => m.event === 'message')).toBe(true);
  // What leaves the service is sanitised, here as everywhere.
  const token = `ghp_${'A1b2C3d4E5'.repeat(4)}`;
  const leaked = eventFrames([{ event: { ...events[0]!, title: `token ${token}` }, xid: 1 }]);
  expect(leaked).not.toContain(token);
});

test('the parser gives the same events however the stream is cut, with CRLF, CR or LF line ends', () => {
  const whole = parseAll([frames]);
  for (let at = 1; at < frames.length; at += 7) {
    expect(parseAll([frames.slice(0, at), frames.slice(at)])).toEqual(whole);
  }
  expect(parseAll(frames.split(''))).toEqual(whole);
  for (const end of ['\r\n', '\r']) {
    const text = frames.replace(/\n/g, end);
    expect(parseAll([text])).toEqual(whole);
    // A CRLF cut between its CR and LF is one line end, not two (which would end an event early).
    const cut = text.indexOf('\r') + 1;
    expect(parseAll([text.slice(0, cut), text.slice(cut)])).toEqual(whole);
  }
});

test('comments, named events, retry, multi-line data; an event without data is not dispatched', () => {
  const parser = new SseParser();
  expect(
    parser.push(
      'retry: 1000\n\n: keep-alive\n\nid: 7\n\nevent: end\ndata: {"status":\ndata: "PASSED"}\n\ndata:x\nid\n\n',
    ),
  ).toEqual([
    { event: 'end', data: '{"status":\n"PASSED"}', lastEventId: '7' },
    { event: 'message', data: 'x', lastEventId: '' },
  ]);
  expect(parser.retryMs).toBe(1000);
  expect(parser.push('data: unfinished')).toEqual([]);
});

test('watch prints every phase of every iteration, however little time the loop spent in each', () => {
  const view = new EventView(3);
  const printed = parseAll(frames.match(/[\s\S]{1,13}/g)!).flatMap((m) => view.add(JSON.parse(m.data)));
  // Polling the loop once a second saw only the phase it was in at that moment: here, at most one of an
  // iteration's VERIFY, REVIEW and JUDGE.
  expect(printed.map((line) => /phase (\w+) +iteration (\d)/.exec(line)?.slice(1).join(' '))).toEqual(
    PHASES.map(([name, round]) => `${name} ${round}`),
  );
});

test('reconnecting: quick at first, then slower, until --timeout has passed since the last answer', () => {
  let now = 0;
  const reconnection = new Reconnection(20_000, () => now);
  const refused = new ConnectionError('cannot reach the API at http://127.0.0.1:1 (connection refused)', 'is it up?');
  const delays: number[] = [];
  for (let i = 0; i < 6; i += 1) {
    const delay = reconnection.delayAfter(refused);
    delays.push(delay);
    now += delay;
  }
  expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 4500]);
  let gaveUp: unknown;
  try {
    reconnection.delayAfter(refused);
  } catch (error) {
    gaveUp = error;
  }
  expect(gaveUp).toBeInstanceOf(ConnectionError);
  expect(gaveUp).toMatchObject({
    message:
      'cannot reach the API at http://127.0.0.1:1 (connection refused); gave up after 20.0s of trying (--timeout)',
    hint: 'is it up?',
    exitCode: EXIT_UNREACHABLE,
  });

  // An answer starts the clock again; events make the next attempt quick again.
  reconnection.answered();
  reconnection.progressed();
  expect(reconnection.delayAfter(new ApiError(503, 'Service Unavailable', 'database down', null))).toBe(500);
  // Not worth another try: a 404, a refused key.
  const notFound = new ApiError(404, 'Not Found', 'loop x was not found', null);
  expect(() => reconnection.delayAfter(notFound)).toThrow(notFound);
  expect(() => reconnection.delayAfter(new ApiError(401, 'Unauthorized', 'invalid API key', null))).toThrow(
    'invalid API key',
  );
});

test('exit codes: passed or approved, awaiting a decision, ended otherwise, unreachable or refused, anything else', () => {
  expect(['PASSED', 'APPROVED'].map(exitCodeOfStatus)).toEqual([EXIT_OK, EXIT_OK]);
  expect(['FAILED', 'REJECTED', 'CANCELLED', 'TERMINATED'].map(exitCodeOfStatus)).toEqual(
    Array(4).fill(EXIT_LOOP_FAILED),
  );
  expect(['RUNNING', 'AWAITING_DECISION', 'QUEUED'].map(exitCodeOfStatus)).toEqual([null, null, null]);
  expect(new Set([EXIT_OK, EXIT_ERROR, EXIT_AWAITING_DECISION, EXIT_LOOP_FAILED, EXIT_UNREACHABLE]).size).toBe(5);

  expect(new ConnectionError('cannot reach the API').exitCode).toBe(EXIT_UNREACHABLE);
  expect([401, 403, 404, 409, 400, 503].map((s) => new ApiError(s, 'x', 'm', null).exitCode)).toEqual([
    EXIT_UNREACHABLE,
    EXIT_UNREACHABLE,
    EXIT_ERROR,
    EXIT_ERROR,
    EXIT_ERROR,
    EXIT_ERROR,
  ]);
  expect(new CliError('bad input').exitCode).toBe(EXIT_ERROR);
});

test('the API keeps at most so many streams open per key, and ends them all when it closes', () => {
  const streams = new EventStreams(2);
  const first = streams.claim('key-a');
  streams.claim('key-a');
  expect(() => streams.claim('key-a')).toThrow('at most 2 event streams may be open per API key; close one first');
  streams.claim('key-b');
  first();
  first();
  streams.claim('key-a');
  expect(() => streams.claim('key-a')).toThrow(/at most 2/);

  const stopped: string[] = [];
  streams.onClose(() => stopped.push('one'));
  const remove = streams.onClose(() => stopped.push('gone'));
  remove();
  streams.closeAll();
  expect(stopped).toEqual(['one']);
});
