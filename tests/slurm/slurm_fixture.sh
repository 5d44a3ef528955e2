#!/usr/bin/env bash
# slurm_fixture.sh - a private, single-node Slurm cluster for tests.
#
# Usage:
#   slurm_fixture.sh install     apt-get install slurmctld slurmd slurm-client
#                                munge if any is missing (root only; exit 77 =
#                                "skip" when not root and packages missing).
#   slurm_fixture.sh start DIR   DIR: an existing empty dir (mktemp -d). Starts
#                                munged + slurmctld + slurmd that use only files
#                                under DIR, waits until the node is idle and
#                                prints exactly one stdout line:
#                                  SLURM_CONF=DIR/slurm.conf
#                                Exit 77 = skip (not root / packages missing).
#   slurm_fixture.sh stop DIR    Kills that fixture's daemons, its slurmstepds
#                                and their job processes; waits until gone.
#
# How the gtest uses it: `install`, then `start "$(mktemp -d)"`, read the
# SLURM_CONF=... line, export it for srun/squeue/scancel (that variable alone
# is enough: the munge socket comes from AuthInfo in slurm.conf), and `stop
# DIR` in TearDown. Everything except that one line goes to stderr, and the
# daemons never inherit the caller's stdout/stderr, so reading the output
# until EOF (popen) returns as soon as this script exits.
#
# Non-obvious choices:
# - Never touches the system daemons or /etc/{munge,slurm}: every daemon
#   gets explicit socket/key/pid/log/state/spool paths, random ports and a
#   unique ClusterName, so several fixtures (and a real Slurm) can coexist.
# - Every daemon is started with ODIN_SLURM_FIXTURE=DIR in its environment.
#   slurmd passes its environment on to the slurmstepd it forks, so `stop`
#   finds exactly this fixture's processes (including stepds, which have
#   no pid file) by that marker, and never another fixture's.
# - DIR is chmod 0711: munged refuses a socket whose directory is not
#   searchable by everybody ("execute permissions for all required").
# - Unix socket paths are limited to 108 bytes; the munge socket and the
#   slurmd spool dir (slurmstepd puts a socket "<node>_<job>.<step>" there)
#   move to a short mktemp -d /tmp/odin-slurm.XXXXXX dir (symlinked as
#   DIR/run, removed by `stop`) when DIR is too long.
# - No cgroup plugin anywhere (proctrack/linuxproc, task/none,
#   jobacct_gather/none): the same config works on cgroup v1 and v2 hosts.
#   But slurmd 22.05 still initialises its cgroup layer (it has no
#   CgroupPlugin=disabled): with no cgroup filesystem mounted at all (a
#   bare chroot) `start` skips (77), saying so; on v2 (untested here: this
#   machine runs v1) a cgroup.conf with IgnoreSystemd=yes lets slurmd make
#   its own cgroup directories outside systemd.
# - SlurmctldHost=<short hostname>(127.0.0.1) and NodeAddr=127.0.0.1: the
#   name must match hostname -s (slurmctld checks it is the controller),
#   the address avoids depending on how /etc/hosts resolves the host name.
# - KillWait=5: scancel makes slurmd send SIGTERM, then SIGKILL after
#   max(KillWait, 5) s (22.05 req.c hard-codes the 5 s minimum; ~4.7 s in
#   practice). srun only waits KillWait+2 s for the killed step: with
#   KillWait=2 it gives up at 4 s, before the SIGKILL, and exits 0 for a job
#   that ignores SIGTERM. With 5 it sees the kill (exit 137) at ~4.7 s.
#   (Default KillWait is 30 s.)
# - ReturnToService=2: the node becomes idle as soon as slurmd registers.
# - PlugStackConfig points to an empty file in DIR so /etc/slurm/plugstack.conf
#   (SPANK plugins of the host) is not loaded; MailProg=/bin/true because
#   Debian does not ship /bin/mail by default.
set -euo pipefail

