#!/usr/bin/env python3
"""The layering check: which folder may include which, in the spirit of
Chromium's DEPS files. Run by scripts/test.sh; exits 1 naming every include
that crosses a forbidden line, and every source file over the size limit
whose first comment does not say why it is long.

    cli, daemon -> session (the runtime: the composition root)
    session -> coordinator, remote, config, pool, mcp, gates, planner, ...
    coordinator -> gates, pool, mcp, workspace, ledger, llm, web, index, tools,
                   sandbox, base, ToolHost (planner/tool_host.h); never config,
                   remote or session
    remote -> pool, config, workspace, base (hosts, host agent, Slurm, keys),
              sandbox/workspace_overlay.h (the host agent lands overlays)
    config -> gates, mcp, pool/worker_sandbox.h, workspace, option types
    pool -> sandbox, workspace, base (worker_request.h: what a worker runs;
            never the planner's ToolCall, never the Config)
    gates -> tools, ledger, base, planner/tool_host.h and budget.h,
             pool/worker_request.h, web/url_host.h (nothing above them)
    mcp -> base, llm/llm.h, tools/tool_catalog.h
    planner -> ledger, llm/llm.h, tools, workspace, base
    workers -> tools, sandbox, base, llm's HTTP client, mcp/mcp_client.h
               (odin-mcp-worker), planner (odin-subagent); never coordinator
               or pool
    web -> base (WebFetch: address policy, fetch, HTML to Markdown)
    index -> base, the safe file layer (the symbol index; its ignore rules
             come in as a function)
    workspace -> base (the safe file layer: every host-side folder uses it),
                 ledger, tools (change tracking, protected paths, undo)

No source file over 800 lines (tests and benchmarks aside); over 600, its
first comment says why ("Long file:"). A self-test first checks that a
forbidden include into each component, a raw file call in each host-side
folder and an over-long file are refused.

Two more rules keep the chokepoints chokepoints (DESIGN.md §2):
  - Host-side folders (the code of odin and odin-rpc) touch workspace and
    state files only through workspace/: raw path calls (open, fopen,
    streams, rename, unlink, chmod, mkdir, std::filesystem's mutators) and
    base/file_util.h's helpers that wrap them are refused there, except in
    the files of HOST_PATHS_ONLY, which touch only the host's own paths.
  - JSON comes in through base/json_input.h: json::parse is refused
    everywhere else.

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
    # (The safe file layer: what the sweep of killed workers' overlays
    # removes is never followed.)
    "sandbox": ["base", "sandbox", "workspace/workspace_files.h"],
    # (The safe file layer: LockedFile's directories, InitTool on the host.)
    "tools": ["base", "tools", "workspace/workspace_files.h"],
    "llm": ["base", "llm"],
    # WebFetch's fetch, address rules and HTML conversion: for the network
    # worker, and the coordinator's URL checks.
    "web": ["base", "web"],
    # The symbol index: its data, store and queries, and the tree-sitter
    # extraction the read-only workers run.
    "index": ["base", "index", "workspace/workspace_files.h", "workspace/host_files.h"],
    # The safe file layer (workspace_files.h, git_layouts.h: base only), and
    # on it the workspace's own parts: change tracking, overlay apply,
    # protected paths, undo (which reads the ledger's records).
    "workspace": ["base", "workspace", "ledger", "tools"],
    "ledger": ["base", "tools", "ledger", "workspace/workspace_files.h", "workspace/host_files.h"],
    "planner": ["base", "tools", "ledger", "llm/llm.h", "planner", "workspace"],
    # odin-mcp-worker's streamable HTTP transport uses the HTTP client and
    # SSE parser the model clients use (never the model clients), and reads
    # an OAuth challenge as mcp/mcp_oauth.h does.
    "workers": ["base", "tools", "sandbox", "workers", "planner", "web", "index", "llm/llm.h", "llm/http_client.h",
                "llm/sse_parser.h", "mcp/mcp_client.h", "mcp/mcp_oauth.h"],
    # The gates (DESIGN §3) and the file cache they read: rules over a call
    # and the workspace's files, knowing nothing of who puts them in order
    # (as Codex keeps its execpolicy crate).
    "gates": ["base", "tools", "ledger", "gates", "planner/tool_host.h", "planner/budget.h",
              "workspace/workspace_files.h", "workspace/protected_paths.h", "pool/worker_request.h",
              "web/url_host.h"],
    # The MCP client side: the protocol client, the servers' settings, the
    # registry of their tools.
    "mcp": ["base", "mcp", "llm/llm.h", "tools/tool_catalog.h"],
    # The worker pool: workers' sandboxes, spawn, transport and queue. It
    # reads the call it carries (planner/tool_host.h), never the Config.
    "pool": ["base", "pool", "sandbox", "workspace"],
    # The settings and trust: the option types of every part they configure.
    "config": ["base", "config", "gates", "mcp", "sandbox/sandbox_options.h", "pool/worker_sandbox.h",
               "workspace", "tools/tool_catalog.h", "tools/workspace_path.h", "web/address_policy.h",
               "web/network_rules.h", "planner/budget.h", "planner/checks.h", "planner/hooks.h", "planner/reviewers.h",
               "planner/workflows.h", "planner/stall_detector.h", "planner/tool_calls.h", "planner/instructions.h",
               "planner/claude_defs.h"],
    # Workers on other machines: the pool's hosts, the host agent (which
    # starts workers as the pool does, from the config it loads).
    # It lands its workers' overlays itself, as the coordinator does.
    "remote": ["base", "remote", "pool", "config", "workspace", "sandbox/workspace_overlay.h"],
    # The coordinator implements the planner's ToolHost, charges the
    # message's budget, and reads the option types the config carries; it
    # never includes the planner loop itself, nor config/, remote/ or
    # session/.
    "coordinator": [
        "base", "tools", "sandbox", "llm", "ledger", "web", "index", "coordinator", "workspace",
        "gates", "pool", "mcp",
        "planner/tool_host.h", "planner/budget.h", "planner/checks.h",
        "planner/stall_detector.h", "planner/tool_calls.h", "planner/tool_specs.h", "planner/hooks.h", "planner/hook_payloads.h",
        # The reviewers' settings and the workflows' plan and test-file
        # patterns (plan_update's arguments, a hold's allowed paths).
        "planner/reviewers.h", "planner/workflows.h",
        # Custom agents and skills (AgentTool's subagent types, the Skill tool).
        "planner/claude_defs.h",
    ],
    # OpenTelemetry: the ledger's records as spans and metrics, sent over
    # the HTTP client the model clients use.
    "telemetry": ["base", "ledger", "telemetry", "llm/http_client.h", "tools/tool_catalog.h"],
    "session": ["base", "index", "tools", "sandbox", "llm", "ledger", "planner", "coordinator", "session",
                "gates", "pool", "mcp", "config", "remote", "telemetry",
                "workspace"],
    "cli": ["base", "index", "tools", "sandbox", "llm", "ledger", "planner", "coordinator", "session", "cli",
            "gates", "pool", "mcp", "config", "remote",
            "workspace",
            "daemon/socket_location.h"],
    # rpc_main.cc is odin-rpc's command line: it shares the CLI's flags.
    "daemon": ["base", "index", "tools", "sandbox", "llm", "ledger", "planner", "coordinator", "session", "daemon",
               "gates", "pool", "mcp", "config", "remote",
               "workspace",
               "cli/cli.h", "cli/cli_options.h"],
}
# Headers outside these folders must not include these: on two cores every
# file that includes them costs 15-25 s to compile.
HEAVY_HEADERS = re.compile(r"#include <(grpcpp/|grpc/|nlohmann/json\.hpp|gtest/|gmock/)")
HEAVY_ALLOWED = ("daemon/", "tests/", "bench/")
# A source file over this many lines must say why in its first comment, with
# a line containing "Long file:"; none may be over HARD_MAX_LINES (tests
# and benchmarks aside).
MAX_LINES = 600
HARD_MAX_LINES = 800

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

# The code of odin and odin-rpc: its access to workspace and state files
# goes through workspace/ (the safe file layer).
HOST_SIDE = ("cli", "daemon", "session", "planner", "coordinator", "ledger", "index", "gates", "config", "mcp",
             "pool", "remote")
# Calls that reach a file by its path (or by a directory fd the layer did
# not hand out), and base/file_util.h's helpers that wrap them.
RAW_FILE_CALL = re.compile(
    r"(?<![\w.>:])(?:::)?(open|openat|openat2|creat|fopen|freopen|opendir|rename|renameat|renameat2|unlink|"
    r"unlinkat|rmdir|remove|chmod|fchmodat|chown|lchown|fchownat|mkdir|mkdirat|mkfifo|mknod|symlink|symlinkat|"
    r"link|linkat|truncate|utimes|utimensat|ReadFileToString|ReadRegularFile|ReadInPieces|WriteFileAtomic|"
    r"MakeDirs|PathExists|RemoveTree)\s*\("
    r"|std::(?:i|o)?fstream\b|std::filesystem::(?:remove|remove_all|rename|create_directory|create_directories|"
    r"permissions|copy|copy_file|resize_file|create_symlink|create_hard_link|directory_iterator|"
    r"recursive_directory_iterator|is_empty)\b")
# Files that touch only the host's own paths (the user's config and state
# directories, sockets, /proc), never a workspace's: each says why.
HOST_PATHS_ONLY = {
    # The workers' sockets (a private directory under $TMPDIR) and /proc.
    "pool/worker_transport.cc",
    # odin keys generate: the key directory the user names.
    "remote/curve_keys.cc",
    # The stores that decide what runs (the trusted workspaces, the saved
    # approvals), in the user's config directory.
    "config/private_store.cc",
    # The daemon's socket and its directory in $XDG_RUNTIME_DIR, and the
    # peer's /proc/PID/status.
    "daemon/unix_listener.cc",
    "daemon/socket_location.cc",
    "daemon/peer_credentials.cc",
    # The ledgers' anchors, in the user's state directory.
    "ledger/ledger_anchor.cc",
    # The interactive session's history, in the user's state directory.
    "cli/line_editor.cc",
}
# What the layering check refuses where a raw call is added (scripts/test.sh
# runs this file; docs/sandbox.md shows it failing on one).
JSON_PARSE = re.compile(r"json::parse\s*\(|json::accept\s*\(|json::from_(?:cbor|msgpack|bson|ubjson|bjdata)\b")


def is_test(path):
    return path.endswith("_test.cc") or path.startswith(("tests/", "bench/"))


def allowed(folder, included):
    if included.startswith("odin/"):
        return not included.endswith(".grpc.pb.h") or folder == "daemon"
    # OTLP's generated messages: telemetry/ alone encodes them.
    if included.startswith("opentelemetry/"):
        return folder == "telemetry"
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


def check_file(path, lines):
    """The problems of one file (path relative to the repository root)."""
    problems = []
    folder = path.split("/")[0]
    if not is_test(path):
        if folder not in ALLOW:
            return [f"{path}: folder {folder}/ has no layering rule in scripts/check-layering.py"]
        for number, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if m and "/" in m.group(1) and not allowed(folder, m.group(1)):
                problems.append(f"{path}:{number}: {folder}/ must not include {m.group(1)}")
        if folder in HOST_SIDE and path not in HOST_PATHS_ONLY:
            for number, line in enumerate(lines, 1):
                code = line.split("//", 1)[0]
                m = RAW_FILE_CALL.search(code)
                if m:
                    problems.append(f"{path}:{number}: {m.group(0).strip()} reaches a file by path on the host "
                                    "side: go through workspace/workspace_files.h")
        if path != "base/json_input.cc":
            for number, line in enumerate(lines, 1):
                if JSON_PARSE.search(line.split("//", 1)[0]):
                    problems.append(f"{path}:{number}: JSON is read through base/json_input.h (ParseJson)")
        if len(lines) > HARD_MAX_LINES:
            problems.append(f"{path}: {len(lines)} lines (over {HARD_MAX_LINES}, the limit no comment lifts): "
                            "split it")
        elif len(lines) > MAX_LINES and "Long file:" not in first_comment(lines):
            problems.append(f"{path}: {len(lines)} lines (over {MAX_LINES}) and its first comment "
                            "does not say why (\"Long file: ...\")")
    if path.endswith(".h") and not path.startswith(HEAVY_ALLOWED):
        for number, line in enumerate(lines, 1):
            if HEAVY_HEADERS.match(line):
                problems.append(f"{path}:{number}: a widely included header must not include {line.strip()}")
    return problems


# What the check must refuse: one forbidden include into (or out of) each
# component that has a row, and the rules on size and raw file calls in the
# new folders. Run first by main(), so a rule loosened by mistake fails CI.
SELF_TEST = [
    ("gates/x.cc", ['#include "coordinator/coordinator.h"']),
    ("gates/x.cc", ['#include "config/config.h"']),
    ("pool/x.cc", ['#include "config/config.h"']),
    ("pool/x.cc", ['#include "coordinator/coordinator.h"']),
    ("config/x.cc", ['#include "coordinator/coordinator.h"']),
    ("config/x.cc", ['#include "session/runtime.h"']),
    ("mcp/x.cc", ['#include "pool/worker_pool.h"']),
    ("mcp/x.cc", ['#include "coordinator/coordinator.h"']),
    ("remote/x.cc", ['#include "coordinator/coordinator.h"']),
    ("remote/x.cc", ['#include "session/runtime.h"']),
    ("index/x.cc", ['#include "workspace/git_ignore.h"']),
    ("coordinator/x.cc", ['#include "config/config.h"']),
    ("coordinator/x.cc", ['#include "remote/remote_hosts.h"']),
    ("coordinator/x.cc", ['#include "session/runtime.h"']),
    ("workers/x.cc", ['#include "coordinator/coordinator.h"']),
    ("workers/x.cc", ['#include "pool/worker_pool.h"']),
    ("gates/x.cc", ['  int fd = open(path.c_str(), O_RDONLY);']),
    ("pool/x.cc", ['  std::ifstream in(path);']),
    ("config/x.cc", ['  rename(a, b);']),
    ("remote/x.cc", ['  std::filesystem::remove_all(dir);']),
    ("mcp/x.cc", ['  unlink(path);']),
    ("coordinator/x.cc", ["// Long file: but no comment lifts the hard limit."] + [""] * HARD_MAX_LINES),
    ("gates/x.cc", ["// a short comment"] + [""] * MAX_LINES),
]


def self_test():
    failures = [f"{path}: {lines[0].strip()[:60]} passed the check" for path, lines in SELF_TEST
                if not check_file(path, lines)]
    # And what the components may include still passes.
    for path, line in [("gates/x.cc", '#include "tools/tool_catalog.h"'), ("pool/x.cc", '#include "sandbox/cgroup.h"'),
                       ("remote/x.cc", '#include "pool/worker_pool.h"'), ("config/x.cc", '#include "mcp/mcp_config.h"'),
                       ("coordinator/x.cc", '#include "gates/validation_gate.h"')]:
        if check_file(path, [line]):
            failures.append(f"{path}: {line} was refused")
    return failures


def main():
    failures = self_test()
    for f in failures:
        print(f"layering check self-test: {f}")
    if failures:
        return 1
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
            problems += check_file(path, f.read().splitlines())
    for p in problems:
        print(p)
    if problems:
        print(f"layering check: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"layering check: {len(files)} files, no forbidden include; self-test: {len(SELF_TEST)} violations refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
