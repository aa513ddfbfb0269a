/* Tests for filter.blur and filter.warp: the blur of a hard step equals
 * the discrete Gaussian sum computed here in double, constants and planes
 * pass through, the same radius in metres gives the same result at two
 * resolutions; the warp with neutral maps is the identity bit for bit,
 * full-scale maps shift by exactly amount_m east or north, fractional
 * shifts interpolate; both give identical bytes for any thread count and
 * for tiles versus the whole map, and reject reaches wider than the cap. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <tgformats/tgformats.h>
#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtest.h"

static const char *
fmt (double v)
{
  static char buf[8][64];
  static int k;
  char *b = buf[k++ & 7];

  snprintf (b, 64, "%.17g", v);
  return b;
}

/* --- filter.blur ------------------------------------------------------------------ */

/* A hard west-east step: 0 west of x = 0, 1 from it on (select.height on
 * a ramp with no falloff), over a 2000 m world of RES samples. */
static TgGraph *
step_graph (int res)
{
  TgGraph *g = new_graph (2000, 400, res);
  int n;

  add_node (g, "ramp", "gen.gradient");
  n = add_node (g, "step", "select.height");
  SET (g, n, "min_height", "0.5");
  SET (g, n, "falloff", "0");
  add_link (g, "ramp", "height", "step", "height");
  n = add_node (g, "blur", "filter.blur");
  add_link (g, "step", "mask", "blur", "height");
  return g;
}

