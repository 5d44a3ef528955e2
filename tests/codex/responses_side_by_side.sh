#!/usr/bin/env bash
# Runs Codex and Odin against the same scripted model over OpenAI's Responses
# API (tests' fake model server) and compares what each sends back: the
# oracle for the fake's event stream (Codex must take it without complaint)
# and for Odin's requests (store: false, encrypted reasoning asked for and
# given back before the call it led to, no previous_response_id).
#
#   tests/codex/responses_side_by_side.sh [BUILD_DIR]
#
# Not part of CI: it installs Codex from npm (pinned below) into a temporary
# directory. Exits 1 naming the first difference.
set -euo pipefail

CODEX_VERSION=0.171.0
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
build=$(cd "$build" && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

echo "installing @openai/codex@$CODEX_VERSION into $work/npm" >&2
mkdir -p "$work/npm"
(cd "$work/npm" && npm install --silent --no-audit --no-fund "@openai/codex@$CODEX_VERSION" >&2)
codex=$work/npm/node_modules/.bin/codex

# A reasoning model's two turns: reasoning, text and a call; then reasoning
# and the answer. (Codex has no tool named Read: it answers the call with an
# error, which is still a function_call_output.)
cat > "$work/script.json" <<'EOF'
{"responses": [
  {"reasoning": "ENC-ONE", "text": "Let me look.",
   "tool_calls": [{"name": "Read", "id": "call_1", "arguments": {"file_path": "a.txt"}}]},
  {"reasoning": "ENC-TWO", "text": "It says hello, and nothing else at all."}
]}
EOF

# Starts a fake model server logging to $1; sets port.
serve() {
  "$build/bin/fake_llm_server" --script "$work/script.json" --log "$1" > "$work/port" &
  for _ in $(seq 50); do grep -q PORT= "$work/port" 2>/dev/null && break; sleep 0.1; done
  port=$(sed -n 's/PORT=//p' "$work/port")
}

for who in codex odin; do
  mkdir -p "$work/$who/ws" "$work/$who/home"
  git -C "$work/$who/ws" init -q
  echo hello > "$work/$who/ws/a.txt"
done

serve "$work/codex.jsonl"
(cd "$work/codex/ws" && HOME=$work/codex/home CODEX_HOME=$work/codex/home FAKE_KEY=x \
  "$codex" exec --skip-git-repo-check -c model_provider=fake \
  -c "model_providers.fake={name=\"fake\",base_url=\"http://127.0.0.1:$port/v1\",wire_api=\"responses\",env_key=\"FAKE_KEY\"}" \
  -m gpt-5 "what is in a.txt?" > "$work/codex.out" 2> "$work/codex.err") || { cat "$work/codex.err" >&2; exit 1; }
kill %1

serve "$work/odin.jsonl"
(cd "$work/odin/ws" && HOME=$work/odin/home XDG_CONFIG_HOME=$work/odin/home/.config \
  XDG_STATE_HOME=$work/odin/home/.state OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_API_KEY=x \
  "$build/bin/odin" -p "what is in a.txt?" --provider openai-responses > "$work/odin.out" 2> "$work/odin.err") ||
  { cat "$work/odin.err" >&2; exit 1; }

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
problems = []

def requests(who):
    out = []
    for line in open(f"{work}/{who}.jsonl"):
        j = json.loads(line)
        if "body" in j and j.get("path") == "/v1/responses":
            out.append(j["body"])
    return out

err = open(f"{work}/codex.err").read()
for line in err.splitlines():
    # Codex's complaints about the stream (not about the tool it lacks).
    if "ERROR" in line and "unsupported call" not in line:
        problems.append("Codex took the fake's stream with an error: " + line.strip())
if "nothing else at all" not in open(f"{work}/codex.out").read():
    problems.append("Codex did not print the scripted answer")

for who in ("codex", "odin"):
    reqs = requests(who)
    if len(reqs) != 2:
        problems.append(f"{who}: {len(reqs)} requests to /v1/responses, expected 2")
        continue
    second = reqs[1]
    kinds = [i.get("type") or i.get("role") for i in second["input"]]
    facts = {
        "store": second.get("store"),
        "include": second.get("include"),
        "previous_response_id": second.get("previous_response_id"),
        "reasoning given back": [i.get("encrypted_content") for i in second["input"] if i.get("type") == "reasoning"],
        "reasoning before the call": "reasoning" in kinds and "function_call" in kinds
        and kinds.index("reasoning") < kinds.index("function_call"),
        "the call's output": any(i.get("type") == "function_call_output" and i.get("call_id") == "call_1"
                                 for i in second["input"]),
    }
    print(f"{who:6} " + json.dumps(facts))
    globals()[who] = facts

if "codex" in globals() and "odin" in globals():
    for key, value in codex.items():
        if odin.get(key) != value:
            problems.append(f"{key}: Codex sends {value!r}, Odin {odin.get(key)!r}")
for p in problems:
    print("DIFFERENCE: " + p)
sys.exit(1 if problems else 0)
PY
