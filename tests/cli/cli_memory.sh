#!/bin/bash
# tgraph eval refuses, before anything runs, a build its memory estimate
# says cannot fit (exit 2, nothing written, the node and the figure
# named); --memory-limit; the estimate `tgraph info` prints, against the
# peak RSS of the build it describes.
. "$(dirname "$0")/lib.sh"

# elapsed CMD...: runs CMD as run does, and the wall seconds in $secs.
elapsed () {
  local t0 t1
  t0=$(date +%s.%N)
  run "$@"
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}

# --- --memory-limit -------------------------------------------------------
for bad in "" 12X -5 G 0 1.5.2G; do
  run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/x" --memory-limit "$bad"
  expect_rc 2 "--memory-limit \"$bad\""
  expect_in "$TMP/err" "--memory-limit: expected a size such as 512M, 20G or a number of bytes" \
    "--memory-limit \"$bad\" says what it expects"
done
[ ! -e "$TMP/x" ] || fail "a refused --memory-limit created the output folder"
for good in 1G 512M 512MiB 2gb 1.5G 1073741824; do
  run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/ok" --memory-limit "$good" --quiet
  expect_rc 0 "--memory-limit $good"
done

# --- a small limit refuses an example, naming the node --------------------
run "$TGRAPH" eval "$EXAMPLES/island.tgraph" -o "$TMP/island" --memory-limit 16M
expect_rc 2 "island in 16 MiB"
expect_in "$TMP/err" "island.tgraph: node \"" "the refusal names a node"
expect_in "$TMP/err" "at 1025²; limit 16.0 MiB (--memory-limit)" "the refusal gives the figures"
expect_in "$TMP/err" "nothing was written to $TMP/island/" "the refusal says nothing was written"
[ ! -e "$TMP/island" ] || fail "a refused build created its output folder"

# --- a plan's job, against its plan's estimate ----------------------------
run "$TGRAPH" plan "$DATA/small.tgraph" --tiles 2,2 -o "$TMP/plan" --quiet
expect_rc 0 "plan small"
(cd "$TMP/plan" && "$TGRAPH" eval graph/graph.tgraph -o . --tiles 2,2 --stage 0 --tile 1,0 \
  --memory-limit 1M > "$TMP/out" 2> "$TMP/err")
rc=$?
expect_rc 2 "a plan's job in 1 MiB"
expect_in "$TMP/err" "stage 0 job of a tile needs about" "the refusal names the job"
[ -z "$(find "$TMP/plan" -name '*.tile')" ] || fail "a refused job wrote its tile"

# --- thermal erosion at 16385²: its apron is cut at the world's edge ------
# 5000 iterations at a quarter of the reference cell's area: 20000 passes,
# more than the world; the noise under it is asked for the world (16385²),
# not the world grown by 20000 on every side (56385², 12 GiB and more),
# so the build needs about 5 GiB: refused in 4.  (A refusal that does not
# come would build for hours: timeout stops it.)
elapsed timeout 30 "$TGRAPH" eval "$DATA/talus.tgraph" --resolution 16385 -o "$TMP/talus" \
  --memory-limit 4G
expect_rc 2 "thermal at 16385² in 4 GiB"
expect_in "$TMP/err" "node \"talus\": needs about 5.02 GiB at 16385²; limit 4.00 GiB (--memory-limit)" \
  "the refusal names the thermal node and its region"
expect_not_in "$TMP/err" "with its apron" "the thermal node's input is the world, not more"
awk -v s="$secs" 'BEGIN { exit !(s < 2) }' || fail "the refusal took $secs s"
[ ! -e "$TMP/talus" ] || fail "a refused build created its output folder"
run "$TGRAPH" info --resolution 16385 "$DATA/talus.tgraph"
expect_rc 0 "info of thermal at 16385²"
expect_in "$TMP/out" "memory: about " "info prints the estimate"

