/* Benchmark of the erosion nodes, each figure next to a reference
 * measured in the same run:
 *
 *  - erosion.thermal: time per pass over a 4096 x 4096 map (the node run
 *    with 130 and with 2 passes, the difference over 128), wall and CPU time,
 *    against one plain STREAM-style read+write pass over the same map on
 *    the same number of threads (the memory-bandwidth floor; the goal is
 *    at most 1.5x: several passes per trip to memory); and converge mode
 *    to its angle on 1025 and 2049 (4097 with TG_BENCH_4097=1), without
 *    and with a loose-material mask, how its cost grows with the map
 *    (TG_BENCH_CONVERGE_CAP=N: N passes a level instead of 200);
 *  - erosion.hydraulic: droplets per second on 2048 x 2048 with the
 *    node's default physics at 4 m cells, for the simulation on one thread
 *    and on all of them, and the whole node through tg_engine_pull, against
 *    a plain single-threaded droplet loop written the straightforward way
 *    (Lague's algorithm: per-step brush erosion, no partitioning), with
 *    the brush worked out at every step and, as Lague does, once into a
 *    table (the faster of the two; both give the same bytes); and
 *    alpine's rain at 2 m cells (wide brushes, gully feedback), the
 *    simulation on one thread with the plain and the widest brush code
 *    (AVX-512) and on all of them;
 *  - erosion.flow: the node on 2049 x 2049.
 *
 * It also checks that the hydraulic simulation gives the same bytes on 1
 * and N threads and exits non-zero when not.  Each figure is the best of a
 * few runs.  Run with `meson test --benchmark --suite bench -v` or
 * directly: bench_erosion [runs [threads [thermal|hydraulic|flow]]] (thermal-passes or
 * thermal-converge: half of thermal; hydraulic-fine: alpine's rain at 2 m
 * cells, the second half of hydraulic; TG_BENCH_FINE_CELL=1 for 1 m cells
 * and TG_BENCH_FINE_DROPLETS=N for fewer droplets)
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tgraph/tgraph.h>

#include "erosion_hydraulic.h"
#include "../common/tgclock.h"

/* A wall and a CPU time. */
typedef struct
{
  double wall, cpu;
} Times;

static void
keep_best (Times *best, double wall, double cpu)
{
  if (wall < best->wall)
    best->wall = wall;
  if (cpu < best->cpu)
    best->cpu = cpu;
}

static void
die (const char *what, const TgError *err)
{
  fprintf (stderr, "bench_erosion: %s: %s: %s\n", what, err ? err->path : "",
           err ? err->message : "");
  exit (1);
}

/* --- a tiny fork-join runner --------------------------------------------- */

typedef struct
{
  int n;
  void (*fn) (void *, int, int);
  void *user;
  atomic_int next;
} Work;

static void *
worker (void *arg)
{
  Work *w = arg;
  int k;

  while ((k = atomic_fetch_add (&w->next, 1)) < w->n)
    w->fn (w->user, k, k + 1);
  return NULL;
}

static int
run_threads (void *ctx, int n, void (*fn) (void *, int, int), void *user)
{
  int threads = *(int *) ctx;
  pthread_t t[64];
  Work w = { n, fn, user, 0 };

  if (threads > 64)
    threads = 64;
  for (int k = 1; k < threads; k++)
    pthread_create (&t[k], NULL, worker, &w);
  worker (&w);
  for (int k = 1; k < threads; k++)
    pthread_join (t[k], NULL);
  return 0;
}

/* --- thermal ----------------------------------------------------------- */

#define TSIDE 4096

typedef struct
{
  const float *src;
  float *dst;
  int w;
} CopyJob;

static void
copy_rows (void *user, int begin, int end)
{
  const CopyJob *job = user;

  /* 16 rows per item, as the node's chunks: one read and one write per
   * sample, in a loop the compiler turns into plain vector moves. */
  for (int j = begin * 16; j < end * 16; j++)
    {
      const float *s = job->src + (size_t) j * job->w;
      float *d = job->dst + (size_t) j * job->w;
      for (int i = 0; i < job->w; i++)
        d[i] = s[i] * 1.0f;
    }
}

/* The node over R with PASSES passes; its input (R grown by the apron,
 * cut at the world's edge: what the node asks for) and, MASK > 0, that
 * node's output (the mask input) are computed before the clock starts,
 * so only the erosion is timed. */
static Times
time_pull (TgEngine *e, TgGraph *g, int node, int mask, const TgRegion *r, int passes, int runs)
{
  Times best = { 1e30, 1e30 };
  TgRegion grown = tg_region_grow (r, passes);

  grown = tg_region_clip (&grown);

  for (int k = 0; k < runs; k++)
    {
      TgValue *v = NULL;
      TgError err = { 0 };
      double t0, c0;
      tg_engine_clear_cache (e);
      if (tg_engine_pull (e, g, 0, 0, &grown, NULL, &v, NULL, &err) != 0)
        die ("pull input", &err);
      tg_value_unref (v);
      if (mask > 0)
        {
          if (tg_engine_pull (e, g, mask, 0, &grown, NULL, &v, NULL, &err) != 0)
            die ("pull mask", &err);
          tg_value_unref (v);
        }
      t0 = tg_wall_s ();
      c0 = tg_cpu_s ();
      if (tg_engine_pull (e, g, node, 0, r, NULL, &v, NULL, &err) != 0)
        die ("pull", &err);
      keep_best (&best, tg_wall_s () - t0, tg_cpu_s () - c0);
      tg_value_unref (v);
    }
  return best;
}

