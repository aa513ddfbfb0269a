#!/bin/bash
# Flow accumulation against GRASS r.watershed (MFD, its default) on the
# same heightmap: bench_flow makes the fBm heightmap, times erosion.flow's
# whole-world evaluation (fill, flat ranks, MFD routing) on one thread and
# on all, and writes the heights as raw f32; r.watershed reads them
# (r.in.bin, not timed) and computes its accumulation on one thread.
#
# The machine is shared and its load swings by several times within a
# minute, so the two are interleaved: each round runs bench_flow once (one
# run on one thread, one on all) and then r.watershed once, and the ratios
# are taken within a round; the figures printed are medians over the
# rounds, CPU time (which the load hardly changes) and wall time, then
# every round's ratios sorted, with the load average at the start and at
# the end.
# Usage: peers_flow.sh BENCH_FLOW [SIZE [ROUNDS]]      default 2049, 5
set -u
bench=$1 size=${2:-2049} rounds=${3:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v grass > /dev/null 2>&1; then
  echo "GRASS r.watershed: skipped (no grass: apt-get install grass-core)"
  exit 0
fi
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bench" "$size" 0 "$tmp/h.f32" || exit 1

cat > "$tmp/ws.sh" <<EOS
set -e
r.in.bin -f input="$tmp/h.f32" output=h bytes=4 order=native rows=$size cols=$size \
  north=$size south=0 east=$size west=0 --quiet
g.region raster=h
for r in \$(seq $rounds); do
  "$bench" "$size" 1 > "$tmp/bench.\$r"
  s=\$(date +%s.%N)
  TIMEFORMAT='%U %S'
  t=\$( { time r.watershed elevation=h accumulation=acc --overwrite --quiet > /dev/null 2>&1; } 2>&1 )
  e=\$(date +%s.%N)
  cpu=\$(echo \$t | awk '{ print \$1 + \$2 }')
  wall=\$(awk -v s=\$s -v e=\$e 'BEGIN { print e - s }')
  echo "RESULT \$r watershed \$cpu \$wall"
done
EOS
grass --tmp-location XY --exec bash "$tmp/ws.sh" 2> "$tmp/grass.err" > "$tmp/grass"
if ! grep -q '^RESULT' "$tmp/grass"; then
  echo "GRASS r.watershed: failed:"
  sed 's/^/  | /' "$tmp/grass.err" | tail -20
  exit 1
fi
# One line a round and thread count: round threads cpu wall peer_cpu peer_wall.
awk '$1 == "RESULT" { print $2, $4, $5 }' "$tmp/grass" | while read -r r pc pw; do
  sed -n 's/^flow [0-9^]*, \([0-9]*\) threads\{0,1\},.*total CPU \([0-9.]*\) s, wall \([0-9.]*\) s.*/\1 \2 \3/p' \
    "$tmp/bench.$r" | while read -r th cpu wall; do
    echo "$r $th $cpu $wall $pc $pw"
  done
done > "$tmp/rounds"
awk -v n="$size" '
  function median(a, k,   i, j, t) {
    for (i = 1; i <= k; i++)
      for (j = i + 1; j <= k; j++)
        if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  {
    printf "round %d, %d thread(s): erosion.flow %.3f s CPU / %.3f s wall, r.watershed %.3f s CPU / %.3f s wall: %.2fx CPU, %.2fx wall\n",
      $1, $2, $3, $4, $5, $6, $5 / $3, $6 / $4
    k = ++cnt[$2]; th[$2] = 1
    c[$2, k] = $3; w[$2, k] = $4; pc[$2, k] = $5; pw[$2, k] = $6
    rc[$2, k] = $5 / $3; rw[$2, k] = $6 / $4
  }
  END {
    for (t = 1; t <= 1024; t++) {
      if (!(t in th))
        continue
      k = cnt[t]
      for (i = 1; i <= k; i++) {
        a1[i] = c[t, i]; a2[i] = w[t, i]; a3[i] = pc[t, i]; a4[i] = pw[t, i]
        a5[i] = rc[t, i]; a6[i] = rw[t, i]
      }
      printf "flow %d^2, %d thread(s), median of %d rounds: erosion.flow %.3f s CPU / %.3f s wall, r.watershed MFD %.3f s CPU / %.3f s wall: %.2fx CPU, %.2fx wall (ratios within a round)\n",
        n, t, k, median(a1, k), median(a2, k), median(a3, k), median(a4, k), median(a5, k), median(a6, k)
      # median () sorted A5 and A6 in place: the ratios of all rounds, lowest first.
      printf "  %d thread(s), ratios sorted: CPU", t
      for (i = 1; i <= k; i++)
        printf " %.2f", a5[i]
      printf "; wall"
      for (i = 1; i <= k; i++)
        printf " %.2f", a6[i]
      printf "\n"
    }
  }' "$tmp/rounds"
# What the run on all threads would take on idle cores (bench_flow's
# critical path) against r.watershed's CPU time, the same round's.
awk '$1 == "RESULT" { print $2, $4 }' "$tmp/grass" | while read -r r pc; do
  sed -n 's/^  critical path.*; total \([0-9.]*\) s.*/\1/p' "$tmp/bench.$r" | sed "s/^/$pc /"
done | awk -v n="$size" '{ a[NR] = $1 / $2; c[NR] = $2 }
  END {
    if (NR == 0)
      exit
    for (i = 1; i <= NR; i++)
      for (j = i + 1; j <= NR; j++) {
        if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        if (c[j] < c[i]) { t = c[i]; c[i] = c[j]; c[j] = t }
      }
    m = NR % 2 ? (NR + 1) / 2 : NR / 2
    printf "flow %d^2, all threads on idle cores (critical path), median of %d rounds: %.3f s: %.2fx r.watershed CPU\n",
      n, NR, c[m], a[m]
  }'
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
