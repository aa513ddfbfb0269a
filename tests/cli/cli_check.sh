#!/bin/bash
# tgraph check: valid files pass (exit 0), every kind of bad file fails
# with exit 2 and a message naming the file, the place and the problem.
. "$(dirname "$0")/lib.sh"

run "$TGRAPH" check "$DATA/small.tgraph" "$EXAMPLES/island.tgraph" "$EXAMPLES/ridges.tgraph"
expect_rc 0 "check on good files"
expect_in "$TMP/out" "small.tgraph: ok" "check on good files"
expect_in "$TMP/out" "island.tgraph: ok" "check on good files"

run "$TGRAPH" check --quiet "$DATA/small.tgraph"
expect_rc 0 "check --quiet"
[ -s "$TMP/out" ] && fail "check --quiet printed: $(cat "$TMP/out")"

# Syntax error: FILE:LINE:COL at the first token after the missing comma.
run "$TGRAPH" check "$DATA/bad_syntax.tgraph"
expect_rc 2 "syntax error"
expect_in "$TMP/err" "$DATA/bad_syntax.tgraph:7:" "syntax error names line 7"
grep -qE "bad_syntax\.tgraph:7:[0-9]+: " "$TMP/err" || fail "syntax error lacks FILE:LINE:COL: $(cat "$TMP/err")"

# Out of range: the path, the value, and the line of the value.
run "$TGRAPH" check "$DATA/bad_range.tgraph"
expect_rc 2 "octaves out of range"
expect_in "$TMP/err" "nodes[1] \"base\".params.octaves" "octaves out of range"
expect_in "$TMP/err" "40" "octaves out of range names the value"
expect_in "$TMP/err" "$DATA/bad_range.tgraph:9:" "octaves out of range is located on line 9"

run "$TGRAPH" check "$DATA/bad_type.tgraph"
expect_rc 2 "unknown node type"
expect_in "$TMP/err" "nodes[0] \"base\".type" "unknown node type"
expect_in "$TMP/err" "noise.fbn" "unknown node type"
expect_in "$TMP/err" "$DATA/bad_type.tgraph:6:" "unknown node type is located"

run "$TGRAPH" check "$DATA/bad_link.tgraph"
expect_rc 2 "link to a missing port"
expect_in "$TMP/err" "links[0].to" "link to a missing port"
expect_in "$TMP/err" "heigth" "link to a missing port"

run "$TGRAPH" check "$DATA/cycle.tgraph"
expect_rc 2 "cycle"
expect_in "$TMP/err" "first" "cycle names its nodes"
expect_in "$TMP/err" "second" "cycle names its nodes"

run "$TGRAPH" check "$DATA/newer_version.tgraph"
expect_rc 2 "newer format version"
expect_in "$TMP/err" "99" "newer format version names the file's version"

for f in unsafe_abs unsafe_dotdot; do
  run "$TGRAPH" check "$DATA/$f.tgraph"
  expect_rc 2 "$f export path"
  expect_in "$TMP/err" "nodes[2] \"escape\".params.path" "$f export path"
done

run "$TGRAPH" check "$TMP/does-not-exist.tgraph"
expect_rc 2 "missing file"
expect_in "$TMP/err" "$TMP/does-not-exist.tgraph" "missing file is named"

# Several files: every one is reported, good ones too, and the status is 2.
run "$TGRAPH" check "$DATA/small.tgraph" "$DATA/bad_range.tgraph" "$DATA/bad_type.tgraph"
expect_rc 2 "mixed files"
expect_in "$TMP/out" "small.tgraph: ok" "mixed files"
expect_in "$TMP/err" "bad_range.tgraph" "mixed files"
expect_in "$TMP/err" "bad_type.tgraph" "mixed files"
expect_in "$TMP/err" "2 of 3 files have errors" "mixed files"

# The same bad value says the same thing from the file and from --set:
# "nodes[0] "base".params.octaves: expected ..." after the place.
same_both_ways () { # SED-EXPR SET-ARG WANT
  sed "$1" "$DATA/small.tgraph" > "$TMP/bad_value.tgraph"
  run "$TGRAPH" check "$TMP/bad_value.tgraph"
  expect_rc 2 "bad value in the file ($2)"
  grep -o ' nodes\[.*' "$TMP/err" > "$TMP/from_file"
  run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/never" --set "$2"
  expect_rc 2 "--set $2"
  grep -o ' nodes\[.*' "$TMP/err" > "$TMP/from_set"
  expect_in "$TMP/from_file" "$3" "bad value in the file ($2)"
  cmp -s "$TMP/from_file" "$TMP/from_set" \
    || fail "--set $2 and the file differ: $(cat "$TMP/from_set") vs $(cat "$TMP/from_file")"
}
same_both_ways 's/"octaves": 5/"octaves": 40/' base.octaves=40 \
  'nodes[0] "base".params.octaves: expected an integer in 1..16, got 40'
same_both_ways 's/"octaves": 5/"octaves": "abc"/' base.octaves=abc \
  'expected an integer in 1..16, got "abc"'
same_both_ways 's/"op": "multiply"/"op": "multiplx"/' mix.op=multiplx \
  'got "multiplx" (did you mean "multiply"?)'
same_both_ways 's/"radius_m": 350/"radius_m": -1/' island.radius_m=-1 'got -1'

# One id limit, said where the id is read: 64 characters (a 64-character
# id of three-byte characters links and takes --set; 65 is refused at the
# node, not later at a link).
long_id_graph () { # ID FILE
  python3 -c 'import json, sys
nid = sys.argv[1]
json.dump({"format": "tgraph", "version": 2,
           "world": {"size_m": [100, 100], "height_m": 10, "resolution": 33, "seed": 1},
           "nodes": [{"id": nid, "type": "noise.fbm", "params": {}},
                     {"id": "o", "type": "export.heightmap", "params": {"path": "h.png", "format": "png16"}}],
           "links": [{"from": nid + ".height", "to": "o.height"}]}, open(sys.argv[2], "w"), ensure_ascii=False)' "$1" "$2"
}
id64=$(python3 -c 'print("\u5c71" * 64)')
long_id_graph "$id64" "$TMP/id64.tgraph"
run "$TGRAPH" eval "$TMP/id64.tgraph" -o "$TMP/id64" --quiet --set "$id64.octaves=3"
expect_rc 0 "a 64-character id links and takes --set"
long_id_graph "$(python3 -c 'print("a" * 65)')" "$TMP/id65.tgraph"
run "$TGRAPH" check "$TMP/id65.tgraph"
expect_rc 2 "a 65-character id"
expect_in "$TMP/err" '.id: a node id is at most 64 characters; this one has 65' "a 65-character id"

run "$TGRAPH" check
expect_rc 2 "check without files"
expect_in "$TMP/err" "no file given" "check without files"

finish
