#!/bin/bash
# The forest example: a painted distribution map (trees green, grass red,
# rocks blue, nothing black) scattered over an eroded terrain and exported
# as csv, glb and a Godot scene, in 512 m chunks.  Checks what each file
# holds, that chunking keeps every instance once in the chunk holding it in
# the list's order (against the same graph with chunk_m 0), the manifest's
# frame, origin and chunk grid per instance file, that the
# glb and the Godot scene hold the csv's instances in their right-handed
# frame (z = -north, rotations R' = M R M: not mirrored), the same bytes
# for 1 and 4 threads, the Khronos glTF-Validator on the glb (npm,
# installed on first use; only that check is skipped without npm), a
# prototype mesh read from our own glb and written back unchanged, the
# instances in Unreal's, Blender's and Houdini's frames from the terrain's
# corner, and a failing scatter that names the node and writes nothing.
. "$(dirname "$0")/lib.sh"

here="$(cd "$(dirname "$0")" && pwd)"

graph="$EXAMPLES/forest.tgraph"

run "$TGRAPH" eval "$graph" -o "$TMP/a" -j 1
expect_rc 0 "eval forest on one thread"
for f in forest/instances.csv forest/instances.glb forest/instances.tscn forest/height.png \
         manifest.json; do
  [ -s "$TMP/a/$f" ] || fail "eval did not write $f"
done

# --- csv: the exact header, then one row of 12 fields per instance ---------
csv="$TMP/a/forest/instances.csv"
checks=$((checks + 1))
[ "$(head -n 1 "$csv")" = "prototype,px,py,pz,qx,qy,qz,qw,sx,sy,sz,chunk" ] ||
  fail "csv header: $(head -n 1 "$csv")"
checks=$((checks + 1))
bad=$(tail -n +2 "$csv" | awk -F, 'NF != 12' | head -n 3)
[ -z "$bad" ] || fail "csv rows without 12 fields: $bad"
# Every kind placed, plenty of each; instances inside the 2048 m world,
# with unit yaw quaternions and scales in the configured ranges.
for kind in tree grass rock; do
  n=$(tail -n +2 "$csv" | grep -c "^$kind,")
  checks=$((checks + 1))
  [ "$n" -gt 1000 ] || fail "only $n $kind instances"
