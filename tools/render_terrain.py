# Renders a heightmap with its colour map in Blender Cycles (CPU, headless),
# from a fixed camera, so two builds of a graph can be compared picture by
# picture:
#
#   blender -b --factory-startup --python tools/render_terrain.py -- \
#       OUT/height.png OUT/color.png render.png --size-m 4096 --height-m 850
#
# The heightmap (16-bit PNG, row 0 north) becomes a grid mesh of at most
# --grid samples a side in metres, the colour map its base colour; a sun
# from the north-west and a sky light it.  The camera looks from the
# south-east (--azimuth-deg, --elevation-deg) at the world's centre and
# frames the whole world whatever its size (--look-at and --distance move
# it closer to a spot).  Denoising is off (Blender 3.4's
# OpenImageDenoise needs a CPU feature the build machines lack), so
# --samples sets the grain.
import argparse
import math
import os
import sys

import numpy

numpy.bool = bool  # Blender 3.4's bundled modules still use the removed alias

import bpy

sys.path.insert (0, os.path.dirname (os.path.abspath (__file__)))
import blender_view  # noqa: E402


def parse_args ():
  argv = sys.argv[sys.argv.index ("--") + 1:] if "--" in sys.argv else []
  p = argparse.ArgumentParser (prog="render_terrain.py")
  p.add_argument ("height")
  p.add_argument ("color")
  p.add_argument ("out")
  p.add_argument ("--size-m", type=float, default=4096.0)
  p.add_argument ("--height-m", type=float, default=850.0)
  p.add_argument ("--grid", type=int, default=513)
  blender_view.add_view_args (p, 32.0)
  p.add_argument ("--look-at", type=float, nargs=2, metavar=("EAST_M", "NORTH_M"),
                  help="the point the camera looks at, metres east and north of the world's "
                       "centre (at a quarter of --height-m; default the centre)")
  p.add_argument ("--distance", type=float, default=1.75,
                  help="the camera's distance from the point it looks at, in world sizes")
  return p.parse_args (argv)


def load_pixels (path):
  img = bpy.data.images.load (path)
  img.colorspace_settings.name = "Non-Color"
  w, h = img.size
  px = numpy.empty (w * h * 4, dtype=numpy.float32)
  img.pixels.foreach_get (px)
  # Blender's rows run from the bottom (south) up.
  return img, px.reshape (h, w, 4)


def terrain_mesh (hpx, args):
  h, w = hpx.shape[:2]
  step = max (1, (w - 1 + args.grid - 2) // (args.grid - 1))
  z = hpx[::step, ::step, 0].astype (numpy.float64) * args.height_m
  gh, gw = z.shape
  xs = (numpy.arange (gw) * step / (w - 1) - 0.5) * args.size_m
  ys = (numpy.arange (gh) * step / (h - 1) - 0.5) * args.size_m
  gx, gy = numpy.meshgrid (xs, ys)
  verts = numpy.stack ([gx, gy, z], axis=-1).reshape (-1, 3)
  i = numpy.arange (gh * gw).reshape (gh, gw)
  quads = numpy.stack ([i[:-1, :-1], i[:-1, 1:], i[1:, 1:], i[1:, :-1]], axis=-1).reshape (-1, 4)
  mesh = bpy.data.meshes.new ("terrain")
  mesh.vertices.add (len (verts))
  mesh.vertices.foreach_set ("co", verts.ravel ().astype (numpy.float32))
  nq = len (quads)
  mesh.loops.add (nq * 4)
  mesh.loops.foreach_set ("vertex_index", quads.ravel ().astype (numpy.int32))
  mesh.polygons.add (nq)
  mesh.polygons.foreach_set ("loop_start", numpy.arange (0, nq * 4, 4, dtype=numpy.int32))
  mesh.polygons.foreach_set ("loop_total", numpy.full (nq, 4, dtype=numpy.int32))
  mesh.polygons.foreach_set ("use_smooth", numpy.ones (nq, dtype=bool))
  uv = mesh.uv_layers.new (name="uv")
  u = (numpy.arange (gw) * step / (w - 1))
  v = (numpy.arange (gh) * step / (h - 1))
  gu, gv = numpy.meshgrid (u, v)
  uvs = numpy.stack ([gu, gv], axis=-1).reshape (-1, 2)[quads.ravel ()]
  uv.data.foreach_set ("uv", uvs.ravel ().astype (numpy.float32))
  mesh.update ()
  mesh.validate ()
  return mesh


def main ():
  args = parse_args ()
  bpy.ops.wm.read_factory_settings (use_empty=True)
  scene = bpy.context.scene
  _, hpx = load_pixels (args.height)
  cimg = bpy.data.images.load (args.color)

  obj = bpy.data.objects.new ("terrain", terrain_mesh (hpx, args))
  scene.collection.objects.link (obj)
  mat = bpy.data.materials.new ("ground")
  mat.use_nodes = True
  nt = mat.node_tree
  bsdf = nt.nodes["Principled BSDF"]
  tex = nt.nodes.new ("ShaderNodeTexImage")
  tex.image = cimg
  tex.interpolation = "Linear"
  nt.links.new (tex.outputs["Color"], bsdf.inputs["Base Color"])
  bsdf.inputs["Roughness"].default_value = 0.9
  bsdf.inputs["Specular"].default_value = 0.2
  obj.data.materials.append (mat)

  blender_view.light (scene, 4.0, 50.0, -45.0 + 180.0 + 45.0)
  target = (0.0, 0.0, 0.25 * args.height_m)
  if args.look_at:
    target = (args.look_at[0], args.look_at[1], 0.25 * args.height_m)
  blender_view.camera (scene, args, target, args.size_m * args.distance, args.size_m * 10)
  blender_view.render (scene, args, args.out)


main ()
