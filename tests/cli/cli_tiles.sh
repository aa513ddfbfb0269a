#!/bin/bash
# The tiles example: an island heightfield meshed in 64-cell chunks with
# two LOD levels and exported as one .glb.  Checks the build's files and
# manifest, the node count and names in the .glb (one node per chunk:
# 8 x 8 chunks x 2 levels, the coarser level of each chunk named by its
# full-resolution node's MSFT_lod and left out of the scene), that the .glb is not mirrored against the
# heightmap (the highest vertex sits where the heightmap's highest sample
# is, with north = -Z as right-handed glTF wants, and front faces agree
# with the normals), the same bytes for 1 and 2 threads, and the Khronos
# glTF-Validator with 0 errors and 0 warnings (skipped only without npm).
. "$(dirname "$0")/lib.sh"

run "$TGRAPH" eval "$EXAMPLES/tiles.tgraph" -o "$TMP/build"
expect_rc 0 "tgraph eval tiles.tgraph"
expect_in "$TMP/out" "tiles.glb" "the build lists tiles.glb"
checks=$((checks + 1))
[ -s "$TMP/build/tiles.glb" ] || fail "tiles.glb was not written"
expect_in "$TMP/build/manifest.json" '"format": "glb"' "the manifest records the glb"

checks=$((checks + 1))
python3 - "$TMP/build/tiles.glb" <<'PY' || fail "tiles.glb structure (see above)"
import json, struct, sys
d = open(sys.argv[1], "rb").read()
magic, version, length = struct.unpack("<4sII", d[:12])
jlen, jtype = struct.unpack("<I4s", d[12:20])
doc = json.loads(d[20:20 + jlen])
ok = magic == b"glTF" and version == 2 and length == len(d) and jtype == b"JSON"
names = [n["name"] for n in doc["nodes"]]
want = ["chunk_x%d_z%d_lod%d" % (x, z, l) for l in range(2) for z in range(8) for x in range(8)]
ok = ok and names == want
ok = ok and doc["asset"]["generator"].startswith("Terrane ")
acc = doc["accessors"]
pos = [acc[m["primitives"][0]["attributes"]["POSITION"]] for m in doc["meshes"]]
# The world is 2048 m centred on the origin.
ok = ok and min(p["min"][0] for p in pos) == -1024 and max(p["max"][0] for p in pos) == 1024
ok = ok and min(p["min"][2] for p in pos) == -1024 and max(p["max"][2] for p in pos) == 1024
idx = [acc[m["primitives"][0]["indices"]]["componentType"] for m in doc["meshes"]]
# Every chunk has fewer than 65536 vertices: 16-bit indices.
ok = ok and set(idx) == {5123}
if not ok:
    print("unexpected glb:", magic, version, length, len(d), names[:3], len(names))
# Levels of detail (MSFT_lod): the scene shows the 64 full-resolution
# chunks, each naming its own coarser chunk, with screen coverages.
scene = doc["scenes"][doc["scene"]]["nodes"]
if sorted(scene) != list(range(64)):
    print("the scene is not the 64 lod0 chunks:", scene[:5], len(scene)); ok = False
if "MSFT_lod" not in doc.get("extensionsUsed", []) or "extensionsRequired" in doc:
    print("MSFT_lod should be used, nothing required:", doc.get("extensionsUsed")); ok = False
for i in range(64):
    n = doc["nodes"][i]
    ids = n.get("extensions", {}).get("MSFT_lod", {}).get("ids")
    cov = n.get("extras", {}).get("MSFT_screencoverage")
    if ids != [64 + i] or names[64 + i] != names[i].replace("_lod0", "_lod1"):
        print("%s: MSFT_lod ids %s" % (names[i], ids)); ok = False; break
    if cov != [0.25, 0.0625]:
        print("%s: screen coverage %s" % (names[i], cov)); ok = False; break
sys.exit(0 if ok else 1)
PY

# The same graph with the mesh's input also exported as float heights
# (r32, row 0 = north): the highest sample at column c, row r is world
# (x, z) = (-1024 + 4c, 1024 - 4r), so glTF (x, z) = (-1024 + 4c, 4r - 1024).
mkdir -p "$TMP/hm"
python3 - "$EXAMPLES/tiles.tgraph" "$TMP/hm/tiles.tgraph" <<'PY' || fail "could not extend tiles.tgraph"
import json, sys
g = json.load(open(sys.argv[1]))
g["nodes"].append({"id": "hm", "type": "export.heightmap",
                   "params": {"path": "height.r32", "format": "r32"}})
