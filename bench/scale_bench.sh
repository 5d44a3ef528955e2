#!/usr/bin/env bash
# What a tool call costs as the repository grows, on the user's path:
# `odin -p` in edit mode against the test model server (which answers at
# once), in git repositories of SIZES files (250 to a directory, committed).
# Four kinds of call, one session of CALLS distinct calls each:
#   read-only   `true N`                 (judged to only read: the read-only view)
#   writes      `echo N > out/fN`        (over an overlay; its change set comes back)
#   no-change   `touch -c missing-N`     (not judged read-only; changes nothing)
#   edit        EditTool on edit.txt     (after one Read)
# Per call: the model server's answer to Odin's next request, the median of
# all the calls of SESSIONS sessions (each session's first call aside). Also `odin
# exec -- true` (median of ROUNDS runs, a new ledger each) and the peak RSS
# of odin (the coordinator; wait4's figure, which also covers the largest of
# its children). Sizes are interleaved; ratios are to the first (smallest)
# size, measured in the same run, beside `bash -c true` and a bare bwrap.
#
# Trees of 100,000 files or more are built once and kept in
# ${ODIN_BENCH_CACHE:-$XDG_CACHE_HOME/odin-bench} (a million files take about
# 2 minutes to build and 4 GB of disk); smaller ones in a temporary directory
# beside them.
# Never run in CI.
#
# ODIN_BENCH_WATCH_LIMIT=N runs odin in a user namespace whose inotify watch
# limit is N (a real kernel limit), so a larger tree is not watched and its
# looks are walks; ODIN_BENCH_THINK_MS=M has the model server take M ms
# before each answer (the time a real model thinks, when those walks run).
#
# ODIN_BENCH_REMOTE=1 runs the commands on a host agent (`odin host` on
# this machine, over TCP with CURVE on 127.0.0.1, workers.remote.kinds
# writable), for the kinds that write or may: the host lands each command's
# overlay and the coordinator looks at what it landed, never the whole
# shared tree.
#
#   bench/scale_bench.sh [BUILD_DIR] [SIZES] [CALLS] [ROUNDS] [SESSIONS]
#   e.g. bench/scale_bench.sh build "1000 100000 1000000" 20 9 3
set -euo pipefail

build=$(cd "${1:-$(dirname "$0")/../build}" && pwd)
sizes=${2:-1000 100000 1000000}
calls=${3:-20}
rounds=${4:-9}
sessions=${5:-3}
cache=${ODIN_BENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/odin-bench}
work=$(mktemp -d)
# Small trees beside the cached ones, on the same file system and under the
# same parent: a workspace under /tmp costs the sandbox more per command.
mkdir -p "$cache"
small=$(mktemp -d -p "$cache")
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work" "$small"' EXIT
export XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state"
source "$(dirname "$0")/bench_lib.sh"

# tree N DIR: a committed git repository of N small files in N/250
# directories, two levels deep, and edit.txt.
tree() {
  local n=$1 dir=$2
  [ -f "$dir/.complete" ] && return 0
  rm -rf "$dir" && mkdir -p "$dir"
  python3 - "$dir" "$n" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = i // 250
    path = f"{root}/src/d{d // 20}/e{d % 20}"
    if i % 250 == 0:
        os.makedirs(path, exist_ok=True)
    with open(f"{path}/f{i}.txt", "w") as f:
        f.write(f"file {i}\n")
PY
  printf 'v0\n' > "$dir/edit.txt"
  git -C "$dir" init -q
  git -C "$dir" add -A
  git -C "$dir" -c user.name=bench -c user.email=bench@localhost commit -qm tree
  : > "$dir/.complete"
  printf '.complete\n.odin/\nout/\n' > "$dir/.git/info/exclude"
}

