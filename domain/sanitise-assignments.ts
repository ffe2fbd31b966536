import { REDACTED } from './redacted';

// `name=value` / `name: value` / `"name": "value"` where the name says secret (DB_PASSWORD=…,
// "api_key": "…"), but not code such as `token = nextToken()`. The name and the value are each taken
// whole through a lookahead (atomic in JavaScript), so no run is rescanned from each of its positions.

const NAME_AND_OPERATOR = /(?<![A-Za-z0-9_.-])(?=([A-Za-z0-9_.-]{1,128}))\1["']?[ \t]{0,8}[:=][ \t]{0,8}["']?/g;
/** At least 4 characters, and not a call. */
const VALUE = /(?=([^\s"',;()]{4,}))\1(?!\()/y;
/** Code, not a credential: `token = await next()`, `password = process.env.DB_PASSWORD`. */
const CODE_VALUE =
  /^(?:await|async|new|null|undefined|true|false|none|nil|typeof|function|require)$|^(?:process\.env|os\.environ|this|self)[.[]/i;
/** `tokens` (max_tokens, input_tokens) are counts, not credentials. */
const SECRET_NAME = /password|passwd|passphrase|pwd|secret|token(?!s)|api[_-]?key|access[_-]?key|private[_-]?key/i;

/** `text` with the value of every secret-named assignment replaced by the mark. */
export function redactSecretAssignments(text: string): string {
  let out = '';
  let copied = 0;
  const names = new RegExp(NAME_AND_OPERATOR);
  for (let m = names.exec(text); m; m = names.exec(text)) {
    // A value already redacted (a URL's password, a known secret) stays as it is, and so does the rest.
    if (!SECRET_NAME.test(m[1]!) || text.startsWith(REDACTED, names.lastIndex)) continue;
    // `::` separates scopes, not a name from its value: pytest's `test_secrets.py::test_randbits`, Rust, C++.
    if (text[names.lastIndex] === ':') continue;
    VALUE.lastIndex = names.lastIndex;
    const value = VALUE.exec(text);
    if (!value || CODE_VALUE.test(value[1]!)) continue;
    out += text.slice(copied, names.lastIndex) + REDACTED;
    copied = names.lastIndex = VALUE.lastIndex;
  }
  return out + text.slice(copied);
}
