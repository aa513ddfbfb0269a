/* Tests for math.combine: every operation on known inputs, the amount and
 * mask blend (result = a + amount*mask*(op(a,b) - a)), lerp by mask or by
 * amount, the clamp, and identical bytes for any thread count. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtest.h"

/* --- fixture ------------------------------------------------------------------ */

/* 1000 m world, 11 samples: a = i / 10 (west to east), b = (10 - j) / 10
 * (south to north), so every pair (a, b) on a 0.1 grid occurs. */
typedef struct
{
  TgGraph *g;
  TgEngine *e;
  TgRegion r;
  int c;
  TgValue *a, *b;
} Fixture;

static void
fixture_init (Fixture *f, int threads)
{
  int n;

  f->g = new_graph (1000, 1000, 11);
  f->e = new_engine (threads);
  f->r = world_region (f->g);
  add_node (f->g, "a", "gen.gradient");
  n = add_node (f->g, "b", "gen.gradient");
  SET (f->g, n, "angle_deg", "90");
  n = add_node (f->g, "m", "gen.constant");
  SET (f->g, n, "value", "0.25");
  f->c = add_node (f->g, "c", "math.combine");
  add_link (f->g, "a", "height", "c", "a");
  add_link (f->g, "b", "height", "c", "b");
  f->a = pull (f->e, f->g, "a", &f->r);
  f->b = pull (f->e, f->g, "b", &f->r);
}

static void
fixture_clear (Fixture *f)
{
  if (f->a)
    tg_value_unref (f->a);
  if (f->b)
    tg_value_unref (f->b);
  tg_engine_free (f->e);
  tg_graph_free (f->g);
}

/* The combine's value at sample (I, J) with the current parameters. */
static float
combine_at (Fixture *f, int i, int j)
{
  TgValue *v = pull (f->e, f->g, "c", &f->r);
  float x = v ? at (v, i, j) : NAN;

  if (v)
    tg_value_unref (v);
  return x;
}

/* The documented op, in single precision. */
static float
op_ref (const char *op, float a, float b)
{
  if (!strcmp (op, "add"))
    return a + b;
  if (!strcmp (op, "subtract"))
    return a - b;
  if (!strcmp (op, "multiply"))
    return a * b;
  if (!strcmp (op, "min"))
    return a < b ? a : b;
  if (!strcmp (op, "max"))
    return a > b ? a : b;
  if (!strcmp (op, "screen"))
    return 1.0f - (1.0f - a) * (1.0f - b);
  if (!strcmp (op, "difference"))
    return fabsf (a - b);
  return b; /* lerp */
}

/* --- tests -------------------------------------------------------------------- */

static void
test_each_op_known_values (void)
{
  /* At sample (3, 2): a = 0.3, b = 0.8. */
  static const struct
  {
    const char *op;
    double want;
  } cases[] = {
    { "add", 1.1 },       { "subtract", -0.5 }, { "multiply", 0.24 },  { "min", 0.3 },
    { "max", 0.8 },       { "screen", 0.86 },   { "difference", 0.5 }, { "lerp", 0.8 },
  };
  Fixture f;

  fixture_init (&f, 2);
  SET (f.g, f.c, "clamp", "false");
  if (f.a && f.b)
    {
      TG_CHECK_NEAR (at (f.a, 3, 2), 0.3, 1e-7);
      TG_CHECK_NEAR (at (f.b, 3, 2), 0.8, 1e-7);
    }
  for (int k = 0; k < TG_N_ELEMENTS (cases); k++)
    {
      SET (f.g, f.c, "op", cases[k].op);
      TG_CHECK_MSG (fabs (combine_at (&f, 3, 2) - cases[k].want) <= 1e-6, "%s: %.9g vs %g",
                    cases[k].op, combine_at (&f, 3, 2), cases[k].want);
    }
  fixture_clear (&f);
}

static void
test_each_op_every_sample (void)
{
  static const char *const ops[] = { "add", "subtract", "multiply", "min",
                                     "max", "screen", "difference", "lerp" };
  Fixture f;

  fixture_init (&f, 3);
  SET (f.g, f.c, "clamp", "false");
  for (int k = 0; k < TG_N_ELEMENTS (ops) && f.a && f.b; k++)
    {
      TgValue *v;
      int bad = 0;
      SET (f.g, f.c, "op", ops[k]);
      v = pull (f.e, f.g, "c", &f.r);
      if (!v)
        continue;
      for (int j = 0; j < 11; j++)
        for (int i = 0; i < 11; i++)
          bad += at (v, i, j) != op_ref (ops[k], at (f.a, i, j), at (f.b, i, j));
      TG_CHECK_MSG (bad == 0, "%s: %d samples differ", ops[k], bad);
      tg_value_unref (v);
    }
  fixture_clear (&f);
}