/* Converge mode to its angle (38 deg, 100 passes a level as in alpine)
 * on a steep ridged fBm over a 4096 m world, 850 m high, at 1025, 2049 and (with
 * TG_BENCH_4097=1) 4097 samples: how the cost grows with the map; then
 * the same with a loose-material mask (select.slope: loose up to 45 deg,
 * bedrock over 55), whose masked pair terms cost more a pass. */
static void
bench_thermal_converge (int runs, int threads)
{
  static const int sides[3] = { 1025, 2049, 4097 };
  int n = getenv ("TG_BENCH_4097") && atoi (getenv ("TG_BENCH_4097")) > 0 ? 3 : 2;
  /* TG_BENCH_CONVERGE_CAP: passes a level other than alpine's 100 (4000:
   * every level to its fixed point at these sizes). */
  const char *cap = getenv ("TG_BENCH_CONVERGE_CAP") ? getenv ("TG_BENCH_CONVERGE_CAP") : "100";
  Times t[3];

  for (int masked = 0; masked < 2; masked++)
    {
      printf ("erosion.thermal converge (talus 38 deg, %s passes a level)%s, steep fBm, "
              "%d threads, best of %d\n", cap, masked ? ", slope mask" : "", threads, runs);
      for (int k = 0; k < n; k++)
        {
          TgGraph *g = tg_graph_new ();
          TgWorld *w = tg_graph_world (g);
          TgError err = { 0 };
          TgEngineOptions o = { .threads = threads, .cache_bytes = (size_t) 2 << 30 };
          TgEngine *e = tg_engine_new (&o);
          TgRegion full;
          int ero = -1, loose = -1;

          w->size_x = w->size_z = 4096.0;
          w->height_m = 850.0;
          w->seed = 4242;
          tg_region_for_world (&full, w, sides[k]);
          if (tg_graph_add_node (g, "base", "noise.fbm", &err) < 0
              || (ero = tg_graph_add_node (g, "ero", "erosion.thermal", &err)) < 0
              || tg_graph_add_link (g, "base", "height", "ero", "height", &err) < 0
              || tg_graph_set_param_text (g, 0, "mode", "ridged", &err) < 0
              || tg_graph_set_param_text (g, 0, "scale_m", "1700", &err) < 0
              || tg_graph_set_param_text (g, 0, "octaves", "7", &err) < 0
              || tg_graph_set_param_text (g, ero, "talus_deg", "38", &err) < 0
              || tg_graph_set_param_text (g, ero, "mode", "converge", &err) < 0
              || tg_graph_set_param_text (g, ero, "strength", "1", &err) < 0
              || tg_graph_set_param_text (g, ero, "iterations", cap, &err) < 0
              || tg_graph_set_param_text (g, ero, "reference_cell_m", "0", &err) < 0)
            die ("graph", &err);
          if (masked
              && ((loose = tg_graph_add_node (g, "loose", "select.slope", &err)) < 0
                  || tg_graph_add_link (g, "base", "height", "loose", "height", &err) < 0
                  || tg_graph_add_link (g, "loose", "mask", "ero", "mask", &err) < 0
                  || tg_graph_set_param_text (g, loose, "min_slope_deg", "0", &err) < 0
                  || tg_graph_set_param_text (g, loose, "max_slope_deg", "45", &err) < 0
                  || tg_graph_set_param_text (g, loose, "falloff_deg", "10", &err) < 0))
            die ("mask", &err);
          /* The apron is the world (converge mode), cut at its edge. */
          t[k] = time_pull (e, g, ero, masked ? loose : 0, &full, 0, runs);
          printf ("  %5d x %-5d %9.0f / %9.0f ms  (%.1f ns CPU per sample)%s", sides[k], sides[k],
                  t[k].wall * 1e3, t[k].cpu * 1e3,
                  t[k].cpu * 1e9 / ((double) sides[k] * (double) sides[k]), k ? "" : "\n");
          if (k)
            printf ("  x%.2f CPU for x%.2f samples\n", t[k].cpu / t[k - 1].cpu,
                    ((double) sides[k] * sides[k]) / ((double) sides[k - 1] * sides[k - 1]));
          tg_engine_free (e);
          tg_graph_free (g);
        }
      printf ("\n");
    }
}

