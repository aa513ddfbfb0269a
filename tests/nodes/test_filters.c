/* Tests for filter.remap, filter.clamp, filter.invert, filter.terrace and
 * filter.normalize: values on known inputs, parameter checks that name
 * the parameter, and normalize's exact 0/1 extremes over the whole map for
 * any thread count and any window asked for. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <tgformats/tgformats.h>
#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtiled_test.h"
#include "tgtest.h"

/* --- fixture: a ramp into one filter ----------------------------------------- */

/* RES samples across a 1000 m world: the west-east ramp is i / (RES - 1),
 * exact at 0, 0.25, 0.5, ... when RES - 1 is a multiple of 4. */
typedef struct
{
  TgGraph *g;
  TgEngine *e;
  TgRegion r;
  int f;
  TgValue *in;
} Fixture;

static void
fixture_init (Fixture *fx, const char *type, int res, int threads)
{
  TgRegion full;

  fx->g = new_graph (1000, 1000, res);
  fx->e = new_engine (threads);
  full = world_region (fx->g);
  fx->r = tg_region_window (&full, 0, 0, res, 2); /* two rows suffice */
  add_node (fx->g, "ramp", "gen.gradient");
  fx->f = add_node (fx->g, "f", type);
  add_link (fx->g, "ramp", "height", "f", "height");
  fx->in = pull (fx->e, fx->g, "ramp", &fx->r);
}

static void
fixture_clear (Fixture *fx)
{
  if (fx->in)
    tg_value_unref (fx->in);
  tg_engine_free (fx->e);
  tg_graph_free (fx->g);
}

static TgValue *
pull_f (Fixture *fx)
{
  return pull (fx->e, fx->g, "f", &fx->r);
}

/* --- remap, clamp, invert ------------------------------------------------------- */

static void
test_remap (void)
{
  Fixture fx;
  TgValue *v;
  TgError err = { 0 };

  fixture_init (&fx, "filter.remap", 11, 2);
  /* Defaults are the identity, bit for bit. */
  v = pull_f (&fx);
  if (v && fx.in)
    TG_CHECK (memcmp (v->data, fx.in->data, sizeof (float) * 22) == 0);
  if (v)
    tg_value_unref (v);

  /* 0.2..0.6 onto 1..0 (a reversed range is allowed). */
  SET (fx.g, fx.f, "min_input", "0.2");
  SET (fx.g, fx.f, "max_input", "0.6");
  SET (fx.g, fx.f, "min_output", "1");
  SET (fx.g, fx.f, "max_output", "0");
  v = pull_f (&fx);
  if (v)
    {
      TG_CHECK_NEAR (at (v, 2, 0), 1.0, 1e-6);
      TG_CHECK_NEAR (at (v, 3, 0), 0.75, 1e-6);
      TG_CHECK_NEAR (at (v, 4, 1), 0.5, 1e-6);
      TG_CHECK_NEAR (at (v, 6, 0), 0.0, 1e-6);
      TG_CHECK_NEAR (at (v, 8, 0), -0.5, 1e-6); /* linear, not clamped */
      TG_CHECK_NEAR (at (v, 0, 0), 1.5, 1e-6);
      tg_value_unref (v);
    }
  SET (fx.g, fx.f, "clamp", "true");
  v = pull_f (&fx);
  if (v)
    {
      TG_CHECK (at (v, 8, 0) == 0.0f);
      TG_CHECK (at (v, 0, 0) == 1.0f);
      TG_CHECK_NEAR (at (v, 3, 0), 0.75, 1e-6);
      tg_value_unref (v);
    }

  /* An empty input range is refused, naming the parameter. */
  SET (fx.g, fx.f, "max_input", "0.2");
  v = pull_err (fx.e, fx.g, "f", &fx.r, &err);
  TG_CHECK (v == NULL);
  TG_CHECK_INT_EQ (err.code, TG_ERANGE);
  TG_CHECK_STR_CONTAINS (err.path, "params.max_input");
  TG_CHECK_STR_CONTAINS (err.message, "differ");
  if (v)
    tg_value_unref (v);
  fixture_clear (&fx);
}

