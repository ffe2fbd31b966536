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
# The API is fuzzed from its OpenAPI document by schemathesis (PyPI, pinned; a venv in .tools/).
bash scripts/install-schemathesis.sh
echo "== build" && npm run --silent build
wait "$AGENTS_INSTALL" || { cat .tools/install-agents.log; exit 1; }
cat .tools/install-agents.log
if [ "$#" -gt 0 ]; then
  echo "== jest $*" && npx --no-install jest "$@"
  exit 0
fi
# Two runs, so each tier gets its own worker count (jest has one a run); the platform starts in each.
echo "== jest: integration" && npm run --silent test:integration
echo "== jest: e2e" && npm run --silent test:e2e
