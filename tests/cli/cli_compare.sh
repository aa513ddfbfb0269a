#!/bin/bash
# `tgraph compare`: outputs of two world seeds differ (exit 1) with the
# numbers an independent reading of the RAW16 file gives and a difference
# map that is red and blue where it should be; outputs of one and two
# threads are equal (exit 0); --tolerance; added and removed files;
# meshes and instance lists; markdown with its pictures beside it; bad
# input exits 2 naming what is wrong.
. "$(dirname "$0")/lib.sh"

G1="$TMP/seed7.tgraph"
G2="$TMP/seed8.tgraph"
cp "$DATA/small.tgraph" "$G1"
sed 's/"seed": 7/"seed": 8/' "$DATA/small.tgraph" > "$G2"
cmp -s "$G1" "$G2" && fail "the second graph should have another seed"

run "$TGRAPH" eval "$G1" -o "$TMP/a" -j 2 -q
expect_rc 0 "eval seed 7, 2 threads"
run "$TGRAPH" eval "$G1" -o "$TMP/a1" -j 1 -q
expect_rc 0 "eval seed 7, 1 thread"
run "$TGRAPH" eval "$G2" -o "$TMP/b" -j 2 -q
expect_rc 0 "eval seed 8"

# Two thread counts: equal.
run "$TGRAPH" compare "$TMP/a" "$TMP/a1"
expect_rc 0 "compare 2 threads with 1 thread"
expect_in "$TMP/out" "2 same, 0 changed, 0 added, 0 removed" "compare equal folders"

# Two seeds: changed, pictures written.
run "$TGRAPH" compare "$TMP/a" "$TMP/b" -o "$TMP/cmp"
expect_rc 1 "compare two seeds"
expect_in "$TMP/out" "changed  small.png: png16 65x65:" "text line of small.png"
expect_in "$TMP/out" "changed  sub/small.r16: raw16 65x65:" "text line of sub/small.r16"
expect_in "$TMP/out" "0 same, 2 changed, 0 added, 0 removed" "summary line"
for f in small.png.diff.png small.png.sides.png sub_small.r16.diff.png sub_small.r16.sides.png; do
  checks=$((checks + 1))
  [ -s "$TMP/cmp/$f" ] || fail "$f was not written"
done
if command -v pngcheck > /dev/null 2>&1; then
  run pngcheck "$TMP/cmp/small.png.diff.png"
  expect_rc 0 "pngcheck of the difference map"
else
  echo "SKIP: pngcheck not installed"
fi
# The map: 65 samples enlarged to at least 512 pixels, white where equal,
# red and blue where the new seed is higher and lower.
python3 "$SRC/tests/cli/png_colours.py" "$TMP/cmp/small.png.diff.png" > "$TMP/colours"
read -r w h distinct white red blue other < "$TMP/colours"
checks=$((checks + 1))
[ "$w" -ge 512 ] && [ "$w" -eq "$h" ] || fail "difference map is ${w}x$h, expected square >= 512"
checks=$((checks + 1))
[ "${red#red=}" -gt 1000 ] && [ "${blue#blue=}" -gt 1000 ] && [ "${distinct#distinct=}" -gt 50 ] \
  || fail "difference map is trivial: $(cat "$TMP/colours")"
# The png and the raw16 (rows south first) hold the same heights: same
# numbers, same picture (the raw's rows are flipped to put north up).
expect_same "$TMP/cmp/small.png.diff.png" "$TMP/cmp/sub_small.r16.diff.png" \
  "difference maps of the png and the south-first raw16"

# The numbers against an independent reading of the RAW16 samples.
run "$TGRAPH" compare "$TMP/a" "$TMP/b" --format json
expect_rc 1 "compare --format json"
cp "$TMP/out" "$TMP/compare.json"
python3 - "$TMP/a/sub/small.r16" "$TMP/b/sub/small.r16" "$TMP/compare.json" <<'PY' \
  || fail "compare's numbers (see above)"
