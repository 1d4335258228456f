#!/usr/bin/env bash
# Starts and stops a real single-node Slurm cluster on this machine, so that the tests of `--executor slurm` can
# submit `evoteam worker` jobs with the real sbatch, squeue and scancel instead of a mock. Written for Debian 12
# (slurm-wlm 22.05) as root on a machine without systemd: the daemons are started by hand.
#
#   tests/slurm/cluster.sh start     install slurmctld/slurmd/munge if missing, start the cluster, wait for the node
#   tests/slurm/cluster.sh stop      cancel every job, stop the daemons (and munged, if this script started it)
#   tests/slurm/cluster.sh status    print sinfo; exit 1 when the cluster does not answer
#
#   EVOTEAM_SLURM_DIR   state, logs, config and pid files (default /tmp/evoteam-slurm); source $DIR/env for SLURM_CONF
#   FAKE_GPUS           GPUs the node advertises as GRES (default 2); they are character devices, not GPUs, but
#                       `--gres=gpu:N` sets CUDA_VISIBLE_DEVICES as on a real GPU node. 0: a CPU-only node.
#   MIN_JOB_AGE         seconds a finished job stays known to `squeue -t all` and `scontrol show job` (default 300,
#                       Slurm's own); slurmctld purges on a 60 s tick, so it goes between MIN_JOB_AGE and +60 s.
#
# The daemons listen on 16817 (slurmctld) and 16818 (slurmd), not Slurm's 6817/6818, so that they cannot collide
# with a site's Slurm on the same host; clients find them only through SLURM_CONF. Two partitions:
#   debug   the default, up, no time limit: where the tests' jobs run;
#   down    State=DOWN: sbatch accepts a job there but it stays PENDING (reason PartitionDown) until cancelled,
#           which lets tests hold a job in the queue for as long as they need.
set -euo pipefail

DIR=${EVOTEAM_SLURM_DIR:-/tmp/evoteam-slurm}
FAKE_GPUS=${FAKE_GPUS:-2}
MIN_JOB_AGE=${MIN_JOB_AGE:-300}
CTLD_PORT=16817
SLURMD_PORT=16818
export SLURM_CONF=$DIR/slurm.conf
started=""  # what this start had to install or start besides the Slurm daemons, for its report

say() { echo "[slurm-cluster] $*" >&2; }
now() { echo "$EPOCHREALTIME"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", b - a }'; }

# Pid files outlive crashes, and pids are reused: only a live process with the expected name counts.
running_pid() { # pidfile name
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && echo "$pid"
}

any_alive() { # pid...
  local pid
  for pid; do kill -0 "$pid" 2>/dev/null && return 0; done
  return 1
}

# Sends SIGTERM to every pid given, waits up to $1 tenths of a second for all of them to exit, then kills the rest.
stop_pids() { # tenths pid...
  local tenths=$1 i
  shift
  (($#)) || return 0
  kill "$@" 2>/dev/null || true
  for ((i = 0; i < tenths; i++)); do
    any_alive "$@" || return 0
    sleep 0.1
  done
  kill -9 "$@" 2>/dev/null || true
}

node_state() { timeout 5 sinfo -h -N -o %T 2>/dev/null | head -1 || true; }

# A node that is draining or not responding (idle*) is not ready to run jobs, so it does not count as up.
healthy() {
  running_pid "$DIR/slurmctld.pid" slurmctld >/dev/null && running_pid "$DIR/slurmd.pid" slurmd >/dev/null &&
    case "$(node_state)" in idle | mixed | allocated | completing) true ;; *) false ;; esac
}

install_packages() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null &&
    command -v munged >/dev/null && return 0
  export DEBIAN_FRONTEND=noninteractive
  # apt chatters on stderr even when quiet (debconf without apt-utils): keep its output unless it fails.
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge; } \
    >"$DIR/apt.log" 2>&1; then
    tail -20 "$DIR/apt.log" >&2
    say "could not install Slurm (log: $DIR/apt.log)"
    return 1
  fi
  started+="apt-get install of slurmctld slurmd slurm-client munge, "
}

# Reuses a munged that already answers (a site's, or one left by someone else) and stops only the one it started.
start_munge() {
  local i
  if munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then return 0; fi
  # Debian's postinst creates the key; an image built without running it may lack one.
  [ -s /etc/munge/munge.key ] || mungekey --create --keyfile=/etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key
  chmod 400 /etc/munge/munge.key
  install -d -o munge -g munge -m 755 /run/munge
  runuser -u munge -- /usr/sbin/munged
  cp /run/munge/munged.pid "$DIR/munged.pid"
  started+="munged, "
  for ((i = 0; i < 50; i++)); do
    munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  say "munged does not answer"
  return 1
}

# Writes slurm.conf and gres.conf as they would be for the current settings into $1.
write_config() { # dir
  local host cpus mem_mb gres_types="" node_gres=""
  host=$(hostname -s)
  cpus=$(nproc)
  mem_mb=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) / 1024 - 1024))
  ((mem_mb > 0)) || mem_mb=1
  : >"$1/gres.conf"
  if ((FAKE_GPUS > 0)); then
    gres_types=GresTypes=gpu
    node_gres=Gres=gpu:$FAKE_GPUS
    # A gpu without File= is dropped by slurmd, and File= must name character devices: these are /dev/null's.
    printf 'AutoDetect=off\nNodeName=%s Name=gpu File=%s/fakegpu[0-%d]\n' "$host" "$DIR" $((FAKE_GPUS - 1)) \
      >"$1/gres.conf"
  fi
  # SlurmctldHost and NodeAddr pin everything to 127.0.0.1 so that no DNS lookup of the host name is needed.
  # batch_sched_delay=0: batch jobs otherwise wait up to 3 s before being scheduled. KillWait=5 bounds how long
  # a cancelled job that ignores SIGTERM keeps the node busy. jobcomp/filetxt keeps a record of every finished job
  # after MinJobAge, without a database.
  cat >"$1/slurm.conf" <<CONF