# Only the SLURM_CONF line goes to the real stdout (fd 3); all else to stderr.
exec 3>&1 1>&2

PKGS=(slurmctld slurmd slurm-client munge)
MARKER=ODIN_SLURM_FIXTURE
log() { printf 'slurm_fixture: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

missing_pkgs() {
  local p st
  for p in "${PKGS[@]}"; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [[ $st == installed ]] || printf '%s\n' "$p"
  done
}

# Pids (not zombies) of processes whose comm is one of the daemon names.
daemon_pids() {
  ps -e -o pid=,stat=,comm= |
    awk '$2 !~ /^Z/ && $3 ~ /^(munged|slurmctld|slurmd|slurmstepd|slurmdbd)$/ {print $1}' |
    sort -n
}

cmd_install() {
  local missing
  mapfile -t missing < <(missing_pkgs)
  if ((${#missing[@]} == 0)); then
    log "packages already installed: ${PKGS[*]}"
    return 0
  fi
  if ((EUID != 0)); then
    log "skip: Slurm packages missing (${missing[*]}) and not root, cannot install"
    exit 77
  fi
  # Keep the packages' postinst from starting munge/slurm daemons.
  local policy=/usr/sbin/policy-rc.d before
  POLICY_BACKUP=""
  if [[ -e $policy || -L $policy ]]; then
    POLICY_BACKUP=$(mktemp)
    cp -a "$policy" "$POLICY_BACKUP"
  fi
  restore_policy() {
    if [[ -n $POLICY_BACKUP ]]; then
      cp -a "$POLICY_BACKUP" /usr/sbin/policy-rc.d && rm -f "$POLICY_BACKUP"
    else
      rm -f /usr/sbin/policy-rc.d
    fi
  }
  trap restore_policy EXIT
  printf '#!/bin/sh\n# temporary, from slurm_fixture.sh install\nexit 101\n' >"$policy"
  chmod 755 "$policy"

  before=$(daemon_pids | tr '\n' ' ')
  # apt-get update only if the package lists do not know the packages.
  if ! apt-cache show "${missing[@]}" >/dev/null 2>&1; then
    apt-get update -qq
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
  restore_policy
  trap - EXIT

  # Belt and braces: stop any daemon a postinst started despite policy-rc.d.
  local p started=()
  for p in $(daemon_pids); do
    [[ " $before " == *" $p "* ]] || started+=("$p")
  done
  if ((${#started[@]})); then
    log "stopping daemons started by package install: ${started[*]}"
    kill -TERM "${started[@]}" 2>/dev/null || true
    if ! wait_gone 10 "${started[@]}"; then
      # shellcheck disable=SC2046
      kill -KILL $(alive_pids "${started[@]}") 2>/dev/null || true
    fi
  fi
  local miss
  miss=$(missing_pkgs | tr '\n' ' ')
  [[ -z $miss ]] || die "packages still missing after install: $miss"
}

# Prints the pids among "$@" that still run (zombies count as gone: PID 1 in
# some containers reaps orphans late). Returns 1 if none runs.
alive_pids() {
  (($#)) || return 1
  local out
  out=$(ps -o pid=,stat= -p "$(IFS=,; echo "$*")" 2>/dev/null |
          awk '$2 !~ /^Z/ {print $1}' || true)
  [[ -n $out ]] || return 1
  echo "$out"
}

# wait_gone SECS PID...: waits until none of the pids runs; 1 on timeout.
wait_gone() {
  local n=$(($1 * 5)); shift
  while alive_pids "$@" >/dev/null; do
    ((n-- > 0)) || return 1
    sleep 0.2
  done
}

# Pids of processes started with MARKER=DIR in their environment.
marked_pids() {
  local dir=$1 e pid
  for e in /proc/[0-9]*/environ; do
    pid=${e#/proc/}; pid=${pid%/environ}
    [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
    grep -qzxF "$MARKER=$dir" "$e" 2>/dev/null && echo "$pid"
  done
  return 0
}

# All descendants of the given pids (job tasks under slurmstepd).
descendants() {
  (($# == 0)) && return 0
  ps -e -o pid=,ppid= | awk -v roots="$*" '
    BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) want[r[i]] = 1 }
    { kids[$2] = kids[$2] " " $1 }
    END {
      for (i = 1; i <= n; i++) queue[++q] = r[i]
      for (h = 1; h <= q; h++) {
        m = split(kids[queue[h]], k, " ")
        for (j = 1; j <= m; j++) if (!(k[j] in want)) { want[k[j]] = 1; queue[++q] = k[j]; print k[j] }
      }
    }'
}

need_dir() {
  [[ $# -ge 1 && -n $1 ]] || die "missing DIR argument"
  [[ -d $1 ]] || die "$1 is not a directory"
  (cd "$1" && pwd -P)
}

# Sets PORT to a free TCP port not picked before (no subshell: USED_PORTS).
pick_port() {
  local port tries=0
  while :; do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 12000))
    # 20000-31999: below Linux's ephemeral range (32768+), not in use.
    if [[ " ${USED_PORTS:-} " != *" $port "* ]] &&
       [[ -z $(ss -Htan "( sport = :$port )" 2>/dev/null) ]]; then
      USED_PORTS="${USED_PORTS:-} $port"
      PORT=$port
      return 0
    fi
    ((++tries < 200)) || die "no free TCP port found"
  done
}

show_logs() {
  local dir=$1 f
  for f in munged.log slurmctld.log slurmd.log munged.stdio slurmctld.stdio slurmd.stdio; do
    [[ -s $dir/$f ]] || continue
    log "---- tail of $dir/$f"
    tail -n 25 "$dir/$f" >&2 || true
  done
}

start_failed() {
  log "start failed: $*"
  show_logs "$DIR"
  cmd_stop "$DIR" || true
  exit 1
}

cmd_start() {
  DIR=$(need_dir "$@")
  if ((EUID != 0)); then
    log "skip: the Slurm fixture needs root (slurmd must run as root)"
    exit 77
  fi
  local miss
  miss=$(missing_pkgs | tr '\n' ' ')
  if [[ -n $miss ]]; then
    log "skip: Slurm packages missing ($miss); run '$0 install' as root"
    exit 77
  fi
  [[ ! -e $DIR/slurm.conf ]] || die "$DIR already holds a fixture"
  # slurmd 22.05 initialises its cgroup plugin whatever the config says (it
  # has no CgroupPlugin=disabled): without a cgroup filesystem at
  # /sys/fs/cgroup it cannot start. Say so rather than fail.
  local cgfs
  cgfs=$(stat -fc %T /sys/fs/cgroup 2>/dev/null || true)
  if [[ $cgfs != cgroup2fs && $cgfs != tmpfs && $cgfs != cgroupfs ]]; then
    log "skip: slurmd (Slurm 22.05) needs a cgroup filesystem at /sys/fs/cgroup, and none is mounted here (${cgfs:-nothing})"
    exit 77
  fi

  local host
  host=$(hostname -s 2>/dev/null || true)
  [[ -n $host ]] || host=$(hostname)
  host=${host%%.*}

  # munged requires every directory above its socket to be searchable.
  chmod 0711 "$DIR"
  local run=$DIR
  # Longest socket: <run>/spool/<host>_<jobid>.<stepid> (ids up to 10 digits).
  if (( ${#DIR} + ${#host} + 30 > 107 )); then
    run=$(mktemp -d /tmp/odin-slurm.XXXXXX)
    chmod 0711 "$run"
    ln -s "$run" "$DIR/run"
    log "DIR too long for unix sockets; munge socket and spool are in $run"
  fi
  mkdir -p "$DIR/state" "$run/spool"
  chmod 0755 "$run/spool"
  : >"$DIR/plugstack.conf"

  # --- munge -------------------------------------------------------------
  if command -v mungekey >/dev/null; then
    mungekey --create --keyfile="$DIR/munge.key"
  else
    dd if=/dev/urandom of="$DIR/munge.key" bs=1 count=1024 status=none
  fi
  chmod 0600 "$DIR/munge.key"
  # munged daemonizes itself and returns once its socket is ready.
  # --force: tolerate "insecure" parent dirs (e.g. a group-writable TMPDIR).
  env "$MARKER=$DIR" setsid -w munged --force \
    --socket="$run/munge.sock" --key-file="$DIR/munge.key" \
    --pid-file="$DIR/munged.pid" --log-file="$DIR/munged.log" \
    --seed-file="$DIR/munged.seed" \
    </dev/null >>"$DIR/munged.stdio" 2>&1 3>&- ||
    start_failed "munged did not start"
  munge -n -S "$run/munge.sock" | unmunge -S "$run/munge.sock" >/dev/null ||
    start_failed "munge round trip failed"

  # --- slurm.conf --------------------------------------------------------
  local cpus mem_mb topo="" ctl_port d_port cluster
  cpus=$(nproc)
  mem_mb=$(( $(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024 ))
  # Use slurmd's own view of the topology when it agrees with nproc, so
  # slurmd registers without "configuration differs from hardware" noise.
  local c
  c=$(slurmd -C 2>/dev/null | head -n 1 || true)
  if [[ $c =~ CPUs=([0-9]+)\ Boards=([0-9]+)\ SocketsPerBoard=([0-9]+)\ CoresPerSocket=([0-9]+)\ ThreadsPerCore=([0-9]+)\ RealMemory=([0-9]+) ]]; then
    if [[ ${BASH_REMATCH[1]} == "$cpus" ]]; then
      topo="Boards=${BASH_REMATCH[2]} SocketsPerBoard=${BASH_REMATCH[3]} CoresPerSocket=${BASH_REMATCH[4]} ThreadsPerCore=${BASH_REMATCH[5]}"
    fi
    ((BASH_REMATCH[6] < mem_mb)) && mem_mb=${BASH_REMATCH[6]}
  fi
  # "A bit less" than the memory slurmd will detect, or the node drains
  # with "Low RealMemory".
  local mem=$(( mem_mb - mem_mb / 20 ))
  ((mem >= 200)) || mem=$(( mem_mb > 1 ? mem_mb - 1 : 1 ))
  pick_port; ctl_port=$PORT
  pick_port; d_port=$PORT
  cluster="odin$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')"

  # cgroup v2 (a stock Debian 12): slurmd runs outside systemd here, so it
  # must make its own cgroup directories rather than ask systemd for a scope.
  if [[ $cgfs == cgroup2fs ]]; then
    printf 'CgroupPlugin=autodetect\nIgnoreSystemd=yes\n' >"$DIR/cgroup.conf"
  fi
  cat >"$DIR/slurm.conf" <<EOF
# Generated by slurm_fixture.sh for a private test cluster.
ClusterName=$cluster
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctl_port
SlurmdPort=$d_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$run/munge.sock
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$run/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$DIR/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus $topo RealMemory=$mem State=UNKNOWN
PartitionName=odin Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

  # --- slurm daemons -----------------------------------------------------
  # Both daemonize; fds are redirected so the caller's pipes are not held.
  export SLURM_CONF=$DIR/slurm.conf
  env "$MARKER=$DIR" setsid -w slurmctld -f "$DIR/slurm.conf" \
    </dev/null >>"$DIR/slurmctld.stdio" 2>&1 3>&- ||
    start_failed "slurmctld did not start"
  env "$MARKER=$DIR" setsid -w slurmd -f "$DIR/slurm.conf" -N "$host" \
    </dev/null >>"$DIR/slurmd.stdio" 2>&1 3>&- ||
    start_failed "slurmd did not start"

  local state="" deadline=$((SECONDS + 30)) d
  while ((SECONDS < deadline)); do
    state=$(timeout 5 sinfo -h -N -n "$host" -o '%T' 2>/dev/null || true)
    [[ $state == idle ]] && break
    # A drained/invalid node (e.g. "Low RealMemory") never becomes idle.
    [[ $state == *drain* || $state == inval* ]] &&
      start_failed "node $host is '$state': $(sinfo -h -R -o '%E' 2>/dev/null || true)"
    for d in slurmctld slurmd; do
      [[ -s $DIR/$d.pid ]] && ! alive_pids "$(tr -dc '0-9' <"$DIR/$d.pid")" >/dev/null &&
        start_failed "$d exited"
    done
    sleep 0.5
  done
  [[ $state == idle ]] || start_failed "node $host not idle after 30 s (state '${state}')"
  log "cluster $cluster up: slurmctld :$ctl_port, slurmd :$d_port, node $host idle"
  echo "SLURM_CONF=$DIR/slurm.conf" >&3
}

cmd_stop() {
  [[ $# -ge 1 && -n $1 ]] || die "missing DIR argument"
  local dir=$1
  # DIR already removed: still look for daemons marked with that path.
  [[ -d $dir ]] && dir=$(cd "$dir" && pwd -P)
  local pids=() p f
  # Daemons by pid file, but only if that pid really is this fixture's.
  for f in munged slurmctld slurmd; do
    [[ -s $dir/$f.pid ]] || continue
    p=$(tr -dc '0-9' <"$dir/$f.pid")
    [[ -n $p ]] && grep -qzxF "$MARKER=$dir" "/proc/$p/environ" 2>/dev/null &&
      pids+=("$p")
  done
  # Plus everything else carrying the marker (slurmstepd, slurmscriptd).
  mapfile -t pids < <({ printf '%s\n' "${pids[@]}"; marked_pids "$dir"; } |
                        grep . | sort -nu)
  local jobs=() stepds=()
  mapfile -t jobs < <(descendants "${pids[@]}")
  mapfile -t stepds < <(for p in "${pids[@]}"; do
    [[ $(cat "/proc/$p/comm" 2>/dev/null) == slurmstepd ]] && echo "$p"; done)
  # 1. SIGKILL the job tasks under this fixture's stepds; give the stepds a
  #    moment to report that to their srun (which then exits 137) and exit.
  if ((${#jobs[@]})); then
    kill -KILL "${jobs[@]}" 2>/dev/null || true
    wait_gone 3 "${stepds[@]}" "${jobs[@]}" || true
  fi
  # 2. The daemons (and any stepd left): SIGTERM, then SIGKILL.
  local all=("${pids[@]}" "${jobs[@]}") left
  if ((${#pids[@]})); then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    if ! wait_gone 10 "${all[@]}"; then
      left=$(alive_pids "${all[@]}" | tr '\n' ' ')
      log "SIGKILL to processes that ignored SIGTERM: $left"
      # shellcheck disable=SC2086
      kill -KILL $left 2>/dev/null || true
      wait_gone 5 "${all[@]}" ||
        die "fixture processes still alive: $(alive_pids "${all[@]}" | tr '\n' ' ')"
    fi
  fi
  if [[ -L $dir/run ]]; then
    local run
    run=$(readlink "$dir/run")
    [[ $run == /tmp/odin-slurm.* ]] && rm -rf -- "$run"
    rm -f "$dir/run"
  fi
  log "fixture in $dir stopped (${#pids[@]} daemon/stepd processes, ${#jobs[@]} job processes)"
}

case "${1:-}" in
  install) cmd_install ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  *) log "usage: $0 install | start DIR | stop DIR"; exit 2 ;;
esac
