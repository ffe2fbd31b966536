#!/usr/bin/env bash
# Regenerates test/fixtures/runner-output/*.txt: the real output of jest and node:test on tiny
# fixture projects, so parseTestCounts is tested against what the runners actually print.
# Each file is the command's stdout followed by its stderr (jest prints its summary on stderr).
# Timings and paths in the captures vary between runs; the counts do not.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/test/fixtures/runner-output"
JEST="$ROOT/node_modules/.bin/jest"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"

# Runs a command in a fixture project with the minimal environment gates get (see
# childEnvironment), so the captures look like gate output. Failing runs are expected.
capture() {
  local name="$1" dir="$2"
  shift 2
  (cd "$dir" && env -i PATH="$PATH" HOME="$HOME" CI=true "$@" >"$OUT/$name.txt" 2>&1) || true
}

# jest needs a package.json (or a jest config) to find the project root; none has a "jest" key,
# so jest runs with its defaults.
jest_project() {
  mkdir -p "$WORK/$1"
  echo '{ "name": "'"$1"'", "private": true }' >"$WORK/$1/package.json"
}

# jest: one file passing, failing, skipping and leaving a todo; 1 failed, 1 skipped, 1 todo, 2 passed.
jest_project jest-mixed
cat >"$WORK/jest-mixed/mixed.test.js" <<'EOF'
test('adds', () => expect(1 + 1).toBe(2));
test('subtracts', () => expect(2 - 1).toBe(1));
test('fails on purpose', () => expect(1).toBe(2));
test.skip('skipped on purpose', () => {});
test.todo('todo on purpose');
EOF

# jest: two files, every test passes; 3 passed.
jest_project jest-all-pass
cat >"$WORK/jest-all-pass/first.test.js" <<'EOF'
test('adds', () => expect(1 + 1).toBe(2));
test('subtracts', () => expect(2 - 1).toBe(1));
EOF
cat >"$WORK/jest-all-pass/second.test.js" <<'EOF'
describe('strings', () => {
  test('concatenates', () => expect('a' + 'b').toBe('ab'));
});
EOF

# jest: a suite that cannot load; the summary reports 0 tests.
jest_project jest-suite-error
cat >"$WORK/jest-suite-error/broken.test.js" <<'EOF'
throw new Error('this suite cannot load');
EOF

# jest: no test files at all; jest prints no summary.
jest_project jest-no-tests

# node:test: top-level tests and a describe block with nested skip/todo/failure.
# Totals: 2 passed, 2 failed, 2 skipped, 2 todo.
mkdir -p "$WORK/node-test-mixed"
cat >"$WORK/node-test-mixed/top-level.test.js" <<'EOF'
const test = require('node:test');
const assert = require('node:assert');
test('adds', () => assert.strictEqual(1 + 1, 2));
test('fails on purpose', () => assert.strictEqual(1, 2));
test('skipped on purpose', { skip: true }, () => {});
test('todo on purpose', { todo: true }, () => {});
EOF
cat >"$WORK/node-test-mixed/nested.test.js" <<'EOF'
const { describe, it } = require('node:test');
const assert = require('node:assert');
describe('arithmetic', () => {
  it('multiplies', () => assert.strictEqual(2 * 3, 6));
  it('fails nested on purpose', () => assert.strictEqual(2 * 3, 7));
  it.skip('skipped nested on purpose', () => {});
  it.todo('todo nested on purpose');
});
EOF

# node:test: every test passes; 2 passed.
mkdir -p "$WORK/node-test-all-pass"
cat >"$WORK/node-test-all-pass/pass.test.js" <<'EOF'
const test = require('node:test');
const assert = require('node:assert');
test('adds', () => assert.strictEqual(1 + 1, 2));
test('subtracts', () => assert.strictEqual(2 - 1, 1));
EOF

MIXED_FILES=(top-level.test.js nested.test.js)

capture jest-mixed "$WORK/jest-mixed" "$JEST" --rootDir .
capture jest-mixed-color "$WORK/jest-mixed" "$JEST" --rootDir . --colors
capture jest-all-pass "$WORK/jest-all-pass" "$JEST" --rootDir .
capture jest-suite-error "$WORK/jest-suite-error" "$JEST" --rootDir .
capture jest-no-tests "$WORK/jest-no-tests" "$JEST" --rootDir .

capture node-test-spec-mixed "$WORK/node-test-mixed" node --test --test-reporter=spec "${MIXED_FILES[@]}"
capture node-test-spec-mixed-color "$WORK/node-test-mixed" env FORCE_COLOR=1 node --test --test-reporter=spec "${MIXED_FILES[@]}"
capture node-test-tap-mixed "$WORK/node-test-mixed" node --test --test-reporter=tap "${MIXED_FILES[@]}"
# Without a TTY (as in a gate) node:test's default reporter; on Node 20 that is TAP.
capture node-test-default-mixed "$WORK/node-test-mixed" node --test "${MIXED_FILES[@]}"
capture node-test-spec-all-pass "$WORK/node-test-all-pass" node --test --test-reporter=spec pass.test.js

# A program that crashes before any runner starts: no summary anywhere.
capture no-summary-crash "$WORK" node -e "throw new Error('crashed before any test ran')"

echo "captured into $OUT:"
ls -1 "$OUT"
