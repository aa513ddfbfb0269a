/* erosion.thermal with its loose-material mask: material moved between two
 * cells is scaled by how loose the cell it leaves is (its mask, or the
 * scree lying on it), so the volume is still conserved; bedrock (mask 0)
 * never ends lower, scree only passes over it, and in passes mode bedrock
 * that nothing falls on stays bit for bit; converge mode
 * brings the loose ground (mask 1) to its talus; a mask of 1 everywhere
 * gives exactly the bytes of no mask; and every kernel, pass block,
 * strip, thread count and window gives the same bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtest.h"

#define HEIGHT_M 850.0

/* A 4 km world, 850 m high (alpine's): ridged fBm ("base") into
 * erosion.thermal ("ero"), whose mask is a patchwork ("loose", 1 where a
 * second, smooth fBm is low, 0 where it is high, fading between)
 * independent of the terrain. */
static TgGraph *
masked_graph (int res)
{
  TgGraph *g = new_graph (4096, 4096, res);
  int b, n, m, t;

  tg_graph_world (g)->height_m = HEIGHT_M;
  tg_graph_world (g)->seed = 4242;
  b = add_node (g, "base", "noise.fbm");
  SET (g, b, "mode", "ridged");
  SET (g, b, "scale_m", "1700");
  SET (g, b, "octaves", "7");
  SET (g, b, "persistence", "0.5");
  n = add_node (g, "patches", "noise.fbm");
  SET (g, n, "scale_m", "1200");
  SET (g, n, "octaves", "3");
  SET (g, n, "seed", "5");
  m = add_node (g, "loose", "select.height");
  SET (g, m, "min_height", "0");
  SET (g, m, "max_height", "0.5");
  SET (g, m, "falloff", "0.05");
  t = add_node (g, "ero", "erosion.thermal");
  SET (g, t, "talus_deg", "38");
  SET (g, t, "iterations", "30");
  SET (g, t, "reference_cell_m", "0");
  add_link (g, "base", "height", "ero", "height");
  add_link (g, "patches", "height", "loose", "height");
  add_link (g, "loose", "mask", "ero", "mask");
  return g;
}

/* Whether the mask is exactly V on sample (I, J) and its 8 neighbours
 * (interior samples only). */
static bool
mask_around (const TgValue *m, int i, int j, float v)
{
  if (i < 1 || j < 1 || i >= m->region.width - 1 || j >= m->region.height - 1)
    return false;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++)
      if (at (m, i + dx, j + dy) != v)
        return false;
  return true;
}

/* Passes and converge mode, with the patchwork mask and with a mask of
 * bedrock on the heights (mask 0 over 45 % of the height range, fading in
 * below: nothing lies above bedrock but bedrock, so nothing falls on it):
 * the volume stays (float rounding: 1e-7 of it, 1e-6 over converge
 * mode's thousands of passes, as test_erosion_thermal_talus), something
 * moved on the loose ground, no bedrock sample ends lower, and with the
 * height mask in passes mode every bedrock sample is kept bit for bit
 * (converge mode's coarse levels may drop scree on it, which then slides
 * on: bedrock never lower, not bit for bit). */
