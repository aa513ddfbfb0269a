/* erosion.thermal's rockfall (weathering_m, converge mode, with a
 * loose-material mask) on a cliff: a 160 m wall between a plateau and a
 * valley floor, both loose ground, the wall bedrock.  The wall steps back
 * by the weathering depth and its rock lies at its foot as an apron at
 * the talus angle, no farther out than such an apron reaches; the volume
 * is kept; passes mode refuses it; without a mask it changes nothing;
 * threads and windows give the same bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtest.h"

#define SIZE_M 512.0
#define RES 257 /* 2 m cells */
#define HEIGHT_M 200.0

/* A gradient rising northwards through a curve: the floor at 20 m, the
 * plateau at 180 m, the wall between (0.4 .. 0.6 of the way north: 160
 * m over 102 m, 58 deg at its steepest).  "loose": slopes under 42 deg, bedrock by 50
 * (alpine's mask); "ero": converge mode at 38 deg. */
static TgGraph *
cliff_graph (const char *weathering)
{
  TgGraph *g = new_graph (SIZE_M, SIZE_M, RES);
  int n;

  tg_graph_world (g)->height_m = HEIGHT_M;
  n = add_node (g, "ramp", "gen.gradient");
  SET (g, n, "angle_deg", "90");
  n = add_node (g, "cliff", "curve");
  SET (g, n, "points", "0:0.1,0.4:0.1,0.6:0.9,1:0.9");
  add_link (g, "ramp", "height", "cliff", "height");
  n = add_node (g, "loose", "select.slope");
  SET (g, n, "min_slope_deg", "0");
  SET (g, n, "max_slope_deg", "42");
  SET (g, n, "falloff_deg", "8");
  add_link (g, "cliff", "height", "loose", "height");
  n = add_node (g, "ero", "erosion.thermal");
  SET (g, n, "talus_deg", "38");
  SET (g, n, "mode", "converge");
  SET (g, n, "strength", "1");
  SET (g, n, "reference_cell_m", "0");
  SET (g, n, "iterations", "400");
  SET (g, n, "weathering_m", weathering);
  add_link (g, "cliff", "height", "ero", "height");
  add_link (g, "loose", "mask", "ero", "mask");
  return g;
}

/* Column I's rows: the first (from the north) where the input is under
 * the plateau by 1 m: the wall's top; the last over the floor by 1 m:
 * its foot. */
static void
wall_rows (const TgValue *in, int i, int *top, int *foot)
{
  *top = *foot = -1;
  for (int j = 0; j < in->region.height; j++)
    {
      double z = at (in, i, j) * HEIGHT_M;
      if (*top < 0 && z < 179.0)
        *top = j;
      if (z > 21.0)
        *foot = j;
    }
}

