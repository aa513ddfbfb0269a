#!/bin/bash
# Golden graphs: every export of tests/graphs/*.tgraph must have the SHA-256
# recorded in tests/graphs/golden.txt, as GEGL checks its compositions.  A
# mismatch means output bytes changed: if that was intended (and the node's
# `version` was bumped), record the new hashes with
#   bash tests/cli/cli_golden.sh build/app/cli/tgraph --update
. "$(dirname "$0")/lib.sh"

graphs="$SRC/tests/graphs"
golden="$graphs/golden.txt"
update=0
[ "${2:-}" = "--update" ] && update=1

: > "$TMP/actual.txt"
for g in "$graphs"/*.tgraph; do
  name="$(basename "$g" .tgraph)"
  run "$TGRAPH" eval "$g" -o "$TMP/$name" --threads 2 --quiet
  expect_rc 0 "eval $name"
  (cd "$TMP/$name" && find . -type f ! -name manifest.json | sed 's#^\./##' | LC_ALL=C sort) |
    while read -r f; do
      echo "$(sha256 "$TMP/$name/$f")  $name/$f"
    done >> "$TMP/actual.txt"
done

if [ $update = 1 ]; then
  {
    echo "# SHA-256 of every export of tests/graphs/*.tgraph (tests/cli/cli_golden.sh)."
    echo "# Regenerate with: bash tests/cli/cli_golden.sh PATH/TO/tgraph --update"
    cat "$TMP/actual.txt"
  } > "$golden"
  echo "wrote $(wc -l < "$TMP/actual.txt") hashes to $golden"
  exit 0
fi

grep -v '^#' "$golden" | grep -v '^$' > "$TMP/expected.txt"
checks=$((checks + 1))
if ! cmp -s "$TMP/expected.txt" "$TMP/actual.txt"; then
  fail "export bytes differ from tests/graphs/golden.txt"
  diff -u "$TMP/expected.txt" "$TMP/actual.txt" | sed 's/^/  /' >&2
  echo "actual hashes:" >&2
  sed 's/^/  /' "$TMP/actual.txt" >&2
  echo "If the change is intended, bump the node's version and run:" >&2
  echo "  bash tests/cli/cli_golden.sh $TGRAPH --update" >&2
fi
[ "$(wc -l < "$TMP/actual.txt")" -ge 10 ] || fail "too few golden files: $(cat "$TMP/actual.txt")"

finish
