#!/usr/bin/env bash
# Isolated sessions and parallel attempts on the user's path: `odin -p`
# against tests/fake_llm_server, a 20-call scripted task (each call a
# command that writes a file, so each runs over an overlay of its own and
# its change is recorded), interleaved in one run beside the floors:
#   plain       odin -p, in the workspace itself;
#   isolated    odin -p --isolated: one attempt, in a view (a copy) of its own;
#   attempts 4  odin -p --attempts 4: four at once, each in its own view, on
#               this machine's cores (the task is the same for each; the
#               smallest change lands);
#   bash -c true, and cp -a of the workspace (what a view's copy costs by
#   itself).
# Each series runs twice: with the model answering at once (what odin
# itself costs: four attempts are four times the work, so on 2 cores the
# floor is 2x) and with the model taking LATENCY_MS (default 200) per
# answer, as a fast hosted model at least does, while which the attempts'
# commands overlap.
# Prints medians (ms), the ratios the issue asks for (4 attempts against
# one), odin's peak RSS (the coordinator, all attempts in one process) and
# the disk each view takes.
#
# With SLURM=1 (root, and the Slurm packages tests/slurm/slurm_fixture.sh
# installs), it then runs the four attempts once more with two attempts'
# share here (attempts.local) and hosts from the private single-node Slurm
# for the others, and prints where each attempt's commands ran (the
# ledger's worker ids). Absolute times swing between days on shared
# machines: read the ratios. Never run in CI.
#
#   [SLURM=1] [LATENCY_MS=200] bench/attempts_bench.sh [BIN_DIR] [RUNS] [FILES]
#
# FILES (default 2000): the workspace's size, in generated source-like
# files of ~1 KB in directories of 100, committed to git.
set -euo pipefail
source "$(dirname "$0")/bench_lib.sh"

bin=$(cd "${1:-$(dirname "$0")/../build/bin}" && pwd)
runs=${2:-5}
files=${3:-2000}
session_workspace
echo '{"checks": {"build": "", "lint": "", "tests": ""}, "stall": {"no_progress_turns": 1000}}' \
  > "$XDG_CONFIG_HOME/odin/odinconfig.json"

# The workspace: FILES files, committed.
for ((d = 0; d < (files + 99) / 100; d++)); do
  mkdir -p "$work/ws/src/d$d"
  for ((f = 0; f < 100 && d * 100 + f < files; f++)); do
    printf 'int f%d_%d(int x) {\n  return x * %d + %d;\n}\n%0900d\n' "$d" "$f" "$f" "$d" 0 \
      > "$work/ws/src/d$d/f$f.c"
  done
done
git -C "$work/ws" add -A > /dev/null
git -C "$work/ws" -c user.name=b -c user.email=b@b commit -qm start

# The 20 calls of one agent: each a command that writes; each answer
# after $1 ms.
calls() {
  local out="" i
  for i in $(seq 0 19); do
    out+="{\"delay_ms\": $1, \"tool_calls\": [{\"name\": \"ExecuteCommand\", \"arguments\": {\"command\": \"echo $i > out.txt\"}}]},"
  done
  echo "$out{\"delay_ms\": $1, \"text\": \"done\"}"
}
one_script() { echo "{\"responses\": [$(calls "$1")]}"; }
four_script() {
  local four="{\"responses\": [], \"agents\": {" k
  for k in 1 2 3 4; do four+="\"attempt $k of 4\": [$(calls "$1")]$([ "$k" -lt 4 ] && echo , || true)"; done
  echo "$four}}"
}

# Runs a fresh fake model server on a script, then times `odin -p` against
# it (the server's start is not timed) under /usr/bin/time for its peak RSS.
# Prints "ms rss_kb".
time_session() {
  serve_script "$1"; shift
  local start; start=$(now_ns)
  (cd "$work/ws" && OPENAI_BASE_URL="$url" OPENAI_API_KEY=k /usr/bin/time -f '%M' \
    -o "$work/rss" "$bin/odin" -p go --provider openai --output-format json "$@" > "$work/out" 2>&1) ||
    echo "odin failed: $(tail -3 "$work/out")" >&2
  # Each attempt made its 20 calls and passed (the JSON results say so).
  if [[ " $* " == *" --attempts "* ]]; then
    [ "$(grep -c '"passes": true' "$work/out")" = 4 ] || echo "not 4 passing attempts: $(tail -c 600 "$work/out")" >&2
  else
    grep -q '"tool_calls": *20' "$work/out" || echo "not 20 calls: $(head -c 300 "$work/out")" >&2
  fi
  local end; end=$(now_ns)
  kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true
  [ -z "${BENCH_VERBOSE:-}" ] || echo "$* $(( (end - start) / 1000000 )) ms" >&2
  echo "$(( (end - start) / 1000000 )) $(tail -1 "$work/rss")"
}

