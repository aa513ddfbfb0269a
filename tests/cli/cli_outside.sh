#!/bin/bash
# Our exports read by outside tools.  The bundled examples are evaluated
# into $TG_BUILD_ROOT/tests/cli/cli_outside (kept for a look after a
# failure): arch (iso-surface .glb), tiles (chunks and LODs: .glb, and at
# 257 samples .obj and .ply, the .ply also Z-up and with lod0 only), island (16-bit PNG and raw16 heightmaps),
# alpine at 513 samples (heightmap, splat maps, mask, images) and forest
# (instanced .glb, heightmap).  Then:
#   Blender (blender_counts.py, all files in one headless run): each mesh
#   file imports with one mesh object per mesh node / OBJ object, the
#   vertex and triangle counts and the world bounding box read from the
#   file itself; the instanced .glb imports; each 16-bit PNG heightmap
#   loads as a float image with more than 256 levels, and island's holds
#   exactly the samples of the .r16 written beside it.
#   pngcheck -v: every PNG the manifests list is valid and has the bit
#   depth and colour type its export node promises.
# A tool that is missing is skipped ("SKIP ..."); exit 77 when both are.
# Environment: TG_NO_BLENDER=1 skips Blender; BLENDER names the Blender
# executable (default blender); TG_OUTSIDE_TAMPER=COMMANDS runs in the
# export folder before the checks, to see them fail on a damaged file
# (e.g. 'truncate -s 5000 arch/arch.glb').
. "$(dirname "$0")/lib.sh"

here="$(cd "$(dirname "$0")" && pwd)"
BLENDER="${BLENDER:-blender}"

# tally FILE: counts the "ok: " and "FAIL: " lines a checker wrote as checks.
tally () {
  while IFS= read -r line; do
    case "$line" in
      "ok: "*) checks=$((checks + 1)); echo "$line" ;;
      "FAIL: "*) checks=$((checks + 1)); fail "${line#FAIL: }" ;;
      *) echo "$line" >&2 ;;
    esac
  done < "$1"
}

# --- which tools are here ----------------------------------------------------
use_blender=0
if [ "${TG_NO_BLENDER:-0}" = 1 ]; then
  echo "SKIP blender: TG_NO_BLENDER=1"
elif ! command -v "$BLENDER" > /dev/null 2>&1; then
  echo "SKIP blender: $BLENDER not found"
elif ! timeout 120 "$BLENDER" -b --factory-startup -noaudio --version > "$TMP/bv" 2>&1; then
  echo "SKIP blender: '$BLENDER -b --version' fails: $(tail -n 3 "$TMP/bv" | tr '\n' ' ')"
else
  use_blender=1
  echo "using $(grep -m1 '^Blender ' "$TMP/bv")"
fi
use_pngcheck=0
if command -v pngcheck > /dev/null 2>&1; then
  use_pngcheck=1
else
  echo "SKIP pngcheck: not installed"
fi
if [ "$use_blender" = 0 ] && [ "$use_pngcheck" = 0 ]; then
  echo "SKIP: neither Blender nor pngcheck can run here"
  exit 77
fi

# --- the exports ---------------------------------------------------------------
OUT="${TG_BUILD_ROOT:-$TMP}/tests/cli/cli_outside"
mkdir -p "$(dirname "$OUT")"
# Two runs at once (a suite and a single test on one build) would write
# into each other's folder: the second waits.
if command -v flock > /dev/null 2>&1; then
  exec 9> "$OUT.lock"
  flock 9
fi
rm -rf "$OUT"
mkdir -p "$OUT"
: > "$OUT/builds.txt"

# build NAME GRAPH [EVAL ARGS...]: evaluates GRAPH into $OUT/NAME.
build () {
  local name="$1" graph="$EXAMPLES/$2"
  shift 2
  run "$TGRAPH" eval "$graph" -o "$OUT/$name" --quiet "$@"
  expect_rc 0 "tgraph eval $(basename "$graph") $*"
  [ "$rc" -eq 0 ] && printf '%s\t%s\n' "$name" "$graph" >> "$OUT/builds.txt"
}

build arch arch.tgraph
build tiles tiles.tgraph
build tiles_obj tiles.tgraph -r 257 --set tiles_glb.format=obj --set tiles_glb.path=tiles.obj
build tiles_ply tiles.tgraph -r 257 --set tiles_glb.format=ply --set tiles_glb.path=tiles.ply
build tiles_ply_zup tiles.tgraph -r 257 --set tiles_glb.format=ply --set tiles_glb.path=tiles.ply \
  --set tiles_glb.up=z
