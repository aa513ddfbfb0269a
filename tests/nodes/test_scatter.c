/* Tests for scatter.colormap, scatter.mask, points.filter and
 * points.merge: the image convention (a patch painted in the north-west
 * puts instances in the north-west), colour tolerance in both metrics,
 * the brightness chance against its expected fraction (3 sigma), the
 * minimum spacing by brute force (global and per prototype), snapping to
 * the terrain and the slope and height filters recomputed here
 * independently, rgb channel mode, the mask density of the Poisson-disk
 * scatter, identical output for 1 and 4 threads and across runs, the
 * filter and merge operators, errors that name the parameter, and tiled
 * builds (any tiling, tiles smaller than the halo) giving the whole
 * world's instances bit for bit. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgformats/tgformats.h>
#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtest.h"
#include "tgtiled_test.h"

/* --- a painted map, made here ------------------------------------------------------ */

enum
{
  PAINT_BLACK,
  PAINT_NW_RED,  /* red over x < -W/4, z > +D/4 (the north-west corner) */
  PAINT_UNIFORM, /* the colour parameter everywhere */
  PAINT_STRIPES, /* red, green, blue thirds from west to east */
};

typedef struct
{
  int pattern;
  double color[4];
} PaintParams;

static const TgParamDesc paint_params[] = {
  TG_PARAM_INT (PaintParams, pattern, .label = "Pattern", .def = 0, .min = 0, .max = 3,
                .help = "Which map"),
  TG_PARAM_COLOR (PaintParams, color, .label = "Colour", .def_v = { 1, 0, 0, 1 },
                  .help = "Uniform colour"),
};

static const TgPortDesc paint_outputs[] = {
  { .name = "image", .type = TG_TYPE_IMAGE, .label = "Image" },
};

static int
paint_eval (TgEvalCtx *c)
{
  const PaintParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  const TgWorld *w = tg_eval_world (c);
  TgValue *out = tg_eval_new_output (c, 0, 4);

  for (int j = 0; j < r->height; j++)
    {
      float *row = tg_value_row (out, j);
      double z = tg_region_z (r, j);
      for (int i = 0; i < r->width; i++)
        {
          double x = tg_region_x (r, i);
          float px[4] = { 0, 0, 0, 1 };
          switch (p->pattern)
            {
            case PAINT_NW_RED:
              if (x < -0.25 * w->size_x && z > 0.25 * w->size_z)
                px[0] = 1.0f;
              break;
            case PAINT_UNIFORM:
              for (int k = 0; k < 4; k++)
                px[k] = (float) p->color[k];
              break;
            case PAINT_STRIPES:
              px[x < -w->size_x / 6 ? 0 : (x < w->size_x / 6 ? 1 : 2)] = 1.0f;
              break;
            default:
              break;
            }
          memcpy (row + 4 * i, px, sizeof px);
        }
    }
  return 0;
}

