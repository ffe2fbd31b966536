import { minimatch } from 'minimatch';
import { matchesGlob } from '../../domain/glob-match';

// matchesGlob keeps each compiled pattern: it must answer exactly as minimatch(file, pattern) does, for
// both `dot` settings, the second time as the first, and past its bound.

const FILES = ['src/a.test.ts', '.github/x.yml', 'pkg/.hidden/t.spec.js', 'core/src/test/java/AT.java', 'a/b/c', '#x'];
const PATTERNS = ['**/*.test.*', '**/*.{java,kt}', '.github/**', '**/src/test/**', 'a/**', '#x', '**', '*', 'a/b/*'];

test('answers as minimatch does, with and without dot, when compiled and when cached', () => {
  for (const round of [1, 2]) {
    for (const dot of [true, false]) {
      for (const file of FILES) {
        for (const pattern of PATTERNS) {
          expect({ round, dot, file, pattern, matched: matchesGlob(file, pattern, { dot }) }).toEqual({
            round,
            dot,
            file,
            pattern,
            matched: minimatch(file, pattern, { dot }),
          });
        }
      }
    }
  }
});

test('still answers right after more patterns than it keeps', () => {
  for (let i = 0; i < 2_500; i++) expect(matchesGlob(`dir${i}/f.ts`, `dir${i}/*.ts`)).toBe(true);
  expect(matchesGlob('dir1/f.js', 'dir1/*.ts')).toBe(false);
  expect(matchesGlob('dir2499/f.ts', 'dir2499/*.ts')).toBe(true);
});
