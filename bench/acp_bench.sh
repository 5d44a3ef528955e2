#!/usr/bin/env bash
# odin acp on an editor's path: a session of PROMPTS messages, each a
# command then an answer from the scripted model, driven as an editor does
# (one JSON-RPC line a message on the agent's stdin, every update read),
# against the same messages through `odin -p` one at a time, and floors
# measured in the same rounds. Prints medians (ms) and:
#   odin acp, the session (start, PROMPTS prompts, end) / odin -p, PROMPTS
#     runs of one message: what serving messages in one process saves;
#   odin acp per prompt (the session minus its start) / odin exec -- true:
#     what a prompt costs beyond one sandboxed command;
#   bash -c true: the floor.
# Absolute times swing between days on shared machines: read the ratios.
# Never run in CI.
#
#   bench/acp_bench.sh [BIN_DIR] [RUNS] [PROMPTS]
set -euo pipefail
source "$(dirname "$0")/bench_lib.sh"

bin=$(cd "${1:-$(dirname "$0")/../build/bin}" && pwd)
runs=${2:-7}
prompts=${3:-10}
session_workspace

# The model answers every message with a command, then words: once for the
# acp session, once for the odin -p runs, from one server a round.
turns=""
for i in $(seq "$prompts"); do
  turns+='{"tool_calls": [{"name": "ExecuteCommand", "arguments": {"command": "echo run '"$i"'"}}]}, {"text": "done '"$i"'"},'
done
echo "{\"responses\": [${turns}${turns%,}]}" > "$work/script.json"

# Starts a fake model server on the script; sets url and server.
serve() {
  rm -f "$work/port"
  "$bin/fake_llm_server" --script "$work/script.json" > "$work/port" 2>/dev/null &
  server=$!
  while ! grep -q PORT= "$work/port" 2>/dev/null; do sleep 0.01; done
  url="http://127.0.0.1:$(sed -n 's/PORT=//p' "$work/port")/v1"
}

# An editor's session over odin acp: prints the whole session's ms and the
# ms from session/new's answer to the last prompt's.
acp_session() {
  (cd "$work/ws" && OPENAI_BASE_URL="$url" OPENAI_API_KEY=k python3 - "$bin/odin" "$work/ws" "$prompts" <<'PY'
import json, subprocess, sys, time
odin, ws, prompts = sys.argv[1], sys.argv[2], int(sys.argv[3])
start = time.monotonic()
p = subprocess.Popen([odin, "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                     text=True, bufsize=1)
def ask(n, method, params):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}) + "\n")
    p.stdin.flush()
    for line in p.stdout:
        m = json.loads(line)
        if m.get("id") == n and "method" not in m:
            if "error" in m: sys.exit("odin acp: " + m["error"]["message"])
            return m["result"]
ask(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
sid = ask(2, "session/new", {"cwd": ws, "mcpServers": []})["sessionId"]
ready = time.monotonic()
for i in range(prompts):
    ask(3 + i, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "go %d" % i}]})
done = time.monotonic()
p.stdin.close()
p.wait()
print(int((time.monotonic() - start) * 1000), int((done - ready) * 1000))
PY
  )
}

# The same messages through odin -p, one process each: prints ms.
prompt_runs() {
  local t0; t0=$(now_ns)
  for i in $(seq "$prompts"); do
    (cd "$work/ws" && OPENAI_BASE_URL="$url" OPENAI_API_KEY=k "$bin/odin" -p "go $i" --provider openai \
      > /dev/null 2>&1 < /dev/null) || echo "odin -p failed" >&2
  done
  echo $(( ($(now_ns) - t0) / 1000000 ))
}

: > "$work/acp"; : > "$work/acp_prompts"; : > "$work/p"; : > "$work/exec"; : > "$work/bash"
for _ in $(seq "$runs"); do
  serve
  read -r whole part < <(acp_session)
  echo "$whole" >> "$work/acp"
  echo $(( part / prompts )) >> "$work/acp_prompts"
  prompt_runs >> "$work/p"
  kill "$server"; wait "$server" 2>/dev/null || true
  (cd "$work/ws" && time_cmd "$bin/odin" exec -- true) >> "$work/exec"
  time_cmd bash -c true >> "$work/bash"
done
m() { median_of < "$work/$1"; }
printf '%-64s %8s\n' "median of $runs runs, interleaved ($prompts prompts a session)" "ms"
printf '%-64s %8s\n' "odin acp: start, $prompts prompts, end" "$(m acp)"
printf '%-64s %8s\n' "odin -p: $prompts runs of one message" "$(m p)"
printf '%-64s %8s\n' "odin acp: one prompt (a command, then the answer)" "$(m acp_prompts)"
printf '%-64s %8s\n' "odin exec -- true" "$(m exec)"
printf '%-64s %8s\n' "bash -c true" "$(m bash)"
awk -v a="$(m acp)" -v p="$(m p)" -v q="$(m acp_prompts)" -v e="$(m exec)" 'BEGIN {
  printf "odin acp session / odin -p runs: %.2fx\n", a / p
  printf "odin acp prompt / odin exec -- true: %.2fx\n", q / e }'
