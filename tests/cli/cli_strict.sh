#!/bin/bash
# Strict input: what RFC 8259 refuses, text that is not UTF-8, numbers
# JSON cannot hold, and graphs eval would refuse are refused by `tgraph
# check` (exit 2) with the place; messages quote a number as the file
# writes it.  The bad files are the fuzz corpus's regress_strict_* inputs,
# so fuzz_replay runs them in every build too.
. "$(dirname "$0")/lib.sh"

CORPUS="$SRC/tests/fuzz/corpus/tgraph"

# strict NAME WANT-PLACE WANT-MESSAGE: tgraph check refuses
# regress_strict_NAME.tgraph with "FILE:LINE:COL: PLACE: ...MESSAGE".
strict () {
  local f="$CORPUS/regress_strict_$1.tgraph"
  run "$TGRAPH" check "$f"
  expect_rc 2 "$1"
  expect_in "$TMP/err" "$f:$2" "$1"
  expect_in "$TMP/err" "$3" "$1"
  # Messages are UTF-8 whatever the file held.
  iconv -f UTF-8 -t UTF-8 "$TMP/err" > /dev/null 2>&1 || fail "$1: the message is not UTF-8"
}

# What json-c's strict mode refuses, named in RFC 8259's terms.
strict single_quotes '9:91: ' 'syntax error: unexpected character (JSON strings and keys take double quotes)'
strict trailing_comma '6:84: ' '(JSON allows no comma before a closing bracket)'
strict comment '4:86: ' '(JSON has no comments)'
# What it lets through.
strict control_char '9:71: nodes[3] "png".params.path: ' 'control character U+0009 in a string; JSON writes it as \t'
strict utf8_path '9:71: nodes[3] "png".params.path: ' 'invalid UTF-8 (byte 0xff)'
strict utf8_overlong '9:69: nodes[3] "png".params.path: ' 'invalid UTF-8 (byte 0xc0)'
strict utf8_id '6:15: nodes[0].id: ' 'invalid UTF-8 (byte 0xe9)'
strict utf8_key '6:85: nodes[0] "base".params: ' 'invalid UTF-8 (byte 0xfe)'
strict utf8_ui '8:96: nodes[2] "mix".ui.note: ' 'invalid UTF-8 (byte 0xe9)'
strict lone_surrogate '9:71: nodes[3] "png".params.path: ' '\ud800 is the first half of a UTF-16 surrogate pair, alone'
strict nan '6:65: nodes[0] "base".params.scale_m: ' 'NaN is not a JSON number (JSON has no NaN or Infinity)'
strict infinity '6:65: nodes[0] "base".params.scale_m: ' '-Infinity is not a JSON number'
strict number_dot '6:81: nodes[0] "base".params.octaves: ' '5. is not a JSON number'
strict duplicate_key '6:84: nodes[0] "base".params.octaves: ' 'the key "octaves" appears twice in one object'
# Numbers as written.
strict float_1e400 '6:65: nodes[0] "base".params.scale_m: ' 'expected a number in 1..1000000, got 1e400'
strict int_1_2e29 '6:81: nodes[0] "base".params.octaves: ' 'expected an integer in 1..16, got 1.2e29'
strict int_huge '6:81: nodes[0] "base".params.octaves: ' 'got 12345678901234567890123'
strict seed_huge '4:81: world.seed: ' 'expected an integer in 0..4294967295, got 1e30'
# Link-aware validation: a linked mask needs a layer to paint.
strict splat_mask_without_layer '8:69: nodes[2] "splat".params.layers: ' \
  "input 'mask1' is linked but params.layers has 0 entries"

# Nothing of a refused file reaches fmt's output or a build.
# (fmt rewrites in place: a copy, so a tgraph that took it spoils no corpus.)
cp "$CORPUS/regress_strict_utf8_ui.tgraph" "$TMP/utf8_ui.tgraph"
run "$TGRAPH" fmt "$TMP/utf8_ui.tgraph"
expect_rc 2 "fmt of a file that is not UTF-8"
expect_same "$TMP/utf8_ui.tgraph" "$CORPUS/regress_strict_utf8_ui.tgraph" "fmt of a file that is not UTF-8"
run "$TGRAPH" eval "$CORPUS/regress_strict_utf8_path.tgraph" -o "$TMP/utf8"
expect_rc 2 "eval of a path that is not UTF-8"
expect_no_files "$TMP/utf8" "eval of a path that is not UTF-8"

