#!/bin/bash
# The memory estimate against the measured peak: for each example graph
# at each resolution, `tgraph info --resolution N` (the estimate `tgraph
# eval` checks before it starts) and the peak RSS of `tgraph eval` from
# /usr/bin/time -f %M, with the CPU and wall time of the build.
#
#   tests/bench/memory_estimate.sh TGRAPH [RESOLUTIONS] [FILES...]
#
# Defaults: 2049,4097 and every data/examples/*.tgraph.  Not run by the
# test suite (4097² builds take minutes); cli_memory checks 1025².
set -eu

[ $# -ge 1 ] || { echo "usage: $0 TGRAPH [RESOLUTIONS] [FILES...]" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
TGRAPH=$(realpath "$1")
RES=${2:-2049,4097}
shift $(($# >= 2 ? 2 : 1))
files=("$@")
[ ${#files[@]} -gt 0 ] || files=("$src"/data/examples/*.tgraph)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

to_mib () { # "12.3 MiB" / "1.20 GiB" -> MiB
  awk -v v="$1" -v u="$2" 'BEGIN { m = u == "GiB" ? 1024 : u == "KiB" ? 1 / 1024 : u == "B" ? 1 / 1048576 : 1; printf "%.1f", v * m }'
}

printf '%-10s %6s %12s %12s %7s %9s %9s\n' graph res estimate_MiB peak_MiB error cpu_s wall_s
for f in "${files[@]}"; do
  for r in ${RES//,/ }; do
    est=$("$TGRAPH" info --resolution "$r" "$f" | sed -n 's/^memory: about \([0-9.]*\) \([KMG]*i*B\).*/\1 \2/p')
    est_mib=$(to_mib $est)
    rm -rf "$work/out"
    /usr/bin/time -f '%M %U %S %e' -o "$work/time" \
      "$TGRAPH" eval "$f" --resolution "$r" -o "$work/out" --quiet
    read -r kib user sys wall < "$work/time"
    peak_mib=$(awk -v k="$kib" 'BEGIN { printf "%.1f", k / 1024 }')
    err=$(awk -v e="$est_mib" -v p="$peak_mib" 'BEGIN { printf "%+.0f%%", (e - p) / p * 100 }')
    cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')
    printf '%-10s %6s %12s %12s %7s %9s %9s\n' "$(basename "$f" .tgraph)" "$r" "$est_mib" \
      "$peak_mib" "$err" "$cpu" "$wall"
  done
done
