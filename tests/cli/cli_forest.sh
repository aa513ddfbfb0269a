#!/bin/bash
# The forest example: a painted distribution map (trees green, grass red,
# rocks blue, nothing black) scattered over an eroded terrain and exported
# as csv, glb and a Godot scene.  Checks what each file holds, that the
# glb and the Godot scene hold the csv's instances in their right-handed
# frame (z = -north, rotations R' = M R M: not mirrored), the same bytes
# for 1 and 4 threads, the Khronos glTF-Validator on the glb (npm,
# installed on first use; only that check is skipped without npm), a
# prototype mesh read from our own glb and written back unchanged, the
# instances in Unreal's, Blender's and Houdini's frames from the terrain's
# corner, and a failing scatter that names the node and writes nothing.
. "$(dirname "$0")/lib.sh"

graph="$EXAMPLES/forest.tgraph"

run "$TGRAPH" eval "$graph" -o "$TMP/a" -j 1
expect_rc 0 "eval forest on one thread"
for f in forest/instances.csv forest/instances.glb forest/instances.tscn forest/height.png \
         manifest.json; do
  [ -s "$TMP/a/$f" ] || fail "eval did not write $f"
done

# --- csv: the exact header, then one row of 11 fields per instance ---------
csv="$TMP/a/forest/instances.csv"
checks=$((checks + 1))
[ "$(head -n 1 "$csv")" = "prototype,px,py,pz,qx,qy,qz,qw,sx,sy,sz" ] ||
  fail "csv header: $(head -n 1 "$csv")"
checks=$((checks + 1))
bad=$(tail -n +2 "$csv" | awk -F, 'NF != 11' | head -n 3)
[ -z "$bad" ] || fail "csv rows without 11 fields: $bad"
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

# --- godot: one MultiMeshInstance3D per kind, transform_format first ------
tscn="$TMP/a/forest/instances.tscn"
expect_in "$tscn" "[gd_scene load_steps=10 format=3]" "godot header"
for kind in tree grass rock; do
  expect_in "$tscn" "[node name=\"$kind\" type=\"MultiMeshInstance3D\" parent=\".\"]" "godot node $kind"
done
checks=$((checks + 1))
bad=$(awk -v csv="$csv" '
  BEGIN { while ((getline l < csv) > 0) if (l !~ /^prototype,/) { split(l, f, ","); want[f[1]]++ } }
  /^\[sub_resource type="MultiMesh"/ { mm++; tf = 0; ic = -1; next }
  /^transform_format = 1$/ { if (ic >= 0) { print "instance_count before transform_format"; exit } tf = 1 }
  /^instance_count = / { if (!tf) { print "no transform_format before instance_count"; exit } ic = $3 }
  /^buffer = PackedFloat32Array\(/ { n = gsub(/,/, ","); if (ic > 0 && n + 1 != 12 * ic) { print "buffer has " n + 1 " floats for " ic " instances"; exit } total += ic }
  END { if (mm != 3) print mm " MultiMeshes"; if (total != want["tree"] + want["grass"] + want["rock"]) print "instance counts " total }' "$tscn")
[ -z "$bad" ] || fail "godot: $bad"

# --- glb and godot: the csv's instances (world) in the right-handed frame ----
# CSV is in world coordinates (z = north); the glb's EXT_mesh_gpu_instancing
# and the Godot buffers must hold (x, y, -z), quaternion (-x, -y, z, w) and
# the matrix M R(q) diag(s) M with M = diag (1, 1, -1), in list order per
# prototype; most trees (north in the world) then lie at -Z.
checks=$((checks + 1))
python3 - "$csv" "$TMP/a/forest/instances.glb" "$tscn" <<'PY' || fail "instances in the glb / tscn frame (see above)"
import csv, json, math, re, struct, sys
f32 = lambda v: struct.unpack("<f", struct.pack("<f", float(v)))[0]
rows = list(csv.reader(open(sys.argv[1])))[1:]
by = {}
for r in rows:
    by.setdefault(r[0], []).append([f32(v) for v in r[1:]])
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
    want = by[node["name"]]
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
        if node["name"] == "tree":
            north += t[i][2] < 0
if north < 0.9 * len(by["tree"]):
    bad.append("only %d of %d trees at -Z (north)" % (north, len(by["tree"])))
text = open(sys.argv[3]).read()
for k, name in enumerate(["tree", "grass", "rock"]):
    sec = text[text.index('id="MultiMesh_%d"' % k):]
    buf = [float(v) for v in re.search(r"buffer = PackedFloat32Array\(([^)]*)\)", sec).group(1).split(",")]
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
# The markers file just written serves as the trees' mesh: its three cones
# become three primitives of the tree mesh, instanced as before.
mkdir -p "$TMP/g"
cp "$graph" "$EXAMPLES/forest_paint.png" "$TMP/g/"
cp "$TMP/a/forest/instances.glb" "$TMP/g/tree.glb"
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
want="tree 3 $(grep -c '^tree,' "$csv")"
echo "$got" | grep -qx "$want" || fail "prototype mesh: expected \"$want\" in: $got"
# Read into the world and written back to glTF's frame, each of the three
# cones is the marker cone exactly as the first file stored it.
checks=$((checks + 1))
python3 - "$TMP/a/forest/instances.glb" "$TMP/d/forest/instances.glb" <<'PY' || fail "prototype mesh round trip (see above)"
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
back = positions(sys.argv[2], "tree")
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
names = re.findall(r'\[node name="([^"]+)" type="MultiMeshInstance3D" parent="."\]\nmultimesh = SubResource\("MultiMesh_(\d+)"\)', text)
bad = []
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
# The csv of run a is the world's frame (unity, from the centre).  Unreal
# from the corner: a unique Name, X = east, Y = south from the north-west
# corner, Z = up, all in cm, the yaw unchanged, local y and z scales
# swapped; Blender's json (y north, z up, south-west corner) states its
# frame; Houdini's csv (z = -north, north-west corner) negates qx, qy.
run "$TGRAPH" eval "$graph" -o "$TMP/frames" --set csv.frame=unreal --set csv.origin=corner \
  --set glb.format=json --set glb.path=forest/blender.json --set glb.frame=blender \
  --set glb.origin=corner --set godot.format=csv --set godot.path=forest/houdini.csv \
  --set godot.frame=houdini --set godot.origin=corner
expect_rc 0 "eval forest with frames"
checks=$((checks + 1))
python3 - "$csv" "$TMP/frames/forest" <<'PY' || fail "instances in the engines' frames (see above)"
import csv, json, math, sys
world = list(csv.reader(open(sys.argv[1])))[1:]
unreal = list(csv.reader(open(sys.argv[2] + "/instances.csv")))
houdini = list(csv.reader(open(sys.argv[2] + "/houdini.csv")))[1:]
blender = json.load(open(sys.argv[2] + "/blender.json"))
bad = []
def near(a, b, tol, what):
    if abs(float(a) - b) > tol:
        bad.append("%s: %s, want %r" % (what, a, b))
if unreal[0] != "Name,Prototype,X,Y,Z,Pitch,Yaw,Roll,ScaleX,ScaleY,ScaleZ".split(","):
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
    x, y, z, qx, qy, qz, qw, sx, sy, sz = map(float, w[1:])
    yaw = math.degrees(2 * math.atan2(qy, qw))
    yaw = (yaw + 180) % 360 - 180
    if u[0] != str(i) or u[1] != w[0] or h[0] != w[0] or b["prototype"] != w[0]:
        bad.append("row %d names %r %r %r" % (i, u[:2], h[0], b["prototype"]))
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

finish
