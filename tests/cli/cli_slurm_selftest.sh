#!/bin/bash
# The private Slurm cluster of slurm_cluster.sh, as the tiled-build test
# will use it: start it in $TMP/slurm, run a 3-task array job whose tasks
# each run one line of a stage file (as submit-slurm.sh does), then a job
# chained with --dependency=afterok; check the outputs and the order.  A
# failing task keeps the dependent job from running (it is cancelled as
# DependencyNeverSatisfied); slurm_wait_jobs reports failures and its
# timeout.  slurm_stop, with a job still running, leaves no daemon, job
# step daemon or job process behind.  Exit 77 (skip) only when the
# daemons are not installed or cannot start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm_cluster.sh"

trap 'slurm_stop; rm -rf "$TMP"' EXIT

t0=$(date +%s)
if ! slurm_start "$TMP/slurm"; then
  echo "SKIP: no Slurm cluster: $SLURM_SKIP_REASON"
  exit 77
fi
echo "cluster up in $(($(date +%s) - t0)) s (SLURM_CONF=$SLURM_CONF)"
cluster="$TMP/slurm"

# --- the cluster as configured ---------------------------------------------
run sinfo -h -o '%P %a %D %T %N %c'
expect_rc 0 "sinfo"
expect_in "$TMP/out" "tg* up 1 idle localhost $(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)" \
  "sinfo: partition tg (default) with the idle node localhost and this machine's CPUs"

# check_states FILE ID STATE EXIT WHAT: slurm_wait_jobs' report has that line.
check_state () {
  expect_in "$1" "slurm: $2 $3 exit=$4 " "$5"
}

# --- an array job running a stage file, then a dependent job ---------------
mkdir -p "$TMP/plan/stages" "$TMP/work" "$TMP/logs"
for i in 0 1 2; do
  echo "sleep 1; echo tile $i > '$TMP/work/tile_$i.txt'; date +%s%N > '$TMP/work/tile_$i.end'"
done > "$TMP/plan/stages/00.txt"
cat > "$TMP/plan/task.sh" << 'EOF'
#!/bin/sh
# Runs line SLURM_ARRAY_TASK_ID+1 of the stage file $1.
set -e
line=$((SLURM_ARRAY_TASK_ID + 1))
cmd="$(sed -n "${line}p" "$1")"
[ -n "$cmd" ] || { echo "no line $line in $1" >&2; exit 2; }
exec sh -c "$cmd"
EOF
chmod +x "$TMP/plan/task.sh"
cat > "$TMP/plan/after.sh" << EOF
#!/bin/sh
date +%s%N > '$TMP/work/after.start'
cat '$TMP/work/tile_0.txt' '$TMP/work/tile_1.txt' '$TMP/work/tile_2.txt' > '$TMP/work/merged.txt'
EOF
chmod +x "$TMP/plan/after.sh"

cd "$TMP/work" || exit 1
submit () {
  sbatch --parsable --partition=tg --time=5 --mem=50M -o "$TMP/logs/%x_%A_%a.out" "$@"
}
run submit --job-name=stage0 --array=0-2 "$TMP/plan/task.sh" "$TMP/plan/stages/00.txt"
expect_rc 0 "sbatch the array job"
a="$(cut -d';' -f1 "$TMP/out")"
run submit --job-name=stage1 --dependency="afterok:$a" "$TMP/plan/after.sh"
expect_rc 0 "sbatch the dependent job"
b="$(cut -d';' -f1 "$TMP/out")"
echo "array job $a, dependent job $b"

t1=$(date +%s)
run slurm_wait_jobs "$a" "$b" 60s
expect_rc 0 "slurm_wait_jobs $a $b"
echo "both ended in $(($(date +%s) - t1)) s:"
cat "$TMP/out"
for i in 0 1 2; do
  check_state "$TMP/out" "${a}_$i" COMPLETED 0:0 "array task $i completed"
  checks=$((checks + 1))
  [ "$(cat "$TMP/work/tile_$i.txt" 2> /dev/null)" = "tile $i" ] ||
    fail "array task $i ran line $((i + 1)) of the stage file"