static const TgNodeDesc paint_desc = {
  .type = "test.paint",
  .category = TG_CATEGORY_OTHER,
  .label = "Painted map",
  .help = "Scatter tests only",
  .outputs = paint_outputs,
  .n_outputs = 1,
  TG_PARAMS (PaintParams, paint_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = paint_eval,
  .version = 1,
};
TG_NODE_REGISTER (paint_desc);

/* A mask: 1 west of x = 0, VALUE east of it. */
typedef struct
{
  double value;
} HalfParams;

static const TgParamDesc half_params[] = {
  TG_PARAM_FLOAT (HalfParams, value, .label = "East", .def = 0.25, .min = 0, .max = 1,
                  .help = "Mask east of x = 0"),
};

static const TgPortDesc half_outputs[] = {
  { .name = "mask", .type = TG_TYPE_MASK, .label = "Mask" },
};

static int
half_eval (TgEvalCtx *c)
{
  const HalfParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  TgValue *out = tg_eval_new_output (c, 0, 1);

  for (int j = 0; j < r->height; j++)
    for (int i = 0; i < r->width; i++)
      tg_value_row (out, j)[i] = tg_region_x (r, i) < 0.0 ? 1.0f : (float) p->value;
  return 0;
}

static const TgNodeDesc half_desc = {
  .type = "test.half",
  .category = TG_CATEGORY_OTHER,
  .label = "Half mask",
  .help = "Scatter tests only",
  .outputs = half_outputs,
  .n_outputs = 1,
  TG_PARAMS (HalfParams, half_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = half_eval,
  .version = 1,
};
TG_NODE_REGISTER (half_desc);

/* --- helpers ---------------------------------------------------------------------- */

static TgEngine *engine1, *engine4;

/* A 1000 x 1000 m world (height 200 m) with a painted map "paint" and a
 * scatter.colormap "sc" reading it. */
static TgGraph *
colormap_graph (int pattern, const char *color)
{
  TgGraph *g = new_graph (1000, 1000, 257);
  char num[16];

  tg_graph_world (g)->height_m = 200.0;
  tg_graph_world (g)->seed = 5;
  add_node (g, "paint", "test.paint");
  snprintf (num, sizeof num, "%d", pattern);
  SET (g, 0, "pattern", num);
  if (color)
    SET (g, 0, "color", color);
  add_node (g, "sc", "scatter.colormap");
  add_link (g, "paint", "image", "sc", "image");
  return g;
}

static int
node (TgGraph *g, const char *id)
{
  return tg_graph_find_node (g, id);
}

/* Output 0 of ID on ENGINE; the caller unrefs. */
static TgValue *
pull_points (TgEngine *e, TgGraph *g, const char *id)
{
  TgRegion r = world_region (g);
  TgValue *v = pull (e, g, id, &r);

  TG_CHECK (v == NULL || tg_value_points (v) != NULL);
  return v;
}

static TgHash
points_hash (const TgPoints *p)
{
  TgHasher h;

  tg_hasher_init (&h);
  tg_hasher_u64 (&h, (uint64_t) p->n);
  tg_hasher_bytes (&h, p->position, sizeof (float) * 3 * (size_t) p->n);
  tg_hasher_bytes (&h, p->rotation, sizeof (float) * 4 * (size_t) p->n);
  tg_hasher_bytes (&h, p->scale, sizeof (float) * 3 * (size_t) p->n);
  tg_hasher_bytes (&h, p->proto, sizeof (int32_t) * (size_t) p->n);
  for (int k = 0; k < p->n_protos; k++)
    tg_hasher_str (&h, p->proto_names[k]);
  return tg_hasher_finish (&h);
}

/* Smallest distance between two instances (of the same prototype when
 * SAME_PROTO), by brute force; stops early once a pair is closer than
 * STOP. */
static double
min_distance_until (const TgPoints *p, bool same_proto, double stop)
{
  double best = INFINITY;

  for (int64_t i = 0; i < p->n; i++)
    for (int64_t j = i + 1; j < p->n; j++)
      {
        double dx, dz;
        if (same_proto && p->proto[i] != p->proto[j])
          continue;
        dx = (double) p->position[3 * i] - p->position[3 * j];
        dz = (double) p->position[3 * i + 2] - p->position[3 * j + 2];
        best = fmin (best, sqrt (dx * dx + dz * dz));
        if (best < stop)
          return best;
      }
  return best;
}

static double
min_distance (const TgPoints *p, bool same_proto)
{
  return min_distance_until (p, same_proto, -1.0);
}

static int64_t
count_proto (const TgPoints *p, const char *name)
{
  int64_t n = 0;
  int k = 0;

  while (k < p->n_protos && strcmp (p->proto_names[k], name) != 0)
    k++;
  for (int64_t i = 0; i < p->n; i++)
    n += p->proto[i] == k;
  return n;
}

/* The cell of H under (X, Z), recomputed here: its north-west sample
 * (*I, *J) and the position in it (*FX east, *FY south). */
static void
cell_at (const TgValue *h, double x, double z, int *i, int *j, double *fx, double *fy)
{
  const TgRegion *r = &h->region;
  double u = (x - tg_region_x (r, 0)) / r->cell, v = (tg_region_z (r, 0) - z) / r->cell;

  u = fmin (fmax (u, 0.0), r->width - 1);
  v = fmin (fmax (v, 0.0), r->height - 1);
  *i = (int) u < r->width - 1 ? (int) u : r->width - 2;
  *j = (int) v < r->height - 1 ? (int) v : r->height - 2;
  *fx = u - *i;
  *fy = v - *j;
}

/* Terrain under (X, Z), recomputed here: the plane of the heightfield
 * mesh's triangle (cells cut from north-east to south-west corner), and
 * its gradient. */
static void
terrain_at (const TgValue *h, double height_m, double x, double z, double *y, double *tan_s)
{
  int i, j;
  double fx, fy, a, b, c, d, gx, gz;

  cell_at (h, x, z, &i, &j, &fx, &fy);
  a = at (h, i, j) * height_m;
  b = at (h, i + 1, j) * height_m;
  c = at (h, i, j + 1) * height_m;
  d = at (h, i + 1, j + 1) * height_m;
  if (fx + fy <= 1.0)
    gx = b - a, gz = c - a, *y = a + gx * fx + gz * fy;
  else
    gx = d - c, gz = d - b, *y = b + (c - b) * fy + gx * (fx - 1.0 + fy);
  *tan_s = sqrt (gx * gx + gz * gz) / h->region.cell;
}

/* The bilinear surface through the samples under (X, Z): where the
 * instances stood before they were snapped to the mesh. */
static double
bilinear_at (const TgValue *h, double height_m, double x, double z)
{
  int i, j;
  double fx, fy;

  cell_at (h, x, z, &i, &j, &fx, &fy);
  return ((1 - fy) * ((1 - fx) * at (h, i, j) + fx * at (h, i + 1, j))
          + fy * ((1 - fx) * at (h, i, j + 1) + fx * at (h, i + 1, j + 1)))
         * height_m;
}

/* Whether two instance lists are the same bytes. */
static bool
points_equal (const TgPoints *a, const TgPoints *b)
{
  if (a->n != b->n || a->n_protos != b->n_protos)
    return false;
  for (int k = 0; k < a->n_protos; k++)
    if (strcmp (a->proto_names[k], b->proto_names[k]) != 0)
      return false;
  return memcmp (a->position, b->position, sizeof (float) * 3 * (size_t) a->n) == 0
         && memcmp (a->rotation, b->rotation, sizeof (float) * 4 * (size_t) a->n) == 0
         && memcmp (a->scale, b->scale, sizeof (float) * 3 * (size_t) a->n) == 0
         && memcmp (a->proto, b->proto, sizeof (int32_t) * (size_t) a->n) == 0;
}

/* ID's instances built in tiles (1 x 1 up to tiles narrower than the
 * step's halo) are the whole world's; returns the whole count. */
static int64_t
check_tiled_equals_whole (TgGraph *g, const char *id)
{
  static const int tilings[][2] = { { 1, 1 }, { 2, 2 }, { 3, 2 }, { 4, 4 },
                                    { 7, 5 }, { 1, 9 }, { 41, 3 } };
  TgValue *whole = pull_points (engine4, g, id);
  int64_t n = whole ? tg_value_points (whole)->n : -1;

  for (int k = 0; whole && k < (int) (sizeof tilings / sizeof tilings[0]); k++)
    {
      TgValue *tiled = NULL;
      TgError err = { 0 };
      int rc = tgtest_tiled_pull (k % 2 ? engine1 : engine4, g, node (g, id), 0,
                                  tilings[k][0], tilings[k][1], &tiled, NULL, &err);
      TG_CHECK_MSG (rc == 0, "%s %dx%d: %s", id, tilings[k][0], tilings[k][1], err.message);
      if (rc == 0)
        TG_CHECK_MSG (points_equal (tg_value_points (whole), tg_value_points (tiled)),
                      "%s in %dx%d tiles: %lld instances, whole %lld, or other bytes", id,
                      tilings[k][0], tilings[k][1], (long long) tg_value_points (tiled)->n,
                      (long long) n);
      tg_value_unref (tiled);
    }
  tg_value_unref (whole);
  return n;
}

/* --- scatter.colormap --------------------------------------------------------------- */

static void
test_nw_patch_lands_in_the_north_west (void)
{
  TgGraph *g = colormap_graph (PAINT_NW_RED, NULL);
  TgValue *v;
  const TgPoints *p;
  double cell = 1000.0 / 256;

  SET (g, 1, "cell_m", "5");
  v = pull_points (engine4, g, "sc");
  p = tg_value_points (v);
  TG_CHECK_INT_EQ (p->n_protos, 3);
  TG_CHECK_STR_CONTAINS (p->proto_names[0], "grass");
  /* The patch is 250 x 250 m: about 2500 cells of 25 m^2, all matching. */
  TG_CHECK_MSG (p->n > 2300 && p->n < 2700, "%lld instances", (long long) p->n);
  for (int64_t i = 0; i < p->n; i++)
    {
      float x = p->position[3 * i], z = p->position[3 * i + 2];
      /* Nearest map sample: at most half a map cell past the patch. */
      if (!(x < 0 && z > 0 && x <= -250 + 0.5 * cell + 1e-3 && z >= 250 - 0.5 * cell - 1e-3))
        {
          TG_CHECK_MSG (0, "instance %lld at (%g, %g) is outside the painted north-west patch",
                        (long long) i, x, z);
          break;
        }
      TG_CHECK_INT_EQ (p->proto[i], 0);
    }
  tg_value_unref (v);
  tg_graph_free (g);
}

static int64_t
uniform_count (const char *color, const char *metric, const char *extra_name,
               const char *extra_text)
{
  TgGraph *g = colormap_graph (PAINT_UNIFORM, color);
  TgValue *v;
  int64_t n;

  SET (g, 1, "cell_m", "10");
  SET (g, 1, "metric", metric);
  if (extra_name)
    SET (g, 1, extra_name, extra_text);
  v = pull_points (engine4, g, "sc");
  n = v ? tg_value_points (v)->n : -1;
  tg_value_unref (v);
  tg_graph_free (g);
  return n;
}

static void
test_tolerance_matches_inside_and_not_outside (void)
{
  /* 100 x 100 cells; base chance 1: every cell or none. */
  TG_CHECK_INT_EQ (uniform_count ("#ff0000", "max_channel", NULL, NULL), 10000);
  /* 0.1 away on each channel: inside 0.12 by max channel ... */
  TG_CHECK_INT_EQ (uniform_count ("#e61a1a", "max_channel", NULL, NULL), 10000);
  /* ... but 0.17 away in RGB space, outside for euclidean. */
  TG_CHECK_INT_EQ (uniform_count ("#e61a1a", "euclidean", NULL, NULL), 0);
  /* 0.15 away on red alone: outside either way. */
  TG_CHECK_INT_EQ (uniform_count ("#d90000", "max_channel", NULL, NULL), 0);
  TG_CHECK_INT_EQ (uniform_count ("#d90000", "euclidean", NULL, NULL), 0);
  /* A wider per-entry tolerance takes it in, for that entry only. */
  TG_CHECK_INT_EQ (uniform_count ("#d90000", "max_channel", "palette",
                                  "name=grass|color=#ff0000|tolerance=0.2; "
                                  "name=rock|color=#0000ff"),
                   10000);
  /* A colour no entry is near places nothing (early skip or not). */
  TG_CHECK_INT_EQ (uniform_count ("#808080", "max_channel", NULL, NULL), 0);
  TG_CHECK_INT_EQ (uniform_count ("#000000", "max_channel", NULL, NULL), 0);
}

/* Uniform paint COLOR with luminance_chance in MODE (and PALETTE, or the
 * default one) at base chance 0.8 places 0.8 x FACTOR of the 250,000
 * candidates, within 3 sigma. */
static void
check_luminance_fraction (const char *color, const char *palette, const char *mode,
                          double factor)
{
  TgGraph *g = colormap_graph (PAINT_UNIFORM, color);
  TgValue *v;
  double n = 250000.0, prob = 0.8 * factor, sigma, got;

  SET (g, 1, "cell_m", "2");
  SET (g, 1, "luminance_chance", "true");
  SET (g, 1, "luminance_mode", mode);
  SET (g, 1, "base_chance", "0.8");
  if (palette)
    SET (g, 1, "palette", palette);
  v = pull_points (engine4, g, "sc");
  got = (double) tg_value_points (v)->n;
  sigma = sqrt (n * prob * (1.0 - prob));
  TG_CHECK_MSG (fabs (got - n * prob) <= 3.0 * sigma + 1.0,
                "%s on %s (%s): %g placed, expected %g +- %g", color,
                palette ? palette : "the default palette", mode, got, n * prob, 3.0 * sigma);
  tg_value_unref (v);
  tg_graph_free (g);
}

/* Luma (the default, the seed's Color.get_luminance): colours match as
 * they do without it, and the chance is multiplied by the pixel's
 * Rec. 709 luminance, so full red places 21% of the chance and mid grey
 * half of it; relative mode puts mid grey on a mid-grey palette colour at
 * the full chance. */
static void
test_luminance_chance_luma (void)
{
  TgGraph *g;
  TgValue *v;

  check_luminance_fraction ("#ff0000", NULL, "luma", 0.2126);
  check_luminance_fraction ("#00ff00", NULL, "luma", 0.7152);
  check_luminance_fraction ("#0000ff", NULL, "luma", 0.0722);
  check_luminance_fraction ("#00f000", NULL, "luma", 0.7152 * 240.0 / 255.0);
  check_luminance_fraction ("#808080", "name=stone|color=#808080", "luma", 128.0 / 255.0);
  check_luminance_fraction ("#808080", "name=stone|color=#808080", "relative", 1.0);

  /* Half-bright red is not red: it matches nothing, as without luminance. */
  g = colormap_graph (PAINT_UNIFORM, "#800000");
  SET (g, 1, "luminance_chance", "true");
  v = pull_points (engine4, g, "sc");
  TG_CHECK_INT_EQ (tg_value_points (v)->n, 0);
  tg_value_unref (v);
  tg_graph_free (g);
}

/* Relative: colours match by hue, and the chance follows the brightness
 * relative to the palette colour. */
static void
test_luminance_chance_follows_brightness (void)
{
  check_luminance_fraction ("#800000", NULL, "relative", 128.0 / 255.0);
  check_luminance_fraction ("#400000", NULL, "relative", 64.0 / 255.0);
  check_luminance_fraction ("#008000", NULL, "relative", 128.0 / 255.0);
  check_luminance_fraction ("#ff0000", NULL, "relative", 1.0);
  /* Without it, half-bright red is simply not red. */
  TG_CHECK_INT_EQ (uniform_count ("#800000", "max_channel", NULL, NULL), 0);
}

static void
test_min_spacing_holds (void)
{
  TgGraph *g = colormap_graph (PAINT_STRIPES, NULL);
  TgValue *v, *v0;
  const TgPoints *p;
  double d;

  SET (g, 1, "cell_m", "3");
  SET (g, 1, "warp_m", "6");
  SET (g, 1, "warp_scale_m", "40");
  v0 = pull_points (engine4, g, "sc");
  SET (g, 1, "min_spacing_m", "7.5");
  v = pull_points (engine4, g, "sc");
  p = tg_value_points (v);
  d = min_distance (p, false);
  TG_CHECK_MSG (d >= 7.5, "closest pair %g m apart, spacing 7.5 m", d);
  TG_CHECK_MSG (p->n > 5000 && p->n < tg_value_points (v0)->n,
                "%lld instances with spacing, %lld without", (long long) p->n,
                (long long) tg_value_points (v0)->n);
  /* Without a spacing, warped candidates do come closer. */
  TG_CHECK (min_distance_until (tg_value_points (v0), false, 7.5) < 7.5);
  tg_value_unref (v);

  /* Per prototype: the same kind keeps its distance, different kinds may
   * meet at the stripe borders. */
  SET (g, 1, "spacing_mode", "per_prototype");
  v = pull_points (engine4, g, "sc");
  p = tg_value_points (v);
  TG_CHECK_INT_EQ (p->n_protos, 3);
  TG_CHECK (count_proto (p, "grass") > 0 && count_proto (p, "tree") > 0
            && count_proto (p, "rock") > 0);
  d = min_distance (p, true);
  TG_CHECK_MSG (d >= 7.5, "closest pair of one prototype %g m apart", d);
  TG_CHECK (min_distance_until (p, false, 7.5) < 7.5);
  tg_value_unref (v);
  tg_value_unref (v0);
  tg_graph_free (g);
}

static void
test_same_output_for_any_thread_count_and_run (void)
{
  TgGraph *g = colormap_graph (PAINT_STRIPES, NULL);
  TgValue *a, *b, *c;
  TgHash ha, hb, hc;

  SET (g, 1, "cell_m", "1.5");
  SET (g, 1, "warp_m", "4");
  SET (g, 1, "min_spacing_m", "2");
  SET (g, 1, "seed", "77");
  a = pull_points (engine1, g, "sc");
  b = pull_points (engine4, g, "sc");
  tg_engine_clear_cache (engine4);
  c = pull_points (engine4, g, "sc");
  ha = points_hash (tg_value_points (a));
  hb = points_hash (tg_value_points (b));
  hc = points_hash (tg_value_points (c));
  TG_CHECK (tg_value_points (a)->n > 10000);
  TG_CHECK (ha.a == hb.a && ha.b == hb.b);
  TG_CHECK (hb.a == hc.a && hb.b == hc.b);
  tg_value_unref (a);
  tg_value_unref (b);
  tg_value_unref (c);
  /* Another seed gives other instances. */
  SET (g, 1, "seed", "78");
  a = pull_points (engine4, g, "sc");
  hc = points_hash (tg_value_points (a));
  TG_CHECK (!(ha.a == hc.a && ha.b == hc.b));
  tg_value_unref (a);
  tg_graph_free (g);
}

/* The colormap graph over a noise terrain "hills" linked as height. */
static TgGraph *
terrain_graph (void)
{
  TgGraph *g = colormap_graph (PAINT_UNIFORM, "#ff0000");

  add_node (g, "hills", "noise.fbm");
  SET (g, node (g, "hills"), "scale_m", "300");
  SET (g, node (g, "hills"), "octaves", "5");
  add_link (g, "hills", "height", "sc", "height");
  SET (g, 1, "cell_m", "4");
  return g;
}

static void
test_snapped_instances_sit_on_the_terrain (void)
{
  TgGraph *g = terrain_graph ();
  TgRegion r = world_region (g);
  TgValue *h = pull (engine4, g, "hills", &r);
  TgValue *v = pull_points (engine4, g, "sc");
  const TgPoints *p = tg_value_points (v);
  double worst = 0.0, lo = INFINITY, hi = -INFINITY;

  TG_CHECK (p->n > 50000);
  for (int64_t i = 0; i < p->n; i++)
    {
      double y, t;
      terrain_at (h, 200.0, p->position[3 * i], p->position[3 * i + 2], &y, &t);
      worst = fmax (worst, fabs (y - p->position[3 * i + 1]));
      lo = fmin (lo, y);
      hi = fmax (hi, y);
    }
  TG_CHECK_MSG (worst <= 1e-3, "an instance is %g m off the terrain", worst);
  TG_CHECK (hi - lo > 20.0);
  /* Without snapping they sit at 0 m. */
  SET (g, 1, "snap", "false");
  tg_value_unref (v);
  v = pull_points (engine4, g, "sc");
  p = tg_value_points (v);
  for (int64_t i = 0; i < p->n; i++)
    if (p->position[3 * i + 1] != 0.0f)
      {
        TG_CHECK_MSG (0, "unsnapped instance %lld at y = %g", (long long) i,
                      p->position[3 * i + 1]);
        break;
      }
  tg_value_unref (v);
  tg_value_unref (h);
  tg_graph_free (g);
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

/* Height of MESH's full-resolution (lod 0) triangles at (X, Z), found by
 * their own positions: BIN holds, per lattice cell of R, the triangles
 * whose footprint touches it (START[k] .. START[k + 1] in TRI, as chunk
 * << 32 | first index).  NAN where no triangle covers the point. */
static double
mesh_height_at (const TgMesh *mesh, const TgRegion *r, const int64_t *start, const int64_t *tri,
                double x, double z)
{
  int col = (int) floor ((x - tg_region_x (r, 0)) / r->cell);
  int row = (int) floor ((tg_region_z (r, 0) - z) / r->cell);

  col = col < 0 ? 0 : (col > r->width - 2 ? r->width - 2 : col);
  row = row < 0 ? 0 : (row > r->height - 2 ? r->height - 2 : row);
  for (int64_t k = start[row * (r->width - 1) + col]; k < start[row * (r->width - 1) + col + 1];
       k++)
    {
      const TgMeshChunk *ch = &mesh->chunks[tri[k] >> 32];
      const uint32_t *t = ch->indices + (tri[k] & 0xffffffff);
      const float *p0 = ch->positions + 3 * t[0], *p1 = ch->positions + 3 * t[1];
      const float *p2 = ch->positions + 3 * t[2];
      double ax = p1[0] - p0[0], az = p1[2] - p0[2], bx = p2[0] - p0[0], bz = p2[2] - p0[2];
      double det = ax * bz - az * bx, px = x - p0[0], pz = z - p0[2];
      double s = (px * bz - pz * bx) / det, u = (ax * pz - az * px) / det, eps = 1e-9;
      if (s >= -eps && u >= -eps && s + u <= 1.0 + eps)
        return p0[1] + s * ((double) p1[1] - p0[1]) + u * ((double) p2[1] - p0[1]);
    }
  return NAN;
}

/* Snapped instances sit on the triangles mesh.heightfield writes for the
 * same terrain (lod 0 of a two-level mesh, skirts left out), where the
 * bilinear surface they used to sit on floats or sinks by decimetres. */
static void
test_snapped_instances_sit_on_the_exported_mesh (void)
{
  TgGraph *g = terrain_graph ();
  TgRegion r = world_region (g);
  TgValue *h = pull (engine4, g, "hills", &r), *m, *v;
  const TgMesh *mesh;
  const TgPoints *p;
  int64_t n_cells = (int64_t) (r.width - 1) * (r.height - 1), n_tri = 0, *start, *tri = NULL, *fill;
  double *gap, *was, worst = 0.0;

  add_node (g, "hf", "mesh.heightfield");
  SET (g, node (g, "hf"), "lods", "2");
  add_link (g, "hills", "height", "hf", "height");
  m = pull (engine4, g, "hf", &r);
  v = pull_points (engine4, g, "sc");
  mesh = tg_value_mesh (m);
  p = tg_value_points (v);
  TG_CHECK (mesh && p->n > 50000);

  /* Bin the lod 0 triangles with a footprint (the skirts have none) by cell. */
  start = calloc ((size_t) n_cells + 1, sizeof (int64_t));
  fill = calloc ((size_t) n_cells + 1, sizeof (int64_t));
  for (int pass = 0; pass < 2; pass++)
    {
      for (int ci = 0; ci < mesh->n_chunks; ci++)
        {
          const TgMeshChunk *ch = &mesh->chunks[ci];
          if (ch->lod != 0)
            continue;
          for (int64_t t = 0; t < ch->n_indices; t += 3)
            {
              const float *q[3];
              double x0 = INFINITY, x1 = -INFINITY, z0 = INFINITY, z1 = -INFINITY;
              for (int e = 0; e < 3; e++)
                {
                  q[e] = ch->positions + 3 * ch->indices[t + e];
                  x0 = fmin (x0, q[e][0]), x1 = fmax (x1, q[e][0]);
                  z0 = fmin (z0, q[e][2]), z1 = fmax (z1, q[e][2]);
                }
              if (fabs ((q[1][0] - q[0][0]) * (q[2][2] - q[0][2])
                        - (q[1][2] - q[0][2]) * (q[2][0] - q[0][0]))
                  < 1e-6)
                continue;
              int c0 = (int) floor ((x0 - tg_region_x (&r, 0)) / r.cell + 0.01);
              int c1 = (int) floor ((x1 - tg_region_x (&r, 0)) / r.cell - 0.01);
              int r0 = (int) floor ((tg_region_z (&r, 0) - z1) / r.cell + 0.01);
              int r1 = (int) floor ((tg_region_z (&r, 0) - z0) / r.cell - 0.01);
              for (int row = r0; row <= r1; row++)
                for (int col = c0; col <= c1; col++)
                  {
                    int64_t cell = (int64_t) row * (r.width - 1) + col;
                    if (pass == 0)
                      start[cell + 1]++;
                    else
                      tri[fill[cell]++] = (int64_t) ci << 32 | t;
                  }
            }
        }
      if (pass == 0)
        {
          for (int64_t k = 0; k < n_cells; k++)
            start[k + 1] += start[k];
          n_tri = start[n_cells];
          memcpy (fill, start, sizeof (int64_t) * (size_t) n_cells);
          tri = malloc (sizeof (int64_t) * (size_t) n_tri);
        }
    }
  TG_CHECK_MSG (n_tri == 2 * n_cells, "%lld lod 0 triangles binned for %lld cells",
                (long long) n_tri, (long long) n_cells);

  gap = malloc (sizeof (double) * (size_t) p->n);
  was = malloc (sizeof (double) * (size_t) p->n);
  for (int64_t i = 0; i < p->n; i++)
    {
      const float *pos = p->position + 3 * i;
      double y = mesh_height_at (mesh, &r, start, tri, pos[0], pos[2]);
      TG_CHECK_MSG (!isnan (y), "no triangle under instance %lld at (%g, %g)", (long long) i,
                    pos[0], pos[2]);
      gap[i] = fabs (pos[1] - y);
      was[i] = fabs (bilinear_at (h, 200.0, pos[0], pos[2]) - y);
      worst = fmax (worst, gap[i]);
    }
  qsort (gap, (size_t) p->n, sizeof (double), cmp_double);
  qsort (was, (size_t) p->n, sizeof (double), cmp_double);
  printf ("# %lld instances against the mesh: bilinear snap max %.4f m, p99 %.4f m; "
          "now max %.2g m, p99 %.2g m\n",
          (long long) p->n, was[p->n - 1], was[p->n * 99 / 100], gap[p->n - 1],
          gap[p->n * 99 / 100]);
  /* Float rounding of a height of up to 200 m and of the vertex positions. */
  TG_CHECK_MSG (worst <= 1e-4, "an instance is %g m off the exported mesh", worst);
  /* The old bilinear snap was off by more: the test can tell. */
  TG_CHECK (was[p->n - 1] > 0.01);
  free (gap);
  free (was);
  free (start);
  free (fill);
  free (tri);
  tg_value_unref (v);
  tg_value_unref (m);
  tg_value_unref (h);
  tg_graph_free (g);
}

static void
test_slope_and_height_filters (void)
{
  TgGraph *g = terrain_graph ();
  TgRegion r = world_region (g);
  TgValue *h = pull (engine4, g, "hills", &r);
  TgValue *all = pull_points (engine4, g, "sc"), *v;
  const TgPoints *p;
  double limit = tan (12.0 * M_PI / 180.0), steepest = 0.0;
  int64_t steep_in_all = 0;

  for (int64_t i = 0; i < tg_value_points (all)->n; i++)
    {
      double y, t;
      const float *pos = tg_value_points (all)->position + 3 * i;
      terrain_at (h, 200.0, pos[0], pos[2], &y, &t);
      steep_in_all += t > limit;
    }
  SET (g, 1, "max_slope_deg", "12");
  v = pull_points (engine4, g, "sc");
  p = tg_value_points (v);
  for (int64_t i = 0; i < p->n; i++)
    {
      double y, t;
      terrain_at (h, 200.0, p->position[3 * i], p->position[3 * i + 2], &y, &t);
      steepest = fmax (steepest, t);
    }
  TG_CHECK_MSG (steepest <= limit * (1 + 1e-6), "an instance stands on a %g deg slope",
                atan (steepest) * 180 / M_PI);
  TG_CHECK_MSG (steep_in_all > 1000 && llabs (p->n + steep_in_all - tg_value_points (all)->n) <= 2,
                "%lld kept, %lld steep of %lld", (long long) p->n, (long long) steep_in_all,
                (long long) tg_value_points (all)->n);
  tg_value_unref (v);

  SET (g, 1, "max_slope_deg", "90");
  SET (g, 1, "min_height_m", "90");
  SET (g, 1, "max_height_m", "110");
  v = pull_points (engine4, g, "sc");
  p = tg_value_points (v);
  TG_CHECK (p->n > 1000 && p->n < tg_value_points (all)->n);
  for (int64_t i = 0; i < p->n; i++)
    if (!(p->position[3 * i + 1] >= 90.0f - 1e-3f && p->position[3 * i + 1] <= 110.0f + 1e-3f))
      {
        TG_CHECK_MSG (0, "instance at %g m outside 90..110 m", p->position[3 * i + 1]);
        break;
      }
  tg_value_unref (v);
  tg_value_unref (all);
  tg_value_unref (h);
  tg_graph_free (g);
}

static void
test_transforms_are_yaw_and_scale_in_range (void)
{
  TgGraph *g = colormap_graph (PAINT_UNIFORM, "#ff0000");
  TgValue *v;
  const TgPoints *p;
  double yaw_lo = INFINITY, yaw_hi = -INFINITY;

  SET (g, 1, "cell_m", "10");
  SET (g, 1, "min_yaw_deg", "30");
  SET (g, 1, "max_yaw_deg", "120");
  SET (g, 1, "min_scale", "0.5");
  SET (g, 1, "max_scale", "0.75");
  v = pull_points (engine4, g, "sc");
  p = tg_value_points (v);
  for (int64_t i = 0; i < p->n; i++)
    {
      const float *q = p->rotation + 4 * i, *s = p->scale + 3 * i;
      double yaw = 2.0 * atan2 (q[1], q[3]) * 180.0 / M_PI;
      TG_CHECK (q[0] == 0.0f && q[2] == 0.0f);
      TG_CHECK (fabs (q[1] * q[1] + q[3] * q[3] - 1.0) < 1e-6);
      TG_CHECK (s[0] >= 0.5f && s[0] <= 0.75f && s[0] == s[1] && s[1] == s[2]);
      yaw_lo = fmin (yaw_lo, yaw);
      yaw_hi = fmax (yaw_hi, yaw);
    }
  TG_CHECK_MSG (yaw_lo >= 30 - 1e-3 && yaw_hi <= 120 + 1e-3 && yaw_hi - yaw_lo > 85,
                "yaw %g..%g", yaw_lo, yaw_hi);
  tg_value_unref (v);
  tg_graph_free (g);
}

static void
test_rgb_mode_red_selects_green_density_blue_scale (void)
{
  TgGraph *g = colormap_graph (PAINT_UNIFORM, "#8080ff");
  TgValue *v;
  const TgPoints *p;
  double n = 250000.0, prob = 128.0 / 255.0, sigma = sqrt (n * prob * (1 - prob));

  SET (g, 1, "channel_mode", "rgb");
  SET (g, 1, "cell_m", "2");
  SET (g, 1, "palette", "name=grass|color=#400000; name=bush|color=#800000; "
                        "name=tree|color=#c00000");
  v = pull_points (engine4, g, "sc");
  p = tg_value_points (v);
  TG_CHECK_MSG (fabs ((double) p->n - n * prob) <= 3 * sigma, "%lld placed, expected %g",
                (long long) p->n, n * prob);
  TG_CHECK_INT_EQ (count_proto (p, "bush"), p->n);
  for (int64_t i = 0; i < p->n; i++)
    if (p->scale[3 * i] != 1.2f)
      {
        TG_CHECK_MSG (0, "blue 1.0 should give the largest scale, got %g", p->scale[3 * i]);
        break;
      }
  tg_value_unref (v);
  tg_graph_free (g);
}

static void
test_colormap_errors_name_the_parameter (void)
{
  TgGraph *g = colormap_graph (PAINT_UNIFORM, "#ff0000");
  TgRegion r = world_region (g);
  TgError err = { 0 };
  TgValue *v;

  SET (g, 1, "cell_m", "0.01");
  tg_graph_world (g)->size_x = 1e6;
  tg_graph_world (g)->size_z = 1e6;
  v = pull_err (engine4, g, "sc", &r, &err);
  TG_CHECK (v == NULL);
  TG_CHECK_STR_CONTAINS (err.message, "cell_m");
  tg_value_unref (v);
  tg_graph_free (g);

  g = colormap_graph (PAINT_UNIFORM, "#ff0000");
  r = world_region (g);
  SET (g, 1, "min_yaw_deg", "100");
  SET (g, 1, "max_yaw_deg", "10");
  memset (&err, 0, sizeof err);
  v = pull_err (engine4, g, "sc", &r, &err);
  TG_CHECK (v == NULL);
  TG_CHECK_STR_CONTAINS (err.message, "yaw");
  tg_value_unref (v);
  tg_graph_free (g);
}

/* Warped candidates, global and per-prototype spacing, no spacing, the
 * slope limit and snapping: tiles give the whole world's bytes. */
static void
test_colormap_tiled_equals_whole (void)
{
  TgGraph *g = colormap_graph (PAINT_STRIPES, NULL);

  add_node (g, "hills", "noise.fbm");
  SET (g, node (g, "hills"), "scale_m", "300");
  add_link (g, "hills", "height", "sc", "height");
  SET (g, 1, "cell_m", "4");
  SET (g, 1, "warp_m", "6");
  SET (g, 1, "warp_scale_m", "40");
  SET (g, 1, "min_spacing_m", "7.5");
  SET (g, 1, "max_slope_deg", "25");
  TG_CHECK (check_tiled_equals_whole (g, "sc") > 5000);
  SET (g, 1, "spacing_mode", "per_prototype");
  SET (g, 1, "min_spacing_m", "11");
  TG_CHECK (check_tiled_equals_whole (g, "sc") > 3000);
  SET (g, 1, "min_spacing_m", "0");
  SET (g, 1, "cell_m", "6");
  TG_CHECK (check_tiled_equals_whole (g, "sc") > 10000);
  tg_graph_free (g);
}

/* --- scatter.mask ---------------------------------------------------------------- */

static TgGraph *
mask_graph (double east)
{
  TgGraph *g = new_graph (1000, 1000, 129);
  char num[32];

  tg_graph_world (g)->seed = 9;
  add_node (g, "half", "test.half");
  snprintf (num, sizeof num, "%g", east);
  SET (g, 0, "value", num);
  add_node (g, "pd", "scatter.mask");
  add_link (g, "half", "mask", "pd", "mask");
  return g;
}

static void
test_poisson_spacing_and_density (void)
{
  TgGraph *g = mask_graph (0.25);
  TgValue *v, *w;
  const TgPoints *p;
  int64_t west = 0, east = 0;
  double d, ratio;

  SET (g, 1, "min_spacing_m", "6");
  v = pull_points (engine4, g, "pd");
  p = tg_value_points (v);
  d = min_distance (p, false);
  TG_CHECK_MSG (d >= 6.0, "closest Poisson pair %g m apart", d);
  for (int64_t i = 0; i < p->n; i++)
    {
      float x = p->position[3 * i];
      /* Stay clear of the edge's bilinear blend. */
      west += x < -20.0f;
      east += x > 20.0f;
    }
  /* Mask 1 vs 0.25: four times as many in the west (within sampling noise:
   * the east count has a binomial sd of sqrt(N 0.25 0.75)). */
  ratio = (double) west / (double) east;
  TG_CHECK_MSG (west > 5000 && fabs (ratio - 4.0) < 0.4, "%lld west, %lld east: ratio %g",
                (long long) west, (long long) east, ratio);
  TG_CHECK_INT_EQ (p->n_protos, 1);
  TG_CHECK_STR_CONTAINS (p->proto_names[0], "instance");

  /* Same bytes on one thread, and the west half is unchanged when only
   * the east density changes (thinning a fixed set). */
  w = pull_points (engine1, g, "pd");
  TG_CHECK (points_hash (p).a == points_hash (tg_value_points (w)).a);
  tg_value_unref (w);
  SET (g, 0, "value", "0.5");
  w = pull_points (engine4, g, "pd");
  {
    int64_t a = 0, b = 0;
    const TgPoints *q = tg_value_points (w);
    bool same = true;
    for (; a < p->n && b < q->n;)
      {
        if (p->position[3 * a] >= -20.0f)
          a++;
        else if (q->position[3 * b] >= -20.0f)
          b++;
        else
          {
            same &= memcmp (p->position + 3 * a, q->position + 3 * b, 12) == 0;
            a++;
            b++;
          }
      }
    TG_CHECK (same);
    TG_CHECK (q->n > p->n);
  }
  tg_value_unref (w);
  tg_value_unref (v);
  tg_graph_free (g);
}

static void
test_poisson_empty_mask_places_nothing (void)
{
  TgGraph *g = new_graph (1000, 1000, 65);
  TgValue *v;

  add_node (g, "zero", "gen.constant");
  SET (g, 0, "value", "0");
  add_node (g, "pd", "scatter.mask");
  add_link (g, "zero", "height", "pd", "mask");
  v = pull_points (engine4, g, "pd");
  TG_CHECK_INT_EQ (tg_value_points (v)->n, 0);
  TG_CHECK_INT_EQ (tg_value_points (v)->n_protos, 1);
  tg_value_unref (v);
  tg_graph_free (g);
}

/* The Poisson-disk set thinned by a mask and filtered by the terrain,
 * built in tiles, is the whole world's. */
static void
test_poisson_tiled_equals_whole (void)
{
  TgGraph *g = mask_graph (0.25);

  tg_graph_world (g)->height_m = 200.0;
  add_node (g, "hills", "noise.fbm");
  SET (g, node (g, "hills"), "scale_m", "300");
  add_link (g, "hills", "height", "pd", "height");
  SET (g, 1, "min_spacing_m", "9");
  SET (g, 1, "max_slope_deg", "25");
  {
    int64_t n = check_tiled_equals_whole (g, "pd");
    TG_CHECK_MSG (n > 1000, "%lld instances", (long long) n);
  }
  tg_graph_free (g);
}

/* --- points.filter and points.merge ------------------------------------------------ */

static void
test_filter_by_mask_prototype_and_slope (void)
{
  TgGraph *g = colormap_graph (PAINT_STRIPES, NULL);
  TgValue *all, *v;
  const TgPoints *p;
  int64_t grass_west = 0;

  SET (g, 1, "cell_m", "10");
  add_node (g, "half", "test.half");
  SET (g, node (g, "half"), "value", "0");
  add_node (g, "f", "points.filter");
  add_link (g, "sc", "points", "f", "points");
  add_link (g, "half", "mask", "f", "mask");
  all = pull_points (engine4, g, "sc");
  v = pull_points (engine4, g, "f");
  p = tg_value_points (v);
  /* The mask is 1 west of x = 0: only western instances stay. */
  for (int64_t i = 0; i < p->n; i++)
    TG_CHECK (p->position[3 * i] < 0.5f);
  TG_CHECK (p->n > 0 && p->n < tg_value_points (all)->n);
  tg_value_unref (v);

  /* Only trees are filtered: grass and rock pass untouched. */
  SET (g, node (g, "f"), "prototypes", "tree, nothing");
  v = pull_points (engine4, g, "f");
  p = tg_value_points (v);
  TG_CHECK_INT_EQ (count_proto (p, "grass"), count_proto (tg_value_points (all), "grass"));
  TG_CHECK_INT_EQ (count_proto (p, "rock"), count_proto (tg_value_points (all), "rock"));
  TG_CHECK (count_proto (p, "tree") < count_proto (tg_value_points (all), "tree"));
  for (int64_t i = 0; i < p->n; i++)
    grass_west += p->proto[i] == 0;
  TG_CHECK (grass_west > 0);
  tg_value_unref (v);

  /* A slope limit without terrain is refused with a clear message. */
  {
    TgRegion r = world_region (g);
    TgError err = { 0 };
    SET (g, node (g, "f"), "max_slope_deg", "30");
    v = pull_err (engine4, g, "f", &r, &err);
    TG_CHECK (v == NULL);
    TG_CHECK_STR_CONTAINS (err.message, "height input");
    tg_value_unref (v);
  }
  tg_value_unref (all);
  tg_graph_free (g);
}

/* points.filter by a chance mask, the terrain's height and slope, for
 * some prototypes, built in tiles, is the whole world's. */
static void
test_filter_tiled_equals_whole (void)
{
  TgGraph *g = colormap_graph (PAINT_STRIPES, NULL);
  int f;

  tg_graph_world (g)->height_m = 200.0;
  SET (g, 1, "cell_m", "5");
  add_node (g, "hills", "noise.fbm");
  SET (g, node (g, "hills"), "scale_m", "300");
  add_node (g, "half", "test.half");
  SET (g, node (g, "half"), "value", "0.3");
  f = add_node (g, "f", "points.filter");
  add_link (g, "sc", "points", "f", "points");
  add_link (g, "half", "mask", "f", "mask");
  add_link (g, "hills", "height", "f", "height");
  SET (g, f, "mask_mode", "chance");
  SET (g, f, "max_slope_deg", "20");
  SET (g, f, "prototypes", "grass, tree");
  TG_CHECK (check_tiled_equals_whole (g, "f") > 5000);
  tg_graph_free (g);
}

static void
test_merge_matches_prototypes_by_name (void)
{
  TgGraph *g = colormap_graph (PAINT_STRIPES, NULL);
  TgValue *a, *b, *m;
  const TgPoints *pa, *pb, *pm;

  SET (g, 1, "cell_m", "20");
  add_node (g, "sc2", "scatter.colormap");
  add_link (g, "paint", "image", "sc2", "image");
  SET (g, node (g, "sc2"), "cell_m", "25");
  SET (g, node (g, "sc2"), "palette", "name=tree|color=#00ff00; name=stone|color=#0000ff");
  add_node (g, "m", "points.merge");
  add_link (g, "sc", "points", "m", "a");
  add_link (g, "sc2", "points", "m", "b");
  a = pull_points (engine4, g, "sc");
  b = pull_points (engine4, g, "sc2");
  m = pull_points (engine4, g, "m");
  pa = tg_value_points (a);
  pb = tg_value_points (b);
  pm = tg_value_points (m);
  TG_CHECK_INT_EQ (pm->n, pa->n + pb->n);
  TG_CHECK_INT_EQ (pm->n_protos, 4);
  if (pm->n_protos == 4)
    {
      TG_CHECK_STR_CONTAINS (pm->proto_names[3], "stone");
      TG_CHECK_INT_EQ (count_proto (pm, "tree"), count_proto (pa, "tree") + count_proto (pb, "tree"));
      TG_CHECK_INT_EQ (count_proto (pm, "stone"), count_proto (pb, "stone"));
      /* A's instances first, unchanged, then B's. */
      TG_CHECK (memcmp (pm->position, pa->position, sizeof (float) * 3 * (size_t) pa->n) == 0);
      TG_CHECK (memcmp (pm->position + 3 * pa->n, pb->position,
                        sizeof (float) * 3 * (size_t) pb->n) == 0);
    }
  tg_value_unref (a);
  tg_value_unref (b);
  tg_value_unref (m);
  tg_graph_free (g);
}

int
main (void)
{
  tg_formats_init ();
  engine1 = new_engine (1);
  engine4 = new_engine (4);
  TG_RUN (test_nw_patch_lands_in_the_north_west);
  TG_RUN (test_tolerance_matches_inside_and_not_outside);
  TG_RUN (test_luminance_chance_follows_brightness);
  TG_RUN (test_luminance_chance_luma);
  TG_RUN (test_min_spacing_holds);
  TG_RUN (test_same_output_for_any_thread_count_and_run);
  TG_RUN (test_snapped_instances_sit_on_the_terrain);
  TG_RUN (test_snapped_instances_sit_on_the_exported_mesh);
  TG_RUN (test_slope_and_height_filters);
  TG_RUN (test_transforms_are_yaw_and_scale_in_range);
  TG_RUN (test_rgb_mode_red_selects_green_density_blue_scale);
  TG_RUN (test_colormap_errors_name_the_parameter);
  TG_RUN (test_colormap_tiled_equals_whole);
  TG_RUN (test_poisson_spacing_and_density);
  TG_RUN (test_poisson_empty_mask_places_nothing);
  TG_RUN (test_poisson_tiled_equals_whole);
  TG_RUN (test_filter_by_mask_prototype_and_slope);
  TG_RUN (test_filter_tiled_equals_whole);
  TG_RUN (test_merge_matches_prototypes_by_name);
  tg_engine_free (engine1);
  tg_engine_free (engine4);
  return tgtest_result ();
}
