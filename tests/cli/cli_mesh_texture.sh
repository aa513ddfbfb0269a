#!/bin/bash
# Textured and compressed meshes through tgraph eval: a 129-sample
# terrain in 16 chunks with a colour map (texture.colorize) on export.mesh
# as glb (floats, quantize, meshopt), OBJ and PLY.  Checks:
#   - the files beside the OBJ (NAME.mtl, NAME_color.png) and the PLY's
#     PNG are written and listed in the manifest with their SHA-256, and
#     the OBJ and .mtl name them; the same bytes with 1 and 2 threads;
#   - the PNG is the colour map (the PNG of export.image of the same map)
#     and the glb embeds exactly those bytes; pngcheck reads it;
#   - every glb passes the Khronos glTF-Validator with 0 errors and 0
#     warnings (skipped without npm);
#   - a refusal that names the node when a side file clashes with another
#     export, and nothing written;
#   - Blender 3.4 (skipped when missing) imports the float and the
#     quantized glb and the OBJ with the map on their material, the same
#     vertex count, and at each corner of the terrain the UV of the corner
#     vertex looks up the colour of that corner's pixel (the map right way
#     up and not mirrored); the meshopt glb is only reported, as Blender
#     3.4 has no EXT_meshopt_compression.
. "$(dirname "$0")/lib.sh"

here="$(cd "$(dirname "$0")" && pwd)"
BLENDER="${BLENDER:-blender}"

python3 - "$TMP/g.tgraph" <<'PY'
import json, sys
nodes = [
    {"id": "base", "type": "noise.fbm", "params": {"scale_m": 400, "octaves": 5, "seed": 6}},
    {"id": "tiles", "type": "mesh.heightfield", "params": {"chunk_cells": 32, "lods": 1}},
    {"id": "color", "type": "texture.colorize", "params": {}},
    {"id": "map", "type": "export.image",
     "params": {"path": "map.png", "format": "png8", "alpha": False}},
]
links = [{"from": "base.height", "to": "tiles.height"},
         {"from": "base.height", "to": "color.height"},
         {"from": "color.image", "to": "map.image"}]
for i, (path, fmt, comp) in enumerate([("t.glb", "glb", "none"), ("q.glb", "glb", "quantize"),
                                       ("m.glb", "glb", "meshopt"), ("t.obj", "obj", "none"),
                                       ("p.ply", "ply", "none")]):
    nodes.append({"id": "out%d" % i, "type": "export.mesh",
                  "params": {"path": path, "format": fmt, "compress": comp}})
    links += [{"from": "tiles.mesh", "to": "out%d.mesh" % i},
              {"from": "color.image", "to": "out%d.image" % i}]
g = {"format": "tgraph", "version": 2,
     "world": {"size_m": [1024, 1024], "height_m": 300, "resolution": 129, "seed": 13},
     "nodes": nodes, "links": links}
json.dump(g, open(sys.argv[1], "w"), indent=1)
PY

OUT="$TMP/a"
run "$TGRAPH" eval "$TMP/g.tgraph" -o "$OUT" --threads 1 --quiet
expect_rc 0 "eval the textured meshes"
run "$TGRAPH" eval "$TMP/g.tgraph" -o "$TMP/b" --threads 2 --quiet
expect_rc 0 "eval with 2 threads"
for f in t.glb q.glb m.glb t.obj t.mtl t_color.png p.ply p_color.png map.png manifest.json; do
  expect_same "$OUT/$f" "$TMP/b/$f" "$f with 1 and 2 threads"
done

run python3 - "$OUT" <<'PY'
import hashlib, json, os, struct, sys
out = sys.argv[1]
bad = []
m = json.load(open(os.path.join(out, "manifest.json")))
listed = {f["path"]: f for f in m["files"]}
for name in ["t.glb", "q.glb", "m.glb", "t.obj", "t.mtl", "t_color.png", "p.ply", "p_color.png"]:
    f = listed.get(name)
    data = open(os.path.join(out, name), "rb").read()
    if not f:
        bad.append("manifest lacks " + name)
    elif f.get("sha256") != hashlib.sha256(data).hexdigest():
        bad.append("manifest's sha256 of %s is not the file's" % name)
obj = open(os.path.join(out, "t.obj")).read().split("\n")
if obj[1] != "mtllib t.mtl":
    bad.append("t.obj's second line is %r, want 'mtllib t.mtl'" % obj[1])
groups = sum(l.startswith("o ") for l in obj)
uses = sum(l == "usemtl terrane" for l in obj)
if groups != 16 or uses != 16:
    bad.append("t.obj has %d groups and %d usemtl lines, want 16 and 16" % (groups, uses))
mtl = open(os.path.join(out, "t.mtl")).read().split("\n")
if "newmtl terrane" not in mtl or "map_Kd t_color.png" not in mtl:
    bad.append("t.mtl lacks newmtl terrane / map_Kd t_color.png: %r" % mtl)
