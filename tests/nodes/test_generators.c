/* Tests for gen.constant, gen.gradient and gen.shape: values at known world
 * points, world-based (not region-based) coordinates, and identical bytes
 * for any window and thread count. */
#include <math.h>
#include <stdio.h>
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

/* --- tests ------------------------------------------------------------------ */

static void
test_constant_fills_region (void)
{
  TgGraph *g = new_graph (1000, 1000, 11);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *v;
  int n = add_node (g, "c", "gen.constant");

  SET (g, n, "value", "0.3");
  v = pull (e, g, "c", &r);
  if (v)
    {
      int bad = 0;
      TG_CHECK_INT_EQ (v->region.width, 11);
      TG_CHECK_INT_EQ (v->region.height, 11);
      TG_CHECK_INT_EQ (v->channels, 1);
      for (int j = 0; j < 11; j++)
        for (int i = 0; i < 11; i++)
          bad += at (v, i, j) != 0.3f;
      TG_CHECK_INT_EQ (bad, 0);
      tg_value_unref (v);
    }
  /* Out of range is refused by the parameter check. */
  TG_CHECK (set_param (g, n, "value", "1.5") < 0);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_gradient_axes (void)
{
  /* 1000 m square world, 11 samples: a sample every 100 m. */
  TgGraph *g = new_graph (1000, 1000, 11);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *v;
  int n = add_node (g, "grad", "gen.gradient");

  /* Default: 0 on the west edge, 1 on the east edge, same on every row. */
  v = pull (e, g, "grad", &r);
  if (v)
    {
      for (int j = 0; j < 11; j += 5)
        {
          TG_CHECK (at (v, 0, j) == 0.0f);
          TG_CHECK (at (v, 10, j) == 1.0f);
          TG_CHECK (at (v, 5, j) == 0.5f);
          for (int i = 0; i < 11; i++)
            TG_CHECK_NEAR (at (v, i, j), i / 10.0, 1e-6);
        }
      tg_value_unref (v);
    }

  /* 90 degrees: rises from south (last row) to north (row 0). */
  SET (g, n, "angle_deg", "90");
  SET (g, n, "from", "0.2");
  SET (g, n, "to", "0.8");
  v = pull (e, g, "grad", &r);
  if (v)
    {
      for (int i = 0; i < 11; i += 5)
        {
          TG_CHECK (at (v, i, 0) == 0.8f);
          TG_CHECK (at (v, i, 10) == 0.2f);
          TG_CHECK_NEAR (at (v, i, 3), 0.2 + 0.6 * 0.7, 1e-6);
        }
      tg_value_unref (v);
    }

  /* 180 degrees: from east to west. */
  SET (g, n, "angle_deg", "180");
  SET (g, n, "from", "0");
  SET (g, n, "to", "1");
  v = pull (e, g, "grad", &r);
  if (v)
    {
      TG_CHECK (at (v, 0, 4) == 1.0f);
      TG_CHECK (at (v, 10, 4) == 0.0f);
      TG_CHECK_NEAR (at (v, 2, 4), 0.8, 1e-6);
      tg_value_unref (v);
    }

  /* 45 degrees: 0 at the south-west corner, 1 at the north-east one. */
  SET (g, n, "angle_deg", "45");
  v = pull (e, g, "grad", &r);
  if (v)
    {
      TG_CHECK_NEAR (at (v, 0, 10), 0.0, 1e-7);
      TG_CHECK_NEAR (at (v, 10, 0), 1.0, 1e-7);
      TG_CHECK_NEAR (at (v, 5, 5), 0.5, 1e-7);
      TG_CHECK_NEAR (at (v, 0, 0), 0.5, 1e-7);  /* NW and SE lie across the ramp */
      TG_CHECK_NEAR (at (v, 10, 10), 0.5, 1e-7);
      TG_CHECK_NEAR (at (v, 3, 5), 0.4, 1e-6);
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_gradient_uses_world_not_region (void)
{
  /* A non-square world: the ramp spans the world's X extent whatever
   * window or resolution is asked for. */
  TgGraph *g = new_graph (2000, 1000, 21);
  TgEngine *e = new_engine (3);
  TgRegion full = world_region (g), win, coarse;
  TgValue *vf, *vw, *vc;

  add_node (g, "grad", "gen.gradient");
  TG_CHECK_INT_EQ (full.full_h, 11);
  win = tg_region_window (&full, 7, 2, 5, 4);
  tg_region_for_world (&coarse, tg_graph_world (g), 5); /* a 500 m preview */
  vf = pull (e, g, "grad", &full);
  vw = pull (e, g, "grad", &win);
  vc = pull (e, g, "grad", &coarse);
  if (vf && vw && vc)
    {
      /* The window is not re-stretched to 0..1 ... */
      TG_CHECK_NEAR (at (vw, 0, 0), 0.35, 1e-6);
      TG_CHECK (same_window (vf, vw));
      /* ... and a coarse preview agrees bit for bit where samples meet. */
      for (int i = 0; i < 5; i++)
        TG_CHECK (at (vc, i, 1) == at (vf, 5 * i, 5));
      TG_CHECK (at (vc, 4, 0) == 1.0f);
    }
  if (vf)
    tg_value_unref (vf);
  if (vw)
    tg_value_unref (vw);
  if (vc)
    tg_value_unref (vc);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_shape_radial (void)
{
  TgGraph *g = new_graph (1000, 1000, 11);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *v;
  int n = add_node (g, "s", "gen.shape");

  /* Centre (100, -100) is lattice sample (6, 6); 100 m per sample. */
  SET (g, n, "radius_m", "400");
  SET (g, n, "falloff_m", "200");
  SET (g, n, "center_m", "100,-100");
  v = pull (e, g, "s", &r);
  if (v)
    {
      TG_CHECK (at (v, 6, 6) == 1.0f);
      TG_CHECK (at (v, 4, 6) == 1.0f);  /* 200 m: inside the full part */
      TG_CHECK (at (v, 9, 6) == 0.5f);  /* 300 m: middle of the falloff */
      TG_CHECK (at (v, 6, 3) == 0.5f);  /* 300 m north */
      TG_CHECK (at (v, 10, 6) == 0.0f); /* 400 m: the outer radius */
      TG_CHECK (at (v, 0, 0) == 0.0f);
      TG_CHECK (at (v, 8, 6) == 1.0f); /* 200 m east */
      /* (300, -100) from the centre: 316.2 m, smoothstep of (400 - d) / 200. */
      TG_CHECK_NEAR (at (v, 9, 7), smoothstep ((400 - sqrt (100000.0)) / 200), 1e-7);
      TG_CHECK (at (v, 9, 7) > 0.0f && at (v, 9, 7) < 0.5f);
      /* (300, 300) off-centre is 424 m away: outside the disc. */
      TG_CHECK (at (v, 9, 9) == 0.0f);
      /* Diagonal (200, 200): 282.8 m. */
      TG_CHECK_NEAR (at (v, 8, 8), smoothstep ((400 - sqrt (80000.0)) / 200), 1e-7);
      tg_value_unref (v);
    }

  /* No falloff: a hard edge, the radius itself inside. */
  SET (g, n, "falloff_m", "0");
  v = pull (e, g, "s", &r);
  if (v)
    {
      TG_CHECK (at (v, 10, 6) == 1.0f);
      TG_CHECK (at (v, 9, 9) == 0.0f);
      TG_CHECK (at (v, 6, 1) == 0.0f); /* 500 m */
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_shape_square_and_rounded (void)
{
  TgGraph *g = new_graph (1000, 1000, 11);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *v;
  int n = add_node (g, "s", "gen.shape");

  SET (g, n, "shape", "square");
  SET (g, n, "radius_m", "400");
  SET (g, n, "falloff_m", "200");
  v = pull (e, g, "s", &r);
  if (v)
    {
      /* Centre (0, 0) is sample (5, 5).  A square: the corner (300, 300)
       * is as far as the side point (300, 0). */
      TG_CHECK (at (v, 5, 5) == 1.0f);
      TG_CHECK (at (v, 8, 8) == 0.5f);
      TG_CHECK (at (v, 8, 5) == 0.5f);
      TG_CHECK (at (v, 2, 2) == 0.5f);
      TG_CHECK (at (v, 7, 3) == 1.0f);
      TG_CHECK (at (v, 9, 9) == 0.0f);
      tg_value_unref (v);
    }

  SET (g, n, "shape", "rounded_square");
  v = pull (e, g, "s", &r);
  if (v)
    {
      /* Along the axes it matches the square; at the corner it is cut
       * round, between the square and the disc. */
      double d = 300.0 * pow (2.0, 0.25);
      TG_CHECK (at (v, 8, 5) == 0.5f);
      TG_CHECK (at (v, 5, 2) == 0.5f);
      TG_CHECK_NEAR (at (v, 8, 8), smoothstep ((400 - d) / 200), 1e-6);
      TG_CHECK (at (v, 8, 8) > 0.0f && at (v, 8, 8) < 0.5f);
      tg_value_unref (v);
    }
  TG_CHECK (set_param (g, n, "shape", "hexagon") < 0);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_generators_same_bytes_any_threads_and_tiles (void)
{
  TgGraph *g = new_graph (4096, 3000, 257);
  TgEngine *e1 = new_engine (1), *e4 = new_engine (4);
  TgRegion full = world_region (g);
  const char *ids[] = { "grad", "shape" };
  int n;

  n = add_node (g, "grad", "gen.gradient");
  SET (g, n, "angle_deg", "33");
  n = add_node (g, "shape", "gen.shape");
  SET (g, n, "shape", "rounded_square");
  SET (g, n, "center_m", "300,-250");
  for (int k = 0; k < 2; k++)
    {
      TgValue *a = pull (e1, g, ids[k], &full);
      TgValue *b = pull (e4, g, ids[k], &full);
      if (a && b)
        {
          TG_CHECK (memcmp (a->data, b->data, sizeof (float) * tg_region_samples (&full)) == 0);
          /* Tiles of 64 x 64 reproduce the whole map. */
          for (int row = 0; row < full.height; row += 64)
            for (int col = 0; col < full.width; col += 64)
              {
                int w = full.width - col < 64 ? full.width - col : 64;
                int h = full.height - row < 64 ? full.height - row : 64;
                TgRegion t = tg_region_window (&full, col, row, w, h);
                TgValue *tv = pull (e4, g, ids[k], &t);
                if (tv)
                  {
                    TG_CHECK_MSG (same_window (a, tv), "%s tile %d,%d", ids[k], col, row);
                    tg_value_unref (tv);
                  }
              }
        }
      if (a)
        tg_value_unref (a);
      if (b)
        tg_value_unref (b);
    }
  tg_engine_free (e1);
  tg_engine_free (e4);
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
test_generators_golden_hashes (void)
{
  /* Pins the output bytes: a change here needs a version bump of the
   * node.  Only IEEE-exact operations (+, *, /, sqrt) feed these, so the
   * bytes are the same on every conforming machine. */
  static const struct
  {
    const char *shape, *want;
  } cases[] = {
    { "radial", "84180ce77e3c110369f900cf2d520676228a63bc9b0dba2d8d10bd3e578d2e1a" },
    { "square", "c8b6970f572dfeacc525548c2fcf96fbf8b322315546a5fccbc355ca9c224958" },
    { "rounded_square", "9b3a2c5fa4391d4cc10e9b6d49366561ccf16922d3139906bbea1a3294681751" },
  };
  TgGraph *g = new_graph (4096, 3000, 257);
  TgEngine *e = new_engine (0);
  TgRegion r = world_region (g);
  int n = add_node (g, "s", "gen.shape"), m = add_node (g, "grad", "gen.gradient");
  char hex[65];
  TgValue *v;

  SET (g, n, "radius_m", "1700");
  SET (g, n, "falloff_m", "900");
  SET (g, n, "center_m", "300,-250");
  for (int k = 0; k < TG_N_ELEMENTS (cases); k++)
    {
      SET (g, n, "shape", cases[k].shape);
      v = pull (e, g, "s", &r);
      if (!v)
        continue;
      value_sha256 (v, hex);
      TG_CHECK_MSG (strcmp (hex, cases[k].want) == 0, "%s: %s", cases[k].shape, hex);
      tg_value_unref (v);
    }
  SET (g, m, "angle_deg", "270");
  SET (g, m, "from", "0.1");
  SET (g, m, "to", "0.9");
  v = pull (e, g, "grad", &r);
  if (v)
    {
      value_sha256 (v, hex);
      const char *want = "1bfe529a8821a4e50a283935f0eeff96"
                         "cb02e6242618b27f9d6c3c2a22231e8b";
      TG_CHECK_MSG (strcmp (hex, want) == 0, "gradient: %s", hex);
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

int
main (void)
{
  TG_RUN (test_constant_fills_region);
  TG_RUN (test_gradient_axes);
  TG_RUN (test_gradient_uses_world_not_region);
  TG_RUN (test_shape_radial);
  TG_RUN (test_shape_square_and_rounded);
  TG_RUN (test_generators_same_bytes_any_threads_and_tiles);
  TG_RUN (test_generators_golden_hashes);
  return tgtest_result ();
}
