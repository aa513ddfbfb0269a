# Sourced by tests that need a real Slurm: a private single-node cluster on
# localhost (munged, slurmctld, slurmd) whose every file lives in one
# folder, started and stopped by the test.  Needs munge, slurmctld and
# slurmd (Debian: munge slurm-wlm) and python3; one cluster per shell.
#
#   slurm_start DIR   sets up and starts the cluster in DIR (created if
#                     missing); exports SLURM_CONF=DIR/slurm.conf, so sbatch,
#                     squeue, scontrol and scancel talk to it.  Returns 0 when
#                     the node shows idle in sinfo; otherwise prints why on
#                     stderr (with the daemons' log tails), stops what it
#                     started and returns 1 (the caller skips with that
#                     reason).  SLURM_SKIP_REASON holds the one-line reason.
#   slurm_wait_jobs JOBID... [Ns]
#                     waits until each job (every task of an array job) has
#                     ended, at most N seconds (default 120, or
#                     TG_SLURM_WAIT), then prints one line per job or task:
#                       slurm: JOBID STATE exit=CODE:SIGNAL reason=REASON
#                     and returns 0 only when all COMPLETED with exit 0:0.
#   slurm_job_states JOBID
#                     prints "JOBID STATE CODE:SIGNAL REASON" for the job or
#                     for each task of an array job (from scontrol while the
#                     controller remembers it, MinJobAge=3600, else from the
#                     job completion log DIR/log/jobcomp.txt).
#   slurm_stop        cancels the cluster's jobs, stops slurmd, slurmctld
#                     and munged (the ones slurm_start started: by pid file,
#                     and only if that process still names DIR), waits for
#                     them and any slurmstepd of DIR to exit; safe to call
#                     twice or without a start; unsets SLURM_CONF.  Call it
#                     from an EXIT trap.
#   slurm_procs DIR   prints "PID NAME" for every munged, slurmctld, slurmd
#                     or slurmstepd whose command line or open files name DIR.
#
# The node is "localhost" (127.0.0.1) with this machine's CPUs and 90% of
# its memory, in partition "tg" (Default=YES, no time limit); jobs without
# --mem get 100 MB per CPU.  There is no accounting database, so sacct does
# not work: job states come from scontrol and DIR/log/jobcomp.txt.  munged
# wants every folder above its socket to be searchable by all: slurm_start
# adds a+x to DIR's ancestors that this user owns (mktemp makes 0700) and
# fails when another's lacks it.  Ports: two free ones on 127.0.0.1.

SLURM_DIR=""
SLURM_SKIP_REASON=""

# slurm_procs DIR: the daemons (and job step daemons) that belong to DIR.
slurm_procs () {
  for _sl_p in /proc/[0-9]*; do
    _sl_pid="${_sl_p#/proc/}"
    [ "$_sl_pid" = "$$" ] && continue
    _sl_exe="$(readlink "$_sl_p/exe" 2> /dev/null)" || continue
    case "${_sl_exe##*/}" in
      munged | slurmctld* | slurmd | slurmd-wlm | slurmstepd*) ;;
      *) continue ;;
    esac
    if tr '\0' ' ' < "$_sl_p/cmdline" 2> /dev/null | grep -qF -- "$1/"; then
      echo "$_sl_pid ${_sl_exe##*/}"
      continue
    fi
    for _sl_f in "$_sl_p/cwd" "$_sl_p"/fd/*; do
      case "$(readlink "$_sl_f" 2> /dev/null)" in
        "$1" | "$1"/*) echo "$_sl_pid ${_sl_exe##*/}"; break ;;
      esac
    done
  done
}

# _sl_fail REASON: reports why the cluster did not start, shows the logs,
# stops what was started.
_sl_fail () {
  SLURM_SKIP_REASON="$1"
  echo "slurm_start: $1" >&2
  for _sl_log in "$SLURM_DIR/munge/munged.log" "$SLURM_DIR/log/slurmctld.log" \
                 "$SLURM_DIR/log/slurmd.log" "$SLURM_DIR/log/start.err"; do
    if [ -s "$_sl_log" ]; then
      echo "  --- last lines of $_sl_log" >&2
      tail -n 15 "$_sl_log" | sed 's/^/  | /' >&2
    fi
  done
  slurm_stop
  return 1
}

# _sl_state PIDFILE: 0 when the process named in PIDFILE runs and names
# SLURM_DIR on its command line, 1 when PIDFILE is missing or empty (not
# written yet, or removed at exit), 2 when that process is gone.
_sl_state () {
  [ -s "$1" ] || return 1
  _sl_pid="$(cat "$1" 2> /dev/null)"
  [ -n "$_sl_pid" ] || return 1
  tr '\0' ' ' < "/proc/$_sl_pid/cmdline" 2> /dev/null | grep -qF -- "$SLURM_DIR/" || return 2
  return 0
}

