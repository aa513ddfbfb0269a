#!/bin/bash
# tgraph diff: hand-made pairs in tests/cli/data/diff/ with each kind of
# change once (world, node removed, added, retyped, parameters with and
# without a unit, links removed and added, a move), a rename, moves only,
# a version-1 file against its version-2 form; the exact text, markdown
# and JSON (checked with python's json and against the schema's kinds);
# exit status as diff(1); and the git diff driver and difftool entry that
# README.md ("Version control") gives.
. "$(dirname "$0")/lib.sh"

D="$DATA/diff"
cd "$D" || exit 1

run "$TGRAPH" diff old.tgraph new.tgraph
expect_rc 1 "diff of a changed graph"
cat > "$TMP/want" <<'EOF'
--- old.tgraph
+++ new.tgraph
~ world seed: 7 → 8
- removed node cap (filter.clamp)
+ added node steps (filter.terrace)
~ base.octaves: 5 → 6
~ island.radius_m: 350 m → 400 m
~ node smooth type: "filter.blur" → "filter.normalize"
- removed link mix.height → cap.height
- removed link smooth.height → png.height
+ added link smooth.height → steps.height
+ added link steps.height → png.height
editor layout only (the nodes' "ui" blocks):
  moved island: { "x": 40, "y": 200 } → { "x": 60, "y": 220 }
EOF
checks=$((checks + 1))
diff -u "$TMP/want" "$TMP/out" >&2 || fail "diff old new: the text differs from the expected (above)"

run "$TGRAPH" diff --no-ui old.tgraph new.tgraph
expect_rc 1 "diff --no-ui of a changed graph"
expect_not_in "$TMP/out" "moved island" "--no-ui hides moves"
expect_in "$TMP/out" "~ world seed: 7 → 8" "--no-ui keeps the rest"

run "$TGRAPH" diff old.tgraph new.tgraph --format markdown
expect_rc 1 "markdown diff"
cat > "$TMP/want" <<'EOF'
#### Graph changes: `old.tgraph` → `new.tgraph`

- world `seed`: `7` → `8`
- removed node `cap` (filter.clamp)
- added node `steps` (filter.terrace)
- `base.octaves`: `5` → `6`
- `island.radius_m`: `350` m → `400` m
- node `smooth` type: `"filter.blur"` → `"filter.normalize"`
- removed link `mix.height → cap.height`
- removed link `smooth.height → png.height`
- added link `smooth.height → steps.height`
- added link `steps.height → png.height`

<details><summary>Layout only: 1 node moved in the editor</summary>

- moved `island`: `{ "x": 40, "y": 200 }` → `{ "x": 60, "y": 220 }`

</details>
EOF
checks=$((checks + 1))
diff -u "$TMP/want" "$TMP/out" >&2 || fail "markdown diff differs from the expected (above)"

run "$TGRAPH" diff --format=json old.tgraph new.tgraph
expect_rc 1 "json diff"
cp "$TMP/out" "$TMP/diff.json"
checks=$((checks + 1))
python3 - "$TMP/diff.json" <<'PY' || fail "json diff: unexpected content (above)"
import json, sys
d = json.load(open(sys.argv[1]))
want = [
    {"kind": "world", "name": "seed", "old": 7, "new": 8},
    {"kind": "node-removed", "node": "cap", "type": "filter.clamp"},
    {"kind": "node-added", "node": "steps", "type": "filter.terrace"},
    {"kind": "param", "node": "base", "name": "octaves", "old": 5, "new": 6},
    {"kind": "param", "node": "island", "name": "radius_m", "old": 350, "new": 400, "unit": "m"},
    {"kind": "node-type", "node": "smooth", "old": "filter.blur", "new": "filter.normalize"},
    {"kind": "link-removed", "from": "mix.height", "to": "cap.height"},
    {"kind": "link-removed", "from": "smooth.height", "to": "png.height"},
    {"kind": "link-added", "from": "smooth.height", "to": "steps.height"},
    {"kind": "link-added", "from": "steps.height", "to": "png.height"},
    {"kind": "node-moved", "node": "island", "old": {"x": 40, "y": 200}, "new": {"x": 60, "y": 220}},
]
got = d["changes"]
ok = d["old"] == "old.tgraph" and d["new"] == "new.tgraph" and d["equal"] is False and got == want
if not ok:
    for w, g in zip(want + [None] * len(got), got + [None] * len(want)):
        print(("   " if w == g else "!! ") + "want %s\n   got  %s" % (w, g))
    sys.exit(1)
PY

# The same diff twice gives the same bytes (and the schema's kinds cover it).
run "$TGRAPH" diff --format json old.tgraph new.tgraph
expect_same "$TMP/out" "$TMP/diff.json" "json diff is deterministic"

# A rename (same type and parameters under a new id) is one change, and
# the links through the node are not reported as removed and added.
run "$TGRAPH" diff old.tgraph renamed.tgraph
expect_rc 1 "rename"
printf '%s\n' '--- old.tgraph' '+++ renamed.tgraph' '~ renamed node "base" → "ground"' > "$TMP/want"
checks=$((checks + 1))
diff -u "$TMP/want" "$TMP/out" >&2 || fail "rename: the text differs from the expected (above)"
run "$TGRAPH" diff renamed.tgraph old.tgraph --format json
expect_in "$TMP/out" '{"kind": "node-renamed", "node": "base", "old": "ground", "new": "base"}' "rename back"

# Renamed and changed: no longer the same node, so removed and added.
sed 's/"octaves": 5/"octaves": 3/' renamed.tgraph > "$TMP/renamed_changed.tgraph"
run "$TGRAPH" diff old.tgraph "$TMP/renamed_changed.tgraph"
expect_rc 1 "rename with a change"
expect_in "$TMP/out" "- removed node base (noise.fbm)" "rename with a change"
expect_in "$TMP/out" "+ added node ground (noise.fbm)" "rename with a change"
expect_in "$TMP/out" "- removed link base.height → mix.a" "rename with a change"
expect_in "$TMP/out" "+ added link ground.height → mix.a" "rename with a change"

# Two nodes that could each be the renamed one: no guess, removed and added.
sed 's/"id": "cap", "type": "filter.clamp"/"id": "cap", "type": "filter.blur"/; s/"max_height": 0.8/"radius_m": 20/' \
  old.tgraph > "$TMP/two_blurs.tgraph"
sed 's/"smooth/"soft/g; /"id": "cap"/,/}/d; /"cap.height"/d' "$TMP/two_blurs.tgraph" > "$TMP/one_blur.tgraph"
run "$TGRAPH" diff --no-ui "$TMP/two_blurs.tgraph" "$TMP/one_blur.tgraph"
expect_rc 1 "an ambiguous rename"
expect_in "$TMP/out" "- removed node smooth (filter.blur)" "an ambiguous rename"
expect_in "$TMP/out" "- removed node cap (filter.blur)" "an ambiguous rename"
expect_in "$TMP/out" "+ added node soft (filter.blur)" "an ambiguous rename"
expect_not_in "$TMP/out" "renamed" "an ambiguous rename"

# Moves only: listed apart, and with --no-ui the graphs are equal.
run "$TGRAPH" diff old.tgraph moved.tgraph
expect_rc 1 "moves only"
expect_in "$TMP/out" '  moved mix: { "x": 280, "y": 40 } → { "x": 300, "y": 80 }' "moves only"
expect_in "$TMP/out" '  moved png: { "x": 760, "y": 40 } → { "x": 800, "y": 40, "collapsed": true }' \
  "moves only"
[ "$(grep -c . "$TMP/out")" -eq 5 ] || fail "moves only: expected 5 lines, got $(cat "$TMP/out")"
run "$TGRAPH" diff --no-ui old.tgraph moved.tgraph
expect_rc 0 "moves only, --no-ui"
[ -s "$TMP/out" ] && fail "moves only, --no-ui printed: $(cat "$TMP/out")"
run "$TGRAPH" diff --no-ui --format json old.tgraph moved.tgraph
expect_rc 0 "moves only, --no-ui, json"
expect_in "$TMP/out" '"equal": true, "changes": []}' "moves only, --no-ui, json"
run "$TGRAPH" diff --no-ui --format markdown old.tgraph moved.tgraph
expect_in "$TMP/out" "No changes." "moves only, --no-ui, markdown"

# Equal graphs: no output, exit 0.
run "$TGRAPH" diff old.tgraph old.tgraph
expect_rc 0 "a graph against itself"
[ -s "$TMP/out" ] && fail "a graph against itself printed: $(cat "$TMP/out")"

# A version-1 file compares equal to the version-2 file it migrates to
# (tgraph fmt writes that), and a real change still shows through it.
run "$TGRAPH" fmt --check "$DATA/v1/island.tgraph"
cp "$DATA/v1/island.tgraph" "$TMP/v1.tgraph"
run "$TGRAPH" fmt "$TMP/v1.tgraph"
expect_rc 0 "fmt of a version-1 file"
grep -q '"version": 2' "$TMP/v1.tgraph" || fail "fmt did not write version 2"
run "$TGRAPH" diff "$DATA/v1/island.tgraph" "$TMP/v1.tgraph"
expect_rc 0 "version 1 against its version 2 form"
[ -s "$TMP/out" ] && fail "version 1 against version 2 printed: $(cat "$TMP/out")"
run "$TGRAPH" diff "$DATA/v1/island.tgraph" "$EXAMPLES/island.tgraph"
expect_rc 0 "the version-1 island against the example"
grep -q '"in_min": 0.12' "$DATA/v1/island.tgraph" || fail "the version-1 island should use an old name"
sed 's/"min_input": 0.12/"min_input": 0.2/' "$TMP/v1.tgraph" > "$TMP/v2_changed.tgraph"
run "$TGRAPH" diff "$DATA/v1/island.tgraph" "$TMP/v2_changed.tgraph"
expect_rc 1 "version 1 against a changed version 2"
expect_in "$TMP/out" "~ coast.min_input: 0.12 → 0.2" "a renamed parameter shows under its new name"
[ "$(grep -c . "$TMP/out")" -eq 3 ] || fail "version 1 against a changed version 2: $(cat "$TMP/out")"

# Bad input: exit 2 naming the file; usage errors too.
run "$TGRAPH" diff old.tgraph "$DATA/bad_syntax.tgraph"
expect_rc 2 "diff with a broken file"
expect_in "$TMP/err" "bad_syntax.tgraph:7:" "diff with a broken file names its place"
run "$TGRAPH" diff "$TMP/missing.tgraph" old.tgraph
expect_rc 2 "diff with a missing file"
expect_in "$TMP/err" "missing.tgraph" "diff with a missing file"
run "$TGRAPH" diff old.tgraph
expect_rc 2 "diff with one file"
expect_in "$TMP/err" "expected two files" "diff with one file"
run "$TGRAPH" diff old.tgraph new.tgraph new.tgraph
expect_rc 2 "diff with three files"
run "$TGRAPH" diff --format xml old.tgraph new.tgraph
expect_rc 2 "diff --format xml"
expect_in "$TMP/err" 'expected text, json or markdown, got "xml"' "diff --format xml"
# A graph that would not evaluate yet (an unlinked required input) compares.
sed '/"from": "smooth.height"/d; s/"mix.height", "to": "cap.height" },/"mix.height", "to": "cap.height" }/' \
  old.tgraph > "$TMP/unfinished.tgraph"
run "$TGRAPH" check "$TMP/unfinished.tgraph"
expect_rc 2 "the unfinished graph is not valid for evaluation"
run "$TGRAPH" diff old.tgraph "$TMP/unfinished.tgraph"
expect_rc 1 "diff with an unfinished graph"
expect_in "$TMP/out" "- removed link smooth.height → png.height" "diff with an unfinished graph"

# Big graphs: 4000 nodes, every id changed and no node matching another,
# so every pair is tried as a rename (seconds, not the minutes a pairing
# by linear search took).
python3 - "$TMP" <<'PY'
import json, sys
def graph(prefix, pivot0):
    nodes = [{"id": "src", "type": "gen.constant", "params": {"value": 0.5}}]
    links, prev = [], "src"
    for k in range(3998):
        nid = "%s%d" % (prefix, k)
        nodes.append({"id": nid, "type": "filter.invert", "params": {"pivot": pivot0 + k / 10000}})
        links.append({"from": prev + ".height", "to": nid + ".height"})
        prev = nid
    nodes.append({"id": "out", "type": "export.heightmap", "params": {"path": "h.png", "format": "png16"}})
    links.append({"from": prev + ".height", "to": "out.height"})
    return {"format": "tgraph", "version": 2, "nodes": nodes, "links": links,
            "world": {"size_m": [100, 100], "height_m": 10, "resolution": 33, "seed": 1}}
json.dump(graph("n", 0), open(sys.argv[1] + "/big_a.tgraph", "w"))
json.dump(graph("m", 0.5), open(sys.argv[1] + "/big_b.tgraph", "w"))
PY
run timeout 30 "$TGRAPH" diff "$TMP/big_a.tgraph" "$TMP/big_b.tgraph"
expect_rc 1 "two 4000-node graphs with every id changed"
[ "$(grep -c '^- removed node' "$TMP/out")" -eq 3998 ] || fail "big graphs: expected 3998 nodes removed"

# From git, as README.md's "Version control" section says.
if command -v git > /dev/null 2>&1; then
  repo="$TMP/repo"
  mkdir -p "$repo/bin"
  ln -s "$TGRAPH" "$repo/bin/tgraph"
  export PATH="$repo/bin:$PATH"
  (
    cd "$repo" && git init -q . && git config user.email t@example.invalid &&
      git config user.name test &&
      git config diff.tgraph.command \
        'tgraph_diff() { tgraph diff "$2" "$5" || [ $? -eq 1 ] || diff -u "$2" "$5"; true; }; tgraph_diff' &&
      git config difftool.tgraph.cmd 'tgraph diff "$LOCAL" "$REMOTE"' &&
      echo '*.tgraph diff=tgraph' > .gitattributes &&
      cp "$D/old.tgraph" world.tgraph && git add . && git commit -qm old &&
      cp "$D/new.tgraph" world.tgraph && git commit -qam new
  ) || fail "could not set up a git repository"
  run env -C "$repo" git diff HEAD~1 HEAD
  expect_rc 0 "git diff with the driver"
  expect_in "$TMP/out" "~ island.radius_m: 350 m → 400 m" "git diff with the driver"
  expect_in "$TMP/out" "+ added node steps (filter.terrace)" "git diff with the driver"
  # A new file (/dev/null on one side) falls back to the text diff.
  (cd "$repo" && cp "$D/moved.tgraph" other.tgraph && git add other.tgraph)
  run env -C "$repo" git diff --cached
  expect_rc 0 "git diff of a new file with the driver"
  expect_in "$TMP/out" '+    { "id": "base", "type": "noise.fbm"' "git diff of a new file"
  run env -C "$repo" git difftool -y -t tgraph HEAD~1 HEAD
  expect_rc 0 "git difftool"
  expect_in "$TMP/out" "~ world seed: 7 → 8" "git difftool"
else
  echo "git is not installed: the git driver is not checked"
fi

# --- bypass: the engine reads it, so it is a change, not layout ------------------
sed 's/"ui": { "x": 200, "y": 40, "bypass": true }/"ui": { "x": 200, "y": 40 }/' "$DATA/bypass.tgraph" > "$TMP/unbypassed.tgraph"
run "$TGRAPH" diff "$DATA/bypass.tgraph" "$TMP/unbypassed.tgraph"
expect_rc 1 "diff of a bypass change"
expect_in "$TMP/out" "~ node smooth bypass: true → false" "bypass change listed"
expect_not_in "$TMP/out" "moved smooth" "a bypass change is not a move"
run "$TGRAPH" diff --no-ui "$TMP/unbypassed.tgraph" "$DATA/bypass.tgraph"
expect_rc 1 "diff --no-ui of a bypass change"
expect_in "$TMP/out" "~ node smooth bypass: false → true" "--no-ui keeps bypass changes"
run "$TGRAPH" diff --format json "$DATA/bypass.tgraph" "$TMP/unbypassed.tgraph"
expect_in "$TMP/out" '{"kind": "node-bypass", "node": "smooth", "old": true, "new": false}' "json bypass change"

# --- the viewer's pin: editor data, said as pinned/unpinned, not as a move ----------
sed 's/"ui": { "x": 40, "y": 200 }/"ui": { "x": 40, "y": 200, "viewer_pin": true }/' old.tgraph \
  > "$TMP/pinned.tgraph"
grep -q '"viewer_pin": true' "$TMP/pinned.tgraph" || fail "the pinned graph has no pin"
run "$TGRAPH" diff old.tgraph "$TMP/pinned.tgraph"
expect_rc 1 "diff of a pin"
printf '%s\n' '--- old.tgraph' "+++ $TMP/pinned.tgraph" \
  'editor layout only (the nodes'"'"' "ui" blocks):' '  pinned island' > "$TMP/want"
checks=$((checks + 1))
diff -u "$TMP/want" "$TMP/out" >&2 || fail "pin: the text differs from the expected (above)"
run "$TGRAPH" diff "$TMP/pinned.tgraph" old.tgraph
expect_in "$TMP/out" '  unpinned island' "unpin"
expect_not_in "$TMP/out" "moved" "an unpin is not a move"
run "$TGRAPH" diff --no-ui old.tgraph "$TMP/pinned.tgraph"
expect_rc 0 "a pin with --no-ui"
run "$TGRAPH" diff --format json old.tgraph "$TMP/pinned.tgraph"
expect_in "$TMP/out" '{"kind": "node-pin", "node": "island", "old": false, "new": true}' "json pin"
expect_not_in "$TMP/out" "node-moved" "json: a pin is not a move"
run "$TGRAPH" diff --format markdown old.tgraph "$TMP/pinned.tgraph"
expect_in "$TMP/out" "<summary>Layout only: 1 pin changed in the editor</summary>" "markdown pin"
expect_in "$TMP/out" '- pinned `island`' "markdown pin"
# Pinned and moved: both said; a pin moving to another node, once each.
sed 's/"ui": { "x": 40, "y": 200 }/"ui": { "x": 60, "y": 220, "viewer_pin": true }/' old.tgraph \
  > "$TMP/pinned_moved.tgraph"
run "$TGRAPH" diff old.tgraph "$TMP/pinned_moved.tgraph"
expect_in "$TMP/out" '  pinned island' "pinned and moved"
expect_in "$TMP/out" '  moved island: { "x": 40, "y": 200 } → { "x": 60, "y": 220, "viewer_pin": true }' \
  "pinned and moved"
sed 's/"ui": { "x": 280, "y": 40 }/"ui": { "x": 280, "y": 40, "viewer_pin": true }/' old.tgraph \
  > "$TMP/pinned_mix.tgraph"
run "$TGRAPH" diff "$TMP/pinned.tgraph" "$TMP/pinned_mix.tgraph"
expect_in "$TMP/out" '  unpinned island' "the pin moves"
expect_in "$TMP/out" '  pinned mix' "the pin moves"
[ "$(grep -c . "$TMP/out")" -eq 5 ] || fail "the pin moves: expected 5 lines, got $(cat "$TMP/out")"

finish
