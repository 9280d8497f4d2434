#!/usr/bin/env bash
# Installs the newest Node.js of a major line from the npm registry, where the node-<os>-<cpu>
# packages carry Node's own release binaries and headers, into a cache outside the repository:
# $DROVER_NODE_DIR, else $XDG_CACHE_HOME/drover, else ~/.cache/drover, as node<MAJOR>/.
# Prints the installed Node's directory (bin/node, include/ for building native addons).
# Usage: scripts/install-node.sh MAJOR
set -euo pipefail

major="${1:?usage: scripts/install-node.sh MAJOR}"
package=$(node -p '`node-${process.platform}-${process.arch}`')
dir="${DROVER_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/drover}/node$major"
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"private":true}' >"$dir/package.json"
# npm's own report goes to stderr: stdout carries only the directory.
npm install --prefix "$dir" --no-audit --no-fund --no-save "$package@$major" >&2
home="$dir/node_modules/$package"
version=$("$home/bin/node" --version) || {
  echo "install-node: $home/bin/node does not start" >&2
  exit 1
}
echo "install-node: Node $version in $home" >&2
echo "$home"
