#!/usr/bin/env bash
# Regenerates test/fixtures/runner-output/*: the real output of every test runner whose counts
# activities/verification/test-reports understands, run on tiny fixture projects, so the parsers
# are tested against what the runners actually print. Each .txt file is the command's stdout and
# stderr interleaved as one stream, as a gate sees them (jest prints its summary on stderr); each
# .xml file is a JUnit report file a runner wrote. Timings and paths vary between runs; the counts
# and test names do not.
#
# Needs: node (jest comes from this repo's node_modules; vitest, mocha and tape are installed with
# `npm install --no-save` into a temp project, so the registry must be reachable), python3 with
# pytest (installed with pip if missing), go, and cargo (offline: the crates have no dependencies).
# Takes a few minutes, mostly npm install and cargo builds.
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

# node:test: every test passes, inside a describe block and as subtests of a test. node:test counts
# the tests, not the describe block: multiplies, parent, child; 3 passed.
mkdir -p "$WORK/node-test-nested-all-pass"
cat >"$WORK/node-test-nested-all-pass/nested.test.js" <<'EOF'
const { describe, it, test } = require('node:test');
const assert = require('node:assert');
describe('arithmetic', () => {
  it('multiplies', () => assert.strictEqual(2 * 3, 6));
});
test('parent', async (t) => {
  await t.test('child', () => assert.strictEqual(1 + 1, 2));
});
EOF

MIXED_FILES=(top-level.test.js nested.test.js)

capture jest-mixed "$WORK/jest-mixed" "$JEST" --rootDir .
capture jest-mixed-color "$WORK/jest-mixed" "$JEST" --rootDir . --colors
capture jest-all-pass "$WORK/jest-all-pass" "$JEST" --rootDir .
capture jest-suite-error "$WORK/jest-suite-error" "$JEST" --rootDir .
capture jest-no-tests "$WORK/jest-no-tests" "$JEST" --rootDir .
# --json (in gate plans from before the service asked jest for --outputFile, and in scripts that choose
# it): the results as one JSON line on stdout, the usual report on stderr; several files, every test named.
capture jest-json-mixed "$WORK/jest-mixed" "$JEST" --rootDir . --json
capture jest-json-all-pass "$WORK/jest-all-pass" "$JEST" --rootDir . --json

capture node-test-spec-mixed "$WORK/node-test-mixed" node --test --test-reporter=spec "${MIXED_FILES[@]}"
capture node-test-spec-mixed-color "$WORK/node-test-mixed" env FORCE_COLOR=1 node --test --test-reporter=spec "${MIXED_FILES[@]}"
capture node-test-tap-mixed "$WORK/node-test-mixed" node --test --test-reporter=tap "${MIXED_FILES[@]}"
# Without a TTY (as in a gate) node:test's default reporter; on Node 20 that is TAP.
capture node-test-default-mixed "$WORK/node-test-mixed" node --test "${MIXED_FILES[@]}"
capture node-test-spec-all-pass "$WORK/node-test-all-pass" node --test --test-reporter=spec pass.test.js
capture node-test-spec-nested-all-pass "$WORK/node-test-nested-all-pass" node --test --test-reporter=spec nested.test.js
capture node-test-tap-nested-all-pass "$WORK/node-test-nested-all-pass" node --test --test-reporter=tap nested.test.js
# node:test's JUnit reporter (testcases of top-level tests sit directly under <testsuites>).
capture node-test-junit-mixed-stdout "$WORK/node-test-mixed" node --test --test-reporter=junit \
  --test-reporter-destination=report.xml "${MIXED_FILES[@]}"
cp "$WORK/node-test-mixed/report.xml" "$OUT/node-test-junit-mixed.xml"
rm "$OUT/node-test-junit-mixed-stdout.txt"

# A program that crashes before any runner starts: no summary anywhere.
capture no-summary-crash "$WORK" node -e "throw new Error('crashed before any test ran')"

