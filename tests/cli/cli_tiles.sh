#!/bin/bash
# The tiles example: an island heightfield meshed in 64-cell chunks with
# two LOD levels and exported as one .glb.  Checks the build's files and
# manifest, the node count and names in the .glb (one node per chunk:
# 8 x 8 chunks x 2 levels), the same bytes for 1 and 2 threads, and the
# Khronos glTF-Validator with 0 errors and 0 warnings (skipped only
# without npm).
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
ok = ok and set(idx) == {5125}
if not ok:
    print("unexpected glb:", magic, version, length, len(d), names[:3], len(names))
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