done
check_state "$TMP/out" "$b" COMPLETED 0:0 "the dependent job completed"
checks=$((checks + 1))
printf 'tile 0\ntile 1\ntile 2\n' > "$TMP/merged.want"
cmp -s "$TMP/work/merged.txt" "$TMP/merged.want" || fail "the dependent job saw all three tiles"
checks=$((checks + 1))
if [ -s "$TMP/work/after.start" ]; then
  for i in 0 1 2; do
    [ "$(cat "$TMP/work/tile_$i.end")" -le "$(cat "$TMP/work/after.start")" ] ||
      fail "the dependent job started before array task $i ended"
  done
else
  fail "the dependent job did not run"
fi

# --- a failing task: the dependent job never runs -------------------------
printf '%s\n' "true" "exit 3" "true" > "$TMP/plan/stages/01.txt"
run submit --job-name=bad --array=0-2 "$TMP/plan/task.sh" "$TMP/plan/stages/01.txt"
expect_rc 0 "sbatch the failing array job"
c="$(cut -d';' -f1 "$TMP/out")"
run submit --job-name=never --dependency="afterok:$c" --wrap "touch '$TMP/work/never.ran'"
expect_rc 0 "sbatch the job after the failing one"
d="$(cut -d';' -f1 "$TMP/out")"

run slurm_wait_jobs "$c" "$d" 60s
expect_rc 1 "slurm_wait_jobs reports the failed task"
cat "$TMP/out"
check_state "$TMP/out" "${c}_0" COMPLETED 0:0 "task 0 of the failing array"
check_state "$TMP/out" "${c}_1" FAILED 3:0 "task 1 failed with exit status 3"
check_state "$TMP/out" "${c}_2" COMPLETED 0:0 "task 2 of the failing array"
expect_in "$TMP/out" "slurm: $d CANCELLED exit=0:0 reason=DependencyNeverSatisfied" \
  "the dependent job is cancelled, its dependency never satisfied"
checks=$((checks + 1))
[ ! -e "$TMP/work/never.ran" ] || fail "the job after the failing array ran"

# --- the timeout, and a stop while a job runs ------------------------------
run submit --job-name=long --wrap "echo \$\$ > '$TMP/work/long.pid'; exec sleep 300"
expect_rc 0 "sbatch a long job"
e="$(cut -d';' -f1 "$TMP/out")"
for _ in $(seq 100); do
  [ -s "$TMP/work/long.pid" ] && break
  sleep 0.2
done
run slurm_wait_jobs "$e" 2s
expect_rc 1 "slurm_wait_jobs times out"
expect_in "$TMP/err" "not all of $e ended within 2 s" "slurm_wait_jobs says it timed out"
expect_in "$TMP/out" "slurm: $e RUNNING" "the long job still runs"

started="$(slurm_procs "$cluster")"
echo "daemons before slurm_stop:"
printf '%s\n' "$started" | sed 's/^/  /'
checks=$((checks + 1))
for name in munged slurmctld slurmd slurmstepd; do
  printf '%s\n' "$started" | grep -q " $name" || fail "no $name of $cluster was running"
done
long_pid="$(cat "$TMP/work/long.pid" 2> /dev/null)"

cd "$TMP" || exit 1
t2=$(date +%s)
slurm_stop
slurm_stop
echo "stopped in $(($(date +%s) - t2)) s"
checks=$((checks + 1))
left="$(slurm_procs "$cluster")"
[ -z "$left" ] || fail "left running after slurm_stop: $left"
checks=$((checks + 1))
printf '%s\n' "$started" | while read -r pid name; do
  if [ -e "/proc/$pid/exe" ] && readlink "/proc/$pid/exe" > /dev/null 2>&1; then
    echo "$name (pid $pid) still runs"
  fi
done > "$TMP/alive"
[ ! -s "$TMP/alive" ] || fail "$(tr '\n' ' ' < "$TMP/alive")"
checks=$((checks + 1))
if [ -z "$long_pid" ]; then
  fail "the long job did not write its pid"
elif readlink "/proc/$long_pid/exe" > /dev/null 2>&1; then
  fail "the long job's sleep (pid $long_pid) survived slurm_stop"
fi
checks=$((checks + 1))
[ -z "${SLURM_DIR}" ] || fail "slurm_stop leaves SLURM_DIR set"

finish
