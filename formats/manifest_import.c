/* What a game engine's importer needs to know about a heightmap of the
 * build, for its manifest entry: the units of its samples and the
 * numbers Unreal's and Unity's terrain imports ask for, all from the
 * world and the file's place in it (never from the samples), so that a
 * whole build and a tiled one describe a file with the same bytes.
 *
 * Unreal (Landscape, "Import from File"): 16-bit files only (png16,
 * raw16) and north first (its rows run along +Y, which is south here:
 * Unreal is Z-up and left-handed, X east, Y south).  Scale X/Y is the
 * cell size in centimetres; Scale Z is the height range in centimetres
 * / 512, as Epic documents it (a Z scale of 100 spans 512 m, the 16-bit
 * mid value 32768 sitting at the actor's Z), so the actor's Z location
 * is half the range: sample 0 lands at Z 0.  The location's X/Y is the
 * file's north-west corner.
 * Unity (Terrain): size is width x height x length in metres, position
 * its south-west corner (Unity is Y-up and left-handed like Terrane).
 *
 * Splat maps say which layer each channel holds, by the names the
 * export recorded with the file.
 */
#include <stdbool.h>
#include <string.h>

#include "tgformats-private.h"

/* Whether image writer WRITER writes files of FORMAT, with any encoder
 * option ("png16.small" stores what "png16" does). */
static bool
format_is (const char *writer, const char *format)
{
  const char *compression;
  return strcmp (tg__writer_format (writer, &compression), format) == 0;
}

/* Metres one step of the stored value stands for: a 16- or 8-bit code,
 * or 1.0 of a float. */
static double
metres_per_unit (const char *format, const char *units, double height_m)
{
  if (format_is (format, "png16") || strcmp (format, "raw16") == 0)
    return height_m / 65535.0;
  if (format_is (format, "png8"))
    return height_m / 255.0;
  if (strcmp (format, "r32") == 0 && (!units || strcmp (units, "metres") != 0))
    return height_m;
  return 1.0;
}

static json_object *
triple (double a, double b, double c)
{
  return tg__json_numbers ((const double[]) { a, b, c }, 3);
}

static const char *
enum_param (const TgGraph *g, int node, const char *name)
{
  const TgParamValue *v = tg_graph_get_param (g, node, name);
  return v ? v->s : NULL;
}

json_object *
tg__manifest_channels (const TgExportFile *f, bool *oom)
{
  static const char *const letters[4][4] = {
    { "grey" }, { "grey", "alpha" }, { "R", "G", "B" }, { "R", "G", "B", "A" },
  };
  json_object *o;

  *oom = false;
  if (!f->channel_names || f->n_channel_names < 1 || f->n_channel_names > 4)
    return NULL;
  o = json_object_new_object ();
  for (int c = 0; o && c < f->n_channel_names; c++)
    {
      const char *name = f->channel_names[c], *key = letters[f->n_channel_names - 1][c];
      /* A channel past the last layer holds none (its weights are 0): null. */
      bool ok = name && name[0] ? tg__json_add (o, key, json_object_new_string (name))
                                : json_object_object_add (o, key, NULL) == 0;
      if (!ok)
        {
          json_object_put (o);
          o = NULL;
        }
    }
  *oom = o == NULL;
  return o;
}

json_object *
tg__manifest_heightmap (const TgGraph *g, const TgExportFile *f, const TgRegion *r, bool *oom)
{
  const TgWorld *w = tg_graph_world_const (g);
  int node = f->node_id ? tg_graph_find_node (g, f->node_id) : -1;
  const TgNodeDesc *d = node >= 0 ? tg_graph_node_desc (g, node) : NULL;
  json_object *o, *unity, *unreal;
  double H = w->height_m, cell = r->cell;
  double x0 = tg_region_x (r, 0), z_north = tg_region_z (r, 0);
  double z_south = tg_region_z (r, r->height - 1);
  bool ok;

  *oom = false;
  if (!d || strcmp (d->type, "export.heightmap") != 0 || !f->format)
    return NULL;
  o = json_object_new_object ();
  ok = o && tg__json_add (o, "metres_per_sample", json_object_new_double (cell))
       && tg__json_add (o, "height_range_m", tg__json_numbers ((const double[]) { 0.0, H }, 2))
       && tg__json_add (o, "metres_per_unit",
                        json_object_new_double (
                          metres_per_unit (f->format, enum_param (g, node, "units"), H)))
       && tg__json_add (o, "rows",
                        json_object_new_string (f->south_first ? "south_first" : "north_first"));
  /* Each object is attached before it is filled: O owns it from then. */
  if (ok && !f->south_first
      && (format_is (f->format, "png16") || strcmp (f->format, "raw16") == 0))
    /* 0.0 - z: no "-0" for a file whose north edge is z = 0. */
    ok = tg__json_add (o, "unreal", unreal = json_object_new_object ())
         && tg__json_add (unreal, "location_cm",
                          triple (x0 * 100.0, 0.0 - z_north * 100.0, H * 50.0))
         && tg__json_add (unreal, "scale", triple (cell * 100.0, cell * 100.0, H * 100.0 / 512.0));
  ok = ok && tg__json_add (o, "unity", unity = json_object_new_object ())
       && tg__json_add (unity, "terrain_size_m",
                        triple ((r->width - 1) * cell, H, (r->height - 1) * cell))
       && tg__json_add (unity, "position_m", triple (x0, 0.0, z_south));
  if (!ok)
    {
      json_object_put (o);
      *oom = true;
      return NULL;
    }
  return o;
}