g["links"].append({"from": "profile.height", "to": "hm.height"})
json.dump(g, open(sys.argv[2], "w"), indent=2)
PY
run "$TGRAPH" eval "$TMP/hm/tiles.tgraph" -o "$TMP/hmbuild"
expect_rc 0 "tgraph eval tiles.tgraph with a heightmap export"
expect_same "$TMP/build/tiles.glb" "$TMP/hmbuild/tiles.glb" "tiles.glb with and without the heightmap"
checks=$((checks + 1))
python3 - "$TMP/hmbuild/tiles.glb" "$TMP/hmbuild/height.r32" <<'PY' || fail "tiles.glb orientation (see above)"
import json, struct, sys
d = open(sys.argv[1], "rb").read()
jlen = struct.unpack_from("<I", d, 12)[0]
doc = json.loads(d[20:20 + jlen])
bin0 = 20 + jlen + 8
h = struct.unpack("<%df" % (513 * 513), open(sys.argv[2], "rb").read())
hmax = max(h)
k = h.index(hmax)
col, row = k % 513, k // 513

def acc(i):
    a = doc["accessors"][i]
    v = doc["bufferViews"][a["bufferView"]]
    n = {"SCALAR": 1, "VEC3": 3}[a["type"]]
    fmt = "<%d%s" % (a["count"] * n, {5126: "f", 5125: "I", 5123: "H"}[a["componentType"]])
    flat = struct.unpack_from(fmt, d, bin0 + v.get("byteOffset", 0))
    return [flat[i:i + n] for i in range(0, len(flat), n)] if n > 1 else flat

top, top_mesh = None, None
for mi, m in enumerate(doc["meshes"]):
    if not m["name"].endswith("lod0"):
        continue
    for p in acc(m["primitives"][0]["attributes"]["POSITION"]):
        if top is None or p[1] > top[1]:
            top, top_mesh = p, mi
ok = True
# The highest vertex lies over a highest sample of the heightmap, in the
# glTF frame: x = -1024 + 4c, z = 4r - 1024 (a mirrored file has z = 1024 - 4r).
c, r = (top[0] + 1024) / 4, (top[2] + 1024) / 4
if c != int(c) or r != int(r) or h[int(r) * 513 + int(c)] != hmax or abs(top[1] - 400 * hmax) > 1e-3:
    print("highest vertex", top, "but the heightmap's highest sample is column %d, row %d"
          " (%g): expected x = %g, z = %g" % (col, row, hmax, -1024 + 4 * col, 4 * row - 1024))
    ok = False
# Front faces (counter-clockwise, right-handed) in the chunk holding the
# top: every terrain triangle faces up (skirts are vertical), and its
# corners' normals agree with it (but for a few on the sharpest ridges).
prim = doc["meshes"][top_mesh]["primitives"][0]
pos = acc(prim["attributes"]["POSITION"])
nrm = acc(prim["attributes"]["NORMAL"])
idx = acc(prim["indices"])
down = bad = corners = 0
for t in range(0, len(idx), 3):
    a, b, cc = pos[idx[t]], pos[idx[t + 1]], pos[idx[t + 2]]
    e1 = [b[i] - a[i] for i in range(3)]
    e2 = [cc[i] - a[i] for i in range(3)]
    n = (e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0])
    if n[1] == 0:
        continue  # vertical: a skirt
    down += n[1] < 0
    for v in idx[t:t + 3]:
        corners += 1
        bad += sum(n[i] * nrm[v][i] for i in range(3)) <= 0
if down or bad > corners // 100:
    print("%d terrain triangles face down; %d of %d corners disagree with their normal"
          % (down, bad, corners))
    ok = False
sys.exit(0 if ok else 1)
PY

run "$TGRAPH" eval --threads 1 "$EXAMPLES/tiles.tgraph" -o "$TMP/build1"
expect_rc 0 "tgraph eval --threads 1"
expect_same "$TMP/build/tiles.glb" "$TMP/build1/tiles.glb" "tiles.glb on 1 thread and on all"

run bash "$SRC/tests/common/gltf_validate.sh" "$TMP/build/tiles.glb"
if [ "$rc" -ne 77 ]; then
  expect_rc 0 "glTF-Validator on tiles.glb"
  expect_in "$TMP/out" "0 errors, 0 warnings" "glTF-Validator summary"
fi

finish
