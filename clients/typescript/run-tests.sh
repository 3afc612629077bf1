#!/usr/bin/env bash
# Compiles the TypeScript client and its tests with the locked `tsc` into OUTDIR (default
# ./dist) and runs them with `node --test` against $BULWARK_BIN. CTest calls this with an OUTDIR
# in the build tree; nothing is downloaded (node_modules comes from `npm ci` in scripts/setup).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/dist}"
if [ ! -x "$here/node_modules/typescript/bin/tsc" ] || [ ! -d "$here/node_modules/@langchain/langgraph-checkpoint" ]; then
  echo "run-tests: $here/node_modules is missing or incomplete; run scripts/setup (npm ci)" >&2
  exit 1
fi
mkdir -p "$out"
node "$here/node_modules/typescript/bin/tsc" -p "$here" --outDir "$out"
# The compiled files are ES modules and import the dev dependencies from the source tree.
printf '{"type": "module"}\n' > "$out/package.json"
ln -sfn "$here/node_modules" "$out/node_modules"
exec node --test --test-concurrency=1 "$out"/test/*.test.js
