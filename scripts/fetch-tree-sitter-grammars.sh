#!/usr/bin/env bash
# Fetches the tree-sitter grammars Odin parses with, into
# third_party/tree-sitter-<name> (not committed): bash for the command rules,
# and C, C++, Python, JavaScript, TypeScript (with TSX), Go and Rust for the
# symbol index. Each version is pinned to a release generated for ABI 14,
# which Debian 12's libtree-sitter (0.20.7) reads; `npm pack` only downloads
# the package (npm install would run node-gyp). Safe to run again: a grammar
# whose VERSION matches is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

# name@version, and the folders of the package to keep (the generated
# parser, its scanner, and what the scanner includes).
grammars=(
  "bash@0.23.3 src"
  "c@0.23.6 src"
  "cpp@0.23.4 src"
  "python@0.23.6 src"
  "javascript@0.23.1 src"
  "typescript@0.23.2 typescript/src tsx/src common"
  "go@0.23.4 src"
  "rust@0.23.3 src"
)

tmp=""
trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT
for entry in "${grammars[@]}"; do
  read -r spec dirs <<<"$entry"
  name="${spec%@*}"
  version="${spec#*@}"
  dest="third_party/tree-sitter-$name"
  if [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$version" ]; then
    continue
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "fetch-tree-sitter-grammars: npm is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
  fi
  [ -n "$tmp" ] || tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack "tree-sitter-$name@$version" --silent >/dev/null)
  rm -rf "$tmp/package"
  tar -xzf "$tmp/tree-sitter-$name-$version.tgz" -C "$tmp"
  if ! grep -q '#define LANGUAGE_VERSION 14' "$tmp/package/${dirs%% *}/parser.c"; then
    echo "fetch-tree-sitter-grammars: tree-sitter-$name@$version is not ABI 14" >&2
    exit 1
  fi
  rm -rf "$dest"
  mkdir -p "$dest"
  for d in $dirs; do
    mkdir -p "$dest/$(dirname "$d")"
    cp -r "$tmp/package/$d" "$dest/$d"
  done
  cp "$tmp/package/LICENSE" "$dest/"
  echo "$version" > "$dest/VERSION"
done
