#!/usr/bin/env bash
# Installs the measurement peer tobi/qmd (`@tobilu/qmd`) and the Node 22 it needs (the `node` npm package) into a
# bench-only folder outside the project: never a dependency of the product, its tests or CI. `npm run bench`
# reports qmd as absent when this folder holds no working install.
#
#   bash bench/peers/setup.sh            # installs into $MEMORY_BRIDGE_PEERS (default ~/.cache/memory-bridge/peers)
#
# Then, to call qmd by hand (its index and config stay under the folder, not in your home):
#   P=~/.cache/memory-bridge/peers
#   PATH=$P/node_modules/node/bin:$PATH XDG_CACHE_HOME=$P/state XDG_CONFIG_HOME=$P/state $P/node_modules/.bin/qmd --help
set -euo pipefail
QMD_VERSION=2.8.3
NODE_VERSION=22.23.3
DIR=${MEMORY_BRIDGE_PEERS:-$HOME/.cache/memory-bridge/peers}
mkdir -p "$DIR"
cd "$DIR"
cat > package.json <<JSON
{ "private": true, "description": "memory-bridge benchmark peers (not part of the product)",
  "dependencies": { "node": "$NODE_VERSION", "@tobilu/qmd": "$QMD_VERSION" } }
JSON
# No model downloads: the benchmark uses qmd's BM25 search only, which needs no model.
NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --no-audit --no-fund --loglevel=error
PATH="$DIR/node_modules/node/bin:$PATH"
echo "node $(node --version) in $DIR/node_modules/node/bin"
echo "qmd $(XDG_CACHE_HOME="$DIR/state" XDG_CONFIG_HOME="$DIR/state" node_modules/.bin/qmd --version 2>/dev/null || echo '(version unknown)') in $DIR/node_modules/.bin/qmd"
