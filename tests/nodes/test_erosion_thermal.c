/* Tests for erosion.thermal: the terrain's volume is conserved to float
 * rounding (the world's edge is closed), no slope stays steeper than the
 * talus once it has converged, the bytes are the same on 1 and 4 threads
 * and a tile equals the same window of the whole map (the apron), the
 * pass count follows the cell size, and a 513 preview and a 1025 build
 * move the same volume. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtest.h"

/* --- spikes, made here ----------------------------------------------------------- */

/* The input height with a few samples (every 7919th of the lattice, so a
 * tile sees the same ones) made NaN, +inf or 1e35 (KIND 1, 2, 3): maps
 * the AVX-512 sweep may not take its three-operation pair term on. */
typedef struct
{
  int kind;
} SpikeParams;

static const TgParamDesc spike_params[] = {
  TG_PARAM_INT (SpikeParams, kind, .label = "Kind", .def = 1, .min = 0, .max = 3,
                .help = "0 none, 1 NaN, 2 +inf, 3 1e35"),
};

static const TgPortDesc spike_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = "Height" },
};

static const TgPortDesc spike_outputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = "Height" },
};

static int
spike_eval (TgEvalCtx *c)
{
  static const float spikes[] = { 0.0f, NAN, INFINITY, 1e35f };
  const SpikeParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  const TgValue *in = tg_eval_input (c, 0);
  TgValue *out = tg_eval_new_output (c, 0, 1);

  if (!out)
    return -1;
  for (int j = 0; j < r->height; j++)
    {
      const float *src = tg_value_row (in, j + r->row0 - in->region.row0)
                         + (r->col0 - in->region.col0);
      float *dst = tg_value_row (out, j);
      for (int i = 0; i < r->width; i++)
        {
          long long k = (long long) (r->row0 + j) * r->full_w + (r->col0 + i);
          dst[i] = p->kind > 0 && k % 7919 == 500 ? spikes[p->kind] : src[i];
        }
    }
  return 0;
}

