#!/usr/bin/env bash
# Idempotent project set-up shared by `npm start` and `npm test`: dependencies, Temporal CLI,
# bubblewrap, generated Prisma client. Each step is skipped when its inputs have not changed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# 1. node_modules, reinstalled when package-lock.json changed since the last `npm ci`.
LOCK_HASH="$(sha256sum package-lock.json | cut -d' ' -f1)"
STAMP="node_modules/.setup-stamp"
if [ ! -d node_modules ] || [ "$(cat "$STAMP" 2>/dev/null || true)" != "$LOCK_HASH" ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund
  echo "$LOCK_HASH" > "$STAMP"
fi

# 2. Temporal CLI for the local dev server.
bash scripts/install-temporal.sh

# 3. bubblewrap, the sandbox for untrusted commands.
bash scripts/install-bubblewrap.sh

# 4. Prisma client, regenerated when the schema or the installed packages changed.
GEN_HASH="$(cat prisma/schema.prisma package-lock.json | sha256sum | cut -d' ' -f1)"
GEN_STAMP="prisma/generated/.setup-stamp"
if [ ! -f prisma/generated/client.ts ] || [ "$(cat "$GEN_STAMP" 2>/dev/null || true)" != "$GEN_HASH" ]; then
  echo "setup: prisma generate"
  # The CLI must be able to resolve env("DATABASE_URL") from the schema, or it falls back to
  # downloading a native query engine (impossible offline). generate never connects, so any URL will do.
  DATABASE_URL="${DATABASE_URL:-postgresql://placeholder@127.0.0.1:5432/placeholder}" \
    CHECKPOINT_DISABLE=1 PRISMA_HIDE_UPDATE_MESSAGE=1 npx --no-install prisma generate
  echo "$GEN_HASH" > "$GEN_STAMP"
fi
