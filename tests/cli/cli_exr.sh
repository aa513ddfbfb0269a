#!/bin/bash
# Float heightmaps in metres and the manifest's import numbers: an exr
# export that OpenEXR's own tools read (exrheader, exrmaketiled; skipped
# when the openexr package is missing) and Blender loads as float metres
# (skipped without Blender), and whose samples, decoded here
# independently of the library, are the r32 metres samples bit for bit
# and the normalized r32 samples times the world's height; the same exr
# bytes for 1 and 2 threads and from a tiled build (plan, jobs, stitch);
# the manifest's metres per sample, height range, Unreal Location and
# Scale and Unity Terrain size for the alpine example's world, and for
# the alpine example itself, with the layer each splat channel holds.
. "$(dirname "$0")/lib.sh"

# alpine's world under a cheap local graph: 4096 m, 850 m high, 1025
# samples, so the numbers at full resolution cost no erosion.
G="$TMP/exr.tgraph"
python3 - "$EXAMPLES/alpine.tgraph" "$G" <<'PY'
import json, sys
world = json.load(open(sys.argv[1]))["world"]
exports = [("exr", "h.exr", "exr", "north_first", "normalized"),
           ("r32n", "h_norm.r32", "r32", "north_first", "normalized"),
           ("r32m", "h_m.r32", "r32", "north_first", "metres"),
           ("r16s", "h_south.r16", "raw16", "south_first", "normalized"),
           ("png", "h.png", "png16", "north_first", "normalized")]
g = {"format": "tgraph", "version": 2, "world": world,
     "nodes": [{"id": "base", "type": "noise.fbm", "params": {"scale_m": 900, "octaves": 4}}]
              + [{"id": i, "type": "export.heightmap",
                  "params": {"path": p, "format": f, "rows": r, "units": u}}
                 for i, p, f, r, u in exports],
     "links": [{"from": "base.height", "to": i + ".height"} for i, *_ in exports]}
json.dump(g, open(sys.argv[2], "w"), indent=2)
PY

run "$TGRAPH" eval "$G" -o "$TMP/j2" --threads 2 --quiet
expect_rc 0 "eval with exr, 2 threads"
run "$TGRAPH" eval "$G" -o "$TMP/j1" --threads 1 --quiet
expect_rc 0 "eval with exr, 1 thread"
expect_same "$TMP/j1/h.exr" "$TMP/j2/h.exr" "exr bytes for 1 and 2 threads"
expect_same "$TMP/j1/manifest.json" "$TMP/j2/manifest.json" "manifest for 1 and 2 threads"

# OpenEXR's tools: the header, and every pixel read (exrmaketiled decodes
# the whole image to write it again).
if command -v exrheader > /dev/null 2>&1 && command -v exrmaketiled > /dev/null 2>&1; then
  run exrheader "$TMP/j2/h.exr"
  expect_rc 0 "exrheader h.exr"
  expect_in "$TMP/out" "Y, 32-bit floating-point" "exrheader: one float channel Y"
  expect_in "$TMP/out" "dataWindow (type box2i): (0 0) - (1024 1024)" "exrheader: 1025 x 1025"
  expect_in "$TMP/out" "compression (type compression): zip" "exrheader: zip"
  run exrmaketiled "$TMP/j2/h.exr" "$TMP/tiled.exr"
  expect_rc 0 "exrmaketiled reads every pixel of h.exr"
else
  echo "SKIP: exrheader/exrmaketiled (package openexr) not installed"
fi

# The samples, decoded from the file's bytes (ZIP chunks: zlib, then the
# predictor and the byte interleave undone), against the r32 files.
checks=$((checks + 1))
python3 - "$TMP/j2" <<'PY' || fail "exr samples (see above)"
import itertools, struct, sys, zlib
d = sys.argv[1]

def exr_floats(path):
    b = open(path, "rb").read()
    assert b[:4] == b"\x76\x2f\x31\x01", "not OpenEXR"
    p, attrs = 8, {}
    while b[p] != 0:
        name_end = b.index(b"\0", p); type_end = b.index(b"\0", name_end + 1)
        size, = struct.unpack_from("<i", b, type_end + 1)
        attrs[b[p:name_end].decode()] = b[type_end + 5:type_end + 5 + size]
        p = type_end + 5 + size
    p += 1
    x0, y0, x1, y1 = struct.unpack("<4i", attrs["dataWindow"])
    w, h = x1 - x0 + 1, y1 - y0 + 1
    assert attrs["compression"] == b"\x03", "not ZIP"
    n = (h + 15) // 16
    offsets = struct.unpack_from("<%dQ" % n, b, p)
    out = bytearray()
    for k, off in enumerate(offsets):
        y, size = struct.unpack_from("<ii", b, off)
        assert y == y0 + 16 * k, (y, k)
        raw = b[off + 8:off + 8 + size]
        want = 4 * w * min(16, h - 16 * k)
        if size < want:
            t = bytes(itertools.accumulate(zlib.decompress(raw), lambda a, c: (a + c - 128) & 255))
            half = (len(t) + 1) // 2
            raw = bytearray(len(t)); raw[0::2] = t[:half]; raw[1::2] = t[half:]
        out += raw
    return w, h, struct.unpack("<%df" % (w * h), bytes(out))