import json, math, struct, sys
a, b = (struct.unpack("<%dH" % (65 * 65), open(p, "rb").read()) for p in sys.argv[1:3])
mpu = 200 / 65535
d = [(y - x) * mpu for x, y in zip(a, b)]
changed = sum(1 for v in d if v != 0)
mx = max(abs(v) for v in d)
rms = math.sqrt(sum(v * v for v in d) / len(d))
j = json.load(open(sys.argv[3]))
g = {f["path"]: f for f in j["files"]}["sub/small.r16"]["grid"]
ok = g["changed_samples"] == changed and abs(g["max_diff"] - mx) < 1e-9 * mx \
     and abs(g["rms_diff"] - rms) < 1e-9 * rms and g["unit"] == "m"
print("python: changed %d max %.6f rms %.6f; tgraph: %s" % (changed, mx, rms, g))
sys.exit(0 if ok and changed > 100 and not j["equal"] else 1)
PY

# --tolerance: above the largest difference equal, below it not.
max=$(python3 -c 'import json,sys; print(max(f["grid"]["max_diff"] for f in json.load(open(sys.argv[1]))["files"]))' "$TMP/compare.json")
run "$TGRAPH" compare "$TMP/a" "$TMP/b" --tolerance "$(python3 -c "print($max + 0.001)")"
expect_rc 0 "compare with a tolerance above the largest difference"
expect_in "$TMP/out" "(within the tolerance)" "within the tolerance"
run "$TGRAPH" compare "$TMP/a" "$TMP/b" --tolerance "$(python3 -c "print($max - 0.001)")"
expect_rc 1 "compare with a tolerance below the largest difference"

# Added and removed: a manifest without the png, and the png renamed.
cp -r "$TMP/a" "$TMP/c"
python3 - "$TMP/c/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["files"][0]["path"] = "renamed.png"
json.dump(m, open(sys.argv[1], "w"), indent=2)
PY
mv "$TMP/c/small.png" "$TMP/c/renamed.png"
run "$TGRAPH" compare "$TMP/a" "$TMP/c"
expect_rc 1 "compare with a file renamed"
expect_in "$TMP/out" "added    renamed.png" "added file"
expect_in "$TMP/out" "removed  small.png" "removed file"
expect_in "$TMP/out" "1 same, 0 changed, 1 added, 1 removed" "summary with added and removed"

# Every grid format reads back to the same heights: one height exported as
# exr, r32 (normalized and metres), raw16 (south first) and png16, two
# world seeds; the floats agree to a millimetre, the 16-bit files to their
# step (200 m / 65535).
python3 - "$DATA/small.tgraph" "$TMP/formats7.tgraph" "$TMP/formats8.tgraph" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
exports = [("exr", "h.exr", "exr", "north_first", "normalized"),
           ("r32n", "h_norm.r32", "r32", "north_first", "normalized"),
           ("r32m", "h_m.r32", "r32", "north_first", "metres"),
           ("r16s", "h_south.r16", "raw16", "south_first", "normalized"),
           ("png", "h.png", "png16", "north_first", "normalized")]
g["nodes"] = [n for n in g["nodes"] if not n["type"].startswith("export.")] + [
    {"id": i, "type": "export.heightmap", "params": {"path": p, "format": f, "rows": r, "units": u}}
    for i, p, f, r, u in exports]
g["links"] = [l for l in g["links"] if not l["to"].startswith(("png.", "raw."))] + [
    {"from": "mix.height", "to": i + ".height"} for i, *_ in exports]
