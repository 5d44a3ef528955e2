#!/usr/bin/env python3
"""The layering check: which folder may include which, in the spirit of
Chromium's DEPS files. Run by scripts/test.sh; exits 1 naming every include
that crosses a forbidden line, and every source file over the size limit
whose first comment does not say why it is long.

    cli, daemon -> session -> planner -> ToolHost (planner/tool_host.h) <- coordinator
    coordinator -> ledger, llm, web, tools, sandbox, base
    planner -> ledger, llm/llm.h, tools, base
    workers -> tools, sandbox, base, llm's HTTP client (odin-mcp-worker), and
               (odin-subagent) planner; never coordinator
    web -> base (WebFetch: address policy, fetch, HTML to Markdown)
    index -> base (the symbol index; coordinator and workers use it)

Tests (*_test.cc, tests/, bench/) may include anything: they put the layers
together on purpose.
"""

import os
import re
import subprocess
import sys

# Folder -> what its files may include: a folder ("ledger") or one header
# ("planner/tool_host.h"). Generated protos ("odin/v1/...") are allowed
# everywhere except the gRPC ones, which only the daemon may include.
ALLOW = {
    "base": ["base"],
    "sandbox": ["base", "sandbox"],
    "tools": ["base", "tools"],
    "llm": ["base", "llm"],
    # WebFetch's fetch, address rules and HTML conversion: for the network
    # worker, and the coordinator's URL checks.
    "web": ["base", "web"],
    # The symbol index: its data, store and queries, and the tree-sitter
    # extraction the read-only workers run.
    "index": ["base", "index"],
    "ledger": ["base", "tools", "ledger"],
    "planner": ["base", "tools", "ledger", "llm/llm.h", "planner"],
    # odin-mcp-worker's streamable HTTP transport uses the HTTP client and
    # SSE parser the model clients use (never the model clients).
    "workers": ["base", "tools", "sandbox", "workers", "planner", "web", "index", "llm/llm.h", "llm/http_client.h",
                "llm/sse_parser.h"],
    # The coordinator implements the planner's ToolHost, charges the
    # message's budget, and reads the option types the config carries; it
    # never includes the planner loop itself.
    "coordinator": [
        "base", "tools", "sandbox", "llm", "ledger", "web", "index", "coordinator",
        "planner/tool_host.h", "planner/budget.h", "planner/checks.h",
        "planner/stall_detector.h", "planner/tool_calls.h", "planner/tool_specs.h", "planner/hooks.h",
        # The reviewers' settings and the workflows' plan and test-file
        # patterns (plan_update's arguments, a hold's allowed paths).
        "planner/reviewers.h", "planner/workflows.h",
    ],
    "session": ["base", "index", "tools", "sandbox", "llm", "ledger", "planner", "coordinator", "session"],
    "cli": ["base", "index", "tools", "sandbox", "llm", "ledger", "planner", "coordinator", "session", "cli",
            "daemon/socket_location.h"],
    # rpc_main.cc is odin-rpc's command line: it shares the CLI's flags.
    "daemon": ["base", "index", "tools", "sandbox", "llm", "ledger", "planner", "coordinator", "session", "daemon",
               "cli/cli.h", "cli/cli_options.h"],
}
# Headers outside these folders must not include these: on two cores every
# file that includes them costs 15-25 s to compile.
HEAVY_HEADERS = re.compile(r"#include <(grpcpp/|grpc/|nlohmann/json\.hpp|gtest/|gmock/)")
HEAVY_ALLOWED = ("daemon/", "tests/", "bench/")
# A source file over this many lines must say why in its first comment, with
# a line containing "Long file:".
MAX_LINES = 600

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def is_test(path):
    return path.endswith("_test.cc") or path.startswith(("tests/", "bench/"))


def allowed(folder, included):
    if included.startswith("odin/"):
        return not included.endswith(".grpc.pb.h") or folder == "daemon"
    for rule in ALLOW[folder]:
        if included == rule or included.startswith(rule + "/"):
            return True
    return False


def first_comment(lines):
    text = []
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("//"):
            text.append(stripped)
        elif stripped and not stripped.startswith("#pragma") and not stripped.startswith("#include"):
            if text:
                break
    return "\n".join(text)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = subprocess.run(["git", "-C", root, "ls-files", "*.cc", "*.h"], check=True,
                           capture_output=True, text=True).stdout.split()
    problems = []
    for path in files:
        if path.startswith("third_party/"):
            continue
        full = os.path.join(root, path)
        if not os.path.exists(full):
            continue  # deleted in the work tree
        with open(full, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        folder = path.split("/")[0]
        if not is_test(path):
            if folder not in ALLOW:
                problems.append(f"{path}: folder {folder}/ has no layering rule in scripts/check-layering.py")
                continue
            for number, line in enumerate(lines, 1):
                m = INCLUDE.match(line)
                if m and "/" in m.group(1) and not allowed(folder, m.group(1)):
                    problems.append(f"{path}:{number}: {folder}/ must not include {m.group(1)}")
            if len(lines) > MAX_LINES and "Long file:" not in first_comment(lines):
                problems.append(f"{path}: {len(lines)} lines (over {MAX_LINES}) and its first comment "
                                "does not say why (\"Long file: ...\")")
        if path.endswith(".h") and not path.startswith(HEAVY_ALLOWED):
            for number, line in enumerate(lines, 1):
                if HEAVY_HEADERS.match(line):
                    problems.append(f"{path}:{number}: a widely included header must not include {line.strip()}")
    for p in problems:
        print(p)
    if problems:
        print(f"layering check: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"layering check: {len(files)} files, no forbidden include")
    return 0


if __name__ == "__main__":
    sys.exit(main())