static const TgNodeDesc spike_desc = {
  .type = "test.spike",
  .category = TG_CATEGORY_OTHER,
  .label = "Spiked height",
  .help = "Thermal erosion tests only",
  TG_INPUTS (spike_inputs),
  TG_OUTPUTS (spike_outputs),
  TG_PARAMS (SpikeParams, spike_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = spike_eval,
  .version = 1,
};
TG_NODE_REGISTER (spike_desc);

/* A 2 km world, 600 m high: ridged fbm into erosion.thermal ("ero"). */
static TgGraph *
noise_graph (int res)
{
  TgGraph *g = new_graph (2048, 2048, res);
  int b, t;

  tg_graph_world (g)->height_m = 600;
  tg_graph_world (g)->seed = 11;
  b = add_node (g, "base", "noise.fbm");
  SET (g, b, "mode", "ridged");
  SET (g, b, "scale_m", "700");
  SET (g, b, "octaves", "6");
  t = add_node (g, "ero", "erosion.thermal");
  SET (g, t, "talus_deg", "30");
  SET (g, t, "iterations", "12");
  add_link (g, "base", "height", "ero", "height");
  return g;
}

static void
test_thermal_conserves_mass (void)
{
  TgGraph *g = noise_graph (257);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *in = pull (e, g, "base", &r), *out = pull (e, g, "ero", &r);

  if (in && out)
    {
      double a = sum_of (in), b = sum_of (out), moved = 0.0;
      for (int j = 0; j < r.height; j++)
        for (int i = 0; i < r.width; i++)
          moved += fabs ((double) at (out, i, j) - (double) at (in, i, j));
      /* Something moved, and the volume stayed: the error is float
       * rounding, a few ulps per sample and pass. */
      TG_CHECK_MSG (moved > 1.0, "moved only %g", moved);
      TG_CHECK_MSG (fabs (a - b) < 1e-7 * a, "sum %.12g -> %.12g (moved %g)", a, b, moved);
    }
  if (in)
    tg_value_unref (in);
  if (out)
    tg_value_unref (out);

  /* An island with a flat zero border: the whole map and a window that
   * holds the island both keep its volume (nothing crosses a flat). */
  {
    TgGraph *g2 = new_graph (2048, 2048, 257);
    TgRegion full, win;
    int s, t;
    tg_graph_world (g2)->height_m = 800;
    s = add_node (g2, "isl", "gen.shape");
    SET (g2, s, "radius_m", "600");
    SET (g2, s, "falloff_m", "120");
    t = add_node (g2, "ero", "erosion.thermal");
    SET (g2, t, "talus_deg", "25");
    SET (g2, t, "iterations", "6");
    add_link (g2, "isl", "height", "ero", "height");
    full = world_region (g2);
    win = tg_region_window (&full, 40, 40, 177, 177);
    in = pull (e, g2, "isl", &win);
    out = pull (e, g2, "ero", &win);
    if (in && out)
      TG_CHECK_MSG (fabs (sum_of (in) - sum_of (out)) < 1e-7 * sum_of (in), "%.12g -> %.12g",
                    sum_of (in), sum_of (out));
    if (in)
      tg_value_unref (in);
    if (out)
      tg_value_unref (out);
    tg_graph_free (g2);
  }
  tg_engine_free (e);
  tg_graph_free (g);
}

/* A steep cone, run to convergence: no neighbour pair differs by more
 * than the talus difference for its distance (plus a sliver). */
static void
test_thermal_reaches_talus (void)
{
  TgGraph *g = new_graph (1024, 1024, 129);
  TgEngine *e = new_engine (2);
  TgRegion r;
  TgValue *out, *in;
  int s, t;
  double cell, hm = 500, tan_t = tan (35.0 * M_PI / 180.0), worst = 0.0, worst_in = 0.0;

  tg_graph_world (g)->height_m = hm;
  s = add_node (g, "cone", "gen.shape");
  SET (g, s, "radius_m", "160");
  SET (g, s, "falloff_m", "140");
  t = add_node (g, "ero", "erosion.thermal");
  SET (g, t, "talus_deg", "35");
  SET (g, t, "iterations", "5000");
  SET (g, t, "strength", "1");
  SET (g, t, "reference_cell_m", "0");
  add_link (g, "cone", "height", "ero", "height");
  r = world_region (g);
  cell = r.cell;
  in = pull (e, g, "cone", &r);
  out = pull (e, g, "ero", &r);
  if (out && in)
    {
      for (int j = 1; j < r.height - 1; j++)
        for (int i = 1; i < r.width - 1; i++)
          for (int q = 0; q < 4; q++)
            {
              static const int dx[4] = { 1, 0, 1, -1 }, dy[4] = { 0, 1, 1, 1 };
              double dist = (dx[q] && dy[q]) ? M_SQRT2 * cell : cell;
              double lim = tan_t * dist / hm;
              double d = fabs ((double) at (out, i, j) - at (out, i + dx[q], j + dy[q])) / lim;
              double d0 = fabs ((double) at (in, i, j) - at (in, i + dx[q], j + dy[q])) / lim;
              worst = d > worst ? d : worst;
              worst_in = d0 > worst_in ? d0 : worst_in;
            }
      TG_CHECK_MSG (worst_in > 2.0, "the cone was not steep enough to test (%g)", worst_in);
      TG_CHECK_MSG (worst < 1.01, "steepest pair is %.4f x the talus difference", worst);
    }
  if (in)
    tg_value_unref (in);
  if (out)
    tg_value_unref (out);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* The steepest neighbour pair of V, in degrees (pairs over the cell or
 * its sqrt 2, heights times HM metres), and the sum of its heights. */
static double
steepest_pair_deg (const TgValue *v, double hm)
{
  const TgRegion *r = &v->region;
  double worst = 0.0;

  for (int j = 0; j < r->height - 1; j++)
    for (int i = 1; i < r->width - 1; i++)
      for (int q = 0; q < 4; q++)
        {
          static const int dx[4] = { 1, 0, 1, -1 }, dy[4] = { 0, 1, 1, 1 };
          double dist = (dx[q] && dy[q]) ? M_SQRT2 * r->cell : r->cell;
          double d = fabs ((double) at (v, i, j) - at (v, i + dx[q], j + dy[q])) * hm / dist;
          worst = d > worst ? d : worst;
        }
  return atan (worst) * 180.0 / M_PI;
}

/* The steepest slope of V by central differences (the gradient between
 * the pair directions), in degrees. */
static double
steepest_gradient_deg (const TgValue *v, double hm)
{
  const TgRegion *r = &v->region;
  double worst = 0.0;

  for (int j = 1; j < r->height - 1; j++)
    for (int i = 1; i < r->width - 1; i++)
      {
        double gx = ((double) at (v, i + 1, j) - at (v, i - 1, j)) * hm / (2.0 * r->cell);
        double gy = ((double) at (v, i, j + 1) - at (v, i, j - 1)) * hm / (2.0 * r->cell);
        double g = sqrt (gx * gx + gy * gy);
        worst = g > worst ? g : worst;
      }
  return atan (worst) * 180.0 / M_PI;
}

/* The steepest gradient of V on the sides between cells, in degrees,
 * as converge mode measures it: across a side the two cells'
 * difference, along it the mean of their central differences. */
static double
steepest_side_deg (const TgValue *v, double hm)
{
  const TgRegion *r = &v->region;
  double worst = 0.0;

  for (int j = 1; j < r->height - 1; j++)
    for (int i = 1; i < r->width - 1; i++)
      {
        /* The side to the east and the side to the south. */
        double gn = (double) at (v, i + 1, j) - at (v, i, j);
        double gt = 0.25 * (((double) at (v, i, j + 1) - at (v, i, j - 1))
                            + ((double) at (v, i + 1, j + 1) - at (v, i + 1, j - 1)));
        double g = sqrt (gn * gn + gt * gt);
        worst = g > worst ? g : worst;
        gn = (double) at (v, i, j + 1) - at (v, i, j);
        gt = 0.25 * (((double) at (v, i + 1, j) - at (v, i - 1, j))
                     + ((double) at (v, i + 1, j + 1) - at (v, i - 1, j + 1)));
        g = sqrt (gn * gn + gt * gt);
        worst = g > worst ? g : worst;
      }
  return atan (worst * hm / r->cell) * 180.0 / M_PI;
}

/* Converge mode on a cliff-sided cone (a step 60 degrees steep and
 * more): at 33 and 65 samples (cells of 16 and 8 m, one level: no
 * pyramid) no gradient on a side between cells (converge mode's measure,
 * version 3) is steeper than talus + tolerance, and no pair and no
 * central-difference gradient steeper than talus + 3 (the cone's foot
 * on the diagonal, a kink over 16 m cells, measures up to 35.4 degrees
 * there; the pair rule of version 2 kept pairs within talus +
 * tolerance, and left an octagon), the volume stays, and the passes mode with the same
 * count stops short of the angle; the bytes are the same on 1 and 2
 * threads and a window (a tile, which computes the world) equals the
 * whole map's. */
static void
test_thermal_converges_to_talus (void)
{
  int res[2] = { 33, 65 };
  double hm = 150.0;

  for (int k = 0; k < 2; k++)
    {
      TgGraph *g = new_graph (512, 512, res[k]);
      TgEngine *e1 = new_engine (1), *e2 = new_engine (2);
      TgRegion r, win;
      TgValue *in, *a, *b, *w, *fixed;
      int s, t;

      tg_graph_world (g)->height_m = hm;
      s = add_node (g, "cone", "gen.shape");
      SET (g, s, "radius_m", "100");
      SET (g, s, "falloff_m", "30");
      t = add_node (g, "ero", "erosion.thermal");
      SET (g, t, "talus_deg", "33");
      SET (g, t, "mode", "converge");
      SET (g, t, "tolerance_deg", "1");
      SET (g, t, "strength", "1");
      SET (g, t, "iterations", "1200");
      SET (g, t, "reference_cell_m", "8");
      add_link (g, "cone", "height", "ero", "height");
      r = world_region (g);
      win = tg_region_window (&r, r.width / 3, r.height / 5, r.width / 3, r.height / 2);
      in = pull (e1, g, "cone", &r);
      a = pull (e1, g, "ero", &r);
      b = pull (e2, g, "ero", &r);
      w = pull (e2, g, "ero", &win);
      if (in && a && b && w)
        {
          double s0 = sum_of (in), s1 = sum_of (a);
          double before = steepest_pair_deg (in, hm), after = steepest_pair_deg (a, hm);
          TG_CHECK_MSG (before > 60.0, "%d: the cone is only %.1f deg steep", res[k], before);
          TG_CHECK_MSG (steepest_side_deg (a, hm) <= 34.0 + 1e-3,
                        "%d: steepest side gradient %.3f deg > talus 33 + 1", res[k],
                        steepest_side_deg (a, hm));
          TG_CHECK_MSG (after <= 36.0, "%d: steepest pair %.3f deg > talus 33 + 3", res[k],
                        after);
          TG_CHECK_MSG (steepest_gradient_deg (a, hm) <= 36.0,
                        "%d: steepest gradient %.3f deg > talus 33 + 3", res[k],
                        steepest_gradient_deg (a, hm));
          printf ("# %d: steepest side %.3f, pair %.3f, central gradient %.3f deg\n", res[k],
                  steepest_side_deg (a, hm), after, steepest_gradient_deg (a, hm));
          TG_CHECK_MSG (fabs (s0 - s1) < 1e-5 * s0, "%d: sum %.12g -> %.12g", res[k], s0, s1);
          TG_CHECK_MSG (memcmp (a->data, b->data, sizeof (float) * tg_region_samples (&r)) == 0,
                        "%d: 1 and 2 threads differ", res[k]);
          TG_CHECK_MSG (same_window (a, w), "%d: the window differs from the whole map", res[k]);
        }
      /* The passes mode with the same count stops short of the angle. */
      SET (g, t, "mode", "passes");
      SET (g, t, "iterations", "20");
      fixed = pull (e1, g, "ero", &r);
      if (fixed)
        TG_CHECK_MSG (steepest_pair_deg (fixed, hm) > 36.0, "%d: 40 passes reached %.2f deg",
                      res[k], steepest_pair_deg (fixed, hm));
      for (TgValue **v = (TgValue *[]) { in, a, b, w, fixed, NULL }; *v; v++)
        tg_value_unref (*v);
      tg_engine_free (e1);
      tg_engine_free (e2);
      tg_graph_free (g);
    }
}

static void
test_thermal_threads_and_tiles (void)
{
  TgGraph *g = noise_graph (301);
  TgEngine *e1 = new_engine (1), *e4 = new_engine (4);
  TgRegion full = world_region (g);
  TgValue *a = pull (e1, g, "ero", &full), *b = pull (e4, g, "ero", &full);
  TgValue *da = pull_port (e1, g, "ero", 1, &full), *db = pull_port (e4, g, "ero", 1, &full);
  /* Windows in the middle, on an edge and on a corner, each from an
   * engine that never saw the whole map. */
  TgRegion wins[3] = {
    tg_region_window (&full, 100, 77, 64, 50),
    tg_region_window (&full, 0, 150, 40, 151),
    tg_region_window (&full, 260, 0, 41, 33),
  };

  if (a && b)
    TG_CHECK (memcmp (a->data, b->data, sizeof (float) * tg_region_samples (&full)) == 0);
  if (da && db)
    TG_CHECK (memcmp (da->data, db->data, sizeof (float) * tg_region_samples (&full)) == 0);
  for (int k = 0; k < 3 && a && da; k++)
    {
      TgEngine *e = new_engine (3);
      TgValue *w = pull (e, g, "ero", &wins[k]);
      TgValue *wd = pull_port (e, g, "ero", 1, &wins[k]);
      if (w)
        TG_CHECK_MSG (same_window (a, w), "window %d differs from the whole map", k);
      if (wd)
        TG_CHECK_MSG (same_window (da, wd), "deposit window %d differs", k);
      if (w)
        tg_value_unref (w);
      if (wd)
        tg_value_unref (wd);
      tg_engine_free (e);
    }
  /* A window reaching past the world's corner, as an apron reader below
   * the node asks for at the edge: the input covers only the world (its
   * apron is cut at the edge), and height and deposit repeat the edge. */
  if (a && da)
    {
      TgEngine *e = new_engine (2);
      TgRegion out = tg_region_window (&full, -3, full.height - 20, 30, 25);
      TgValue *w = pull (e, g, "ero", &out), *wd = pull_port (e, g, "ero", 1, &out);
      bool same = w && wd;
      for (int j = 0; same && j < out.height; j++)
        for (int i = 0; i < out.width; i++)
          {
            int x = out.col0 + i < 0 ? 0 : out.col0 + i;
            int y = out.row0 + j >= full.height ? full.height - 1 : out.row0 + j;
            same = same && at (w, i, j) == at (a, x, y) && at (wd, i, j) == at (da, x, y);
          }
      TG_CHECK_MSG (same, "a window past the world's corner does not repeat the edge");
      if (w)
        tg_value_unref (w);
      if (wd)
        tg_value_unref (wd);
      tg_engine_free (e);
    }
  /* The deposit mask is a mask: 0..1, and non-zero somewhere. */
  if (da)
    {
      float mx = 0.0f;
      bool ok = true;
      for (uint64_t k = 0; k < tg_region_samples (&full); k++)
        {
          ok = ok && da->data[k] >= 0.0f && da->data[k] <= 1.0f;
          mx = da->data[k] > mx ? da->data[k] : mx;
        }
      TG_CHECK (ok);
      TG_CHECK (mx > 0.1f);
    }
  for (TgValue **v = (TgValue *[]) { a, b, da, db, NULL }; *v; v++)
    tg_value_unref (*v);
  tg_engine_free (e1);
  tg_engine_free (e4);
  tg_graph_free (g);
}

/* The node's parameter struct as the engine fills it from node N. */
static void *
params_of (TgGraph *g, int n, const TgNodeDesc *d)
{
  void *p = calloc (1, d->params_size);

  for (int k = 0; k < d->n_params && p; k++)
    tg_param_value_store (&d->params[k], tg_graph_get_param_at (g, n, k), p);
  return p;
}

/* The apron is the pass count: iterations x (reference / cell)^2. */
static void
test_thermal_apron (void)
{
  const TgNodeDesc *d = tg_registry_lookup ("erosion.thermal");
  TgGraph *g = noise_graph (65);
  int n = tg_graph_find_node (g, "ero");
  void *p;

  TG_CHECK (d != NULL);
  if (!d)
    return;
  TG_CHECK_INT_EQ (d->locality, TG_LOCALITY_APRON);
  p = params_of (g, n, d); /* iterations 12, reference 4 m */
  TG_CHECK_INT_EQ (d->apron (p, 4.0), 12);
  TG_CHECK_INT_EQ (d->apron (p, 2.0), 48);
  TG_CHECK_INT_EQ (d->apron (p, 8.0), 3);
  TG_CHECK_INT_EQ (d->apron (p, 64.0), 1);
  free (p);
  SET (g, n, "reference_cell_m", "0");
  p = params_of (g, n, d);
  TG_CHECK_INT_EQ (d->apron (p, 1.0), 12);
  free (p);
  SET (g, n, "iterations", "0");
  p = params_of (g, n, d);
  TG_CHECK_INT_EQ (d->apron (p, 1.0), 0);
  free (p);
  /* Converge mode reads the whole world (its pyramid), cut at the edge. */
  SET (g, n, "iterations", "3");
  SET (g, n, "mode", "converge");
  p = params_of (g, n, d);
  TG_CHECK (d->apron (p, 4.0) > TG_RESOLUTION_MAX);
  TG_CHECK (d->flags & TG_NODE_APRON_IN_WORLD);
  free (p);
  /* A talus angle out of range is refused, naming the parameter. */
  {
    TgError err = { 0 };
    TG_CHECK (set_param_err (g, n, "talus_deg", "95", &err) < 0);
    TG_CHECK_STR_CONTAINS (err.path, "talus_deg");
  }
  tg_graph_free (g);
}

/* A 513 preview and a 1025 build of the same world move about the same
 * volume, and the same places change (compared at shared samples). */
static void
test_thermal_resolution (void)
{
  double moved[2], change_lo[2] = { 0 };
  TgValue *outs[2] = { 0 }, *ins[2] = { 0 };
  int res[2] = { 257, 513 };
  TgEngine *e = new_engine (2);

  for (int k = 0; k < 2; k++)
    {
      TgGraph *g = noise_graph (res[k]);
      TgRegion r = world_region (g);
      SET (g, tg_graph_find_node (g, "ero"), "iterations", "40");
      ins[k] = pull (e, g, "base", &r);
      outs[k] = pull (e, g, "ero", &r);
      moved[k] = 0.0;
      if (ins[k] && outs[k])
        for (int j = 0; j < r.height; j++)
          for (int i = 0; i < r.width; i++)
            moved[k] += fabs ((double) at (outs[k], i, j) - at (ins[k], i, j)) * r.cell * r.cell;
      (void) change_lo;
      tg_graph_free (g);
    }
  TG_CHECK_MSG (moved[0] > 0 && fabs (moved[1] / moved[0] - 1.0) < 0.35,
                "moved %g (257) vs %g (513) m x height", moved[0], moved[1]);
  /* Shared samples: the change correlates. */
  if (outs[0] && outs[1] && ins[0] && ins[1])
    {
      double sxy = 0, sxx = 0, syy = 0;
      for (int j = 0; j < 257; j++)
        for (int i = 0; i < 257; i++)
          {
            double x = (double) at (outs[0], i, j) - at (ins[0], i, j);
            double y = (double) at (outs[1], 2 * i, 2 * j) - at (ins[1], 2 * i, 2 * j);
            sxy += x * y;
            sxx += x * x;
            syy += y * y;
          }
      TG_CHECK_MSG (sxy / sqrt (sxx * syy) > 0.5, "correlation %g", sxy / sqrt (sxx * syy));
    }
  for (int k = 0; k < 2; k++)
    {
      if (outs[k])
        tg_value_unref (outs[k]);
      if (ins[k])
        tg_value_unref (ins[k]);
    }
  tg_engine_free (e);
}

/* The bytes of the generic, AVX2 and AVX-512 kernels (TG_THERMAL_ISA),
 * with and without several passes per trip through memory, in column
 * strips of several widths (TG_THERMAL_STRIP), on 1 and 3 threads, whole
 * and as a window, in both modes: all equal to the bytes
 * the node gave before the kernels were blocked (pinned hashes of height
 * and deposit, taken with one full sweep per pass). */
static void
test_thermal_kernels_agree (void)
{
  static const struct
  {
    const char *mode, *iterations, *talus;
    uint64_t height, deposit, win_height;
  } cases[] = {
    { "passes", "12", "30", 0x4e3c135d080d3f33ull, 0xd3d68a807f1e286full, 0xdd29b6a79a61df83ull },
    { "passes", "37", "25", 0x931bae4f6af86d95ull, 0x4f890fb12e597961ull, 0x94bbef0f87e3d5f1ull },
    /* Converge mode's pyramid (301, 151 and 76 samples a side) changed
     * these, then its pairs' aim (the node's version 2), then its slope
     * measured in every direction on the cells' sides (version 3; the
     * blocks and strips here are its tiles' passes, columns and rows);
     * all kernels, blocks and thread counts agree on them. */
    { "converge", "400", "30", 0x0c32e0236a07bbb1ull, 0x04f1e33e3e05d735ull, 0xa061b24933bfa5b1ull },
  };
  static const char *const isas[] = { "generic", "avx2", "avx512" };
  /* Passes per trip, columns per strip and rows per AVX-512 sweep ("0":
   * the defaults, 32 passes, 1024 columns (one strip at 301) and 4 rows):
   * one full sweep per pass, and blocks over strips of several widths
   * (halo columns recomputed), the AVX-512 sweep taking 1 to 4 rows at
   * once (their shared pairs computed once). */
  static const char *const blocks[][3] = { { "1", "0", "1" }, { "0", "0", "0" }, { "0", "37", "3" },
                                           { "3", "100", "2" }, { "7", "0", "4" } };

  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    {
      TgGraph *g = noise_graph (301);
      int t = tg_graph_find_node (g, "ero");
      TgRegion full = world_region (g);
      TgRegion win = tg_region_window (&full, 90, 0, 101, 120);

      SET (g, t, "mode", cases[c].mode);
      SET (g, t, "iterations", cases[c].iterations);
      SET (g, t, "talus_deg", cases[c].talus);
      SET (g, t, "reference_cell_m", "0");
      for (int i = 0; i < 3; i++)
        for (int bl = 0; bl < 5; bl++)
          for (int th = 1; th <= 3; th += 2)
            {
              TgEngine *e = new_engine (th);
              TgValue *h, *d, *w;
              setenv ("TG_THERMAL_ISA", isas[i], 1);
              setenv ("TG_THERMAL_BLOCK", blocks[bl][0], 1);
              setenv ("TG_THERMAL_STRIP", blocks[bl][1], 1);
              setenv ("TG_THERMAL_ROWS", blocks[bl][2], 1);
              h = pull (e, g, "ero", &full);
              d = pull_port (e, g, "ero", 1, &full);
              w = pull (e, g, "ero", &win);
              if (h && d && w)
                {
                  TG_CHECK_MSG (hash_value (h) == cases[c].height
                                    && hash_value (d) == cases[c].deposit
                                    && hash_value (w) == cases[c].win_height,
                                "%s %s, %s kernel, block %s, strip %s, rows %s, %d threads: "
                                "bytes differ (0x%016llxull, 0x%016llxull, 0x%016llxull)",
                                cases[c].mode, cases[c].iterations, isas[i], blocks[bl][0],
                                blocks[bl][1], blocks[bl][2], th,
                                (unsigned long long) hash_value (h),
                                (unsigned long long) hash_value (d),
                                (unsigned long long) hash_value (w));
                }
              for (TgValue **v = (TgValue *[]) { h, d, w, NULL }; *v; v++)
                tg_value_unref (*v);
              tg_engine_free (e);
            }
      tg_graph_free (g);
    }
  unsetenv ("TG_THERMAL_ISA");
  unsetenv ("TG_THERMAL_BLOCK");
  unsetenv ("TG_THERMAL_STRIP");
  unsetenv ("TG_THERMAL_ROWS");
}

/* Maps with NaN, infinite or huge samples: every kernel, with one pass per
 * sweep and blocked, in strips, on 1 and 3 threads, gives the generic
 * kernel's bytes (the AVX-512 sweep's three-operation pair term, which
 * differs on NaN, stays off for such maps), and the NaN
 * stays where it was. */
static void
test_thermal_spikes_agree (void)
{
  static const char *const isas[] = { "generic", "avx2", "avx512" };
  /* Passes per trip, columns per strip, rows per band, rows per AVX-512
   * sweep. */
  static const char *const blocks[][4] = { { "1", "0", "0", "1" }, { "0", "0", "0", "0" },
                                           { "5", "37", "16", "3" }, { "9", "0", "23", "2" } };

  for (int kind = 1; kind <= 3; kind++)
    {
      TgGraph *g = noise_graph (301);
      int sp = add_node (g, "spike", "test.spike"), t = tg_graph_find_node (g, "ero");
      TgRegion full = world_region (g);
      uint64_t want = 0;
      char kind_s[8];

      snprintf (kind_s, sizeof kind_s, "%d", kind);
      SET (g, sp, "kind", kind_s);
      tg_graph_remove_link (g, tg_graph_input_link (g, t, 0));
      add_link (g, "base", "height", "spike", "height");
      add_link (g, "spike", "height", "ero", "height");
      SET (g, t, "iterations", "20");
      SET (g, t, "reference_cell_m", "0");
      for (int i = 0; i < 3; i++)
        for (int bl = 0; bl < 4; bl++)
          for (int th = 1; th <= 3; th += 2)
            {
              TgEngine *e = new_engine (th);
              TgValue *h;
              setenv ("TG_THERMAL_ISA", isas[i], 1);
              setenv ("TG_THERMAL_BLOCK", blocks[bl][0], 1);
              setenv ("TG_THERMAL_STRIP", blocks[bl][1], 1);
              setenv ("TG_THERMAL_BAND", blocks[bl][2], 1);
              setenv ("TG_THERMAL_ROWS", blocks[bl][3], 1);
              h = pull (e, g, "ero", &full);
              if (h && i == 0 && bl == 0 && th == 1)
                {
                  want = hash_value (h);
                  if (kind == 1)
                    TG_CHECK_MSG (isnan (at (h, 500 % 301, 500 / 301))
                                    && !isnan (at (h, 500 % 301 + 1, 500 / 301)),
                                  "the NaN stays where it was and goes nowhere else");
                }
              else if (h)
                TG_CHECK_MSG (hash_value (h) == want,
                              "spike kind %d, %s kernel, block %s, strip %s, band %s, rows %s, "
                              "%d threads: bytes differ from the generic kernel's",
                              kind, isas[i], blocks[bl][0], blocks[bl][1], blocks[bl][2],
                              blocks[bl][3], th);
              if (h)
                tg_value_unref (h);
              tg_engine_free (e);
            }
      tg_graph_free (g);
    }
  unsetenv ("TG_THERMAL_ISA");
  unsetenv ("TG_THERMAL_BLOCK");
  unsetenv ("TG_THERMAL_STRIP");
  unsetenv ("TG_THERMAL_BAND");
  unsetenv ("TG_THERMAL_ROWS");
}

int
main (void)
{
  TG_RUN (test_thermal_conserves_mass);
  TG_RUN (test_thermal_reaches_talus);
  TG_RUN (test_thermal_converges_to_talus);
  TG_RUN (test_thermal_threads_and_tiles);
  TG_RUN (test_thermal_apron);
  TG_RUN (test_thermal_resolution);
  TG_RUN (test_thermal_kernels_agree);
  TG_RUN (test_thermal_spikes_agree);
  return tgtest_result ();
}