build tiles_ply_lod0 tiles.tgraph -r 257 --set tiles_glb.format=ply --set tiles_glb.path=tiles.ply \
  --set tiles_glb.lods=first
build island island.tgraph
build alpine alpine.tgraph -r 513
build forest forest.tgraph

if [ -n "${TG_OUTSIDE_TAMPER:-}" ]; then
  echo "tampering in $OUT: $TG_OUTSIDE_TAMPER"
  (cd "$OUT" && eval "$TG_OUTSIDE_TAMPER") || fail "TG_OUTSIDE_TAMPER failed"
fi

# --- what each file is and what it holds ---------------------------------------
# From each manifest: the file, its format and its node; from the graph
# (and the node catalogue's defaults) the node's type and other params.
# The counts that Blender must find are read from the files themselves
# (only when Blender runs: the big ones take a second to read).
"$TGRAPH" nodes --json > "$TMP/nodes.json" || fail "tgraph nodes --json"
python3 - "$OUT" "$TMP/nodes.json" "$use_blender" "$TMP" > "$TMP/plan.log" 2>&1 <<'PY'
import array, json, os, struct, sys

out, catalogue, use_blender, tmp = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
defaults = {t["type"]: {p["name"]: p.get("default") for p in t["params"]}
            for t in json.load(open(catalogue))["nodes"]}

# pngcheck's words for (channels, bits per channel).
PNG_KIND = {(1, 8): "8-bit grayscale", (1, 16): "16-bit grayscale",
            (3, 8): "24-bit RGB", (3, 16): "48-bit RGB",
            (4, 8): "32-bit RGB+alpha", (4, 16): "64-bit RGB+alpha"}


def png_layout(typ, fmt, params):
    """(channels, bits) that the export node promises, or None for no PNG."""
    bits = {"png8": 8, "png16": 16}.get(fmt)
    if bits is None:
        return None
    if typ in ("export.heightmap", "export.mask"):
        return (1, bits)
    if typ == "export.image":
        return (4 if params.get("alpha") else 3, bits)
    if typ == "export.splat":
        return {"unity": (4, bits), "unreal": (1, bits)}[params["preset"]]
    raise ValueError("no PNG layout known for %s" % typ)


# glTF (x, y, z) is Blender (x, -z, y): its importers turn +Y up into +Z up.
def y_up_box(lo, hi):
    return [lo[0], -hi[2], lo[1]], [hi[0], -lo[2], hi[1]]


def read_glb(path):
    d = open(path, "rb").read()
    if len(d) < 20:
        raise ValueError("%d bytes, too short for a glb" % len(d))
    magic, version, length = struct.unpack_from("<4sII", d, 0)
    if magic != b"glTF" or version != 2:
        raise ValueError("not a glTF 2.0 binary")
    if length != len(d):
        raise ValueError("header says %d bytes, the file has %d" % (length, len(d)))
    doc, binc, off = None, b"", 12
    while off + 8 <= length:
        n, kind = struct.unpack_from("<I4s", d, off)
        if off + 8 + n > length:
            raise ValueError("chunk at %d runs past the end" % off)
        if kind == b"JSON":
            doc = json.loads(d[off + 8:off + 8 + n])
        elif kind == b"BIN\0":
            binc = d[off + 8:off + 8 + n]
        off += 8 + n
    if doc is None:
        raise ValueError("no JSON chunk")
    return doc, binc


def read_indices(doc, binc, i):
    a = doc["accessors"][i]
    v = doc["bufferViews"][a["bufferView"]]
    arr = array.array({5121: "B", 5123: "H", 5125: "I"}[a["componentType"]])
    start = v.get("byteOffset", 0) + a.get("byteOffset", 0)
    arr.frombytes(binc[start:start + a["count"] * arr.itemsize])
    if sys.byteorder == "big":
        arr.byteswap()
    if len(arr) != a["count"]:
        raise ValueError("accessor %d runs past the binary chunk" % i)
    return arr


def degenerate(idx):
    return sum(1 for a, b, c in zip(idx[0::3], idx[1::3], idx[2::3]) if a == b or b == c or a == c)