ply = open(os.path.join(out, "p.ply"), "rb").read(400)
if b"\ncomment TextureFile p_color.png\n" not in ply:
    bad.append("p.ply does not name p_color.png")
png = open(os.path.join(out, "t_color.png"), "rb").read()
if png != open(os.path.join(out, "map.png"), "rb").read():
    bad.append("t_color.png is not export.image's PNG of the same map")
if png != open(os.path.join(out, "p_color.png"), "rb").read():
    bad.append("p_color.png differs from t_color.png")
for name in ["t.glb", "q.glb", "m.glb"]:
    d = open(os.path.join(out, name), "rb").read()
    n = struct.unpack("<I", d[12:16])[0]
    j = json.loads(d[20:20 + n])
    binc = d[20 + n + 8:]
    img = j["images"][0]
    v = j["bufferViews"][img["bufferView"]]
    got = binc[v.get("byteOffset", 0):v.get("byteOffset", 0) + v["byteLength"]]
    if got != png or img["mimeType"] != "image/png":
        bad.append("%s does not embed t_color.png's bytes" % name)
    mat = j["materials"][0]["pbrMetallicRoughness"]
    if mat.get("baseColorTexture", {}).get("index") != 0:
        bad.append("%s: the material has no baseColorTexture" % name)
    want = {"t.glb": [], "q.glb": ["KHR_mesh_quantization"],
            "m.glb": ["KHR_mesh_quantization", "EXT_meshopt_compression"]}[name]
    if j.get("extensionsRequired", []) != want:
        bad.append("%s requires %s, want %s" % (name, j.get("extensionsRequired"), want))
sizes = [os.path.getsize(os.path.join(out, n)) for n in ["t.glb", "q.glb", "m.glb"]]
print("sizes: float %d, quantize %d, meshopt %d bytes (the PNG: %d)" % (*sizes, len(png)))
if not sizes[2] < sizes[1] < sizes[0]:
    bad.append("sizes do not shrink: %s" % sizes)
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
expect_rc 0 "files, manifest and references"
cat "$TMP/out"

if command -v pngcheck > /dev/null 2>&1; then
  run pngcheck "$OUT/t_color.png"
  expect_rc 0 "pngcheck t_color.png"
else
  echo "SKIP pngcheck: not installed"
fi

run bash "$SRC/tests/common/gltf_validate.sh" "$OUT/t.glb" "$OUT/q.glb" "$OUT/m.glb"
if [ "$rc" -eq 77 ]; then
  echo "SKIP glTF-Validator: npm missing"
else
  expect_rc 0 "glTF-Validator on t.glb, q.glb, m.glb"
  grep -F ".glb" "$TMP/out"
fi