static void
test_mask_conserves_and_keeps_bedrock (void)
{
  static const char *const modes[] = { "passes", "converge" };

  for (int c = 0; c < 4; c++)
    {
      TgGraph *g = masked_graph (257);
      TgEngine *e = new_engine (2);
      TgRegion r = world_region (g);
      TgValue *in, *out, *m;
      int md = c % 2;
      bool on_heights = c >= 2;

      SET (g, tg_graph_find_node (g, "ero"), "mode", modes[md]);
      if (md == 1)
        SET (g, tg_graph_find_node (g, "ero"), "iterations", "200");
      if (on_heights)
        {
          int lm = tg_graph_find_node (g, "loose");
          tg_graph_remove_link (g, tg_graph_input_link (g, lm, 0));
          add_link (g, "base", "height", "loose", "height");
          SET (g, lm, "max_height", "0.4");
        }
      in = pull (e, g, "base", &r);
      out = pull (e, g, "ero", &r);
      m = pull_port (e, g, "loose", 0, &r);
      if (in && out && m)
        {
          double a = sum_of (in), b = sum_of (out), moved_loose = 0.0, lost = 0.0;
          long kept = 0, bedrock = 0, zeros = 0, ones = 0;
          for (int j = 0; j < r.height; j++)
            for (int i = 0; i < r.width; i++)
              {
                float hi = at (in, i, j), ho = at (out, i, j), mk = at (m, i, j);
                zeros += mk == 0.0f;
                ones += mk == 1.0f;
                if (mk == 1.0f)
                  moved_loose += fabs ((double) ho - hi);
                /* Bedrock sheds only the scree on it. */
                if (mk == 0.0f && (double) hi - ho > lost)
                  lost = (double) hi - ho;
                if (mk == 0.0f)
                  {
                    bedrock++;
                    kept += memcmp (&hi, &ho, sizeof hi) == 0;
                  }
              }
          /* Both kinds of ground are there in quantity. */
          printf ("# %s, mask %s: bedrock %ld samples (%ld kept exactly), at most %.4f m lower\n",
                  modes[md], on_heights ? "on the heights" : "in patches", bedrock, kept,
                  lost * HEIGHT_M);
          TG_CHECK_MSG (zeros > r.width * r.height / 10 && ones > r.width * r.height / 5,
                        "mask 0 on %ld, 1 on %ld samples", zeros, ones);
          TG_CHECK_MSG (moved_loose > 1.0, "%s: the loose ground moved only %g", modes[md],
                        moved_loose);
          TG_CHECK_MSG (fabs (a - b) < (md == 0 ? 1e-7 : 1e-6) * a, "%s: sum %.12g -> %.12g",
                        modes[md], a, b);
          TG_CHECK_MSG (lost == 0.0, "%s: a bedrock sample ended %.3g m lower", modes[md],
                        lost * HEIGHT_M);
          if (on_heights && md == 0)
            TG_CHECK_MSG (bedrock > 1000 && kept == bedrock,
                          "%s: %ld of %ld bedrock samples kept exactly", modes[md], kept, bedrock);
        }
      for (TgValue **v = (TgValue *[]) { in, out, m, NULL }; *v; v++)
        tg_value_unref (*v);
      tg_engine_free (e);
      tg_graph_free (g);
    }
}

/* Share of the interior samples with mask exactly V all around whose
 * central-difference slope is over DEG degrees; *N their count. */
static double
share_over_where (const TgValue *v, const TgValue *m, float mv, double deg, long *count)
{
  const TgRegion *r = &v->region;
  double lim = tan (deg * M_PI / 180.0);
  long over = 0, n = 0;

  for (int j = 1; j < r->height - 1; j++)
    for (int i = 1; i < r->width - 1; i++)
      {
        double gx, gy;
        if (!mask_around (m, i, j, mv))
          continue;
        gx = ((double) at (v, i + 1, j) - at (v, i - 1, j)) * HEIGHT_M / (2.0 * r->cell);
        gy = ((double) at (v, i, j + 1) - at (v, i, j - 1)) * HEIGHT_M / (2.0 * r->cell);
        over += sqrt (gx * gx + gy * gy) > lim;
        n++;
      }
  *count = n;
  return n > 0 ? (double) over / (double) n : 0.0;
}

/* Converge mode at alpine's 4 m cells: under 1 % of the loose ground
 * (mask 1 all around) stays steeper than talus + 2 degrees.  The cap is
 * higher than the unmasked talus test's 200 passes a level: ground that
 * is partly loose, or bedrock under a little scree, sheds slowly, and the
 * loose ground beside it takes longer to settle, on the finer levels
 * only since the coarse ones move ground that is loose all through
 * (1500: 0.79 %; 0.62 % when they slid partly bedrock samples too, which
 * left walls: test_mask_converge_leaves_no_bedrock_walls).  The bedrock
 * (mask 0 all around) keeps steep slopes, fewer where scree came to rest
 * on it. */