_sl_alive () {
  _sl_state "$1"
}

# _sl_wait_for SECONDS COMMAND...: runs COMMAND every 0.2 s until it
# succeeds (0), or SECONDS passed or it returned 2 (1: no use waiting).
_sl_wait_for () {
  _sl_until=$(($(date +%s) + $1))
  shift
  while :; do
    "$@"
    case $? in
      0) return 0 ;;
      2) return 1 ;;
    esac
    [ "$(date +%s)" -ge "$_sl_until" ] && return 1
    sleep 0.2
  done
}

_sl_ctld_up () {
  _sl_state "$SLURM_DIR/run/slurmctld.pid" || return
  scontrol ping 2> /dev/null | grep -q 'is UP'
}

_sl_node_idle () {
  _sl_state "$SLURM_DIR/run/slurmd.pid" || return
  [ "$(sinfo -h -n localhost -o %T 2> /dev/null)" = idle ]
}

slurm_start () {
  if [ -n "$SLURM_DIR" ]; then
    echo "slurm_start: a cluster already runs in $SLURM_DIR" >&2
    return 1
  fi
  mkdir -p "$1" || { SLURM_SKIP_REASON="cannot create $1"; echo "slurm_start: $SLURM_SKIP_REASON" >&2; return 1; }
  SLURM_DIR="$(cd "$1" && pwd)"
  _sl_d="$SLURM_DIR"
  for _sl_tool in munged mungekey slurmctld slurmd sbatch squeue sinfo scontrol scancel python3; do
    if ! command -v "$_sl_tool" > /dev/null 2>&1 &&
       ! [ -x "/usr/sbin/$_sl_tool" ]; then
      SLURM_DIR=""
      SLURM_SKIP_REASON="$_sl_tool is not installed (Debian: apt-get install munge slurm-wlm)"
      echo "slurm_start: $SLURM_SKIP_REASON" >&2
      return 1
    fi
  done
  case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH="$PATH:/usr/sbin" ;; esac
  # Unix socket paths (munged's, slurmstepd's in the spool) hold 107 bytes.
  [ "${#_sl_d}" -le 70 ] || { _sl_fail "DIR path too long for the daemons' sockets (${#_sl_d} > 70 characters): $_sl_d"; return 1; }

  # munged checks that everyone may search every folder above its socket.
  _sl_up="$_sl_d"
  while [ "$_sl_up" != / ] && [ -n "$_sl_up" ]; do
    if [ -n "$(find "$_sl_up" -maxdepth 0 ! -perm -111)" ]; then
      if [ -O "$_sl_up" ]; then
        chmod a+x "$_sl_up" || { _sl_fail "cannot chmod a+x $_sl_up (munged needs it)"; return 1; }
      else
        _sl_fail "$_sl_up is not searchable by all, which munged requires"
        return 1
      fi
    fi
    _sl_up="$(dirname "$_sl_up")"
  done

  if ! { mkdir -p "$_sl_d/munge" "$_sl_d/state" "$_sl_d/spool" "$_sl_d/log" "$_sl_d/run" &&
          chmod 755 "$_sl_d/munge" "$_sl_d/log" "$_sl_d/run" &&
          chmod 700 "$_sl_d/state" "$_sl_d/spool"; }; then
    _sl_fail "cannot make the folders in $_sl_d"
    return 1
  fi

  # --- munge: its own key, socket, pid, log and seed ---
  rm -f "$_sl_d/munge/munge.key"
  if ! mungekey -c -k "$_sl_d/munge/munge.key" 2> "$_sl_d/log/start.err"; then
    _sl_fail "mungekey could not create a key"
    return 1
  fi
  chmod 400 "$_sl_d/munge/munge.key"
  if ! munged --key-file="$_sl_d/munge/munge.key" --socket="$_sl_d/munge/socket" \
         --pid-file="$_sl_d/munge/munged.pid" --log-file="$_sl_d/munge/munged.log" \
         --seed-file="$_sl_d/munge/munged.seed" 2> "$_sl_d/log/start.err"; then
    _sl_fail "munged did not start"
    return 1
  fi
  if ! _sl_wait_for 10 _sl_alive "$_sl_d/munge/munged.pid" ||
     ! munge -S "$_sl_d/munge/socket" -n 2> "$_sl_d/log/start.err" |
       unmunge -S "$_sl_d/munge/socket" > /dev/null 2>> "$_sl_d/log/start.err"; then
    _sl_fail "munged does not encode and decode a credential"
    return 1
  fi

  # --- slurm.conf ---
  _sl_mem=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
  # slurmd -C prints this machine's node line; keep its CPU layout.
  _sl_cpus="$(slurmd -C 2> /dev/null | head -n 1 | tr ' ' '\n' |
    grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=[0-9]+$' | paste -sd ' ')"
  case "$_sl_cpus" in
    CPUs=*) ;;
    *) _sl_cpus="CPUs=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" ;;
  esac
  _sl_user="$(id -un)"

  _sl_tries=0
  while :; do
    _sl_tries=$((_sl_tries + 1))
    # shellcheck disable=SC2046 # two port numbers
    set -- $(python3 -c '
import socket
a = socket.socket(); a.bind(("127.0.0.1", 0))
b = socket.socket(); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')
    [ $# -eq 2 ] || { _sl_fail "python3 found no free ports"; return 1; }
    cat > "$_sl_d/slurm.conf" << EOF
# Written by tests/cli/slurm_cluster.sh: a private one-node cluster.
ClusterName=tgtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=$_sl_user
SlurmdUser=$_sl_user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$_sl_d/munge/socket
StateSaveLocation=$_sl_d/state
SlurmdSpoolDir=$_sl_d/spool
SlurmctldPidFile=$_sl_d/run/slurmctld.pid
SlurmdPidFile=$_sl_d/run/slurmd.pid
SlurmctldLogFile=$_sl_d/log/slurmctld.log
SlurmdLogFile=$_sl_d/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$_sl_d/log/jobcomp.txt
MpiDefault=none
ReturnToService=2
MinJobAge=3600
DependencyParameters=kill_invalid_depend
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=100000,bf_interval=1
InactiveLimit=0
KillWait=5
SlurmdTimeout=60
NodeName=localhost NodeHostname=localhost NodeAddr=127.0.0.1 $_sl_cpus RealMemory=$_sl_mem State=UNKNOWN
PartitionName=tg Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF="$_sl_d/slurm.conf"

    if ! slurmctld -f "$SLURM_CONF" 2> "$_sl_d/log/start.err"; then
      _sl_fail "slurmctld did not start"
      return 1
    fi
    if _sl_wait_for 30 _sl_ctld_up; then
      break
    fi
    # A port taken between choosing and binding: choose again, twice.
    if [ "$_sl_tries" -lt 3 ] && grep -q 'Address already in use' "$_sl_d/log/slurmctld.log" 2> /dev/null &&
       ! _sl_alive "$_sl_d/run/slurmctld.pid"; then
      continue
    fi
    _sl_fail "slurmctld does not answer scontrol ping"
    return 1
  done

  if ! slurmd -f "$SLURM_CONF" -N localhost 2> "$_sl_d/log/start.err"; then
    _sl_fail "slurmd did not start"
    return 1
  fi
  if ! _sl_wait_for 60 _sl_node_idle; then
    _sl_fail "node localhost is not idle after 60 s (sinfo says: $(sinfo -h -n localhost -o '%T %E' 2> /dev/null))"
    return 1
  fi
  return 0
}

# slurm_job_states JOBID: one line "ID STATE EXIT REASON" per job or task.
slurm_job_states () {
  if _sl_out="$(scontrol show job -o "$1" 2> /dev/null)" && [ -n "$_sl_out" ]; then
    printf '%s\n' "$_sl_out" | awk '{
      id = ""; arr = ""; task = ""; st = ""; ex = ""; re = ""
      for (i = 1; i <= NF; i++) {
        split($i, kv, "=")
        k = kv[1]; v = substr($i, length(k) + 2)
        if (k == "JobId" && id == "") id = v
        else if (k == "ArrayJobId") arr = v
        else if (k == "ArrayTaskId") task = v
        else if (k == "JobState") st = v
        else if (k == "ExitCode") ex = v
        else if (k == "Reason") re = v
      }
      if (arr != "") id = arr "_" task
      print id, st, ex, re
    }' | sort -t_ -k1,1n -k2,2n
  elif [ -n "$SLURM_DIR" ] && [ -s "$SLURM_DIR/log/jobcomp.txt" ]; then
    awk -v want="$1" '{
      id = ""; arr = ""; task = ""; st = ""; ex = ""
      for (i = 1; i <= NF; i++) {
        split($i, kv, "=")
        k = kv[1]; v = substr($i, length(k) + 2)
        if (k == "JobId") id = v
        else if (k == "ArrayJobId") arr = v
        else if (k == "ArrayTaskId") task = v
        else if (k == "JobState") st = v
        else if (k == "ExitCode") ex = v
      }
      if (id == want || arr == want) {
        print (arr != "" ? arr "_" task : id), st, ex, "(jobcomp)"
      }
    }' "$SLURM_DIR/log/jobcomp.txt" | sort -t_ -k1,1n -k2,2n | grep . || return 1
  else
    return 1
  fi
}

