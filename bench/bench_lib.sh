# Shared by the shell benchmarks (source it): median CMD... prints the
# median, in ms, of $rounds runs of the command, its output discarded.
median() {
  local t=()
  for _ in $(seq "$rounds"); do
    local s e
    s=$(date +%s%N)
    "$@" > /dev/null 2>&1 || true
    e=$(date +%s%N)
    t+=($(( (e - s) / 1000 )))
  done
  printf '%s\n' "${t[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]/1000}'
}