# script KIND: the model's answers for a session of CALLS calls of KIND.
script() {
  python3 - "$1" "$calls" "${ODIN_BENCH_THINK_MS:-0}" <<'PY'
import json, sys
kind, n, think = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def command(c):
    return {"tool_calls": [{"name": "ExecuteCommand", "arguments": {"command": c}}]}
r = []
if kind == "read-only":
    r = [command(f"true {i}") for i in range(n)]
elif kind == "writes":
    r = [command("mkdir -p out && echo 0 > out/f0")] + [command(f"echo {i} > out/f{i}") for i in range(1, n)]
elif kind == "no-change":
    r = [command(f"touch -c missing-{i}") for i in range(n)]
elif kind == "edit":
    r = [{"tool_calls": [{"name": "Read", "arguments": {"file_path": "edit.txt"}}]}]
    r += [{"tool_calls": [{"name": "EditTool", "arguments": {
        "file_path": "edit.txt", "old_string": f"v{i}", "new_string": f"v{i + 1}"}}]} for i in range(n)]
r.append({"text": "Done."})
if think > 0:
    for answer in r:
        answer["delay_ms"] = think
print(json.dumps({"responses": r}))
PY
}

# per_call LOG SKIP: each call's time, in ms, from the model server's answer
# to the next request, leaving out the first SKIP calls (an edit's Read) and
# the first call (it waits for the tree's first look, once a session).
per_call() {
  python3 - "$1" "$2" <<'PY'
import json, sys
req, ans = {}, {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "t_ns" in e: req[e["n"]] = e["t_ns"]
    if "answered_ns" in e: ans[e["n"]] = e["answered_ns"]
skip = int(sys.argv[2])
gaps = [(req[n + 1] - ans[n]) / 1e6 for n in sorted(ans) if n + 1 in req and n >= skip + 1]
print(",".join(f"{g:.3f}" for g in gaps) if gaps else "-")
PY
}

# failed LOG: how many calls did not end "ok", as the model was told (a
# figure for calls that failed would measure nothing).
failed() {
  python3 - "$1" <<'PY'
import json, sys
bad = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    last = e.get("body", {}).get("messages", [{}])[-1]
    if last.get("role") == "tool":
        try:
            bad += json.loads(last["content"]).get("status") != "ok"
        except (ValueError, AttributeError):
            bad += 1
print(bad)
PY
}

# session KIND WS: runs one odin -p session; prints "per-call-ms,... peak-rss-kb
# failed-calls".
session() {
  local kind=$1 ws=$2 log="$work/llm-$1.log"
  # A new ledger each time (its anchor in the state directory goes too).
  rm -rf "$ws/.odin" "$ws/out" "$work/port" "$log" "$XDG_STATE_HOME"
  printf 'v0\n' > "$ws/edit.txt"
  script "$kind" > "$work/script.json"
  "$build/bin/fake_llm_server" --script "$work/script.json" --log "$log" > "$work/port" 2>&1 &
  server=$!
  for _ in $(seq 100); do grep -q PORT= "$work/port" 2>/dev/null && break; sleep 0.05; done
  local host=""
  if [ -n "${ODIN_BENCH_REMOTE:-}" ]; then
    (cd "$ws" && exec "$build/bin/odin" host --connect "tcp://127.0.0.1:$remote_port" --keys "$work/keys" \
      --name h1 --workers 2 >> "$work/host.log" 2>&1) &
    host=$!
  fi
  local rss
  rss=$(cd "$ws" && OPENAI_BASE_URL="http://127.0.0.1:$(sed -n 's/^PORT=//p' "$work/port")/v1" OPENAI_API_KEY=k \
    python3 -c '
import os, sys
pid = os.fork()
if pid == 0:
    fd = os.open(os.devnull, os.O_WRONLY); os.dup2(fd, 1); os.dup2(fd, 2)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss)' "${wrap[@]}" "$build/bin/odin" -p go --profile fast --max-turns 1000)
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=""
  if [ -n "$host" ]; then
    kill "$host" 2>/dev/null || true
    wait "$host" 2>/dev/null || true
  fi
  local skip=0
  [ "$kind" = edit ] && skip=1
  echo "$(per_call "$log" "$skip") $rss $(failed "$log")"
  rm -rf "$ws/.odin" "$ws/out"
  printf 'v0\n' > "$ws/edit.txt"
}

wrap=()
if [ -n "${ODIN_BENCH_WATCH_LIMIT:-}" ]; then
  wrap=(/usr/bin/unshare -Ur sh -c "echo $ODIN_BENCH_WATCH_LIMIT > /proc/sys/user/max_inotify_watches && exec \"\$0\" \"\$@\"")
fi
bash_floor=$(median bash -c true)
bwrap_floor=$(median bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all true)
echo "machine: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); build $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null || echo '?'); inotify watch limit ${ODIN_BENCH_WATCH_LIMIT:-as the system sets it}, model thinks ${ODIN_BENCH_THINK_MS:-0} ms${ODIN_BENCH_REMOTE:+, commands on a host agent}"
echo "floors: bash -c true $bash_floor ms, bwrap --unshare-all true $bwrap_floor ms"
# The trees first; then every measurement interleaved across the sizes
# (SESSIONS rounds of each kind at each size, odin exec ROUNDS times each),
# so that a slow minute of the machine falls on all of them alike.
declare -A ws per rss
for n in $sizes; do
  if [ "$n" -ge 100000 ]; then ws[$n]="$cache/tree-$n"; else ws[$n]="$small/tree-$n"; fi
  tree "$n" "${ws[$n]}"
  rss[$n]=0
done
# A new tree's dirty pages reach the disk now, not during the sessions (the
# ledger's fsyncs would wait for them).
sync
kinds="read-only writes no-change edit"
if [ -n "${ODIN_BENCH_REMOTE:-}" ]; then
  kinds="writes no-change"
  remote_port=$((20000 + RANDOM % 20000))
  "$build/bin/odin" keys generate --dir "$work/keys" --host h1 > /dev/null
  mkdir -p "$XDG_CONFIG_HOME/odin"
  printf '{"workers": {"remote": {"launcher": "static", "listen": "tcp://127.0.0.1:%s", "keys": "%s",
    "kinds": ["writable"], "wait_hosts": 1, "wait_seconds": 30}}}\n' "$remote_port" "$work/keys" \
    > "$XDG_CONFIG_HOME/odin/odinconfig.json"