static void
test_mask_converge_reaches_talus_on_loose_ground (void)
{
  TgGraph *g = masked_graph (1025);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  int t = tg_graph_find_node (g, "ero");
  TgValue *in, *out, *m;

  SET (g, t, "mode", "converge");
  SET (g, t, "tolerance_deg", "1");
  SET (g, t, "strength", "1");
  SET (g, t, "iterations", "1500");
  in = pull (e, g, "base", &r);
  out = pull (e, g, "ero", &r);
  m = pull_port (e, g, "loose", 0, &r);
  if (in && out && m)
    {
      long n_loose, n_rock, n0;
      double before = share_over_where (in, m, 1.0f, 40.0, &n0);
      double loose = share_over_where (out, m, 1.0f, 40.0, &n_loose);
      double rock_in = share_over_where (in, m, 0.0f, 40.0, &n0);
      double rock = share_over_where (out, m, 0.0f, 40.0, &n_rock);
      printf ("# over talus + 2 deg: loose ground %.2f %% -> %.3f %% (%ld samples), bedrock "
              "%.2f %% -> %.2f %% (%ld samples)\n",
              100 * before, 100 * loose, n_loose, 100 * rock_in, 100 * rock, n_rock);
      /* Float rounding, growing with the passes (1e-6 as the unmasked
       * talus test's up to 800 passes a level, 1.2e-6 at 1500). */
      TG_CHECK_MSG (fabs (sum_of (in) - sum_of (out)) < 2e-6 * sum_of (in), "sum %.12g -> %.12g",
                    sum_of (in), sum_of (out));
      TG_CHECK_MSG (before > 0.2, "the loose ground was not steep to begin with (%g)", before);
      TG_CHECK_MSG (n_loose > 100000 && loose < 0.01,
                    "%.3f %% of %ld loose samples over talus + 2 deg", 100 * loose, n_loose);
      TG_CHECK_MSG (n_rock > 100000 && rock <= rock_in && rock > 0.5 * rock_in,
                    "bedrock over talus + 2 deg %.2f %% -> %.2f %%", 100 * rock_in, 100 * rock);
    }
  for (TgValue **v = (TgValue *[]) { in, out, m, NULL }; *v; v++)
    tg_value_unref (*v);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* How far sample (I, J) of V stands over its neighbours, in metres: over
 * the highest of all eight (*NEEDLE), and over the higher of the two
 * opposite ones along the axis where that is most (*WALL: a wall one
 * sample thick stands over both its sides). */
static void
stands_over (const TgValue *v, int i, int j, double *needle, double *wall)
{
  static const int axes[4][2] = { { 1, 0 }, { 0, 1 }, { 1, 1 }, { 1, -1 } };
  double h = at (v, i, j), top = -1e30, w = -1e30;

  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++)
      if ((dx || dy) && at (v, i + dx, j + dy) > top)
        top = at (v, i + dx, j + dy);
  for (int k = 0; k < 4; k++)
    {
      double a = at (v, i + axes[k][0], j + axes[k][1]), b = at (v, i - axes[k][0], j - axes[k][1]);
      if (h - (a > b ? a : b) > w)
        w = h - (a > b ? a : b);
    }
  *needle = (h - top) * HEIGHT_M;
  *wall = w * HEIGHT_M;
}

/* Neighbour pairs (orthogonal and diagonal) of V more than BOUND metres
 * apart with a bedrock sample (mask 0 in M) in them. */
static long
steps_at_bedrock (const TgValue *v, const TgValue *m, double bound)
{
  static const int dirs[4][2] = { { 1, 0 }, { 0, 1 }, { 1, 1 }, { -1, 1 } };
  const TgRegion *r = &v->region;
  long n = 0;

  for (int j = 0; j < r->height; j++)
    for (int i = 0; i < r->width; i++)
      for (int k = 0; k < 4; k++)
        {
          int x = i + dirs[k][0], y = j + dirs[k][1];
          if (x < 0 || x >= r->width || y >= r->height)
            continue;
          if ((at (m, i, j) == 0.0f || at (m, x, y) == 0.0f)
              && fabs ((double) at (v, i, j) - at (v, x, y)) * HEIGHT_M > bound)
            n++;
        }
  return n;
}