def expect_glb(path):
    """Per mesh node: the vertices written (POSITION counts) and those the
    triangles use (distinct indices per primitive), which are the ones
    Blender keeps; triangles; the accessors' min/max in Blender's frame."""
    doc, binc = read_glb(path)
    nodes, objects = doc.get("nodes", []), []

    def walk(i, t, s):
        n = nodes[i]
        if "matrix" in n or "rotation" in n:
            raise ValueError("node %d is rotated: the boxes here take translation and scale only" % i)
        nt, ns = n.get("translation", [0, 0, 0]), n.get("scale", [1, 1, 1])
        t = [t[k] + s[k] * nt[k] for k in range(3)]
        s = [s[k] * ns[k] for k in range(3)]
        if "mesh" in n:
            mesh = doc["meshes"][n["mesh"]]
            o = {"name": n.get("name") or mesh.get("name"), "verts": 0, "used": 0,
                 "tris": 0, "degenerate": 0, "min": [1e300] * 3, "max": [-1e300] * 3}
            for p in mesh["primitives"]:
                if p.get("mode", 4) != 4:
                    raise ValueError("%s: primitive mode %d, not triangles" % (o["name"], p["mode"]))
                pa = doc["accessors"][p["attributes"]["POSITION"]]
                o["verts"] += pa["count"]
                if "indices" in p:
                    idx = read_indices(doc, binc, p["indices"])
                    o["used"] += len(set(idx))
                    o["tris"] += len(idx) // 3
                    o["degenerate"] += degenerate(idx)
                else:
                    o["used"] += pa["count"]
                    o["tris"] += pa["count"] // 3
                lo = [t[k] + s[k] * (pa["min"] if s[k] >= 0 else pa["max"])[k] for k in range(3)]
                hi = [t[k] + s[k] * (pa["max"] if s[k] >= 0 else pa["min"])[k] for k in range(3)]
                o["min"] = [min(o["min"][k], lo[k]) for k in range(3)]
                o["max"] = [max(o["max"][k], hi[k]) for k in range(3)]
            o["min"], o["max"] = y_up_box(o["min"], o["max"])
            o["blender_verts"] = o["used"]
            objects.append(o)
        for c in n.get("children", []):
            walk(c, t, s)

    # Blender imports the nodes outside the scene too (the coarser levels
    # of detail that MSFT_lod names), as roots of their own.
    roots = list(doc["scenes"][doc.get("scene", 0)]["nodes"])
    children = {c for n in doc.get("nodes", []) for c in n.get("children", [])}
    roots += [i for i in range(len(doc.get("nodes", [])))
              if i not in children and i not in roots]
    for root in roots:
        walk(root, [0, 0, 0], [1, 1, 1])
    return objects


def expect_obj(path):
    """Per `o` object: the `v` lines written under it and the distinct ones
    its faces use, which are the ones Blender keeps; triangles; the box of
    the used vertices in Blender's frame."""
    pos, objects, o = [], [], None
    for line in open(path, encoding="utf-8"):
        if line.startswith("v "):
            pos.append([float(x) for x in line.split()[1:4]])
            if o is not None:
                o["verts"] += 1
        elif line.startswith("o "):
            o = {"name": line[2:].strip(), "verts": 0, "tris": 0, "degenerate": 0, "used": set()}
            objects.append(o)
        elif line.startswith("f "):
            if o is None:  # faces before any `o`: Blender names the object after the file
                o = {"name": os.path.splitext(os.path.basename(path))[0], "verts": 0,
                     "tris": 0, "degenerate": 0, "used": set()}
                objects.append(o)
            refs = [int(tok.split("/")[0]) for tok in line.split()[1:]]
            refs = [r - 1 if r > 0 else len(pos) + r for r in refs]
            if len(refs) != 3:
                raise ValueError("a face with %d corners: %s" % (len(refs), line.strip()))
            o["tris"] += 1
            o["degenerate"] += len(set(refs)) < 3
            o["used"].update(refs)
    for o in objects:
        used = [pos[i] for i in o.pop("used")]
        o["used"] = o["blender_verts"] = len(used)
        lo = [min(p[k] for p in used) for k in range(3)] if used else [0, 0, 0]
        hi = [max(p[k] for p in used) for k in range(3)] if used else [0, 0, 0]
        o["min"], o["max"] = y_up_box(lo, hi)
    return objects


PLY_TYPES = {"char": "b", "int8": "b", "uchar": "B", "uint8": "B", "short": "h", "int16": "h",
             "ushort": "H", "uint16": "H", "int": "i", "int32": "i", "uint": "I", "uint32": "I",
             "float": "f", "float32": "f", "double": "d", "float64": "d"}


