/* Tests for the curve node: the identity curve is the identity, a monotone
 * curve never overshoots between its points, known Steffen values, flat
 * extrapolation and clamping of out-of-range input. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <tgformats/tgformats.h>
#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtest.h"

/* --- fixture: a dense 0..1 ramp into a curve ------------------------------- */

/* The world is 1000 m wide with 4097 samples: the west-east gradient then
 * takes the value i / 4096 at column i (exactly at multiples of 1024). */
#define N_SAMPLES 4097

typedef struct
{
  TgGraph *g;
  TgEngine *e;
  TgRegion row; /* two rows of the lattice */
  int curve;
} Fixture;

static void
fixture_init (Fixture *f, int threads)
{
  TgRegion full;

  f->g = new_graph (1000, 1000, N_SAMPLES);
  f->e = new_engine (threads);
  full = world_region (f->g);
  f->row = tg_region_window (&full, 0, 100, N_SAMPLES, 2);
  add_node (f->g, "ramp", "gen.gradient");
  f->curve = add_node (f->g, "curve", "curve");
  add_link (f->g, "ramp", "height", "curve", "height");
}

static void
fixture_clear (Fixture *f)
{
  tg_engine_free (f->e);
  tg_graph_free (f->g);
}

/* --- tests ------------------------------------------------------------------ */

static void
test_identity_curve_is_identity (void)
{
  Fixture f;
  TgValue *in, *out;

  fixture_init (&f, 2);
  in = pull (f.e, f.g, "ramp", &f.row);
  out = pull (f.e, f.g, "curve", &f.row);
  if (in && out)
    {
      TG_CHECK (at (in, 1024, 0) == 0.25f);
      TG_CHECK (memcmp (in->data, out->data, sizeof (float) * 2 * N_SAMPLES) == 0);
    }
  if (in)
    tg_value_unref (in);
  if (out)
    tg_value_unref (out);
  fixture_clear (&f);
}

static void
test_monotone_curve_never_overshoots (void)
{
  static const double py[] = { 0, 0.05, 0.9, 0.95, 1 };
  Fixture f;
  TgValue *in, *out;

  fixture_init (&f, 2);
  /* A steep rise between two gentle stretches: an ordinary cubic spline
   * would bulge above 0.95 and below 0.05 here. */
  SET (f.g, f.curve, "points", "0:0,0.25:0.05,0.5:0.9,0.75:0.95,1:1");
  in = pull (f.e, f.g, "ramp", &f.row);
  out = pull (f.e, f.g, "curve", &f.row);
  if (in && out)
    {
      int outside = 0, down = 0;
      /* Through the points exactly. */
      for (int k = 0; k < 5; k++)
        TG_CHECK_MSG (at (out, 1024 * k, 0) == (float) py[k], "point %d: %.9g", k,
                      at (out, 1024 * k, 0));
      for (int i = 0; i < N_SAMPLES; i++)
        {
          double x = at (in, i, 0);
          float y = at (out, i, 0);
          int s = x >= 1 ? 3 : (int) (x * 4);
          if (y < (float) py[s] || y > (float) py[s + 1])
            outside++;
          if (i > 0 && y < at (out, i - 1, 0))
            down++;
        }
      TG_CHECK_INT_EQ (outside, 0);
      TG_CHECK_INT_EQ (down, 0);
    }
  if (in)
    tg_value_unref (in);
  if (out)
    tg_value_unref (out);
  fixture_clear (&f);
}

static void
test_step_curve_stays_flat (void)
{
  Fixture f;
  TgValue *in, *out;

  fixture_init (&f, 2);
  /* Flat, a jump, flat: the flat parts must stay exactly flat (no ringing). */
  SET (f.g, f.curve, "points", "0:0,0.375:0,0.5:1,1:1");
  in = pull (f.e, f.g, "ramp", &f.row);
  out = pull (f.e, f.g, "curve", &f.row);
  if (in && out)
    {
      int bad = 0;
      for (int i = 0; i < N_SAMPLES; i++)
        {
          float x = at (in, i, 0), y = at (out, i, 0);
          if (x <= 0.375f && y != 0.0f)
            bad++;
          if (x >= 0.5f && y != 1.0f)
            bad++;
          if (y < 0.0f || y > 1.0f)
            bad++;
        }
      TG_CHECK_INT_EQ (bad, 0);
      /* Half way up the jump: symmetric slopes give exactly 0.5. */
      TG_CHECK_NEAR (at (out, 1792, 0), 0.5, 1e-7);
    }
  if (in)
    tg_value_unref (in);
  if (out)
    tg_value_unref (out);
  fixture_clear (&f);
}