fi
for _ in $(seq "$sessions"); do
  for kind in $kinds; do
    for n in $sizes; do
      read -r ms kb bad < <(session "$kind" "${ws[$n]}")
      per[$n,$kind]+="${ms//,/ } "
      [ "$bad" = 0 ] || echo "WARNING: $bad calls of $kind at $n files did not end ok: the figure is void" >&2
      [ "$kb" -gt "${rss[$n]}" ] && rss[$n]=$kb
    done
  done
done
declare -A exec_t
# (With a host agent, odin exec would wait for one: not measured.)
for _ in $(seq "$([ -n "${ODIN_BENCH_REMOTE:-}" ] && echo 0 || echo "$rounds")"); do
  for n in $sizes; do
    rm -rf "${ws[$n]}/.odin" "$XDG_STATE_HOME"
    s=$(date +%s%N)
    (cd "${ws[$n]}" && "$build/bin/odin" exec -- true > /dev/null 2>&1) || true
    e=$(date +%s%N)
    exec_t[$n]+="$(( (e - s) / 1000 )) "
  done
done
for n in $sizes; do rm -rf "${ws[$n]}/.odin"; done
mid() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}'; }
printf '%-10s' files; printf ' %10s' $kinds "exec true" "peak RSS"; echo
first=""
for n in $sizes; do
  row=() ratios=()
  for kind in $kinds; do
    row+=("$(mid "${per[$n,$kind]}")")
    [ -z "$first" ] || ratios+=("$(echo "scale=2; ${row[-1]} / $(mid "${per[$first,$kind]}")" | bc -l)x")
  done
  if [ -n "${ODIN_BENCH_REMOTE:-}" ]; then
    row+=("-")
  else
    ex=$(mid "$(for t in ${exec_t[$n]}; do echo "$t / 1000" | bc -l; done)")
    row+=("$ex")
    [ -z "$first" ] || ratios+=("$(echo "scale=2; $ex / $(mid "$(for t in ${exec_t[$first]}; do echo "$t / 1000" | bc -l; done)")" | bc -l)x")
  fi
  printf '%-10s' "$n"; printf ' %10s' "${row[@]}"; printf ' %9sM\n' "$((rss[$n] / 1024))"
  if [ -n "$first" ]; then printf '%-10s' "  ratio"; printf ' %10s' "${ratios[@]}"; echo; fi
  [ -z "$first" ] && first=$n
done
if [ -n "${ODIN_BENCH_REMOTE:-}" ]; then
  echo "the host agent joined $(grep -c 'joined tcp' "$work/host.log" || true) of $((sessions * $(echo $kinds | wc -w) * $(echo $sizes | wc -w))) sessions"
fi
