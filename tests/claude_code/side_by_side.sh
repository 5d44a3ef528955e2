#!/usr/bin/env bash
# Runs the same hooks and the same scripted model against Claude Code and
# Odin, and prints the payloads their hooks read, field by field.
#
#   tests/claude_code/side_by_side.sh [BUILD_DIR]
#
# Not part of CI: it installs Claude Code from npm (pinned below) into a
# temporary directory. Both run against tests' fake model server (Anthropic's
# wire), in two copies of one small workspace whose .claude/settings.json
# configures a hook that logs its stdin on every event. Claude Code's hook
# writes its log; Odin's hooks run sandboxed, so their payloads are read from
# the ledger, where every hook run's input is recorded.
set -euo pipefail

CLAUDE_CODE_VERSION=2.1.197
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
build=$(cd "$build" && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

echo "installing @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION into $work/npm" >&2
mkdir -p "$work/npm"
(cd "$work/npm" && npm install --silent --no-audit --no-fund "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >&2)
claude=$(ls "$work"/npm/node_modules/@anthropic-ai/claude-code-linux-*/claude | head -1)
"$claude" --version >&2

# One workspace, copied for each: a git repository, a file to edit, a
# build directory, and the logging hook on every event Odin has.
make_workspace() {
  local ws=$1
  mkdir -p "$ws/.claude/hooks" "$ws/build" "$ws/sub"
  git -C "$ws" init -q
  printf 'one\n' > "$ws/notes.txt"
  printf 'object\n' > "$ws/build/out.o"
  cp "$here/log_hook.py" "$ws/.claude/hooks/log.py"
  python3 - "$ws/.claude/settings.json" <<'PY'
import json, sys
hook = [{"matcher": "", "hooks": [{"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR/.claude/hooks/log.py\""}]}]
events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]
json.dump({"hooks": {e: hook for e in events}}, open(sys.argv[1], "w"), indent=2)
PY
}

# The model's script, in each one's tool names: the same calls.
write_script() {
  local ws=$1 flavour=$2
  python3 "$here/compare_payloads.py" script "$ws" "$flavour" > "$work/$flavour.script.json"
}

# Starts the model server for one side (in this shell, so that the exit
# trap stops it) and sets $port.
start_server() {
  local name=$1
  "$build/bin/fake_llm_server" --script "$work/$name.script.json" --log "$work/$name.llm.log" \
    > "$work/$name.port" 2>&1 &
  for _ in $(seq 50); do grep -q PORT= "$work/$name.port" 2>/dev/null && break; sleep 0.1; done
  port=$(sed -n 's/^PORT=//p' "$work/$name.port")
}

# Claude Code.
make_workspace "$work/cc"
write_script "$work/cc" claude
start_server claude
mkdir -p "$work/cc-home" "$work/cc-config"
(cd "$work/cc" && HOOK_LOG="$work/claude.hooks.jsonl" HOME="$work/cc-home" CLAUDE_CONFIG_DIR="$work/cc-config" \
  ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=sk-test IS_SANDBOX=1 DISABLE_TELEMETRY=1 \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 timeout 180 "$claude" -p "do the task" \
  --permission-mode acceptEdits --allowedTools 'Bash(*)' --output-format json > "$work/claude.out" 2>&1) ||
  { echo "claude code failed:" >&2; cat "$work/claude.out" >&2; }

# Odin, trusted (a workspace's hooks run only then).
make_workspace "$work/odin"
write_script "$work/odin" odin
start_server odin
mkdir -p "$work/odin-config" "$work/odin-state"
odin_env=(env -u OPENAI_BASE_URL -u OPENAI_API_KEY XDG_CONFIG_HOME="$work/odin-config" XDG_STATE_HOME="$work/odin-state"
  CLAUDE_CONFIG_DIR="$work/odin-claude" ANTHROPIC_BASE_URL="http://127.0.0.1:$port" ANTHROPIC_API_KEY=sk-test)
(cd "$work/odin" && "${odin_env[@]}" "$build/bin/odin" trust > /dev/null &&
  "${odin_env[@]}" "$build/bin/odin" -p "do the task" --output-format json > "$work/odin.out" 2>&1) ||
  { echo "odin failed:" >&2; cat "$work/odin.out" >&2; }

python3 "$here/compare_payloads.py" compare "$work/claude.hooks.jsonl" "$work/cc" "$work/odin/.odin/odin.db" "$work/odin"
python3 "$here/compare_payloads.py" transcripts "$work/claude.hooks.jsonl" "$work/odin/.odin/odin.db"