# ---------------------------------------------------------------------------------------------
# vitest, mocha and tape: installed (pinned) into a temp project; the fixture projects live below
# it so that `vitest`, `mocha` and `tape` resolve from its node_modules.
JS="$WORK/js-runners"
mkdir -p "$JS"
echo '{ "name": "js-runners", "private": true }' >"$JS/package.json"
(cd "$JS" && npm install --no-save --no-audit --no-fund --loglevel=error \
  vitest@4.1.12 mocha@12.0.3 tape@5.10.2 >/dev/null)
BIN="$JS/node_modules/.bin"

# vitest: two files, one with a describe block. Totals: 3 passed, 2 failed, 1 skipped, 1 todo.
mkdir -p "$JS/vitest-mixed"
echo '{ "name": "vitest-mixed", "private": true, "type": "module" }' >"$JS/vitest-mixed/package.json"
cat >"$JS/vitest-mixed/top-level.test.js" <<'EOF'
import { test, expect } from 'vitest';
test('adds', () => expect(1 + 1).toBe(2));
test('subtracts', () => expect(2 - 1).toBe(1));
test('fails on purpose', () => expect(1).toBe(2));
test.skip('skipped on purpose', () => {});
test.todo('todo on purpose');
EOF
cat >"$JS/vitest-mixed/nested.test.js" <<'EOF'
import { describe, it, expect } from 'vitest';
describe('arithmetic', () => {
  it('multiplies', () => expect(2 * 3).toBe(6));
  it('fails nested on purpose', () => expect(2 * 3).toBe(7));
});
EOF

# vitest: every test passes; 3 passed.
mkdir -p "$JS/vitest-all-pass"
echo '{ "name": "vitest-all-pass", "private": true, "type": "module" }' >"$JS/vitest-all-pass/package.json"
cat >"$JS/vitest-all-pass/pass.test.js" <<'EOF'
import { describe, test, expect } from 'vitest';
test('adds', () => expect(1 + 1).toBe(2));
test('subtracts', () => expect(2 - 1).toBe(1));
describe('strings', () => {
  test('concatenates', () => expect('a' + 'b').toBe('ab'));
});
EOF

# mocha (BDD interface): a describe block and top-level tests.
# Totals: 3 passed, 2 failed, 2 pending (one it.skip, one it() without a body, i.e. a todo).
mkdir -p "$JS/mocha-mixed/test"
cat >"$JS/mocha-mixed/test/mixed.spec.js" <<'EOF'
const assert = require('node:assert');
describe('arithmetic', () => {
  it('adds', () => assert.strictEqual(1 + 1, 2));
  it('subtracts', () => assert.strictEqual(2 - 1, 1));
  it('fails on purpose', () => assert.strictEqual(1, 2));
  it.skip('skipped on purpose', () => {});
  it('todo on purpose');
});
it('multiplies at top level', () => assert.strictEqual(2 * 3, 6));
it('fails at top level on purpose', () => assert.strictEqual(2 * 3, 7));
EOF

# mocha: every test passes; 2 passed.
mkdir -p "$JS/mocha-all-pass/test"
cat >"$JS/mocha-all-pass/test/pass.spec.js" <<'EOF'
const assert = require('node:assert');
describe('arithmetic', () => {
  it('adds', () => assert.strictEqual(1 + 1, 2));
  it('subtracts', () => assert.strictEqual(2 - 1, 1));
});
EOF

# tape: plain TAP. tape counts assertions, not test blocks: 4 test blocks holding 5 assertions,
# 1 of them failing, 1 skipped block, 1 todo assertion.
mkdir -p "$JS/tape-mixed"
cat >"$JS/tape-mixed/mixed.test.js" <<'EOF'
const test = require('tape');
test('arithmetic', (t) => {
  t.equal(1 + 1, 2, 'adds');
  t.equal(2 - 1, 1, 'subtracts');
  t.end();
});
test('fails on purpose', (t) => {
  t.equal(1, 2, 'one equals two');
  t.end();
});
test('skipped on purpose', { skip: true }, (t) => {
  t.pass('never runs');
  t.end();
});
test('todo on purpose', { todo: true }, (t) => {
  t.equal(1, 2, 'not done yet');
  t.end();
});
EOF

