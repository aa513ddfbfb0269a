#!/bin/bash
# Tiled world builds on GNU parallel: for every example, every golden graph
# and a graph with every global node, `tgraph plan` + run-parallel.sh +
# `tgraph stitch` write the same files, byte for byte and manifest
# included, as `tgraph eval` of the whole world, in 3x2 and 4x4 tiles (and
# uneven 7x5, jobs on one thread).  Then the faults: bad tile counts and
# folders refused with nothing written, a missing or stale tile named by
# stitch, a killed job that leaves nothing stitch takes, a rerun that runs
# only the failed job, a hydraulic step job that finds its inputs when run
# again although spent blobs are dropped, and a job's peak memory that
# stays flat as the world grows at a fixed tile size.
. "$(dirname "$0")/lib.sh"

if ! command -v parallel > /dev/null 2>&1; then
  echo "SKIP: GNU parallel is not installed (Debian package parallel; .ci/run installs it)"
  exit 77
fi
export PARALLEL_HOME="$TMP/parallel-home" # no ~/.parallel/will-cite prompt, nothing in $HOME
mkdir -p "$PARALLEL_HOME" && touch "$PARALLEL_HOME/will-cite"
export TGRAPH_EXE="$TGRAPH"
G="$DATA/tiled_globals.tgraph"