# The manifest and a plan record the graph's file name: it must be UTF-8.
cp "$DATA/small.tgraph" "$TMP/"$'sm\xe9ll.tgraph'
run "$TGRAPH" eval "$TMP/"$'sm\xe9ll.tgraph' -o "$TMP/name"
expect_rc 2 "eval of a graph whose file name is not UTF-8"
expect_in "$TMP/err" "the graph's file name is not UTF-8 (byte 3 is 0xe9)" "file name not UTF-8"
expect_no_files "$TMP/name" "file name not UTF-8"
run "$TGRAPH" plan "$TMP/"$'sm\xe9ll.tgraph' --tiles 2,2 -o "$TMP/name_plan"
expect_rc 2 "plan of a graph whose file name is not UTF-8"
expect_no_files "$TMP/name_plan" "plan of a graph whose file name is not UTF-8"
# stitch takes the name from plan.json: checked before any tile is read
# (no job ran here, so a later check would have named a missing tile).
run "$TGRAPH" plan "$DATA/small.tgraph" --tiles 2,2 -o "$TMP/name_stitch"
expect_rc 0 "plan to stitch under another name"
sed -i 's/"graph": "small.tgraph"/"graph": "sm\xe9ll.tgraph"/' "$TMP/name_stitch/plan.json"
run "$TGRAPH" stitch "$TMP/name_stitch" -o "$TMP/name_stitched"
expect_rc 2 "stitch of a plan whose graph name is not UTF-8"
expect_in "$TMP/err" "the graph's file name is not UTF-8 (byte 3 is 0xe9)" "stitch: name not UTF-8"
expect_no_files "$TMP/name_stitched" "stitch: name not UTF-8"

# --set: the same checks, the same words (exit 2, before anything runs).
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/never" --set $'png.path=sm\xffall.png'
expect_rc 2 "--set of text that is not UTF-8"
expect_in "$TMP/err" "--set: the argument is not valid UTF-8 (byte 12 is 0xff)" "--set not UTF-8"
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/never" --set base.octaves=1.2e29
expect_rc 2 "--set 1.2e29"
expect_in "$TMP/err" 'nodes[0] "base".params.octaves: expected an integer in 1..16, got 1.2e29' "--set 1.2e29"
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/never" --set base.scale_m=NaN
expect_rc 2 "--set NaN"
expect_in "$TMP/err" 'params.scale_m: expected a number in 1..1000000, got NaN' "--set NaN"
run "$TGRAPH" eval "$EXAMPLES/alpine.tgraph" -o "$TMP/never" --resolution 33 --set splat.layers=
expect_rc 2 "--set splat.layers= (its masks are linked)"
expect_in "$TMP/err" 'nodes[21] "splat".params.layers: input '"'"'mask1'"'"' is linked but params.layers has 0 entries' \
  "--set splat.layers="
expect_no_files "$TMP/never" "refused --set"

# Out of memory names the parameter that asked for it: an iso-surface
# whose cells make a mesh larger than the address space allows.
# (Sanitizer builds reserve more address space than the limit.)
if ! ldd "$TGRAPH" 2>/dev/null | grep -q 'lib[at]san'; then
  cat > "$TMP/iso.tgraph" <<'EOF'
{ "format": "tgraph", "version": 2,
  "world": { "size_m": [1000, 1000], "height_m": 100, "resolution": 33, "seed": 1 },
  "nodes": [
    { "id": "ball", "type": "field.sphere", "params": { "center_m": [0, 0, 0], "radius_m": 50 } },
    { "id": "surface", "type": "mesh.isosurface",
      "params": { "min_m": [-60, -60, -60], "max_m": [60, 60, 60], "cell_m": 0.1 } },
    { "id": "export", "type": "export.mesh", "params": { "path": "ball.glb" } }
  ],
  "links": [ { "from": "ball.field", "to": "surface.field" },
             { "from": "surface.mesh", "to": "export.mesh" } ] }
EOF
  run bash -c 'ulimit -v 250000 && exec "$0" eval "$1" -o "$2" --threads 2' "$TGRAPH" "$TMP/iso.tgraph" "$TMP/iso"
  expect_rc 1 "iso-surface out of memory"
  expect_in "$TMP/err" 'node "surface" (mesh.isosurface): params.cell_m: out of memory meshing 1.73e+09 cells of 0.1 m' \
    "iso-surface out of memory"
  expect_in "$TMP/err" "raise cell_m or shrink the box" "iso-surface out of memory"
fi

finish