def r32(path):
    b = open(path, "rb").read()
    return struct.unpack("<%df" % (len(b) // 4), b)

w, h, exr = exr_floats(d + "/h.exr")
metres, norm = r32(d + "/h_m.r32"), r32(d + "/h_norm.r32")
f32 = lambda v: struct.unpack("<f", struct.pack("<f", v))[0]
ok = (w, h) == (1025, 1025) and len(exr) == len(metres) == len(norm)
ok = ok and list(exr) == list(metres)
ok = ok and all(m == f32(v * 850.0) for m, v in zip(metres, norm))
ok = ok and 1.0 < max(exr) <= 850.0 and min(exr) >= 0.0
if not ok:
    print("exr %dx%d, range %g..%g; first samples exr %s metres %s normalized %s"
          % (w, h, min(exr), max(exr), exr[:3], metres[:3], norm[:3]))
sys.exit(0 if ok else 1)
PY

# Blender (3.4 headless, skipped when missing or TG_NO_BLENDER=1) loads
# the exr as float pixels: the metres, north row at the top.
if [ "${TG_NO_BLENDER:-0}" != 1 ] && command -v "${BLENDER:-blender}" > /dev/null 2>&1; then
  cat > "$TMP/blender_exr.py" <<'PY'
import bpy, struct, sys
d = sys.argv[sys.argv.index("--") + 1]
img = bpy.data.images.load(d + "/h.exr")
w, h = img.size
px = img.pixels[:]  # RGBA, the bottom row first
raw = open(d + "/h_m.r32", "rb").read()
m = struct.unpack("<%df" % (len(raw) // 4), raw)
bad = sum(px[4 * ((h - 1 - j) * w + i)] != m[j * w + i] for j in range(h) for i in range(w))
print("EXR float=%s %dx%d mismatches=%d" % (img.is_float, w, h, bad))
PY
  run "${BLENDER:-blender}" -b --factory-startup --python "$TMP/blender_exr.py" -- "$TMP/j2"
  expect_in "$TMP/out" "EXR float=True 1025x1025 mismatches=0" "Blender reads the exr's metres"
else
  echo "SKIP: Blender"
fi

# The manifest's numbers for alpine's world: 4 m a sample (400 cm),
# Z scale 850 x 100 / 512, the actor half the range up at the north-west
# corner; Unity's terrain 4096 x 850 x 4096 m from the south-west corner.
checks=$((checks + 1))
python3 - "$TMP/j2/manifest.json" <<'PY' || fail "manifest import numbers (see above)"
import json, sys
files = {f["path"]: f for f in json.load(open(sys.argv[1]))["files"]}
unity = {"terrain_size_m": [4096, 850, 4096], "position_m": [-2048, 0, -2048]}
unreal = {"location_cm": [-204800, -204800, 42500], "scale": [400, 400, 166.015625]}
def hm(per_unit, rows="north_first", ue=None):
    o = {"metres_per_sample": 4, "height_range_m": [0, 850], "metres_per_unit": per_unit,
         "rows": rows}
    if ue:
        o["unreal"] = ue
    o["unity"] = unity
    return o
want = {"h.exr": hm(1), "h_m.r32": hm(1), "h_norm.r32": hm(850),
        "h_south.r16": hm(850 / 65535, "south_first"), "h.png": hm(850 / 65535, ue=unreal)}
ok = True
for path, w in want.items():
    if files[path].get("heightmap") != w:
        print("%s: %s\n  want %s" % (path, files[path].get("heightmap"), w)); ok = False
ok = ok and round(files["h.png"]["heightmap"]["unreal"]["scale"][2], 2) == 166.02
sys.exit(0 if ok else 1)
PY

# The alpine example itself (coarse, for time): 4096 m over 128 cells.
run "$TGRAPH" eval "$EXAMPLES/alpine.tgraph" -o "$TMP/alpine" -r 129 --quiet \
  --set out_height.format=exr --set out_height.path=height.exr
expect_rc 0 "alpine with an exr heightmap"
checks=$((checks + 1))
python3 - "$TMP/alpine/manifest.json" <<'PY' || fail "alpine's manifest (see above)"
import json, sys
m = json.load(open(sys.argv[1]))
f = {f["path"]: f for f in m["files"]}
h = f["height.exr"]["heightmap"]
w = m["world"]
ok = h["metres_per_sample"] == w["size_m"][0] / 128 == 32
ok = ok and h["height_range_m"] == [0, w["height_m"]] and h["metres_per_unit"] == 1
ok = ok and "unreal" not in h and h["unity"]["terrain_size_m"] == [4096, 850, 4096]
# Splat and colour maps are not heightmaps; the splat maps name the
# layer in each channel (texture.splat's base layer, then its list).
ok = ok and all("heightmap" not in f[p] for p in f if not p.startswith("height"))
want = {"splat_0.png": {"R": "grass", "G": "rock", "B": "snow", "A": "scree"},
        "splat_1.png": {"R": "river", "G": "gravel", "B": None, "A": None}}
for p, w in want.items():
    if f[p].get("channels") != w:
        print(p, f[p].get("channels"), "want", w); ok = False
ok = ok and all("channels" not in f[p] for p in f if not p.startswith("splat"))
if not ok:
    print(json.dumps(h))
sys.exit(0 if ok else 1)
PY

# A tiled build (2 x 2 tiles) stitches the same exr and manifest bytes.
run "$TGRAPH" plan "$G" --tiles 2,2 -o "$TMP/plan" --quiet
expect_rc 0 "plan 2,2"
for stage in "$TMP"/plan/stages/*.txt; do
  (cd "$TMP/plan" && TGRAPH="$TGRAPH" xargs -P 2 -d '\n' -I {} sh -c '{}' < "$stage") ||
    fail "a job of $(basename "$stage") failed"
done
run "$TGRAPH" stitch "$TMP/plan" -o "$TMP/stitched"
expect_rc 0 "stitch"
checks=$((checks + 1))
if ! diff -r "$TMP/j2" "$TMP/stitched" > "$TMP/diff" 2>&1; then
  fail "the stitched files differ from the whole build"
  sed 's/^/  | /' "$TMP/diff" | head -20 >&2
fi

finish
