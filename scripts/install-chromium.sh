#!/usr/bin/env bash
# Headless Chromium for the browser end-to-end tests (test/e2e/inbox.e2e.test.ts drives /usr/bin/chromium
# through playwright-core). Idempotent: does nothing when chromium is already on PATH. Installing needs
# root (apt-get); without it this only explains what to run and leaves the decision to the caller.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
  echo "chromium: $(command -v chromium) ($(chromium --version 2>/dev/null || echo 'version unknown'))"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-chromium: chromium is not installed and this is not root; skipping." >&2
  echo "install-chromium: run 'sudo apt-get update && sudo apt-get install -y chromium' (browser e2e tests need /usr/bin/chromium)." >&2
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-chromium: no apt-get here; install Chromium so that /usr/bin/chromium exists, then re-run the tests." >&2
  exit 0
fi

echo "install-chromium: installing chromium with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y chromium
echo "chromium: $(command -v chromium) ($(chromium --version 2>/dev/null || echo 'version unknown'))"
