#!/usr/bin/env bash
# Formats Odin's C++ sources with .clang-format (clang-format 14, Debian 12).
# With --check, changes nothing and exits 1 naming the files that differ
# (scripts/test.sh runs it so).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' | grep -v '^third_party/')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    printf '%s\n' "${bad[@]}"
    echo "format check: ${#bad[@]} file(s) differ from .clang-format; run scripts/format.sh" >&2
    exit 1
  fi
  echo "format check: ${#files[@]} files match .clang-format"
else
  clang-format -i "${files[@]}"
fi
