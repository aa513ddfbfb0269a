#!/bin/bash
# tgraph eval: the files and manifest it writes, identical bytes for any
# thread count, --resolution and --set, and failures that leave nothing.
. "$(dirname "$0")/lib.sh"

# manifest_lines DIR: "path bytes sha256" per file listed in DIR/manifest.json.
manifest_lines () {
  python3 - "$1/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for f in m["files"]:
    print(f["path"], f["bytes"], f["sha256"])
PY
}

# png_header FILE: "WIDTH HEIGHT BITDEPTH COLOURTYPE" from the IHDR chunk.
png_header () {
  python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read(33)
assert d[:8] == b"\x89PNG\r\n\x1a\n" and d[12:16] == b"IHDR", "not a PNG"
w, h, bits, colour = struct.unpack(">IIBB", d[16:26])
print(w, h, bits, colour)
PY
}

# --- a good build ---------------------------------------------------------
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/a"
expect_rc 0 "eval small"
for f in small.png sub/small.r16 manifest.json; do
  [ -f "$TMP/a/$f" ] || fail "eval did not write $f"
done
expect_in "$TMP/out" "wrote 3 files to $TMP/a/" "eval lists what it wrote"
grep -qE '^  small\.png +[0-9.]+ (B|KiB) +65x65 +png16$' "$TMP/out" ||
  fail "eval's listing of small.png: $(cat "$TMP/out")"
grep -qE '^  sub/small\.r16 +8\.3 KiB +65x65 +raw16$' "$TMP/out" ||
  fail "eval's listing of sub/small.r16: $(cat "$TMP/out")"
# Not a terminal: one plain log line per node.
for n in base island mix png raw; do
  grep -qE "^$n: done \([0-9]+\.[0-9]{2} s, process CPU [0-9]+\.[0-9]{2} s\)$" "$TMP/err" || fail "no log line for node $n: $(cat "$TMP/err")"
done
[ "$(ls -A "$TMP/a" | sort | tr '\n' ' ')" = "manifest.json small.png sub " ] ||
  fail "unexpected files in the output: $(ls -AR "$TMP/a")"

[ "$(stat -c %s "$TMP/a/sub/small.r16")" = $((65 * 65 * 2)) ] || fail "small.r16 is not 65*65*2 bytes"
[ "$(png_header "$TMP/a/small.png")" = "65 65 16 0" ] ||
  fail "small.png is not 65x65 16-bit grey: $(png_header "$TMP/a/small.png")"

# The manifest lists every other file with its true size and SHA-256.
manifest_lines "$TMP/a" > "$TMP/manifest.txt" || fail "manifest.json does not parse"
[ "$(wc -l < "$TMP/manifest.txt")" = 2 ] || fail "manifest should list 2 files: $(cat "$TMP/manifest.txt")"
while read -r path bytes sum; do
  checks=$((checks + 1))
  [ "$(sha256 "$TMP/a/$path")" = "$sum" ] || fail "manifest sha256 of $path is $sum, sha256sum says $(sha256 "$TMP/a/$path")"
  [ "$(stat -c %s "$TMP/a/$path")" = "$bytes" ] || fail "manifest size of $path is wrong"
done < "$TMP/manifest.txt"
python3 - "$TMP/a/manifest.json" <<'PY' || fail "manifest world/graph fields"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["graph"] == "small.tgraph", m["graph"]
assert m["world"]["resolution"] == 65 and m["world"]["seed"] == 7, m["world"]
assert [f["path"] for f in m["files"]] == ["small.png", "sub/small.r16"], m["files"]
PY

# --- the same bytes for any thread count ----------------------------------
for t in 1 2 4; do
  run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/t$t" --threads "$t" --quiet
  expect_rc 0 "eval --threads $t"
  for f in small.png sub/small.r16 manifest.json; do
    expect_same "$TMP/a/$f" "$TMP/t$t/$f" "--threads $t: $f"
  done
