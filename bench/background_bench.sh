#!/usr/bin/env bash
# Background commands and the network edit mode's commands share, on the
# user's path: `odin -p` against tests/fake_llm_server, interleaved in one
# run beside floors measured in the same rounds. Prints medians (ms) and:
#   session start, shared network / --network (no shared network): what
#     making the namespace (odin-sandbox --hold-net) adds to a session;
#   a session whose one call starts a background command (stopped at the
#     session's end) / one whose one call runs `true`: what the background
#     worker's start and the stop add;
#   odin-sandbox --hold-net alone / bash -c true (a supplement).
# Absolute times swing between days on shared machines: read the ratios.
# Never run in CI.
#
#   bench/background_bench.sh [BIN_DIR] [RUNS]
set -euo pipefail
source "$(dirname "$0")/bench_lib.sh"

bin=$(cd "${1:-$(dirname "$0")/../build/bin}" && pwd)
runs=${2:-20}
session_workspace

# Runs a fresh fake model server on a script, then times `odin -p` against
# it (the server's start is not timed). Prints milliseconds.
time_session() {
  serve_script "$1"; shift
  local start; start=$(now_ns)
  (cd "$work/ws" && OPENAI_BASE_URL="$url" OPENAI_API_KEY=k "$bin/odin" -p go --mode edit \
    --provider openai "$@" > /dev/null 2>&1) || echo "odin failed" >&2
  local end; end=$(now_ns)
  kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true
  echo $(( (end - start) / 1000000 ))
}

text='{"responses": [{"text": "ok"}]}'
fg='{"responses": [{"tool_calls": [{"name": "ExecuteCommand", "arguments": {"command": "true"}}]}, {"text": "ok"}]}'
bg='{"responses": [{"tool_calls": [{"name": "ExecuteCommand", "arguments": {"command": "exec sleep 60", "run_in_background": true}}]}, {"text": "ok"}]}'
: > "$work/shared"; : > "$work/network"; : > "$work/fg"; : > "$work/bg"; : > "$work/hold"; : > "$work/bash"
for i in $(seq "$runs"); do
  time_session "$text" >> "$work/shared"
  time_session "$text" --network >> "$work/network"
  time_session "$fg" >> "$work/fg"
  time_session "$bg" >> "$work/bg"
  time_cmd "$bin/odin-sandbox" --hold-net >> "$work/hold"
  time_cmd bash -c true >> "$work/bash"
done
m() { median_of < "$work/$1"; }
printf '%-60s %8s\n' "median of $runs runs, interleaved" "ms"
printf '%-60s %8s\n' "odin -p, one answer, shared network (default)" "$(m shared)"
printf '%-60s %8s\n' "odin -p, one answer, --network (no shared network)" "$(m network)"
printf '%-60s %8s\n' "odin -p, one call: true" "$(m fg)"
printf '%-60s %8s\n' "odin -p, one call: a background command, stopped at the end" "$(m bg)"
printf '%-60s %8s\n' "odin-sandbox --hold-net" "$(m hold)"
printf '%-60s %8s\n' "bash -c true" "$(m bash)"
awk -v a="$(m shared)" -v b="$(m network)" 'BEGIN {printf "ratio: shared network / --network            %.2fx\n", a / b}'
awk -v a="$(m bg)" -v b="$(m fg)" 'BEGIN {printf "ratio: background call / foreground true      %.2fx\n", a / b}'
awk -v a="$(m hold)" -v b="$(m bash)" 'BEGIN {printf "ratio: --hold-net / bash -c true             %.2fx\n", a / b}'