json.dump(g, open(sys.argv[2], "w"), indent=2)
g["world"]["seed"] = 8
json.dump(g, open(sys.argv[3], "w"), indent=2)
PY
run "$TGRAPH" eval "$TMP/formats7.tgraph" -o "$TMP/fm7" -q
expect_rc 0 "eval every grid format, seed 7"
run "$TGRAPH" eval "$TMP/formats8.tgraph" -o "$TMP/fm8" -q
expect_rc 0 "eval every grid format, seed 8"
run "$TGRAPH" compare "$TMP/fm7" "$TMP/fm8" --format json
expect_rc 1 "compare every grid format"
python3 - "$TMP/out" <<'PY' || fail "the formats disagree (see above)"
import json, sys
g = {f["path"]: f["grid"] for f in json.load(open(sys.argv[1]))["files"]}
for p, v in sorted(g.items()):
    print("%-12s changed %5d max %.6f m rms %.6f m" % (p, v["changed_samples"], v["max_diff"], v["rms_diff"]))
ref = g["h_m.r32"]
step = 200 / 65535
ok = all(v["unit"] == "m" for v in g.values()) and ref["max_diff"] > 1
for p in ("h.exr", "h_norm.r32"):
    ok &= abs(g[p]["max_diff"] - ref["max_diff"]) < 1e-3 and abs(g[p]["rms_diff"] - ref["rms_diff"]) < 1e-3
for p in ("h.png", "h_south.r16"):
    ok &= abs(g[p]["max_diff"] - ref["max_diff"]) <= step and abs(g[p]["rms_diff"] - ref["rms_diff"]) <= step
# The same codes, rows in another order: the same counts and largest
# difference, the RMS summed in another order.
a, b = g["h.png"], g["h_south.r16"]
ok &= a["changed_samples"] == b["changed_samples"] and a["max_diff"] == b["max_diff"]
ok &= abs(a["rms_diff"] - b["rms_diff"]) < 1e-9
sys.exit(0 if ok else 1)
PY