done
# At 2049 samples the PNG is 17 strips deflated side by side: still the
# same bytes for any thread count.
for t in 1 2 3; do
  run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/s$t" -r 2049 --threads "$t" --quiet
  expect_rc 0 "eval -r 2049 --threads $t"
  [ $t = 1 ] || expect_same "$TMP/s1/small.png" "$TMP/s$t/small.png" "-r 2049 --threads $t: small.png"
done

# --quiet: nothing at all on either stream.
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/q" --quiet
expect_rc 0 "eval --quiet"
[ -s "$TMP/out" ] || [ -s "$TMP/err" ] && fail "--quiet printed: $(cat "$TMP/out" "$TMP/err")"

# Evaluating again into the same folder replaces the files with the same bytes.
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/q" --quiet
expect_rc 0 "eval into an existing folder"
expect_same "$TMP/a/small.png" "$TMP/q/small.png" "eval into an existing folder"

# --- --resolution -----------------------------------------------------------
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/r" --resolution 129 --quiet
expect_rc 0 "eval --resolution 129"
[ "$(png_header "$TMP/r/small.png")" = "129 129 16 0" ] || fail "--resolution 129: $(png_header "$TMP/r/small.png")"
[ "$(stat -c %s "$TMP/r/sub/small.r16")" = $((129 * 129 * 2)) ] || fail "--resolution 129: r16 size"
python3 - "$TMP/r/manifest.json" <<'PY' || fail "--resolution 129 in the manifest"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["world"]["resolution"] == 129
assert all(f["resolution"] == [129, 129] for f in m["files"]), m["files"]
PY

# --- --set ------------------------------------------------------------------
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/s" --set base.octaves=2 --quiet
expect_rc 0 "--set base.octaves=2"
cmp -s "$TMP/a/small.png" "$TMP/s/small.png" && fail "--set base.octaves=2 did not change the output"
# Setting a parameter to the value it already has changes nothing.
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/s5" -s base.octaves=5 --quiet
expect_rc 0 "--set base.octaves=5"
expect_same "$TMP/a/small.png" "$TMP/s5/small.png" "--set to the file's value"
# Several --set, of several kinds, the later one winning.
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/s8" --quiet --set png.format=png8 \
  --set=island.center_m=100,-50 --set island.shape=rounded_square --set base.octaves=3 \
  --set base.octaves=2
expect_rc 0 "several --set"
[ "$(png_header "$TMP/s8/small.png")" = "65 65 8 0" ] || fail "--set png.format=png8: $(png_header "$TMP/s8/small.png")"
cmp -s "$TMP/s/sub/small.r16" "$TMP/s8/sub/small.r16" && fail "--set island.center_m had no effect"

run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/bad" --set base.octaves=40
expect_rc 2 "--set out of range"
expect_in "$TMP/err" "--set base.octaves=40: " "--set out of range names the flag"
expect_in "$TMP/err" "40" "--set out of range names the value"
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/bad" --set base.octaves=many
expect_rc 2 "--set with a non-number"
expect_in "$TMP/err" "--set base.octaves=many: " "--set with a non-number"
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/bad" --set nosuch.octaves=3
expect_rc 2 "--set on a missing node"
expect_in "$TMP/err" 'the graph has no node "nosuch"' "--set on a missing node"
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/bad" --set base.octavs=3
expect_rc 2 "--set on a missing parameter"
expect_in "$TMP/err" 'node "base" (noise.fbm) has no parameter "octavs"' "--set on a missing parameter"
expect_in "$TMP/err" "octaves" "--set on a missing parameter lists the parameters"
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/bad" --set octaves=3
expect_rc 2 "--set without a node"
expect_in "$TMP/err" 'expected ID.PARAM=VALUE' "--set without a node"
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/bad" --set base.octaves
expect_rc 2 "--set without a value"
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/bad" --set png.path=../up.png
expect_rc 2 "--set of an escaping export path"
expect_in "$TMP/err" "--set png.path=../up.png" "--set of an escaping export path"
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/bad" --set png.format=jpeg
expect_rc 2 "--set of an unknown enum choice"
expect_in "$TMP/err" "png16" "--set of an unknown enum choice lists the choices"
[ -e "$TMP/bad" ] && fail "a rejected --set created the output folder"
[ -e "$TMP/up.png" ] && fail "an escaping path was written"

