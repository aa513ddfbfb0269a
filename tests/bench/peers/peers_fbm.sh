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
best () {
  : > "$tmp/times"
  for k in 1 2 3; do
    rm -rf "$tmp/o"
    /usr/bin/time -a -o "$tmp/times" -f "%e %U %S" "$@" > /dev/null 2>&1
  done
  # "CPU wall" of the run with the least CPU.
  awk '{ print $2 + $3, $1 }' "$tmp/times" | sort -g | head -1
}
if [ -x /usr/bin/time ]; then
  read -r tc tw < <(best "$tgraph" eval "$here/fbm2048.tgraph" -o "$tmp/o" --threads 1 --quiet)
  read -r pc pw < <(best "$plain" "$tmp/plain.r32")
  printf "\nwhole process, 2048² 6-octave fBm to r32, 1 thread:\n"
  printf "  %-36s wall %6.3f s  CPU %6.3f s\n" "tgraph eval (with manifest + SHA-256)" "$tw" "$tc" \
    "plain loop + fwrite" "$pw" "$pc"
  awk -v t="$tc" -v p="$pc" 'BEGIN { printf "  tgraph eval vs plain loop + fwrite (CPU): %.2fx\n", p / t }'
else
  echo "whole process: skipped (no /usr/bin/time: apt-get install time)"
fi