# _sl_ended JOBID...: every job and task is in a final state.
_sl_ended () {
  for _sl_j in "$@"; do
    _sl_st="$(slurm_job_states "$_sl_j")" || return 1
    printf '%s\n' "$_sl_st" | awk '
      $2 !~ /^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|DEADLINE|BOOT_FAIL)$/ { bad = 1 }
      END { exit bad }' || return 1
  done
  return 0
}

slurm_wait_jobs () {
  _sl_timeout="${TG_SLURM_WAIT:-120}"
  _sl_jobs=""
  for _sl_a in "$@"; do
    case "$_sl_a" in
      *[0-9]s) _sl_timeout="${_sl_a%s}" ;;
      *) _sl_jobs="$_sl_jobs $_sl_a" ;;
    esac
  done
  # shellcheck disable=SC2086 # the job ids
  set -- $_sl_jobs
  [ $# -gt 0 ] || { echo "slurm_wait_jobs: no job id" >&2; return 1; }
  _sl_rc=0
  if ! _sl_wait_for "$_sl_timeout" _sl_ended "$@"; then
    echo "slurm_wait_jobs: not all of $* ended within $_sl_timeout s" >&2
    _sl_rc=1
  fi
  for _sl_j in "$@"; do
    if ! _sl_st="$(slurm_job_states "$_sl_j")"; then
      echo "slurm: $_sl_j UNKNOWN (neither scontrol nor the completion log knows it)"
      _sl_rc=1
      continue
    fi
    printf '%s\n' "$_sl_st" | awk '{ printf "slurm: %s %s exit=%s reason=%s\n", $1, $2, $3, $4 }'
    printf '%s\n' "$_sl_st" | awk '$2 != "COMPLETED" || $3 != "0:0" { bad = 1 } END { exit bad }' ||
      _sl_rc=1
  done
  return $_sl_rc
}