def expect_ply(path):
    """One object named after the file: Blender's 3.4 PLY add-on keeps every
    vertex and, unlike glTF/OBJ, no axis conversion (box as stored)."""
    d = open(path, "rb").read()
    end = d.find(b"end_header\n")
    if not d.startswith(b"ply\n") or end < 0:
        raise ValueError("no PLY header")
    elements = []
    for line in d[:end].decode("ascii").splitlines()[1:]:
        w = line.split()
        if w[0] == "format" and w[1] != "binary_little_endian":
            raise ValueError("format %s: this test reads binary_little_endian only" % w[1])
        if w[0] == "element":
            elements.append((w[1], int(w[2]), []))
        elif w[0] == "property":
            elements[-1][2].append(w[1:])
    if [e[0] for e in elements] != ["vertex", "face"]:
        raise ValueError("elements %s, expected vertex then face" % [e[0] for e in elements])
    (_, nv, vprops), (_, nf, fprops) = elements
    names = [p[1] for p in vprops]
    vfmt = "<" + "".join(PLY_TYPES[p[0]] for p in vprops)
    vsize = struct.calcsize(vfmt)
    off = end + len(b"end_header\n")
    if off + nv * vsize > len(d):
        raise ValueError("the vertices run past the end of the file")
    xyz = [names.index(c) for c in "xyz"]
    lo, hi = [1e300] * 3, [-1e300] * 3
    for v in struct.iter_unpack(vfmt, d[off:off + nv * vsize]):
        for k in range(3):
            x = v[xyz[k]]
            lo[k] = min(lo[k], x)
            hi[k] = max(hi[k], x)
    off += nv * vsize
    if len(fprops) != 1 or fprops[0][0] != "list":
        raise ValueError("face element is not one list")
    cfmt, ifmt = "<" + PLY_TYPES[fprops[0][1]], PLY_TYPES[fprops[0][2]]
    csize, isize = struct.calcsize(cfmt), struct.calcsize("<" + ifmt)
    tris = degen = 0
    used = set()
    for _ in range(nf):
        if off + csize > len(d):
            raise ValueError("the faces run past the end of the file")
        (n,) = struct.unpack_from(cfmt, d, off)
        refs = struct.unpack_from("<%d%s" % (n, ifmt), d, off + csize)
        off += csize + n * isize
        if n != 3:
            raise ValueError("a face with %d corners" % n)
        tris += 1
        degen += len(set(refs)) < 3
        used.update(refs)
    if off != len(d):
        raise ValueError("%d bytes after the faces" % (len(d) - off))
    return [{"name": os.path.splitext(os.path.basename(path))[0], "verts": nv, "used": len(used),
             "blender_verts": nv, "tris": tris, "degenerate": degen, "min": lo, "max": hi}]


plan = {"meshes": [], "images": [], "pngs": []}
formats = set()
for line in open(os.path.join(out, "builds.txt")):
    name, graph = line.rstrip("\n").split("\t")
    folder = os.path.join(out, name)
    g = json.load(open(graph))
    nodes = {n["id"]: n for n in g["nodes"]}
    source = {l["to"].split(".")[0]: l["from"] for l in g.get("links", [])}
    try:
        manifest = json.load(open(os.path.join(folder, "manifest.json")))
    except (OSError, ValueError) as e:
        print("FAIL: %s/manifest.json: %s" % (name, e))
        continue
    listed = set()
    heights = []
    for f in manifest["files"]:
        path = os.path.join(folder, f["path"])
        label = os.path.join(name, f["path"])
        listed.add(os.path.normpath(path))
        node = nodes[f["node"]]
        typ, fmt = node["type"], f["format"]
        params = dict(defaults[typ], **node.get("params", {}))
        params["format"] = fmt  # the manifest has what was written, --set included
        if typ == "export.mesh":
            formats.add(fmt)
            plan["meshes"].append({"file": path, "label": label, "kind": "mesh", "format": fmt})
        elif typ == "export.points" and fmt == "glb":
            formats.add("instanced glb")
            plan["meshes"].append({"file": path, "label": label, "kind": "scene", "format": fmt})
        if typ == "export.heightmap":
            heights.append((path, label, fmt, params["rows"], source.get(f["node"]), f["resolution"]))
        try:
            layout = png_layout(typ, fmt, params)
        except (ValueError, KeyError) as e:
            print("FAIL: %s (node %s): %s" % (label, f["node"], e))
            continue
        if layout:
            plan["pngs"].append({"file": path, "label": label, "kind": PNG_KIND[layout],
                                 "size": f["resolution"]})
    # Every PNG written must be one the manifest lists (and so checked).
    for root, _, files in os.walk(folder):
        for fn in files:
            p = os.path.normpath(os.path.join(root, fn))
            if fn.lower().endswith(".png") and p not in listed:
                print("FAIL: %s is not listed in %s/manifest.json, so nothing checks it"
                      % (os.path.relpath(p, out), name))
    # 16-bit PNG heightmaps go to Blender; one with a raw16 twin (same
    # input, same size) must hold the same samples.  Blender's rows run
    # bottom up, so a north_first PNG's match a south_first .r16 as they are.
    for path, label, fmt, rows, src, res in heights:
        if fmt != "png16":
            continue
        img = {"file": path, "label": label, "size": res}
        for rpath, rlabel, rfmt, rrows, rsrc, rres in heights:
            if rfmt == "raw16" and rsrc == src and rres == res:
                img.update(raw16=rpath, raw16_label=rlabel, raw16_flipped=(rows == rrows))
        plan["images"].append(img)
        formats.add("png16 heightmap" + (" with raw16 twin" if "raw16" in img else ""))

