import {
  describeUnreviewed,
  exclusionOf,
  generatedRules,
  REVIEW_PART_CHARS,
  reviewScope,
  type FileDiff,
} from '../../domain/review-scope';
import { MAX_REVIEW_PARTS } from '../../domain/review-limits';

// What the review must see: every changed file's diff, in parts when large, exclusions only by a named
// rule, and nothing at all (REVIEW_INCOMPLETE) past the operator's ceilings.

const section = (file: string, chars: number): FileDiff => {
  const header = `diff --git a/${file} b/${file}\n`;
  return { file, text: header + '+x\n'.repeat(Math.max(0, Math.ceil((chars - header.length) / 3))) };
};
const ceilings = { maxChangedFiles: 1000, maxDiffBytes: 5 * REVIEW_PART_CHARS };

test('linguist-generated rules follow .gitattributes: later lines win, names without a slash match at any depth', () => {
  const rules = generatedRules(
    [
      '# generated code',
      '*.pb.go linguist-generated',
      'dist/** linguist-generated=true',
      'dist/keep.js -linguist-generated',
      '/gen/ text',
      'vendor/** linguist-vendored',
    ].join('\n'),
  );
  expect(exclusionOf('api/v1/service.pb.go', rules)).toBe('LINGUIST_GENERATED');
  expect(exclusionOf('dist/bundle.js', rules)).toBe('LINGUIST_GENERATED');
  expect(exclusionOf('dist/keep.js', rules)).toBeNull();
  expect(exclusionOf('src/dist/bundle.js', rules)).toBeNull();
  expect(exclusionOf('vendor/lib.go', rules)).toBeNull();
  expect(exclusionOf('src/index.ts', rules)).toBeNull();
  expect(exclusionOf('web/package-lock.json', [])).toBe('LOCKFILE');
  expect(exclusionOf('Cargo.lock', [])).toBe('LOCKFILE');
  expect(exclusionOf('src/lock.json', [])).toBeNull();
});

test('a diff that fits one prompt is one part; a larger one is split at file sections, a huge file at line ends', () => {
  const small = reviewScope([section('a.js', 1000), section('b.js', 2000)], [], ceilings);
  expect(small).toEqual({
    kind: 'REVIEWABLE',
    parts: [expect.objectContaining({ files: ['a.js', 'b.js'] })],
    excluded: [],
  });

  const files = [
    section('a.js', 150_000),
    section('b.js', 100_000),
    section('c.js', 50_000),
    section('big.js', 450_000),
  ];
  const large = reviewScope(files, [], ceilings);
  if (large.kind !== 'REVIEWABLE') throw new Error(large.reason);
  expect(large.parts.map((p) => p.files)).toEqual([['a.js'], ['b.js', 'c.js'], ['big.js'], ['big.js'], ['big.js']]);
  for (const part of large.parts) expect(part.diff.length).toBeLessThanOrEqual(REVIEW_PART_CHARS);
  // Nothing lost, nothing doubled: the parts together are the whole diff, each slice ends at a line end.
  expect(large.parts.map((p) => p.diff).join('')).toBe(files.map((f) => f.text).join(''));
  for (const part of large.parts.slice(2, 4)) expect(part.diff.endsWith('\n')).toBe(true);
});

test('lockfiles and generated files are left out by name and rule; the rest is still reviewed', () => {
  const scope = reviewScope(
    [section('package-lock.json', 500_000), section('gen/api.ts', 300_000), section('src/fix.ts', 500)],
    generatedRules('gen/** linguist-generated\n'),
    ceilings,
  );
  expect(scope).toEqual({
    kind: 'REVIEWABLE',
    parts: [expect.objectContaining({ files: ['src/fix.ts'] })],
    excluded: [
      { file: 'package-lock.json', rule: 'LOCKFILE' },
      { file: 'gen/api.ts', rule: 'LINGUIST_GENERATED' },
    ],
  });
});

test('past the ceiling of files or bytes nothing is reviewed, and what was not is named by directory', () => {
  const many = [
    ...Array.from({ length: 1200 }, (_, i) => section(`generated/f${i}.js`, 60)),
    section('src/fix.js', 60),
  ];
  const tooMany = reviewScope(many, [], ceilings);
  if (tooMany.kind !== 'TOO_LARGE') throw new Error('expected TOO_LARGE');
  expect(tooMany.reason).toBe("1201 changed files exceed the review's ceiling of 1000");
  expect(tooMany.unreviewed.byDirectory).toEqual([
    { directory: 'generated/', files: 1200 },
    { directory: 'src/', files: 1 },
  ]);
  expect(describeUnreviewed(tooMany.unreviewed)).toMatch(
    /^1201 changed file\(s\), \d+ bytes of diff \(generated\/ 1200, src\/ 1\)$/,
  );

  const tooBig = reviewScope([section('a.js', 600_000)], [], { maxChangedFiles: 1000, maxDiffBytes: 500_000 });
  expect(tooBig.kind === 'TOO_LARGE' && tooBig.reason).toMatch(
    /^a \d+-byte diff exceeds the review's ceiling of 500000 bytes$/,
  );

  // Whole sections per part can need more parts than one review may take.
  const halfParts = Array.from({ length: MAX_REVIEW_PARTS + 1 }, (_, i) => section(`f${i}.js`, 110_000));
  const tooManyParts = reviewScope(halfParts, [], { maxChangedFiles: 1000, maxDiffBytes: 4_000_000 });
  expect(tooManyParts.kind === 'TOO_LARGE' && tooManyParts.reason).toBe(
    `the diff needs ${MAX_REVIEW_PARTS + 1} review parts, more than the ${MAX_REVIEW_PARTS} one review may take`,
  );
});

test('what the ceiling counts leaves the exclusions out: a large lockfile does not make a change unreviewable', () => {
  const scope = reviewScope([section('yarn.lock', 3_000_000), section('src/a.js', 100)], [], {
    maxChangedFiles: 1,
    maxDiffBytes: 1000,
  });
  expect(scope.kind).toBe('REVIEWABLE');
});
