#!/usr/bin/env bash
# A new user's first hour, for a person to read: every command a new user
# types and every line Odin prints back, in order. The demo model, then a
# new Python project with a failing test that a scripted model fixes (the
# repository's fake_llm_server stands in for a provider), /undo, -c,
# doctor. Needs a build (scripts/setup.sh); changes nothing outside a temp
# directory.
#
#   scripts/first-hour.sh [BIN_DIR]     (default build/bin)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(cd "${1:-build/bin}" && pwd)
[ -x "$bin/odin" ] && [ -x "$bin/fake_llm_server" ] || {
  echo "first-hour: no odin or fake_llm_server in $bin (run scripts/setup.sh first)" >&2
  exit 2
}
tmp=$(mktemp -d)
model_pid=
cleanup() {
  [ -n "$model_pid" ] && kill "$model_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
# A user of their own: config, state and history in the temp directory.
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_STATE_HOME="$tmp/home/.local/state"
mkdir -p "$HOME"
unset OPENAI_BASE_URL OPENAI_API_KEY ANTHROPIC_BASE_URL ANTHROPIC_API_KEY
export PATH="$bin:$PATH"

# Shows a command as typed, runs it, shows what it printed (stdout and
# stderr as the terminal would) and how it exited.
step() {
  echo
  echo "\$ $*"
  set +e
  "$@" 2>&1
  local rc=$?
  set -e
  echo "[exit $rc]"
}
# The same, for a command that reads what is piped in: shell text, shown whole.
step_sh() {
  echo
  echo "\$ $1"
  set +e
  bash -c "$1" 2>&1
  local rc=$?
  set -e
  echo "[exit $rc]"
}
section() {
  echo
  echo "=== $* ==="
}

section "1. First contact: the help, and the demo model"
mkdir -p "$tmp/demo"
cp README.md "$tmp/demo/"
git -C "$tmp/demo" init -q
cd "$tmp/demo"
step odin --version
step odin -p "what is in this repository?"
step odin --provider demo -p "Give a short tour of this repository."

section "2. A new project of your own: a Python module with a failing test"
proj="$tmp/calc"
mkdir -p "$proj/tests"
cat >"$proj/calc.py" <<'PY'
def add(a, b):
    return a - b
PY
cat >"$proj/tests/test_calc.py" <<'PY'
from calc import add


def test_add():
    assert add(2, 3) == 5
PY
printf '[project]\nname = "calc"\nversion = "0.1"\n' >"$proj/pyproject.toml"
git -C "$proj" init -q
git -C "$proj" -c user.name=you -c user.email=you@example.com add -A
git -C "$proj" -c user.name=you -c user.email=you@example.com commit -qm "calc with a bug"
cd "$proj"
step odin doctor

section "3. A fix, with the test as the judge (a scripted model stands in for your provider)"
cat >"$tmp/script.json" <<'JSON'
{"responses": [
  {"text": "Let me look at calc.py.", "tool_calls": [{"name": "Read", "arguments": {"file_path": "calc.py"}}]},
  {"tool_calls": [{"name": "EditTool", "arguments": {"file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}}]},
  {"text": "Fixed: add() subtracted instead of adding; tests/test_calc.py passes."},
  {"text": "I changed calc.py: add() now returns a + b."},
  {"text": "Nothing else to do."}
]}
JSON
"$bin/fake_llm_server" --script "$tmp/script.json" >"$tmp/port" &
model_pid=$!
for _ in $(seq 50); do grep -q PORT= "$tmp/port" 2>/dev/null && break; sleep 0.1; done
export OPENAI_BASE_URL="http://127.0.0.1:$(sed -n 's/PORT=//p' "$tmp/port")/v1" OPENAI_API_KEY=first-hour
step odin -p "tests/test_calc.py fails; fix it"
step git status --short
step odin log --limit 6

section "4. Take it back: /undo in the session, then ask what happened (-c)"
step_sh "printf '/undo\\n' | odin -c"
step git diff --stat
step odin -c -p "what did you change?"

section "5. The ledger and the machine"
step odin ledger verify
step odin doctor
