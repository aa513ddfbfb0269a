#!/bin/bash
# Flow accumulation against GRASS r.watershed (MFD, its default) on the
# same heightmap, in one run: bench_flow makes the fBm heightmap, times
# erosion.flow's whole-world evaluation (fill, flat ranks, MFD routing) on
# one thread and on all, and writes the heights as raw f32; r.watershed
# reads them (r.in.bin) and computes its accumulation.  Ratios in CPU time
# and in wall time (r.watershed runs on one thread; the import is not
# timed).
# Usage: peers_flow.sh BENCH_FLOW [SIZE [RUNS]]
set -u
bench=$1 size=${2:-2049} runs=${3:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v grass > /dev/null 2>&1; then
  echo "GRASS r.watershed: skipped (no grass: apt-get install grass-core)"
  exit 0
fi
"$bench" "$size" "$runs" "$tmp/h.f32" | tee "$tmp/bench" || exit 1

cat > "$tmp/ws.sh" <<EOS
set -e
r.in.bin -f input="$tmp/h.f32" output=h bytes=4 order=native rows=$size cols=$size \
  north=$size south=0 east=$size west=0 --quiet
g.region raster=h
best_u=1e30 best_w=1e30
for r in \$(seq $runs); do
  s=\$(date +%s.%N)
  TIMEFORMAT='%U %S'
  t=\$( { time r.watershed elevation=h accumulation=acc --overwrite --quiet > /dev/null 2>&1; } 2>&1 )
  e=\$(date +%s.%N)
  cpu=\$(echo \$t | awk '{ print \$1 + \$2 }')
  wall=\$(awk -v s=\$s -v e=\$e 'BEGIN { print e - s }')
  best_u=\$(awk -v a=\$best_u -v b=\$cpu 'BEGIN { print (b < a ? b : a) }')
  best_w=\$(awk -v a=\$best_w -v b=\$wall 'BEGIN { print (b < a ? b : a) }')
done
echo "RESULT watershed \$best_u \$best_w"
EOS
grass --tmp-location XY --exec bash "$tmp/ws.sh" 2> "$tmp/grass.err" | tee "$tmp/grass"
peer=$(awk '$1 == "RESULT" { print $3, $4 }' "$tmp/grass")
if [ -z "$peer" ]; then
  echo "GRASS r.watershed: failed:"
  sed 's/^/  | /' "$tmp/grass.err" | tail -20
  exit 1
fi
sed -n 's/^flow [0-9^]*, \([0-9]*\) threads\{0,1\},.*total CPU \([0-9.]*\) s, wall \([0-9.]*\) s.*/\1 \2 \3/p' \
  "$tmp/bench" | while read -r th cpu wall; do
  awk -v th="$th" -v c="$cpu" -v w="$wall" -v p="$peer" -v n="$size" 'BEGIN {
    split(p, q, " ")
    printf "flow %d^2, %d thread(s): erosion.flow %.3f s CPU / %.3f s wall, r.watershed MFD %.3f s CPU / %.3f s wall: %.2fx CPU, %.2fx wall\n",
      n, th, c, w, q[1], q[2], q[1] / c, q[2] / w }'
done
