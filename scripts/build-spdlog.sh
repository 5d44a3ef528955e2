#!/usr/bin/env bash
# Builds static archives of spdlog and of the fmt it uses, into
# third_party/spdlog (not committed), from the very Debian source packages of
# the installed libspdlog-dev and libfmt-dev (same versions, Debian's patches
# applied, spdlog with fmt external as Debian builds it). Debian ships both as
# shared libraries only.
#
# Why: Odin's own programs (odin, odin-sandbox, the workers) link their
# libraries statically (cmake/odin_programs.cmake): every `odin exec`
# starts three of them, and each shared library costs a process its mapping,
# relocations and page faults at start. With spdlog and fmt shared,
# libstdc++.so would load anyway.
#
# The headers stay the system's: they must be the same bytes as the sources',
# which is checked. Safe to run again: a build whose VERSION matches is left
# alone.
set -euo pipefail
cd "$(dirname "$0")/.."

spdlog_version="$(dpkg-query -W -f='${source:Version}' libspdlog-dev)"
fmt_version="$(dpkg-query -W -f='${source:Version}' libfmt-dev)"
version="spdlog $spdlog_version fmt $fmt_version"
dest="third_party/spdlog"
if [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$version" ] && [ -f "$dest/lib/libspdlog.a" ] &&
  [ -f "$dest/lib/libfmt.a" ]; then
  exit 0
fi
. "$(dirname "$0")/lib/debian-source.sh"
require_build_tools
rm -rf "$dest.new"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fetch_debian_source fmtlib "$fmt_version" "$tmp/fmt"
fetch_debian_source spdlog "$spdlog_version" "$tmp/spdlog"
# Debian builds spdlog against the system's fmt, never its bundled copy.
rm -rf "$tmp/spdlog/include/spdlog/fmt/bundled"
if ! diff -rq "$tmp/fmt/include/fmt" /usr/include/fmt >/dev/null ||
  ! diff -rq "$tmp/spdlog/include/spdlog" /usr/include/spdlog >/dev/null; then
  echo "build-spdlog: the sources' headers differ from /usr/include/fmt or /usr/include/spdlog" >&2
  exit 1
fi

common=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_INSTALL_PREFIX="$PWD/$dest.new")
build() {  # NAME SOURCE_DIR CMAKE_ARGS...
  local name="$1" src="$2"
  shift 2
  cmake -S "$src" -B "$tmp/build-$name" "${common[@]}" "$@" >"$tmp/$name.log" 2>&1 &&
    cmake --build "$tmp/build-$name" --target install >>"$tmp/$name.log" 2>&1 ||
    { tail -20 "$tmp/$name.log" >&2; exit 1; }
}
build fmt "$tmp/fmt" -DBUILD_SHARED_LIBS=OFF -DFMT_TEST=OFF -DFMT_DOC=OFF
build spdlog "$tmp/spdlog" -DSPDLOG_BUILD_SHARED=OFF -DSPDLOG_FMT_EXTERNAL=ON -DSPDLOG_BUILD_EXAMPLE=OFF \
  -DCMAKE_PREFIX_PATH="$PWD/$dest.new"
echo "$version" >"$dest.new/VERSION"
rm -rf "$dest"
mv "$dest.new" "$dest"
echo "build-spdlog: built $version into $dest"
