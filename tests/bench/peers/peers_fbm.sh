#!/bin/bash
# fBm against its peers, in one run: the node and a plain textbook loop
# (bench_fbm), libnoise's Perlin module, and the whole `tgraph eval` of a
# 2048² 6-octave fBm to r32 against the plain loop plus one fwrite.  CPU
# time (user + sys) is what the ratios use, so other work on a shared
# machine cancels out; wall time is printed beside it.
# Usage: peers_fbm.sh BENCH_FBM TGRAPH PLAIN_FBM_R32 LIBNOISE_FBM|none
set -u
bench=$1 tgraph=$2 plain=$3 libnoise=$4
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bench" 3 6 | tee "$tmp/bench"
node=$(awk '$1 == "RESULT" && $2 == "node" { print $3 }' "$tmp/bench")
base=$(awk '$1 == "RESULT" && $2 == "plain" { print $3 }' "$tmp/bench")
echo
if [ "$libnoise" = none ]; then
  echo "libnoise: skipped (no libnoise-dev or no C++ compiler: apt-get install libnoise-dev g++)"
else
  "$libnoise" 3 6 | tee "$tmp/libnoise"
  ln=$(awk '$1 == "RESULT" { print $3 }' "$tmp/libnoise")
  awk -v n="$node" -v l="$ln" -v b="$base" 'BEGIN {
    printf "node vs libnoise (CPU): %.2fx; plain loop vs libnoise: %.2fx\n", l / n, l / b }'
fi

# Whole process, best of 3 by CPU: tgraph eval vs plain loop + fwrite.
# Each figure is a batch of 5 runs divided by 5: /usr/bin/time counts in
# 10 ms steps, and a run of tgraph eval takes a few of them.
batch=5
best () {
  : > "$tmp/times"
  for k in 1 2 3; do
    /usr/bin/time -a -o "$tmp/times" -f "%e %U %S" bash -c '
      n=$1; shift
      for i in $(seq "$n"); do rm -rf "$OUT"; "$@" > /dev/null 2>&1 || exit 1; done' _ "$batch" "$@"
  done
  # "CPU wall" of the batch with the least CPU, per run.
  awk -v n="$batch" '{ print ($2 + $3) / n, $1 / n }' "$tmp/times" | sort -g | head -1
}
if [ -x /usr/bin/time ]; then
  export OUT="$tmp/o"
  read -r tc1 tw1 < <(best "$tgraph" eval "$here/fbm2048.tgraph" -o "$OUT" --threads 1 --quiet)
  read -r tc2 tw2 < <(best "$tgraph" eval "$here/fbm2048.tgraph" -o "$OUT" --threads 2 --quiet)
  read -r pc pw < <(best "$plain" "$tmp/plain.r32")
  printf "\nwhole process, 2048² 6-octave fBm to r32 (the plain loop runs on 1 thread):\n"
  printf "  %-44s wall %6.3f s  CPU %6.3f s\n" \
    "tgraph eval, 1 thread (manifest + SHA-256)" "$tw1" "$tc1" \
    "tgraph eval, 2 threads (manifest + SHA-256)" "$tw2" "$tc2" \
    "plain loop + fwrite, 1 thread" "$pw" "$pc"
  awk -v t1="$tc1" -v t2="$tc2" -v w1="$tw1" -v w2="$tw2" -v p="$pc" -v pw="$pw" 'BEGIN {
    printf "  tgraph eval vs plain loop + fwrite: CPU %.2fx (1 thread), %.2fx (2 threads); ", p / t1, p / t2
    printf "wall %.2fx, %.2fx\n", pw / w1, pw / w2 }'
else
  echo "whole process: skipped (no /usr/bin/time: apt-get install time)"
fi
