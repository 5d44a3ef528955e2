#!/usr/bin/env bash
# Formats Odin's C++ sources with .clang-format (clang-format 14, Debian 12).
# With --check, changes nothing and exits 1 naming the files that differ
# (scripts/test.sh runs it so).
set -euo pipefail
cd "$(dirname "$0")/.."
# Tracked files and new ones not yet added (a file about to be committed).
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cc' '*.h' | grep -v '^third_party/')
if [ "${1:-}" = "--check" ]; then
  # One clang-format for the whole tree; on a difference, the files it names.
  if out=$(clang-format --dry-run --Werror "${files[@]}" 2>&1); then
    echo "format check: ${#files[@]} files match .clang-format"
  else
    printf '%s\n' "$out" | grep -E '^[^ ]+:[0-9]+:[0-9]+: (error|warning):' | cut -d: -f1 | sort -u
    echo "format check: the files above differ from .clang-format; run scripts/format.sh" >&2
    exit 1
  fi
else
  clang-format -i "${files[@]}"
fi
