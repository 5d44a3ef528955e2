#!/usr/bin/env bash
# What a Read deny rule costs on the user's path: `odin exec -- true` in a
# workspace of FILES files (default 100,000 in 400 directories) with no
# rule, with Read(./.env) (one look), with Read(.env) (a walk of the whole
# tree for its masks) and with Read(./d7/**/*.key) (a walk of one
# directory), in .claude/settings.json. Prints each one's median of ROUNDS
# runs and its ratio to the floors measured in the same run: `bash -c true`
# and a bare bubblewrap.
#
#   bench/read_rules_bench.sh [BUILD_DIR] [FILES] [ROUNDS]
set -euo pipefail

build=$(cd "${1:-$(dirname "$0")/../build}" && pwd)
files=${2:-100000}
rounds=${3:-9}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ws="$work/ws"
mkdir -p "$ws" && git -C "$ws" init -q
python3 - "$ws" "$files" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
dirs = 400
for d in range(dirs):
    os.makedirs(f"{root}/d{d}", exist_ok=True)
    for f in range(n // dirs):
        open(f"{root}/d{d}/f{f}.txt", "w").close()
PY
export XDG_CONFIG_HOME="$work/config" XDG_STATE_HOME="$work/state" CLAUDE_CONFIG_DIR="$work/claude"

# median CMD...: the median, in ms, of ROUNDS runs.
source "$(dirname "$0")/bench_lib.sh"

bash_floor=$(median bash -c true)
bwrap_floor=$(median bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all true)
(cd "$ws" && "$build/bin/odin" exec -- true > /dev/null 2>&1 || true)  # the ledger, the index: made once
printf '%-34s %10s %10s %10s\n' "odin exec -- true, $files files" "ms" "/bash" "/bwrap"
printf '%-34s %10s\n' "bash -c true" "$bash_floor"
printf '%-34s %10s\n' "bwrap ... true" "$bwrap_floor"
for rule in "" "Read(./.env)" "Read(.env)" "Read(./d7/**/*.key)"; do
  rm -rf "$ws/.claude"
  if [ -n "$rule" ]; then
    mkdir -p "$ws/.claude"
    printf '{"permissions": {"deny": ["%s"]}}\n' "$rule" > "$ws/.claude/settings.json"
  fi
  ms=$(cd "$ws" && median "$build/bin/odin" exec -- true)
  printf '%-34s %10s %10.1f %10.1f\n' "${rule:-no rule}" "$ms" "$(echo "$ms / $bash_floor" | bc -l)" \
    "$(echo "$ms / $bwrap_floor" | bc -l)"
done
