#!/bin/bash
# Ctrl+C during tgraph eval: the engine's cancel token stops the build
# quickly, the exit status is 130 (128 + SIGINT) and no file is left.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TMP/out-dir"
# Four warped 16-octave Worley noises at 3073²: several seconds on 2 threads.
"$TGRAPH" eval "$DATA/slow.tgraph" -o "$TMP/out-dir" --resolution 3073 --threads 2 \
  > "$TMP/out" 2> "$TMP/err" &
pid=$!
sleep 0.5
if ! kill -0 "$pid" 2> /dev/null; then
  wait "$pid"
  fail "the slow graph finished (status $?) within 0.5 s; make tests/cli/data/slow.tgraph heavier"
  finish
fi
t0=$(date +%s%N)
kill -INT "$pid"
wait "$pid"
rc=$?
t1=$(date +%s%N)
ms=$(((t1 - t0) / 1000000))
echo "stopped $ms ms after SIGINT"

expect_rc 130 "eval interrupted by SIGINT"
expect_in "$TMP/err" "cancelled; nothing was written" "eval interrupted by SIGINT"
expect_no_files "$TMP/out-dir" "eval interrupted by SIGINT"
# Generous for sanitizer builds on a loaded CI machine; normally well under 100 ms.
checks=$((checks + 1))
[ "$ms" -lt 3000 ] || fail "cancel took $ms ms"

finish