# tape: every assertion passes; 3 passed.
mkdir -p "$JS/tape-all-pass"
cat >"$JS/tape-all-pass/pass.test.js" <<'EOF'
const test = require('tape');
test('arithmetic', (t) => {
  t.equal(1 + 1, 2, 'adds');
  t.equal(2 - 1, 1, 'subtracts');
  t.end();
});
test('strings', (t) => {
  t.equal('a' + 'b', 'ab', 'concatenates');
  t.end();
});
EOF

# The verbose reporter lists every test; the default one, without a TTY, lists only files.
capture vitest-verbose-mixed "$JS/vitest-mixed" "$BIN/vitest" run --reporter=verbose
capture vitest-default-mixed "$JS/vitest-mixed" "$BIN/vitest" run
capture vitest-verbose-mixed-color "$JS/vitest-mixed" env FORCE_COLOR=1 "$BIN/vitest" run --reporter=verbose
capture vitest-default-all-pass "$JS/vitest-all-pass" "$BIN/vitest" run
capture vitest-verbose-all-pass "$JS/vitest-all-pass" "$BIN/vitest" run --reporter=verbose

capture mocha-spec-mixed "$JS/mocha-mixed" "$BIN/mocha"
capture mocha-spec-mixed-color "$JS/mocha-mixed" "$BIN/mocha" --color
capture mocha-spec-all-pass "$JS/mocha-all-pass" "$BIN/mocha"
# mocha's TAP reporter: generic TAP from a second producer.
capture mocha-tap-mixed "$JS/mocha-mixed" "$BIN/mocha" --reporter tap
# mocha's xunit reporter writes a JUnit-style XML file.
capture mocha-xunit-mixed-stdout "$JS/mocha-mixed" "$BIN/mocha" --reporter xunit --reporter-option output=report.xml
cp "$JS/mocha-mixed/report.xml" "$OUT/mocha-xunit-mixed.xml"
rm "$OUT/mocha-xunit-mixed-stdout.txt"

capture tape-mixed "$JS/tape-mixed" node mixed.test.js
capture tape-all-pass "$JS/tape-all-pass" node pass.test.js

# ---------------------------------------------------------------------------------------------
# pytest: python3 -m pytest, installed with pip when missing.
if ! python3 -m pytest --version >/dev/null 2>&1; then
  python3 -m pip install --quiet pytest
fi

# Totals: 3 passed, 1 failed, 1 error (a failing fixture), 2 skipped, 1 xfailed, 1 xpassed.
mkdir -p "$WORK/pytest-mixed"
cat >"$WORK/pytest-mixed/test_mixed.py" <<'EOF'
import pytest


@pytest.fixture
def broken():
    raise RuntimeError("fixture fails on purpose")


def test_adds():
    assert 1 + 1 == 2


def test_fails_on_purpose():
    assert 1 == 2


@pytest.mark.skip(reason="skipped on purpose")
def test_skipped_on_purpose():
    pass


def test_skips_itself():
    pytest.skip("skipped at run time")


@pytest.mark.xfail(reason="known bug")
def test_expected_to_fail():
    assert 1 == 2


@pytest.mark.xfail(reason="known bug, fixed meanwhile")
def test_unexpectedly_passes():
    assert 1 == 1


def test_errors_in_fixture(broken):
    pass


class TestArithmetic:
    def test_subtracts(self):
        assert 2 - 1 == 1

    @pytest.mark.parametrize("a,b", [(2, 3)])
    def test_multiplies(self, a, b):
        assert a * b == 6
EOF

# Every test passes; 3 passed.
mkdir -p "$WORK/pytest-all-pass"
cat >"$WORK/pytest-all-pass/test_pass.py" <<'EOF'
def test_adds():
    assert 1 + 1 == 2


def test_subtracts():
    assert 2 - 1 == 1


def test_concatenates():
    assert "a" + "b" == "ab"
EOF

# A test file with nothing to collect: "no tests ran".
mkdir -p "$WORK/pytest-no-tests"
echo 'VALUE = 1' >"$WORK/pytest-no-tests/test_empty.py"

