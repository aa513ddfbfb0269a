/* Tests for erosion.flow: on a tilted plane the flow grows steadily
 * downhill, a V-shaped valley gathers it on its valley line, a closed pit
 * is filled so its water still reaches the world's edge, the water of a
 * flat lake crosses it in one channel rather than in parallel lines, the
 * bytes do not depend on the thread count, a 257 preview reads like a
 * 513 build at the same world points, and a tiled build through the
 * engine gives the whole evaluation's bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtiled_test.h"
#include "tgtest.h"

/* A west-to-east ramp (west low) into erosion.flow ("flow"). */
static TgGraph *
plane_graph (int res, const char *routing)
{
  TgGraph *g = new_graph (2048, 2048, res);
  int f;

  add_node (g, "ramp", "gen.gradient");
  f = add_node (g, "flow", "erosion.flow");
  SET (g, f, "routing", routing);
  add_link (g, "ramp", "height", "flow", "height");
  return g;
}

static void
test_flow_plane (void)
{
  const char *routings[2] = { "mfd", "d8" };

  for (int k = 0; k < 2; k++)
    {
      TgGraph *g = plane_graph (129, routings[k]);
      TgEngine *e = new_engine (2);
      TgRegion r = world_region (g);
      TgValue *v = pull (e, g, "flow", &r);
      bool monotonic = true;

      if (v)
        {
          for (int j = 1; j < r.height - 1; j++)
            for (int i = 1; i < r.width - 1; i++)
              monotonic = monotonic && at (v, i - 1, j) > at (v, i, j);
          TG_CHECK_MSG (monotonic, "%s: flow does not grow downhill (west)", routings[k]);
          /* Rows are alike: water runs straight down the plane. */
          TG_CHECK_NEAR (at (v, 10, 50), at (v, 10, 80), 1e-4);
          TG_CHECK (at (v, r.width - 1, 64) >= 0.0f && at (v, 0, 64) <= 1.0f);
          tg_value_unref (v);
        }
      tg_engine_free (e);
      tg_graph_free (g);
    }
}

/* max(ramp up, ramp down) across X is a V with its valley line on x = 0;
 * a slight tilt along Z makes the valley drain to one edge. */
static TgGraph *
valley_graph (int res)
{
  TgGraph *g = new_graph (2048, 2048, res);
  int a, b, v, t, s, f;

  a = add_node (g, "up", "gen.gradient");
  SET (g, a, "from", "0.4");
  SET (g, a, "to", "0.9");
  b = add_node (g, "down", "gen.gradient");
  SET (g, b, "from", "0.9");
  SET (g, b, "to", "0.4");
  v = add_node (g, "v", "math.combine");
  SET (g, v, "op", "max");
  t = add_node (g, "tilt", "gen.gradient");
  SET (g, t, "angle_deg", "90");
  SET (g, t, "from", "0");
  SET (g, t, "to", "0.1");
  s = add_node (g, "sum", "math.combine");
  f = add_node (g, "flow", "erosion.flow");
  (void) s;
  (void) f;
  add_link (g, "up", "height", "v", "a");
  add_link (g, "down", "height", "v", "b");
  add_link (g, "v", "height", "sum", "a");
  add_link (g, "tilt", "height", "sum", "b");
  add_link (g, "sum", "height", "flow", "height");
  return g;
}

