/* Tests for select.height, select.slope, select.aspect, select.curvature
 * and math.mask_combine: analytic surfaces (a plane of known slope gives
 * its angle at any resolution and in any direction, a cone's aspect is
 * the outward direction, a plane has no curvature, a hill is convex on top
 * and concave at its foot), the band's exact falloff values, identical
 * bytes for any thread count and for a tile versus the same window of the
 * whole map, and errors that name the parameter. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgformats/tgformats.h>
#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtest.h"

static double
smoothstep (double t)
{
  t = t < 0 ? 0 : (t > 1 ? 1 : t);
  return t * t * (3 - 2 * t);
}

static char fmt_buf[8][64];
static int fmt_k;

static const char *
fmt (double v)
{
  char *b = fmt_buf[fmt_k++ & 7];
  snprintf (b, 64, "%.17g", v);
  return b;
}

/* --- select.slope ------------------------------------------------------------ */

/* A plane rising towards ANGLE_DEG (gen.gradient's convention) over an
 * SX x SZ world, with world.height_m chosen so its slope is SLOPE_DEG.
 * The gradient spans the world's extent along its direction. */
static TgGraph *
plane_graph (double sx, double sz, int res, double angle_deg, double slope_deg)
{
  TgGraph *g = new_graph (sx, sz, res);
  double a = angle_deg * M_PI / 180.0;
  double span = fabs (cos (a)) * sx + fabs (sin (a)) * sz;
  int n;

  if (angle_deg == 0.0 || angle_deg == 180.0)
    span = sx;
  else if (angle_deg == 90.0 || angle_deg == 270.0)
    span = sz;
  tg_graph_world (g)->height_m = span * tan (slope_deg * M_PI / 180.0);
  n = add_node (g, "plane", "gen.gradient");
  SET (g, n, "angle_deg", fmt (angle_deg));
  return g;
}

/* Largest |mask - want| over the samples at least MARGIN from the edge. */
static double
interior_error (const TgValue *v, int margin, double want)
{
  double worst = 0.0;

  for (int j = margin; j < v->region.height - margin; j++)
    for (int i = margin; i < v->region.width - margin; i++)
      worst = fmax (worst, fabs (at (v, i, j) - want));
  return worst;
}

static void
test_slope_plane_any_resolution (void)
{
  static const int res[] = { 17, 129, 1025 };
  static const double angles[] = { 0.0, 90.0, 30.0, 225.0 };
  static const double slopes[] = { 30.0, 12.5, 60.0 };

  for (int a = 0; a < 4; a++)
    for (int s = 0; s < 3; s++)
      for (int k = 0; k < 3; k++)
        {
          TgGraph *g = plane_graph (1000, 1200, res[k], angles[a], slopes[s]);
          TgEngine *e = new_engine (2);
          TgRegion r = world_region (g);
          TgValue *v;
          int n = add_node (g, "sel", "select.slope");

          /* A band 5 degrees above the slope with a 10 degree falloff:
           * the mask is smoothstep (0.5) = 0.5, and moves 0.15 per
           * degree of error. */
          SET (g, n, "min_slope_deg", fmt (slopes[s] + 5.0));
          SET (g, n, "max_slope_deg", "90");
          SET (g, n, "falloff_deg", "10");
          add_link (g, "plane", "height", "sel", "height");
          v = pull (e, g, "sel", &r);
          if (v)
            {
              /* 5e-4 in the mask is 0.003 degrees: what float heights
               * allow at 1025 samples, where neighbours differ by 1e-3.
               * Edge samples see the gradient clamped outside the world,
               * hence the margin. */
              double err = interior_error (v, 2, 0.5);
              TG_CHECK_MSG (err < 5e-4, "angle %g slope %g res %d: off by %g", angles[a],
                            slopes[s], res[k], err);
              tg_value_unref (v);
            }
          tg_engine_free (e);
          tg_graph_free (g);
        }
}