# What the views of the last run take on disk (then they go), in KB each.
views_kb() {
  local v sizes=""
  for v in "$work/ws/.odin/views"/*/; do
    [ -d "$v" ] && sizes+="$(du -sk "$v" | cut -f1) "
  done
  rm -rf "$work/ws/.odin/views"
  echo "${sizes:-none}"
}

# One series: every run of each, interleaved, then the table. $1: the
# model's latency (ms).
series() {
  local one four
  one=$(one_script "$1"); four=$(four_script "$1")
  : > "$work/plain"; : > "$work/isolated"; : > "$work/four"; : > "$work/bash"; : > "$work/cp"
  views=""
  for i in $(seq "$runs"); do
    time_session "$one" >> "$work/plain"
    git -C "$work/ws" checkout -q -- . && rm -f "$work/ws/out.txt"
    time_session "$one" --isolated >> "$work/isolated"
    views_kb > /dev/null
    time_session "$four" --attempts 4 >> "$work/four"
    views=$(views_kb)
    git -C "$work/ws" checkout -q -- . && rm -f "$work/ws/out.txt"
    time_cmd bash -c true >> "$work/bash"
    rm -rf "$work/copy"
    time_cmd cp -a --reflink=auto "$work/ws/src" "$work/copy" >> "$work/cp"
  done
  rm -rf "$work/copy"

  col() { cut -d' ' -f"$1" "$2" | median_of; }
  plain=$(col 1 "$work/plain"); isolated=$(col 1 "$work/isolated"); four=$(col 1 "$work/four")
  echo "attempts: a 20-call task (each call a command that writes), the model answering in $1 ms, workspace of $files files ($(du -sh --exclude=.odin "$work/ws" | cut -f1)), $runs runs each, interleaved, on $(nproc) cores"
  printf '  %-34s %8s ms   peak RSS %6s MB\n' "odin -p (in the workspace)" "$plain" "$(( $(col 2 "$work/plain") / 1024 ))"
  printf '  %-34s %8s ms   peak RSS %6s MB\n' "odin -p --isolated (one attempt)" "$isolated" "$(( $(col 2 "$work/isolated") / 1024 ))"
  printf '  %-34s %8s ms   peak RSS %6s MB\n' "odin -p --attempts 4" "$four" "$(( $(col 2 "$work/four") / 1024 ))"
  printf '  %-34s %8s ms\n' "bash -c true" "$(median_of < "$work/bash")"
  printf '  %-34s %8s ms\n' "cp -a of the workspace (a view)" "$(median_of < "$work/cp")"
  awk -v f="$four" -v i="$isolated" -v p="$plain" 'BEGIN {
    printf "  4 attempts / one attempt:   %.2fx (the issue asks at most 2.3x)\n", f / i
    printf "  4 attempts / odin -p:       %.2fx\n", f / p
    printf "  one attempt / odin -p:      %.2fx (the view: its copy and its own state)\n", i / p }'
  echo "  each losing attempt's view on disk (KB): $views"
}

latency=${LATENCY_MS:-200}
series 0
series "$latency"

# The same four attempts, two here and two on hosts Slurm starts.
[ "${SLURM:-}" = 1 ] || exit 0
fixture="$(cd "$(dirname "$0")/.." && pwd)/tests/slurm/slurm_fixture.sh"
bash "$fixture" install >&2 || { echo "slurm: the fixture cannot be installed (root?): skipped"; exit 0; }
cluster=$(mktemp -d)
trap 'bash "$fixture" stop "$cluster" >&2 || true; kill $(jobs -p) 2>/dev/null; rm -rf "$work" "$cluster"' EXIT
conf=$(bash "$fixture" start "$cluster" | sed -n 's/^SLURM_CONF=//p')
[ -n "$conf" ] || { echo "slurm: the fixture did not start: skipped"; exit 0; }
export SLURM_CONF="$conf"
(cd "$work/ws" && "$bin/odin" keys generate --dir "$work/keys" --host slurm > /dev/null)
cat > "$XDG_CONFIG_HOME/odin/odinconfig.json" << JSON
{"checks": {"build": "", "lint": "", "tests": ""}, "stall": {"no_progress_turns": 1000},
 "attempts": {"local": 2},
 "workers": {"idle_seconds": 30,
             "remote": {"launcher": "slurm", "listen": "tcp://127.0.0.1:0", "keys": "$work/keys",
                        "kinds": ["writable"], "wait_seconds": 120,
                        "slurm": {"cpus": 1, "memory_mb": 400, "time": "0:10:00", "max_hosts": 2,
                                  "connect": "tcp://127.0.0.1"}}}}
JSON
db="$work/ws/.odin/odin.db"
since=$(sqlite3 "$db" "SELECT coalesce(max(seq), 0) FROM execution_starts")
read -r ms rss < <(time_session "$(four_script "$latency")" --attempts 4)
echo "slurm: odin -p --attempts 4, two attempts here and two on Slurm's hosts (the model answering in $latency ms): $ms ms, peak RSS $((rss / 1024)) MB"
sqlite3 "$db" "SELECT '  ' || session_id || ': ' || count(*) || ' commands on ' || group_concat(DISTINCT worker_id)
               FROM execution_starts WHERE tool = 'ExecuteCommand' AND seq > $since GROUP BY session_id ORDER BY min(seq)"
