#!/bin/bash
# The arch example: a rock iso-surface meshed in 32-cell chunks with two
# levels of detail.  Checks, in the .glb itself: one node per chunk and
# level named iso_x<i>_y<j>_z<k>_lod<l>, the scene showing the lod0 chunks
# only, each naming its coarser chunk with MSFT_lod; 16-bit indices in
# every chunk (the whole rock would need 32); the lod0 chunks merged by
# position close up (every edge used as often each way: the example cuts
# its ground with a box a little inside the mesh's, so the block is closed
# on every side, not open where the box cuts the ground with the skirts
# showing through); the coarser level has far fewer triangles; the same
# bytes on 1 thread and on all; and the Khronos glTF-Validator with 0
# errors and 0 warnings (skipped only without npm).
. "$(dirname "$0")/lib.sh"

run "$TGRAPH" eval "$EXAMPLES/arch.tgraph" -o "$TMP/build" --quiet
expect_rc 0 "tgraph eval arch.tgraph"
run "$TGRAPH" eval "$EXAMPLES/arch.tgraph" -o "$TMP/build1" --threads 1 --quiet
expect_rc 0 "tgraph eval arch.tgraph --threads 1"
expect_same "$TMP/build/arch.glb" "$TMP/build1/arch.glb" "arch.glb on 1 thread and on all"

checks=$((checks + 1))
python3 - "$TMP/build/arch.glb" <<'PY' || fail "arch.glb chunks and levels (see above)"
import json, re, struct, sys
from collections import Counter
d = open(sys.argv[1], "rb").read()
jlen = struct.unpack_from("<I", d, 12)[0]
doc = json.loads(d[20:20 + jlen])
blen = struct.unpack_from("<I", d, 20 + jlen)[0]
binc = d[28 + jlen:28 + jlen + blen]
ok = True
def bad(msg):
    global ok
    print(msg)
    ok = False

def read(acc_i):
    a = doc["accessors"][acc_i]
    v = doc["bufferViews"][a["bufferView"]]
    fmt = {5123: "H", 5125: "I", 5126: "f"}[a["componentType"]]
    n = a["count"] * {"SCALAR": 1, "VEC3": 3}[a["type"]]
    return struct.unpack_from("<%d%s" % (n, fmt), binc, v.get("byteOffset", 0) + a.get("byteOffset", 0))

nodes = doc["nodes"]
names = [n["name"] for n in nodes]
pat = re.compile(r"^iso_x(-?\d+)_y(-?\d+)_z(-?\d+)_lod([01])$")
level = {}
for i, name in enumerate(names):
    m = pat.match(name)
    if not m:
        bad("node %d is named %r" % (i, name))
        continue
    level[i] = int(m.group(4))
lod0 = [i for i in level if level[i] == 0]
lod1 = [i for i in level if level[i] == 1]
if len(lod0) < 40 or len(lod1) != len(lod0):
    bad("%d lod0 and %d lod1 chunks" % (len(lod0), len(lod1)))
if sorted(doc["scenes"][doc.get("scene", 0)]["nodes"]) != sorted(lod0):
    bad("the scene is not the lod0 chunks")
for i in lod0:
    ids = nodes[i].get("extensions", {}).get("MSFT_lod", {}).get("ids")
    if ids is None or len(ids) != 1 or names[ids[0]] != names[i][:-1] + "1":
        bad("%s: MSFT_lod ids %s" % (names[i], ids))
types = Counter(doc["accessors"][m["primitives"][0]["indices"]]["componentType"] for m in doc["meshes"])
if set(types) != {5123}:
    bad("index types %s: every chunk should fit 16 bits" % dict(types))

# lod0 merged by position: every edge used as often each way.
vid, edges, tris, verts = {}, Counter(), [0, 0], [0, 0]
for i in level:
    prim = doc["meshes"][nodes[i]["mesh"]]["primitives"][0]
    pos = read(prim["attributes"]["POSITION"])
    idx = read(prim["indices"])
    tris[level[i]] += len(idx) // 3
    verts[level[i]] += len(pos) // 3
    if level[i] != 0:
        continue
    ids = [vid.setdefault(tuple(pos[3 * v:3 * v + 3]), len(vid)) for v in range(len(pos) // 3)]
    for t in range(0, len(idx), 3):
        a, b, c = (ids[idx[t + k]] for k in range(3))
        for p, q in ((a, b), (b, c), (c, a)):
            edges[(p, q)] += 1
# Skirts hang from both sides of a chunk face, the same quads wound both
# ways: they pair up too.
unpaired = sum(1 for (p, q), n in edges.items() if edges.get((q, p), 0) != n)
print("lod0: %d vertices welded from %d, %d triangles; lod1: %d vertices, %d triangles"
      % (len(vid), verts[0], tris[0], verts[1], tris[1]))
if unpaired or not edges:
    bad("%d of %d edges of the lod0 chunks are not used as often each way" % (unpaired, len(edges)))
if not tris[1] * 2 < tris[0]:
    bad("lod1 has %d triangles, lod0 %d" % (tris[1], tris[0]))
sys.exit(0 if ok else 1)
PY

run bash "$SRC/tests/common/gltf_validate.sh" "$TMP/build/arch.glb"
if [ "$rc" -ne 77 ]; then
  expect_rc 0 "glTF-Validator on arch.glb"
  expect_in "$TMP/out" "0 errors, 0 warnings" "glTF-Validator summary"
fi

finish