static void
test_slope_band (void)
{
  TgGraph *g = plane_graph (1000, 1000, 65, 0.0, 30.0);
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgValue *v;
  int n = add_node (g, "sel", "select.slope");

  add_link (g, "plane", "height", "sel", "height");
  /* Hard edges either side of 30 degrees. */
  SET (g, n, "falloff_deg", "0");
  SET (g, n, "min_slope_deg", "29.99");
  SET (g, n, "max_slope_deg", "30.01");
  v = pull (e, g, "sel", &r);
  if (v)
    {
      TG_CHECK (interior_error (v, 1, 1.0) == 0.0);
      tg_value_unref (v);
    }
  SET (g, n, "min_slope_deg", "30.02");
  SET (g, n, "max_slope_deg", "45");
  v = pull (e, g, "sel", &r);
  if (v)
    {
      TG_CHECK (interior_error (v, 1, 0.0) == 0.0);
      tg_value_unref (v);
    }
  /* Above the band: the falloff on the high side. 30 = 20 + 10 * 0.5. */
  SET (g, n, "min_slope_deg", "0");
  SET (g, n, "max_slope_deg", "25");
  SET (g, n, "falloff_deg", "10");
  v = pull (e, g, "sel", &r);
  if (v)
    {
      TG_CHECK (interior_error (v, 1, smoothstep (0.5)) < 1e-4);
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

/* select.slope tests most samples against tan^2 of its bounds instead of
 * taking the arctangent: on rough ground and for bands with open, closed,
 * hard and soft edges, every interior sample must still be the band of
 * atan (|gradient|) to the bit. */
static void
test_slope_shortcut_is_exact (void)
{
  static const char *const bands[][3] = {
    { "30", "90", "6" }, { "40", "90", "8" },  { "24", "50", "5" }, { "0", "20", "10" },
    { "0", "90", "0" },  { "35", "35", "0" },  { "90", "90", "3" }, { "10", "60", "0" },
    { "0", "0", "45" },  { "45", "89.5", "30" },
  };
  TgGraph *g = new_graph (1000, 1000, 257);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  int h = add_node (g, "ground", "noise.fbm"), n = add_node (g, "sel", "select.slope");
  TgValue *ground;
  double scale;

  tg_graph_world (g)->height_m = 900;
  SET (g, h, "scale_m", "300");
  SET (g, h, "octaves", "8");
  add_link (g, "ground", "height", "sel", "height");
  ground = pull (e, g, "ground", &r);
  scale = 900.0 / (2.0 * r.cell);
  for (size_t b = 0; ground && b < sizeof bands / sizeof bands[0]; b++)
    {
      double lo = atof (bands[b][0]), hi = atof (bands[b][1]), fall = atof (bands[b][2]);
      TgValue *v;
      long bad = 0;
      SET (g, n, "min_slope_deg", bands[b][0]);
      SET (g, n, "max_slope_deg", bands[b][1]);
      SET (g, n, "falloff_deg", bands[b][2]);
      v = pull (e, g, "sel", &r);
      if (!v)
        continue;
      for (int j = 1; j < r.height - 1; j++)
        for (int i = 1; i < r.width - 1; i++)
          {
            double gx = ((double) at (ground, i + 1, j) - (double) at (ground, i - 1, j)) * scale;
            double gz = ((double) at (ground, i, j - 1) - (double) at (ground, i, j + 1)) * scale;
            double x = atan (sqrt (gx * gx + gz * gz)) * (180.0 / M_PI), want;
            if (x < lo)
              want = fall > 0.0 ? smoothstep (1.0 - (lo - x) / fall) : 0.0;
            else if (x > hi)
              want = fall > 0.0 ? smoothstep (1.0 - (x - hi) / fall) : 0.0;
            else
              want = 1.0;
            bad += at (v, i, j) != (float) want;
          }
      if (bad)
        printf ("  band %s..%s falloff %s: %ld samples differ\n", bands[b][0], bands[b][1],
                bands[b][2], bad);
      TG_CHECK (bad == 0);
      tg_value_unref (v);
    }
  tg_value_unref (ground);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* --- select.aspect ---------------------------------------------------------------- */

static void
test_aspect_compass (void)
{
  /* The plane rises towards ANGLE (counter-clockwise from east), so it
   * faces the opposite way; the compass aspect is clockwise from north. */
  static const struct
  {
    double rise_ccw_east, facing_compass;
  } cases[] = {
    { 0.0, 270.0 },   /* rises east: faces west */
    { 90.0, 180.0 },  /* rises north: faces south */
    { 180.0, 90.0 },  /* rises west: faces east */
    { 270.0, 0.0 },   /* rises south: faces north */
    { 45.0, 225.0 },  /* rises north-east: faces south-west */
  };

  for (int c = 0; c < TG_N_ELEMENTS (cases); c++)
    {
      TgGraph *g = plane_graph (1000, 1000, 33, cases[c].rise_ccw_east, 20.0);
      TgEngine *e = new_engine (2);
      TgRegion r = world_region (g);
      TgValue *v;
      int n = add_node (g, "asp", "select.aspect");

      add_link (g, "plane", "height", "asp", "height");
      /* Looking 45 degrees off with a 90 degree spread: 0.5. */
      SET (g, n, "direction_deg", fmt (fmod (cases[c].facing_compass + 45.0, 360.0)));
      SET (g, n, "spread_deg", "90");
      v = pull (e, g, "asp", &r);
      if (v)
        {
          double err = interior_error (v, 2, 0.5);
          TG_CHECK_MSG (err < 1e-5, "rise %g: off by %g", cases[c].rise_ccw_east, err);
          tg_value_unref (v);
        }
      /* Straight at it: 1; straight away from it: 0. */
      SET (g, n, "direction_deg", fmt (cases[c].facing_compass));
      v = pull (e, g, "asp", &r);
      if (v)
        {
          TG_CHECK (interior_error (v, 2, 1.0) < 1e-6);
          tg_value_unref (v);
        }
      SET (g, n, "direction_deg", fmt (fmod (cases[c].facing_compass + 180.0, 360.0)));
      v = pull (e, g, "asp", &r);
      if (v)
        {
          TG_CHECK (interior_error (v, 2, 0.0) == 0.0);
          tg_value_unref (v);
        }
      tg_engine_free (e);
      tg_graph_free (g);
    }
}

static void
test_aspect_cone (void)
{
  /* A radial hill centred off the origin: at every sample on its flank
   * the ground faces away from the centre, compass atan2 (dx, dz). */
  TgGraph *g = new_graph (2000, 2000, 401);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  int n = add_node (g, "cone", "gen.shape"), a;
  int checked = 0, bad = 0;

  SET (g, n, "radius_m", "900");
  SET (g, n, "falloff_m", "900");
  SET (g, n, "center_m", "100,-50");
  tg_graph_world (g)->height_m = 500;
  a = add_node (g, "asp", "select.aspect");
  SET (g, a, "spread_deg", "90");
  SET (g, a, "min_slope_deg", "0");
  add_link (g, "cone", "height", "asp", "height");

  for (int d = 0; d < 360; d += 30)
    {
      TgValue *v;
      /* Ask for D + 45: wherever the true aspect is D, the mask is 0.5. */
      SET (g, a, "direction_deg", fmt (fmod (d + 45.0, 360.0)));
      v = pull (e, g, "asp", &r);
      if (!v)
        continue;
      /* Points 300 m and 600 m out from the centre in compass direction D,
       * snapped to the lattice; compare with the analytic aspect there. */
      for (int k = 1; k <= 2; k++)
        {
          double rad = d * M_PI / 180.0;
          double x = 100 + 300.0 * k * sin (rad), z = -50 + 300.0 * k * cos (rad);
          int i = (int) lround ((x + 1000) / 5.0), j = (int) lround ((1000 - z) / 5.0);
          double sx = tg_region_x (&r, i) - 100, sz = tg_region_z (&r, j) + 50;
          double true_deg = atan2 (sx, sz) * 180.0 / M_PI;
          double off = fmod (d + 45.0 - true_deg + 720.0, 360.0);
          double want = smoothstep (1.0 - (off > 180 ? 360 - off : off) / 90.0);
          checked++;
          /* 0.01 in the mask is 0.6 degrees. */
          if (fabs (at (v, i, j) - want) > 0.01)
            {
              bad++;
              fprintf (stderr, "  d=%d k=%d: %g want %g\n", d, k, at (v, i, j), want);
            }
        }
      tg_value_unref (v);
    }
  TG_CHECK_INT_EQ (checked, 24);
  TG_CHECK_INT_EQ (bad, 0);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* --- select.height ------------------------------------------------------------------- */

static void
test_height_band (void)
{
  /* 9 samples across: the ramp is i / 8, exact in float. */
  TgGraph *g = new_graph (800, 100, 9);
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgValue *v;
  int n;

  add_node (g, "ramp", "gen.gradient");
  n = add_node (g, "sel", "select.height");
  add_link (g, "ramp", "height", "sel", "height");
  SET (g, n, "min_height", "0.5");
  SET (g, n, "max_height", "0.625");
  SET (g, n, "falloff", "0.25");
  v = pull (e, g, "sel", &r);
  if (v)
    {
      TG_CHECK (at (v, 1, 0) == 0.0f);  /* 0.125: beyond the falloff */
      TG_CHECK (at (v, 2, 0) == 0.0f);  /* 0.25: at its far end */
      TG_CHECK (at (v, 3, 0) == 0.5f);  /* halfway down the falloff */
      TG_CHECK (at (v, 4, 0) == 1.0f);
      TG_CHECK (at (v, 5, 0) == 1.0f);
      TG_CHECK (at (v, 6, 0) == 0.5f);
      TG_CHECK (at (v, 7, 0) == 0.0f);
      tg_value_unref (v);
    }
  /* A range reaching 0 or 1 is open at that end. */
  SET (g, n, "min_height", "0");
  SET (g, n, "max_height", "0.375");
  SET (g, n, "falloff", "0");
  v = pull (e, g, "sel", &r);
  if (v)
    {
      TG_CHECK (at (v, 0, 0) == 1.0f);
      TG_CHECK (at (v, 3, 0) == 1.0f);
      TG_CHECK (at (v, 4, 0) == 0.0f);
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

/* --- select.curvature ------------------------------------------------------------------ */

static void
test_curvature_plane_and_hill (void)
{
  TgGraph *g = plane_graph (2000, 2000, 201, 30.0, 20.0);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g), inner;
  TgValue *v;
  int n = add_node (g, "curv", "select.curvature"), h;

  SET (g, n, "radius_m", "100");
  SET (g, n, "depth_m", "0.5");
  SET (g, n, "mode", "both");
  add_link (g, "plane", "height", "curv", "height");
  /* A plane is its own average: no curvature, away from the clamped
   * world edge (100 m = 10 samples). */
  inner = tg_region_window (&r, 12, 12, r.width - 24, r.height - 24);
  v = pull (e, g, "curv", &inner);
  if (v)
    {
      TG_CHECK_MSG (interior_error (v, 0, 0.0) < 2e-3, "plane curvature %g",
                    interior_error (v, 0, 0.0));
      tg_value_unref (v);
    }

  /* A round hill: convex on top, concave at its foot. */
  h = add_node (g, "hill", "gen.shape");
  SET (g, h, "radius_m", "600");
  SET (g, h, "falloff_m", "500");
  tg_graph_remove_link (g, tg_graph_input_link (g, n, 0));
  add_link (g, "hill", "height", "curv", "height");
  SET (g, n, "radius_m", "200");
  SET (g, n, "depth_m", "20");
  SET (g, n, "mode", "convex");
  v = pull (e, g, "curv", &r);
  if (v)
    {
      /* Centre (100, 100).  The hill's profile is a smoothstep from 100 m
       * (top) to 600 m (foot): its upper half bends down (convex), its
       * lower half bends up (concave).  The top itself sits above the
       * average of its surroundings, which reach down the flank. */
      TG_CHECK_MSG (at (v, 100, 100) > 0.2f, "top %g", at (v, 100, 100));
      TG_CHECK_MSG (at (v, 100 + 20, 100) == 1.0f, "shoulder %g", at (v, 120, 100));
      TG_CHECK (at (v, 100 + 50, 100) == 0.0f);
      tg_value_unref (v);
    }
  SET (g, n, "mode", "concave");
  v = pull (e, g, "curv", &r);
  if (v)
    {
      TG_CHECK (at (v, 100, 100) == 0.0f);
      TG_CHECK (at (v, 100 + 20, 100) == 0.0f);
      TG_CHECK_MSG (at (v, 100 + 50, 100) > 0.5f, "lower flank %g", at (v, 150, 100));
      /* Far out on the flat plain: nothing. */
      TG_CHECK (at (v, 100 + 85, 100) == 0.0f);
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_curvature_resolution_independent (void)
{
  /* The same hill at 201 and 401 samples: the masks at the same world
   * points agree closely (parameters are metres, not samples). */
  float a[2][3];

  for (int k = 0; k < 2; k++)
    {
      int res = k == 0 ? 201 : 401, s = k == 0 ? 1 : 2;
      TgGraph *g = new_graph (2000, 2000, res);
      TgEngine *e = new_engine (2);
      TgRegion r = world_region (g);
      TgValue *v;
      int n;

      tg_graph_world (g)->height_m = 300;
      n = add_node (g, "hill", "gen.shape");
      SET (g, n, "radius_m", "600");
      SET (g, n, "falloff_m", "500");
      n = add_node (g, "curv", "select.curvature");
      SET (g, n, "radius_m", "150");
      SET (g, n, "depth_m", "20");
      SET (g, n, "mode", "both");
      add_link (g, "hill", "height", "curv", "height");
      v = pull (e, g, "curv", &r);
      if (v)
        {
          a[k][0] = at (v, 100 * s + 10 * s, 100 * s);
          a[k][1] = at (v, 100 * s + 30 * s, 100 * s);
          a[k][2] = at (v, 100 * s + 55 * s, 100 * s);
          tg_value_unref (v);
        }
      tg_engine_free (e);
      tg_graph_free (g);
    }
  for (int q = 0; q < 3; q++)
    TG_CHECK_MSG (fabs (a[0][q] - a[1][q]) < 0.03, "point %d: %g at 201, %g at 401", q,
                  a[0][q], a[1][q]);
}

/* --- math.mask_combine ------------------------------------------------------------- */

static void
test_mask_combine (void)
{
  static const struct
  {
    const char *op;
    double a, b, want;
  } cases[] = {
    { "and", 0.25, 0.75, 0.25 },   { "and", 0.75, 0.25, 0.25 },
    { "multiply", 0.5, 0.5, 0.25 }, { "or", 0.25, 0.75, 0.75 },
    { "subtract", 0.5, 0.25, 0.375 }, { "subtract", 1.0, 1.0, 0.0 },
    { "xor", 0.25, 0.75, 0.5 },     { "xor", 1.0, 1.0, 0.0 },
  };
  TgGraph *g = new_graph (100, 100, 5);
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  int na = add_node (g, "a", "gen.constant"), nb = add_node (g, "b", "gen.constant");
  int n = add_node (g, "m", "math.mask_combine");

  add_link (g, "a", "height", "m", "a");
  add_link (g, "b", "height", "m", "b");
  for (int c = 0; c < TG_N_ELEMENTS (cases); c++)
    {
      TgValue *v;
      SET (g, na, "value", fmt (cases[c].a));
      SET (g, nb, "value", fmt (cases[c].b));
      SET (g, n, "op", cases[c].op);
      v = pull (e, g, "m", &r);
      if (v)
        {
          TG_CHECK_MSG (interior_error (v, 0, cases[c].want) == 0.0, "%s(%g, %g) = %g",
                        cases[c].op, cases[c].a, cases[c].b, at (v, 0, 0));
          tg_value_unref (v);
        }
    }
  /* Out-of-range inputs are clamped to masks first: a = 1 + 1 = 2 -> 1. */
  {
    TgValue *v;
    int big = add_node (g, "big", "math.combine");
    SET (g, big, "clamp", "false");
    add_link (g, "a", "height", "big", "a");
    add_link (g, "a", "height", "big", "b");
    tg_graph_remove_link (g, tg_graph_input_link (g, n, 0));
    add_link (g, "big", "height", "m", "a");
    SET (g, na, "value", "1");
    SET (g, nb, "value", "0");
    SET (g, n, "op", "or");
    v = pull (e, g, "m", &r);
    if (v)
      {
        TG_CHECK (at (v, 2, 2) == 1.0f);
        tg_value_unref (v);
      }
  }
  tg_engine_free (e);
  tg_graph_free (g);
}

/* --- determinism and tiling ---------------------------------------------------------- */

/* Terrain with detail at every scale, into selector TYPE. */
static TgGraph *
noise_graph (const char *type, int res)
{
  TgGraph *g = new_graph (2000, 1500, res);
  int n = add_node (g, "noise", "noise.fbm");

  SET (g, n, "scale_m", "400");
  tg_graph_world (g)->height_m = 400;
  add_node (g, "sel", type);
  add_link (g, "noise", "height", "sel", "height");
  return g;
}

static void
test_threads_and_tiles (void)
{
  static const char *types[] = { "select.slope", "select.aspect", "select.curvature",
                                 "select.height" };

  for (int t = 0; t < TG_N_ELEMENTS (types); t++)
    {
      TgGraph *g = noise_graph (types[t], 301);
      TgEngine *e1 = new_engine (1), *e3 = new_engine (3);
      TgRegion r = world_region (g), win;
      TgValue *a, *b, *w;

      if (strcmp (types[t], "select.curvature") == 0)
        SET (g, tg_graph_find_node (g, "sel"), "radius_m", "40");
      a = pull (e1, g, "sel", &r);
      b = pull (e3, g, "sel", &r);
      if (a && b)
        TG_CHECK_MSG (memcmp (a->data, b->data, sizeof (float) * tg_region_samples (&r)) == 0,
                      "%s differs between 1 and 3 threads", types[t]);
      /* A tile touching the west edge and one in the middle. */
      if (a)
        tg_value_unref (a);
      a = pull (e3, g, "sel", &r);
      for (int k = 0; k < 2 && a; k++)
        {
          win = k == 0 ? tg_region_window (&r, 0, 37, 64, 50)
                       : tg_region_window (&r, 131, 99, 77, 41);
          w = pull (e1, g, "sel", &win);
          if (w)
            {
              TG_CHECK_MSG (same_window (a, w), "%s: tile %d differs from the whole map",
                            types[t], k);
              tg_value_unref (w);
            }
        }
      /* Masks stay in 0..1. */
      if (a)
        {
          int out = 0;
          for (uint64_t k = 0; k < tg_region_samples (&r); k++)
            out += !(a->data[k] >= 0.0f && a->data[k] <= 1.0f);
          TG_CHECK_INT_EQ (out, 0);
          tg_value_unref (a);
        }
      if (b)
        tg_value_unref (b);
      tg_engine_free (e1);
      tg_engine_free (e3);
      tg_graph_free (g);
    }
}

/* --- errors ------------------------------------------------------------------------------ */

static void
test_errors_name_the_parameter (void)
{
  TgGraph *g = noise_graph ("select.slope", 65);
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgError err = { 0 };
  TgValue *v;
  int n = tg_graph_find_node (g, "sel"), c;

  SET (g, n, "min_slope_deg", "50");
  SET (g, n, "max_slope_deg", "40");
  v = pull_err (e, g, "sel", &r, &err);
  TG_CHECK (v == NULL);
  TG_CHECK_STR_CONTAINS (err.path, "params.max_slope_deg");
  TG_CHECK_STR_CONTAINS (err.message, "below minimum");
  TG_CHECK (tg_graph_validate (g, &err) < 0);
  TG_CHECK_STR_CONTAINS (err.path, "nodes[1].params.max_slope_deg");
  TG_CHECK (set_param (g, n, "min_slope_deg", "91") < 0);

  c = add_node (g, "h", "select.height");
  add_link (g, "noise", "height", "h", "height");
  SET (g, c, "min_height", "0.7");
  SET (g, c, "max_height", "0.2");
  memset (&err, 0, sizeof err);
  TG_CHECK (pull_err (e, g, "h", &r, &err) == NULL);
  TG_CHECK_STR_CONTAINS (err.path, "params.max_height");

  /* A radius too wide for the resolution: fails naming the parameter
   * (2000 m at 31 m per sample is fine; 1e5 m is 3200 samples). */
  c = add_node (g, "c", "select.curvature");
  add_link (g, "noise", "height", "c", "height");
  SET (g, c, "radius_m", "100000");
  memset (&err, 0, sizeof err);
  TG_CHECK (pull_err (e, g, "c", &r, &err) == NULL);
  TG_CHECK_STR_CONTAINS (err.message, "radius_m");
  TG_CHECK_STR_CONTAINS (err.message, "\"c\"");
  TG_CHECK (set_param (g, c, "depth_m", "0") < 0);
  tg_engine_free (e);
  tg_graph_free (g);
}

int
main (void)
{
  if (tg_formats_init () != 0)
    return 1;
  TG_RUN (test_slope_plane_any_resolution);
  TG_RUN (test_slope_band);
  TG_RUN (test_slope_shortcut_is_exact);
  TG_RUN (test_aspect_compass);
  TG_RUN (test_aspect_cone);
  TG_RUN (test_height_band);
  TG_RUN (test_curvature_plane_and_hill);
  TG_RUN (test_curvature_resolution_independent);
  TG_RUN (test_mask_combine);
  TG_RUN (test_threads_and_tiles);
  TG_RUN (test_errors_name_the_parameter);
  return tgtest_result ();
}
