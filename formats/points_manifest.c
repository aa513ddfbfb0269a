/* The "instances" object of an instance list's manifest entry: the frame
 * its numbers are in (name, handedness, the axes pointing east, up and
 * north, units), where its origin lies in the world, how rotations are
 * written, and its chunk grid, so that an engine's import script need not
 * guess.  Everything comes from the export node's parameters and the
 * world (never from the file), so a whole build and a stitched tiled one
 * describe a file with the same bytes.
 *
 * csv and json are written in the frame and from the origin their
 * parameters name (points_frame.c); glb and godot always in their own
 * right-handed, +Y up frame with north at -Z, from the world's centre
 * (handedness.h).
 */
#include <string.h>

#include "points-writers.h"
#include "tgformats-private.h"

static json_object *
pair (double a, double b)
{
  return tg__json_numbers ((const double[]) { a, b }, 2);
}

static double
param_number (const TgGraph *g, int node, const char *name)
{
  const TgParamValue *v = tg_graph_get_param (g, node, name);
  return v ? v->f : 0.0;
}

static int
param_index (const TgGraph *g, int node, const char *name)
{
  const TgParamValue *v = tg_graph_get_param (g, node, name);
  return v ? v->i : 0;
}

json_object *
tg__manifest_instances (const TgGraph *g, const TgExportFile *f, bool *oom)
{
  const TgWorld *w = tg_graph_world_const (g);
  int node = f->node_id ? tg_graph_find_node (g, f->node_id) : -1;
  const TgNodeDesc *d = node >= 0 ? tg_graph_node_desc (g, node) : NULL;
  TgPointsWriteOptions opt = { .size_x = w->size_x, .size_z = w->size_z };
  TgPointsFrameInfo fr;
  TgPointsChunkGrid grid;
  const char *rotation = "quaternion_xyzw";
  double origin_x = 0.0, origin_z = 0.0;
  json_object *o, *chunks;
  bool ok, own_frame;

  *oom = false;
  if (!d || strcmp (d->type, "export.points") != 0 || !f->format)
    return NULL;
  own_frame = strcmp (f->format, "csv") == 0 || strcmp (f->format, "json") == 0;
  if (own_frame)
    {
      opt.frame = (TgPointsFrame) param_index (g, node, "frame");
      opt.origin = (TgPointsOrigin) param_index (g, node, "origin");
    }
  opt.chunk_m = param_number (g, node, "chunk_m");
  /* The writer refused what these refuse: no file to describe. */
  if (tg__points_frame_init (&fr, &opt, f->format, NULL) < 0
      || tg__points_chunk_grid_init (&grid, &opt, f->format, NULL) < 0)
    return NULL;
  if (!own_frame)
    {
      /* The file's frame, not a parameter's: glTF's and Godot's. */
      bool godot = strcmp (f->format, "godot") == 0;
      fr.name = godot ? "godot" : "gltf";
      fr.handedness = "right";
      fr.up = "+Y";
      fr.north = "-Z";
      fr.units = "m";
      rotation = godot ? "basis_3x4" : "quaternion_xyzw";
    }
  else if (fr.frame == TG_POINTS_FRAME_UNREAL && strcmp (f->format, "csv") == 0)
    rotation = "pitch_yaw_roll_deg";
  if (opt.origin == TG_POINTS_ORIGIN_CORNER)
    {
      origin_x = -0.5 * w->size_x;
      origin_z = (fr.north[0] == '+' ? -0.5 : 0.5) * w->size_z;
    }

  o = json_object_new_object ();
  ok = o && tg__json_add (o, "frame", json_object_new_string (fr.name))
       && tg__json_add (o, "handedness", json_object_new_string (fr.handedness))
       && tg__json_add (o, "east", json_object_new_string ("+X"))
       && tg__json_add (o, "up", json_object_new_string (fr.up))
       && tg__json_add (o, "north", json_object_new_string (fr.north))
       && tg__json_add (o, "units", json_object_new_string (fr.units))
       && tg__json_add (o, "origin", json_object_new_string (fr.origin))
       && tg__json_add (o, "origin_world_m", pair (origin_x, origin_z))
       && tg__json_add (o, "rotation", json_object_new_string (rotation));
  /* Each object is attached before it is filled: O owns it from then. */
  if (ok && grid.chunk_m > 0.0)
    ok = tg__json_add (o, "chunks", chunks = json_object_new_object ())
         && tg__json_add (chunks, "size_m", json_object_new_double (grid.chunk_m))
         && tg__json_add (chunks, "anchor", json_object_new_string ("north-west corner"))
         && tg__json_add (chunks, "anchor_world_m", pair (grid.west_m, grid.north_m))
         && tg__json_add (chunks, "count", pair ((double) grid.ncx, (double) grid.ncz))
         && tg__json_add (chunks, "names",
                          json_object_new_string ("chunk_x<cx>_z<cz>, cx from the west, cz from "
                                                  "the north"));
  if (!ok)
    {
      json_object_put (o);
      *oom = true;
      return NULL;
    }
  return o;
}
