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

# --format json: JSON Lines on stdout, one object a message, in the order
# of the files; a valid file gives no line, an old one a note.
# (cli_schema_ajv validates the lines against the schema.)
run "$TGRAPH" check --format json "$DATA/small.tgraph" "$DATA/bad_range.tgraph" \
  "$DATA/v1/island.tgraph" "$DATA/cycle.tgraph"
expect_rc 2 "check --format json"
checks=$((checks + 1))
python3 - "$TMP/out" "$DATA" <<'PY' || fail "check --format json: unexpected lines (above)"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
d = sys.argv[2]
got = [json.loads(l) for l in lines]
keys = ["file", "line", "column", "path", "node_id", "message", "severity"]
assert all(list(m) == keys for m in got), got
want = [
    {"file": d + "/bad_range.tgraph", "line": 9, "path": "nodes[1].params.octaves",
     "node_id": "base", "message": "expected an integer in 1..16, got 40", "severity": "error"},
    {"file": d + "/v1/island.tgraph", "line": None, "column": None, "path": None,
     "node_id": None, "severity": "note"},
    {"file": d + "/cycle.tgraph", "severity": "error"},
]
ok = len(got) == len(want) and all(all(g[k] == v for k, v in w.items()) for w, g in zip(want, got))
ok = ok and isinstance(got[0]["column"], int) and got[0]["column"] > 0
ok = ok and "format version 1, upgraded to 2" in got[1]["message"]
ok = ok and "first" in got[2]["message"] and "second" in got[2]["message"]
if not ok:
    print("\n".join(lines))
    sys.exit(1)
PY
expect_in "$TMP/err" "2 of 4 files have errors" "check --format json keeps the count on stderr"
run "$TGRAPH" check --format=json "$DATA/small.tgraph"
expect_rc 0 "check --format=json on a good file"
[ -s "$TMP/out" ] && fail "check --format json printed for a good file: $(cat "$TMP/out")"

# --format github: workflow commands GitHub Actions turns into annotations
# on the line.  "%", CR and LF are escaped in the message, and ":" and ","
# too in a property such as the file name.
run "$TGRAPH" check --format github "$DATA/bad_range.tgraph" "$DATA/v1/island.tgraph"
expect_rc 2 "check --format github"
expect_in "$TMP/out" "::error file=$DATA/bad_range.tgraph,line=9,col=" "check --format github"
expect_in "$TMP/out" ',title=tgraph check::nodes[1] "base".params.octaves: expected an integer in 1..16, got 40' \
  "check --format github"
expect_in "$TMP/out" "::notice file=$DATA/v1/island.tgraph,title=tgraph check::format version 1" \
  "check --format github: the note"
mkdir -p "$TMP/gh"
sed 's/"op": "multiply"/"op": "mul%tiply"/' "$DATA/small.tgraph" > "$TMP/gh/we:ird,name%.tgraph"
run env -C "$TMP/gh" "$TGRAPH" check --format github "we:ird,name%.tgraph"
expect_rc 2 "check --format github, characters to escape"
expect_in "$TMP/out" "::error file=we%3Aird%2Cname%25.tgraph,line=" "the file name is escaped as a property"
expect_in "$TMP/out" 'got "mul%25tiply"' "a % in the message is escaped"
[ "$(wc -l < "$TMP/out")" -eq 1 ] || fail "one error is one line: $(cat "$TMP/out")"
run env -C "$TMP/gh" "$TGRAPH" check --format github "$(printf 'two\r\nlines.tgraph')"
expect_rc 2 "check --format github, a missing file with CR LF in its name"
expect_in "$TMP/out" "::error file=two%0D%0Alines.tgraph,title=tgraph check::cannot open two%0D%0Alines.tgraph" \
  "CR and LF are escaped"
[ "$(wc -l < "$TMP/out")" -eq 1 ] || fail "one error is one line: $(cat "$TMP/out")"

run "$TGRAPH" check --format xml "$DATA/small.tgraph"
expect_rc 2 "check --format xml"
expect_in "$TMP/err" 'expected text, json or github, got "xml"' "check --format xml"

# Warnings (a feature smaller than two cells) and bypassed nodes: the
# file passes (exit 0) with the warning and a note for each bypass.
run "$TGRAPH" check "$DATA/bypass.tgraph"
expect_rc 0 "check of a graph with a warning"
expect_in "$TMP/out" "bypass.tgraph: ok" "a warning does not fail the check"
expect_in "$TMP/err" "bypass.tgraph: warning: nodes[0] \"base\".params.scale_m: Scale 20 m is smaller than two cells of the world's 15.625 m grid: the detail is lost at this resolution (31.25 m or more shows it)" "the warning names the place"
expect_in "$TMP/err" "bypass.tgraph: note: nodes[1] \"smooth\".ui.bypass: node \"smooth\" is bypassed: its \"height\" input passes through to its \"height\" output" "a bypassed node is noted"
expect_in "$TMP/err" "node \"mix\" is bypassed: its \"a\" input passes through" "the main input of a combine is \"a\""
run "$TGRAPH" check --quiet "$DATA/bypass.tgraph"
expect_rc 0 "check --quiet with a warning"
expect_in "$TMP/err" "warning: nodes[0]" "--quiet keeps warnings"
expect_not_in "$TMP/err" "note:" "--quiet drops notes"
run "$TGRAPH" check --format json "$DATA/bypass.tgraph"
expect_rc 0 "check --format json with a warning"
expect_in "$TMP/out" '"path": "nodes[0].params.scale_m", "node_id": "base", "message": "Scale 20 m' "json warning"
expect_in "$TMP/out" '"severity": "warning"' "json warning severity"
run "$TGRAPH" check --format github "$DATA/bypass.tgraph"
expect_in "$TMP/out" "::warning file=$DATA/bypass.tgraph,title=tgraph check::nodes[0] \"base\".params.scale_m: Scale 20 m" "github warning"
# A bypass that cannot be: a generator, or a value that is not a boolean.
sed 's/"params": { "scale_m": 20, "octaves": 3 }/&, "ui": { "bypass": true }/' "$DATA/bypass.tgraph" > "$TMP/gen_bypass.tgraph"
run "$TGRAPH" check "$TMP/gen_bypass.tgraph"
expect_rc 2 "a bypassed generator"
expect_in "$TMP/err" "gen_bypass.tgraph:6:" "a bypassed generator is located"
expect_in "$TMP/err" 'nodes[0] "base".ui.bypass: node "base" (noise.fbm) cannot be bypassed: it has no height input to pass through to its "height" output' "a bypassed generator"
sed 's/"bypass": true } }/"bypass": "yes" } }/' "$DATA/bypass.tgraph" > "$TMP/bad_bypass.tgraph"
run "$TGRAPH" check "$TMP/bad_bypass.tgraph"
expect_rc 2 "ui.bypass not a boolean"
expect_in "$TMP/err" 'bad_bypass.tgraph:8:44: nodes[1] "smooth".ui.bypass: expected true or false, got "yes"' "ui.bypass not a boolean, located"

run "$TGRAPH" check
expect_rc 2 "check without files"
expect_in "$TMP/err" "no file given" "check without files"

finish
