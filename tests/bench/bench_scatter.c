/* Benchmark of the scatter nodes.
 *
 * 1. scatter.colormap over a 4096 x 4096 distribution map (a 4096 m world
 *    at 1 m per sample; 40 % of it black, the rest three palette colours
 *    with brightness gradients) with brightness chance, warp and a minimum
 *    spacing: candidates processed (grid cells) and instances placed per
 *    second, on one thread and on all of them.  The map itself is made
 *    before the clock starts.
 * 2. scatter.mask: Poisson-disk points per second for about a million
 *    points, on one thread (goal: 1 M points in under 2 s).
 * 3. The reference: a naive O(n^2) minimum-spacing pass (every candidate
 *    against every instance kept so far) on n = 20 000 candidates, its
 *    time extrapolated to 1 M by (1 M / 20 000)^2, next to the grid pass
 *    the nodes use, measured on the same 20 000 and on 1 M candidates.
 *
 * Each figure is the best of a few runs.  Checks that the colormap gives
 * the same instances on one thread and on all, and that the grid pass
 * keeps exactly what the naive pass keeps; exits non-zero otherwise.
 *
 * Run with `meson test --benchmark --suite bench -v` or directly:
 * bench_scatter [runs]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tgraph/tgraph.h>

#include "scatter_common.h"
#include "../common/tgclock.h"

/* --- a painted map ------------------------------------------------------------------ */

/* 256-sample blocks: 40 % black, the rest red, green or blue with a
 * brightness that falls off from the block's centre. */
static int
bench_paint_eval (TgEvalCtx *c)
{
  const TgRegion *r = tg_eval_region (c);
  TgValue *out = tg_eval_new_output (c, 0, 4);

  for (int j = 0; j < r->height; j++)
    {
      float *row = tg_value_row (out, j);
      int gy = r->row0 + j;
      for (int i = 0; i < r->width; i++)
        {
          int gx = r->col0 + i;
          uint32_t h = tg_hash2 (11, gx >> 8, gy >> 8);
          float kind = tg_hash_unit (h);
          double dx = (gx & 255) - 127.5, dy = (gy & 255) - 127.5;
          float b = (float) (1.0 - 0.6 * sqrt (dx * dx + dy * dy) / 181.0);
          float px[4] = { 0, 0, 0, 1 };
          if (kind >= 0.4f)
            px[kind < 0.6f ? 0 : (kind < 0.8f ? 1 : 2)] = b;
          memcpy (row + 4 * i, px, sizeof px);
        }
    }
  return 0;
}

static const TgPortDesc paint_out[] = { { .name = "image", .type = TG_TYPE_IMAGE,
                                          .label = "Image" } };
static const TgNodeDesc bench_paint_desc = {
  .type = "bench.paint",
  .category = TG_CATEGORY_OTHER,
  .label = "Painted map",
  .help = "Benchmark only",
  .outputs = paint_out,
  .n_outputs = 1,
  .locality = TG_LOCALITY_LOCAL,
  .eval = bench_paint_eval,
  .version = 1,
};
TG_NODE_REGISTER (bench_paint_desc);

static int
set (TgGraph *g, int node, const char *name, const char *text)
{
  TgError err = { 0 };
  int rc = tg_graph_set_param_text (g, node, name, text, &err);

  if (rc < 0)
    fprintf (stderr, "%s=%s: %s\n", name, text, err.message);
  return rc;
}

static TgValue *
pull_id (TgEngine *e, TgGraph *g, const char *id)
{
  TgRegion r;
  TgValue *v = NULL;
  TgError err = { 0 };

  tg_region_for_world (&r, tg_graph_world (g), tg_graph_world (g)->resolution);
  if (tg_engine_pull (e, g, tg_graph_find_node (g, id), 0, &r, NULL, &v, NULL, &err) < 0)
    fprintf (stderr, "pull %s: %s\n", id, err.message);
  return v;
}

static bool
same_points (const TgPoints *a, const TgPoints *b)
{
  return a->n == b->n
         && memcmp (a->position, b->position, sizeof (float) * 3 * (size_t) a->n) == 0
         && memcmp (a->rotation, b->rotation, sizeof (float) * 4 * (size_t) a->n) == 0
         && memcmp (a->proto, b->proto, sizeof (int32_t) * (size_t) a->n) == 0;
}

/* Times scatter.colormap "sc" of G on E (the map is pulled and cached
 * first); returns the best time and the last result in *OUT. */
