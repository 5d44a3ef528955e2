#!/usr/bin/env bash
# Quick start, command 1: install what Odin needs (Debian 12 packages), build
# it, and run the demo: a command in the sandbox, then the ledger that
# recorded it. Safe to run again; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cmake -S . -B build -G Ninja
cmake --build build

echo
echo "== odin exec: a command in a sandboxed worker"
build/bin/odin exec -- sh -c 'echo "inside the sandbox: pid $$, network interfaces: $(tail -n +3 /proc/net/dev | wc -l) (loopback only), / writable: $(test -w / && echo yes || echo no)"'
echo
echo "== odin log: what the ledger recorded"
build/bin/odin log --limit 5
echo
build/bin/odin ledger verify