# --- a PNG of 520 KB that declares 65536² 1-bit (4 GiB decoded) ------------
# Refused from its header: the build stops before anything is decoded.
mkdir -p "$TMP/big"
cp "$DATA/big_declared.tgraph" "$TMP/big/"
python3 - "$TMP/big/big.png" <<'PY'
import struct, sys, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
side = 65536
z = zlib.compressobj(9)
row = bytes(1 + side // 8)          # filter byte + 65536 one-bit samples
body = b"".join(z.compress(row) for _ in range(side)) + z.flush()
with open(sys.argv[1], "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0))
            + chunk(b"IDAT", body) + chunk(b"IEND", b""))
PY
size=$(stat -c %s "$TMP/big/big.png")
[ "$size" -lt 1000000 ] || fail "the 65536² PNG takes $size bytes"
elapsed /usr/bin/time -f '%M' -o "$TMP/rss" timeout 30 "$TGRAPH" eval "$TMP/big/big_declared.tgraph" \
  -o "$TMP/big/out" --memory-limit 2G
expect_rc 2 "a 65536² 1-bit PNG in 2 GiB"
expect_in "$TMP/err" "node \"scan\": needs about 4.00 GiB at 65², 4.00 GiB of it input files decoded; limit 2.00 GiB" \
  "the refusal names the input node and the decoded file"
rss=$(tail -n 1 "$TMP/rss")
[ "$rss" -lt 65536 ] || fail "the refusal took $rss KiB: the PNG was decoded"
awk -v s="$secs" 'BEGIN { exit !(s < 2) }' || fail "the refusal took $secs s"
[ ! -e "$TMP/big/out" ] || fail "a refused build created its output folder"

# --- the estimate against the build's peak RSS ----------------------------
# tests/bench/memory_estimate.sh measures every example at 2049² and 4097².
# Absolute RSS means nothing under AddressSanitizer (shadow memory,
# redzones and its quarantine): the comparison runs in the plain build.
if ldd "$TGRAPH" 2> /dev/null | grep -q libasan; then
  echo "skip: the estimate against peak RSS (AddressSanitizer build: RSS inflated)"
else
for ex in island ridges; do
  run "$TGRAPH" info "$EXAMPLES/$ex.tgraph"
  est=$(sed -n 's/^memory: about \([0-9.]*\) MiB.*/\1/p' "$TMP/out")
  /usr/bin/time -f '%M' -o "$TMP/rss" "$TGRAPH" eval "$EXAMPLES/$ex.tgraph" -o "$TMP/m-$ex" --quiet
  rss=$(cat "$TMP/rss")
  checks=$((checks + 1))
  awk -v e="$est" -v k="$rss" 'BEGIN { p = k / 1024; exit !(e > 0 && e >= 0.75 * p && e <= 1.25 * p) }' ||
    fail "$ex: estimate ${est:-?} MiB, peak RSS $((rss / 1024)) MiB: more than 25% apart"
done
# alpine at 1025² (its erosion made cheap: the same maps, 2 s of CPU):
# every result is let go at its last read, output by output, windows are
# read from the larger result rather than held as copies, export.splat
# streams its maps, and --report keeps thumbnails, not results.  Before,
# 105 MiB (277 MiB with --report); now about 75 MiB either way.
cheap=(--set rain.droplets_per_km2=3000 --set drainage.duration_yr=20000)
for report in "" "--report $TMP/alpine.html"; do
  # shellcheck disable=SC2086
  /usr/bin/time -f '%M' -o "$TMP/rss" "$TGRAPH" eval "$EXAMPLES/alpine.tgraph" --resolution 1025 \
    --threads 2 "${cheap[@]}" -o "$TMP/m-alpine" --quiet $report
  rc=$?
  rss=$(tail -n 1 "$TMP/rss")
  checks=$((checks + 1))
  [ "$rc" -eq 0 ] || fail "alpine at 1025²${report:+ with --report}: exit $rc"
  [ "$rss" -le $((90 * 1024)) ] ||
    fail "alpine at 1025²${report:+ with --report}: peak RSS $((rss / 1024)) MiB, over 90 MiB"
  rm -rf "$TMP/m-alpine"
done
[ -s "$TMP/alpine.html" ] || fail "alpine's --report wrote no report"
# erosion.flow alone at 2049²: its shares are made row by row and its
# arrays freed as they are done with (141 MiB; 278 MiB when it held eight
# planes of shares), and its estimate says so.
run "$TGRAPH" info --resolution 2049 "$DATA/flow_memory.tgraph"
est=$(sed -n 's/^memory: about \([0-9.]*\) MiB.*/\1/p' "$TMP/out")
/usr/bin/time -f '%M' -o "$TMP/rss" "$TGRAPH" eval "$DATA/flow_memory.tgraph" --resolution 2049 \
  --threads 2 -o "$TMP/m-flow" --quiet
rss=$(cat "$TMP/rss")
checks=$((checks + 1))
[ "$rss" -le $((200 * 1024)) ] || fail "flow at 2049²: peak RSS $((rss / 1024)) MiB, over 200 MiB"
awk -v e="$est" -v k="$rss" 'BEGIN { p = k / 1024; exit !(e > 0 && e >= 0.75 * p && e <= 1.25 * p) }' ||
  fail "flow at 2049²: estimate ${est:-?} MiB, peak RSS $((rss / 1024)) MiB: more than 25% apart"
fi

finish
