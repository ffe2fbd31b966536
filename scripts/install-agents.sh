#!/usr/bin/env bash
# Installs the coding-agent CLIs the maker presets run, at the versions pinned in config/agent-tools.json,
# from the npm registry and PyPI into AGENT_TOOLS_DIR (default .tools/agents): npm packages under npm/,
# each PyPI package in its own venv, and one bin/ of links the service puts first on an agent's PATH.
# Every sandbox shows the directory read-only (config/service-config.ts). Skipped when the pins did not change.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PINS="$ROOT/config/agent-tools.json"
TOOLS="$(realpath -m "${AGENT_TOOLS_DIR:-$ROOT/.tools/agents}")"
STAMP="$TOOLS/.installed"
HASH="$(sha256sum "$PINS" | cut -d' ' -f1)"
if [ "$(cat "$STAMP" 2>/dev/null || true)" = "$HASH" ]; then exit 0; fi

pins() { node -e 'const p=require(process.argv[1]);for(const [n,t] of Object.entries(p))if(t.registry===process.argv[2])console.log(n,t.package,t.version,t.bin)' "$PINS" "$1"; }

rm -rf "$TOOLS" && mkdir -p "$TOOLS/bin" "$TOOLS/npm"
npm_specs=()
while read -r _ package version _; do npm_specs+=("$package@$version"); done < <(pins npm)
if [ "${#npm_specs[@]}" -gt 0 ]; then
  echo "install-agents: npm ${npm_specs[*]}"
  # Claude Code's postinstall puts its native binary in place of a stub.
  npm install --prefix "$TOOLS/npm" --no-audit --no-fund --no-package-lock --loglevel=error "${npm_specs[@]}"
  while read -r _ _ _ bin; do ln -s "../npm/node_modules/.bin/$bin" "$TOOLS/bin/$bin"; done < <(pins npm)
fi
while read -r name package version bin; do
  echo "install-agents: pip $package==$version"
  python3 -m venv "$TOOLS/$name"
  "$TOOLS/$name/bin/pip" install --quiet --disable-pip-version-check "$package==$version"
  ln -s "../$name/bin/$bin" "$TOOLS/bin/$bin"
done < <(pins pypi)
for bin in "$TOOLS"/bin/*; do echo "install-agents: $(basename "$bin") $("$bin" --version 2>&1 | head -1)"; done
echo "$HASH" > "$STAMP"
