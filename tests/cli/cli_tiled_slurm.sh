#!/bin/bash
# A tiled build through a real Slurm: a private single-node cluster on
# localhost (slurm_cluster.sh: munged, slurmctld, slurmd, started and
# stopped here), the plan of the graph with every global node submitted
# with its own submit-slurm.sh (one job array per stage, chained with
# afterok), waited for, stitched, and compared byte for byte with the
# whole build.  A failing job stops the stages after it (its dependants
# are cancelled, never run) and stitch then refuses.  Exit 77 (skip) only
# when the daemons are not installed or cannot start.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm_cluster.sh"

trap 'slurm_stop; rm -rf "$TMP"' EXIT

if ! slurm_start "$TMP/slurm"; then
  echo "SKIP: no Slurm cluster: $SLURM_SKIP_REASON"
  exit 77
fi
G="$DATA/tiled_globals.tgraph"
export TGRAPH

# submit_plan DIR: runs DIR/submit-slurm.sh; the stages' job ids in $jobs.
submit_plan () {
  run "$1/submit-slurm.sh"
  expect_rc 0 "submit-slurm.sh $1"
  jobs=$(sed -n 's/^stage [0-9]*: job \([0-9]*\) .*/\1/p' "$TMP/err" | tr '\n' ' ')
  checks=$((checks + 1))
  [ -n "$jobs" ] || fail "submit-slurm.sh printed no job ids"
  checks=$((checks + 1))
  # shellcheck disable=SC2086 # the last word of the list
  [ "$(tail -n 1 "$TMP/out")" = "$(printf '%s\n' $jobs | tail -n 1)" ] ||
    fail "submit-slurm.sh should print the last stage's job id"
}

run "$TGRAPH" plan "$G" --tiles 3,2 -o "$TMP/plan" --threads 1 --time 10 --quiet
expect_rc 0 "plan 3x2"
# The plan's own folder, as a cluster's shared folder would be.
submit_plan "$TMP/plan"
# shellcheck disable=SC2086 # $jobs is a list
run slurm_wait_jobs $jobs 240s
expect_rc 0 "every stage's job array completed"
sed 's/^/  /' "$TMP/out"
n_tasks=$(grep -c "COMPLETED exit=0:0" "$TMP/out")
n_jobs=$(($(grep -v '^[[:space:]]*$' "$TMP"/plan/stages/*.txt | wc -l)))
checks=$((checks + 1))
[ "$n_tasks" -eq "$n_jobs" ] || fail "$n_tasks tasks completed for the plan's $n_jobs jobs"
run "$TGRAPH" stitch "$TMP/plan" -o "$TMP/stitched"
expect_rc 0 "stitch the Slurm build"
run "$TGRAPH" eval "$G" -o "$TMP/whole" --quiet
expect_rc 0 "whole eval"
checks=$((checks + 1))
if ! diff -r "$TMP/whole" "$TMP/stitched" > "$TMP/diff" 2>&1; then
  fail "the Slurm build differs from the whole build"
  sed 's/^/  | /' "$TMP/diff" | head >&2
fi

# A job that fails: its stage's dependants never run, stitch refuses.
run "$TGRAPH" plan "$G" --tiles 2,2 -o "$TMP/bad" --quiet --set base.seed=8
expect_rc 0 "plan the failing build"
sed -i '2s/--tile [0-9],[0-9]/--tile 9,9/' "$TMP/bad/stages/00.txt"
submit_plan "$TMP/bad"
# shellcheck disable=SC2086 # $jobs is a list
run slurm_wait_jobs $jobs 240s
expect_rc 1 "a failing job fails its build"
expect_in "$TMP/out" "FAILED" "the bad task failed"
expect_in "$TMP/out" "CANCELLED" "the later stages were cancelled"
checks=$((checks + 1))
[ ! -d "$TMP/bad/tiles" ] || [ -z "$(ls -A "$TMP/bad/tiles")" ] ||
  fail "the export stage ran after a failed stage: $(ls "$TMP/bad/tiles")"
run "$TGRAPH" stitch "$TMP/bad" -o "$TMP/badout"
expect_rc 2 "stitch a failed Slurm build"
expect_no_files "$TMP/badout" "stitch of a failed build"

finish