# _sl_gone PID: that process has exited (or is no longer one of DIR's).
_sl_gone () {
  ! tr '\0' ' ' < "/proc/$1/cmdline" 2> /dev/null | grep -qF -- "$SLURM_DIR/"
}

# _sl_kill PIDFILE: stops that daemon if it is still ours, waits for it.
_sl_kill () {
  _sl_alive "$1" || { rm -f "$1"; return 0; }
  _sl_kpid="$(cat "$1")"
  kill "$_sl_kpid" 2> /dev/null
  if ! _sl_wait_for 15 _sl_gone "$_sl_kpid"; then
    echo "slurm_stop: pid $_sl_kpid ($1) ignored SIGTERM; killing it" >&2
    kill -9 "$_sl_kpid" 2> /dev/null
    _sl_wait_for 5 _sl_gone "$_sl_kpid"
  fi
  rm -f "$1"
}

_sl_no_jobs () {
  [ -z "$(squeue -h -o %i 2> /dev/null)" ]
}

_sl_no_procs () {
  [ -z "$(slurm_procs "$SLURM_DIR")" ]
}

slurm_stop () {
  [ -n "$SLURM_DIR" ] || return 0
  if _sl_alive "$SLURM_DIR/run/slurmctld.pid"; then
    scancel --user="$(id -un)" 2> /dev/null
    _sl_wait_for 15 _sl_no_jobs
  fi
  _sl_kill "$SLURM_DIR/run/slurmd.pid"
  _sl_kill "$SLURM_DIR/run/slurmctld.pid"
  _sl_kill "$SLURM_DIR/munge/munged.pid"
  # Job step daemons, or daemons whose pid file went missing.
  if ! _sl_wait_for 10 _sl_no_procs; then
    slurm_procs "$SLURM_DIR" | while read -r _sl_pid _sl_name; do
      echo "slurm_stop: killing leftover $_sl_name (pid $_sl_pid)" >&2
      kill -9 "$_sl_pid" 2> /dev/null
    done
    _sl_wait_for 5 _sl_no_procs
  fi
  [ "${SLURM_CONF:-}" != "$SLURM_DIR/slurm.conf" ] || unset SLURM_CONF
  SLURM_DIR=""
  return 0
}