# The PLY options, against the default tiles.ply: up = z is the same box
# turned as Blender turns Y-up files (the PLY add-on turns none), with the
# same triangles; lods = first has just the lod0 chunks' faces.
def ply_chunks(path):
    head = open(path, "rb").read(1 << 16).split(b"end_header\n")[0].decode("ascii")
    return [l.split()[2:] for l in head.splitlines() if l.startswith("comment chunk ")]


try:
    ply = {n: expect_ply(os.path.join(out, n, "tiles.ply"))[0]
           for n in ("tiles_ply", "tiles_ply_zup", "tiles_ply_lod0")}
    turned = y_up_box(ply["tiles_ply"]["min"], ply["tiles_ply"]["max"])
    zup = ply["tiles_ply_zup"]
    print(("ok: tiles_ply_zup/tiles.ply: box %s..%s, Z up, %d triangles" % (zup["min"], zup["max"], zup["tris"]))
          if [zup["min"], zup["max"]] == list(turned) and zup["tris"] == ply["tiles_ply"]["tris"] else
          "FAIL: tiles_ply_zup/tiles.ply: box %s..%s, %d triangles; want %s..%s, %d"
          % (zup["min"], zup["max"], zup["tris"], turned[0], turned[1], ply["tiles_ply"]["tris"]))
    lod0 = sum(int(c[4]) for c in ply_chunks(os.path.join(out, "tiles_ply", "tiles.ply"))
               if c[0].endswith("_lod0"))
    got = ply["tiles_ply_lod0"]["tris"]
    print(("ok: tiles_ply_lod0/tiles.ply: the %d lod0 triangles of %d" % (got, ply["tiles_ply"]["tris"]))
          if got == lod0 < ply["tiles_ply"]["tris"] else
          "FAIL: tiles_ply_lod0/tiles.ply: %d triangles, want the %d of the lod0 chunks (of %d)"
          % (got, lod0, ply["tiles_ply"]["tris"]))
except (OSError, ValueError, KeyError, IndexError, struct.error) as e:
    print("FAIL: the PLY up/lods builds: %s: %s" % (type(e).__name__, e))

want = {"glb", "obj", "ply", "instanced glb", "png16 heightmap with raw16 twin"}
if want <= formats:
    print("ok: the exports cover %s, and %d PNGs" % (", ".join(sorted(formats)), len(plan["pngs"])))
else:
    print("FAIL: the exports lack %s (the examples changed?)" % ", ".join(sorted(want - formats)))

if use_blender:
    readers = {"glb": expect_glb, "obj": expect_obj, "ply": expect_ply}
    for m in plan["meshes"]:
        try:
            m["objects"] = readers[m["format"]](m["file"])
        except (OSError, ValueError, KeyError, IndexError, struct.error) as e:
            print("FAIL: %s: cannot read it to know what Blender should find: %s: %s"
                  % (m["label"], type(e).__name__, e))
    with open(os.path.join(tmp, "blender.args"), "w") as a:
        for m in plan["meshes"]:
            a.write(m["file"] + "\n")
        for i in plan["images"]:
            a.write(i["file"] + "\n")
            if "raw16" in i:
                a.write("--raw16\n" + i["raw16"] + "\n")
