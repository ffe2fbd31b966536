#!/usr/bin/env bash
# `npm start`: set up on first run, build, then start the whole service with embedded defaults
# (Temporal dev server + embedded PostgreSQL under .data/ unless TEMPORAL_ADDRESS / DATABASE_URL are set).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
npm run --silent build
exec node dist/service/main.js
