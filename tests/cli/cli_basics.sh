#!/bin/bash
# tgraph's command line surface: version, help, usage errors (exit 2),
# the node catalogue (table and JSON) and info.
. "$(dirname "$0")/lib.sh"

run "$TGRAPH" --version
expect_rc 0 "--version"
grep -qE '^tgraph [0-9]+\.[0-9]+\.[0-9]+ \(\.tgraph format [0-9]+\)$' "$TMP/out" ||
  fail "--version prints: $(cat "$TMP/out")"

run "$TGRAPH"
expect_rc 2 "no command"
expect_in "$TMP/err" "Usage: tgraph COMMAND" "no command"

for h in --help help; do
  run "$TGRAPH" $h
  expect_rc 0 "tgraph $h"
  for c in check eval info nodes schema fmt; do
    expect_in "$TMP/out" "  $c " "tgraph $h lists $c"
  done
done

for c in check eval info nodes schema fmt; do
  run "$TGRAPH" help $c
  expect_rc 0 "help $c"
  expect_in "$TMP/out" "Usage: tgraph $c" "help $c"
  cp "$TMP/out" "$TMP/help1"
  run "$TGRAPH" $c --help
  expect_rc 0 "$c --help"
  expect_same "$TMP/out" "$TMP/help1" "$c --help equals help $c"
done
run "$TGRAPH" help eval
for opt in --output --resolution --threads --set --quiet; do
  expect_in "$TMP/out" "$opt" "help eval documents $opt"
done

run "$TGRAPH" frobnicate
expect_rc 2 "unknown command"
expect_in "$TMP/err" 'unknown command "frobnicate"' "unknown command"
run "$TGRAPH" help frobnicate
expect_rc 2 "help on an unknown command"

run "$TGRAPH" eval "$DATA/small.tgraph" --frobnicate
expect_rc 2 "unknown option"
expect_in "$TMP/err" 'unknown option "--frobnicate"' "unknown option"
run "$TGRAPH" eval
expect_rc 2 "eval without a file"
expect_in "$TMP/err" "no file given" "eval without a file"
run "$TGRAPH" eval "$DATA/small.tgraph" "$DATA/small.tgraph"
expect_rc 2 "eval with two files"
run "$TGRAPH" eval "$DATA/small.tgraph" -o
expect_rc 2 "-o without a value"
expect_in "$TMP/err" "-o needs a value" "-o without a value"
for bad in 1 abc 16386 65x; do
  run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/never" --resolution "$bad"
  expect_rc 2 "--resolution $bad"
  expect_in "$TMP/err" "--resolution: expected an integer in 2..16385, got \"$bad\"" "--resolution $bad"
done
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/never" --threads=-1
expect_rc 2 "--threads -1"
expect_in "$TMP/err" "--threads: expected an integer in 0..1024" "--threads -1"
[ -e "$TMP/never" ] && fail "a usage error created the output folder"
run "$TGRAPH" nodes --bogus
expect_rc 2 "nodes --bogus"
run "$TGRAPH" schema extra
expect_rc 2 "schema with an argument"

# The catalogue: every node type the examples use, grouped by category.
run "$TGRAPH" nodes
expect_rc 0 "nodes"
for t in noise.fbm gen.constant gen.gradient gen.shape curve math.combine filter.remap \
         filter.clamp filter.invert filter.terrace filter.normalize input.heightmap \
         export.heightmap; do
  grep -qE "^$t  " "$TMP/out" || fail "nodes does not list $t"
done
for c in Generators Filters Math Input Output; do
  expect_in "$TMP/out" "== $c ==" "nodes groups by category $c"
done
expect_in "$TMP/out" "octaves" "nodes lists parameters"
expect_in "$TMP/out" "1..16" "nodes lists ranges"
expect_in "$TMP/out" "png16|png8|raw16" "nodes lists enum choices"
expect_in "$TMP/out" "[global]" "nodes shows non-local locality"

run "$TGRAPH" nodes --json
expect_rc 0 "nodes --json"
python3 - "$TMP/out" <<'PY' || fail "nodes --json is not a catalogue of the node types"
import json, sys
text = open(sys.argv[1]).read()
cat = json.loads(text)
items = cat if isinstance(cat, list) else cat.get("nodes", cat)
if isinstance(items, dict):
    types = set(items.keys())
else:
    types = {n["type"] for n in items}
need = {"noise.fbm", "gen.shape", "curve", "math.combine", "export.heightmap"}
missing = need - types
if missing:
    print("missing:", sorted(missing)); sys.exit(1)
PY

# info: world, nodes with types, links, the files each export writes.
run "$TGRAPH" info "$DATA/small.tgraph"
expect_rc 0 "info"
expect_in "$TMP/out" "world: 1000 x 1000 m, height 200 m, seed 7" "info world"
expect_in "$TMP/out" "resolution: 65 (65 x 65 samples" "info resolution"
expect_in "$TMP/out" "nodes: 5" "info nodes"
grep -qE '^  base +noise\.fbm ' "$TMP/out" || fail "info lists base as noise.fbm: $(cat "$TMP/out")"
expect_in "$TMP/out" "links: 4" "info links"
expect_in "$TMP/out" "exports: 2 nodes" "info exports"
grep -qE '^  small\.png +65x65  png16, north_first' "$TMP/out" || fail "info lists small.png: $(cat "$TMP/out")"
grep -qE '^  sub/small\.r16 +65x65  raw16, south_first' "$TMP/out" || fail "info lists sub/small.r16"
run "$TGRAPH" info "$DATA/bad_range.tgraph"
expect_rc 2 "info on a bad file"
expect_in "$TMP/err" "nodes[1] \"base\".params.octaves" "info on a bad file"

finish
