# Renders a mesh export (glTF/GLB, OBJ or PLY) in Blender Cycles (CPU,
# headless) from a camera that frames its bounding box, so an
# iso-surface example can be looked at as an artist would:
#
#   blender -b --factory-startup --python tools/render_mesh.py -- \
#       OUT/arch.glb render.png [--azimuth-deg 150] [--elevation-deg 25]
#
# The mesh gets a plain rough grey stone material (its own materials, if
# any, are replaced: the shape is what is looked at), a low sun from the
# north-west and a sky.  The camera looks from --azimuth-deg (0: from +Y,
# the glTF's -Z after import, clockwise seen from above) and
# --elevation-deg at the box's centre, --zoom times closer than a view of
# the whole box (--look-at moves the point looked at).  Denoising is off (Blender 3.4's OpenImageDenoise needs a
# CPU feature the build machines lack), so --samples sets the grain.
import argparse
import math
import os
import sys

import numpy

numpy.bool = bool  # Blender 3.4's bundled modules still use the removed alias

import bpy
import mathutils

sys.path.insert (0, os.path.dirname (os.path.abspath (__file__)))
import blender_view  # noqa: E402


def parse_args ():
  argv = sys.argv[sys.argv.index ("--") + 1:] if "--" in sys.argv else []
  p = argparse.ArgumentParser (prog="render_mesh.py")
  p.add_argument ("mesh")
  p.add_argument ("out")
  blender_view.add_view_args (p, 25.0)
  p.add_argument ("--zoom", type=float, default=1.0)
  p.add_argument ("--look-at", type=float, nargs=3, metavar=("X", "Y", "Z"),
                  help="the point the camera looks at, in Blender's axes (Z up; default: the box's centre)")
  p.add_argument ("--lod", type=int, default=0,
                  help="keep only the objects of this LOD (name ends _LODn) when there are several")
  return p.parse_args (argv)


def import_mesh (path):
  before = set (bpy.data.objects)
  low = path.lower ()
  if low.endswith ((".glb", ".gltf")):
    bpy.ops.import_scene.gltf (filepath=path)
  elif low.endswith (".obj"):
    bpy.ops.wm.obj_import (filepath=path)
  elif low.endswith (".ply"):
    bpy.ops.import_mesh.ply (filepath=path)
  else:
    sys.exit ("render_mesh.py: unknown mesh format: " + path)
  return [o for o in bpy.data.objects if o not in before and o.type == "MESH"]


def keep_lod (objs, lod):
  tagged = [o for o in objs if "_LOD" in o.name.upper ()]
  if not tagged:
    return objs
  keep = [o for o in objs if o.name.upper ().endswith ("_LOD%d" % lod)]
  for o in objs:
    if o not in keep:
      bpy.data.objects.remove (o)
  return keep


def main ():
  args = parse_args ()
  bpy.ops.wm.read_factory_settings (use_empty=True)
  scene = bpy.context.scene
  objs = keep_lod (import_mesh (args.mesh), args.lod)
  if not objs:
    sys.exit ("render_mesh.py: no mesh in " + args.mesh)

  mat = bpy.data.materials.new ("stone")
  mat.use_nodes = True
  bsdf = mat.node_tree.nodes["Principled BSDF"]
  bsdf.inputs["Base Color"].default_value = (0.30, 0.26, 0.22, 1.0)
  bsdf.inputs["Roughness"].default_value = 0.9
  bsdf.inputs["Specular"].default_value = 0.2
  lo = mathutils.Vector ((1e30, 1e30, 1e30))
  hi = -lo
  for o in objs:
    o.data.materials.clear ()
    o.data.materials.append (mat)
    for c in o.bound_box:
      w = o.matrix_world @ mathutils.Vector (c)
      lo = mathutils.Vector (map (min, lo, w))
      hi = mathutils.Vector (map (max, hi, w))
  centre = (lo + hi) / 2
  radius = (hi - lo).length / 2
  if args.look_at:
    centre = mathutils.Vector (args.look_at)

  blender_view.light (scene, 2.5, 55.0, 180.0)
  # The box's bounding sphere fills the narrower side of a 36 mm film.
  dist = radius / math.sin (math.atan (18.0 / args.lens_mm)) / args.zoom
  blender_view.camera (scene, args, centre, dist, radius * 40)
  blender_view.render (scene, args, args.out)


main ()
