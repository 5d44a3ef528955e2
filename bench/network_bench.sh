#!/usr/bin/env bash
# The commands' network proxy (sandbox.network's rules) on the user's path:
# `odin exec` running curl against a server on the host, interleaved in one
# run beside floors measured in the same rounds. Prints medians (ms) and:
#   odin exec, 20 fetches through the proxy (allowed.test) / --network, the
#     same 20 fetches direct: what the proxy costs a command that uses it;
#   odin exec -- true with the rules / without: what starting the proxy
#     (and making the namespace, which odin exec otherwise skips) adds;
#   20 fetches by curl run directly / bash -c true (the floor).
# Absolute times swing between days on shared machines: read the ratios.
# Never run in CI.
#
#   bench/network_bench.sh [BIN_DIR] [RUNS]
set -euo pipefail
source "$(dirname "$0")/bench_lib.sh"

bin=$(cd "${1:-$(dirname "$0")/../build/bin}" && pwd)
runs=${2:-15}
work=$(mktemp -d -p "$(dirname "$bin")")
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/ws" "$work/site" "$work/plain/odin" "$work/rules/odin"
git -C "$work/ws" init -q
echo hello > "$work/site/hello"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$work/site" && exec python3 -m http.server "$port" --bind 127.0.0.1 > /dev/null 2>&1) &
until curl -s "http://127.0.0.1:$port/hello" > /dev/null; do sleep 0.05; done
echo '{}' > "$work/plain/odin/odinconfig.json"
cat > "$work/rules/odin/odinconfig.json" <<JSON
{"sandbox": {"network": {"allow": ["allowed.test:$port"], "hosts": {"allowed.test": "127.0.0.1"}}},
 "web": {"allow_private": ["allowed.test:$port"]}}
JSON
fetches() { local url=$1; printf 'for i in $(seq 20); do curl -sf %s > /dev/null || exit 1; done' "$url"; }

in_ws() { (cd "$work/ws" && XDG_CONFIG_HOME="$work/$1" XDG_STATE_HOME="$work/state" "${@:2}"); }

proxied=$(fetches "http://allowed.test:$port/hello")
direct=$(fetches "http://127.0.0.1:$port/hello")
for f in proxy network rules_true plain_true curl bash; do : > "$work/$f"; done
for i in $(seq "$runs"); do
  time_cmd in_ws rules "$bin/odin" exec -- bash -c "$proxied" >> "$work/proxy"
  time_cmd in_ws plain "$bin/odin" --network exec -- bash -c "$direct" >> "$work/network"
  time_cmd in_ws rules "$bin/odin" exec -- true >> "$work/rules_true"
  time_cmd in_ws plain "$bin/odin" exec -- true >> "$work/plain_true"
  time_cmd bash -c "$direct" >> "$work/curl"
  time_cmd bash -c true >> "$work/bash"
done
m() { median_of < "$work/$1"; }
printf '%-62s %8s\n' "median of $runs runs, interleaved" "ms"
printf '%-62s %8s\n' "odin exec, 20 curl fetches through the proxy (rules)" "$(m proxy)"
printf '%-62s %8s\n' "odin --network exec, the same 20 fetches direct" "$(m network)"
printf '%-62s %8s\n' "odin exec -- true, with sandbox.network's rules" "$(m rules_true)"
printf '%-62s %8s\n' "odin exec -- true, without" "$(m plain_true)"
printf '%-62s %8s\n' "20 curl fetches run directly" "$(m curl)"
printf '%-62s %8s\n' "bash -c true" "$(m bash)"
awk -v a="$(m proxy)" -v b="$(m network)" 'BEGIN {printf "ratio: through the proxy / --network           %.2fx\n", a / b}'
awk -v a="$(m rules_true)" -v b="$(m plain_true)" 'BEGIN {printf "ratio: exec true, rules / no rules             %.2fx\n", a / b}'
awk -v a="$(m proxy)" -v b="$(m curl)" 'BEGIN {printf "ratio: through the proxy / curl run directly   %.2fx\n", a / b}'
