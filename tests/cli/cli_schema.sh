#!/bin/bash
# tgraph schema: the checked-in data/schema/tgraph.schema.json is exactly
# what this build generates (update it with
#   build/app/cli/tgraph schema > data/schema/tgraph.schema.json).
. "$(dirname "$0")/lib.sh"

run "$TGRAPH" schema
expect_rc 0 "schema"
if ! cmp -s "$TMP/out" "$SRC/data/schema/tgraph.schema.json"; then
  fail "data/schema/tgraph.schema.json is out of date; regenerate it with:
  $TGRAPH schema > data/schema/tgraph.schema.json"
  diff -u "$SRC/data/schema/tgraph.schema.json" "$TMP/out" | head -40 >&2
fi
python3 - "$TMP/out" <<'PY' || fail "schema is not a draft 2020-12 schema naming every node type"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema", s.get("$schema")
text = json.dumps(s)
for t in ("noise.fbm", "gen.shape", "curve", "math.combine", "filter.terrace", "export.heightmap"):
    assert t in text, t
PY

finish