/* Converge mode with alpine's kind of mask, loose ground where the slope
 * is under 45 degrees fading out by 55 (bedrock on the crests and the
 * steepest faces, often a sample or two wide), at 8 m cells: no bedrock
 * sample is left standing as a needle or wall over loose ground that
 * slid away beside it.  Bedrock sheds nothing, so it stands over its
 * neighbours only as far as the loose ground beside it really slid at
 * the fine level.  The pyramid's coarse levels took the loosest fine
 * sample for a coarse one, slid the bedrock with the loose ground and
 * lowered the loose samples beside it as if it had gone: bedrock stood up
 * to 92 m over all its neighbours (the input: 1.5 m), walls up to 134 m
 * over both sides (16 m), and 1.94 times the input's steps of more than
 * 20 m at bedrock.  Now 14.1 m, 24.4 m and 1.12 times the steps; the
 * loose ground still settles (0.10 % over talus + 2 degrees; the loose
 * ground beside bedrock settles on the finer levels only, so the cap is
 * 600) and the volume stays, to 1e-7 of it: a masked
 * pair's term under the dead band's least one moves nothing (see
 * pair_masked in the node; a thinner one gained half an ulp at the lower
 * cell pass after pass, 1.7e-6 here). */
static void
test_mask_converge_leaves_no_bedrock_walls (void)
{
  TgGraph *g = masked_graph (513);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  int t, lm;
  TgValue *in, *out, *m;

  /* Later nodes' indices shift down. */
  tg_graph_remove_node (g, tg_graph_find_node (g, "loose"));
  t = tg_graph_find_node (g, "ero");
  lm = add_node (g, "loose", "select.slope");
  SET (g, lm, "min_slope_deg", "0");
  SET (g, lm, "max_slope_deg", "45");
  SET (g, lm, "falloff_deg", "10");
  add_link (g, "base", "height", "loose", "height");
  add_link (g, "loose", "mask", "ero", "mask");
  SET (g, t, "mode", "converge");
  SET (g, t, "tolerance_deg", "1");
  SET (g, t, "iterations", "600");
  in = pull (e, g, "base", &r);
  out = pull (e, g, "ero", &r);
  m = pull_port (e, g, "loose", 0, &r);
  if (in && out && m)
    {
      double needle_in = -1e30, needle = -1e30, wall_in = -1e30, wall = -1e30, nd, wl;
      long rock = 0, n_loose, steps_in = steps_at_bedrock (in, m, 20.0),
           steps = steps_at_bedrock (out, m, 20.0);
      double loose = share_over_where (out, m, 1.0f, 40.0, &n_loose);
      for (int j = 1; j < r.height - 1; j++)
        for (int i = 1; i < r.width - 1; i++)
          if (at (m, i, j) == 0.0f)
            {
              rock++;
              stands_over (in, i, j, &nd, &wl);
              needle_in = nd > needle_in ? nd : needle_in;
              wall_in = wl > wall_in ? wl : wall_in;
              stands_over (out, i, j, &nd, &wl);
              needle = nd > needle ? nd : needle;
              wall = wl > wall ? wl : wall;
            }
      printf ("# bedrock %ld samples: over all neighbours at most %.2f -> %.2f m, over both "
              "sides %.2f -> %.2f m; steps over 20 m at bedrock %ld -> %ld; loose ground over "
              "talus + 2 deg %.3f %%\n",
              rock, needle_in, needle, wall_in, wall, steps_in, steps, 100 * loose);
      TG_CHECK_MSG (rock > 20000 && steps_in > 10000, "bedrock %ld samples, %ld steps", rock,
                    steps_in);
      TG_CHECK_MSG (needle < 20.0, "a bedrock needle %.1f m over all its neighbours (input %.1f)",
                    needle, needle_in);
      TG_CHECK_MSG (wall < wall_in + 10.0, "a bedrock wall %.1f m over both its sides (input %.1f)",
                    wall, wall_in);
      /* Loose ground that settles further slides further from the bedrock
       * beside it: before the node's version 2, cap 600 left 0.57 % of it
       * over talus + 2 deg and 1.02 times the steps, cap 3000 0.05 % and
       * 1.15 times; version 2 at 600, 0.10 % and 1.12 times. */
      TG_CHECK_MSG (steps < 1.15 * steps_in, "%ld steps over 20 m at bedrock (input %ld)", steps,
                    steps_in);
      TG_CHECK_MSG (n_loose > 20000 && loose < 0.01, "%.3f %% of %ld loose samples over talus + 2",
                    100 * loose, n_loose);
      TG_CHECK_MSG (fabs (sum_of (in) - sum_of (out)) < 1e-7 * sum_of (in),
                    "sum %.12g -> %.12g (%.2g of it)", sum_of (in), sum_of (out),
                    (sum_of (out) - sum_of (in)) / sum_of (in));
    }
  for (TgValue **v = (TgValue *[]) { in, out, m, NULL }; *v; v++)
    tg_value_unref (*v);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* A mask of 1 everywhere (gen.constant) gives the unmasked bytes, in both
 * modes: a pair's term times 1 is itself. */
static void
test_mask_of_one_is_no_mask (void)
{
  static const char *const modes[] = { "passes", "converge" };

  for (int md = 0; md < 2; md++)
    {
      TgGraph *g = masked_graph (301), *g1 = masked_graph (301);
      TgEngine *e = new_engine (2);
      TgRegion r = world_region (g);
      int one = add_node (g1, "one", "gen.constant");
      TgValue *a, *b, *da, *db;

      SET (g1, one, "value", "1");
      tg_graph_remove_link (g, tg_graph_input_link (g, tg_graph_find_node (g, "ero"), 1));
      tg_graph_remove_link (g1, tg_graph_input_link (g1, tg_graph_find_node (g1, "ero"), 1));
      add_link (g1, "one", "height", "ero", "mask");
      SET (g, tg_graph_find_node (g, "ero"), "mode", modes[md]);
      SET (g1, tg_graph_find_node (g1, "ero"), "mode", modes[md]);
      a = pull (e, g, "ero", &r);
      b = pull (e, g1, "ero", &r);
      da = pull_port (e, g, "ero", 1, &r);
      db = pull_port (e, g1, "ero", 1, &r);
      if (a && b && da && db)
        {
          TG_CHECK_MSG (hash_value (a) == hash_value (b), "%s: heights differ", modes[md]);
          TG_CHECK_MSG (hash_value (da) == hash_value (db), "%s: deposits differ", modes[md]);
        }
      for (TgValue **v = (TgValue *[]) { a, b, da, db, NULL }; *v; v++)
        tg_value_unref (*v);
      tg_engine_free (e);
      tg_graph_free (g);
      tg_graph_free (g1);
    }
}

/* With a mask, the generic, AVX2 and AVX-512 kernels (TG_THERMAL_ISA),
 * one pass per trip and blocked, in strips and bands, on 1 and 3
 * threads, whole and as windows (the apron, as a tiled build's tiles),
 * in both modes: all the same bytes as the generic kernel's first run. */
static void
test_mask_kernels_threads_windows_agree (void)
{
  static const char *const modes[] = { "passes", "converge" };
  static const char *const isas[] = { "generic", "avx2", "avx512" };
  /* Passes per trip, columns per strip, rows per band ("0": default). */
  static const char *const blocks[][3] = { { "1", "0", "0" }, { "0", "0", "0" }, { "5", "37", "16" } };

  for (int md = 0; md < 2; md++)
    {
      TgGraph *g = masked_graph (301);
      int t = tg_graph_find_node (g, "ero");
      TgRegion full = world_region (g);
      TgRegion wins[2] = { tg_region_window (&full, 90, 0, 101, 120),
                           tg_region_window (&full, 150, 170, 64, 50) };
      TgValue *ref = NULL, *refd = NULL;

      SET (g, t, "mode", modes[md]);
      SET (g, t, "iterations", md == 0 ? "37" : "400");
      for (int i = 0; i < 3; i++)
        for (int bl = 0; bl < 3; bl++)
          for (int th = 1; th <= 3; th += 2)
            {
              TgEngine *e = new_engine (th);
              TgValue *h, *d;
              setenv ("TG_THERMAL_ISA", isas[i], 1);
              setenv ("TG_THERMAL_BLOCK", blocks[bl][0], 1);
              setenv ("TG_THERMAL_STRIP", blocks[bl][1], 1);
              setenv ("TG_THERMAL_BAND", blocks[bl][2], 1);
              h = pull (e, g, "ero", &full);
              d = pull_port (e, g, "ero", 1, &full);
              if (!ref)
                {
                  ref = h;
                  refd = d;
                  tg_engine_free (e);
                  continue;
                }
              if (h && d && refd)
                TG_CHECK_MSG (hash_value (h) == hash_value (ref) && hash_value (d) == hash_value (refd),
                              "%s, %s kernel, block %s, strip %s, band %s, %d threads: bytes "
                              "differ from the generic kernel's",
                              modes[md], isas[i], blocks[bl][0], blocks[bl][1], blocks[bl][2], th);
              for (int k = 0; k < 2 && bl != 1; k++)
                {
                  TgEngine *ew = new_engine (th);
                  TgValue *w = pull (ew, g, "ero", &wins[k]);
                  if (w)
                    {
                      TG_CHECK_MSG (same_window (ref, w), "%s, %s kernel: window %d differs",
                                    modes[md], isas[i], k);
                      tg_value_unref (w);
                    }
                  tg_engine_free (ew);
                }
              for (TgValue **v = (TgValue *[]) { h, d, NULL }; *v; v++)
                tg_value_unref (*v);
              tg_engine_free (e);
            }
      if (ref)
        tg_value_unref (ref);
      if (refd)
        tg_value_unref (refd);
      tg_graph_free (g);
    }
  unsetenv ("TG_THERMAL_ISA");
  unsetenv ("TG_THERMAL_BLOCK");
  unsetenv ("TG_THERMAL_STRIP");
  unsetenv ("TG_THERMAL_BAND");
}

/* --- pits of -0, made here ------------------------------------------------ */

/* Height 1 and mask 0 (bedrock) everywhere but on rows 5, 15, 25, ...,
 * where columns 1, 2 (mod 3) are pits of height -0 and mask 1: a pit's
 * west neighbour is a pit as deep, its seven other neighbours bedrock far
 * above it (see test_mask_kernels_keep_signed_zeros). */
static const TgPortDesc pits_outputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = "Height" },
  { .name = "mask", .type = TG_TYPE_MASK, .label = "Mask" },
};

