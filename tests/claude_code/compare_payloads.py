#!/usr/bin/env python3
"""The side-by-side script's two halves (side_by_side.sh runs them).

  compare_payloads.py script WS claude|odin
      prints the fake model server's script: the same calls in each one's
      tool names (Claude Code's file tools take absolute paths).
  compare_payloads.py compare CLAUDE_LOG CLAUDE_WS ODIN_DB ODIN_WS
      prints the hook payloads of both, paired by event, tool and turn,
      field by field.
  compare_payloads.py transcripts CLAUDE_LOG ODIN_DB
      prints the shape of each line of both transcripts (the files the Stop
      hooks were given), side by side.
"""
import json
import re
import sqlite3
import sys

# (Claude Code's call, Odin's call): the same step in each one's names.
STEPS = [
    (("Bash", {"command": "echo hi", "description": "say hi"}), ("ExecuteCommand", {"command": "echo hi"})),
    (("Write", {"file_path": "{ws}/sub/../new.txt", "content": "new\n"}),
     ("WriteFile", {"file_path": "sub/../new.txt", "content": "new\n"})),
    (("Read", {"file_path": "{ws}/notes.txt"}), ("Read", {"file_path": "notes.txt"})),
    (("Edit", {"file_path": "{ws}/notes.txt", "old_string": "one", "new_string": "two"}),
     ("EditTool", {"file_path": "notes.txt", "old_string": "one", "new_string": "two"})),
    (("Bash", {"command": "rm -rf build", "timeout": 5000}),
     ("ExecuteCommand", {"command": "rm -rf build", "timeout_seconds": 5})),
]


def script(ws, flavour):
    responses = []
    for cc, odin in STEPS:
        name, args = cc if flavour == "claude" else odin
        args = json.loads(json.dumps(args).replace("{ws}", ws))
        responses.append({"tool_calls": [{"name": name, "arguments": args}]})
    responses.append({"text": "Done."})
    print(json.dumps({"responses": responses}))


def shape(key, value, ws):
    """A value with what differs by nature (paths, ids, times) made comparable."""
    if isinstance(value, str):
        value = value.replace(ws, "$WS")
        if key in ("session_id", "prompt_id") and re.fullmatch(r"[0-9a-f-]{36}", value):
            return "<uuid>"
        if key == "tool_use_id":
            return re.sub(r"^(toolu_|ex_).*", r"<\1…>", value)
        if key.endswith("transcript_path"):
            return "<" + re.sub(r".*\.", ".", value) + " file>"
    if key == "duration_ms" and isinstance(value, (int, float)):
        return "<ms>"
    return value


def flatten(payload, ws):
    out = {}
    for key, value in payload.items():
        if isinstance(value, dict) and key in ("tool_input", "tool_response", "effort"):
            if not value:
                out[key] = "{}"
            for k, v in value.items():
                if isinstance(v, dict):  # Read's tool_response.file
                    for k2, v2 in v.items():
                        out[key + "." + k + "." + k2] = shape(k2, v2, ws)
                else:
                    out[key + "." + k] = shape(k, v, ws)
        else:
            out[key] = shape(key, value, ws)
    return out


def paired(payloads):
    """(event, tool, n) -> payload, n counting repeats of an event on a tool."""
    seen, out = {}, {}
    for p in payloads:
        base = (p.get("hook_event_name", "?"), p.get("tool_name", ""))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out[base + (n,)] = p
    return out


def compare(claude_log, claude_ws, odin_db, odin_ws):
    claude = [json.loads(line) for line in open(claude_log) if line.strip()]
    rows = sqlite3.connect(odin_db).execute(
        "SELECT args_json FROM execution_starts WHERE tool = 'Hook' ORDER BY rowid").fetchall()
    odin = [json.loads(json.loads(r[0])["input"]) for r in rows]
    a, b = paired(claude), paired(odin)
    keys = sorted(set(a) | set(b), key=lambda k: (list(a).index(k) if k in a else 1000 + list(b).index(k)))
    same = differ = only = 0
    for key in keys:
        event, tool, n = key
        print(f"\n== {event}" + (f" {tool}" if tool else "") + (f" #{n + 1}" if n else ""))
        fa = flatten(a[key], claude_ws) if key in a else None
        fb = flatten(b[key], odin_ws) if key in b else None
        if fa is None or fb is None:
            print("   only in " + ("Claude Code" if fb is None else "Odin"))
            only += 1
            continue
        for field in sorted(set(fa) | set(fb)):
            va, vb = fa.get(field, "—"), fb.get(field, "—")
            mark = "same" if va == vb else "DIFF"
            same += va == vb
            differ += va != vb
            print(f"   {mark:4}  {field:32} claude={json.dumps(va, ensure_ascii=True)[:70]:72} "
                  f"odin={json.dumps(vb, ensure_ascii=True)[:70]}")
    print(f"\n{len(claude)} Claude Code payloads, {len(odin)} Odin payloads; fields: {same} same, {differ} differ; "
          f"{only} events in one only")


def line_shape(line):
    """A transcript line as hooks read it: its type, keys, content items."""
    e = json.loads(line)
    m = e.get("message") or {}
    items = m.get("content")
    if isinstance(items, list):
        parts = []
        for c in items:
            t = c.get("type", "?")
            if t == "tool_use":
                t += f"({c.get('name')}: {','.join(sorted(c.get('input', {})))})"
            parts.append(t)
        content = "[" + " ".join(parts) + "]"
    else:
        content = type(items).__name__
    return f"{e.get('type', '?'):9} {content}", ",".join(sorted(e)), ",".join(sorted(m))


def transcripts(claude_log, odin_db):
    claude = [json.loads(line) for line in open(claude_log) if line.strip()]
    rows = sqlite3.connect(odin_db).execute(
        "SELECT args_json FROM execution_starts WHERE tool = 'Hook' ORDER BY rowid").fetchall()
    odin = [json.loads(json.loads(r[0])["input"]) for r in rows]
    paths = []
    for payloads in (claude, odin):
        stops = [p["transcript_path"] for p in payloads if p.get("hook_event_name") == "Stop"]
        paths.append(stops[-1] if stops else None)
    lines = []
    for path in paths:
        try:
            # Claude Code's holds lines hooks never see as messages (queue
            # operations, summaries): only user and assistant lines count.
            lines.append([line_shape(l) for l in open(path) if json.loads(l).get("type") in ("user", "assistant")])
        except (OSError, TypeError):
            lines.append([])
    print(f"\n== transcripts: {len(lines[0])} Claude Code lines, {len(lines[1])} Odin lines (user and assistant)")
    for i in range(max(len(lines[0]), len(lines[1]))):
        a = lines[0][i] if i < len(lines[0]) else ("—", "", "")
        b = lines[1][i] if i < len(lines[1]) else ("—", "", "")
        print(f"   {'same' if a[0] == b[0] else 'DIFF'}  claude={a[0][:60]:60} odin={b[0][:60]}")
    for name, side in (("Claude Code", lines[0]), ("Odin", lines[1])):
        if side:
            print(f"   {name} line keys: {side[-1][1]}\n   {name} message keys: {side[-1][2]}")


if __name__ == "__main__":
    if sys.argv[1] == "script":
        script(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "transcripts":
        transcripts(sys.argv[2], sys.argv[3])
    else:
        compare(*sys.argv[2:6])