json.dump(plan, open(os.path.join(tmp, "plan.json"), "w"))
PY
prc=$?
tally "$TMP/plan.log"
[ "$prc" -eq 0 ] || fail "reading the exports failed (exit $prc)"

# --- Blender ---------------------------------------------------------------------
if [ "$use_blender" = 1 ] && [ -s "$TMP/blender.args" ]; then
  mapfile -t bargs < "$TMP/blender.args"
  start=$SECONDS
  timeout 300 "$BLENDER" -b --factory-startup -noaudio --python-exit-code 1 \
    --python "$here/blender_counts.py" -- "${bargs[@]}" > "$OUT/blender.log" 2>&1
  brc=$?
  echo "blender ran ${#bargs[@]} arguments in $((SECONDS - start)) s (log: $OUT/blender.log)"
  checks=$((checks + 1))
  [ "$brc" -eq 0 ] || fail "blender exited $brc; the end of $OUT/blender.log:
$(tail -n 20 "$OUT/blender.log")"

  python3 - "$TMP/plan.json" "$OUT/blender.log" > "$TMP/blender.check" 2>&1 <<'PY'
import json, sys

plan = json.load(open(sys.argv[1]))
got = {}
for line in open(sys.argv[2], errors="replace"):
    if line.startswith("TGOUT "):
        rec = json.loads(line[6:])
        if "file" in rec:
            got[rec["file"]] = rec
TOL = 1e-3  # metres


def some(items):
    return "; ".join(items[:5]) + (" (and %d more)" % (len(items) - 5) if len(items) > 5 else "")


def imported(entry):
    rec = got.get(entry["file"])
    if rec is None:
        print("FAIL: blender reported nothing on %s (did it crash? see blender.log)" % entry["label"])
    elif "error" in rec:
        print("FAIL: blender cannot read %s: %s" % (entry["label"], rec["error"]))
    else:
        return rec
    return None


for m in plan["meshes"]:
    rec = imported(m)
    if rec is None:
        continue
    label = m["label"]
    print("ok: blender imports %s" % label)
    if "objects" not in m:
        continue  # reading the file failed, reported above
    names = sorted(o["name"] for o in rec["objects"] if o["type"] == "MESH")
    want_names = sorted(o["name"] for o in m["objects"])
    if names != want_names:
        print("FAIL: %s: blender made %d mesh objects %s, the file has %d mesh %s %s"
              % (label, len(names), names[:6], len(want_names),
                 "nodes" if m["format"] == "glb" else "objects", want_names[:6]))
        continue
    meshes = {o["name"]: o for o in rec["objects"] if o["type"] == "MESH"}
    want = {o["name"]: o for o in m["objects"]}
    print("ok: %s: %d mesh object%s, %s" % (label, len(want), "s" if len(want) > 1 else "",
          {"glb": "one per mesh node", "obj": "one per OBJ object",
           "ply": "as a PLY holds one mesh"}[m["format"]]))
    if m["kind"] == "scene":
        continue  # EXT_mesh_gpu_instancing: Blender ignores the instances
    # Vertices: Blender's importers keep the vertices that triangles use,
    # for glTF per primitive (np.unique of its indices; merge_vertices is
    # off, so nothing is welded) and for OBJ per object; the 3.4 PLY add-on
    # keeps every vertex.
    bad = ["%s has %d, want %d" % (n, meshes[n]["verts"], o["blender_verts"])
           for n, o in want.items() if meshes[n]["verts"] != o["blender_verts"]]
    total = sum(o["blender_verts"] for o in want.values())
    print(("FAIL: %s: blender's vertex counts: %s" % (label, some(bad))) if bad else
          "ok: %s: blender has the %d vertices %s" % (label, total,
          "of the file" if m["format"] == "ply" else "that the triangles use"))
    # We write no vertex that no triangle uses, so Blender has them all.
    bad = ["%s writes %d vertices, its triangles use %d" % (n, o["verts"], o["used"])
           for n, o in want.items() if o["verts"] != o["used"]]
    print(("FAIL: %s: unused vertices: %s" % (label, some(bad))) if bad else
          "ok: %s: the triangles use every vertex written (%d)"
          % (label, sum(o["verts"] for o in want.values())))
    # Triangles: each of ours is one Blender polygon with 3 corners (the
    # importers' mesh.validate() would drop degenerate or doubled ones).
    bad = ["%s has %d polygons (%d triangles), want %d triangles%s"
           % (n, meshes[n]["faces"], meshes[n]["triangles"], o["tris"],
              ", %d of them degenerate" % o["degenerate"] if o["degenerate"] else "")
           for n, o in want.items()
           if meshes[n]["faces"] != o["tris"] or meshes[n]["triangles"] != o["tris"]]
    print(("FAIL: %s: triangle counts: %s" % (label, some(bad))) if bad else
          "ok: %s: %d triangles, each a blender triangle"
          % (label, sum(o["tris"] for o in want.values())))
    bad = []
    for n, o in want.items():
        b = meshes[n]
        if "min" not in b or any(abs(b[e][k] - o[e][k]) > TOL for e in ("min", "max") for k in range(3)):
            bad.append("%s: blender %s..%s, want %s..%s" % (n, b.get("min"), b.get("max"), o["min"], o["max"]))
    print(("FAIL: %s: world bounding boxes: %s" % (label, some(bad))) if bad else
          "ok: %s: world bounding boxes within %g m of the file's (%s)" % (label, TOL,
          "as stored: the PLY add-on turns no axes" if m["format"] == "ply" else "Y up -> Z up"))

