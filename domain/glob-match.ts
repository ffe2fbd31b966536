import { Minimatch } from 'minimatch';

// minimatch(file, pattern) compiles the pattern on every call: checking a 3,000-file change against the
// tamper rules' globs spent about 80 % of its 6–8 s compiling the same few dozen patterns again
// (docs/performance.md). Each pattern is compiled once per process here; the set is bounded.

const MAX_PATTERNS = 2_000;
/** Compiled patterns, with `dot` and without. */
const compiled = { dot: new Map<string, Minimatch>(), plain: new Map<string, Minimatch>() };

/** Whether `file` matches the glob `pattern`; `dot`: wildcards match names starting with a dot. */
export function matchesGlob(file: string, pattern: string, { dot = false }: { dot?: boolean } = {}): boolean {
  const patterns = dot ? compiled.dot : compiled.plain;
  let matcher = patterns.get(pattern);
  if (!matcher) {
    // Patterns come from contracts and repositories too: the cache never grows past its bound.
    if (patterns.size >= MAX_PATTERNS) patterns.clear();
    matcher = new Minimatch(pattern, { dot });
    patterns.set(pattern, matcher);
  }
  return matcher.match(file);
}