static void
test_clamp (void)
{
  Fixture fx;
  TgValue *v;
  TgError err = { 0 };

  fixture_init (&fx, "filter.clamp", 11, 2);
  SET (fx.g, fx.f, "min_height", "0.3");
  SET (fx.g, fx.f, "max_height", "0.7");
  v = pull_f (&fx);
  if (v && fx.in)
    {
      TG_CHECK (at (v, 0, 0) == 0.3f);
      TG_CHECK (at (v, 1, 0) == 0.3f);
      TG_CHECK (at (v, 5, 0) == at (fx.in, 5, 0));
      TG_CHECK (at (v, 6, 1) == at (fx.in, 6, 1));
      TG_CHECK (at (v, 9, 0) == 0.7f);
      TG_CHECK (at (v, 10, 0) == 0.7f);
    }
  if (v)
    tg_value_unref (v);
  SET (fx.g, fx.f, "min_height", "0.8");
  v = pull_err (fx.e, fx.g, "f", &fx.r, &err);
  TG_CHECK (v == NULL);
  TG_CHECK_STR_CONTAINS (err.path, "params.max_height");
  if (v)
    tg_value_unref (v);
  fixture_clear (&fx);
}

static void
test_invert (void)
{
  Fixture fx;
  TgValue *v;

  fixture_init (&fx, "filter.invert", 11, 2);
  v = pull_f (&fx);
  if (v && fx.in)
    {
      int bad = 0;
      TG_CHECK (at (v, 0, 0) == 1.0f);
      TG_CHECK (at (v, 10, 0) == 0.0f);
      TG_CHECK (at (v, 5, 0) == 0.5f);
      for (int i = 0; i < 11; i++)
        bad += at (v, i, 0) != (float) (1.0 - at (fx.in, i, 0));
      TG_CHECK_INT_EQ (bad, 0);
    }
  if (v)
    tg_value_unref (v);
  /* About a pivot: 0.3 stays, 0.8 goes to -0.2. */
  SET (fx.g, fx.f, "pivot", "0.3");
  v = pull_f (&fx);
  if (v)
    {
      TG_CHECK_NEAR (at (v, 3, 0), 0.3, 1e-7);
      TG_CHECK_NEAR (at (v, 8, 0), -0.2, 1e-7);
      TG_CHECK_NEAR (at (v, 0, 0), 0.6, 1e-7);
      tg_value_unref (v);
    }
  fixture_clear (&fx);
}

/* --- terrace ------------------------------------------------------------------ */

#define DENSE 4097 /* ramp value i / 4096 */

static void
test_terrace_hard_steps (void)
{
  Fixture fx;
  TgValue *v;

  fixture_init (&fx, "filter.terrace", DENSE, 2);
  SET (fx.g, fx.f, "steps", "4");
  SET (fx.g, fx.f, "sharpness", "1");
  v = pull_f (&fx);
  if (v && fx.in)
    {
      int bad = 0;
      for (int i = 0; i < DENSE; i++)
        bad += at (v, i, 0) != (float) (floor ((double) at (fx.in, i, 0) * 4) / 4);
      TG_CHECK_INT_EQ (bad, 0);
      TG_CHECK (at (v, 1023, 0) == 0.0f);
      TG_CHECK (at (v, 1024, 0) == 0.25f);
      TG_CHECK (at (v, 4095, 0) == 0.75f);
      TG_CHECK (at (v, 4096, 0) == 1.0f);
    }
  if (v)
    tg_value_unref (v);
  fixture_clear (&fx);
}

