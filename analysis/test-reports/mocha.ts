import { combine, type Detection } from './report';

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
