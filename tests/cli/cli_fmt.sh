#!/bin/bash
# tgraph fmt: the examples and golden graphs are kept canonical, fmt turns
# a hand-written file into the canonical text, is idempotent, and --check
# reports without writing.
. "$(dirname "$0")/lib.sh"

run "$TGRAPH" fmt --check "$EXAMPLES"/*.tgraph "$SRC"/tests/graphs/*.tgraph
expect_rc 0 "examples and golden graphs are canonical (run tgraph fmt on them)"

# A hand-written file (one-line objects, params missing) is not canonical.
cp "$DATA/small.tgraph" "$TMP/small.tgraph"
run "$TGRAPH" fmt --check "$TMP/small.tgraph"
expect_rc 1 "fmt --check on a hand-written file"
expect_in "$TMP/err" "$TMP/small.tgraph:" "fmt --check names the file"
expect_in "$TMP/err" "not in canonical form" "fmt --check explains"
expect_same "$DATA/small.tgraph" "$TMP/small.tgraph" "fmt --check changed nothing"

run "$TGRAPH" fmt "$TMP/small.tgraph"
expect_rc 0 "fmt"
expect_in "$TMP/out" "reformatted" "fmt"
cp "$TMP/small.tgraph" "$TMP/once.tgraph"
run "$TGRAPH" fmt --check "$TMP/small.tgraph"
expect_rc 0 "fmt --check after fmt"
run "$TGRAPH" fmt "$TMP/small.tgraph"
expect_rc 0 "fmt twice"
expect_in "$TMP/out" "already canonical" "fmt twice"
expect_same "$TMP/once.tgraph" "$TMP/small.tgraph" "fmt is idempotent"
# Every parameter is written out, in descriptor order.
expect_in "$TMP/small.tgraph" '"persistence"' "canonical form lists default parameters"
# No temporary file is left beside it.
[ "$(ls -A "$TMP" | grep -c small)" = 1 ] || fail "fmt left files: $(ls -A "$TMP")"

# The canonical file means the same graph: it evaluates to the same bytes.
run "$TGRAPH" eval "$DATA/small.tgraph" -o "$TMP/e1" --quiet
expect_rc 0 "eval the original"
run "$TGRAPH" eval "$TMP/small.tgraph" -o "$TMP/e2" --quiet
expect_rc 0 "eval the formatted file"
expect_same "$TMP/e1/small.png" "$TMP/e2/small.png" "formatting keeps the meaning"

# Through a symlink, the target is rewritten and the link stays a link.
cp "$DATA/small.tgraph" "$TMP/target.tgraph"
ln -s "$TMP/target.tgraph" "$TMP/link.tgraph"
run "$TGRAPH" fmt "$TMP/link.tgraph"
expect_rc 0 "fmt through a symlink"
[ -L "$TMP/link.tgraph" ] || fail "fmt replaced the symlink by a file"
expect_same "$TMP/once.tgraph" "$TMP/target.tgraph" "fmt through a symlink"

run "$TGRAPH" fmt "$DATA/bad_range.tgraph"
expect_rc 2 "fmt on an invalid file"
expect_in "$TMP/err" "nodes[1] \"base\".params.octaves" "fmt on an invalid file"
run "$TGRAPH" fmt --check "$TMP/none.tgraph"
expect_rc 2 "fmt on a missing file"
run "$TGRAPH" fmt
expect_rc 2 "fmt without a file"

finish