static double
time_colormap (TgEngine *e, TgGraph *g, int runs, TgValue **out)
{
  double best = 1e30;
  TgValue *paint = pull_id (e, g, "paint");

  tg_value_unref (paint);
  *out = NULL;
  for (int k = 0; k < runs; k++)
    {
      double t0;
      TgValue *v;
      /* A new seed each run defeats the cache but not the map's. */
      char seed[16];
      snprintf (seed, sizeof seed, "%d", 100 + k);
      set (g, 1, "seed", seed);
      t0 = tg_wall_s ();
      v = pull_id (e, g, "sc");
      best = fmin (best, tg_wall_s () - t0);
      tg_value_unref (*out);
      *out = v;
    }
  return best;
}

/* --- the spacing passes ----------------------------------------------------------------- */

static int64_t
naive_spacing (TgScatterCand *c, int64_t n, double s)
{
  double s2 = s * s;
  int64_t k = 0;

  for (int64_t i = 0; i < n; i++)
    {
      bool ok = true;
      for (int64_t j = 0; j < k && ok; j++)
        {
          double dx = (double) c[j].x - c[i].x, dz = (double) c[j].z - c[i].z;
          ok = dx * dx + dz * dz >= s2;
        }
      if (ok)
        c[k++] = c[i];
    }
  return k;
}

/* N candidates uniform over a square of side SIDE, one per 1 m^2 on average. */
static TgScatterCand *
random_candidates (int64_t n, double side)
{
  TgScatterCand *c = calloc ((size_t) n, sizeof *c);

  for (int64_t i = 0; c && i < n; i++)
    {
      c[i].x = (float) (side * tg_hash_unit (tg_hash3 (3, (int32_t) i, 0, 0)));
      c[i].z = (float) (side * tg_hash_unit (tg_hash3 (3, (int32_t) i, 0, 1)));
    }
  return c;
}