done
checks=$((checks + 1))
bad=$(tail -n +2 "$csv" | awk -F, '
  $2 < -1024 || $2 > 1024 || $4 < -1024 || $4 > 1024 { print "outside: " $0; exit }
  { q = $5*$5 + $6*$6 + $7*$7 + $8*$8; if (q < 0.999 || q > 1.001 || $5 != 0 || $7 != 0) { print "quaternion: " $0; exit } }
  $1 == "tree" && ($9 < 0.8 || $9 > 1.3) { print "tree scale: " $0; exit }
  ($1 == "grass" || $1 == "rock") && ($9 < 0.6 || $9 > 1.4) { print "ground scale: " $0; exit }')
[ -z "$bad" ] || fail "csv: $bad"
# The map paints the forest in the north (+Z): most trees lie there, and
# the meadows in the south-west.
checks=$((checks + 1))
north=$(awk -F, '$1 == "tree" && $4 > 0' "$csv" | wc -l)
south=$(awk -F, '$1 == "tree" && $4 <= 0' "$csv" | wc -l)
[ "$north" -gt $((10 * south)) ] || fail "trees: $north north vs $south south"
checks=$((checks + 1))
sw=$(awk -F, '$1 == "grass" && $2 < 0 && $4 < 0' "$csv" | wc -l)
ne=$(awk -F, '$1 == "grass" && $2 > 0 && $4 > 0' "$csv" | wc -l)
[ "$sw" -gt $((3 * ne)) ] || fail "grass: $sw south-west vs $ne north-east"

# --- godot: a Node3D per chunk holding a MultiMeshInstance3D per kind ----
# (a material and a mesh per kind, a MultiMesh per chunk and kind: the
# load steps), transform_format first.
tscn="$TMP/a/forest/instances.tscn"
groups=$(tail -n +2 "$csv" | awk -F, '{ print $12, $1 }' | sort -u | wc -l)
expect_in "$tscn" "[gd_scene load_steps=$((2 * 3 + groups + 1)) format=3]" "godot header"
for kind in tree grass rock; do
  checks=$((checks + 1))
  grep -Eq "^\[node name=\"$kind\" type=\"MultiMeshInstance3D\" parent=\"chunk_x[0-9]+_z[0-9]+\"\]$" "$tscn" ||
    fail "godot: no $kind node in a chunk"
done
expect_in "$tscn" "[node name=\"chunk_x1_z1\" type=\"Node3D\" parent=\".\"]" "godot chunk node"
checks=$((checks + 1))
bad=$(awk -v csv="$csv" -v groups="$groups" '
  BEGIN { while ((getline l < csv) > 0) if (l !~ /^prototype,/) { split(l, f, ","); want[f[1]]++ } }
  /^\[sub_resource type="MultiMesh"/ { mm++; tf = 0; ic = -1; next }
  /^transform_format = 1$/ { if (ic >= 0) { print "instance_count before transform_format"; exit } tf = 1 }
  /^instance_count = / { if (!tf) { print "no transform_format before instance_count"; exit } ic = $3 }
  /^buffer = PackedFloat32Array\(/ { n = gsub(/,/, ","); if (ic > 0 && n + 1 != 12 * ic) { print "buffer has " n + 1 " floats for " ic " instances"; exit } total += ic }
  END { if (mm != groups) print mm " MultiMeshes for " groups " chunks and kinds"; if (total != want["tree"] + want["grass"] + want["rock"]) print "instance counts " total }' "$tscn")
[ -z "$bad" ] || fail "godot: $bad"

# The scene's structure as Godot 4's loader needs it (no Godot 4 here; the
# Godot 3 of Debian reads format=2 scenes only), chunked and as one list
# (the latter checked further down).
checks=$((checks + 1))
python3 "$here/cli_forest_tscn.py" "$tscn" || fail "godot scene structure (see above)"

# --- glb and godot: the csv's instances (world) in the right-handed frame ----
# CSV is in world coordinates (z = north); the glb's EXT_mesh_gpu_instancing
# and the Godot buffers must hold (x, y, -z), quaternion (-x, -y, z, w) and
# the matrix M R(q) diag(s) M with M = diag (1, 1, -1), in the csv's order
# per chunk and prototype (glb node chunk_x<cx>_z<cz>_<kind>, Godot node
# chunk_x<cx>_z<cz>/<kind>); most trees (north in the world) then lie at -Z.
checks=$((checks + 1))
python3 - "$csv" "$TMP/a/forest/instances.glb" "$tscn" <<'PY' || fail "instances in the glb / tscn frame (see above)"
import csv, json, math, re, struct, sys
f32 = lambda v: struct.unpack("<f", struct.pack("<f", float(v)))[0]
rows = list(csv.reader(open(sys.argv[1])))[1:]
by = {}
trees = 0
for r in rows:
    by.setdefault(r[11] + "_" + r[0], []).append([f32(v) for v in r[1:11]])
    trees += r[0] == "tree"
if len(by) < 3 * 8:
    print("only %d chunks and kinds" % len(by))
    sys.exit(1)
d = open(sys.argv[2], "rb").read()
jlen = struct.unpack_from("<I", d, 12)[0]
doc = json.loads(d[20:20 + jlen])
bin0 = 20 + jlen + 8
def acc(i, n):
    a = doc["accessors"][i]
    v = doc["bufferViews"][a["bufferView"]]
    flat = struct.unpack_from("<%df" % (a["count"] * n), d, bin0 + v.get("byteOffset", 0))
    return [flat[k:k + n] for k in range(0, len(flat), n)]
bad = []
north = 0
for node in doc["nodes"]:
    ext = node.get("extensions", {}).get("EXT_mesh_gpu_instancing")
    if not ext:
        continue
    want = by.pop(node["name"], [])
    t = acc(ext["attributes"]["TRANSLATION"], 3)
    q = acc(ext["attributes"]["ROTATION"], 4)
    if len(t) != len(want):
        bad.append("%s: %d instances, csv has %d" % (node["name"], len(t), len(want)))
        continue
    for i, w in enumerate(want):
        if t[i] != (w[0], w[1], -w[2]):
            bad.append("%s %d: translation %s for csv %s" % (node["name"], i, t[i], w[:3]))
        wq = (-w[3], -w[4], w[5], w[6])
        if max(abs(a - b) for a, b in zip(q[i], wq)) > 1e-6:
            bad.append("%s %d: rotation %s for csv %s" % (node["name"], i, q[i], w[3:7]))
        if node["name"].endswith("_tree"):
            north += t[i][2] < 0
if by:
    bad.append("no glb node for %s" % sorted(by)[:3])
if north < 0.9 * trees:
    bad.append("only %d of %d trees at -Z (north)" % (north, trees))
by = {}
for r in rows:
    by.setdefault(r[11] + "/" + r[0], []).append([f32(v) for v in r[1:11]])
text = open(sys.argv[3]).read()
nodes = re.findall(r'\[node name="([^"]+)" type="MultiMeshInstance3D" parent="([^"]+)"\]\n'
                   r'multimesh = SubResource\("MultiMesh_(\d+)"\)', text)
if len(nodes) != len(by):
    bad.append("%d MultiMeshInstance3D for %d chunks and kinds" % (len(nodes), len(by)))
for kind, chunk, k in nodes:
    name = chunk + "/" + kind
    sec = text[text.index('id="MultiMesh_%s"' % k):]
    buf = [float(v) for v in re.search(r"buffer = PackedFloat32Array\(([^)]*)\)", sec).group(1).split(",")]
    if len(buf) != 12 * len(by.get(name, [])):
        bad.append("%s: %d floats for %d instances" % (name, len(buf), len(by.get(name, []))))
        continue
    for i, w in enumerate(by[name]):
        x, y, z, qw = w[3], w[4], w[5], w[6]
        r = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * qw), 2 * (x * z + y * qw)],
             [2 * (x * y + z * qw), 1 - 2 * (x * x + z * z), 2 * (y * z - x * qw)],
             [2 * (x * z - y * qw), 2 * (y * z + x * qw), 1 - 2 * (x * x + y * y)]]
        m = [1, 1, -1]
        for row in range(3):
            for col in range(3):
                want = m[row] * r[row][col] * w[7 + col] * m[col]
                if abs(buf[12 * i + 4 * row + col] - want) > 1e-5:
                    bad.append("%s %d: basis[%d][%d] %g, want %g" % (name, i, row, col, buf[12 * i + 4 * row + col], want))
            if abs(buf[12 * i + 4 * row + 3] - m[row] * w[row]) > 1e-3:
                bad.append("%s %d: origin[%d] %g, want %g" % (name, i, row, buf[12 * i + 4 * row + 3], m[row] * w[row]))
for b in bad[:5]:
    print(b)
sys.exit(1 if bad else 0)
PY

# --- the same bytes on four threads ----------------------------------------
run "$TGRAPH" eval "$graph" -o "$TMP/b" -j 4
expect_rc 0 "eval forest on four threads"
for f in forest/instances.csv forest/instances.glb forest/instances.tscn; do
  expect_same "$TMP/a/$f" "$TMP/b/$f" "$f for 1 and 4 threads"
done

# --- chunks: the same instances as one list -----------------------------------
# The same graph with chunk_m 0: the files of before chunking.  Every
# format holds the one list's instances, each once, filed under the 512 m
# chunk (anchored at the north-west corner, x from the west, z from the
# north; a line between chunks belongs to the chunk east or south of it)
# that holds it, chunks north-west first, the list's order inside each.
run "$TGRAPH" eval "$graph" -o "$TMP/one" --set csv.chunk_m=0 --set glb.chunk_m=0 \
  --set godot.chunk_m=0 -j 2
expect_rc 0 "eval forest as one list"
checks=$((checks + 1))
python3 "$here/cli_forest_tscn.py" "$TMP/one/forest/instances.tscn" ||
  fail "one-list godot scene structure (see above)"
checks=$((checks + 1))
[ "$(head -n 1 "$TMP/one/forest/instances.csv")" = "prototype,px,py,pz,qx,qy,qz,qw,sx,sy,sz" ] ||
  fail "chunk_m 0 csv header: $(head -n 1 "$TMP/one/forest/instances.csv")"
checks=$((checks + 1))
python3 - "$TMP/one/forest/instances.csv" "$csv" "$TMP/a/forest/instances.glb" \
  "$TMP/one/forest/instances.glb" <<'PY' || fail "chunked instances against one list (see above)"
import csv, json, math, struct, sys
one = [tuple(r) for r in list(csv.reader(open(sys.argv[1])))[1:]]
chunked = list(csv.reader(open(sys.argv[2])))[1:]
index = {r: i for i, r in enumerate(one)}
bad = []
if len(index) != len(one):
    bad.append("instances not unique in the one list")
def chunk_of(x, z):
    cx = min(max(math.floor((x + 1024) / 512), 0), 3)
    cz = min(max(math.floor((1024 - z) / 512), 0), 3)
    return "chunk_x%d_z%d" % (cx, cz)
seen, last, order, names = set(), {}, [], []
for r in chunked:
    i = index.get(tuple(r[:11]))
    if i is None:
        bad.append("chunked row %s is not in the one list" % r)
        continue
    seen.add(i)
    want = chunk_of(float(r[1]), float(r[3]))
    if r[11] != want:
        bad.append("instance %d at x %s z %s in %s, not %s" % (i, r[1], r[3], r[11], want))
    if r[11] in last and last[r[11]] > i:
        bad.append("%s: instance %d after %d" % (r[11], i, last[r[11]]))
    if not names or names[-1] != r[11]:
        names.append(r[11])
    last[r[11]] = i
if len(seen) != len(one) or len(chunked) != len(one):
    bad.append("%d chunked rows, %d distinct, for %d instances" % (len(chunked), len(seen), len(one)))
key = lambda n: tuple(int(v) for v in n[len("chunk_x"):].split("_z"))[::-1]
if names != sorted(set(names), key=key):
    bad.append("chunks not each in one run, north-west first: %s" % names[:8])
if len(names) < 8:
    bad.append("only %d chunks" % len(names))
# The glb: the same translations, chunk by chunk, as the one-list glb's.
def instances(path):
    d = open(path, "rb").read()
    jlen = struct.unpack_from("<I", d, 12)[0]
    doc = json.loads(d[20:20 + jlen])
    out = {}
    for node in doc["nodes"]:
        ext = node.get("extensions", {}).get("EXT_mesh_gpu_instancing")
        if not ext:
            continue
        a = doc["accessors"][ext["attributes"]["TRANSLATION"]]
        v = doc["bufferViews"][a["bufferView"]]
        flat = struct.unpack_from("<%df" % (3 * a["count"]), d, 20 + jlen + 8 + v.get("byteOffset", 0))
        out[node["name"]] = [flat[k:k + 3] for k in range(0, len(flat), 3)]
    return doc, out
doc, got = instances(sys.argv[3])
_, whole = instances(sys.argv[4])
root = [n for n in doc["nodes"] if n.get("name") == "instances"][0]
kids = [doc["nodes"][c]["name"] for c in root["children"]]
if kids != names:
    bad.append("glb chunk nodes %s, csv chunks %s" % (kids[:4], names[:4]))
for kind, ts in whole.items():
    mine = sorted((n, t) for n, t in got.items() if n.endswith("_" + kind))
    if sorted(t for _, ts2 in mine for t in ts2) != sorted(ts):
        bad.append("glb %s: not the one list's instances" % kind)
    for n, ts2 in mine:
        pos = {t: i for i, t in enumerate(ts)}
        idx = [pos.get(t, -1) for t in ts2]
        if idx != sorted(idx) or -1 in idx:
            bad.append("glb %s: not in list order" % n)
        if any(chunk_of(t[0], -t[2]) + "_" + kind != n for t in ts2):
            bad.append("glb %s: an instance outside its chunk" % n)
print("%d instances in %d chunks" % (len(one), len(names)))
for b in bad[:6]:
    print(b)
sys.exit(1 if bad else 0)
PY

# --- the manifest: each instance file's frame, origin and chunk grid --------
checks=$((checks + 1))
python3 - "$TMP/a/manifest.json" "$TMP/one/manifest.json" <<'PY' || fail "manifest instances (see above)"
import json, sys
files = {f["path"]: f for f in json.load(open(sys.argv[1]))["files"]}
one = {f["path"]: f for f in json.load(open(sys.argv[2]))["files"]}
grid = {"size_m": 512, "anchor": "north-west corner", "anchor_world_m": [-1024, 1024],
        "count": [4, 4], "names": "chunk_x<cx>_z<cz>, cx from the west, cz from the north"}
want = {
    "forest/instances.csv": {"frame": "unity", "handedness": "left", "east": "+X", "up": "+Y",
                             "north": "+Z", "units": "m", "origin": "centre",
                             "origin_world_m": [0, 0], "rotation": "quaternion_xyzw"},
    "forest/instances.glb": {"frame": "gltf", "handedness": "right", "east": "+X", "up": "+Y",
                             "north": "-Z", "units": "m", "origin": "centre",
                             "origin_world_m": [0, 0], "rotation": "quaternion_xyzw"},
    "forest/instances.tscn": {"frame": "godot", "handedness": "right", "east": "+X", "up": "+Y",
                              "north": "-Z", "units": "m", "origin": "centre",
                              "origin_world_m": [0, 0], "rotation": "basis_3x4"},
}
bad = []
for path, w in want.items():
    if files[path].get("instances") != dict(w, chunks=grid):
        bad.append("%s: %s" % (path, files[path].get("instances")))
    if one[path].get("instances") != w:
        bad.append("one list %s: %s" % (path, one[path].get("instances")))
if "instances" in files["forest/height.png"]:
    bad.append("the heightmap has an instances entry")
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY

# --- glb: the Khronos validator, no errors and no warnings ------------------
bash "$SRC/tests/common/gltf_validate.sh" "$TMP/a/forest/instances.glb" > "$TMP/val" 2>&1
vrc=$?
if [ "$vrc" -eq 77 ]; then
  echo "node/npm not installed: glTF-Validator not run"
else
  checks=$((checks + 1))
  [ "$vrc" -eq 0 ] || fail "glTF-Validator: $(cat "$TMP/val")"
fi
expect_in "$TMP/a/forest/instances.glb" "EXT_mesh_gpu_instancing" "glb uses GPU instancing"

# --- a prototype mesh read from a .glb ----------------------------------------
# The one-list markers file serves as the trees' mesh: its three cones
# become three primitives of the tree mesh, shared by every chunk.
mkdir -p "$TMP/g"
cp "$graph" "$EXAMPLES/forest_paint.png" "$TMP/g/"
cp "$TMP/one/forest/instances.glb" "$TMP/g/tree.glb"
run "$TGRAPH" eval "$TMP/g/forest.tgraph" -o "$TMP/d" --set 'glb.meshes=prototype=tree|path=tree.glb'
expect_rc 0 "eval with a prototype mesh"
checks=$((checks + 1))
got=$(python3 - "$TMP/d/forest/instances.glb" <<'PY'
import json, struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<I", d, 12)[0]
g = json.loads(d[20:20 + n])
for node in g["nodes"]:
    ext = node.get("extensions", {}).get("EXT_mesh_gpu_instancing")
    if ext:
        prims = g["meshes"][node["mesh"]]["primitives"]
        count = g["accessors"][ext["attributes"]["TRANSLATION"]]["count"]
        print(node["name"], len(prims), count)
PY
)
trees=$(echo "$got" | awk '$1 ~ /_tree$/ { if ($2 != 3) bad = 1; n += $3 } END { print bad ? "a tree node without 3 primitives" : n }')
[ "$trees" = "$(grep -c '^tree,' "$csv")" ] || fail "prototype mesh: $trees trees in: $got"
# Read into the world and written back to glTF's frame, each of the three
# cones is the marker cone exactly as the first file stored it.
checks=$((checks + 1))
python3 - "$TMP/one/forest/instances.glb" "$TMP/d/forest/instances.glb" <<'PY' || fail "prototype mesh round trip (see above)"
import json, struct, sys
def positions(path, node_name):
    d = open(path, "rb").read()
    jlen = struct.unpack_from("<I", d, 12)[0]
    doc = json.loads(d[20:20 + jlen])
    node = [n for n in doc["nodes"] if n.get("name") == node_name][0]
    out = []
    for p in doc["meshes"][node["mesh"]]["primitives"]:
        a = doc["accessors"][p["attributes"]["POSITION"]]
        v = doc["bufferViews"][a["bufferView"]]
        out.append(struct.unpack_from("<%df" % (3 * a["count"]), d, 20 + jlen + 8 + v.get("byteOffset", 0)))
    return out
cone = positions(sys.argv[1], "tree")[0]
back = positions(sys.argv[2], "chunk_x1_z1_tree")
ok = len(back) == 3 and all(b == cone for b in back)
if not ok:
    print("cone", cone[:6], "read back as", [b[:6] for b in back])
sys.exit(0 if ok else 1)
PY
if [ "$vrc" -ne 77 ]; then
  checks=$((checks + 1))
  bash "$SRC/tests/common/gltf_validate.sh" "$TMP/d/forest/instances.glb" > "$TMP/val" 2>&1 ||
    fail "glTF-Validator on the prototype-mesh glb: $(cat "$TMP/val")"
fi
# The Godot scene honours its own meshes parameter: the trees' ArrayMesh
# has the three cones as three surfaces, the others one cone each, and
# every cone stands on its base (y from 0 to 1 m) as in the glb.
run "$TGRAPH" eval "$TMP/g/forest.tgraph" -o "$TMP/f" --set 'godot.meshes=prototype=tree|path=tree.glb'
expect_rc 0 "eval with a prototype mesh for godot"
checks=$((checks + 1))
python3 - "$TMP/f/forest/instances.tscn" <<'PY' || fail "godot prototype meshes (see above)"
import re, struct, sys
text = open(sys.argv[1]).read()
# Every chunk's MultiMesh of a kind draws that kind's one ArrayMesh.
nodes = re.findall(r'\[node name="([^"]+)" type="MultiMeshInstance3D" parent="chunk_x\d+_z\d+"\]\n'
                   r'multimesh = SubResource\("MultiMesh_(\d+)"\)', text)
meshes = {}
for name, mm in nodes:
    sec = text.split('[sub_resource type="MultiMesh" id="MultiMesh_%s"]' % mm)[1].split("\n[")[0]
    meshes.setdefault(name, set()).add(re.search(r'\nmesh = SubResource\("ArrayMesh_(\d+)"\)', sec).group(1))
bad = ["%s: meshes %s" % (n, sorted(m)) for n, m in meshes.items() if len(m) != 1]
names = [(n, min(m)) for n, m in sorted(meshes.items())]
for name, k in names:
    sec = text.split('[sub_resource type="ArrayMesh" id="ArrayMesh_%s"]' % k)[1].split("\n[")[0]
    counts = [int(c) for c in re.findall(r'"vertex_count": (\d+)', sec)]
    datas = re.findall(r'"vertex_data": PackedByteArray\(([^)]*)\)', sec)
    want = 3 if name == "tree" else 1
    if len(counts) != want:
        bad.append("%s: %d surfaces, want %d" % (name, len(counts), want))
    for n, data in zip(counts, datas):
        raw = bytes(int(b) for b in data.split(", "))
        ys = struct.unpack_from("<%df" % (3 * n), raw)[1::3]
        if min(ys) != 0.0 or max(ys) != 1.0:
            bad.append("%s: a cone spans y %g..%g" % (name, min(ys), max(ys)))
if len(names) != 3 or bad:
    print(len(names), "nodes;", bad)
    sys.exit(1)
PY
run "$TGRAPH" eval "$TMP/g/forest.tgraph" -o "$TMP/e" --set 'glb.meshes=prototype=pine|path=tree.glb'
expect_rc 1 "a mesh for a prototype that does not exist"
expect_in "$TMP/err" 'no prototype "pine"' "the unknown prototype is named"
expect_in "$TMP/err" "tree, grass, rock" "the known prototypes are listed"

# --- frames: the same instances in Unreal's, Blender's and Houdini's -------
# The csv of run a is the world's frame (unity, from the centre), in the
# same chunks, row for row.  Unreal from the corner: a unique Name (the
# instance's index in the one list), X = east, Y = south from the north-west
# corner, Z = up, all in cm, the yaw unchanged, local y and z scales
# swapped; Blender's json (y north, z up, south-west corner) states its
# frame; Houdini's csv (z = -north, north-west corner) negates qx, qy.
run "$TGRAPH" eval "$graph" -o "$TMP/frames" --set csv.frame=unreal --set csv.origin=corner \
  --set glb.format=json --set glb.path=forest/blender.json --set glb.frame=blender \
  --set glb.origin=corner --set godot.format=csv --set godot.path=forest/houdini.csv \
  --set godot.frame=houdini --set godot.origin=corner
expect_rc 0 "eval forest with frames"
checks=$((checks + 1))
python3 - "$csv" "$TMP/frames/forest" "$TMP/one/forest/instances.csv" <<'PY' || fail "instances in the engines' frames (see above)"
import csv, json, math, sys
world = list(csv.reader(open(sys.argv[1])))[1:]
unreal = list(csv.reader(open(sys.argv[2] + "/instances.csv")))
houdini = list(csv.reader(open(sys.argv[2] + "/houdini.csv")))[1:]
blender = json.load(open(sys.argv[2] + "/blender.json"))
index = {tuple(r): i for i, r in enumerate(list(csv.reader(open(sys.argv[3])))[1:])}
bad = []
def near(a, b, tol, what):
    if abs(float(a) - b) > tol:
        bad.append("%s: %s, want %r" % (what, a, b))
if unreal[0] != "Name,Prototype,X,Y,Z,Pitch,Yaw,Roll,ScaleX,ScaleY,ScaleZ,Chunk".split(","):
    bad.append("unreal header %r" % unreal[0])
unreal = unreal[1:]
if len(unreal) != len(world) or len(houdini) != len(world) or blender["count"] != len(world):
    bad.append("counts %d %d %d of %d" % (len(unreal), len(houdini), blender["count"], len(world)))
if len({r[0] for r in unreal}) != len(unreal):
    bad.append("the Name column is not unique")
if blender["frame"] != {"name": "blender", "handedness": "right", "east": "+X", "up": "+Z",
                        "north": "+Y", "units": "m", "origin": "south-west corner"}:
    bad.append("blender frame %r" % blender["frame"])
for i, (w, u, h, b) in enumerate(zip(world, unreal, houdini, blender["instances"])):
    x, y, z, qx, qy, qz, qw, sx, sy, sz = map(float, w[1:11])
    yaw = math.degrees(2 * math.atan2(qy, qw))
    yaw = (yaw + 180) % 360 - 180
    if u[0] != str(index.get(tuple(w[:11]))) or u[1] != w[0] or h[0] != w[0] or b["prototype"] != w[0]:
        bad.append("row %d names %r %r %r" % (i, u[:2], h[0], b["prototype"]))
    if not (u[11] == h[11] == b["chunk"] == w[11]):
        bad.append("row %d chunks %s %s %s, want %s" % (i, u[11], h[11], b["chunk"], w[11]))
    for k, want in enumerate([(x + 1024) * 100, (1024 - z) * 100, y * 100]):
        near(u[2 + k], want, 0.02, "unreal %d location %d" % (i, k))
    near(u[5], 0, 1e-3, "unreal %d pitch" % i)
    near(u[7], 0, 1e-3, "unreal %d roll" % i)
    if abs((float(u[6]) - yaw + 180) % 360 - 180) > 1e-3:
        bad.append("unreal %d yaw %s, want %g" % (i, u[6], yaw))
    for k, want in enumerate([sx, sz, sy]):
        near(u[8 + k], want, 0, "unreal %d scale %d" % (i, k))
    for k, want in enumerate([x + 1024, y, 1024 - z, -qx, -qy, qz, qw, sx, sy, sz]):
        near(h[1 + k], want, 2e-4, "houdini %d column %d" % (i, k + 1))
    for k, want in enumerate([x + 1024, z + 1024, y]):
        near(b["position"][k], want, 2e-4, "blender %d position %d" % (i, k))
    for k, want in enumerate([-qx, -qz, -qy, qw]):
        near(b["rotation"][k], want, 0, "blender %d rotation %d" % (i, k))
    if len(bad) > 5:
        break
# The manifest says each file's frame and where its origin lies.
files = {f["path"]: f.get("instances", {}) for f in json.load(open(sys.argv[2] + "/../manifest.json"))["files"]}
for path, want in [("forest/instances.csv", ("unreal", "left", "+Z", "-Y", "cm", "north-west corner", [-1024, 1024], "pitch_yaw_roll_deg")),
                   ("forest/blender.json", ("blender", "right", "+Z", "+Y", "m", "south-west corner", [-1024, -1024], "quaternion_xyzw")),
                   ("forest/houdini.csv", ("houdini", "right", "+Y", "-Z", "m", "north-west corner", [-1024, 1024], "quaternion_xyzw"))]:
    got = files.get(path, {})
    got = tuple(got.get(k) for k in ("frame", "handedness", "up", "north", "units", "origin", "origin_world_m", "rotation"))
    if got != want:
        bad.append("manifest %s: %s, want %s" % (path, got, want))
if bad:
    print("\n".join(bad[:6]))
    sys.exit(1)
PY

# --- a failing scatter names itself and writes nothing ----------------------
run "$TGRAPH" eval "$graph" -o "$TMP/c" --set trees.cell_m=0.01 -r 65
expect_rc 1 "eval with too many candidates"
expect_in "$TMP/err" "trees" "the failing node is named"
expect_in "$TMP/err" "cell_m" "the parameter is named"
checks=$((checks + 1))
[ ! -e "$TMP/c/forest/instances.csv" ] || fail "a failed eval left files behind"
# Chunks too small for any engine: refused naming the node, nothing written.
run "$TGRAPH" eval "$graph" -o "$TMP/small" --set glb.chunk_m=0.0001 -r 65
expect_rc 1 "eval with 0.1 mm chunks"
expect_in "$TMP/err" 'node "glb" (export.points)' "the export with too many chunks is named"
expect_in "$TMP/err" "too many; use larger chunks" "too many chunks is said"
checks=$((checks + 1))
[ ! -e "$TMP/small" ] || fail "a refused chunking left files behind: $(ls -R "$TMP/small")"

finish