# Markdown: the summary in DIR, its pictures beside it by relative links.
run "$TGRAPH" compare "$TMP/a" "$TMP/b" -o "$TMP/md" --format markdown
expect_rc 1 "compare --format markdown"
expect_same "$TMP/out" "$TMP/md/summary.md" "summary.md is what was printed"
expect_in "$TMP/out" "| \`small.png\` | changed | png16 65x65:" "markdown table row"
grep -o '](\([^)]*\))' "$TMP/md/summary.md" | sed 's/^](//; s/)$//' > "$TMP/links"
checks=$((checks + 1))
[ "$(wc -l < "$TMP/links")" -eq 2 ] || fail "summary.md should link two pictures: $(cat "$TMP/links")"
while read -r link; do
  checks=$((checks + 1))
  case "$link" in /* | *://*) fail "link $link is not relative" ;; esac
  [ -s "$TMP/md/$link" ] || fail "summary.md links $link, which is not in the folder"
done < "$TMP/links"

# Meshes and instance lists: the forest (height; instances as csv, glb
# and, instead of its Godot scene, json) with another seed of its scatter.
python3 - "$EXAMPLES/forest.tgraph" "$TMP/forest.tgraph" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
for n in g["nodes"]:
    if n["id"] == "godot":
        n["params"].update(path="forest/instances.json", format="json")
json.dump(g, open(sys.argv[2], "w"), indent=2)
PY
cp "$EXAMPLES/forest_paint.png" "$TMP/"
run "$TGRAPH" eval "$TMP/forest.tgraph" -r 65 -o "$TMP/f1" -q
expect_rc 0 "eval forest"
scatter=$(python3 -c 'import json,sys; print([n["id"] for n in json.load(open(sys.argv[1]))["nodes"] if n["type"].startswith("scatter")][0])' "$EXAMPLES/forest.tgraph")
run "$TGRAPH" eval "$TMP/forest.tgraph" -r 65 -o "$TMP/f2" -q -s "$scatter.seed=99"
expect_rc 0 "eval forest with another scatter seed"
run "$TGRAPH" compare "$TMP/f1" "$TMP/f2" --format json
expect_rc 1 "compare forests"
python3 - "$TMP/out" "$TMP/f1/forest/instances.csv" "$TMP/f2/forest/instances.csv" <<'PY' \
  || fail "instance counts (see above)"
import collections, csv, json, sys
j = json.load(open(sys.argv[1]))
files = {f["path"]: f for f in j["files"]}
inst = files["forest/instances.csv"]["instances"]
counts = [collections.Counter(r["prototype"] for r in csv.DictReader(open(p))) for p in sys.argv[2:4]]
got = {p["name"]: (p["old"], p["new"]) for p in inst["prototypes"]}
want = {k: (counts[0][k], counts[1][k]) for k in set(counts[0]) | set(counts[1])}
print("instances:", inst["moved"], "moved of", inst["matched"], got, want)
assert got == want and inst["moved"] > 0, "counts or moves"
for other in ("forest/instances.glb", "forest/instances.json"):
    o = files[other]["instances"]
    print(other, o["moved"], "moved of", o["matched"])
    assert {p["name"]: (p["old"], p["new"]) for p in o["prototypes"]} == want, other + " counts"
    assert (o["moved"], o["matched"]) == (inst["moved"], inst["matched"]), other + " moves"
assert files["forest/height.png"]["status"] == "same", "the height does not depend on the scatter"
PY
run "$TGRAPH" eval "$EXAMPLES/arch.tgraph" -r 65 -o "$TMP/m1" -q
expect_rc 0 "eval arch"
cp "$EXAMPLES/arch.tgraph" "$TMP/arch2.tgraph"
sed -i 's/"seed": 2024/"seed": 2025/' "$TMP/arch2.tgraph"
run "$TGRAPH" eval "$TMP/arch2.tgraph" -r 65 -o "$TMP/m2" -q
expect_rc 0 "eval arch with another world seed"
run "$TGRAPH" compare "$TMP/m1" "$TMP/m2"
expect_rc 1 "compare meshes"
expect_in "$TMP/out" "changed  arch.glb: " "mesh line"
expect_in "$TMP/out" " vertices, " "mesh counts"
expect_in "$TMP/out" "bounds (" "mesh bounds"

# Bad input: exit 2 and a message naming the place.
run "$TGRAPH" compare "$TMP/a" "$TMP/nowhere"
expect_rc 2 "compare with a missing folder"
expect_in "$TMP/err" "$TMP/nowhere: no manifest.json" "missing folder named"
mkdir "$TMP/bad"
echo '{"files": [{"path": "x.png", "sha256": "12"}]}' > "$TMP/bad/manifest.json"
run "$TGRAPH" compare "$TMP/a" "$TMP/bad"
expect_rc 2 "compare with a malformed manifest"
expect_in "$TMP/err" "bad/manifest.json: files[0].sha256: expected 64 hex digits" "bad entry named"
echo '{"files": [' > "$TMP/bad/manifest.json"
run "$TGRAPH" compare "$TMP/a" "$TMP/bad"
expect_rc 2 "compare with a manifest that is not JSON"
expect_in "$TMP/err" "manifest.json: not a JSON object" "not JSON"
cp -r "$TMP/b" "$TMP/gone"
rm "$TMP/gone/small.png"
run "$TGRAPH" compare "$TMP/a" "$TMP/gone"
expect_rc 2 "compare with a listed file missing"
expect_in "$TMP/err" "gone/small.png" "missing file named"
run "$TGRAPH" compare "$TMP/a" "$TMP/b" --tolerance -1
expect_rc 2 "negative tolerance"
expect_in "$TMP/err" "--tolerance: expected metres" "tolerance message"
run "$TGRAPH" compare "$TMP/a" "$TMP/b" --format xml
expect_rc 2 "unknown format"
run "$TGRAPH" compare "$TMP/a"
expect_rc 2 "one folder"
expect_in "$TMP/err" "expected two output folders" "one folder message"

finish
