import { REDACTED } from './redacted';

// Credentials recognisable by their shape. Every pattern runs in linear time on any input: a match may
// only start where the run of its characters starts (a lookbehind), so no run is rescanned from each of
// its positions, and a quantifier that could be followed by a failing check is bounded.

/** A token starts where a run of token characters (letters, digits, `_`, `-`) starts. */
const START = '(?<![A-Za-z0-9_-])';

const SHAPES: Array<[RegExp, string]> = [
  // scheme://user:password@host → keep the user. The password cannot cross a `/`, so each scan ends
  // where the next URL could start.
  [/(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,31}:\/\/[^\s/:@"'<>]{0,128}):[^\s/@"'<>]{1,256}@/g, `$1:${REDACTED}@`],
  // Authorization header values.
  [new RegExp(`${START}(Bearer|Basic|Token)[ \\t]{1,16}[A-Za-z0-9._~+/=-]{8,}`, 'g'), `$1 ${REDACTED}`],
  // Vendor tokens: a fixed prefix, then one greedy run with nothing after it that could fail.
  [new RegExp(`${START}sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}`, 'g'), REDACTED],
  [new RegExp(`${START}(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})`, 'g'), REDACTED],
  [new RegExp(`${START}gl(?:pat|dt|rt)-[A-Za-z0-9_-]{20,}`, 'g'), REDACTED],
  [new RegExp(`${START}(?:xox[abprs]|xapp)-[A-Za-z0-9-]{10,}`, 'g'), REDACTED],
  [new RegExp(`${START}(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])`, 'g'), REDACTED],
  [new RegExp(`${START}AIza[A-Za-z0-9_-]{35}`, 'g'), REDACTED],
  // JWT: header and payload are base64url JSON (`{"` encodes as `eyJ`); the signature may be empty.
  [new RegExp(`${START}eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*`, 'g'), REDACTED],
];

// An AWS secret access key on its own: exactly 40 characters of [A-Za-z0-9/+] standing alone. Bounded by
// `_`, `-` and `=` too, so segments of base64url values (the service's API keys) and padded base64 are
// left alone; the case and digit check in code keeps git shas (lowercase hex) out.
const AWS_SECRET_KEY = /(?<![A-Za-z0-9/+_-])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_-])/g;
const MIXED = [/[A-Z]/, /[a-z]/, /[0-9]/];
// Names and paths read as words (`github.com/google/uuid/TestVersion7Monotonicity`, 7; a Go or JUnit
// test name): 40 random characters split into some twenty runs of capitals, a capitalised word or
// digits (of 100,000 random keys, 5 split into 10 or fewer, none into fewer than 9).
const WORD = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;
const MAX_WORDS_OF_A_NAME = 10;
// A package path in front of a name (`go.dev/std/internal/cpu/TestX86ifAVX2hasAVX`): lowercase segments, a
// dozen characters or more, before the last `/`. A random key has that shape about once in 10,000
// (test/unit/sanitise.test.ts); then only the name after it is counted in words.
const PACKAGE_PATH = /^(?:[a-z0-9.]+\/)+/;
const MIN_PACKAGE_PATH = 12;

function looksRandom(token: string): boolean {
  if (!MIXED.every((p) => p.test(token))) return false;
  const path = PACKAGE_PATH.exec(token)?.[0] ?? '';
  const name = path.length >= MIN_PACKAGE_PATH ? token.slice(path.length) : token;
  return (name.match(WORD)?.length ?? 0) > MAX_WORDS_OF_A_NAME;
}

/** `text` with every credential-shaped token replaced by the mark. */
export function redactTokenShapes(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SHAPES) out = out.replace(pattern, replacement);
  return out.replace(AWS_SECRET_KEY, (token) => (looksRandom(token) ? REDACTED : token));
}