for i in plan["images"]:
    rec = imported(i)
    if rec is None:
        continue
    label = i["label"]
    size = [rec["width"], rec["height"]]
    print(("FAIL: %s: blender sees %dx%d, the manifest says %dx%d" % ((label, *size, *i["size"])))
          if size != i["size"] else "ok: blender loads %s, %dx%d" % (label, *size))
    # Blender keeps PNGs deeper than 8 bits in a float buffer ("depth"
    # counts all channels, so it cannot tell 16-bit grey from 8-bit RGBA).
    print(("FAIL: %s: blender loaded it as 8 bits per channel (is_float off, depth %d)"
           % (label, rec["depth"])) if not rec["is_float"] else
          "ok: %s: blender holds it as float (16 bits per sample)" % label)
    print(("FAIL: %s: only %d distinct levels in blender: 16-bit precision lost" % (label, rec["distinct"]))
          if rec["distinct"] <= 256 else
          "ok: %s: %d distinct levels in blender (more than 8 bits)" % (label, rec["distinct"]))
    if "raw16" in i:
        key = "raw16_differ_flipped" if i["raw16_flipped"] else "raw16_differ_same_rows"
        if "raw16_error" in rec:
            print("FAIL: %s: %s" % (label, rec["raw16_error"]))
        elif rec[key]:
            print("FAIL: %s: %d samples in blender differ from %s" % (label, rec[key], i["raw16_label"]))
        else:
            print("ok: %s: blender's samples are exactly %s's" % (label, i["raw16_label"]))
PY
  crc=$?
  tally "$TMP/blender.check"
  [ "$crc" -eq 0 ] || fail "comparing blender's report failed (exit $crc)"
fi

# --- pngcheck ----------------------------------------------------------------------
if [ "$use_pngcheck" = 1 ]; then
  python3 -c '
import json, sys
for p in json.load(open(sys.argv[1]))["pngs"]:
    print("\t".join([p["file"], p["label"], p["kind"], "%d x %d" % tuple(p["size"])]))
' "$TMP/plan.json" > "$TMP/pngs.txt" || fail "listing the PNGs"
  while IFS=$'\t' read -r file label kind size; do
    checks=$((checks + 1))
    if ! pngcheck -v "$file" > "$TMP/pc" 2>&1 || ! grep -q '^No errors detected' "$TMP/pc"; then
      fail "pngcheck -v $label:
$(grep -vE '^  chunk IDAT at offset 0x[0-9a-f]+, length [0-9]+$' "$TMP/pc" | tail -n 8)"
      continue
    fi
    echo "ok: pngcheck $label"
    checks=$((checks + 1))
    ihdr="$(grep -m1 -E '^ +[0-9]+ x [0-9]+ image, ' "$TMP/pc" | sed 's/^ *//')"
    case "$ihdr" in
      "$size image, $kind, "*) echo "ok: $label is $size, $kind" ;;
      *) fail "$label: pngcheck says \"$ihdr\", its export node promises $size, $kind" ;;
    esac
  done < "$TMP/pngs.txt"
fi

finish
