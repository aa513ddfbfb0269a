# What tools/render_terrain.py and tools/render_mesh.py share: the view
# options, a sun and a sky, a camera looking at a point, and Cycles on the
# CPU writing a PNG.  Imported by them from Blender's Python (they put
# this folder on sys.path).
import math

import bpy


def add_view_args (p, elevation_deg):
  """The options of the picture and the camera, on argparse parser P."""
  p.add_argument ("--width", type=int, default=960)
  p.add_argument ("--height-px", type=int, default=640)
  p.add_argument ("--samples", type=int, default=24)
  p.add_argument ("--azimuth-deg", type=float, default=150.0)
  p.add_argument ("--elevation-deg", type=float, default=elevation_deg)
  p.add_argument ("--lens-mm", type=float, default=40.0)


def light (scene, energy, elevation_deg, azimuth_deg):
  """A sun of ENERGY, ELEVATION_DEG from the zenith, turned AZIMUTH_DEG
  about Z, and a pale blue sky."""
  sun = bpy.data.lights.new ("sun", "SUN")
  sun.energy = energy
  sun.angle = math.radians (2.0)
  sun_obj = bpy.data.objects.new ("sun", sun)
  sun_obj.rotation_euler = (math.radians (elevation_deg), 0.0, math.radians (azimuth_deg))
  scene.collection.objects.link (sun_obj)
  world = bpy.data.worlds.new ("sky")
  world.use_nodes = True
  world.node_tree.nodes["Background"].inputs["Color"].default_value = (0.55, 0.65, 0.8, 1.0)
  world.node_tree.nodes["Background"].inputs["Strength"].default_value = 0.6
  scene.world = world


def camera (scene, args, target, dist, clip_end):
  """A camera DIST from TARGET (x, y, z), from --azimuth-deg and
  --elevation-deg, looking at it."""
  cam = bpy.data.cameras.new ("camera")
  cam.lens = args.lens_mm
  cam.clip_end = clip_end
  cam_obj = bpy.data.objects.new ("camera", cam)
  scene.collection.objects.link (cam_obj)
  az, el = math.radians (args.azimuth_deg), math.radians (args.elevation_deg)
  cam_obj.location = (target[0] + dist * math.cos (el) * math.sin (az),
                      target[1] + dist * math.cos (el) * math.cos (az),
                      target[2] + dist * math.sin (el))
  d = [target[k] - cam_obj.location[k] for k in range (3)]
  cam_obj.rotation_euler = (math.atan2 (math.hypot (d[0], d[1]), -d[2]), 0.0,
                            math.atan2 (d[1], d[0]) - math.pi / 2)
  scene.camera = cam_obj


def render (scene, args, out):
  """Cycles on the CPU, denoising off (Blender 3.4's OpenImageDenoise needs
  a CPU feature the build machines lack, so --samples sets the grain), to
  the PNG OUT."""
  scene.render.engine = "CYCLES"
  scene.cycles.device = "CPU"
  scene.cycles.samples = args.samples
  scene.cycles.use_denoising = False
  scene.cycles.max_bounces = 4
  scene.render.resolution_x = args.width
  scene.render.resolution_y = args.height_px
  scene.render.resolution_percentage = 100
  scene.render.image_settings.file_format = "PNG"
  scene.render.filepath = out
  scene.view_settings.view_transform = "Filmic"
  bpy.ops.render.render (write_still=True)
  print ("rendered", out)