static void
test_peak_curve (void)
{
  Fixture f;
  TgValue *out;

  fixture_init (&f, 2);
  SET (f.g, f.curve, "points", "0:0,0.5:1,1:0");
  out = pull (f.e, f.g, "curve", &f.row);
  if (out)
    {
      int bad = 0;
      TG_CHECK (at (out, 2048, 0) == 1.0f);
      TG_CHECK (at (out, 0, 0) == 0.0f);
      TG_CHECK (at (out, 4096, 0) == 0.0f);
      for (int i = 1; i < N_SAMPLES; i++)
        {
          float y = at (out, i, 0), prev = at (out, i - 1, 0);
          if (y > 1.0f || y < 0.0f)
            bad++;
          if (i <= 2048 ? y < prev : y > prev)
            bad++;
        }
      TG_CHECK_INT_EQ (bad, 0);
      tg_value_unref (out);
    }
  fixture_clear (&f);
}

static void
test_steffen_values (void)
{
  Fixture f;
  TgValue *out;

  fixture_init (&f, 2);
  /* Worked by hand from Steffen (1990): slopes 2.2, 0.8, 0 at the points,
   * so y(0.25) = 0.25 * 1.95 = 0.4875 and y(0.75) = 0.8 + 0.25 * 0.6. */
  SET (f.g, f.curve, "points", "0:0,0.5:0.8,1:1");
  out = pull (f.e, f.g, "curve", &f.row);
  if (out)
    {
      TG_CHECK_NEAR (at (out, 1024, 0), 0.4875, 1e-7);
      TG_CHECK_NEAR (at (out, 3072, 0), 0.95, 1e-7);
      TG_CHECK (at (out, 2048, 0) == 0.8f);
      tg_value_unref (out);
    }
  /* Two points: a straight line. */
  SET (f.g, f.curve, "points", "0:0.2,1:0.6");
  out = pull (f.e, f.g, "curve", &f.row);
  if (out)
    {
      TG_CHECK_NEAR (at (out, 2048, 0), 0.4, 1e-7);
      TG_CHECK_NEAR (at (out, 1024, 0), 0.3, 1e-7);
      tg_value_unref (out);
    }
  fixture_clear (&f);
}

static void
test_flat_outside_points (void)
{
  Fixture f;
  TgValue *in, *out;

  fixture_init (&f, 2);
  SET (f.g, f.curve, "points", "0.25:0.3,0.75:0.6");
  in = pull (f.e, f.g, "ramp", &f.row);
  out = pull (f.e, f.g, "curve", &f.row);
  if (in && out)
    {
      int bad = 0;
      for (int i = 0; i < N_SAMPLES; i++)
        {
          float x = at (in, i, 0), y = at (out, i, 0);
          if (x <= 0.25f && y != 0.3f)
            bad++;
          if (x >= 0.75f && y != 0.6f)
            bad++;
        }
      TG_CHECK_INT_EQ (bad, 0);
      TG_CHECK_NEAR (at (out, 2048, 0), 0.45, 1e-7);
    }
  if (in)
    tg_value_unref (in);
  if (out)
    tg_value_unref (out);
  fixture_clear (&f);
}