static void
bench_thermal (int runs, int threads)
{
  TgGraph *g = tg_graph_new ();
  TgWorld *w = tg_graph_world (g);
  TgError err = { 0 };
  TgEngineOptions o = { .threads = threads, .cache_bytes = (size_t) 4 << 30 };
  TgEngine *e = tg_engine_new (&o);
  TgRegion full, r;
  int ero = -1;
  Times t2, t130, per_pass, copy = { 1e30, 1e30 };
  float *a = malloc (sizeof (float) * TSIDE * TSIDE), *b = malloc (sizeof (float) * TSIDE * TSIDE);
  CopyJob cj = { a, b, TSIDE };

  w->size_x = w->size_z = 16384.0;
  w->height_m = 1500.0;
  w->seed = 3;
  tg_region_for_world (&full, w, 4097);
  r = tg_region_window (&full, 0, 0, TSIDE, TSIDE);
  if (tg_graph_add_node (g, "base", "noise.fbm", &err) < 0
      || (ero = tg_graph_add_node (g, "ero", "erosion.thermal", &err)) < 0
      || tg_graph_add_link (g, "base", "height", "ero", "height", &err) < 0
      || tg_graph_set_param_text (g, 0, "mode", "ridged", &err) < 0
      || tg_graph_set_param_text (g, ero, "reference_cell_m", "0", &err) < 0)
    die ("graph", &err);

  /* 130 passes and 2: the difference is 128 passes, without the copies in
   * and out that every run pays once. */
  if (tg_graph_set_param_text (g, ero, "iterations", "130", &err) < 0)
    die ("iterations", &err);
  t130 = time_pull (e, g, ero, 0, &r, 130, runs);
  if (tg_graph_set_param_text (g, ero, "iterations", "2", &err) < 0)
    die ("iterations", &err);
  t2 = time_pull (e, g, ero, 0, &r, 2, runs);
  per_pass.wall = (t130.wall - t2.wall) / 128.0;
  per_pass.cpu = (t130.cpu - t2.cpu) / 128.0;

  for (size_t k = 0; k < (size_t) TSIDE * TSIDE; k++)
    a[k] = (float) k;
  for (int k = 0; k < runs + 1; k++)
    {
      double t0 = tg_wall_s (), c0 = tg_cpu_s ();
      run_threads (&threads, TSIDE / 16, copy_rows, &cj);
      keep_best (&copy, tg_wall_s () - t0, tg_cpu_s () - c0);
    }
  printf ("erosion.thermal, %d x %d, %d threads, best of %d (wall / CPU)\n", TSIDE, TSIDE,
          tg_engine_threads (e), runs);
  printf ("  %-40s %9.2f / %9.2f ms\n", "node, 130 passes", t130.wall * 1e3, t130.cpu * 1e3);
  printf ("  %-40s %9.2f / %9.2f ms\n", "node, 2 passes", t2.wall * 1e3, t2.cpu * 1e3);
  printf ("  %-40s %9.2f / %9.2f ms  (%.0f Msamples/s wall)\n", "per pass", per_pass.wall * 1e3,
          per_pass.cpu * 1e3, TSIDE * (double) TSIDE / per_pass.wall * 1e-6);
  printf ("  %-40s %9.2f / %9.2f ms  (%.1f GB/s wall)\n", "reference: plain read+write pass",
          copy.wall * 1e3, copy.cpu * 1e3, 2.0 * 4.0 * TSIDE * (double) TSIDE / copy.wall * 1e-9);
  printf ("  %-40s %9.2fx / %6.2fx  (goal <= 1.5x)\n\n", "per pass / read+write pass",
          per_pass.wall / copy.wall, per_pass.cpu / copy.cpu);
  free (a);
  free (b);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* --- hydraulic --------------------------------------------------------- */

#define HSIDE 2048

/* The node's defaults at 4 m cells (see erosion_hydraulic.c). */
static void
hydraulic_defaults (TgHydraulicSetup *s, long long droplets, double hm)
{
  memset (s, 0, sizeof *s);
  s->seed = 77;
  s->droplets = droplets;
  s->rounds = 16;
  s->max_steps = 100;
  s->inertia = 0.1f;
  s->capacity = (float) (8.0 / (16.0 * hm));
  s->min_slope = 0.01f;
  s->erode = 0.3f;
  s->deposit = 0.3f;
  s->evaporate = 0.98f;
  s->friction = 0.9f;
  s->gravity = (float) (2.0 * 9.81 * hm);
  s->height_scale = (float) hm;
  s->cell_m = 4.0f;
  s->brush_radius = 2.0f;
}

/* The straightforward reference: one droplet after another on one thread,
 * same physics, the brush's offsets and weights rebuilt for every erosion
 * step (as a first implementation does) or, with TABLE, worked out once,
 * as Lague's implementation does (it keeps them per map cell; one table
 * for the interior is the same work a step), a brush that reaches past
 * the map's edge still on the spot.  The same float operations in the
 * same order either way, so the same bytes (checked). */
static inline __attribute__ ((always_inline)) void
reference_droplets (const TgHydraulicSetup *s, float *hm, int w, int h, bool table)
{
  int r = (int) ceilf (s->brush_radius), nb = 0;
  ptrdiff_t *off = malloc (sizeof (ptrdiff_t) * (size_t) ((2 * r + 1) * (2 * r + 1)));
  float *rd = malloc (sizeof (float) * (size_t) ((2 * r + 1) * (2 * r + 1))), wsum_in = 0;

  for (int by = -r; by <= r; by++)
    for (int bx = -r; bx <= r; bx++)
      {
        float d = sqrtf ((float) (bx * bx + by * by));
        if (d < s->brush_radius)
          {
            off[nb] = (ptrdiff_t) by * w + bx;
            rd[nb++] = s->brush_radius - d;
            wsum_in += s->brush_radius - d;
          }
      }
  for (long long k = 0; k < s->droplets; k++)
    {
      float x = tg_hash_unit (tg_hash3 (s->seed, (int32_t) k, 0, 0x51)) * (float) (w - 1);
      float y = tg_hash_unit (tg_hash3 (s->seed, (int32_t) k, 0, 0x52)) * (float) (h - 1);
      float dx = 0, dy = 0, v2 = 1, water = 1, sed = 0;
      for (int step = 0; step < s->max_steps; step++)
        {
          int ix = (int) x, iy = (int) y;
          float fx = x - ix, fy = y - iy;
          float h00 = hm[iy * w + ix], h10 = hm[iy * w + ix + 1];
          float h01 = hm[(iy + 1) * w + ix], h11 = hm[(iy + 1) * w + ix + 1];
          float gx = (h10 - h00) * (1 - fy) + (h11 - h01) * fy;
          float gy = (h01 - h00) * (1 - fx) + (h11 - h10) * fx;
          float hc = h00 * (1 - fx) * (1 - fy) + h10 * fx * (1 - fy) + h01 * (1 - fx) * fy
                     + h11 * fx * fy;
          float len, nx, ny, hn, dh, cap;
          dx = dx * s->inertia - gx * (1 - s->inertia);
          dy = dy * s->inertia - gy * (1 - s->inertia);
          len = sqrtf (dx * dx + dy * dy);
          if (len <= 0)
            break;
          dx /= len;
          dy /= len;
          nx = x + dx;
          ny = y + dy;
          if (nx < 0 || ny < 0 || nx >= w - 1 || ny >= h - 1)
            break;
          {
            int jx = (int) nx, jy = (int) ny;
            float ax = nx - jx, ay = ny - jy;
            hn = hm[jy * w + jx] * (1 - ax) * (1 - ay) + hm[jy * w + jx + 1] * ax * (1 - ay)
                 + hm[(jy + 1) * w + jx] * (1 - ax) * ay + hm[(jy + 1) * w + jx + 1] * ax * ay;
          }
          dh = hn - hc;
          cap = fmaxf (-dh * s->height_scale / s->cell_m, s->min_slope) * sqrtf (v2) * water
                * s->capacity;
          if (dh > 0 || sed > cap)
            {
              float a = dh > 0 ? fminf (dh, sed) : (sed - cap) * s->deposit;
              hm[iy * w + ix] += a * (1 - fx) * (1 - fy);
              hm[iy * w + ix + 1] += a * fx * (1 - fy);
              hm[(iy + 1) * w + ix] += a * (1 - fx) * fy;
              hm[(iy + 1) * w + ix + 1] += a * fx * fy;
              sed -= a;
            }
          else
            {
              float wsum = 0, a = fminf ((cap - sed) * s->erode, -dh);
              int cx = (int) (x + 0.5f), cy = (int) (y + 0.5f);
              if (table && cx - r >= 0 && cx + r < w && cy - r >= 0 && cy + r < h)
                {
                  float *c = hm + (ptrdiff_t) cy * w + cx;
                  for (int q = 0; q < nb; q++)
                    c[off[q]] -= a * rd[q] / wsum_in;
                }
              else
                {
                  for (int by = -r; by <= r; by++)
                    for (int bx = -r; bx <= r; bx++)
                      {
                        float d = sqrtf ((float) (bx * bx + by * by));
                        int px = cx + bx, py = cy + by;
                        if (d < s->brush_radius && px >= 0 && px < w && py >= 0 && py < h)
                          wsum += s->brush_radius - d;
                      }
                  for (int by = -r; by <= r; by++)
                    for (int bx = -r; bx <= r; bx++)
                      {
                        float d = sqrtf ((float) (bx * bx + by * by));
                        int px = cx + bx, py = cy + by;
                        if (d < s->brush_radius && px >= 0 && px < w && py >= 0 && py < h)
                          hm[py * w + px] -= a * (s->brush_radius - d) / wsum;
                      }
                }
              sed += a;
            }
          v2 = fmaxf (v2 * s->friction - dh * s->gravity, 0);
          water *= s->evaporate;
          x = nx;
          y = ny;
        }
    }
  free (off);
  free (rd);
}

/* One timed run of the simulation on THREADS threads over a copy of BASE
 * in MAP, with the water map FLOW (zeroed first) or none (NULL); the
 * best wall and CPU times kept in BEST. */
static void
time_simulation (TgHydraulicSetup *s, const float *base, float *map, float *flow, size_t n,
                 int threads, TgHydraulicStats *st, Times *best)
{
  double t0, c0;

  memcpy (map, base, sizeof (float) * n);
  if (flow)
    memset (flow, 0, sizeof (float) * n);
  t0 = tg_wall_s ();
  c0 = tg_cpu_s ();
  s->threads = threads;
  tg__hydraulic_simulate (s, map, flow, HSIDE, HSIDE, run_threads, &threads, st);
  keep_best (best, tg_wall_s () - t0, tg_cpu_s () - c0);
}

static int
bench_hydraulic (int runs, int threads)
{
  TgGraph *g = tg_graph_new ();
  TgWorld *w = tg_graph_world (g);
  TgError err = { 0 };
  TgEngineOptions o1 = { .threads = 1 }, on = { .threads = threads };
  TgEngine *e1, *en;
  TgRegion full;
  TgValue *base = NULL, *v = NULL;
  size_t n = (size_t) HSIDE * HSIDE;
  float *m1 = malloc (sizeof (float) * n), *mn = malloc (sizeof (float) * n);
  float *m0 = malloc (sizeof (float) * n);
  /* The flow maps half a page off the height maps: at the same offset in
   * a page, each flow update stalls on the brush's stores to the height
   * (4 KiB aliasing), as the node's own allocation avoids. */
  float *f1_block = malloc (sizeof (float) * (n + 512)), *fn_block = malloc (sizeof (float) * (n + 512));
  float *f1 = f1_block + 512, *fn = fn_block + 512;
  TgHydraulicSetup s;
  TgHydraulicStats st;
  long long droplets = 400000;
  double t_node1 = 1e30, t_noden = 1e30, t_dry = 1e30;
  Times c_ref = { 1e30, 1e30 }, c_tab = { 1e30, 1e30 }, c_1 = { 1e30, 1e30 }, c_n = { 1e30, 1e30 };
  Times c_01 = { 1e30, 1e30 }, c_0n = { 1e30, 1e30 };
  bool table_differs = false, dry_differs = false;
  double node_droplets;
  int ero, failures = 0;
  TgValue *all[4] = { NULL };

  w->size_x = w->size_z = 8188.0; /* 2048 samples of 4 m */
  w->height_m = 800.0;
  w->seed = 9;
  tg_region_for_world (&full, w, HSIDE);
  if (tg_graph_add_node (g, "base", "noise.fbm", &err) < 0
      || (ero = tg_graph_add_node (g, "ero", "erosion.hydraulic", &err)) < 0
      || tg_graph_add_link (g, "base", "height", "ero", "height", &err) < 0
      || tg_graph_set_param_text (g, 0, "octaves", "7", &err) < 0
      || tg_graph_set_param_text (g, ero, "droplets_per_km2", "6000", &err) < 0)
    die ("graph", &err);
  e1 = tg_engine_new (&o1);
  en = tg_engine_new (&on);
  if (tg_engine_pull (en, g, 0, 0, &full, NULL, &base, NULL, &err) != 0)
    die ("pull base", &err);

  hydraulic_defaults (&s, droplets, w->height_m);
  for (int k = 0; k < runs; k++)
    {
      double t0, c0, t;
      memcpy (m1, base->data, sizeof (float) * n);
      t0 = tg_wall_s ();
      c0 = tg_cpu_s ();
      reference_droplets (&s, m1, HSIDE, HSIDE, false);
      t = tg_wall_s () - t0;
      keep_best (&c_ref, t, tg_cpu_s () - c0);

      memcpy (mn, base->data, sizeof (float) * n);
      t0 = tg_wall_s ();
      c0 = tg_cpu_s ();
      reference_droplets (&s, mn, HSIDE, HSIDE, true);
      keep_best (&c_tab, tg_wall_s () - t0, tg_cpu_s () - c0);
      if (memcmp (m1, mn, sizeof (float) * n) != 0)
        table_differs = true;

      time_simulation (&s, base->data, m1, f1, n, 1, &st, &c_1);
      time_simulation (&s, base->data, mn, fn, n, threads, &st, &c_n);
      /* No water map: what the node runs when nothing reads its flow
       * output, the same work as the plain loops (which keep none). */
      time_simulation (&s, base->data, m0, NULL, n, 1, &st, &c_01);
      dry_differs = dry_differs || memcmp (m0, m1, sizeof (float) * n) != 0;
      time_simulation (&s, base->data, m0, NULL, n, threads, &st, &c_0n);
      dry_differs = dry_differs || memcmp (m0, m1, sizeof (float) * n) != 0;
    }
  if (memcmp (m1, mn, sizeof (float) * n) != 0 || memcmp (f1, fn, sizeof (float) * n) != 0)
    failures++;

  /* The node: the same physics (its defaults), rain set to about the
   * same droplet count. */
  node_droplets = llround (6000.0 * (HSIDE - 1) * (HSIDE - 1) * 16.0 * 1e-6);
  for (int k = 0; k < runs; k++)
    {
      TgEngine *es[2] = { e1, en };
      double *ts[2] = { &t_node1, &t_noden };
      for (int q = 0; q < 3; q++)
        {
          /* Input computed outside the timing: pull it first.  Then all
           * four outputs on 1 and N threads, and its height alone on N
           * (no water map: its flow is not asked for). */
          TgEngine *eq = es[q > 0];
          double t0, t;
          int rc;
          tg_engine_clear_cache (eq);
          if (tg_engine_pull (eq, g, 0, 0, &full, NULL, &v, NULL, &err) != 0)
            die ("pull", &err);
          tg_value_unref (v);
          v = NULL;
          t0 = tg_wall_s ();
          rc = q < 2 ? tg_engine_pull_outputs (eq, g, ero, &full, NULL, all, NULL, &err)
                     : tg_engine_pull (eq, g, ero, 0, &full, NULL, &v, NULL, &err);
          t = tg_wall_s () - t0;
          if (rc != 0)
            die ("pull", &err);
          if (q < 2)
            *ts[q] = t < *ts[q] ? t : *ts[q];
          else
            t_dry = t < t_dry ? t : t_dry;
          for (int o = 0; o < 4; o++)
            {
              tg_value_unref (all[o]);
              all[o] = NULL;
            }
          tg_value_unref (v);
          v = NULL;
        }
    }

  printf ("erosion.hydraulic, %d x %d at 4 m, %d-step droplets, brush radius %.1f cells, best "
          "of %d\n",
          HSIDE, HSIDE, s.max_steps, s.brush_radius, runs);
  /* Droplets per second of CPU time is per thread and does not care
   * how busy the machine is; wall time is what a user waits. */
  printf ("  %-36s %7s %10s %12s %12s %12s %8s\n", "path", "threads", "droplets", "wall s",
          "CPU s", "/s/thread", "vs ref");
  printf ("  %-36s %7d %10lld %12.3f %12.3f %12.0f %7.2fx\n", "reference: plain droplet loop", 1,
          droplets, c_ref.wall, c_ref.cpu, droplets / c_ref.cpu, 1.0);
  printf ("  %-36s %7d %10lld %12.3f %12.3f %12.0f %7.2fx\n", "reference: brush table, same bytes", 1,
          droplets, c_tab.wall, c_tab.cpu, droplets / c_tab.cpu, c_ref.cpu / c_tab.cpu);
  printf ("  %-36s %7d %10lld %12.3f %12.3f %12.0f %7.2fx\n", "simulation, no water map", 1,
          droplets, c_01.wall, c_01.cpu, droplets / c_01.cpu, c_ref.cpu / c_01.cpu);
  printf ("  %-36s %7d %10lld %12.3f %12.3f %12.0f %7.2fx\n", "simulation, no water map", threads,
          droplets, c_0n.wall, c_0n.cpu, droplets / c_0n.cpu, c_ref.cpu / c_0n.cpu);
  printf ("  %-36s %7d %10lld %12.3f %12.3f %12.0f %7.2fx\n", "simulation with its water map", 1,
          droplets, c_1.wall, c_1.cpu, droplets / c_1.cpu, c_ref.cpu / c_1.cpu);
  printf ("  %-36s %7d %10lld %12.3f %12.3f %12.0f %7.2fx\n", "simulation with its water map",
          threads, droplets, c_n.wall, c_n.cpu, droplets / c_n.cpu, c_ref.cpu / c_n.cpu);
  printf ("  %-36s %7d %10.0f %12.3f %12s %12.0f %7.2fx\n", "node, all outputs (wall)",
          tg_engine_threads (e1), node_droplets, t_node1, "-", node_droplets / t_node1,
          (node_droplets / t_node1) / (droplets / c_ref.wall));
  printf ("  %-36s %7d %10.0f %12.3f %12s %12.0f %7.2fx\n", "node, all outputs (wall)",
          tg_engine_threads (en), node_droplets, t_noden, "-", node_droplets / t_noden / threads,
          (node_droplets / t_noden) / (droplets / c_ref.wall));
  printf ("  %-36s %7d %10.0f %12.3f %12s %12.0f %7.2fx\n", "node, its height alone (wall)",
          tg_engine_threads (en), node_droplets, t_dry, "-", node_droplets / t_dry / threads,
          (node_droplets / t_dry) / (droplets / c_ref.wall));
  printf ("  simulation on 1 thread against the brush-table loop: %.2fx CPU\n",
          c_tab.cpu / c_1.cpu);
  /* The goal was set where this plain loop ran 166 k droplets/s: it is
   * also 600 / 166 = 3.61x the loop, which carries to another machine. */
  printf ("  %.1f steps a droplet; goal >= 600000 droplets/s per thread (CPU), set where the plain "
          "loop ran 166000/s (3.61x it): the same work (no water map) %.0f /s on 1 thread and %.0f "
          "on %d (%.2fx / %.2fx the loop here); with the water map %.2fx / %.2fx; simulation "
          "bit-identical on 1 and %d threads: %s; height the same without the water map: %s\n\n",
          (double) st.steps / (double) (st.droplets_run > 0 ? st.droplets_run : 1),
          droplets / c_01.cpu, droplets / c_0n.cpu, threads, c_ref.cpu / c_01.cpu,
          c_ref.cpu / c_0n.cpu, c_ref.cpu / c_1.cpu, c_ref.cpu / c_n.cpu, threads,
          failures ? "NO" : "yes", dry_differs ? "NO" : "yes");
  if (dry_differs)
    failures++;
  if (table_differs)
    {
      printf ("bench_erosion: the brush-table reference differs from the plain one\n");
      failures++;
    }

  tg_value_unref (base);
  tg_engine_free (e1);
  tg_engine_free (en);
  tg_graph_free (g);
  free (m1);
  free (mn);
  free (m0);
  free (f1_block);
  free (fn_block);
  return failures;
}

/* alpine's rain (data/examples/alpine.tgraph) at CELL metres, as the
 * node sets it up (erosion_hydraulic.c): at 2 m brushes of 4 cells, 12 on
 * faces, deposits of 3, 250 one-cell steps, gully feedback; on the 4 m
 * terrain of bench_hydraulic read as CELL metres (steeper).  What alpine
 * 2049 (4097 at 1 m) spends its time on: wide brushes, the water read
 * beside the path. */
static void
hydraulic_fine (TgHydraulicSetup *s, long long droplets, double cell)
{
  double hm = 850.0, f = 0.5;

  memset (s, 0, sizeof *s);
  s->seed = 7;
  s->droplets = droplets;
  s->rounds = 16;
  s->max_steps = 250;
  s->step = (float) (2.0 / cell);
  s->inertia = (float) pow (0.1, f);
  s->capacity = (float) (15.0 / (4.0 * hm));
  s->min_slope = 0.01f;
  s->fall_slope = 5.0f;
  s->erode = (float) (1.0 - pow (1.0 - 0.45, f));
  s->deposit = (float) (1.0 - pow (1.0 - 0.3, f));
  s->evaporate = (float) pow (1.0 - 0.02, f);
  s->friction = (float) pow (1.0 - 0.1, f);
  s->gravity = (float) (2.0 * 9.81 * hm);
  s->height_scale = (float) hm;
  s->cell_m = (float) cell;
  s->brush_radius = (float) (8.0 / cell);
  s->deposit_min = (float) (6.0 / cell);
  s->channel_floor = 0.35f;
  s->channel_pull = (float) (32.0 / cell);
  s->face_radius = (float) (24.0 / cell);
  s->discharge_area = (float) (8000.0 / (2.0 * s->brush_radius * cell * cell));
  s->channel_exponent = 1.0f;
  s->channel_ceil = 2.0f;
}

/* The fine case on 1 thread with the plain brush code, and on 1 and
 * THREADS threads with the widest the CPU has, runs interleaved; best CPU
 * and wall of each. */
static int
bench_hydraulic_fine (int runs, int threads)
{
  TgGraph *g = tg_graph_new ();
  TgWorld *w = tg_graph_world (g);
  TgError err = { 0 };
  TgEngineOptions on = { .threads = threads };
  TgEngine *en;
  TgRegion full;
  TgValue *base = NULL;
  size_t n = (size_t) HSIDE * HSIDE;
  float *m[3], *f_block[3], *f[3];
  TgHydraulicSetup s;
  TgHydraulicStats st;
  /* TG_BENCH_FINE_DROPLETS: fewer for more runs on a busy machine. */
  const char *env_droplets = getenv ("TG_BENCH_FINE_DROPLETS");
  const char *env_cell = getenv ("TG_BENCH_FINE_CELL");
  long long droplets = env_droplets ? atoll (env_droplets) : 120000;
  Times c[3] = { { 1e30, 1e30 }, { 1e30, 1e30 }, { 1e30, 1e30 } };
  static const TgHydraulicIsa isa[3]
    = { TG__HYDRAULIC_ISA_GENERIC, TG__HYDRAULIC_ISA_BEST, TG__HYDRAULIC_ISA_BEST };
  static const char *what[3]
    = { "simulation, plain brushes", "simulation, widest brushes", "simulation, widest brushes" };
  int failures = 0, one = 1;

  w->size_x = w->size_z = 8188.0;
  w->height_m = 800.0;
  w->seed = 9;
  tg_region_for_world (&full, w, HSIDE);
  if (tg_graph_add_node (g, "base", "noise.fbm", &err) < 0
      || tg_graph_set_param_text (g, 0, "octaves", "7", &err) < 0)
    die ("graph", &err);
  en = tg_engine_new (&on);
  if (tg_engine_pull (en, g, 0, 0, &full, NULL, &base, NULL, &err) != 0)
    die ("pull base", &err);
  for (int k = 0; k < 3; k++)
    {
      m[k] = malloc (sizeof (float) * n);
      /* Half a page off the height (see bench_hydraulic). */
      f_block[k] = malloc (sizeof (float) * (n + 512));
      f[k] = f_block[k] + 512;
    }
  /* TG_BENCH_FINE_CELL=1: alpine 4097's 1 m cells (2-cell steps, brushes
   * of 8 to 24 cells). */
  hydraulic_fine (&s, droplets, env_cell ? atof (env_cell) : 2.0);
  for (int r = 0; r < runs; r++)
    for (int k = 0; k < 3; k++)
      {
        double t0, c0;
        s.isa = isa[k];
        s.threads = k == 2 ? threads : one;
        memcpy (m[k], base->data, sizeof (float) * n);
        memset (f[k], 0, sizeof (float) * n);
        t0 = tg_wall_s ();
        c0 = tg_cpu_s ();
        tg__hydraulic_simulate (&s, m[k], f[k], HSIDE, HSIDE, run_threads,
                                k == 2 ? &threads : &one, &st);
        keep_best (&c[k], tg_wall_s () - t0, tg_cpu_s () - c0);
      }
  for (int k = 1; k < 3; k++)
    if (memcmp (m[0], m[k], sizeof (float) * n) != 0
        || memcmp (f[0], f[k], sizeof (float) * n) != 0)
      failures++;
  printf ("erosion.hydraulic, alpine's rain at %g m cells on %d x %d, %d-step droplets, brushes "
          "%.0f..%.0f cells, best of %d\n",
          s.cell_m, HSIDE, HSIDE, s.max_steps, s.brush_radius, s.face_radius, runs);
  printf ("  %-36s %7s %10s %12s %12s %12s\n", "path", "threads", "droplets", "wall s", "CPU s",
          "/s/thread");
  for (int k = 0; k < 3; k++)
    printf ("  %-36s %7d %10lld %12.3f %12.3f %12.0f\n", what[k], k == 2 ? threads : 1,
            droplets, c[k].wall, c[k].cpu, droplets / c[k].cpu);
  printf ("  %.1f steps a droplet; simulation bit-identical on 1 and %d threads and with either "
          "brush code: %s\n\n",
          (double) st.steps / (double) (st.droplets_run > 0 ? st.droplets_run : 1), threads,
          failures ? "NO" : "yes");
  tg_value_unref (base);
  tg_engine_free (en);
  tg_graph_free (g);
  for (int k = 0; k < 3; k++)
    {
      free (m[k]);
      free (f_block[k]);
    }
  return failures;
}

/* --- flow -------------------------------------------------------------- */

static void
bench_flow (int runs)
{
  TgGraph *g = tg_graph_new ();
  TgWorld *w = tg_graph_world (g);
  TgError err = { 0 };
  TgEngineOptions o = { .threads = 0, .cache_bytes = 0 };
  TgEngine *e = tg_engine_new (&o);
  TgRegion full;
  TgValue *v = NULL;
  int fl;
  double best = 1e30;

  w->size_x = w->size_z = 8192.0;
  w->height_m = 800.0;
  tg_region_for_world (&full, w, 2049);
  if (tg_graph_add_node (g, "base", "noise.fbm", &err) < 0
      || (fl = tg_graph_add_node (g, "flow", "erosion.flow", &err)) < 0
      || tg_graph_add_link (g, "base", "height", "flow", "height", &err) < 0)
    die ("graph", &err);
  for (int k = 0; k < runs; k++)
    {
      double t0, t;
      tg_engine_clear_cache (e);
      if (tg_engine_pull (e, g, 0, 0, &full, NULL, &v, NULL, &err) != 0)
        die ("pull", &err);
      tg_value_unref (v);
      t0 = tg_wall_s ();
      if (tg_engine_pull (e, g, fl, 0, &full, NULL, &v, NULL, &err) != 0)
        die ("pull", &err);
      t = tg_wall_s () - t0;
      best = t < best ? t : best;
      tg_value_unref (v);
    }
  printf ("erosion.flow, 2049 x 2049 (priority-flood + MFD), best of %d: %.1f ms (%.1f "
          "Msamples/s)\n",
          runs, best * 1e3, 2049.0 * 2049.0 / best * 1e-6);
  tg_engine_free (e);
  tg_graph_free (g);
}

int
main (int argc, char **argv)
{
  int runs = argc > 1 ? atoi (argv[1]) : 3;
  int threads = argc > 2 ? atoi (argv[2]) : (int) sysconf (_SC_NPROCESSORS_ONLN);
  const char *only = argc > 3 ? argv[3] : NULL;
  int failures = 0;

  if (runs < 1)
    runs = 1;
  if (threads < 1)
    threads = 1;
  if (!only || strcmp (only, "thermal") == 0 || strcmp (only, "thermal-passes") == 0)
    bench_thermal (runs, threads);
  if (!only || strcmp (only, "thermal") == 0 || strcmp (only, "thermal-converge") == 0)
    bench_thermal_converge (runs, threads);
  if (!only || strcmp (only, "hydraulic") == 0)
    failures += bench_hydraulic (runs, threads);
  if (!only || strcmp (only, "hydraulic") == 0 || strcmp (only, "hydraulic-fine") == 0)
    failures += bench_hydraulic_fine (runs, threads);
  if (!only || strcmp (only, "flow") == 0)
    bench_flow (runs);
  if (failures)
    {
      printf ("bench_erosion: a hydraulic check failed (see above)\n");
      return 1;
    }
  return 0;
}