# --- refused export paths write nothing -----------------------------------
[ -e /tmp/tgraph-escape.png ] && had_escape=1 || had_escape=0
for f in unsafe_abs unsafe_dotdot; do
  mkdir -p "$TMP/u/$f"
  run "$TGRAPH" eval "$DATA/$f.tgraph" -o "$TMP/u/$f"
  expect_rc 2 "$f"
  expect_in "$TMP/err" "nodes[2] \"escape\".params.path" "$f"
  expect_no_files "$TMP/u/$f" "$f"
done
[ -e "$TMP/u/escape.png" ] && fail "../escape.png was written"
[ $had_escape = 0 ] && [ -e /tmp/tgraph-escape.png ] && fail "/tmp/tgraph-escape.png was written"

# --- a failing node: exit 1, the node named, no partial output ---------------
run "$TGRAPH" eval "$DATA/partial_fail.tgraph" -o "$TMP/f"
expect_rc 1 "eval with a missing input file"
expect_in "$TMP/err" 'node "scan" (input.heightmap): ' "the failing node is named"
expect_in "$TMP/err" "no_such_scan.png" "the missing file is named"
expect_no_files "$TMP/f" "a failed eval"
# An existing folder keeps what it had and gains nothing.
mkdir -p "$TMP/g"
echo keep > "$TMP/g/unrelated.txt"
run "$TGRAPH" eval "$DATA/partial_fail.tgraph" -o "$TMP/g" --threads 1
expect_rc 1 "eval with a missing input file into a used folder"
[ "$(ls -A "$TMP/g")" = "unrelated.txt" ] || fail "a failed eval changed the folder: $(ls -A "$TMP/g")"

# --- an export reads back losslessly through input.heightmap ----------------
mkdir -p "$TMP/re"
cp "$DATA/reimport.tgraph" "$TMP/a/small.png" "$TMP/re/"
run "$TGRAPH" eval "$TMP/re/reimport.tgraph" -o "$TMP/re/out" --quiet
expect_rc 0 "reimport"
expect_same "$TMP/a/small.png" "$TMP/re/out/again.png" "png16 export -> input.heightmap -> png16 export"

# --- bypass and warnings ------------------------------------------------------
# bypass.tgraph bypasses a blur, a normalize and a combine ("ui":
# {"bypass": true}): its files are bypass_ref.tgraph's, whose links skip
# them.  Its noise scale is below two cells: a warning naming the node,
# and the build succeeds.
run "$TGRAPH" eval "$DATA/bypass.tgraph" -o "$TMP/by" --quiet
expect_rc 0 "eval of a graph with bypassed nodes and a warning"
expect_in "$TMP/err" 'tgraph eval: '"$DATA"'/bypass.tgraph: warning: node "base" (noise.fbm): Scale 20 m is smaller than two cells of the world'"'"'s 15.625 m grid' "the warning names the node"
run "$TGRAPH" eval "$DATA/bypass_ref.tgraph" -o "$TMP/byref" --quiet
expect_rc 0 "eval of the graph without the bypassed nodes"
expect_same "$TMP/by/a.png" "$TMP/byref/a.png" "bypassed blur and normalize pass the noise through"
expect_same "$TMP/by/b.r16" "$TMP/byref/b.r16" "bypassed combine passes its \"a\" input through"
sed 's/, "bypass": true//; s/"ui": { "bypass": true }/"ui": {}/g' "$DATA/bypass.tgraph" > "$TMP/nobypass.tgraph"
run "$TGRAPH" eval "$TMP/nobypass.tgraph" -o "$TMP/nby" --quiet
expect_rc 0 "eval of the graph with the nodes not bypassed"
checks=$((checks + 1))
cmp -s "$TMP/by/a.png" "$TMP/nby/a.png" && fail "the bypass flag changed nothing"

finish
