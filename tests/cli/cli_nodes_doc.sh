#!/bin/bash
# The node reference: docs/nodes.md and docs/tgraph-nodes.7 are exactly
# what this build's `tgraph nodes --markdown` and `--man` print (update
# them with the commands in the failure message), name every node type,
# and the manual pages (these two and the hand-written docs/tgraph.1)
# render with groff without a warning.
. "$(dirname "$0")/lib.sh"

# stale FLAG FILE: FILE is what `tgraph nodes FLAG` prints.
stale () {
  run "$TGRAPH" nodes "$1"
  expect_rc 0 "nodes $1"
  cp "$TMP/out" "$TMP/gen$1"
  checks=$((checks + 1))
  if ! cmp -s "$TMP/out" "$SRC/$2"; then
    fail "$2 is out of date; regenerate it with:
  $TGRAPH nodes $1 > $2"
    diff -u "$SRC/$2" "$TMP/out" | head -40 >&2
  fi
}
stale --markdown docs/nodes.md
stale --man docs/tgraph-nodes.7

# The same bytes on a second run, and every type in both.
run "$TGRAPH" nodes --markdown
expect_same "$TMP/out" "$TMP/gen--markdown" "nodes --markdown twice"
run "$TGRAPH" nodes --json
checks=$((checks + 1))
python3 - "$TMP/out" "$TMP/gen--markdown" "$TMP/gen--man" << 'PY' > "$TMP/err" 2>&1 ||
import json, sys
types = [n["type"] for n in json.load(open(sys.argv[1]))["nodes"]]
md, man = open(sys.argv[2]).read(), open(sys.argv[3]).read()
missing = [t for t in types if "\n### `%s`: " % t not in md or "\n.SS %s \\(em " % t not in man]
if len(types) < 50 or missing:
    sys.exit("%d types; no section for: %s" % (len(types), ", ".join(missing)))
PY
  fail "node reference: $(cat "$TMP/err")"

checks=$((checks + 1))
if command -v groff > /dev/null 2>&1; then
  for page in "$TMP/gen--man" "$SRC/docs/tgraph.1"; do
    groff -man -Tutf8 -ww "$page" > "$TMP/page.txt" 2> "$TMP/warn" || fail "groff failed on $page"
    [ ! -s "$TMP/warn" ] || fail "groff warns about $page: $(head -5 "$TMP/warn")"
    # Bold is "S\bS" overstriking on a terminal device.
    LC_ALL=C sed 's/.\x08//g' "$TMP/page.txt" | grep -q "^SEE ALSO" || fail "$page rendered without its SEE ALSO section"
  done
else
  echo "groff is not installed: the manual pages' rendering is not checked"
fi

finish
