#!/usr/bin/env bash
# Formats the C and C++ sources with clang-format-22 (.clang-format: LLVM).
#   scripts/format.sh           rewrite them in place
#   scripts/format.sh --check   list the files that are not formatted; exit 1
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v clang-format-22 >/dev/null ||
  { echo "format: clang-format-22 missing (scripts/setup.sh installs it)" >&2; exit 1; }
mapfile -t files < <(git ls-files -- '*.c' '*.cpp' '*.h')
if [[ ${1:-} == --check ]]; then
  bad=0
  for f in "${files[@]}"; do
    if ! clang-format-22 --dry-run --Werror "$f" >/dev/null 2>&1; then
      echo "format: $f is not formatted (scripts/format.sh)"
      bad=1
    fi
  done
  exit $bad
fi
clang-format-22 -i "${files[@]}"
