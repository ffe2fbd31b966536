#!/usr/bin/env bash
# `npm start`: set up on first run, build, then start the whole service with embedded defaults
# (Temporal dev server + embedded PostgreSQL under .data/ unless TEMPORAL_ADDRESS / DATABASE_URL are set).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
# Rebuild only when something the build reads is newer than the last build (dist/.built).
if [ ! -f dist/.built ] || [ -n "$(find domain config telemetry workflows activities api service cli prisma package.json package-lock.json tsconfig.json tsconfig.build.json \
    -newer dist/.built -type f -not -path 'prisma/migrations/*' -print -quit)" ]; then
  npm run --silent build
fi
exec node dist/service/main.js
