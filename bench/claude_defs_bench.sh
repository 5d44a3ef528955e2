#!/usr/bin/env bash
# What a project's Claude Code definitions cost on the user's path: `odin -p`
# answered at once by the test model server, in a trusted workspace with no
# .claude directory, then with COUNT custom commands, COUNT agents and COUNT
# skills (default 200 each, about the size of the largest public
# collections), then `odin -p "/cmd-7 42"` (a command expanded, with a
# !`echo` line run in the sandbox first). Prints each one's median of ROUNDS
# runs, the request's size, and the ratio to `bash -c true` and a bare
# bubblewrap measured in the same run.
#
#   bench/claude_defs_bench.sh [BUILD_DIR] [COUNT] [ROUNDS]
set -euo pipefail

build=$(cd "${1:-$(dirname "$0")/../build}" && pwd)
count=${2:-200}
rounds=${3:-9}
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
ws="$work/ws"
mkdir -p "$ws" && git -C "$ws" init -q
export XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state" CLAUDE_CONFIG_DIR="$work/claude"

python3 -c 'import json; print(json.dumps({"responses": [{"text": "Done.", "repeat": 100000}]}))' > "$work/script.json"
"$build/bin/fake_llm_server" --script "$work/script.json" --log "$work/llm.log" > "$work/port" 2>&1 &
server=$!
for _ in $(seq 50); do grep -q PORT= "$work/port" 2>/dev/null && break; sleep 0.1; done
export OPENAI_BASE_URL="http://127.0.0.1:$(sed -n 's/^PORT=//p' "$work/port")/v1" OPENAI_API_KEY=k

# median CMD...: the median, in ms, of ROUNDS runs.
source "$(dirname "$0")/bench_lib.sh"
# The size of the last request the model server received, in KiB.
last_request_kib() { tail -n 2 "$work/llm.log" | python3 -c '
import json, sys
sizes = [len(json.dumps(json.loads(l)["body"])) for l in sys.stdin if "\"body\"" in l]
print(f"{sizes[-1] / 1024:.1f}" if sizes else "-")'; }

bash_floor=$(median bash -c true)
bwrap_floor=$(median bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all true)
row() {
  local name=$1 ms=$2
  printf '%-44s %9s %9s %9.1f %9.1f\n' "$name" "$ms" "$(last_request_kib)" "$(echo "$ms / $bash_floor" | bc -l)" \
    "$(echo "$ms / $bwrap_floor" | bc -l)"
}
printf '%-44s %9s %9s %9s %9s\n' "odin -p, one answer" "ms" "req KiB" "/bash" "/bwrap"
printf '%-44s %9s\n' "bash -c true" "$bash_floor" "bwrap ... true" "$bwrap_floor"

echo '{}' > "$ws/odinconfig.json"
(cd "$ws" && "$build/bin/odin" trust > /dev/null && "$build/bin/odin" -p hi > /dev/null 2>&1 || true)
row "no definitions" "$(cd "$ws" && median "$build/bin/odin" -p hi)"

python3 - "$ws" "$count" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
text = "Follow the project's conventions and report what you find, file by file. " * 20
for i in range(n):
    os.makedirs(f"{root}/.claude/commands/group{i % 10}", exist_ok=True)
    with open(f"{root}/.claude/commands/group{i % 10}/cmd-{i}.md", "w") as f:
        f.write(f"---\ndescription: Command {i}\nallowed-tools: Read, Grep, Bash(echo:*)\n---\n"
                f"Do task {i} for $ARGUMENTS.\nContext: !`echo ctx-$1`\n{text}\n")
    os.makedirs(f"{root}/.claude/agents", exist_ok=True)
    with open(f"{root}/.claude/agents/agent-{i}.md", "w") as f:
        f.write(f"---\nname: agent-{i}\ndescription: Reviews area {i} of the code\ntools: Read, Grep, Glob\n"
                f"model: inherit\n---\nYou are agent {i}. {text}\n")
    os.makedirs(f"{root}/.claude/skills/skill-{i}/scripts", exist_ok=True)
    with open(f"{root}/.claude/skills/skill-{i}/SKILL.md", "w") as f:
        f.write(f"---\nname: skill-{i}\ndescription: How to do thing {i}\n---\n{text}\n")
    open(f"{root}/.claude/skills/skill-{i}/scripts/run.sh", "w").write("echo run\n")
PY
(cd "$ws" && "$build/bin/odin" trust > /dev/null)
row "$count commands, agents and skills" "$(cd "$ws" && median "$build/bin/odin" -p hi)"
row "/cmd-7 42 (expanded, one !\`echo\` run)" "$(cd "$ws" && median "$build/bin/odin" -p "/cmd-7 42")"