static void
test_out_of_range_input_clamps_to_curve_ends (void)
{
  TgGraph *g = new_graph (100, 100, 5);
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgValue *v;
  int n;

  /* 0.8 + 0.7 = 1.5 and 0.2 - 0.7 = -0.5, unclamped. */
  n = add_node (g, "hi_a", "gen.constant");
  SET (g, n, "value", "0.8");
  n = add_node (g, "lo_a", "gen.constant");
  SET (g, n, "value", "0.2");
  n = add_node (g, "b", "gen.constant");
  SET (g, n, "value", "0.7");
  n = add_node (g, "hi", "math.combine");
  SET (g, n, "clamp", "false");
  n = add_node (g, "lo", "math.combine");
  SET (g, n, "op", "subtract");
  SET (g, n, "clamp", "false");
  add_link (g, "hi_a", "height", "hi", "a");
  add_link (g, "b", "height", "hi", "b");
  add_link (g, "lo_a", "height", "lo", "a");
  add_link (g, "b", "height", "lo", "b");
  n = add_node (g, "c_hi", "curve");
  SET (g, n, "points", "0:0.1,1:0.9");
  n = add_node (g, "c_lo", "curve");
  SET (g, n, "points", "0:0.1,1:0.9");
  add_link (g, "hi", "height", "c_hi", "height");
  add_link (g, "lo", "height", "c_lo", "height");

  v = pull (e, g, "hi", &r);
  if (v)
    {
      TG_CHECK_NEAR (at (v, 2, 2), 1.5, 1e-6);
      tg_value_unref (v);
    }
  v = pull (e, g, "c_hi", &r);
  if (v)
    {
      TG_CHECK (at (v, 2, 2) == 0.9f);
      tg_value_unref (v);
    }
  v = pull (e, g, "c_lo", &r);
  if (v)
    {
      TG_CHECK (at (v, 2, 2) == 0.1f);
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_bad_points_refused (void)
{
  Fixture f;
  TgError err = { 0 };

  fixture_init (&f, 1);
  TG_CHECK (set_param_err (f.g, f.curve, "points", "0.5:0,0.2:1", &err) < 0);
  TG_CHECK_STR_CONTAINS (err.path, "params.points");
  fixture_clear (&f);
}

static void
test_curve_same_bytes_any_threads (void)
{
  Fixture f1, f4;
  TgValue *a, *b;

  fixture_init (&f1, 1);
  fixture_init (&f4, 4);
  SET (f1.g, f1.curve, "points", "0:0.1,0.3:0.2,0.6:0.7,0.9:0.75,1:1");
  SET (f4.g, f4.curve, "points", "0:0.1,0.3:0.2,0.6:0.7,0.9:0.75,1:1");
  a = pull (f1.e, f1.g, "curve", &f1.row);
  b = pull (f4.e, f4.g, "curve", &f4.row);
  if (a && b)
    TG_CHECK (memcmp (a->data, b->data, sizeof (float) * 2 * N_SAMPLES) == 0);
  if (a)
    tg_value_unref (a);
  if (b)
    tg_value_unref (b);
  fixture_clear (&f1);
  fixture_clear (&f4);
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
test_curve_golden_hash (void)
{
  /* Pins the output bytes (bump the node's version when they change).
   * Only +, -, *, / and comparisons feed them: the same on every
   * IEEE machine. */
  Fixture f;
  TgValue *v;
  char hex[65];

  fixture_init (&f, 0);
  SET (f.g, f.curve, "points", "0:0.05,0.1:0.1,0.35:0.2,0.55:0.75,0.8:0.8,1:0.97");
  v = pull (f.e, f.g, "curve", &f.row);
  if (v)
    {
      value_sha256 (v, hex);
      const char *want = "1cf058eda94b970057eb5e4b483aeca2"
                         "0bc4e17ca1c56f3c85ee56ecbeee6df6";
      TG_CHECK_MSG (strcmp (hex, want) == 0, "%s", hex);
      tg_value_unref (v);
    }
  fixture_clear (&f);
}

int
main (void)
{
  TG_RUN (test_identity_curve_is_identity);
  TG_RUN (test_monotone_curve_never_overshoots);
  TG_RUN (test_step_curve_stays_flat);
  TG_RUN (test_peak_curve);
  TG_RUN (test_steffen_values);
  TG_RUN (test_flat_outside_points);
  TG_RUN (test_out_of_range_input_clamps_to_curve_ends);
  TG_RUN (test_bad_points_refused);
  TG_RUN (test_curve_same_bytes_any_threads);
  TG_RUN (test_curve_golden_hash);
  return tgtest_result ();
}
