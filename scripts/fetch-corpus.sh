#!/usr/bin/env bash
# Fetches the corpus of real projects (bench/corpus/projects.json) into a
# cache, pinned: each archive's sha256 is checked before it is unpacked, and
# a project already unpacked with the same sha256 is skipped. The
# toolchains it needs (Go with gopls, pytest, cargo) come from
# scripts/install-deps.sh.
#
#   scripts/fetch-corpus.sh [--small|--all] [DEST]
#
# DEST defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/odin/corpus. Layout:
# DEST/archives/FILE (as downloaded), DEST/src/NAME-VERSION/ (the project's
# tree, top directory stripped), DEST/node-tools/node_modules (the test
# runners of bench/corpus/node-tools/package-lock.json). Safe to run again.
# Sources: Debian 12's pool (orig tarballs by URL, binary packages by
# apt-get download), npm (npm pack).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

set_name=small
dest=""
for arg in "$@"; do
  case "$arg" in
    --small) set_name=small ;;
    --all) set_name=all ;;
    -h|--help) sed -n 2,15p "$0"; exit 0 ;;
    -*) echo "fetch-corpus: unknown option $arg" >&2; exit 2 ;;
    *) dest="$arg" ;;
  esac
done
dest="${dest:-${XDG_CACHE_HOME:-$HOME/.cache}/odin/corpus}"
manifest="$repo/bench/corpus/projects.json"

# Toolchains: install-deps.sh installs them (scripts/test.sh runs it first).
for tool in go gopls pytest cargo cmake curl npm; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "fetch-corpus: $tool is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
  }
done

mkdir -p "$dest/archives" "$dest/src"

# One line per project of the set: name version kind file sha256 strip subdir url-or-spec-or-package
projects=$(python3 - "$manifest" "$set_name" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for p in m["projects"]:
    if sys.argv[2] not in p["sets"]:
        continue
    s = p["source"]
    where = s.get("url") or s.get("spec") or "%s=%s" % (s.get("package", ""), s.get("deb_version", ""))
    print(p["name"], p["version"], s["kind"], s["file"], s["sha256"], s.get("strip", 0), s.get("subdir", "-"), where)
PY
)

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

while read -r name version kind file sha strip subdir where; do
  [ -n "$name" ] || continue
  tree="$dest/src/$name-$version"
  if [ -f "$tree/.odin-corpus-sha256" ] && [ "$(cat "$tree/.odin-corpus-sha256")" = "$sha" ]; then
    continue
  fi
  archive="$dest/archives/$file"
  if [ ! -f "$archive" ] || [ "$(sha_of "$archive")" != "$sha" ]; then
    rm -f "$archive"
    echo "fetch-corpus: fetching $name $version ($kind)"
    case "$kind" in
      url) curl -fsSL --retry 3 -o "$tmp/$file" "$where" ;;
      npm) (cd "$tmp" && npm pack --silent "$where" >/dev/null) ;;
      deb) (cd "$tmp" && apt-get download -q "$where" >/dev/null 2>&1) ;;
      *) echo "fetch-corpus: $name: unknown source kind $kind" >&2; exit 1 ;;
    esac
    if [ ! -f "$tmp/$file" ]; then
      echo "fetch-corpus: $name: $file was not fetched" >&2
      exit 1
    fi
    got=$(sha_of "$tmp/$file")
    if [ "$got" != "$sha" ]; then
      echo "fetch-corpus: $name: sha256 of $file is $got, expected $sha; refusing it" >&2
      exit 1
    fi
    mv "$tmp/$file" "$archive"
  fi
  rm -rf "$tree" "$tmp/unpack"
  mkdir -p "$tmp/unpack"
  case "$kind" in
    deb) dpkg-deb -x "$archive" "$tmp/unpack" ;;
    *) tar -xf "$archive" -C "$tmp/unpack" ;;
  esac
  from="$tmp/unpack"
  [ "$subdir" = "-" ] || from="$from/$subdir"
  if [ "$strip" = 1 ]; then
    from="$(find "$from" -mindepth 1 -maxdepth 1 -type d | head -1)"
  fi
  mv "$from" "$tree"
  echo "$sha" > "$tree/.odin-corpus-sha256"
  echo "fetch-corpus: $name $version -> $tree"
done <<< "$projects"

# Test runners the npm projects' test scripts name (pinned by the lockfile).
lock="$repo/bench/corpus/node-tools/package-lock.json"
tools="$dest/node-tools"
if [ ! -f "$tools/.odin-lock-sha256" ] || [ "$(cat "$tools/.odin-lock-sha256")" != "$(sha_of "$lock")" ] ||
   [ ! -d "$tools/node_modules" ]; then
  rm -rf "$tools"
  mkdir -p "$tools"
  cp "$repo/bench/corpus/node-tools/package.json" "$lock" "$tools/"
  (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error --ignore-scripts >/dev/null)
  sha_of "$lock" > "$tools/.odin-lock-sha256"
  echo "fetch-corpus: node test runners -> $tools/node_modules"
fi
echo "fetch-corpus: $set_name set ready in $dest"
