/* Benchmark of noise.fbm: Perlin fBm, 8 octaves, over 2048 x 2048 samples.
 *
 * Times the scalar reference (one sample at a time), the row kernel on one
 * thread for every ISA build this machine runs, and the whole node through
 * tg_engine_pull with one thread and with all of them.  Prints samples per
 * second and the ratio to the reference, checks that every kernel build
 * gives the reference's bytes and that the node gives the same bytes on
 * any thread count, and exits non-zero when they differ.  Each figure is
 * the best of a few runs, so a busy machine disturbs it less.
 *
 * Run with `meson test --benchmark --suite bench -v` or directly:
 * bench_fbm [runs]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tgraph/tgraph.h>

#include "noise_fbm.h"

#define SIDE 2048
#define OCTAVES 8

static double
now_s (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

typedef struct
{
  const char *name;
  int threads;
  double seconds;
} Row;

static void
print_row (const Row *r, double ref_seconds)
{
  double samples = (double) SIDE * SIDE;

  printf ("  %-34s %7d %10.1f %12.1f %11.2fx %11.2fx\n", r->name, r->threads, r->seconds * 1e3,
          samples / r->seconds * 1e-6, ref_seconds / r->seconds,
          ref_seconds / (r->seconds * r->threads));
}

static double
time_reference (const TgFbm *f, const TgRegion *r, float *out, int runs)
{
  double best = 1e30;

  for (int k = 0; k < runs; k++)
    {
      double t0 = now_s (), t;

      for (int j = 0; j < r->height; j++)
        for (int i = 0; i < r->width; i++)
          out[(size_t) j * SIDE + i]
            = tg__fbm_reference_sample (f, tg_region_x (r, i), tg_region_z (r, j));
      t = now_s () - t0;
      best = t < best ? t : best;
    }
  return best;
}

static double
time_kernel (const TgFbm *f, const TgRegion *r, float *out, int runs)
{
  double best = 1e30;

  for (int k = 0; k < runs; k++)
    {
      double t0 = now_s (), t;

      for (int j = 0; j < r->height; j++)
        tg__fbm_row (f, r, j, 0, r->width, out + (size_t) j * SIDE);
      t = now_s () - t0;
      best = t < best ? t : best;
    }
  return best;
}

/* The node over R; *OUT gets the last result (caller unrefs). */
static double
time_node (const TgGraph *g, const TgRegion *r, int threads, int runs, TgValue **out, int *used)
{
  TgEngineOptions o = { .threads = threads, .cache_bytes = 0 };
  TgEngine *e = tg_engine_new (&o);
  double best = 1e30;

  *out = NULL;
  *used = tg_engine_threads (e);
  for (int k = 0; k < runs; k++)
    {
      TgValue *v = NULL;
      TgError err = { 0 };
      double t0, t;
      int rc;

      tg_engine_clear_cache (e);
      t0 = now_s ();
      rc = tg_engine_pull (e, g, 0, 0, r, NULL, &v, NULL, &err);
      t = now_s () - t0;
      if (rc != 0)
        {
          fprintf (stderr, "bench_fbm: pull failed: %s: %s\n", err.path, err.message);
          exit (1);
        }
      best = t < best ? t : best;
      if (*out)
        tg_value_unref (*out);
      *out = v;
    }
  tg_engine_free (e);
  return best;
}

static bool
same (const float *a, const float *b)
{
  return memcmp (a, b, sizeof (float) * SIDE * SIDE) == 0;
}

