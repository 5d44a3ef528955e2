#!/usr/bin/env bash
# Builds the libzmq Odin links, into third_party/zeromq (not committed): a
# static archive from the very Debian source package of the installed
# libzmq3-dev (same version, Debian's patches applied), built without the
# transports and security mechanisms Odin never uses (PGM, NORM, GSSAPI) and
# without libbsd. CURVE stays, with the system's libsodium.
#
# Why: Debian's libzmq.so pulls in libgssapi_krb5, libkrb5, libpgm, libnorm
# and six more libraries; loading them costs every process that speaks
# ZeroMQ (odin, each worker) about 3.5 ms of CPU at start, which is a fifth of
# an `odin exec -- true` (docs/performance.md, "Start-up").
#
# The headers stay the system's (libzmq3-dev): they must be the same bytes as
# the source's, which is checked. Safe to run again: a build whose VERSION
# matches is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

version="$(dpkg-query -W -f='${source:Version}' libzmq3-dev)"
dest="third_party/zeromq"
if [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$version" ] && [ -f "$dest/lib/libzmq.a" ]; then
  exit 0
fi
. "$(dirname "$0")/lib/debian-source.sh"
require_build_tools
rm -rf "$dest.new"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fetch_debian_source zeromq3 "$version" "$tmp/src"
if ! cmp -s "$tmp/src/include/zmq.h" /usr/include/zmq.h; then
  echo "build-zeromq: the source's zmq.h differs from /usr/include/zmq.h" >&2
  exit 1
fi

cmake -S "$tmp/src" -B "$tmp/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PWD/$dest.new" \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED=OFF -DBUILD_STATIC=ON -DBUILD_TESTS=OFF -DWITH_DOCS=OFF \
  -DWITH_PERF_TOOL=OFF -DENABLE_DRAFTS=OFF -DENABLE_WS=OFF -DWITH_OPENPGM=OFF -DWITH_NORM=OFF -DWITH_VMCI=OFF \
  -DWITH_LIBBSD=OFF -DWITH_LIBSODIUM=ON -DENABLE_CURVE=ON >"$tmp/configure.log" 2>&1 ||
  { tail -20 "$tmp/configure.log" >&2; exit 1; }
if ! grep -q 'Using libsodium for CURVE security' "$tmp/configure.log"; then
  echo "build-zeromq: libsodium was not found, and CURVE needs it" >&2
  exit 1
fi
cmake --build "$tmp/build" --target install >"$tmp/build.log" 2>&1 || { tail -20 "$tmp/build.log" >&2; exit 1; }
echo "$version" >"$dest.new/VERSION"
rm -rf "$dest"
mv "$dest.new" "$dest"
echo "build-zeromq: built libzmq $version into $dest"
