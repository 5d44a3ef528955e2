#!/usr/bin/env bash
# Fetches the tree-sitter-bash grammar Odin parses commands with, into
# third_party/tree-sitter-bash (not committed). Version 0.23.x is the line
# generated for ABI 14, which Debian 12's libtree-sitter (0.20.7) reads;
# `npm pack` only downloads the package (npm install would run node-gyp).
# Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

version=0.23.3
dest=third_party/tree-sitter-bash
if [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$version" ] && [ -f "$dest/src/parser.c" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "fetch-tree-sitter-bash: npm is missing (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack "tree-sitter-bash@$version" --silent >/dev/null)
tar -xzf "$tmp"/tree-sitter-bash-"$version".tgz -C "$tmp"
rm -rf "$dest"
mkdir -p "$dest"
cp -r "$tmp/package/src" "$tmp/package/LICENSE" "$dest/"
echo "$version" > "$dest/VERSION"
