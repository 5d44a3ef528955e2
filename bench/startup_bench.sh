#!/usr/bin/env bash
# Start-up on the user's path, interleaved in one run: `odin exec -- true`
# and `odin --version` of one build (and of a BEFORE build, if given) beside
# the floors measured in the same rounds: `bash -c true` and a bare
# `bwrap --unshare-all --unshare-user --ro-bind / / true`. Each is timed
# whole (wall) and by the CPU of every process it started (a cpuacct
# cgroup of its own where this machine has one, else wait4's figure for
# the child and all it reaped; processes that outlive the child, such as
# the sandbox odin exec leaves to be taken down, are then not counted).
# Prints medians and the ratios issue 50 asks for:
#   odin --version / bash -c true                       (target <= 3)
#   odin exec -- true / (odin --version + bare bwrap)   (target <= 1.5)
#   CPU of odin exec -- true, AFTER / BEFORE            (target <= 0.5)
# The workspace is a small git repository in a temporary directory beside
# the build (not under /tmp, whose workspaces cost the sandbox more).
# With ODIN_BENCH_ORACLES=1 it also installs Codex and Anthropic's sandbox
# runtime (Claude Code's sandbox, `srt`) from npm, pinned below, into the
# temporary directory, and times their sandboxed `true` in the same rounds:
# `codex sandbox -- true` (read-only and workspace-write) and `srt true`
# (which needs socat and ripgrep; skipped, saying so, without them).
# Never run in CI.
#
#   bench/startup_bench.sh [AFTER_BIN_DIR] [BEFORE_BIN_DIR] [RUNS]
#   e.g. bench/startup_bench.sh build/bin /path/to/5e3bfff/build/bin 60
set -euo pipefail

CODEX_VERSION=0.171.0
SANDBOX_RUNTIME_VERSION=0.0.83

after=$(cd "${1:-$(dirname "$0")/../build/bin}" && pwd)
before=${2:-}
[ -n "$before" ] && before=$(cd "$before" && pwd)
runs=${3:-60}
work=$(mktemp -d -p "$(dirname "$after")")
trap 'rm -rf "$work"' EXIT
export XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state"
mkdir -p "$work/ws/src"
for i in $(seq 20); do echo "line $i" > "$work/ws/src/f$i.txt"; done
git -C "$work/ws" init -q && git -C "$work/ws" add -A && git -C "$work/ws" -c user.name=b -c user.email=b@b commit -qm init
# Each build its own copy: an older build need not read a newer one's ledger.
cp -a "$work/ws" "$work/ws-before"