int
main (int argc, char **argv)
{
  int runs = argc > 1 ? atoi (argv[1]) : 3;
  TgFbmParams p;
  TgFbm f;
  TgWorld world;
  TgRegion full, r;
  TgGraph *g;
  TgError err = { 0 };
  TgParamValue v;
  float *ref = malloc (sizeof (float) * SIDE * SIDE);
  float *out = malloc (sizeof (float) * SIDE * SIDE);
  TgValue *node1 = NULL, *nodeN = NULL;
  Row rows[8];
  int n_rows = 0, used1, usedN, failures = 0;
  double t_ref;

  if (runs < 1)
    runs = 1;
  if (ref == NULL || out == NULL)
    return 1;

  /* An 8 km world at 2049 samples (4 m cells); the benchmark region is
   * its north-west 2048 x 2048 window. */
  tg_world_init_default (&world);
  world.size_x = world.size_z = 8192.0;
  world.seed = 1234;
  tg_region_for_world (&full, &world, 2049);
  r = tg_region_window (&full, 0, 0, SIDE, SIDE);

  memset (&p, 0, sizeof p);
  p.basis = TG__FBM_PERLIN;
  p.mode = TG__FBM_MODE_FBM;
  p.scale_m = 1000.0;
  p.octaves = OCTAVES;
  p.persistence = 0.5;
  p.lacunarity = 2.0;
  p.warp_scale_m = 2000.0;
  tg__fbm_plan (&f, &p, 0x5eedu);

  printf ("noise.fbm: perlin fbm, %d octaves, %d x %d samples (%.2f M), best of %d\n", OCTAVES,
          SIDE, SIDE, SIDE * (double) SIDE * 1e-6, runs);
  t_ref = time_reference (&f, &r, ref, runs);
  rows[n_rows++] = (Row) { "scalar reference", 1, t_ref };

  for (int isa = 0; isa < TG__FBM_ISA_COUNT; isa++)
    {
      static char names[TG__FBM_ISA_COUNT][48];
      bool ok;

      if (!tg__fbm_isa_supported ((TgFbmIsa) isa))
        continue;
      f.isa = (TgFbmIsa) isa;
      snprintf (names[isa], sizeof names[isa], "row kernel, %s", tg__fbm_isa_name (f.isa));
      rows[n_rows++] = (Row) { names[isa], 1, time_kernel (&f, &r, out, runs) };
      ok = same (ref, out);
      failures += !ok;
      printf ("  bit-identical to the reference: %-8s %s\n", tg__fbm_isa_name (f.isa),
              ok ? "yes" : "NO");
    }

  /* The node with the same parameters (its seed also mixes the world's). */
  g = tg_graph_new ();
  *tg_graph_world (g) = world;
  if (tg_graph_add_node (g, "fbm", "noise.fbm", &err) != 0)
    {
      fprintf (stderr, "bench_fbm: %s\n", err.message);
      return 1;
    }
  memset (&v, 0, sizeof v);
  v.type = TG_PARAM_INT;
  v.i = OCTAVES;
  if (tg_graph_set_param (g, 0, "octaves", &v, &err) != 0)
    {
      fprintf (stderr, "bench_fbm: %s: %s\n", err.path, err.message);
      return 1;
    }
  {
    static char name1[64], nameN[64];

    snprintf (name1, sizeof name1, "node, tg_engine_pull (%s)",
              tg__fbm_isa_name (tg__fbm_best_isa ()));
    snprintf (nameN, sizeof nameN, "node, tg_engine_pull (%s)",
              tg__fbm_isa_name (tg__fbm_best_isa ()));
    rows[n_rows] = (Row) { name1, 1, time_node (g, &r, 1, runs, &node1, &used1) };
    rows[n_rows].threads = used1;
    n_rows++;
    rows[n_rows] = (Row) { nameN, 0, time_node (g, &r, 0, runs, &nodeN, &usedN) };
    rows[n_rows].threads = usedN;
    n_rows++;
  }
  {
    bool ok = node1 && nodeN && same (node1->data, nodeN->data);
    failures += !ok;
    printf ("  node bit-identical on 1 and %d threads: %s\n", usedN, ok ? "yes" : "NO");
  }

  printf ("\n  %-34s %7s %10s %12s %12s %12s\n", "path", "threads", "ms", "Msamples/s",
          "vs ref", "per thread");
  for (int k = 0; k < n_rows; k++)
    print_row (&rows[k], t_ref);

  tg_value_unref (node1);
  tg_value_unref (nodeN);
  tg_graph_free (g);
  free (ref);
  free (out);
  if (failures)
    {
      printf ("bench_fbm: %d output(s) differ\n", failures);
      return 1;
    }
  return 0;
}
