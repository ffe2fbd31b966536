// Reads pass/fail/skip counts from a test runner's own output (docs/design.md §3.3): one parser per runner,
// each recognising only its runner's summary. Counts are evidence only when the runner printed
// them, so output no parser recognises, output with an untrustworthy summary, and output holding
// the summaries of two different runners all yield null, never a guess.

import { parseCargo } from './cargo';
import { parseGoTestJson } from './go-json';
import { parseGoTest } from './go-test';
import { parseJest } from './jest';
import { parseMocha } from './mocha';
import { parseNodeTest } from './node-test';
import { parsePytest } from './pytest';
import { normaliseOutput, type Detection, type RunnerName, type TestReport } from './report';
import { parseTap } from './tap';
import { parseVitest } from './vitest';

export type { RunnerName, TestCounts, TestReport } from './report';
export { jvmJUnitName, parseJUnitXml, type JUnitTestcase } from './junit';
export { mergeReports } from './report';
// What a runner the service asked for a report file writes, and how its JUnit testcases are named.
export { parseJestJsonFile } from './jest';
export { parseMochaReportFile } from './mocha';
export { nodeTestJUnitName } from './node-test';
export { pytestJUnitName } from './pytest';
export { vitestJUnitName } from './vitest';

const PARSERS: Array<[RunnerName, (text: string) => Detection]> = [
  ['jest', parseJest],
  ['vitest', parseVitest],
  ['mocha', parseMocha],
  ['node:test', parseNodeTest],
  ['tap', parseTap],
  ['pytest', parsePytest],
  // `go test -json` events, else `go test -v` lines; the two never occur in one output.
  ['go', (text) => parseGoTestJson(text) ?? parseGoTest(text)],
  ['cargo', parseCargo],
];

/**
 * Counts from a runner's stdout/stderr (ANSI colours and CRLF are tolerated). Several summaries of
 * one runner add up (one command may run it several times).
 */
export function parseTestCounts(output: string): TestReport | null {
  const text = normaliseOutput(output);
  const found = new Map<RunnerName, Exclude<Detection, null>>();
  for (const [runner, parse] of PARSERS) {
    const detection = parse(text);
    if (detection !== null) found.set(runner, detection);
  }
  // node:test's TAP reporter prints TAP; its own summary, which counts nested tests rather than
  // top-level test points, is the one to read.
  if (found.has('node:test')) found.delete('tap');
  if (found.size !== 1) return null;
  const [detection] = found.values();
  return detection === undefined || detection === 'untrusted' ? null : detection;
}
