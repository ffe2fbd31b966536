#!/usr/bin/env bash
# `npm test`: every check CI runs — set-up, typecheck, lint, build (end-to-end tests run the compiled
# worker as a separate process), then all jest suites (unit, integration, end to end).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
# The inbox page is tested in a real headless browser (Debian's chromium).
bash scripts/install-chromium.sh
# The API is fuzzed from its OpenAPI document by schemathesis (PyPI, pinned; a venv in .tools/).
bash scripts/install-schemathesis.sh
# Workflow tests run on Temporal's time-skipping test server (Maven Central, pinned; jars and a launcher in .tools/).
bash scripts/install-temporal-test-server.sh
echo "== typecheck" && npx --no-install tsc -p tsconfig.json --noEmit
echo "== lint" && npx --no-install eslint .
echo "== build" && npm run --silent build
echo "== jest" && npx --no-install jest "$@"