static void
test_terrace_smooth_and_half (void)
{
  Fixture fx;
  TgValue *v;

  fixture_init (&fx, "filter.terrace", DENSE, 2);
  SET (fx.g, fx.f, "steps", "4");
  /* Sharpness 0: a smoothstep across each whole step. */
  SET (fx.g, fx.f, "sharpness", "0");
  v = pull_f (&fx);
  if (v)
    {
      int down = 0;
      double jump = 0;
      TG_CHECK (at (v, 512, 0) == 0.125f);          /* mid step: smoothstep(0.5) */
      TG_CHECK (at (v, 256, 0) == 0.0390625f);      /* 0.25 * smoothstep(0.25) */
      TG_CHECK (at (v, 1024, 0) == 0.25f);
      TG_CHECK (at (v, 1024 + 512, 0) == 0.375f);
      for (int i = 1; i < DENSE; i++)
        {
          double d = at (v, i, 0) - at (v, i - 1, 0);
          down += d < 0;
          jump = d > jump ? d : jump;
        }
      TG_CHECK_INT_EQ (down, 0);
      TG_CHECK (jump < 0.001); /* continuous: no cliffs */
      tg_value_unref (v);
    }
  /* Sharpness 0.5: flat for the first half of a step, then a smoothstep
   * riser over the second half. */
  SET (fx.g, fx.f, "sharpness", "0.5");
  v = pull_f (&fx);
  if (v)
    {
      TG_CHECK (at (v, 256, 0) == 0.0f);
      TG_CHECK (at (v, 511, 0) == 0.0f);
      TG_CHECK (at (v, 768, 0) == 0.125f);
      TG_CHECK (at (v, 2048 + 256, 0) == 0.5f);
      TG_CHECK (at (v, 2048 + 768, 0) == 0.625f);
      tg_value_unref (v);
    }
  fixture_clear (&fx);
}

/* Distinct values of row 0 of V, in order (V is non-decreasing). */
static int
levels (const TgValue *v, float *out, int max)
{
  int n = 0;

  for (int i = 0; i < v->region.width; i++)
    if (n == 0 || at (v, i, 0) != out[n - 1])
      {
        if (n < max)
          out[n] = at (v, i, 0);
        n++;
      }
  return n;
}

static void
test_terrace_uneven_steps (void)
{
  Fixture fx, fy;
  TgValue *v, *w;
  float lv[16], lw[16];

  fixture_init (&fx, "filter.terrace", DENSE, 2);
  fixture_init (&fy, "filter.terrace", DENSE, 4);
  SET (fx.g, fx.f, "steps", "5");
  SET (fx.g, fx.f, "sharpness", "1");
  SET (fx.g, fx.f, "uniform", "false");
  SET (fx.g, fx.f, "seed", "7");
  SET (fy.g, fy.f, "steps", "5");
  SET (fy.g, fy.f, "sharpness", "1");
  SET (fy.g, fy.f, "uniform", "false");
  SET (fy.g, fy.f, "seed", "7");
  v = pull_f (&fx);
  w = pull_f (&fy);
  if (v && w)
    {
      int n = levels (v, lv, 16), uneven = 0, down = 0;
      /* Same seed, other thread count: same bytes. */
      TG_CHECK (memcmp (v->data, w->data, sizeof (float) * 2 * DENSE) == 0);
      /* Five treads plus the top, starting at 0 and in order. */
      TG_CHECK_INT_EQ (n, 6);
      TG_CHECK (lv[0] == 0.0f);
      TG_CHECK (lv[5] == 1.0f);
      for (int k = 1; k < 6 && k < n; k++)
        {
          down += lv[k] <= lv[k - 1];
          /* Each inner level within 35% of a step of the even one. */
          TG_CHECK (fabs (lv[k] - k / 5.0) <= 0.35 / 5 + 1e-6 || k == 5);
          uneven += fabsf (lv[k] - k / 5.0f) > 1e-4f;
        }
      TG_CHECK_INT_EQ (down, 0);
      TG_CHECK (uneven >= 2);
    }
  if (w)
    tg_value_unref (w);
  /* Another seed, other levels. */
  SET (fy.g, fy.f, "seed", "8");
  w = pull_f (&fy);
  if (v && w)
    {
      levels (w, lw, 16);
      TG_CHECK (memcmp (lv, lw, sizeof (float) * 5) != 0);
    }
  if (v)
    tg_value_unref (v);
  if (w)
    tg_value_unref (w);
  fixture_clear (&fx);
  fixture_clear (&fy);
}

/* --- normalize ------------------------------------------------------------------ */

/* A 2D input in 0.3..0.6: a disc with a soft edge, remapped. */
static TgGraph *
normalize_graph (int res)
{
  TgGraph *g = new_graph (2000, 1500, res);
  int n = add_node (g, "disc", "gen.shape");

  SET (g, n, "radius_m", "600");
  SET (g, n, "falloff_m", "500");
  SET (g, n, "center_m", "150,-100");
  n = add_node (g, "squash", "filter.remap");
  SET (g, n, "min_output", "0.3");
  SET (g, n, "max_output", "0.6");
  add_node (g, "norm", "filter.normalize");
  add_link (g, "disc", "height", "squash", "height");
  add_link (g, "squash", "height", "norm", "height");
  return g;
}