static void
test_flow_valley (void)
{
  TgGraph *g = valley_graph (129);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *v = pull (e, g, "flow", &r);
  int mid = r.width / 2, hits = 0, rows = 0;

  if (v)
    {
      /* Away from the edges the brightest sample of each row lies on
       * the valley line. */
      for (int j = 8; j < r.height - 8; j++)
        {
          int best = 0;
          for (int i = 1; i < r.width; i++)
            if (at (v, i, j) > at (v, best, j))
              best = i;
          rows++;
          hits += abs (best - mid) <= 1;
        }
      TG_CHECK_MSG (hits == rows, "%d of %d rows peak on the valley line", hits, rows);
      /* It grows along the valley: one end is far brighter than the other. */
      TG_CHECK (fabs (at (v, mid, 4) - at (v, mid, r.height - 5)) > 0.1);
      TG_CHECK (at (v, mid, r.height / 2) > at (v, mid - 20, r.height / 2) + 0.2);
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

/* A crater (1 - disc) in flat ground: everything inside drains to its
 * bottom and, once filled, out over its rim to the world's edge. */
static void
test_flow_pit (void)
{
  TgGraph *g = new_graph (2048, 2048, 129);
  TgEngine *e1 = new_engine (1), *e4 = new_engine (4);
  TgRegion r;
  TgValue *v, *v4;
  int s, inv, tilt, sum;

  s = add_node (g, "disc", "gen.shape");
  SET (g, s, "radius_m", "600");
  SET (g, s, "falloff_m", "500");
  inv = add_node (g, "crater", "filter.invert");
  tilt = add_node (g, "tilt", "gen.gradient");
  SET (g, tilt, "to", "0.2");
  sum = add_node (g, "sum", "math.combine");
  SET (g, sum, "op", "multiply");
  /* D8: one line of water, so nothing spreads out below the spill. */
  SET (g, add_node (g, "flow", "erosion.flow"), "routing", "d8");
  (void) inv;
  add_link (g, "disc", "height", "crater", "height");
  add_link (g, "crater", "height", "sum", "a");
  add_link (g, "tilt", "height", "sum", "b");
  add_link (g, "sum", "height", "flow", "height");
  r = world_region (g);
  v = pull (e1, g, "flow", &r);
  v4 = pull (e4, g, "flow", &r);
  if (v && v4)
    {
      float bottom = at (v, 64, 64), edge_max = 0.0f;
      TG_CHECK (memcmp (v->data, v4->data, sizeof (float) * tg_region_samples (&r)) == 0);
      for (int j = 0; j < r.height; j++)
        {
          edge_max = at (v, 0, j) > edge_max ? at (v, 0, j) : edge_max;
          edge_max = at (v, r.width - 1, j) > edge_max ? at (v, r.width - 1, j) : edge_max;
        }
      for (int i = 0; i < r.width; i++)
        {
          edge_max = at (v, i, 0) > edge_max ? at (v, i, 0) : edge_max;
          edge_max = at (v, i, r.height - 1) > edge_max ? at (v, i, r.height - 1) : edge_max;
        }
      /* The crater gathers a lot, and that water leaves at the edge. */
      TG_CHECK_MSG (bottom > 0.5f, "crater bottom %g", bottom);
      TG_CHECK_MSG (edge_max >= bottom, "edge %g < crater bottom %g: the pit kept its water",
                    edge_max, bottom);
    }
  if (v)
    tg_value_unref (v);
  if (v4)
    tg_value_unref (v4);
  tg_engine_free (e1);
  tg_engine_free (e4);
  tg_graph_free (g);
}

/* The node's mask back to the number of samples draining through: the
 * inverse of log(1 + A / a) / log(1 + W / a), a being the cell area of a
 * 1025-sample map of the world. */
static double
samples_through (float mask, double size_m, int res)
{
  double a = (size_m / 1024.0) * (size_m / 1024.0), cell = size_m / (res - 1);

  return expm1 (mask * log1p (size_m * size_m / a)) * a / (cell * cell);
}

/* A valley with a flat floor, open at both ends: the V of valley_graph
 * (0.65 on its valley line) less 0.7, clamped, is exactly 0 on a band
 * about 25 samples wide down the middle, and its water leaves over the
 * north and south edges.  Routed in parallel lines straight to the edge
 * (as a breadth-first flood back to the edge does), each line carries
 * its own column and what the walls pour into it: about 220 samples.
 * Gathered down the middle of the floor into one channel, the channel
 * near the south edge carries more than the whole southern half of the
 * floor (D8), or at least a good part of it (MFD, which spreads water
 * over a flat as it does over a slope). */
static void
test_flow_flat_floor (void)
{
  const char *routings[2] = { "mfd", "d8" };

  for (int k = 0; k < 2; k++)
    {
      TgGraph *g = valley_graph (129);
      TgEngine *e = new_engine (2);
      TgRegion r = world_region (g);
      TgValue *v = NULL, *ground = NULL;
      int half, f, sum, floor_n = 0, south = r.height - 5;
      double channel = 0.0;

      /* Rewire: V - 0.7 instead of V + tilt. */
      sum = tg_graph_find_node (g, "sum");
      SET (g, sum, "op", "subtract");
      half = add_node (g, "half", "gen.constant");
      SET (g, half, "value", "0.7");
      tg_graph_remove_link (g, tg_graph_input_link (g, sum, 1)); /* tilt -> b */
      add_link (g, "half", "height", "sum", "b");
      f = tg_graph_find_node (g, "flow");
      SET (g, f, "routing", routings[k]);
      ground = pull (e, g, "sum", &r);
      v = pull (e, g, "flow", &r);
      if (v && ground)
        {
          for (int j = r.height / 2; j < r.height; j++)
            for (int i = 0; i < r.width; i++)
              floor_n += at (ground, i, j) == 0.0f;
          for (int i = 0; i < r.width; i++)
            if (at (ground, i, south) == 0.0f)
              channel = fmax (channel, samples_through (at (v, i, south), 2048, 129));
          fprintf (stderr, "  %s: %d floor samples in the southern half; the most through one "
                   "sample near the south edge: %.0f\n", routings[k], floor_n, channel);
          TG_CHECK_MSG (floor_n > 1000, "the floor is too small (%d)", floor_n);
          TG_CHECK_MSG (channel > (k == 0 ? 0.3 : 0.9) * floor_n,
                        "%s: the floor's water leaves spread out (%.0f of %d through one "
                        "sample)", routings[k], channel, floor_n);
        }
      if (v)
        tg_value_unref (v);
      if (ground)
        tg_value_unref (ground);
      tg_engine_free (e);
      tg_graph_free (g);
    }
}

static void
test_flow_resolution (void)
{
  TgValue *vals[2] = { 0 };
  int res[2] = { 129, 257 };
  TgEngine *e = new_engine (2);

  for (int k = 0; k < 2; k++)
    {
      TgGraph *g = valley_graph (res[k]);
      TgRegion r = world_region (g);
      vals[k] = pull (e, g, "flow", &r);
      tg_graph_free (g);
    }
  if (vals[0] && vals[1])
    {
      double diff = 0.0, worst_line = 0.0;
      for (int j = 0; j < 129; j++)
        {
          for (int i = 0; i < 129; i++)
            diff += fabs ((double) at (vals[0], i, j) - at (vals[1], 2 * i, 2 * j));
          if (j > 4 && j < 124)
            worst_line = fmax (worst_line, fabs ((double) at (vals[0], 64, j)
                                                 - at (vals[1], 128, 2 * j)));
        }
      diff /= 129.0 * 129.0;
      fprintf (stderr, "  mean |257 - 513| %.4f, worst on the valley line %.4f\n", diff,
               worst_line);
      TG_CHECK_MSG (diff < 0.06, "mean difference %g", diff);
      TG_CHECK_MSG (worst_line < 0.05, "valley line differs by %g", worst_line);
    }
  for (int k = 0; k < 2; k++)
    if (vals[k])
      tg_value_unref (vals[k]);
  tg_engine_free (e);
}

/* The tiled scheme through the engine (tg_engine_tile_step, blobs in an
 * in-memory store): the bytes of the whole evaluation for any tiling,
 * uneven and one-sample tiles included, on ridged noise (pits, lakes),
 * the flat-floored valley and the crater, with MFD and D8. */
static void
test_flow_tiled_equals_whole (void)
{
  static const int tilings[][2] = { { 1, 1 }, { 2, 2 }, { 3, 2 }, { 4, 4 }, { 7, 5 },
                                    { 1, 9 }, { 65, 3 }, { 22, 31 } };
  const char *routings[2] = { "mfd", "d8" };

  for (int kind = 0; kind < 3; kind++)
    for (int k = 0; k < 2; k++)
      {
        TgGraph *g;
        TgEngine *e = new_engine (2), *e1 = new_engine (1);
        TgRegion r;
        TgValue *whole, *one;
        int f;

        if (kind == 0)
          {
            g = new_graph (2048, 2048, 65);
            SET (g, add_node (g, "base", "noise.fbm"), "mode", "ridged");
            add_node (g, "flow", "erosion.flow");
            add_link (g, "base", "height", "flow", "height");
          }
        else if (kind == 1)
          {
            int sum, half;
            g = valley_graph (65);
            sum = tg_graph_find_node (g, "sum");
            SET (g, sum, "op", "subtract");
            half = add_node (g, "half", "gen.constant");
            SET (g, half, "value", "0.7");
            tg_graph_remove_link (g, tg_graph_input_link (g, sum, 1));
            add_link (g, "half", "height", "sum", "b");
          }
        else
          {
            int s;
            g = new_graph (2048, 2048, 65);
            s = add_node (g, "disc", "gen.shape");
            SET (g, s, "radius_m", "600");
            SET (g, s, "falloff_m", "500");
            add_node (g, "crater", "filter.invert");
            add_node (g, "flow", "erosion.flow");
            add_link (g, "disc", "height", "crater", "height");
            add_link (g, "crater", "height", "flow", "height");
          }
        f = tg_graph_find_node (g, "flow");
        SET (g, f, "routing", routings[k]);
        r = world_region (g);
        whole = pull (e, g, "flow", &r);
        one = pull (e1, g, "flow", &r);
        if (whole && one)
          TG_CHECK_MSG (memcmp (whole->data, one->data, sizeof (float) * tg_region_samples (&r)) == 0,
                        "terrain %d, %s: 1 and 2 threads differ", kind, routings[k]);
        tg_value_unref (one);
        tg_engine_free (e1);
        for (int t = 0; whole && t < TG_N_ELEMENTS (tilings); t++)
          {
            TgValue *tiled = NULL;
            TgtestStore st = { 0 };
            TgError err = { 0 };
            int rc = tgtest_tiled_pull (e, g, f, 0, tilings[t][0], tilings[t][1], &tiled, &st,
                                        &err);
            TG_CHECK_MSG (rc == 0, "terrain %d, %s, %dx%d: %s", kind, routings[k], tilings[t][0],
                          tilings[t][1], err.message);
            if (rc == 0)
              TG_CHECK_MSG (memcmp (whole->data, tiled->data,
                                    sizeof (float) * tg_region_samples (&r)) == 0,
                            "terrain %d, %s: %dx%d tiles differ from the whole map", kind,
                            routings[k], tilings[t][0], tilings[t][1]);
            tg_value_unref (tiled);
          }
        tg_value_unref (whole);
        tg_engine_free (e);
        tg_graph_free (g);
      }
}

int
main (void)
{
  TG_RUN (test_flow_plane);
  TG_RUN (test_flow_valley);
  TG_RUN (test_flow_pit);
  TG_RUN (test_flow_flat_floor);
  TG_RUN (test_flow_resolution);
  TG_RUN (test_flow_tiled_equals_whole);
  return tgtest_result ();
}
