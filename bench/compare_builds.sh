#!/usr/bin/env bash
# Two builds of Odin on the user's path, interleaved in one run on one
# machine: odin_bench's cold start (`odin exec -- true`) and agent session
# (`odin -p` against the fake model: start to first request, per call,
# final answer to exit), BEFORE and AFTER alternating ROUNDS times. Prints,
# per figure, the median of each build's round medians, the rounds'
# min-max, and AFTER/BEFORE. For a change that must not cost anything
# (issue 48's restructuring): keep a copy of build/bin before it.
#
#   bench/compare_builds.sh BEFORE_BIN_DIR AFTER_BIN_DIR [ROUNDS]
set -euo pipefail
before=${1:?before: a bin directory with odin_bench, odin and the workers}
after=${2:?after: a bin directory}
rounds=${3:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
args=(--calls 0 --starts 10 --tree 0 --ledger 0 --sessions 3 --daemon 0 --validations 0 --guards 0 --subagents 0
      --long 0 --hooks 0 --reviewers 0 --mcp 0 --web 0 --index 0)
for ((i = 0; i < rounds; i++)); do
  "$before/odin_bench" "${args[@]}" >"$out/before.$i" 2>&1
  "$after/odin_bench" "${args[@]}" >"$out/after.$i" 2>&1
done
python3 - "$out" "$rounds" <<'PY'
import re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
figures = [("odin exec -- true", r"^\s+odin exec -- true\s+median\s+([\d.]+) ms"),
           ("start to first model request", r"start to first model request\s+median\s+([\d.]+) ms"),
           ("per call (true, read-only view)", r"per call, answer to next request \(server side\) median\s+([\d.]+) ms"),
           ("per call (commands that write)", r"commands that write \(echo N > out.txt\) median\s+([\d.]+) ms"),
           ("final answer to exit", r"final answer to exit \(odin reaped\)\s+median\s+([\d.]+) ms")]
def values(build, pattern):
    got = []
    for i in range(rounds):
        m = re.search(pattern, open(f"{out}/{build}.{i}").read(), re.M)
        if m: got.append(float(m.group(1)))
    return got
print(f"{'figure (ms, median of %d rounds)' % rounds:40} {'before':>8} {'min-max':>15} {'after':>8} {'min-max':>15} {'after/before':>12}")
for name, pattern in figures:
    b, a = values("before", pattern), values("after", pattern)
    if not b or not a:
        print(f"{name:40} missing"); continue
    mb, ma = statistics.median(b), statistics.median(a)
    print(f"{name:40} {mb:8.2f} {min(b):7.2f}-{max(b):<7.2f} {ma:8.2f} {min(a):7.2f}-{max(a):<7.2f} {ma / mb:12.3f}")
PY