static void
minmax (const TgValue *v, float *mn, float *mx)
{
  *mn = INFINITY;
  *mx = -INFINITY;
  for (uint64_t k = 0; k < tg_region_samples (&v->region); k++)
    {
      *mn = v->data[k] < *mn ? v->data[k] : *mn;
      *mx = v->data[k] > *mx ? v->data[k] : *mx;
    }
}

static void
test_normalize_exact_extremes (void)
{
  TgGraph *g = normalize_graph (201);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *disc = pull (e, g, "disc", &r), *sq = pull (e, g, "squash", &r);
  TgValue *v = pull (e, g, "norm", &r);

  if (disc && sq && v)
    {
      float mn, mx;
      int bad = 0;
      minmax (sq, &mn, &mx);
      TG_CHECK_NEAR (mn, 0.3, 1e-6);
      TG_CHECK_NEAR (mx, 0.6, 1e-6);
      minmax (v, &mn, &mx);
      TG_CHECK (mn == 0.0f);
      TG_CHECK (mx == 1.0f);
      /* Normalizing undoes the squash. */
      for (uint64_t k = 0; k < tg_region_samples (&r); k++)
        bad += fabsf (v->data[k] - disc->data[k]) > 2e-6f;
      TG_CHECK_INT_EQ (bad, 0);
    }
  if (disc)
    tg_value_unref (disc);
  if (sq)
    tg_value_unref (sq);
  if (v)
    tg_value_unref (v);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_normalize_same_bytes_threads_and_windows (void)
{
  TgGraph *g = normalize_graph (1025);
  TgEngine *e1 = new_engine (1), *e4 = new_engine (4);
  TgRegion r = world_region (g);
  TgRegion win = tg_region_window (&r, 700, 40, 300, 100); /* away from the disc's peak */
  TgValue *a = pull (e1, g, "norm", &r), *b = pull (e4, g, "norm", &r);
  TgValue *w = pull (e4, g, "norm", &win);

  if (a && b)
    TG_CHECK (memcmp (a->data, b->data, sizeof (float) * tg_region_samples (&r)) == 0);
  if (a && w)
    {
      float mn, mx;
      /* A window is a crop of the whole-map result, not stretched itself. */
      TG_CHECK_INT_EQ (w->region.width, 300);
      TG_CHECK (same_window (a, w));
      minmax (w, &mn, &mx);
      TG_CHECK (mx < 1.0f);
    }
  if (a)
    tg_value_unref (a);
  if (b)
    tg_value_unref (b);
  if (w)
    tg_value_unref (w);
  tg_engine_free (e1);
  tg_engine_free (e4);
  tg_graph_free (g);
}

/* A tiled build's normalize (tile ranges, one reduction, tiles stretched)
 * gives the whole map's bytes for any tiling, uneven and one-sample tiles
 * included. */
static void
test_normalize_tiled_equals_whole (void)
{
  static const int tilings[][2] = { { 1, 1 }, { 2, 2 }, { 3, 2 }, { 7, 5 }, { 1, 9 }, { 129, 2 } };
  TgGraph *g = normalize_graph (129);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *whole = pull (e, g, "norm", &r);
  int norm = tg_graph_find_node (g, "norm");

  for (int k = 0; whole && k < (int) (sizeof tilings / sizeof tilings[0]); k++)
    {
      TgValue *tiled = NULL;
      TgtestStore st = { 0 };
      TgError err = { 0 };
      int rc = tgtest_tiled_pull (e, g, norm, 0, tilings[k][0], tilings[k][1], &tiled, &st, &err);
      TG_CHECK_MSG (rc == 0, "%dx%d: %s", tilings[k][0], tilings[k][1], err.message);
      if (rc == 0)
        {
          TG_CHECK_MSG (memcmp (whole->data, tiled->data, sizeof (float) * tg_region_samples (&r)) == 0,
                        "%dx%d tiles differ from the whole map", tilings[k][0], tilings[k][1]);
          /* Blobs stay tiny: two floats a tile and the reduction. */
          TG_CHECK_INT_EQ (st.peak_blob, 2 * sizeof (float));
        }
      tg_value_unref (tiled);
    }
  tg_value_unref (whole);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_normalize_flat_and_out_of_range (void)
{
  TgGraph *g = new_graph (1000, 1000, 33);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *v;
  int n;

  /* Flat: nothing to stretch; passed through (clamped), no division by 0. */
  n = add_node (g, "flat", "gen.constant");
  SET (g, n, "value", "0.4");
  add_node (g, "nflat", "filter.normalize");
  add_link (g, "flat", "height", "nflat", "height");
  v = pull (e, g, "nflat", &r);
  if (v)
    {
      int bad = 0;
      for (uint64_t k = 0; k < tg_region_samples (&r); k++)
        bad += v->data[k] != 0.4f;
      TG_CHECK_INT_EQ (bad, 0);
      tg_value_unref (v);
    }

  /* -0.5 .. 1.5 (an unclamped remap of a ramp) comes back to 0..1. */
  add_node (g, "ramp", "gen.gradient");
  n = add_node (g, "wide", "filter.remap");
  SET (g, n, "min_output", "-0.5");
  SET (g, n, "max_output", "1.5");
  add_node (g, "nwide", "filter.normalize");
  add_link (g, "ramp", "height", "wide", "height");
  add_link (g, "wide", "height", "nwide", "height");
  v = pull (e, g, "nwide", &r);
  if (v)
    {
      TG_CHECK (at (v, 0, 5) == 0.0f);
      TG_CHECK (at (v, 32, 5) == 1.0f);
      TG_CHECK_NEAR (at (v, 8, 5), 0.25, 1e-6);
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

/* SHA-256 of V's float samples (little-endian hosts), as lower-case hex. */
static void
value_sha256 (const TgValue *v, char hex[65])
{
  TgSha256 s;
  uint8_t d[32];

  tg_sha256_init (&s);
  tg_sha256_update (&s, v->data, sizeof (float) * tg_region_samples (&v->region));
  tg_sha256_final (&s, d);
  for (int k = 0; k < 32; k++)
    snprintf (hex + 2 * k, 3, "%02x", d[k]);
}

static void
test_filters_golden_hash (void)
{
  /* Pins the bytes of a chain through every filter (bump the version of
   * the node whose output changes).  Only IEEE-exact operations, floor
   * and the integer hash feed it. */
  TgGraph *g = normalize_graph (257);
  TgEngine *e = new_engine (0);
  TgRegion r = world_region (g);
  TgValue *v;
  char hex[65];
  int n;

  n = add_node (g, "terr", "filter.terrace");
  SET (g, n, "steps", "6");
  SET (g, n, "sharpness", "0.7");
  SET (g, n, "uniform", "false");
  SET (g, n, "seed", "1234");
  n = add_node (g, "inv", "filter.invert");
  SET (g, n, "pivot", "0.45");
  n = add_node (g, "clamp", "filter.clamp");
  SET (g, n, "min_height", "0.05");
  SET (g, n, "max_height", "0.85");
  add_link (g, "norm", "height", "terr", "height");
  add_link (g, "terr", "height", "inv", "height");
  add_link (g, "inv", "height", "clamp", "height");
  v = pull (e, g, "clamp", &r);
  if (v)
    {
      value_sha256 (v, hex);
      const char *want = "ee5d808c78088a9acf16f4c89d71fee3"
                         "afaf5c1f96a5c8b7cb3e0a60c27dc0bd";
      TG_CHECK_MSG (strcmp (hex, want) == 0, "%s", hex);
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

int
main (void)
{
  TG_RUN (test_remap);
  TG_RUN (test_clamp);
  TG_RUN (test_invert);
  TG_RUN (test_terrace_hard_steps);
  TG_RUN (test_terrace_smooth_and_half);
  TG_RUN (test_terrace_uneven_steps);
  TG_RUN (test_normalize_exact_extremes);
  TG_RUN (test_normalize_same_bytes_threads_and_windows);
  TG_RUN (test_normalize_flat_and_out_of_range);
  TG_RUN (test_normalize_tiled_equals_whole);
  TG_RUN (test_filters_golden_hash);
  return tgtest_result ();
}