static void
test_wall_steps_back_into_an_apron (void)
{
  TgGraph *g0 = cliff_graph ("0"), *g4 = cliff_graph ("4");
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g0);
  TgValue *in = pull (e, g0, "cliff", &r), *m = pull_port (e, g0, "loose", 0, &r);
  TgValue *o0 = pull (e, g0, "ero", &r), *o4 = pull (e, g4, "ero", &r);
  TgValue *dep = pull_port (e, g4, "ero", 1, &r);

  if (in && m && o0 && o4 && dep)
    {
      double cut = 0.0, laid = 0.0, far = 0.0, lowered = 0.0, deepest = 0.0;
      double talus = tan (40.0 * M_PI / 180.0);
      long face = 0, steep_loose = 0, loose = 0;
      int top, foot;
      wall_rows (in, RES / 2, &top, &foot);
      TG_CHECK_MSG (top > 0 && foot > top && foot - top < 60, "wall rows %d .. %d", top, foot);
      for (int j = 1; j < RES - 1; j++)
        for (int i = 1; i < RES - 1; i++)
          {
            double d = ((double) at (o4, i, j) - at (o0, i, j)) * HEIGHT_M;
            bool rock = true, all_loose = true;
            for (int dy = -1; dy <= 1; dy++)
              for (int dx = -1; dx <= 1; dx++)
                {
                  rock = rock && at (m, i + dx, j + dy) == 0.0f;
                  all_loose = all_loose && at (m, i + dx, j + dy) == 1.0f;
                }
            if (d < 0.0)
              cut -= d;
            else
              laid += d;
            /* The wall's own bedrock steps back (against weathering 0) by
             * the weathering depth in its core, ramping in from its edges
             * (rockfall runs on 4 m cells, ramps two of them), above the
             * apron that buries its foot. */
            if (rock && at (in, i, j) * HEIGHT_M > 80.0)
              {
                double l = ((double) at (o0, i, j) - at (o4, i, j)) * HEIGHT_M;
                lowered += l;
                deepest = l > deepest ? l : deepest;
                face++;
              }
            /* An apron at 38 deg of what fell from 4 m of a 160 m wall
             * (about 4 x 160 / sin 58 = 755 m² a metre of wall) reaches
             * sqrt (2 x 755 / tan 38) = 44 m from the foot. */
            if (d > 0.01 && (j - foot) * r.cell > 100.0)
              far += d;
            if (all_loose)
              {
                double gx = ((double) at (o4, i + 1, j) - at (o4, i - 1, j)) * HEIGHT_M;
                double gy = ((double) at (o4, i, j + 1) - at (o4, i, j - 1)) * HEIGHT_M;
                gx /= 2 * r.cell;
                gy /= 2 * r.cell;
                steep_loose += sqrt (gx * gx + gy * gy) > talus;
                loose++;
              }
          }
      printf ("# wall rows %d .. %d; face %ld samples, stepped back %.3f m on average, "
              "%.3f at most; moved %.0f m of height-samples, laid %.0f; %.4f of the loose "
              "ground over 40 deg; deposit mask at the foot %.2f\n",
              top, foot, face, face ? lowered / face : 0.0, deepest, cut, laid,
              loose ? (double) steep_loose / loose : 0.0, at (dep, RES / 2, foot + 3));
      TG_CHECK_MSG (fabs (sum_of (o4) - sum_of (in)) < 1e-6 * sum_of (in), "sum %.12g -> %.12g",
                    sum_of (in), sum_of (o4));
      TG_CHECK_MSG (face > 4 * RES && lowered / face > 2.5 && lowered / face <= 4.0
                      && fabs (deepest - 4.0) < 0.05,
                    "%ld face samples stepped back %.2f m on average, %.3f at most, want "
                    "2.5..4 and 4",
                    face, face ? lowered / face : 0.0, deepest);
      /* What the wall lost (against weathering 0) lies below it. */
      TG_CHECK_MSG (laid > 0.5 * 4.0 * face && fabs (laid - cut) < 0.01 * cut,
                    "laid %.0f, cut %.0f m of height-samples (face %ld)", laid, cut, face);
      TG_CHECK_MSG (far < 0.01 * laid, "%.1f of %.1f laid over 100 m beyond the foot", far, laid);
      TG_CHECK_MSG (loose > RES * RES / 2 && steep_loose < loose / 100,
                    "%ld of %ld loose samples over talus + 2 deg", steep_loose, loose);
      TG_CHECK_MSG (at (dep, RES / 2, foot + 3) > 0.0f, "no deposit at the wall's foot");
    }
  for (TgValue **v = (TgValue *[]) { in, m, o0, o4, dep, NULL }; *v; v++)
    tg_value_unref (*v);
  tg_engine_free (e);
  tg_graph_free (g0);
  tg_graph_free (g4);
}

/* Rockfall settles over the whole world: passes mode refuses it, naming
 * the parameter. */
static void
test_passes_mode_refuses_weathering (void)
{
  TgGraph *g = cliff_graph ("4");
  TgError err = { 0 };

  SET (g, tg_graph_find_node (g, "ero"), "mode", "passes");
  TG_CHECK (tg_graph_validate (g, &err) != 0);
  TG_CHECK_MSG (strstr (err.path, "params.weathering_m") != NULL, "path %s: %s", err.path,
                err.message);
  tg_graph_free (g);
}

/* Without a mask every sample is loose: nothing weathers, the bytes are
 * those of weathering 0. */
static void
test_no_mask_no_rockfall (void)
{
  TgGraph *g0 = cliff_graph ("0"), *g4 = cliff_graph ("4");
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g0);
  TgValue *a, *b;

  tg_graph_remove_link (g0, tg_graph_input_link (g0, tg_graph_find_node (g0, "ero"), 1));
  tg_graph_remove_link (g4, tg_graph_input_link (g4, tg_graph_find_node (g4, "ero"), 1));
  a = pull (e, g0, "ero", &r);
  b = pull (e, g4, "ero", &r);
  if (a && b)
    TG_CHECK (memcmp (a->data, b->data, sizeof (float) * RES * RES) == 0);
  tg_value_unref (a);
  tg_value_unref (b);
  tg_engine_free (e);
  tg_graph_free (g0);
  tg_graph_free (g4);
}

/* One thread or three, the whole world or a window: the same bytes. */
static void
test_threads_and_windows_agree (void)
{
  TgGraph *g = cliff_graph ("4");
  TgEngine *e1 = new_engine (1), *e3 = new_engine (3);
  TgRegion full = world_region (g), win = tg_region_window (&full, 60, 100, 90, 70);
  TgValue *a = pull (e1, g, "ero", &full), *b = pull (e3, g, "ero", &full);
  TgValue *w = pull (e3, g, "ero", &win);

  if (a && b && w)
    {
      TG_CHECK (memcmp (a->data, b->data, sizeof (float) * RES * RES) == 0);
      TG_CHECK (same_window (a, w));
    }
  tg_value_unref (a);
  tg_value_unref (b);
  tg_value_unref (w);
  tg_engine_free (e1);
  tg_engine_free (e3);
  tg_graph_free (g);
}

int
main (void)
{
  TG_RUN (test_wall_steps_back_into_an_apron);
  TG_RUN (test_passes_mode_refuses_weathering);
  TG_RUN (test_no_mask_no_rockfall);
  TG_RUN (test_threads_and_windows_agree);
  return tgtest_result ();
}
