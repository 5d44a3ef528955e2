#!/usr/bin/env bash
# Installs Odin's build and runtime dependencies from Debian 12 packages, then
# the language servers Debian does not package, from npm (into build/lsp), and
# the tree-sitter grammars and the OpenTelemetry protocol's .proto files (npm
# pack, into third_party/), a libzmq built from
# Debian's source without what Odin never uses (into third_party/zeromq), and
# static spdlog and fmt from Debian's source (into third_party/spdlog), which
# Odin's programs link with the other libraries' static archives.
# Works as root (no sudo on a fresh machine) or as a user with sudo.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libgrpc++-dev protobuf-compiler protobuf-compiler-grpc libprotobuf-dev
  libzmq3-dev cppzmq-dev dpkg-dev
  libsqlite3-dev sqlite3
  libspdlog-dev libfmt-dev nlohmann-json3-dev libcurl4-openssl-dev libcli11-dev
  libgtest-dev libgmock-dev
  libseccomp-dev libssl-dev libtree-sitter-dev libgit2-dev
  libdtl-dev libcpp-httplib-dev
  libedit-dev libcmark-gfm-dev libcmark-gfm-extensions-dev libgumbo-dev libidn2-dev
  # Static archives Odin's programs link (cmake/odin_programs.cmake).
  libncurses-dev libbsd-dev libmd-dev libsodium-dev libre2-dev
  # The official JSON Schema test suite (base/json_schema_test.cc).
  json-schema-test-suite
  bubblewrap ripgrep tmux
  iproute2 util-linux openssl
  clangd clang-format python3 python3-yaml
  # The toolchains of the corpus of real projects (bench/corpus.py).
  golang-go gopls python3-pytest cargo curl
)
# Node and npm from Debian only when npm is missing: they conflict with a
# NodeSource node that may be installed already.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps: need root or sudo to install packages" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

"$(dirname "$0")/install-language-servers.sh"
"$(dirname "$0")/fetch-tree-sitter-grammars.sh"
"$(dirname "$0")/fetch-otlp-protos.sh"
"$(dirname "$0")/build-zeromq.sh"
"$(dirname "$0")/build-spdlog.sh"