ClusterName=evoteam
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
KillWait=5
MinJobAge=$MIN_JOB_AGE
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
$gres_types
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb $node_gres State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=down Nodes=ALL MaxTime=INFINITE State=DOWN
CONF
}

# Leaves nothing running: a half-started cluster would only confuse the next start.
fail_start() {
  local log
  say "$1"
  for log in slurmctld slurmd; do
    if [ -s "$DIR/log/$log.log" ]; then
      echo "--- $DIR/log/$log.log" >&2
      tail -20 "$DIR/log/$log.log" >&2
    fi
  done
  stop_cluster quiet
  exit 1
}

start() {
  local t0 i state="" new deadline
  t0=$(now)
  # Compare against the running cluster's config, so that a changed FAKE_GPUS or MIN_JOB_AGE restarts it.
  if [ -d "$DIR" ] && healthy; then
    new=$(mktemp -d)
    write_config "$new"
    if cmp -s "$new/slurm.conf" "$DIR/slurm.conf" && cmp -s "$new/gres.conf" "$DIR/gres.conf"; then
      rm -rf "$new"
      say "already running (SLURM_CONF=$SLURM_CONF), checked in $(since "$t0")"
      return 0
    fi
    rm -rf "$new"
    say "settings changed: restarting"
  fi
  # Whatever is left of an earlier cluster (a daemon that died, a stale pid file) is cleared first.
  stop_cluster quiet
  mkdir -p "$DIR"
  install_packages
  rm -rf "${DIR:?}"/{state,spool,log}
  mkdir -p "$DIR"/{state,spool,log}
  start_munge
  for ((i = 0; i < FAKE_GPUS; i++)); do
    [ -c "$DIR/fakegpu$i" ] || mknod "$DIR/fakegpu$i" c 1 3
  done
  write_config "$DIR"
  printf 'export SLURM_CONF=%q\n' "$SLURM_CONF" >"$DIR/env"

  # Both daemonize once their pid file is written. -c: no job survives from an earlier run.
  slurmctld -c -f "$SLURM_CONF" || fail_start "slurmctld did not start"
  slurmd -f "$SLURM_CONF" || fail_start "slurmd did not start"
  deadline=$((SECONDS + 30))
  while :; do
    # A slurmctld that cannot bind its port dies after daemonizing; sinfo would only time out.
    running_pid "$DIR/slurmctld.pid" slurmctld >/dev/null || fail_start "slurmctld exited"
    state=$(node_state)
    case "$state" in idle | mixed | allocated) break ;; esac
    ((SECONDS < deadline)) || fail_start "node not idle after 30 s (state: ${state:-none})"
    sleep 0.1
  done
  say "started ${started}slurmctld :$CTLD_PORT and slurmd :$SLURMD_PORT ($FAKE_GPUS fake GPUs) in $(since "$t0");" \
    "source $DIR/env"
}

# Left to themselves, slurmstepd processes outlive slurmd. Ours carry our SLURM_CONF in their environment (slurmd
# passes its own on), which tells them apart from a site's.
our_stepds() {
  local pid
  for pid in $(pgrep -x slurmstepd || true); do
    tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$SLURM_CONF" && echo "$pid"
  done
  return 0
}

stop_cluster() { # [quiet]
  local t0 pid i jobs name daemons
  t0=$(now)
  if [ -f "$SLURM_CONF" ] && running_pid "$DIR/slurmctld.pid" slurmctld >/dev/null; then
    # Cancelling first lets slurmd end each job's processes and steps; killing the daemons would orphan them.
    jobs=$(timeout 5 squeue -h -o %i 2>/dev/null || true)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086  # one job id per word
      timeout 5 scancel $jobs 2>/dev/null || true
      for ((i = 0; i < 100; i++)); do
        [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null || true)" ] && break
        sleep 0.1
      done
    fi
  fi
  # Each daemon takes about 2 s to wind down, so both go at once; munged goes last, as they may still need it.
  daemons=()
  for name in slurmd slurmctld; do
    if pid=$(running_pid "$DIR/$name.pid" "$name"); then daemons+=("$pid"); fi
  done
  stop_pids 50 "${daemons[@]}"
  for pid in $(our_stepds); do kill -9 "$pid" 2>/dev/null || true; done
  if pid=$(running_pid "$DIR/munged.pid" munged); then stop_pids 50 "$pid"; fi
  rm -f "$DIR/munged.pid" "$DIR/slurmd.pid" "$DIR/slurmctld.pid"
  [ "${1:-}" = quiet ] || say "stopped in $(since "$t0")"
}

status() {
  if [ -f "$SLURM_CONF" ] && timeout 5 sinfo 2>/dev/null; then return 0; fi
  say "not running ($DIR)"
  return 1
}

case "${1:-}" in
  start) start ;;
  stop) stop_cluster ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