static int
pits_eval (TgEvalCtx *c)
{
  const TgRegion *r = tg_eval_region (c);
  TgValue *h = tg_eval_new_output (c, 0, 1), *m = tg_eval_new_output (c, 1, 1);

  if (!h || !m)
    return -1;
  for (int j = 0; j < r->height; j++)
    for (int i = 0; i < r->width; i++)
      {
        int x = r->col0 + i, y = r->row0 + j;
        bool pit = y % 10 == 5 && x % 3 != 0 && x > 0 && x < r->full_w - 1 && y < r->full_h - 1;
        tg_value_row (h, j)[i] = pit ? -0.0f : 1.0f;
        tg_value_row (m, j)[i] = pit ? 1.0f : 0.0f;
      }
  return 0;
}

static const TgNodeDesc pits_desc = {
  .type = "test.pits",
  .category = TG_CATEGORY_OTHER,
  .label = "Pits of -0",
  .help = "Thermal erosion mask tests only",
  TG_OUTPUTS (pits_outputs),
  .locality = TG_LOCALITY_LOCAL,
  .eval = pits_eval,
  .version = 1,
};
TG_NODE_REGISTER (pits_desc);

/* Signed zeros, where a kernel that takes a pair's term from the other
 * cell's (its negation) could slip: a pit's west term is +0 (a flat pair
 * moves nothing, from either side), its seven others -0 (bedrock above
 * it sheds nothing: a cut of 0 with the sign of receiving), so
 * s1 = ((+0 + -0) + -0) + -0 = +0, s2 = -0, and the pit stays
 * -0 - (k1 x +0 + k2 x -0) = -0; taking the west term as the negated
 * east term of the pit to the west (+0) would give -0, s1 = -0 and a pit
 * of +0.  Every kernel, in both modes, keeps every pit -0 (the generic
 * kernel's bytes). */
