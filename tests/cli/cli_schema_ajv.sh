#!/bin/bash
# Every example and golden graph validates against the checked-in JSON
# Schema with an independent validator (ajv-cli 5 + ajv-formats, draft
# 2020-12), and files the loader refuses for schema-level reasons are
# refused by ajv too.  The JSON that `tgraph check` and `tgraph diff`
# write validates against data/schema/check-message and diff.schema.json,
# and `tgraph compare`'s against compare.schema.json.  ajv is installed with npm into a cache folder on
# first use; the test is skipped (77) only when node/npm are missing.
. "$(dirname "$0")/lib.sh"

if ! command -v npm > /dev/null 2>&1 || ! command -v node > /dev/null 2>&1; then
  echo "node/npm not installed: skipping the ajv validation"
  exit 77
fi

cache="${TG_VALIDATORS_CACHE:-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/terrane-validators}"
if ! mkdir -p "$cache" 2> /dev/null || [ ! -w "$cache" ]; then
  cache="${TG_BUILD_ROOT:-$TMP}/terrane-validators"
  mkdir -p "$cache"
fi

installed () {
  node -e 'process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)' \
    "$cache/node_modules/$1/package.json" "$2" 2> /dev/null
}

install_ajv () {
  installed ajv-cli 5.0.0 && installed ajv-formats 3.0.1 && return 0
  [ -f "$cache/package.json" ] || echo '{ "name": "terrane-validators", "private": true }' > "$cache/package.json"
  echo "installing ajv-cli@5.0.0 ajv-formats@3.0.1 into $cache"
  (cd "$cache" && npm install --no-audit --no-fund --loglevel=error ajv-cli@5.0.0 ajv-formats@3.0.1)
}

# Two builds testing at once must not run npm in the same folder together.
if command -v flock > /dev/null 2>&1; then
  exec 9> "$cache/.lock"
  flock 9
fi
install_ajv || { fail "npm could not install ajv-cli into $cache"; finish; }
exec 9>&-

schema="$SRC/data/schema/tgraph.schema.json"
# ajv-cli picks its parser from the extension and refuses ".tgraph".
mkdir -p "$TMP/json"

# validate FILE [SCHEMA]: runs ajv on FILE (against the .tgraph schema by
# default); output in $TMP/out, status in $rc.
validate () {
  ln -sf "$1" "$TMP/json/$(basename "$1" .tgraph).json"
  run env -C "$cache" ./node_modules/.bin/ajv validate --spec=draft2020 -c ajv-formats \
    --all-errors --errors=text --strict=false -s "${2:-$schema}" \
    -d "$TMP/json/$(basename "$1" .tgraph).json"
}

