# Run inside Blender by cli_outside.sh: reports what Blender makes of our
# exports, and asserts nothing itself (the test compares the report with
# what it reads from the files).
#
#   blender -b --factory-startup -noaudio --python-exit-code 1 \
#     --python blender_counts.py -- FILE [--raw16 RAW] ...
#
# Each FILE starts from an empty scene.  .glb/.gltf/.obj/.ply are imported
# with Blender's own importers and each object reported: type, vertex and
# polygon counts, world-space bounding box.  A .png is loaded as an image
# (colour space Non-Color, as a heightmap is data) and reported: size,
# channels, is_float, depth and the distinct 16-bit levels of its first
# channel; "--raw16 RAW" after it counts the samples that differ from a
# headerless little-endian uint16 file of the same size, in Blender's row
# order (bottom row first) and flipped.  One line per FILE on stdout,
# "TGOUT " and a JSON object; an import that fails reports its error and
# the run carries on with the next file.  "TGOUT {"done": N}" ends a run
# that got through.
import json
import os
import sys

import bpy
import numpy as np

# Blender 3.4's glTF importer uses np.bool, which NumPy 1.24 removed
# (Debian 12 ships that pair); the alias is what the add-on meant.
if "bool" not in np.__dict__:
    np.bool = bool


def report(rec):
    print("TGOUT " + json.dumps(rec), flush=True)


def have_op(module, name):
    """Whether bpy.ops.MODULE.NAME exists in this Blender (C and Python operators alike)."""
    try:
        getattr(getattr(bpy.ops, module), name).get_rna_type()
        return True
    except (AttributeError, KeyError):
        return False


def import_mesh_file(path):
    ext = os.path.splitext(path)[1].lower()
    if ext in (".glb", ".gltf"):
        return bpy.ops.import_scene.gltf(filepath=path)
    if ext == ".obj":
        # 3.3 and later: the C++ importer; before, the io_scene_obj add-on.
        if have_op("wm", "obj_import"):
            return bpy.ops.wm.obj_import(filepath=path)
        return bpy.ops.import_scene.obj(filepath=path)
    if ext == ".ply":
        # 3.6 and later: the C++ importer; before, the io_mesh_ply add-on.
        if have_op("wm", "ply_import"):
            return bpy.ops.wm.ply_import(filepath=path)
        return bpy.ops.import_mesh.ply(filepath=path)
    raise RuntimeError("no importer for " + ext)


def describe(ob):
    rec = {"name": ob.name, "type": ob.type}
    if ob.type != "MESH":
        return rec
    me = ob.data
    n = len(me.vertices)
    rec["verts"] = n
    rec["faces"] = len(me.polygons)
    rec["triangles"] = sum(1 for p in me.polygons if p.loop_total == 3)
    if n:
        co = np.empty(3 * n, dtype=np.float64)
        me.vertices.foreach_get("co", co)
        co = co.reshape(n, 3)
        m = np.array(ob.matrix_world, dtype=np.float64)
        world = co @ m[:3, :3].T + m[:3, 3]
        rec["min"] = world.min(axis=0).tolist()
        rec["max"] = world.max(axis=0).tolist()
    return rec


def do_mesh(path):
    res = import_mesh_file(path)
    if "FINISHED" not in res:
        raise RuntimeError("importer returned %s" % sorted(res))
    objs = sorted(bpy.context.scene.objects, key=lambda o: o.name)
    return {"objects": [describe(o) for o in objs]}


def do_image(path, raw16):
    img = bpy.data.images.load(path)
    # Non-Color: the samples as stored, no sRGB decoding (Blender reloads
    # the buffer when the colour space changes).
    img.colorspace_settings.name = "Non-Color"
    w, h = img.size
    ch = img.channels
    if not w * h * ch:
        raise RuntimeError("no pixels: Blender could not decode the image")
    px = np.empty(w * h * ch, dtype=np.float32)
    img.pixels.foreach_get(px)
    first = px.reshape(h, w, ch)[:, :, 0]
    levels = np.rint(first * 65535.0).astype(np.int64)
    rec = {"width": w, "height": h, "channels": ch, "is_float": bool(img.is_float),
           "depth": img.depth, "distinct": int(len(np.unique(levels))),
           "off_grid": float(np.abs(first * 65535.0 - levels).max()) if w * h else 0.0}
    if raw16:
        raw = np.fromfile(raw16, dtype="<u2")
        if raw.size != w * h:
            rec["raw16_error"] = "%s holds %d samples, the image %d" % (raw16, raw.size, w * h)
        else:
            raw = raw.reshape(h, w)
            rec["raw16_differ_same_rows"] = int(np.count_nonzero(raw != levels))
            rec["raw16_differ_flipped"] = int(np.count_nonzero(raw != levels[::-1]))
    return rec


def main():
    args = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    jobs = []
    while args:
        path = os.path.abspath(args.pop(0))
        raw16 = None
        if args[:1] == ["--raw16"]:
            raw16 = os.path.abspath(args[1])
            del args[:2]
        jobs.append((path, raw16))
    report({"blender": bpy.app.version_string})
    for path, raw16 in jobs:
        bpy.ops.wm.read_factory_settings(use_empty=True)
        rec = {"file": path}
        try:
            if path.lower().endswith(".png"):
                rec.update(do_image(path, raw16))
            else:
                rec.update(do_mesh(path))
        except Exception as e:  # operators raise RuntimeError with the importer's message
            rec["error"] = ("%s: %s" % (type(e).__name__, e)).strip()[-2000:]
        report(rec)
    report({"done": len(jobs)})


main()
sys.stdout.flush()
# Blender can take seconds to tear down a large scene; the report is out.
os._exit(0)