static void
test_mask_kernels_keep_signed_zeros (void)
{
  static const char *const modes[] = { "passes", "converge" };
  static const char *const isas[] = { "generic", "avx2", "avx512" };

  for (int md = 0; md < 2; md++)
    for (int i = 0; i < 3; i++)
      {
        TgGraph *g = new_graph (4096, 4096, 101);
        TgRegion full = world_region (g);
        TgEngine *e = new_engine (1);
        int t, bad = 0, pits = 0;
        TgValue *h;

        tg_graph_world (g)->height_m = HEIGHT_M;
        add_node (g, "pits", "test.pits");
        t = add_node (g, "ero", "erosion.thermal");
        SET (g, t, "talus_deg", "38");
        SET (g, t, "iterations", "1");
        SET (g, t, "reference_cell_m", "0");
        SET (g, t, "mode", modes[md]);
        add_link (g, "pits", "height", "ero", "height");
        add_link (g, "pits", "mask", "ero", "mask");
        setenv ("TG_THERMAL_ISA", isas[i], 1);
        h = pull (e, g, "ero", &full);
        for (int y = 5; h && y < 100; y += 10)
          for (int x = 1; x < 100; x++)
            if (x % 3 != 0)
              {
                pits++;
                bad += !(at (h, x, y) == 0.0f && signbit (at (h, x, y)));
              }
        TG_CHECK_MSG (h && pits > 0 && bad == 0, "%s, %s kernel: %d of %d pits are not -0",
                      modes[md], isas[i], bad, pits);
        if (h)
          tg_value_unref (h);
        tg_engine_free (e);
        tg_graph_free (g);
      }
  unsetenv ("TG_THERMAL_ISA");
}