PYTEST=(python3 -m pytest -p no:cacheprovider)
capture pytest-mixed "$WORK/pytest-mixed" "${PYTEST[@]}"
capture pytest-mixed-color "$WORK/pytest-mixed" "${PYTEST[@]}" --color=yes
capture pytest-verbose-mixed "$WORK/pytest-mixed" "${PYTEST[@]}" -v
capture pytest-quiet-mixed "$WORK/pytest-mixed" "${PYTEST[@]}" -q
capture pytest-verbose-all-pass "$WORK/pytest-all-pass" "${PYTEST[@]}" -v
capture pytest-no-tests "$WORK/pytest-no-tests" "${PYTEST[@]}"
# -rA (what the inferred pytest gate adds): a `PASSED <node id>` line per passed test in the short
# test summary, whatever verbosity the repository's addopts set.
capture pytest-ra-mixed "$WORK/pytest-mixed" "${PYTEST[@]}" -rA
capture pytest-ra-quiet-all-pass "$WORK/pytest-all-pass" "${PYTEST[@]}" -q -rA
# pytest's JUnit XML report of the mixed project.
capture pytest-junit-mixed-stdout "$WORK/pytest-mixed" "${PYTEST[@]}" --junitxml=report.xml
cp "$WORK/pytest-mixed/report.xml" "$OUT/pytest-junit-mixed.xml"
rm "$OUT/pytest-junit-mixed-stdout.txt"
capture pytest-junit-all-pass-stdout "$WORK/pytest-all-pass" "${PYTEST[@]}" --junitxml=report.xml
cp "$WORK/pytest-all-pass/report.xml" "$OUT/pytest-junit-all-pass.xml"
rm "$OUT/pytest-junit-all-pass-stdout.txt"

# ---------------------------------------------------------------------------------------------
# go test: a module with two packages and no external dependencies.
# Verbose totals (each `--- X:` line, subtests included): 5 passed, 3 failed, 1 skipped.
#   calc:    TestAdd pass; TestTable pass with subtests TestTable/small and TestTable/large pass;
#            TestSkipped skip; TestFails fail
#   strutil: TestConcat pass; TestNested fail, its subtest TestNested/inner fail
mkdir -p "$WORK/go-mixed/calc" "$WORK/go-mixed/strutil"
(cd "$WORK/go-mixed" && env -i PATH="$PATH" HOME="$HOME" go mod init example.com/mixed >/dev/null 2>&1)
cat >"$WORK/go-mixed/calc/calc.go" <<'EOF'
package calc

func Add(a, b int) int { return a + b }
EOF
cat >"$WORK/go-mixed/calc/calc_test.go" <<'EOF'
package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 1) != 2 {
		t.Fatal("1 + 1 != 2")
	}
}

func TestTable(t *testing.T) {
	for _, c := range []struct{ name string; a, b, want int }{{"small", 1, 2, 3}, {"large", 100, 200, 300}} {
		t.Run(c.name, func(t *testing.T) {
			if got := Add(c.a, c.b); got != c.want {
				t.Fatalf("got %d, want %d", got, c.want)
			}
		})
	}
}

func TestSkipped(t *testing.T) {
	t.Skip("skipped on purpose")
}

func TestFails(t *testing.T) {
	t.Log("about to fail on purpose")
	if Add(1, 1) != 3 {
		t.Error("fails on purpose: 1 + 1 != 3")
	}
}
EOF
cat >"$WORK/go-mixed/strutil/strutil_test.go" <<'EOF'
package strutil

import "testing"

func TestConcat(t *testing.T) {
	if "a"+"b" != "ab" {
		t.Fatal("concat")
	}
}

func TestNested(t *testing.T) {
	t.Run("inner", func(t *testing.T) {
		t.Error("inner fails on purpose")
	})
}
EOF