codex= srt=
if [ "${ODIN_BENCH_ORACLES:-0}" = 1 ]; then
  echo "installing @openai/codex@$CODEX_VERSION and @anthropic-ai/sandbox-runtime@$SANDBOX_RUNTIME_VERSION into $work/npm" >&2
  mkdir -p "$work/npm" "$work/codex-home"
  (cd "$work/npm" && npm install --silent --no-audit --no-fund \
    "@openai/codex@$CODEX_VERSION" "@anthropic-ai/sandbox-runtime@$SANDBOX_RUNTIME_VERSION" >&2)
  codex=$(ls "$work"/npm/node_modules/@openai/codex-linux-*/vendor/*/bin/codex | head -1)
  export CODEX_HOME="$work/codex-home"
  if command -v socat >/dev/null && command -v rg >/dev/null; then
    srt="$work/npm/node_modules/.bin/srt"
  else
    echo "srt skipped: it needs socat and ripgrep (apt-get install socat ripgrep)" >&2
  fi
fi

python3 - "$work/ws" "$runs" "$after" "$before" "$codex" "$srt" <<'PY'
import ctypes, os, shutil, statistics, sys, time

ws, runs, after, before = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
codex, srt = sys.argv[5], sys.argv[6]
bwrap, true = shutil.which("bwrap"), shutil.which("true")
cg_root = "/sys/fs/cgroup/cpuacct"
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
cg = None
try:
    cg = os.path.join(cg_root, f"odin-startup-bench-{os.getpid()}")
    os.mkdir(cg)
except OSError:
    cg = None

def run(argv, cwd=ws):
    """Wall ms and CPU ms of argv run in ws, every process it starts counted.
    The child joins the cgroup before the clock starts: a move into a
    cgroup waits for an RCU grace period (milliseconds), which is no part
    of what is measured."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready_r)
            os.close(go_w)
            if cg:
                with open(f"{cg}/cgroup.procs", "w") as f:
                    f.write(str(os.getpid()))
            os.chdir(cwd)
            fd = os.open(os.devnull, os.O_RDWR)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.write(ready_w, b"r")
            os.read(go_r, 1)
            os.close(go_r)
            os.close(ready_w)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    os.close(ready_w)
    os.close(go_r)
    os.read(ready_r, 1)
    os.close(ready_r)
    usage_before = int(open(f"{cg}/cpuacct.usage").read()) if cg else 0
    start = time.perf_counter()
    os.write(go_w, b"g")
    os.close(go_w)
    _, status, ru = os.wait4(pid, 0)
    wall = (time.perf_counter() - start) * 1000
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"startup_bench: {' '.join(argv)} failed ({os.waitstatus_to_exitcode(status)})")
    if cg:
        # odin exec ends before its sandbox is taken down: what that costs
        # is counted too, and is over before the next run starts.
        # (Its launcher is orphaned, so reparented to us, a subreaper, and
        # reaped here rather than whenever this machine's init gets to it.)
        deadline = time.monotonic() + 5
        while open(f"{cg}/cgroup.procs").read().strip() and time.monotonic() < deadline:
            try:
                while os.waitpid(-1, os.WNOHANG)[0] > 0:
                    pass
            except ChildProcessError:
                pass
            time.sleep(0.0005)
        cpu = (int(open(f"{cg}/cpuacct.usage").read()) - usage_before) / 1e6
    else:
        cpu = (ru.ru_utime + ru.ru_stime) * 1000
    return wall, cpu

cases = [("bash -c true", ["/bin/bash", "-c", "true"]),
         ("bare bwrap", [bwrap, "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", true])]
builds = [("after", after)] + ([("before", before)] if before else [])
cwd = {}
for name, bin_dir in builds:
    cases.append((f"odin --version ({name})", [f"{bin_dir}/odin", "--version"]))
    cases.append((f"odin exec -- true ({name})", [f"{bin_dir}/odin", "exec", "--", "true"]))
    cwd[cases[-1][0]] = ws if name == "after" else ws + "-before"
oracles = []
if codex:
    oracles.append(("codex sandbox -- true", [codex, "sandbox", "--", true]))
    oracles.append(("codex sandbox (workspace-write)",
                    [codex, "sandbox", "-c", 'sandbox_mode="workspace-write"', "--", true]))
if srt:
    oracles.append(("srt true", [srt, true]))
cases += oracles
got = {name: ([], []) for name, _ in cases}
try:
    for i in range(-3, runs):
        for name, argv in cases:
            wall, cpu = run(argv, cwd.get(name, ws))
            if i >= 0:
                got[name][0].append(wall)
                got[name][1].append(cpu)
finally:
    if cg:
        os.rmdir(cg)

med = {name: (statistics.median(w), statistics.median(c)) for name, (w, c) in got.items()}
print(f"start-up, {runs} interleaved runs each, medians; CPU from "
      f"{'a cpuacct cgroup' if cg else 'wait4 (children reaped)'}")
print(f"{'':36} {'wall ms':>9} {'CPU ms':>9}")
for name, _ in cases:
    print(f"{name:36} {med[name][0]:9.2f} {med[name][1]:9.2f}")
for name, _ in builds:
    version, execw = med[f"odin --version ({name})"], med[f"odin exec -- true ({name})"]
    print(f"{name}: odin --version / bash -c true = {version[0] / med['bash -c true'][0]:.2f}x (target <= 3)")
    print(f"{name}: odin exec -- true / (odin --version + bare bwrap) = "
          f"{execw[0] / (version[0] + med['bare bwrap'][0]):.2f}x (target <= 1.5)")
for name, _ in oracles:
    print(f"odin exec -- true (after) / {name} = "
          f"{med['odin exec -- true (after)'][0] / med[name][0]:.2f}x wall, "
          f"{med['odin exec -- true (after)'][1] / med[name][1]:.2f}x CPU")
if before:
    a, b = med["odin exec -- true (after)"][1], med["odin exec -- true (before)"][1]
    print(f"CPU of odin exec -- true, after / before = {a:.2f} / {b:.2f} ms = {a / b:.2f}x (target <= 0.5)")
PY