/* The mask input is optional, a mask, and named in the descriptor. */
static void
test_mask_port (void)
{
  const TgNodeDesc *d = tg_registry_lookup ("erosion.thermal");

  TG_CHECK (d != NULL);
  if (!d)
    return;
  TG_CHECK_INT_EQ (d->n_inputs, 2);
  if (d->n_inputs < 2)
    return;
  TG_CHECK (strcmp (d->inputs[1].name, "mask") == 0);
  TG_CHECK (d->inputs[1].optional);
  TG_CHECK_INT_EQ (d->inputs[1].type, TG_TYPE_MASK);
}

/* The estimate counts the mask's working maps (its clamped copy and the
 * input kept) only when a mask is linked: a plain thermal node is not
 * refused memory it would never take. */
static void
test_mask_memory_only_when_linked (void)
{
  TgGraph *g = masked_graph (513);
  TgEngineOptions opts = { .no_cache = true };
  TgEngine *e = tg_engine_new (&opts);
  TgMemEstimate with, without;
  TgError err = { 0 };
  uint64_t map = 513ull * 513 * sizeof (float);
  int ero = tg_graph_find_node (g, "ero"), x = add_node (g, "out", "export.heightmap");

  SET (g, x, "path", "h.png");
  add_link (g, "ero", "height", "out", "height");
  TG_CHECK_MSG (tg_engine_estimate (e, g, NULL, 0, &with, &err) == 0, "%s", err.message);
  tg_graph_remove_link (g, tg_graph_input_link (g, ero, 1));
  TG_CHECK_MSG (tg_engine_estimate (e, g, NULL, 0, &without, &err) == 0, "%s", err.message);
  TG_CHECK_INT_EQ (with.node, ero);
  TG_CHECK_INT_EQ (without.node, ero);
  /* The mask itself held while thermal runs, and its two working maps. */
  TG_CHECK_MSG (with.node_bytes >= without.node_bytes + 3 * map,
                "with a mask %llu bytes, without %llu (a map %llu)",
                (unsigned long long) with.node_bytes, (unsigned long long) without.node_bytes,
                (unsigned long long) map);
  tg_engine_free (e);
  tg_graph_free (g);
}

int
main (void)
{
  TG_RUN (test_mask_port);
  TG_RUN (test_mask_memory_only_when_linked);
  TG_RUN (test_mask_conserves_and_keeps_bedrock);
  TG_RUN (test_mask_of_one_is_no_mask);
  TG_RUN (test_mask_kernels_threads_windows_agree);
  TG_RUN (test_mask_kernels_keep_signed_zeros);
  TG_RUN (test_mask_converge_reaches_talus_on_loose_ground);
  TG_RUN (test_mask_converge_leaves_no_bedrock_walls);
  return tgtest_result ();
}
