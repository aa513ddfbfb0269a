#!/bin/bash
# Every node type that `tgraph nodes --json` lists appears in at least one
# golden graph (tests/graphs/*.tgraph), so cli_golden and cli_tiled hash
# its output bytes.  A new node needs a small graph there (README.md,
# "Adding a node").
. "$(dirname "$0")/lib.sh"

run "$TGRAPH" nodes --json
expect_rc 0 "nodes --json"
checks=$((checks + 1))
python3 - "$TMP/out" "$SRC"/tests/graphs/*.tgraph > "$TMP/missing" 2>&1 << 'PY' ||
import json, sys

registered = {n["type"] for n in json.load(open(sys.argv[1]))["nodes"]}
used = set()
for path in sys.argv[2:]:
    used |= {n["type"] for n in json.load(open(path))["nodes"]}
missing = sorted(registered - used)
if len(registered) < 50:
    sys.exit("only %d node types registered" % len(registered))
if missing:
    sys.exit("%d node types appear in no tests/graphs/*.tgraph: %s"
             % (len(missing), ", ".join(missing)))
PY
  fail "$(cat "$TMP/missing")"

finish