int
main (int argc, char **argv)
{
  int runs = argc > 1 ? atoi (argv[1]) : 3;
  TgEngineOptions o1 = { .threads = 1 }, on = { .threads = 0 };
  TgEngine *e1 = tg_engine_new (&o1), *en = tg_engine_new (&on);
  TgGraph *g = tg_graph_new ();
  TgWorld *w = tg_graph_world (g);
  TgError err = { 0 };
  TgValue *v1, *vn;
  double t1, tn, cells;
  int status = 0;

  if (runs < 1)
    runs = 1;
  /* --- 1. colormap ---------------------------------------------------------------------- */
  w->size_x = w->size_z = 4095.0;
  w->resolution = 4096;
  w->height_m = 500.0;
  tg_graph_add_node (g, "paint", "bench.paint", &err);
  tg_graph_add_node (g, "sc", "scatter.colormap", &err);
  tg_graph_add_link (g, "paint", "image", "sc", "image", &err);
  set (g, 1, "cell_m", "2");
  set (g, 1, "luminance_chance", "true");
  set (g, 1, "luminance_mode", "relative");
  set (g, 1, "warp_m", "3");
  set (g, 1, "warp_scale_m", "40");
  set (g, 1, "min_spacing_m", "2.5");
  cells = ceil (w->size_x / 2.0) * ceil (w->size_z / 2.0);

  printf ("scatter.colormap: 4096 x 4096 map (40%% black), 2 m cells = %.0f candidates, "
          "warp 3 m, spacing 2.5 m, best of %d\n", cells, runs);
  printf ("  %-26s %7s %9s %13s %11s %13s\n", "", "threads", "ms", "candidates/s", "instances",
          "instances/s");
  t1 = time_colormap (e1, g, runs, &v1);
  tn = time_colormap (en, g, runs, &vn);
  if (!v1 || !vn)
    return 1;
  printf ("  %-26s %7d %9.1f %12.1fM %11lld %12.2fM\n", "scatter.colormap", 1, t1 * 1e3,
          cells / t1 * 1e-6, (long long) tg_value_points (v1)->n,
          (double) tg_value_points (v1)->n / t1 * 1e-6);
  printf ("  %-26s %7d %9.1f %12.1fM %11lld %12.2fM\n", "scatter.colormap",
          tg_engine_threads (en), tn * 1e3, cells / tn * 1e-6,
          (long long) tg_value_points (vn)->n, (double) tg_value_points (vn)->n / tn * 1e-6);
  if (!same_points (tg_value_points (v1), tg_value_points (vn)))
    {
      printf ("  FAIL: one thread and %d threads give different instances\n",
              tg_engine_threads (en));
      status = 1;
    }
  tg_value_unref (v1);
  tg_value_unref (vn);
  tg_graph_free (g);

  /* --- 2. Poisson disk ------------------------------------------------------------------ */
  {
    TgValue *v = NULL;
    double best = 1e30;
    g = tg_graph_new ();
    w = tg_graph_world (g);
    /* About 0.82 points per r^2: just over a million at r = 1 m. */
    w->size_x = w->size_z = 1110.0;
    w->resolution = 257;
    tg_graph_add_node (g, "one", "gen.constant", &err);
    set (g, 0, "value", "1");
    tg_graph_add_node (g, "pd", "scatter.mask", &err);
    tg_graph_add_link (g, "one", "height", "pd", "mask", &err);
    set (g, 1, "min_spacing_m", "1");
    for (int k = 0; k < runs; k++)
      {
        char seed[16];
        double t0;
        snprintf (seed, sizeof seed, "%d", 1 + k);
        set (g, 1, "seed", seed);
        tg_value_unref (pull_id (e1, g, "one"));
        tg_value_unref (v);
        t0 = tg_wall_s ();
        v = pull_id (e1, g, "pd");
        best = fmin (best, tg_wall_s () - t0);
      }
    if (!v)
      return 1;
    printf ("\nscatter.mask (Poisson disk, 12 attempts): %.0f x %.0f m at 1 m spacing, "
            "one thread, best of %d\n", w->size_x, w->size_z, runs);
    printf ("  %lld points in %.1f ms: %.2f M points/s (goal: 1 M in under 2 s)\n",
            (long long) tg_value_points (v)->n, best * 1e3,
            (double) tg_value_points (v)->n / best * 1e-6);
    tg_value_unref (v);
    tg_graph_free (g);
  }

  /* --- 3. the O(n^2) reference ------------------------------------------------------------- */
  {
    const int64_t small = 20000, big = 1000000;
    double side_small = sqrt ((double) small), side_big = sqrt ((double) big);
    TgScatterCand *a = random_candidates (small, side_small);
    TgScatterCand *b = random_candidates (small, side_small);
    TgScatterCand *c = random_candidates (big, side_big);
    double t0, t_naive, t_grid = 1e30, t_grid_big = 1e30;
    int64_t k_naive, k_grid = 0, k_big = 0;

    if (!a || !b || !c)
      return 1;
    t0 = tg_wall_s ();
    k_naive = naive_spacing (a, small, 1.0);
    t_naive = tg_wall_s () - t0;
    for (int k = 0; k < runs; k++)
      {
        TgScatterCand *copy = random_candidates (small, side_small);
        t0 = tg_wall_s ();
        k_grid = tg__scatter_spacing (copy, small, 1.0, false, 1, 0, 0, side_small, side_small);
        t_grid = fmin (t_grid, tg_wall_s () - t0);
        if (k == 0)
          memcpy (b, copy, sizeof (TgScatterCand) * (size_t) small);
        free (copy);
      }
    for (int k = 0; k < runs; k++)
      {
        TgScatterCand *copy = random_candidates (big, side_big);
        t0 = tg_wall_s ();
        k_big = tg__scatter_spacing (copy, big, 1.0, false, 1, 0, 0, side_big, side_big);
        t_grid_big = fmin (t_grid_big, tg_wall_s () - t0);
        free (copy);
      }
    printf ("\nminimum spacing (1 m) over uniform random candidates, one per m^2, one thread\n");
    printf ("  %-40s %10s %10s %14s\n", "", "candidates", "kept", "ms");
    printf ("  %-40s %10lld %10lld %14.1f\n", "reference: naive O(n^2) pass", (long long) small,
            (long long) k_naive, t_naive * 1e3);
    printf ("  %-40s %10lld %10s %14.0f\n", "reference extrapolated to 1 M: x 2500",
            (long long) big, "-", t_naive * 1e3 * 2500.0);
    printf ("  %-40s %10lld %10lld %14.2f\n", "spacing grid (the nodes' pass)", (long long) small,
            (long long) k_grid, t_grid * 1e3);
    printf ("  %-40s %10lld %10lld %14.1f\n", "spacing grid (the nodes' pass)", (long long) big,
            (long long) k_big, t_grid_big * 1e3);
    printf ("  speed-up at 1 M: %.0fx (naive extrapolated)\n",
            t_naive * 2500.0 / t_grid_big);
    if (k_naive != k_grid || memcmp (a, b, sizeof (TgScatterCand) * (size_t) k_naive) != 0)
      {
        printf ("  FAIL: the grid pass keeps other candidates than the naive pass\n");
        status = 1;
      }
    free (a);
    free (b);
    free (c);
  }
  tg_engine_free (e1);
  tg_engine_free (en);
  return status;
}