static void
test_blur_step_matches_gaussian (void)
{
  /* 201 samples, 10 m apart; the step is at column 100.  Radius 300 m:
   * sigma 100 m = 10 samples, 30 taps each side. */
  TgGraph *g = step_graph (201);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *v;
  double w[61], sum = 0.0;

  SET (g, tg_graph_find_node (g, "blur"), "radius_m", "300");
  for (int k = -30; k <= 30; k++)
    sum += w[k + 30] = exp (-0.5 * (k / 10.0) * (k / 10.0));
  v = pull (e, g, "blur", &r);
  if (v)
    {
      double worst = 0.0;
      for (int i = 40; i < 160; i++)
        {
          /* Column i sees the step where i + k >= 100. */
          double want = 0.0;
          for (int k = -30; k <= 30; k++)
            if (i + k >= 100)
              want += w[k + 30] / sum;
          for (int j = 0; j < r.height; j++)
            worst = fmax (worst, fabs (at (v, i, j) - want));
        }
      TG_CHECK_MSG (worst < 2e-6, "off the discrete Gaussian by %g", worst);
      /* Far from the step nothing changes; at it, about half. */
      TG_CHECK (at (v, 60, 3) == 0.0f);
      TG_CHECK_NEAR (at (v, 140, 3), 1.0, 1e-6);
      TG_CHECK_NEAR (at (v, 100, 3), 0.5 + 0.5 * w[30] / sum, 2e-6);
      /* One sigma past the step: close to the normal CDF at 1 (0.841). */
      TG_CHECK_NEAR (at (v, 110, 3), 0.8413, 0.03);
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_blur_same_in_metres_at_two_resolutions (void)
{
  float a[3] = { 0 }, b[3] = { 0 };

  for (int k = 0; k < 2; k++)
    {
      int res = k == 0 ? 201 : 801, s = k == 0 ? 1 : 4;
      TgGraph *g = step_graph (res);
      TgEngine *e = new_engine (2);
      TgRegion r = world_region (g);
      TgValue *v;
      float *dst = k == 0 ? a : b;

      SET (g, tg_graph_find_node (g, "blur"), "radius_m", "300");
      v = pull (e, g, "blur", &r);
      if (v)
        {
          /* 50 m west, 50 m east and 150 m east of the step. */
          dst[0] = at (v, 95 * s, 1);
          dst[1] = at (v, 105 * s, 1);
          dst[2] = at (v, 115 * s, 1);
          tg_value_unref (v);
        }
      tg_engine_free (e);
      tg_graph_free (g);
    }
  for (int q = 0; q < 3; q++)
    TG_CHECK_MSG (fabs (a[q] - b[q]) < 0.03, "point %d: %g at 201, %g at 801", q, a[q], b[q]);
}

static void
test_blur_constant_and_plane (void)
{
  TgGraph *g = new_graph (1000, 1000, 101);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g), inner;
  TgValue *v, *in;
  int n = add_node (g, "c", "gen.constant"), b;

  SET (g, n, "value", "0.37");
  b = add_node (g, "blur", "filter.blur");
  SET (g, b, "radius_m", "120");
  add_link (g, "c", "height", "blur", "height");
  v = pull (e, g, "blur", &r);
  if (v)
    {
      double worst = 0.0;
      for (uint64_t k = 0; k < tg_region_samples (&r); k++)
        worst = fmax (worst, fabs (v->data[k] - 0.37));
      TG_CHECK_MSG (worst < 1e-6, "constant moved by %g", worst);
      tg_value_unref (v);
    }
  /* A plane (away from the clamped world edge) stays the same plane:
   * the kernel is symmetric. */
  n = add_node (g, "plane", "gen.gradient");
  SET (g, n, "angle_deg", "30");
  tg_graph_remove_link (g, tg_graph_input_link (g, b, 0));
  add_link (g, "plane", "height", "blur", "height");
  inner = tg_region_window (&r, 13, 13, 75, 75);
  v = pull (e, g, "blur", &inner);
  in = pull (e, g, "plane", &inner);
  if (v && in)
    {
      double worst = 0.0;
      for (uint64_t k = 0; k < tg_region_samples (&inner); k++)
        worst = fmax (worst, fabs (v->data[k] - in->data[k]));
      TG_CHECK_MSG (worst < 2e-6, "plane moved by %g", worst);
    }
  if (v)
    tg_value_unref (v);
  if (in)
    tg_value_unref (in);
  /* Radius 0 is the identity. */
  SET (g, b, "radius_m", "0");
  v = pull (e, g, "blur", &r);
  in = pull (e, g, "plane", &r);
  if (v && in)
    TG_CHECK (memcmp (v->data, in->data, sizeof (float) * tg_region_samples (&r)) == 0);
  if (v)
    tg_value_unref (v);
  if (in)
    tg_value_unref (in);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* --- filter.warp ---------------------------------------------------------------------- */

/* A ramp rising towards ANGLE, warped by two constant maps. 101 samples
 * over 1000 m: 10 m a sample. */
static TgGraph *
warp_graph (double angle, double dx, double dy, double amount_m)
{
  TgGraph *g = new_graph (1000, 1000, 101);
  int n;

  n = add_node (g, "ramp", "gen.gradient");
  SET (g, n, "angle_deg", fmt (angle));
  n = add_node (g, "dx", "gen.constant");
  SET (g, n, "value", fmt (dx));
  n = add_node (g, "dy", "gen.constant");
  SET (g, n, "value", fmt (dy));
  n = add_node (g, "warp", "filter.warp");
  SET (g, n, "amount_m", fmt (amount_m));
  add_link (g, "ramp", "height", "warp", "height");
  add_link (g, "dx", "height", "warp", "dx");
  add_link (g, "dy", "height", "warp", "dy");
  return g;
}

/* Largest |warp(i, j) - ramp(i + SI, j + SJ)| over samples whose source is
 * inside the map by MARGIN. */
static double
shift_error (const TgValue *w, const TgValue *in, double si, double sj, int margin)
{
  double worst = 0.0;

  for (int j = margin; j < w->region.height - margin; j++)
    for (int i = margin; i < w->region.width - margin; i++)
      {
        double x = i + si, y = j + sj;
        int x0 = (int) floor (x), y0 = (int) floor (y);
        double fx = x - x0, fy = y - y0;
        double top = at (in, x0, y0) + (at (in, x0 + 1, y0) - at (in, x0, y0)) * fx;
        double bot = at (in, x0, y0 + 1) + (at (in, x0 + 1, y0 + 1) - at (in, x0, y0 + 1)) * fx;
        worst = fmax (worst, fabs (at (w, i, j) - (top + (bot - top) * fy)));
      }
  return worst;
}

static void
test_warp_shifts (void)
{
  static const struct
  {
    double angle, dx, dy, amount, si, sj;
  } cases[] = {
    { 30.0, 0.5, 0.5, 100.0, 0.0, 0.0 },     /* neutral */
    { 0.0, 1.0, 0.5, 100.0, 10.0, 0.0 },     /* reads 100 m east */
    { 0.0, 0.0, 0.5, 100.0, -10.0, 0.0 },    /* 100 m west */
    { 90.0, 0.5, 1.0, 100.0, 0.0, -10.0 },   /* 100 m north = 10 rows up */
    { 90.0, 0.5, 0.25, 100.0, 0.0, 5.0 },    /* 50 m south */
    { 30.0, 0.75, 0.875, 25.0, 1.25, -1.875 }, /* fractional, both ways */
  };

  for (int c = 0; c < TG_N_ELEMENTS (cases); c++)
    {
      TgGraph *g = warp_graph (cases[c].angle, cases[c].dx, cases[c].dy, cases[c].amount);
      TgEngine *e = new_engine (2);
      TgRegion r = world_region (g);
      TgValue *w = pull (e, g, "warp", &r), *in = pull (e, g, "ramp", &r);
      if (w && in)
        {
          double err = shift_error (w, in, cases[c].si, cases[c].sj, 12);
          TG_CHECK_MSG (err < 1e-6, "case %d: off by %g", c, err);
          if (c == 0)
            TG_CHECK (memcmp (w->data, in->data, sizeof (float) * tg_region_samples (&r)) == 0);
        }
      if (w)
        tg_value_unref (w);
      if (in)
        tg_value_unref (in);
      tg_engine_free (e);
      tg_graph_free (g);
    }
}

/* --- determinism and tiling --------------------------------------------------------------- */

static TgGraph *
noisy_graph (const char *type)
{
  TgGraph *g = new_graph (3000, 2000, 241);
  int n = add_node (g, "noise", "noise.fbm");

  SET (g, n, "scale_m", "500");
  n = add_node (g, "nx", "noise.fbm");
  SET (g, n, "seed", "5");
  n = add_node (g, "ny", "noise.fbm");
  SET (g, n, "seed", "6");
  n = add_node (g, "f", type);
  add_link (g, "noise", "height", "f", "height");
  if (strcmp (type, "filter.warp") == 0)
    {
      SET (g, n, "amount_m", "137");
      add_link (g, "nx", "height", "f", "dx");
      add_link (g, "ny", "height", "f", "dy");
    }
  else
    SET (g, n, "radius_m", "170");
  return g;
}

static void
test_threads_and_tiles (void)
{
  static const char *types[] = { "filter.blur", "filter.warp" };

  for (int t = 0; t < 2; t++)
    {
      TgGraph *g = noisy_graph (types[t]);
      TgEngine *e1 = new_engine (1), *e3 = new_engine (3);
      TgRegion r = world_region (g);
      TgValue *a = pull (e1, g, "f", &r), *b = pull (e3, g, "f", &r);

      if (a && b)
        TG_CHECK_MSG (memcmp (a->data, b->data, sizeof (float) * tg_region_samples (&r)) == 0,
                      "%s differs between 1 and 3 threads", types[t]);
      for (int k = 0; k < 3 && a; k++)
        {
          TgRegion win = k == 0   ? tg_region_window (&r, 0, 0, 50, 40)
                         : k == 1 ? tg_region_window (&r, 100, 70, 93, 61)
                                  : tg_region_window (&r, 200, 141, 41, 20);
          TgValue *w = pull (e3, g, "f", &win);
          if (w)
            {
              TG_CHECK_MSG (same_window (a, w), "%s: tile %d differs", types[t], k);
              tg_value_unref (w);
            }
        }
      if (a)
        tg_value_unref (a);
      if (b)
        tg_value_unref (b);
      tg_engine_free (e1);
      tg_engine_free (e3);
      tg_graph_free (g);
    }
}

static void
test_reach_too_wide_fails (void)
{
  /* 12.5 m a sample: 20 km is 1600 samples, over the 1024 cap. */
  static const char *types[] = { "filter.blur", "filter.warp" };

  for (int t = 0; t < 2; t++)
    {
      TgGraph *g = noisy_graph (types[t]);
      TgEngine *e = new_engine (1);
      TgRegion r = world_region (g);
      TgError err = { 0 };
      const char *param = t == 0 ? "radius_m" : "amount_m";

      SET (g, tg_graph_find_node (g, "f"), param, "20000");
      TG_CHECK (pull_err (e, g, "f", &r, &err) == NULL);
      TG_CHECK_STR_CONTAINS (err.message, param);
      TG_CHECK_STR_CONTAINS (err.message, "\"f\"");
      TG_CHECK_STR_CONTAINS (err.message, "at most 1024");
      TG_CHECK (set_param (g, tg_graph_find_node (g, "f"), param, "-1") < 0);
      tg_engine_free (e);
      tg_graph_free (g);
    }
}

int
main (void)
{
  if (tg_formats_init () != 0)
    return 1;
  TG_RUN (test_blur_step_matches_gaussian);
  TG_RUN (test_blur_same_in_metres_at_two_resolutions);
  TG_RUN (test_blur_constant_and_plane);
  TG_RUN (test_warp_shifts);
  TG_RUN (test_threads_and_tiles);
  TG_RUN (test_reach_too_wide_fails);
  return tgtest_result ();
}
