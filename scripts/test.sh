#!/usr/bin/env bash
# `npm test`: every check CI runs — set-up, typecheck, lint, the unit and workflow tiers, build (the
# integration and end-to-end tiers run the compiled service), then the integration and end-to-end tiers.
# Arguments go to one jest run instead, after the same checks (`npm test -- test/e2e/loop.e2e.test.ts`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
# The real coding-agent CLIs the presets run (npm registry, PyPI; pinned in config/agent-tools.json), installed
# meanwhile: the e2e tier drives each one through a loop.
mkdir -p .tools
# Each jest run appends its counts here (test/support/totals-reporter.mjs); the last line sums them.
export JEST_TOTALS_FILE="$ROOT/.tools/jest-totals.jsonl"
: > "$JEST_TOTALS_FILE"
print_totals() {
  node -e 'const t = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").filter(Boolean)
    .map(JSON.parse).reduce((a, r) => ({ passed: a.passed + r.passed, failed: a.failed + r.failed }), { passed: 0, failed: 0 });
    console.log(`tests: ${t.passed} passed, ${t.failed} failed`)' "$JEST_TOTALS_FILE"
}
bash scripts/install-agents.sh > .tools/install-agents.log 2>&1 &
AGENTS_INSTALL=$!
# Workflow tests run on Temporal's time-skipping test server (Maven Central, pinned; jars and a launcher in .tools/).
bash scripts/install-temporal-test-server.sh
echo "== typecheck" && npx --no-install tsc -p tsconfig.json --noEmit
echo "== lint" && npx --no-install eslint . && npx --no-install prettier --check --log-level warn .
# The fast tiers first: they need no build, database or Temporal server, so a failure shows in minutes.
if [ "$#" -eq 0 ]; then
  echo "== jest: unit" && npm run --silent test:unit
  echo "== jest: workflow" && npm run --silent test:workflow
fi
# The inbox page is tested in a real headless browser (Debian's chromium).
bash scripts/install-chromium.sh
# A Gradle project goes through a loop end to end (Debian's gradle 4.4.1; Gradle's own downloads are out of reach).
bash scripts/install-gradle.sh
# The API is fuzzed from its OpenAPI document by schemathesis (PyPI, pinned; a venv in .tools/).
bash scripts/install-schemathesis.sh
echo "== build" && npm run --silent build
wait "$AGENTS_INSTALL" || { cat .tools/install-agents.log; exit 1; }
cat .tools/install-agents.log
if [ "$#" -gt 0 ]; then
  echo "== jest $*" && npx --no-install jest "$@"
  print_totals
  exit 0
fi
# One run for both, two files at a time: the platform (PostgreSQL, its migrated template, the Temporal dev
# server) starts once, and neither tier's slowest file leaves a worker idle at its end.
echo "== jest: integration and e2e" && npx --no-install jest --selectProjects integration e2e --maxWorkers=2
print_totals
