#!/usr/bin/env bash
# Installs the real coding agents the real-agent tests drive (Claude Code, Codex, Gemini CLI,
# opencode) at the versions pinned in test/agents/versions.json, into a cache outside the
# repository: $DROVER_AGENTS_DIR, else $XDG_CACHE_HOME/drover/agents, else ~/.cache/drover/agents.
# They are test tools, not dependencies of drover. Running it again with the same pins is a no-op.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${DROVER_AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/drover/agents}"
mkdir -p "$dir"
specs=$(node -e 'const v = require("./test/agents/versions.json"); console.log(Object.entries(v).map(([p, n]) => `${p}@${n}`).join(" "))')
stamp="$dir/.installed"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$specs" ]; then
  echo "agents already installed in $dir: $specs"
else
  [ -f "$dir/package.json" ] || echo '{"name":"drover-test-agents","private":true}' >"$dir/package.json"
  # shellcheck disable=SC2086
  npm install --prefix "$dir" --no-audit --no-fund --no-save $specs
  echo "$specs" >"$stamp"
fi
# Each agent must start: a package whose native binary did not land would fail every test later.
for bin in claude codex gemini opencode; do
  version=$(HOME="$dir" "$dir/node_modules/.bin/$bin" --version 2>/dev/null | tail -n 1) || {
    echo "install-agents: $bin does not start from $dir/node_modules/.bin" >&2
    rm -f "$stamp"
    exit 1
  }
  echo "$bin: $version"
done