# run_stages DIR: the plan's stages in order, two jobs at a time, with
# xargs instead of GNU parallel (whose start-up is most of the time of a
# 64-stage plan's small jobs); the same job lines.
run_stages () {
  for stage in "$1"/stages/*.txt; do
    (cd "$1" && TGRAPH="$TGRAPH" xargs -P 2 -d '\n' -I {} sh -c '{}' < "$stage") || return 1
  done
}

# hydraulic_blobs_spent PLAN WHAT: erosion.hydraulic's step blobs (h<step>,
# f<step>) in PLAN's store are of two steps at most: the rest were dropped.
hydraulic_blobs_spent () {
  checks=$((checks + 1))
  steps=$(find "$1/store" -path '*/b/*' -name '*.[hf][0-9]*' 2> /dev/null |
    sed 's/.*\.[hf]//' | sort -u | wc -l)
  [ "$steps" -le 2 ] || fail "$2: the store keeps hydraulic blobs of $steps steps"
}

# tiled_equals_whole NAME FILE TILES [PLAN OPTIONS...]: the stitched build
# of FILE in TILES equals its whole build with the same options; with
# RUNNER=run_stages set, without GNU parallel.
tiled_equals_whole () {
  name=$1 file=$2 tiles=$3
  shift 3
  dir="$TMP/$name-${tiles/,/x}"
  mkdir -p "$dir"
  run "$TGRAPH" eval "$file" -o "$dir/whole" --quiet "$@"
  expect_rc 0 "$name: whole eval"
  run "$TGRAPH" plan "$file" --tiles "$tiles" -o "$dir/plan" --quiet "$@"
  expect_rc 0 "$name: plan $tiles"
  if [ -n "${RUNNER:-}" ]; then
    run "$RUNNER" "$dir/plan"
  else
    run env TGRAPH="$TGRAPH" "$dir/plan/run-parallel.sh" -j 2
  fi
  expect_rc 0 "$name: run the jobs of $tiles"
  run "$TGRAPH" stitch "$dir/plan" -o "$dir/stitched"
  expect_rc 0 "$name: stitch $tiles"
  checks=$((checks + 1))
  if ! diff -r "$dir/whole" "$dir/stitched" > "$TMP/diff" 2>&1; then
    fail "$name in $tiles tiles: the stitched files differ from the whole build"
    sed 's/^/  | /' "$TMP/diff" | head -20 >&2
  fi
  hydraulic_blobs_spent "$dir/plan" "$name in $tiles tiles"
  rm -rf "$dir"
  echo "$name in $tiles tiles: compared ($SECONDS s so far)"
}

# Graphs with erosion.hydraulic run 64 stages (one per droplet phase): 3x2
# only; tiled_fast is tiled_globals without it, for the other tilings.
F="$DATA/tiled_fast.tgraph"
for tiles in 3,2 4,4; do
  tiled_equals_whole fast "$F" $tiles
  for ex in island ridges; do
    tiled_equals_whole "$ex" "$EXAMPLES/$ex.tgraph" $tiles --resolution 257
  done
  for ex in forest tiles arch; do
    tiled_equals_whole "$ex" "$EXAMPLES/$ex.tgraph" $tiles
  done
done
export TGRAPH
RUNNER=run_stages tiled_equals_whole globals "$G" 3,2
# erosion.hydraulic on a simulation grid of every other sample (16 m cells,
# 32 m grid): the grid's phases and the step that lays the change back.
RUNNER=run_stages tiled_equals_whole globals-coarse "$G" 3,2 --set rain.cell_m=32
# A bypassed global node (filter.normalize) is local: tiles pass it through.
RUNNER=run_stages tiled_equals_whole bypass "$DATA/bypass.tgraph" 3,2
RUNNER=run_stages tiled_equals_whole alpine "$EXAMPLES/alpine.tgraph" 3,2 --resolution 257
RUNNER=run_stages tiled_equals_whole valley "$EXAMPLES/valley.tgraph" 3,2 --resolution 257
for golden in "$SRC"/tests/graphs/*.tgraph; do
  RUNNER=run_stages tiled_equals_whole "golden-$(basename "$golden" .tgraph)" "$golden" 3,2
done
tiled_equals_whole fast-uneven "$F" 7,5 --threads 1 --resolution 201
tiled_equals_whole fast-columns "$F" 1,9 --set base.seed=9
# compression: small re-encodes each PNG four ways; stitch must pick the same.
tiled_equals_whole fast-small "$F" 3,2 --set out_height.compression=small \
  --set out_water.compression=small --set out_splat.compression=small
# job.json says a small PNG as the manifest does ("format": "png16",
# "compression": "small"); stitch still reads the one name older jobs wrote.
small=(--set out_height.compression=small --set out_splat.compression=small)
run "$TGRAPH" eval "$F" -o "$TMP/oldjob-whole" --quiet "${small[@]}"
expect_rc 0 "oldjob: whole eval"
run "$TGRAPH" plan "$F" --tiles 2,2 -o "$TMP/oldjob" --quiet "${small[@]}"
expect_rc 0 "oldjob: plan"
run env TGRAPH="$TGRAPH" "$TMP/oldjob/run-parallel.sh" -j 2
expect_rc 0 "oldjob: run the jobs"
checks=$((checks + 1))
python3 - "$TMP"/oldjob/tiles/*/job.json <<'PY' || fail "job.json: not the manifest's spelling (above)"
import json, sys
for p in sys.argv[1:]:
    d = json.load(open(p))
    small = [f for f in d["files"] if f.get("compression") == "small"]
    if sorted(f["format"] for f in small) != ["png16", "png8"]:
        sys.exit("%s: files with compression small: %s" % (p, small))
    if any("." in f["format"] for f in d["files"]):
        sys.exit("%s still spells a writer's name as a format" % p)
    # Back to what an older tgraph wrote: the writer's name as the format.
    for f in small:
        f["format"] += ".small"
        del f["compression"]
    json.dump(d, open(p, "w"), indent=2)
PY
grep -q '"format": "png16.small"' "$TMP/oldjob/tiles/0_0/job.json" || fail "oldjob: no old spelling made"
run "$TGRAPH" stitch "$TMP/oldjob" -o "$TMP/oldjob-stitched"
expect_rc 0 "stitch of job.json files in the old spelling"
checks=$((checks + 1))
diff -r "$TMP/oldjob-whole" "$TMP/oldjob-stitched" > /dev/null \
  || fail "stitch of job.json files in the old spelling differs from the whole build"
rm -rf "$TMP/oldjob" "$TMP/oldjob-whole" "$TMP/oldjob-stitched"

# --- a hydraulic step job run again finds what it reads -------------------------------

# Step s drops its tile's state of step s - 2.  A job that fails after its
# drop is run again (run-parallel.sh's --resume-failed): it reads step
# s - 1's state, which is still there.  Here a step-3 job runs twice.
run "$TGRAPH" plan "$G" --tiles 3,2 -o "$TMP/r" --quiet
expect_rc 0 "plan the rerun test"
again=$(python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
print([s["stage"] for s in p["stages"] if s.get("type") == "erosion.hydraulic" and s.get("step") == 3][0])' \
  "$TMP/r/plan.json")
for stage in "$TMP"/r/stages/*.txt; do
  (cd "$TMP/r" && TGRAPH="$TGRAPH" xargs -P 2 -d '\n' -I {} sh -c '{}' < "$stage") || break
  if [ "$stage" = "$(printf '%s/r/stages/%02d.txt' "$TMP" "$again")" ]; then
    run sh -c "cd '$TMP/r' && TGRAPH='$TGRAPH' && $(sed -n 5p "$stage")"
    expect_rc 0 "a step-3 job of erosion.hydraulic run again"
  fi
done
run "$TGRAPH" stitch "$TMP/r" -o "$TMP/rst"
expect_rc 0 "stitch after the rerun of a step job"
run "$TGRAPH" eval "$G" -o "$TMP/rwhole" --quiet
checks=$((checks + 1))
diff -r "$TMP/rwhole" "$TMP/rst" > /dev/null || fail "the build with a step job run again differs"
hydraulic_blobs_spent "$TMP/r" "the build with a step job run again"
rm -rf "$TMP/r" "$TMP/rst" "$TMP/rwhole"

# --- the many-machine path: an sshloginfile (":" is this machine, no ssh) --------------

echo ":" > "$TMP/hosts.txt"
run "$TGRAPH" plan "$F" --tiles 2,2 -o "$TMP/ssh" --quiet
run env TGRAPH="$TGRAPH" PARALLEL_SSHLOGINFILE="$TMP/hosts.txt" "$TMP/ssh/run-parallel.sh"
expect_rc 0 "run-parallel.sh with PARALLEL_SSHLOGINFILE"
expect_in "$TMP/ssh/logs/00.joblog" ":" "the joblog names the login it ran on"
run "$TGRAPH" stitch "$TMP/ssh" -o "$TMP/ssh-out"
expect_rc 0 "stitch after the sshloginfile run"
run "$TGRAPH" eval "$F" -o "$TMP/ssh-whole" --quiet
checks=$((checks + 1))
diff -r "$TMP/ssh-whole" "$TMP/ssh-out" > /dev/null || fail "the sshloginfile build differs"
rm -rf "$TMP/ssh" "$TMP/ssh-out" "$TMP/ssh-whole"

# --- one tile alone: the window of the whole build ------------------------------------

run "$TGRAPH" eval "$F" --tiles 3,2 --tile 2,1 -o "$TMP/one" --quiet
expect_rc 0 "eval --tile 2,1 alone"
expect_in "$TMP/one/manifest.json" '"first_sample": [86, 48]' "the tile's manifest says where it lies"
run "$TGRAPH" eval "$F" -o "$TMP/onewhole" --quiet
checks=$((checks + 1))
# raw/norm.r16 is south first: the tile's rows are the window's, bottom up.
python3 - "$TMP/one/raw/norm.r16" "$TMP/onewhole/raw/norm.r16" << 'PY' 2> "$TMP/err" ||
import array, sys
W, H, c0, r0, w, h = 129, 97, 86, 48, 43, 49
tile = array.array("H", open(sys.argv[1], "rb").read())
whole = array.array("H", open(sys.argv[2], "rb").read())
assert len(tile) == w * h, len(tile)
for j in range(h):
    north = r0 + h - 1 - j
    row = whole[(H - 1 - north) * W + c0:][:w]
    assert tile[j * w:(j + 1) * w] == row, j
PY
  fail "one tile is not the window of the whole build: $(cat "$TMP/err")"
rm -rf "$TMP/one" "$TMP/onewhole"

# --- bad input: exit 2, nothing written -------------------------------------------

run "$TGRAPH" plan "$F" --tiles 0,3 -o "$TMP/bad"
expect_rc 2 "--tiles 0,3"
expect_in "$TMP/err" "--tiles" "--tiles 0,3 names the option"
expect_no_files "$TMP/bad" "--tiles 0,3"
run "$TGRAPH" plan "$F" --tiles 200,2 -o "$TMP/bad"
expect_rc 2 "more tiles than samples"
expect_in "$TMP/err" "at least one sample" "more tiles than samples says why"
expect_no_files "$TMP/bad" "more tiles than samples"
run "$TGRAPH" plan "$F" --tiles 2,2 -o "$TMP/p"
expect_rc 0 "plan 2x2"
run "$TGRAPH" eval "$TMP/p/graph/graph.tgraph" -o "$TMP/p" --tiles 2,2 --stage 0 --tile 2,0
expect_rc 2 "tile index out of range"
expect_in "$TMP/err" "--tile 2,0" "tile out of range names it"
run "$TGRAPH" eval "$TMP/p/graph/graph.tgraph" -o "$TMP/p" --tiles 3,3 --stage 0 --tile 0,0
expect_rc 1 "a job with other --tiles than its plan"
expect_in "$TMP/err" "2,2 tiles" "other --tiles says the plan's"
before=$(cd "$TMP/p" && find . -type f | sort | xargs sha256sum | sha256sum)
run "$TGRAPH" plan "$EXAMPLES/island.tgraph" --tiles 2,2 -o "$TMP/p"
expect_rc 2 "a folder with another graph's plan"
expect_in "$TMP/err" "another graph" "another graph's plan is named"
run "$TGRAPH" plan "$F" --tiles 3,3 -o "$TMP/p"
expect_rc 2 "a folder with another tiling's plan"
after=$(cd "$TMP/p" && find . -type f | sort | xargs sha256sum | sha256sum)
checks=$((checks + 1))
[ "$before" = "$after" ] || fail "a refused plan changed the folder"
mkdir -p "$TMP/notaplan" && touch "$TMP/notaplan/precious.txt"
run "$TGRAPH" plan "$F" --tiles 2,2 -o "$TMP/notaplan"
expect_rc 2 "a folder that is not a plan"
checks=$((checks + 1))
[ "$(ls "$TMP/notaplan")" = "precious.txt" ] || fail "plan wrote into a folder that is not a plan"

# --- stitch names a missing or stale tile and writes nothing ----------------------------

run env TGRAPH="$TGRAPH" "$TMP/p/run-parallel.sh"
expect_rc 0 "run the 2x2 plan"
mv "$TMP/p/tiles/1_0/job.json" "$TMP/job.json.saved"
run "$TGRAPH" stitch "$TMP/p" -o "$TMP/st"
expect_rc 2 "stitch with a missing tile"
expect_in "$TMP/err" "tile 1,0 is missing" "the missing tile is named"
expect_no_files "$TMP/st" "stitch with a missing tile"
mv "$TMP/job.json.saved" "$TMP/p/tiles/1_0/job.json"
# A tile from another graph's plan (same tiling, another seed) is stale.
run "$TGRAPH" plan "$F" --tiles 2,2 -o "$TMP/q" --set base.seed=5
run env TGRAPH="$TGRAPH" "$TMP/q/run-parallel.sh"
expect_rc 0 "run the other plan"
cp "$TMP/p/tiles/0_1/job.json" "$TMP/job.json.saved"
cp -r "$TMP/q/tiles/0_1/." "$TMP/p/tiles/0_1/"
run "$TGRAPH" stitch "$TMP/p" -o "$TMP/st"
expect_rc 2 "stitch with a stale tile"
expect_in "$TMP/err" "tile 0,1 is stale" "the stale tile is named"
expect_no_files "$TMP/st" "stitch with a stale tile"
# A damaged tile file is caught by its hash.
# The export jobs are the last stage (after every scheme's steps).
export_stage=$(($(ls "$TMP/p/stages" | wc -l) - 1))
run "$TGRAPH" eval "$TMP/p/graph/graph.tgraph" -o "$TMP/p" --tiles 2,2 --stage $export_stage --tile 0,1 --quiet
expect_rc 0 "rerun one export job"
printf 'x' >> "$TMP/p/tiles/0_1/height.png.tile"
run "$TGRAPH" stitch "$TMP/p" -o "$TMP/st"
expect_rc 2 "stitch with a damaged tile"
expect_in "$TMP/err" "does not have the hash" "the damaged file is named"
expect_no_files "$TMP/st" "stitch with a damaged tile"

# --- a killed job leaves nothing; a rerun runs only what did not succeed --------------

# A wrapper that SIGKILLs the job of export tile 1,1 the first time, as a
# batch system's kill would, mid-write: as soon as it has staged a file.
cat > "$TMP/flaky-tgraph" << 'SH'
#!/bin/sh
echo "$*" >> "$FLAKY_LOG"
case "$*" in
  *"--stage $FLAKY_STAGE --tile 1,1"*)
    if [ ! -e "$FLAKY_LOG.killed" ]; then
      touch "$FLAKY_LOG.killed"
      "$TGRAPH_EXE" "$@" &
      pid=$!
      # A shell glob, no process per look: the job may take only a
      # fraction of a second.
      while kill -0 $pid 2> /dev/null; do
        set -- tiles/1_1/.*.tmp-*
        [ -e "$1" ] && break
      done
      kill -9 $pid 2> /dev/null
      wait $pid
      exit 137
    fi ;;
esac
exec "$TGRAPH_EXE" "$@"
SH
chmod +x "$TMP/flaky-tgraph"
L="$DATA/tiled_local.tgraph"
run "$TGRAPH" plan "$L" --tiles 2,2 -o "$TMP/k" --resolution 2049
expect_rc 0 "plan the kill test"
export FLAKY_STAGE=$(($(ls "$TMP"/k/stages | wc -l) - 1)) FLAKY_LOG="$TMP/flaky.log"
run env TGRAPH="$TMP/flaky-tgraph" "$TMP/k/run-parallel.sh" -j 4
checks=$((checks + 1))
[ "$rc" -ne 0 ] || fail "run-parallel.sh should fail when a job is killed"
checks=$((checks + 1))
[ ! -e "$TMP/k/tiles/1_1/job.json" ] || fail "the killed job left its job.json"
run "$TGRAPH" stitch "$TMP/k" -o "$TMP/kst"
expect_rc 2 "stitch after a killed job"
expect_in "$TMP/err" "tile 1,1 is missing" "stitch names the killed job's tile"
expect_no_files "$TMP/kst" "stitch after a killed job"
: > "$FLAKY_LOG"
run env TGRAPH="$TMP/flaky-tgraph" "$TMP/k/run-parallel.sh" -j 4
expect_rc 0 "rerun of run-parallel.sh"
checks=$((checks + 1))
if [ "$(grep -c . "$FLAKY_LOG")" -ne 1 ] || ! grep -q -- "--tile 1,1" "$FLAKY_LOG"; then
  fail "the rerun should run the killed job only, ran: $(tr '\n' ';' < "$FLAKY_LOG")"
fi
run "$TGRAPH" stitch "$TMP/k" -o "$TMP/kst"
expect_rc 0 "stitch after the rerun"
run "$TGRAPH" eval "$L" -o "$TMP/kwhole" --resolution 2049 --quiet
checks=$((checks + 1))
diff -r "$TMP/kwhole" "$TMP/kst" > /dev/null || fail "the rerun build differs from the whole build"
rm -rf "$TMP/k" "$TMP/kst" "$TMP/kwhole"

# --- per-tile files for Unreal and Unity ------------------------------------------------

run "$TGRAPH" plan "$EXAMPLES/island.tgraph" --tiles 2,2 --resolution 1025 -o "$TMP/e" --quiet
run env TGRAPH="$TGRAPH" "$TMP/e/run-parallel.sh"
expect_rc 0 "run island for tile files"
run "$TGRAPH" eval "$EXAMPLES/island.tgraph" --resolution 1025 -o "$TMP/ewhole" --quiet
run "$TGRAPH" stitch "$TMP/e" -o "$TMP/unity" --tile-files unity --tile-size 513
expect_rc 0 "stitch --tile-files unity"
checks=$((checks + 1))
python3 - "$TMP/ewhole/island_height.r16" "$TMP/unity" << 'PY' || fail "Unity RAW16 tiles are not the whole map's windows, south first, sharing edges"
import array, json, sys
n, s = 1025, 513
whole = array.array("H", open(sys.argv[1], "rb").read())  # south first
files = {f["path"]: f for f in json.load(open(sys.argv[2] + "/manifest.json"))["files"]}
for tx in range(2):
    for tz in range(2):
        name = "island_height_x%d_z%d.r16" % (tx, tz)
        assert files[name]["resolution"] == [s, s], files[name]
        t = array.array("H", open(sys.argv[2] + "/" + name, "rb").read())
        assert len(t) == s * s
        for j in range(s):
            row = whole[(tz * (s - 1) + j) * n + tx * (s - 1):][:s]
            assert t[j * s:(j + 1) * s] == row, (name, j)
PY
run "$TGRAPH" stitch "$TMP/e" -o "$TMP/unreal" --tile-files unreal
expect_rc 2 "unreal tiles of a 1025 world"
expect_in "$TMP/err" "e.g. 1009" "the refusal suggests a resolution Unreal takes"
expect_no_files "$TMP/unreal" "refused unreal tiles"
run "$TGRAPH" plan "$EXAMPLES/island.tgraph" --tiles 2,2 --resolution 1009 -o "$TMP/e2" --quiet
run env TGRAPH="$TGRAPH" "$TMP/e2/run-parallel.sh"
run "$TGRAPH" stitch "$TMP/e2" -o "$TMP/unreal" --tile-files unreal --tile-size 505
expect_rc 0 "stitch --tile-files unreal"
for t in x0_y0 x1_y0 x0_y1 x1_y1; do
  checks=$((checks + 1))
  [ -f "$TMP/unreal/island_height_$t.png" ] || fail "no Unreal tile island_height_$t.png"
done
expect_in "$TMP/unreal/manifest.json" '"resolution": [505, 505]' "Unreal tiles are 505 samples"
rm -rf "$TMP/e" "$TMP/e2" "$TMP/ewhole" "$TMP/unity" "$TMP/unreal"

# --- memory: a job's peak at a fixed tile size does not grow with the world ------------

cat > "$TMP/rss-tgraph" << 'SH'
#!/bin/sh
exec python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "a") as f:
    f.write("%d %s\n" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, " ".join(sys.argv[2:])))
sys.exit(rc)' "$RSS_LOG" "$TGRAPH_EXE" "$@"
SH
chmod +x "$TMP/rss-tgraph"
L="$DATA/tiled_local.tgraph"
for n in 2 4; do
  res=$((512 * n + 1))
  export RSS_LOG="$TMP/rss-$n.log"
  run "$TGRAPH" plan "$L" --tiles $n,$n -o "$TMP/m$n" --resolution $res --threads 1
  expect_rc 0 "plan ${n}x$n at $res"
  run env TGRAPH="$TMP/rss-tgraph" "$TMP/m$n/run-parallel.sh" -j 2
  expect_rc 0 "run ${n}x$n at $res"
  rm -rf "$TMP/m$n"
done
peak2=$(sort -n "$TMP/rss-2.log" | tail -1 | cut -d' ' -f1)
peak4=$(sort -n "$TMP/rss-4.log" | tail -1 | cut -d' ' -f1)
echo "largest job's peak RSS, 512-sample tiles: 2x2 (1025²) $peak2 KiB, 4x4 (2049²) $peak4 KiB"
checks=$((checks + 1))
[ $((peak4 * 100)) -le $((peak2 * 115)) ] ||
  fail "a job's peak RSS grew with the world at a fixed tile size: $peak2 -> $peak4 KiB"

# Absolute memory figures mean nothing under AddressSanitizer (shadow
# memory, redzones and its quarantine double a process's RSS): the checks
# against a number run in the plain build only.
asan=""
ldd "$TGRAPH" 2> /dev/null | grep -q libasan && asan=yes

# --- memory: every job within the plan's estimate ------------------------------------------
# The estimate is what submit-slurm.sh asks for (--mem), so it must be an
# upper bound: every global node but the droplets (erosion.flow's reduces
# and steps included) at 2049² in 2x2 tiles of 1024².
if [ -n "$asan" ]; then
  echo "skip: jobs against the plan's memory estimates (AddressSanitizer build: RSS inflated)"
else
  export RSS_LOG="$TMP/rss-est.log"
  run "$TGRAPH" plan "$DATA/tiled_fast.tgraph" --tiles 2,2 -o "$TMP/est" --resolution 2049 --quiet
  expect_rc 0 "plan tiled_fast at 2049²"
  run env TGRAPH="$TMP/rss-tgraph" "$TMP/est/run-parallel.sh" -j 2
  expect_rc 0 "run tiled_fast at 2049²"
  checks=$((checks + 1))
  if ! python3 - "$TMP/est/plan.json" "$RSS_LOG" > "$TMP/est.txt" << 'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
est = {}
for st in plan["stages"]:
    for job in st["jobs"]:
        est[job["command"].replace("$TGRAPH ", "")] = (st["stage"], job["memory_bytes"])
bad, worst, which = 0, 0.0, ""
for line in open(sys.argv[2]):
    kib, exe, cmd = line.split(" ", 2)
    stage, limit = est[cmd.strip()]
    if int(kib) * 1024.0 / limit > worst:
        worst, which = int(kib) * 1024.0 / limit, "stage %d, %s KiB" % (stage, kib)
    if int(kib) * 1024 > limit:
        bad += 1
        print("stage %d: %s KiB over its estimate of %d KiB: %s" % (stage, kib, limit // 1024, cmd.strip()))
print("largest share of its estimate a job used: %.0f%% (%s)" % (100 * worst, which))
sys.exit(1 if bad else 0)
PY
  then
    fail "a job needed more memory than the plan's estimate"
  fi
  cat "$TMP/est.txt"
  rm -rf "$TMP/est"
fi

# --- memory: stitch holds a row of tiles, not the world ---------------------------------
# A 4097² RGBA colour map is 67 MB whole; stitch encodes it from one row of
# 8x8 tiles at a time (4097 x 512 x 4 bytes), and the bytes stay the whole
# build's (raw16 south first too).
B="$DATA/stitch_band.tgraph"
run "$TGRAPH" plan "$B" --tiles 8,8 -o "$TMP/band" --quiet
expect_rc 0 "plan the 4097² stitch graph"
run run_stages "$TMP/band"
expect_rc 0 "run the 4097² stitch graph's jobs"
export RSS_LOG="$TMP/rss-stitch.log"
run "$TMP/rss-tgraph" stitch "$TMP/band" -o "$TMP/band-out"
expect_rc 0 "stitch 4097² in 8x8"
run "$TGRAPH" eval "$B" -o "$TMP/band-whole" --quiet
expect_rc 0 "whole eval of the 4097² stitch graph"
checks=$((checks + 1))
diff -r "$TMP/band-whole" "$TMP/band-out" > /dev/null ||
  fail "the 4097² stitched files differ from the whole build"
peak=$(cut -d' ' -f1 "$RSS_LOG" | sort -n | tail -1)
echo "stitch of a 4097² RGBA map (67 MB whole) in 8x8 tiles: peak RSS $peak KiB"
if [ -n "$asan" ]; then
  echo "skip: stitch's peak against 40 MB (AddressSanitizer build: RSS inflated)"
else
  checks=$((checks + 1))
  [ "$peak" -lt 40000 ] || fail "stitch held $peak KiB: more than a row of tiles"
fi
rm -rf "$TMP/band" "$TMP/band-out" "$TMP/band-whole"

finish
