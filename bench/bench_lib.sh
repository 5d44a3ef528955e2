# Shared by the shell benchmarks (source it).
#
# median CMD...: the median, in ms, of $rounds runs of the command, its
# output discarded.
median() {
  local t=()
  for _ in $(seq "$rounds"); do
    local s e
    s=$(date +%s%N)
    "$@" > /dev/null 2>&1 || true
    e=$(date +%s%N)
    t+=($(( (e - s) / 1000 )))
  done
  printf '%s\n' "${t[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}

# For benchmarks that interleave their rounds: time_cmd CMD... prints one
# run's milliseconds (a failure is said on stderr), and median_of prints
# the median of the numbers on its stdin, one a line.
now_ns() { date +%s%N; }
time_cmd() {
  local start; start=$(now_ns)
  "$@" > /dev/null 2>&1 < /dev/null || echo "failed: $*" >&2
  local end; end=$(now_ns)
  echo $(( (end - start) / 1000000 ))
}
median_of() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# For the benches of agent sessions: sets work (a temporary directory beside
# BIN_DIR, removed at exit with any server left running), the user's config
# and state inside it (no checks configured), and an empty git workspace,
# $work/ws. Needs bin.
session_workspace() {
  work=$(mktemp -d -p "$(dirname "$bin")")
  trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
  export XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state"
  mkdir -p "$work/ws" "$XDG_CONFIG_HOME/odin"
  echo '{"checks": {"build": "", "lint": "", "tests": ""}}' > "$XDG_CONFIG_HOME/odin/odinconfig.json"
  git -C "$work/ws" init -q
}

# serve_script SCRIPT: a fresh tests/fake_llm_server answering SCRIPT (its
# JSON text, written to $work/script.json); sets server (its pid) and url
# (its OpenAI base URL). Needs bin and work.
serve_script() {
  echo "$1" > "$work/script.json"
  rm -f "$work/port"
  "$bin/fake_llm_server" --script "$work/script.json" > "$work/port" 2>/dev/null &
  server=$!
  while ! grep -q PORT= "$work/port" 2>/dev/null; do sleep 0.01; done
  url="http://127.0.0.1:$(sed -n 's/PORT=//p' "$work/port")/v1"
}
