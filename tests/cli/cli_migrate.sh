#!/bin/bash
# Format version 2 renamed parameters (formats/tgraph_migrate.c).  Every
# version 1 file in tests/cli/data/v1 loads and `tgraph check` says it was
# upgraded (exit 0); `tgraph fmt` writes exactly its version 2 equivalent
# (the example, golden graph or test file of the same name); and both
# evaluate to the same bytes.  Then: errors in a version 1 file point at
# the key as written, --set takes an old name with a note, a version 2
# file with an old name is refused naming the new one, version 3 is refused.
. "$(dirname "$0")/lib.sh"

V1="$DATA/v1"

# equivalent NAME: the version 2 file NAME stands for.
equivalent () {
  for d in "$EXAMPLES" "$SRC/tests/graphs" "$DATA"; do
    [ -f "$d/$1" ] && { echo "$d/$1"; return; }
  done
}

# hashes DIR: "sha256  path" of every file under DIR, sorted.
hashes () {
  (cd "$1" && find . -type f | LC_ALL=C sort | while read -r f; do echo "$(sha256 "$f")  $f"; done)
}

n_files=0
for v1 in "$V1"/*.tgraph; do
  name="$(basename "$v1")"
  base="${name%.tgraph}"
  v2="$(equivalent "$name")"
  n_files=$((n_files + 1))
  if [ -z "$v2" ]; then
    fail "$name: no version 2 file of that name in data/examples, tests/graphs or tests/cli/data"
    continue
  fi
  checks=$((checks + 1))
  grep -q '^  "version": 1,$' "$v1" || fail "$v1 is not a version 1 file"
  checks=$((checks + 1))
  grep -q '^  "version": 2,$' "$v2" || fail "$v2 is not a version 2 file"

  # check: valid, with a note that it was upgraded; --quiet prints nothing.
  run "$TGRAPH" check "$v1"
  expect_rc 0 "check $name (version 1)"
  expect_in "$TMP/out" "$name: ok" "check $name"
  expect_in "$TMP/err" "$name: note: format version 1, upgraded to 2 on loading" "check $name"
  expect_in "$TMP/err" "'tgraph fmt $v1' writes it as version 2" "check $name"
  run "$TGRAPH" check "$v2"
  expect_rc 0 "check $(basename "$v2") (version 2)"
  expect_not_in "$TMP/err" "note:" "check of a version 2 file"
  run "$TGRAPH" check --quiet "$v1"
  expect_rc 0 "check --quiet $name"
  checks=$((checks + 1))
  if [ -s "$TMP/out" ] || [ -s "$TMP/err" ]; then
    fail "check --quiet $name printed: $(cat "$TMP/out" "$TMP/err")"
  fi

  # Side by side in folders of their own, with the picture two graphs read.
  mkdir -p "$TMP/$base/v1" "$TMP/$base/v2" "$TMP/$base/fmt"
  cp "$v1" "$TMP/$base/v1/$name"
  cp "$v1" "$TMP/$base/fmt/$name"
  cp "$v2" "$TMP/$base/v2/$name"
  for d in v1 v2 fmt; do cp "$EXAMPLES/forest_paint.png" "$TMP/$base/$d/"; done

  # fmt --check: not canonical (it is version 1), with the note; fmt: the version 2 file.
  run "$TGRAPH" fmt --check "$TMP/$base/fmt/$name"
  expect_rc 1 "fmt --check $name"
  expect_in "$TMP/err" "note: format version 1" "fmt --check $name"
  run "$TGRAPH" fmt "$TMP/$base/fmt/$name"
  expect_rc 0 "fmt $name"
  expect_in "$TMP/out" "$name: reformatted, upgraded from format version 1 to 2" "fmt $name"
  expect_same "$TMP/$base/fmt/$name" "$v2" "fmt of version 1 $name is its version 2 file"
  run "$TGRAPH" fmt --check "$TMP/$base/fmt/$name"
  expect_rc 0 "fmt --check after fmt $name"

  # The same bytes from both, manifest included (-r 65 keeps it quick).
  for d in v1 v2; do
    run "$TGRAPH" eval "$TMP/$base/$d/$name" -o "$TMP/$base/out_$d" -r 65 --threads 2 --quiet
    expect_rc 0 "eval $d/$name"
  done
  hashes "$TMP/$base/out_v1" > "$TMP/$base/v1.sha"
  hashes "$TMP/$base/out_v2" > "$TMP/$base/v2.sha"
  checks=$((checks + 1))
  [ -s "$TMP/$base/v2.sha" ] || fail "eval $name wrote nothing"
  expect_same "$TMP/$base/v1.sha" "$TMP/$base/v2.sha" "eval of version 1 and version 2 $name"
done
checks=$((checks + 1))
[ "$n_files" -ge 1 ] || fail "no version 1 files in $V1"

# --- errors point at the key as the file spells it --------------------------
# A bad value under an old name: the path has the new name and the node's
# id, the line and column are those of the old key's value.
sed 's/"centre_m": \[0, -1, 0\]/"centre_m": [0, -1]/' "$V1/arch.tgraph" > "$TMP/bad_centre.tgraph"
line="$(grep -n '"centre_m": \[0, -1\]' "$TMP/bad_centre.tgraph" | cut -d: -f1)"
col="$(grep '"centre_m": \[0, -1\]' "$TMP/bad_centre.tgraph" | awk '{ print index($0, "[") }')"
run "$TGRAPH" check "$TMP/bad_centre.tgraph"
expect_rc 2 "a bad value under an old name"
expect_in "$TMP/err" "bad_centre.tgraph:$line:$col: nodes[" "the old key's line and column"
expect_in "$TMP/err" ".params.center_m: expected an array of 3 numbers" "the new name in the path"

# A check that fails in the validator (after the upgrade): the same.
sed -e '/"id": "cliffs"/,/falloff_deg/s/"min_deg": 40/"min_deg": 80/' \
    -e '/"id": "cliffs"/,/falloff_deg/s/"max_deg": 90/"max_deg": 50/' \
  "$V1/alpine.tgraph" > "$TMP/bad_slope.tgraph"
line="$(grep -n '"max_deg": 50' "$TMP/bad_slope.tgraph" | cut -d: -f1)"
run "$TGRAPH" check "$TMP/bad_slope.tgraph"
expect_rc 2 "a range the validator refuses"
expect_in "$TMP/err" "bad_slope.tgraph:$line:20: nodes[" "the validator's error at the old key"
expect_in "$TMP/err" "\"cliffs\".params.max_slope_deg: maximum (50 deg) is below minimum (80 deg)" \
  "the validator names the node's id and the new name"

# Both names of one parameter in a version 1 file.
sed 's/"centre_m": \[0, -1, 0\]/"centre_m": [0, -1, 0], "center_m": [1, 1, 1]/' "$V1/arch.tgraph" \
  > "$TMP/both.tgraph"
run "$TGRAPH" check "$TMP/both.tgraph"
expect_rc 2 "both names in a version 1 file"
expect_in "$TMP/err" "params.center_m: \"center_m\" is the version 2 name of \"centre_m\"" \
  "both names"

# An old name in a version 2 file is an unknown parameter, with its new name.
sed 's/"center_m": \[0, -1, 0\]/"centre_m": [0, -1, 0]/' "$EXAMPLES/arch.tgraph" \
  > "$TMP/old_in_v2.tgraph"
run "$TGRAPH" check "$TMP/old_in_v2.tgraph"
expect_rc 2 "an old name in a version 2 file"
expect_in "$TMP/err" "params.centre_m: unknown parameter of field.box (\"centre_m\" is its" \
  "an old name in a version 2 file"
expect_in "$TMP/err" "format version 1 name; version 2 calls it \"center_m\")" \
  "an old name in a version 2 file"

# --- versions ----------------------------------------------------------------
sed 's/^  "version": 2,$/  "version": 3,/' "$EXAMPLES/island.tgraph" > "$TMP/v3.tgraph"
run "$TGRAPH" check "$TMP/v3.tgraph"
expect_rc 2 "version 3"
expect_in "$TMP/err" "v3.tgraph:3:14: version: this file is format version 3" "version 3 refused"
expect_in "$TMP/err" "up to version 2" "version 3 refused"
run "$TGRAPH" fmt "$TMP/v3.tgraph"
expect_rc 2 "fmt of version 3"
checks=$((checks + 1))
grep -q '"version": 3,' "$TMP/v3.tgraph" || fail "fmt changed a version 3 file"

# --- --set with an old name: taken under the new name, with a note --------------
run "$TGRAPH" eval "$EXAMPLES/island.tgraph" -o "$TMP/set_new" -r 65 --threads 2 --quiet \
  --set coast.max_input=0.7
expect_rc 0 "--set with the new name"
run "$TGRAPH" eval "$EXAMPLES/island.tgraph" -o "$TMP/set_old" -r 65 --threads 2 \
  --set coast.in_max=0.7
expect_rc 0 "--set with the old name"
expect_in "$TMP/err" "note: --set coast.in_max=0.7: \"in_max\" of filter.remap is called" \
  "--set with the old name"
expect_in "$TMP/err" "\"max_input\" since format version 2; setting coast.max_input" \
  "--set with the old name"
hashes "$TMP/set_new" > "$TMP/set_new.sha"
hashes "$TMP/set_old" > "$TMP/set_old.sha"
expect_same "$TMP/set_new.sha" "$TMP/set_old.sha" "--set old and new names give the same files"
run "$TGRAPH" eval "$EXAMPLES/island.tgraph" -o "$TMP/set_quiet" -r 65 --quiet \
  --set coast.in_max=0.7
expect_rc 0 "--set with the old name, --quiet"
expect_not_in "$TMP/err" "note:" "--quiet has no note"
run "$TGRAPH" eval "$EXAMPLES/island.tgraph" -o "$TMP/set_bad" --set coast.in_maxx=0.7
expect_rc 2 "--set with an unknown name"
expect_in "$TMP/err" "has no parameter \"in_maxx\"" "--set with an unknown name"

finish
