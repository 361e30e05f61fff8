#!/usr/bin/env bash
# Regenerates the dialect and pass reference from ODS into docs/generated/.
# scripts/test.sh runs it with --check and fails if the committed copy is stale.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BUILD_DIR=${BUILD_DIR:-build}
ninja -C "$BUILD_DIR" mlir-doc >/dev/null
mkdir -p docs/generated
for f in TPDialect TPPasses TPConversionPasses TPCudaPasses TPImportPasses \
  TMTensorDialect \
  TPCutRuleOpInterface; do
  if [[ ${1:-} == --check ]]; then
    diff -u "docs/generated/$f.md" "$BUILD_DIR/docs/TP/$f.md" ||
      { echo "docs/generated/$f.md is stale: run scripts/gen-docs.sh" >&2; exit 1; }
  else
    cp "$BUILD_DIR/docs/TP/$f.md" "docs/generated/$f.md"
  fi
done
