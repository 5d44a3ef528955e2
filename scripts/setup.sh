#!/usr/bin/env bash
# Quick start, command 1: install what Odin needs (Debian 12 packages, and
# language servers from npm), build it, and run the demo: a command in the
# sandbox, the ledger that recorded it, an edit the validation gate catches,
# then a whole agent session (against your provider if OPENAI_BASE_URL or
# ANTHROPIC_BASE_URL is set, else against the scripted demo model). Safe to
# run again; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
# Configure once: the build re-runs CMake by itself when a CMakeLists.txt
# changes, and a second configure orders one -isystem path differently
# (mit-krb5, from the curl and gRPC packages), which would rebuild everything.
[ -f build/build.ninja ] || cmake -S . -B build -G Ninja
cmake --build build

echo
echo "== odin exec: a command in a sandboxed worker"
build/bin/odin exec -- sh -c 'echo "inside the sandbox: pid $$, network interfaces: $(tail -n +3 /proc/net/dev | wc -l) (loopback only), / writable: $(test -w / && echo yes || echo no)"'
echo
echo "== odin log: what the ledger recorded"
build/bin/odin log --limit 5
echo
build/bin/odin ledger verify

echo
echo "== the validation gate: an edit that breaks a C++ file, validated by clangd in the lsp host"
demo="$(mktemp -d)"
printf 'int twice(int x) {\n  return x * 2;\n}\n' > "$demo/twice.cc"
session="$(build/bin/odin -C "$demo" tool Read '{"file_path":"twice.cc"}' --json | sed -n 's/.*"session_id":"\([^"]*\)".*/\1/p')"
build/bin/odin -C "$demo" tool EditTool '{"file_path":"twice.cc","old_string":"x * 2","new_string":"y * 2"}' --session "$session"
build/bin/odin -C "$demo" tool memory_query '{"query":"last_validation"}' --session "$session"
rm -rf "$demo"

echo
prompt="Give a short tour of this repository: what it is, how it is laid out, what the TODOs are."
if [ -n "${OPENAI_BASE_URL:-}" ] || [ -n "${ANTHROPIC_BASE_URL:-}" ]; then
  echo "== odin -p: an agent session against your model provider"
  build/bin/odin -p "$prompt" --mode ask </dev/null
else
  echo "== odin -p: an agent session against the demo model (scripted answers, not an LLM;"
  echo "   set OPENAI_BASE_URL/OPENAI_API_KEY or ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY to use a real one)"
  build/bin/odin -p "$prompt" --mode ask --provider demo </dev/null
fi
