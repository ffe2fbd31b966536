import path from 'node:path';
import { z } from 'zod';
import { combine, emptyReport, type Detection, type TestReport } from './report';

// Mocha's epilogue (spec, dot, list and most built-in reporters):
//   `  3 passing (5ms)` always, then `  2 pending` and `  2 failing` only when non-zero, on
// consecutive lines. Mocha prints no total to cross-check.
const EPILOGUE =
  /^ +(?<passed>\d+) passing \(\d+(?:\.\d+)?[a-z]+\)$(?:\n +(?<pending>\d+) pending$)?(?:\n +(?<failing>\d+) failing$)?/gm;

// The spec reporter lists each passed test as `    ✔ name`, with ` (75ms)` when it was slow.
const PASSED_TEST = /^ +[✔✓√] (.+?)(?: \(\d+ms\))?$/gmu;
// A failed test is numbered where it ran (`  1) name`); the epilogue then repeats each number over its
// describe blocks and title, so only a number's first line names the test.
const FAILED_TEST = /^ +(\d+)\) (.+)$/gm;

export function parseMocha(text: string): Detection {
  const summaries = [...text.matchAll(EPILOGUE)].map((m) => ({
    passed: Number(m.groups?.passed ?? 0),
    failed: Number(m.groups?.failing ?? 0),
    skipped: Number(m.groups?.pending ?? 0),
  }));
  return combine('mocha', summaries, {
    passed: [...text.matchAll(PASSED_TEST)].map((m) => m[1] ?? ''),
    failed: failedTests(text),
  });
}

function failedTests(text: string): string[] {
  const byNumber = new Map<string, string>();
  for (const [, n, name] of text.matchAll(FAILED_TEST)) if (n && name && !byNumber.has(n)) byNumber.set(n, name);
  return [...byNumber.values()];
}

/** What the service's mocha reporter writes (report-preload-sources.ts): each test's file, titles and outcome. */
const MOCHA_REPORT = z.object({
  tests: z.array(
    z.object({
      file: z.string().nullable(),
      titlePath: z.array(z.string()).min(1),
      state: z.enum(['passed', 'failed', 'pending']),
    }),
  ),
});

/**
 * The report the service's mocha reporter wrote, each test named `<file> > <describe> > … > <title>`,
 * its file under `checkout` (a failed hook is named by its own title); null when it is not that report.
 */
export function parseMochaReportFile(text: string, checkout: string): TestReport | null {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = MOCHA_REPORT.safeParse(doc);
  if (!parsed.success) return null;
  const report = emptyReport('mocha');
  for (const test of parsed.data.tests) {
    const relative = test.file === null ? null : path.relative(checkout, test.file);
    const file = relative === null || relative.startsWith('..') || path.isAbsolute(relative) ? test.file : relative;
    const name = [...(file ? [file] : []), ...test.titlePath].join(' > ');
    if (test.state === 'passed') {
      report.passed++;
      report.passedTests.push(name);
    } else if (test.state === 'failed') {
      report.failed++;
      report.failedTests.push(name);
    } else report.skipped++;
  }
  return report;
}
