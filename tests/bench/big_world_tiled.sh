#!/bin/bash
# The figures of a tiled world build, for the notes: plans FILE in NX,NY
# tiles, runs the plan with its own run-parallel.sh (GNU parallel, two jobs
# at a time), stitches, and prints the CPU time summed over every job
# (user + system, from getrusage of each job), the wall time, the largest
# job's peak RSS per stage and over the build, and stitch's own figures.
# With WHOLE_DIR (the output of `tgraph eval FILE` of the same world) it
# also compares the stitched files with it, byte for byte.
#
#   tests/bench/big_world_tiled.sh TGRAPH [FILE] [TILES] [WORK_DIR] [WHOLE_DIR] [-- PLAN OPTIONS]
#
# Defaults: tests/bench/big_world.tgraph (a 16385² alpine-like world), 8,8,
# /tmp/big-world-tiled.  Needs GNU parallel and python3.  Not run by the
# test suite: at 16385² it takes about an hour of CPU.
set -eu

pos=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  pos+=("$1")
  shift
done
[ "${1:-}" = "--" ] && shift
[ ${#pos[@]} -ge 1 ] || { echo "usage: $0 TGRAPH [FILE] [TILES] [WORK_DIR] [WHOLE_DIR] [-- PLAN OPTIONS]" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
TGRAPH=$(realpath "${pos[0]}")
FILE=$(realpath "${pos[1]:-$src/tests/bench/big_world.tgraph}")
TILES=${pos[2]:-8,8}
WORK=${pos[3]:-/tmp/big-world-tiled}
WHOLE=${pos[4]:-}

command -v parallel > /dev/null || { echo "GNU parallel is not installed" >&2; exit 2; }
rm -rf "$WORK"
mkdir -p "$WORK"
export PARALLEL_HOME="$WORK/parallel-home"
mkdir -p "$PARALLEL_HOME" && touch "$PARALLEL_HOME/will-cite"

# Each job through getrusage: peak RSS (KiB), user and system seconds.
cat > "$WORK/measured-tgraph" << 'SH'
#!/bin/sh
exec python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "a") as f:
    f.write("%d %.3f %.3f %s\n" % (u.ru_maxrss, u.ru_utime, u.ru_stime, " ".join(sys.argv[3:])))
sys.exit(rc)' "$JOB_LOG" "$TGRAPH_EXE" "$@"
SH
chmod +x "$WORK/measured-tgraph"
export TGRAPH_EXE="$TGRAPH" JOB_LOG="$WORK/jobs.log"

"$TGRAPH" plan "$FILE" --tiles "$TILES" -o "$WORK/plan" "$@" | tee "$WORK/plan.txt"
start=$(date +%s.%N)
TGRAPH="$WORK/measured-tgraph" "$WORK/plan/run-parallel.sh" -j 2 2> "$WORK/run.log"
mid=$(date +%s.%N)
JOB_LOG="$WORK/stitch.log" "$WORK/measured-tgraph" stitch "$WORK/plan" -o "$WORK/stitched"
end=$(date +%s.%N)
du -sh "$WORK/plan/store" > "$WORK/store-size.txt" 2>/dev/null || true

python3 - "$WORK" "$start" "$mid" "$end" << 'PY'
import collections, re, sys
work, start, mid, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
jobs = [l.split(" ", 3) for l in open(work + "/jobs.log")]
by_stage = collections.OrderedDict()
cpu = 0.0
for rss, ut, st, cmd in jobs:
    m = re.search(r"--stage (\d+)", cmd)
    s = int(m.group(1)) if m else -1
    e = by_stage.setdefault(s, [0, 0.0, 0, ""])
    e[1] += float(ut) + float(st)
    e[2] += 1
    if int(rss) > e[0]:
        e[0], e[3] = int(rss), cmd.strip()
    cpu += float(ut) + float(st)
for s in sorted(by_stage):
    rss, c, n, cmd = by_stage[s]
    print("stage %3d: %4d jobs, CPU %8.1f s, largest job %7.1f MiB" % (s, n, c, rss / 1024.0))
big = max(jobs, key=lambda j: int(j[0]))
print("jobs: %d, CPU (user + sys) %.0f s, wall %.0f s with run-parallel.sh -j 2"
      % (len(jobs), cpu, mid - start))
print("largest job: %.1f MiB peak RSS: %s" % (int(big[0]) / 1024.0, big[3].strip()))
rss, ut, st, _ = open(work + "/stitch.log").read().split(" ", 3)
print("stitch: %.1f MiB peak RSS, CPU %.1f s, wall %.1f s" % (int(rss) / 1024.0, float(ut) + float(st), end - mid))
PY
cat "$WORK/store-size.txt"
if [ -n "$WHOLE" ]; then
  if diff -r "$WHOLE" "$WORK/stitched" > "$WORK/diff.txt"; then
    echo "stitched == whole: every file and the manifest are the same bytes"
  else
    echo "stitched != whole:"
    head -20 "$WORK/diff.txt"
    exit 1
  fi
fi
