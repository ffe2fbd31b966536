#!/usr/bin/env bash
# `npm test`: every check CI runs — set-up, build (the integration and end-to-end tiers run the compiled
# service), then the integration and end-to-end tiers with typecheck, lint and the unit and workflow tiers
# beside them.
# Arguments go to one jest run instead, after the same checks (`npm test -- test/e2e/loop.e2e.test.ts`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
mkdir -p .tools
# Each jest run appends its counts here (test/support/totals-reporter.mjs); the last line sums them.
export JEST_TOTALS_FILE="$ROOT/.tools/jest-totals.jsonl"
: > "$JEST_TOTALS_FILE"
print_totals() {
  node -e 'const runs = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").filter(Boolean).map(JSON.parse);
    for (const r of runs) console.log(`jest ${r.projects.join(" + ")}: ${r.passed} passed, ${r.failed} failed`);
    const t = runs.reduce((a, r) => ({ passed: a.passed + r.passed, failed: a.failed + r.failed }), { passed: 0, failed: 0 });
    console.log(`tests: ${t.passed} passed, ${t.failed} failed`)' "$JEST_TOTALS_FILE"
}
# Each step's header carries the seconds since the start, so a slow CI run shows where its time went.
step() { echo "== $1 (at ${SECONDS} s)"; }
# Downloads run in the background from the start: the real coding-agent CLIs the presets run (npm
# registry, PyPI; pinned in config/agent-tools.json), driven through loops by the e2e tier, the slowest
# of them (about 80 s); and Temporal's time-skipping test server for the workflow tier (Maven Central,
# pinned; jars and a launcher in .tools/).
bash scripts/install-agents.sh > .tools/install-agents.log 2>&1 &
AGENTS_INSTALL=$!
bash scripts/install-temporal-test-server.sh > .tools/install-test-server.log 2>&1 &
TEST_SERVER_INSTALL=$!
bash scripts/setup.sh
# After set-up, whose bubblewrap install holds apt's lock: Debian's chromium (the inbox is tested in a real
# headless browser) and gradle 4.4.1 (a Gradle project goes through a loop; Gradle's own downloads are out
# of reach), one apt-get after the other; and schemathesis (PyPI, pinned; a venv in .tools/), which fuzzes
# the API from its OpenAPI document.
{ bash scripts/install-chromium.sh && bash scripts/install-gradle.sh && bash scripts/install-schemathesis.sh; } \
  > .tools/install-tools.log 2>&1 &
TOOLS_INSTALL=$!
# A background step's log is shown once it is waited for, and in full if it failed.
finish() { wait "$1" || { cat "$2"; exit 1; }; cat "$2"; }
step "build" && npm run --silent build
# tsc and ESLint are single-threaded: they run side by side.
typecheck_and_lint() {
  npx --no-install tsc -p tsconfig.json --noEmit &
  local typecheck=$!
  local status=0
  npx --no-install eslint . && npx --no-install prettier --check --log-level warn . || status=1
  wait "$typecheck" || status=1
  return "$status"
}
if [ "$#" -gt 0 ]; then
  step "typecheck and lint" && typecheck_and_lint
  finish "$TOOLS_INSTALL" .tools/install-tools.log
  finish "$AGENTS_INSTALL" .tools/install-agents.log
  finish "$TEST_SERVER_INSTALL" .tools/install-test-server.log
  step "jest $*" && npx --no-install jest "$@"
  print_totals
  exit 0
fi
finish "$TOOLS_INSTALL" .tools/install-tools.log
finish "$AGENTS_INSTALL" .tools/install-agents.log
# The integration and end-to-end tiers in one run, three files at a time: the platform (PostgreSQL, its
# migrated template, the Temporal dev server) starts once, and neither tier's slowest file leaves a worker
# idle at its end. They wait more than they compute (model timeouts, an outage, sleeping makers and
# gates; docs/performance.md, "The test suite"), so a third file fits on two cores, and typecheck, lint and
# the unit and workflow tiers, which need no database or dev server, run meanwhile; this run's output
# follows theirs. TEST_GO_SEED_PREBUILD=1: Go's standard library is compiled once, in the global set-up, for
# every file's Go loops (test/support/go-seed.ts).
step "jest: integration and e2e (in the background; output below)"
TEST_GO_SEED_PREBUILD=1 npx --no-install jest --selectProjects integration e2e --maxWorkers=3 > .tools/jest-e2e.log 2>&1 &
E2E=$!
failed=0
step "typecheck and lint" && { typecheck_and_lint || failed=1; }
step "jest: unit" && { npm run --silent test:unit || failed=1; }
finish "$TEST_SERVER_INSTALL" .tools/install-test-server.log
step "jest: workflow" && { npm run --silent test:workflow || failed=1; }
step "jest: integration and e2e (waiting for it)"
wait "$E2E" || failed=1
cat .tools/jest-e2e.log
step "done"
print_totals
exit "$failed"