# A tiled build (3 x 2, the jobs two at a time through xargs) stitches to
# the same files.
run "$TGRAPH" plan "$TMP/g.tgraph" --tiles 3,2 -o "$TMP/plan" --quiet
expect_rc 0 "plan 3x2"
for stage in "$TMP"/plan/stages/*.txt; do
  (cd "$TMP/plan" && TGRAPH="$TGRAPH" xargs -P 2 -d '\n' -I {} sh -c '{}' < "$stage") ||
    fail "stage $stage of the tiled build"
done
run "$TGRAPH" stitch "$TMP/plan" -o "$TMP/stitched"
expect_rc 0 "stitch 3x2"
checks=$((checks + 1))
diff -r "$OUT" "$TMP/stitched" > "$TMP/diff" 2>&1 ||
  fail "the stitched 3x2 build differs from the whole one: $(head -5 "$TMP/diff")"

# A side file that another export writes too: refused, naming the node,
# and nothing written.
sed 's/"map.png"/"t_color.png"/' "$TMP/g.tgraph" > "$TMP/clash.tgraph"
run "$TGRAPH" eval "$TMP/clash.tgraph" -o "$TMP/clash" --quiet
expect_rc 1 "a side file written twice"
expect_in "$TMP/err" '"t_color.png" is written twice' "the clash is named"
expect_in "$TMP/err" 'node "' "the clash names a node"
expect_no_files "$TMP/clash" "nothing written after the clash"

# --- Blender ---------------------------------------------------------------------
if [ "${TG_NO_BLENDER:-0}" = 1 ] || ! command -v "$BLENDER" > /dev/null 2>&1; then
  echo "SKIP blender: not available (or TG_NO_BLENDER=1)"
  finish
fi
cat > "$TMP/bl.py" <<'PY'
import bpy, sys
import numpy as np
# Blender 3.4's glTF importer uses np.bool, which NumPy 1.24 removed.
if not hasattr(np, "bool"):
    np.bool = bool
args = sys.argv[sys.argv.index("--") + 1:]
for path in args:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    try:
        if path.endswith(".obj"):
            bpy.ops.wm.obj_import(filepath=path)
        else:
            bpy.ops.import_scene.gltf(filepath=path)
    except Exception as e:
        print("RESULT %s error %s" % (path, str(e).replace("\n", " ")[:200]))
        continue
    bpy.context.view_layer.update()
    verts, corners, images = 0, {}, set()
    for ob in bpy.context.scene.objects:
        if ob.type != "MESH":
            continue
        me = ob.data
        verts += len(me.vertices)
        img = None
        for slot in ob.material_slots:
            if slot.material and slot.material.use_nodes:
                for n in slot.material.node_tree.nodes:
                    if n.type == "TEX_IMAGE" and n.image:
                        img = n.image
        if img is None:
            continue
        images.add((img.size[0], img.size[1]))
        w, h = img.size
        px = img.pixels[:]
        uvl = me.uv_layers.active.data
        # Blender is Z-up, north +Y: corner (sx, sy) is the vertex with the
        # largest sx * x + sy * y.
        for loop in me.loops:
            co = ob.matrix_world @ me.vertices[loop.vertex_index].co
            u, v = uvl[loop.index].uv
            i = min(w - 1, max(0, round(u * (w - 1))))
            j = min(h - 1, max(0, round(v * (h - 1))))
            rgb = tuple(round(px[4 * (j * w + i) + c] * 255) for c in range(3))
            for name, sx, sy in (("nw", -1, 1), ("ne", 1, 1), ("sw", -1, -1), ("se", 1, -1)):
                score = sx * co.x + sy * co.y
                if name not in corners or score > corners[name][0]:
                    corners[name] = (score, rgb)
    print("RESULT %s verts %d images %s %s" % (path, verts, sorted(images),
          " ".join("%s=%d,%d,%d" % ((k,) + corners[k][1]) for k in sorted(corners))))
PY
run timeout 300 "$BLENDER" -b --factory-startup -noaudio --python "$TMP/bl.py" -- \
  "$OUT/t.glb" "$OUT/q.glb" "$OUT/m.glb" "$OUT/t.obj"
expect_rc 0 "blender ran"
grep '^RESULT' "$TMP/out" > "$TMP/bl.txt"
cat "$TMP/bl.txt"
run python3 - "$TMP/bl.txt" "$OUT" <<'PY'
import struct, sys, zlib
lines = {l.split()[1]: l.split()[2:] for l in open(sys.argv[1])}
out = sys.argv[2]

def png_rgb(path):
    d = open(path, "rb").read()
    pos, idat = 8, b""
    while pos < len(d):
        n, t = struct.unpack(">I4s", d[pos:pos + 8])
        if t == b"IHDR":
            w, h, bits, ctype = struct.unpack(">IIBB", d[pos + 8:pos + 18])
        elif t == b"IDAT":
            idat += d[pos + 8:pos + 8 + n]
        pos += 12 + n
    assert bits == 8 and ctype == 2
    raw, stride, rows, prev, p = zlib.decompress(idat), 3 * w, [], bytearray(3 * w), 0
    for _ in range(h):
        f, row = raw[p], bytearray(raw[p + 1:p + 1 + stride])
        p += 1 + stride
        for i in range(stride):
            a = row[i - 3] if i >= 3 else 0
            b, c = prev[i], prev[i - 3] if i >= 3 else 0
            if f == 1: row[i] = (row[i] + a) & 255
            elif f == 2: row[i] = (row[i] + b) & 255
            elif f == 3: row[i] = (row[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else (b if pb <= pc else c))) & 255
        rows.append(row)
        prev = row
    return w, h, rows

w, h, rows = png_rgb(out + "/t_color.png")
px = lambda x, y: "%d,%d,%d" % tuple(rows[y][3 * x:3 * x + 3])
want = {"nw": px(0, 0), "ne": px(w - 1, 0), "sw": px(0, h - 1), "se": px(w - 1, h - 1)}
bad = []
if len(set(want.values())) != 4:
    bad.append("the map's four corners are not four colours: %s" % want)
for name in ("t.glb", "q.glb", "t.obj"):
    r = lines.get(out + "/" + name)
    if not r or r[0] != "verts":
        bad.append("blender could not import %s: %s" % (name, r))
        continue
    if r[1] != "17424":
        bad.append("%s: blender has %s vertices, want the file's 17424" % (name, r[1]))
    if "(%d, %d)" % (w, h) not in " ".join(r):
        bad.append("%s: no %dx%d image on the material: %s" % (name, w, h, r))
    got = dict(kv.split("=") for kv in r if "=" in kv)
    for k in want:
        if got.get(k) != want[k]:
            bad.append("%s: corner %s looks up %s, the map has %s there" % (name, k, got.get(k), want[k]))
    if not bad:
        print("ok: blender imports %s with the map right way up" % name)
r = lines.get(out + "/m.glb")
print("note: Blender on the meshopt glb: %s" % " ".join(r or ["nothing"]))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
PY
expect_rc 0 "blender imports with the texture right way up"
cat "$TMP/out"
finish