# Every test passes: TestAdd, TestTable and its two subtests; 4 passed. Plus a package without
# test files.
mkdir -p "$WORK/go-all-pass/calc" "$WORK/go-all-pass/notests"
(cd "$WORK/go-all-pass" && env -i PATH="$PATH" HOME="$HOME" go mod init example.com/allpass >/dev/null 2>&1)
cp "$WORK/go-mixed/calc/calc.go" "$WORK/go-all-pass/calc/calc.go"
sed -n '1,/^func TestSkipped/p' "$WORK/go-mixed/calc/calc_test.go" | sed '$d' >"$WORK/go-all-pass/calc/calc_test.go"
cat >"$WORK/go-all-pass/notests/notests.go" <<'EOF'
package notests

func Nothing() {}
EOF

# A package whose tests do not compile: FAIL with no `--- FAIL:` line.
mkdir -p "$WORK/go-build-failed/calc"
(cd "$WORK/go-build-failed" && env -i PATH="$PATH" HOME="$HOME" go mod init example.com/buildfailed >/dev/null 2>&1)
cp "$WORK/go-mixed/calc/calc.go" "$WORK/go-build-failed/calc/calc.go"
cat >"$WORK/go-build-failed/calc/calc_test.go" <<'EOF'
package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 1) != "2" {
		t.Fatal("type error on purpose")
	}
}
EOF

capture go-verbose-mixed "$WORK/go-mixed" go test -count=1 -v ./...
capture go-verbose-all-pass "$WORK/go-all-pass" go test -count=1 -v ./...
# Without -v go prints only failures and one line per package: passes cannot be counted.
capture go-plain-mixed "$WORK/go-mixed" go test -count=1 ./...
capture go-plain-all-pass "$WORK/go-all-pass" go test -count=1 ./...
capture go-verbose-build-failed "$WORK/go-build-failed" go test -count=1 -v ./...
# -json (what the inferred Go gate runs): one test2json event per line, subtests included.
capture go-json-mixed "$WORK/go-mixed" go test -count=1 -json ./...
capture go-json-all-pass "$WORK/go-all-pass" go test -count=1 -json ./...
capture go-json-build-failed "$WORK/go-build-failed" go test -count=1 -json ./...

# ---------------------------------------------------------------------------------------------
# cargo test: `cargo new --lib` crates with no dependencies, built offline.
# mixed (unit tests only; a failing unit-test binary stops cargo before doc-tests):
#   3 passed, 1 failed, 2 ignored.
(cd "$WORK" && env -i PATH="$PATH" HOME="$HOME" cargo new --quiet --lib --vcs none cargo-mixed)
cat >"$WORK/cargo-mixed/src/lib.rs" <<'EOF'
pub fn add(left: u64, right: u64) -> u64 {
    left + right
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 1), 2);
    }

    #[test]
    fn subtracts() {
        assert_eq!(2 - 1, 1);
    }

    #[test]
    fn fails_on_purpose() {
        assert_eq!(add(1, 1), 3);
    }

    #[test]
    #[ignore]
    fn ignored_on_purpose() {}

    #[test]
    #[ignore = "needs a database"]
    fn ignored_with_reason() {}

    mod nested {
        #[test]
        fn multiplies() {
            assert_eq!(2 * 3, 6);
        }
    }
}
EOF

# all-pass: a unit test, an integration test and a doc-test, i.e. three `test result:` lines
# (unit 1 passed; integration 1 passed; doc-tests 1 passed); 3 passed.
(cd "$WORK" && env -i PATH="$PATH" HOME="$HOME" cargo new --quiet --lib --vcs none cargo-all-pass)
cat >"$WORK/cargo-all-pass/src/lib.rs" <<'EOF'
/// Adds two numbers.
///
/// ```
/// assert_eq!(cargo_all_pass::add(1, 2), 3);
/// ```
pub fn add(left: u64, right: u64) -> u64 {
    left + right
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 1), 2);
    }
}
EOF
mkdir -p "$WORK/cargo-all-pass/tests"
cat >"$WORK/cargo-all-pass/tests/integration.rs" <<'EOF'
#[test]
fn adds_from_outside() {
    assert_eq!(cargo_all_pass::add(2, 2), 4);
}
EOF

capture cargo-mixed "$WORK/cargo-mixed" cargo test --offline
capture cargo-all-pass "$WORK/cargo-all-pass" cargo test --offline

echo "captured into $OUT:"
ls -1 "$OUT"
