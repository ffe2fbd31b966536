#!/usr/bin/env bash
# Installs the pinned schemathesis (the property-based API fuzzer test/e2e/api-fuzz.e2e.test.ts runs against
# the OpenAPI document) into its own venv, .tools/schemathesis-venv. Source: PyPI, schemathesis and every
# package it pulls in pinned in scripts/schemathesis-requirements.txt. Idempotent: skipped while the venv
# holds that version, installed from those pins; pip's own cache makes a reinstall cheap.
set -euo pipefail

SCHEMATHESIS_VERSION="4.32.5"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQUIREMENTS="$ROOT/scripts/schemathesis-requirements.txt"
VENV="$ROOT/.tools/schemathesis-venv"
CLI="$VENV/bin/schemathesis"
STAMP="$VENV/.setup-stamp"

installed_version() {
  # Prints e.g. "4.32.5" from "schemathesis, version 4.32.5".
  "$CLI" --version 2>/dev/null | awk '{print $3}'
}

REQ_HASH="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
if [ -x "$CLI" ] && [ "$(installed_version)" = "$SCHEMATHESIS_VERSION" ] && [ "$(cat "$STAMP" 2>/dev/null || true)" = "$REQ_HASH" ]; then
  echo "schemathesis $SCHEMATHESIS_VERSION already installed: $CLI"
  exit 0
fi
if ! grep -qx "schemathesis==$SCHEMATHESIS_VERSION" "$REQUIREMENTS"; then
  echo "install-schemathesis.sh: $REQUIREMENTS does not pin schemathesis==$SCHEMATHESIS_VERSION" >&2
  exit 1
fi

PYTHON="$(command -v python3 || command -v python || true)"
if [ -z "$PYTHON" ]; then
  echo "install-schemathesis.sh: python3 (with venv and pip) is required to install schemathesis from PyPI" >&2
  exit 1
fi

echo "setup: schemathesis $SCHEMATHESIS_VERSION into $VENV"
rm -rf "$VENV"
if ! "$PYTHON" -m venv "$VENV"; then
  rm -rf "$VENV"
  echo "install-schemathesis.sh: '$PYTHON -m venv' failed; on Debian/Ubuntu install python3-venv" >&2
  exit 1
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$REQUIREMENTS"

if [ "$(installed_version)" != "$SCHEMATHESIS_VERSION" ]; then
  echo "install-schemathesis.sh: $CLI missing or not version $SCHEMATHESIS_VERSION after install" >&2
  exit 1
fi
echo "$REQ_HASH" > "$STAMP"
echo "schemathesis $SCHEMATHESIS_VERSION installed: $CLI"