for f in "$EXAMPLES"/*.tgraph "$SRC"/tests/graphs/*.tgraph "$DATA/small.tgraph" \
         "$DATA/partial_fail.tgraph" "$DATA/slow.tgraph"; do
  validate "$f"
  expect_rc 0 "ajv: $f should be valid"
  expect_in "$TMP/out" " valid" "ajv: $f"
done

# The schema describes the current format version only: a version 1 file
# (which Terrane upgrades on loading) uses names it does not know.
validate "$DATA/v1/island.tgraph"
expect_rc 1 "ajv: a version 1 file is not a version 2 file"
expect_in "$TMP/err" "version must be equal to constant" "ajv names the version"

# The schema carries ranges, node types and link syntax.
for f in bad_range bad_type; do
  validate "$DATA/$f.tgraph"
  expect_rc 1 "ajv: $f should be invalid"
done
cat > "$TMP/badlink.tgraph" <<'JSON'
{ "format": "tgraph", "version": 2,
  "world": { "size_m": [100, 100], "height_m": 10, "resolution": 33, "seed": 1 },
  "nodes": [ { "id": "a", "type": "gen.constant", "params": { "value": 2 } } ],
  "links": [ { "from": "a", "to": "b.height" } ] }
JSON
validate "$TMP/badlink.tgraph"
expect_rc 1 "ajv: a value over its maximum and a link without a port"
expect_in "$TMP/err" "params/value must be <= 1" "ajv reports the range"
expect_in "$TMP/err" "links/0/from must match pattern" "ajv reports the link"

# `tgraph check --format json` writes JSON Lines: every line is one object
# of data/schema/check-message.schema.json (errors with and without a
# place, a node id, a note).
check_schema="$SRC/data/schema/check-message.schema.json"
run "$TGRAPH" check --format json "$DATA/bad_range.tgraph" "$DATA/bad_syntax.tgraph" \
  "$DATA/cycle.tgraph" "$DATA/v1/island.tgraph" "$TMP/missing.tgraph"
expect_rc 2 "check --format json"
cp "$TMP/out" "$TMP/check.jsonl"
[ "$(wc -l < "$TMP/check.jsonl")" -eq 5 ] || fail "check --format json: expected 5 lines: $(cat "$TMP/check.jsonl")"
n=0
while IFS= read -r line; do
  n=$((n + 1))
  printf '%s\n' "$line" > "$TMP/message$n.json"
  validate "$TMP/message$n.json" "$check_schema"
  expect_rc 0 "ajv: check message $n ($line)"
done < "$TMP/check.jsonl"
echo '{"file": "a.tgraph", "line": 0, "column": null, "path": null, "node_id": null, "message": "x", "severity": "fatal"}' \
  > "$TMP/bad_message.json"
validate "$TMP/bad_message.json" "$check_schema"
expect_rc 1 "ajv: a check message with line 0 and an unknown severity"
expect_in "$TMP/err" "severity must be equal to one of the allowed values" "ajv reports the severity"

# `tgraph diff --format json`: one object of data/schema/diff.schema.json,
# with every kind of change.
diff_schema="$SRC/data/schema/diff.schema.json"
for other in new renamed moved; do
  run env -C "$DATA/diff" "$TGRAPH" diff --format json old.tgraph "$other.tgraph"
  expect_rc 1 "diff --format json old $other"
  cp "$TMP/out" "$TMP/diff_$other.json"
  validate "$TMP/diff_$other.json" "$diff_schema"
  expect_rc 0 "ajv: diff old $other"
done
run "$TGRAPH" diff --format json --no-ui "$DATA/v1/island.tgraph" "$EXAMPLES/island.tgraph"
expect_rc 0 "diff --format json of equal graphs"
cp "$TMP/out" "$TMP/diff_equal.json"
validate "$TMP/diff_equal.json" "$diff_schema"
expect_rc 0 "ajv: diff of equal graphs"
sed 's/"kind": "node-type"/"kind": "node-retyped"/' "$TMP/diff_new.json" > "$TMP/diff_bad.json"
validate "$TMP/diff_bad.json" "$diff_schema"
expect_rc 1 "ajv: a diff with an unknown kind of change"

# `tgraph compare --format json`: one object of data/schema/compare.schema.json
# for changed grids (with pictures), meshes, instance lists, added and
# removed files, and equal folders.
compare_schema="$SRC/data/schema/compare.schema.json"
sed 's/"seed": 7/"seed": 8/' "$DATA/small.tgraph" > "$TMP/seed8.tgraph"
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/c7" -q
run "$TGRAPH" eval "$TMP/seed8.tgraph" -o "$TMP/c8" -q
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/c7j1" -j 1 -q
run "$TGRAPH" eval "$EXAMPLES/forest.tgraph" -r 65 -o "$TMP/f1" -q
run "$TGRAPH" eval "$EXAMPLES/forest.tgraph" -r 65 -o "$TMP/f2" -q -s trees.seed=99
expect_rc 0 "eval the outputs to compare"
for pair in "c7 c8" "c7 c7j1" "f1 f2" "c7 f1"; do
  set -- $pair
  run "$TGRAPH" compare "$TMP/$1" "$TMP/$2" -o "$TMP/pictures" --format json
  cp "$TMP/out" "$TMP/compare_$1_$2.json"
  validate "$TMP/compare_$1_$2.json" "$compare_schema"
  expect_rc 0 "ajv: compare $1 $2"
done
expect_in "$TMP/compare_c7_c8.json" '"difference_png": ' "compare json names its pictures"
expect_in "$TMP/compare_f1_f2.json" '"instances": ' "compare json of instance lists"
expect_in "$TMP/compare_c7_f1.json" '"status": "added"' "compare json of added files"
sed 's/"status": "changed"/"status": "modified"/' "$TMP/compare_c7_c8.json" > "$TMP/compare_bad.json"
validate "$TMP/compare_bad.json" "$compare_schema"
expect_rc 1 "ajv: a compare with an unknown status"

finish