static void
test_amount_and_mask (void)
{
  Fixture f;

  fixture_init (&f, 2);
  SET (f.g, f.c, "clamp", "false");
  /* a = 0.3, b = 0.8, add: op = 1.1. */
  SET (f.g, f.c, "amount", "0.5");
  TG_CHECK_NEAR (combine_at (&f, 3, 2), 0.3 + 0.5 * 0.8, 1e-6);
  SET (f.g, f.c, "amount", "0");
  TG_CHECK (combine_at (&f, 3, 2) == at (f.a, 3, 2));
  /* Mask 0.25: t = amount * mask. */
  add_link (f.g, "m", "height", "c", "mask");
  SET (f.g, f.c, "amount", "1");
  TG_CHECK_NEAR (combine_at (&f, 3, 2), 0.3 + 0.25 * 0.8, 1e-6);
  SET (f.g, f.c, "amount", "0.5");
  TG_CHECK_NEAR (combine_at (&f, 3, 2), 0.3 + 0.125 * 0.8, 1e-6);
  SET (f.g, f.c, "op", "multiply");
  TG_CHECK_NEAR (combine_at (&f, 3, 2), 0.3 + 0.125 * (0.24 - 0.3), 1e-6);
  fixture_clear (&f);
}

static void
test_lerp_by_mask_or_amount (void)
{
  Fixture f;
  TgValue *v;
  int n;

  fixture_init (&f, 2);
  SET (f.g, f.c, "op", "lerp");
  /* No mask: a to b by amount. */
  SET (f.g, f.c, "amount", "0.75");
  TG_CHECK_NEAR (combine_at (&f, 3, 2), 0.3 + 0.75 * 0.5, 1e-6);
  SET (f.g, f.c, "amount", "1");
  TG_CHECK (combine_at (&f, 3, 2) == at (f.b, 3, 2));
  /* A mask that varies: a disc, 1 in the middle and 0 at the corners. */
  n = add_node (f.g, "disc", "gen.shape");
  SET (f.g, n, "radius_m", "400");
  SET (f.g, n, "falloff_m", "200");
  add_link (f.g, "disc", "height", "c", "mask");
  v = pull (f.e, f.g, "c", &f.r);
  if (v && f.a && f.b)
    {
      TG_CHECK (at (v, 5, 5) == at (f.b, 5, 5)); /* mask 1: all b */
      TG_CHECK (at (v, 0, 0) == at (f.a, 0, 0)); /* mask 0: all a */
      /* (8, 5) is 300 m out: mask 0.5, half way from a = 0.8 to b = 0.5. */
      TG_CHECK_NEAR (at (v, 8, 5), 0.65, 1e-6);
    }
  if (v)
    tg_value_unref (v);
  fixture_clear (&f);
}

static void
test_clamp (void)
{
  Fixture f;

  fixture_init (&f, 2);
  /* Clamp is on by default. */
  TG_CHECK (combine_at (&f, 9, 0) == 1.0f); /* 0.9 + 1.0 */
  TG_CHECK_NEAR (combine_at (&f, 3, 8), 0.5, 1e-6); /* 0.3 + 0.2 in range */
  SET (f.g, f.c, "op", "subtract");
  TG_CHECK (combine_at (&f, 3, 2) == 0.0f);
  SET (f.g, f.c, "clamp", "false");
  TG_CHECK_NEAR (combine_at (&f, 3, 2), -0.5, 1e-6);
  fixture_clear (&f);
}

static void
test_missing_input_names_node_and_port (void)
{
  Fixture f;
  TgError err = { 0 };
  TgValue *v;

  fixture_init (&f, 1);
  add_node (f.g, "half", "math.combine");
  add_link (f.g, "a", "height", "half", "a");
  v = pull_err (f.e, f.g, "half", &f.r, &err);
  TG_CHECK (v == NULL);
  TG_CHECK (err.code < 0);
  TG_CHECK_STR_CONTAINS (err.message, "half");
  TG_CHECK_STR_CONTAINS (err.message, "\"b\"");
  if (v)
    tg_value_unref (v);
  fixture_clear (&f);
}

static void
test_combine_same_bytes_any_threads (void)
{
  TgGraph *g = new_graph (2000, 2000, 513);
  TgEngine *e1 = new_engine (1), *e4 = new_engine (4);
  TgRegion r = world_region (g);
  TgValue *x, *y;
  int n;

  n = add_node (g, "a", "gen.gradient");
  SET (g, n, "angle_deg", "20");
  n = add_node (g, "b", "gen.shape");
  SET (g, n, "radius_m", "700");
  n = add_node (g, "m", "gen.gradient");
  SET (g, n, "angle_deg", "250");
  n = add_node (g, "c", "math.combine");
  SET (g, n, "op", "screen");
  SET (g, n, "amount", "0.7");
  add_link (g, "a", "height", "c", "a");
  add_link (g, "b", "height", "c", "b");
  add_link (g, "m", "height", "c", "mask");
  x = pull (e1, g, "c", &r);
  y = pull (e4, g, "c", &r);
  if (x && y)
    TG_CHECK (memcmp (x->data, y->data, sizeof (float) * tg_region_samples (&r)) == 0);
  if (x)
    tg_value_unref (x);
  if (y)
    tg_value_unref (y);
  tg_engine_free (e1);
  tg_engine_free (e4);
  tg_graph_free (g);
}

int
main (void)
{
  TG_RUN (test_each_op_known_values);
  TG_RUN (test_each_op_every_sample);
  TG_RUN (test_amount_and_mask);
  TG_RUN (test_lerp_by_mask_or_amount);
  TG_RUN (test_clamp);
  TG_RUN (test_missing_input_names_node_and_port);
  TG_RUN (test_combine_same_bytes_any_threads);
  return tgtest_result ();
}
