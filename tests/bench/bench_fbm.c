/* Benchmark of noise.fbm: Perlin fBm, 6 octaves, over 2048 x 2048 samples.
 *
 * The baseline is a plain textbook loop (plain_fbm.h: Perlin's improved
 * noise, scalar, one sample at a time), timed in the same run.  Then our
 * scalar reference (the bit-exact specification the kernels must match,
 * not a baseline: it is written for clarity), the row kernel on one thread
 * for every ISA build this machine runs, and the whole node through
 * tg_engine_pull with one thread and with all of them.  Prints wall and
 * CPU time, samples per second and the ratio to the plain loop in CPU
 * time (so other work on a shared machine cancels out), checks that every
 * kernel build gives the reference's bytes and that the node gives the
 * same bytes on any thread count, and exits non-zero when they differ.
 * Each figure is the best of a few runs.
 *
 * Run with `meson test --benchmark --suite bench -v` or directly:
 * bench_fbm [runs [octaves]]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tgraph/tgraph.h>

#include "noise_fbm.h"
#include "plain_fbm.h"

#define SIDE 2048

static int OCTAVES = 6;

static double
clock_s (clockid_t id)
{
  struct timespec t;

  clock_gettime (id, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

/* Wall and CPU (all threads of the process) seconds of one run. */
typedef struct
{
  double wall, cpu;
} Time;

static Time
time_start (void)
{
  return (Time) { clock_s (CLOCK_MONOTONIC), clock_s (CLOCK_PROCESS_CPUTIME_ID) };
}

/* Keeps in *BEST the run with the least CPU since T0. */
static void
time_keep (Time *best, Time t0)
{
  Time t = { clock_s (CLOCK_MONOTONIC) - t0.wall, clock_s (CLOCK_PROCESS_CPUTIME_ID) - t0.cpu };

  if (t.cpu < best->cpu)
    *best = t;
}

typedef struct
{
  const char *name;
  int threads;
  Time t;
} Row;

static void
print_row (const Row *r, const Time *base)
{
  double samples = (double) SIDE * SIDE;

  printf ("  %-40s %7d %9.1f %9.1f %12.1f %11.2fx\n", r->name, r->threads, r->t.wall * 1e3,
          r->t.cpu * 1e3, samples / r->t.cpu * 1e-6, base->cpu / r->t.cpu);
}

static Time
time_plain (const TgRegion *r, float *out, int runs)
{
  Time best = { 1e30, 1e30 };
  PlainPerlin p;

  plain_perlin_init (&p, 1234);
  for (int k = 0; k < runs; k++)
    {
      Time t0 = time_start ();

      for (int j = 0; j < r->height; j++)
        {
          double z = tg_region_z (r, j);
          for (int i = 0; i < r->width; i++)
            out[(size_t) j * SIDE + i] = plain_fbm (&p, tg_region_x (r, i), z, 1000.0, OCTAVES);
        }
      time_keep (&best, t0);
    }
  return best;
}

static Time
time_reference (const TgFbm *f, const TgRegion *r, float *out, int runs)
{
  Time best = { 1e30, 1e30 };

  for (int k = 0; k < runs; k++)
    {
      Time t0 = time_start ();

      for (int j = 0; j < r->height; j++)
        for (int i = 0; i < r->width; i++)
          out[(size_t) j * SIDE + i]
            = tg__fbm_reference_sample (f, tg_region_x (r, i), tg_region_z (r, j));
      time_keep (&best, t0);
    }
  return best;
}

static Time
time_kernel (const TgFbm *f, const TgRegion *r, float *out, int runs)
{
  Time best = { 1e30, 1e30 };

  for (int k = 0; k < runs; k++)
    {
      Time t0 = time_start ();

      for (int j = 0; j < r->height; j++)
        tg__fbm_row (f, r, j, 0, r->width, out + (size_t) j * SIDE);
      time_keep (&best, t0);
    }
  return best;
}

/* The node over R; *OUT gets the last result (caller unrefs). */
static Time
time_node (const TgGraph *g, const TgRegion *r, int threads, int runs, TgValue **out, int *used)
{
  TgEngineOptions o = { .threads = threads, .cache_bytes = 0 };
  TgEngine *e = tg_engine_new (&o);
  Time best = { 1e30, 1e30 };

  *out = NULL;
  *used = tg_engine_threads (e);
  for (int k = 0; k < runs; k++)
    {
      TgValue *v = NULL;
      TgError err = { 0 };
      Time t0;
      int rc;

      tg_engine_clear_cache (e);
      t0 = time_start ();
      rc = tg_engine_pull (e, g, 0, 0, r, NULL, &v, NULL, &err);
      time_keep (&best, t0);
      if (rc != 0)
        {
          fprintf (stderr, "bench_fbm: pull failed: %s: %s\n", err.path, err.message);
          exit (1);
        }
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
  float *plain = malloc (sizeof (float) * SIDE * SIDE);
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
  Time t_plain;

  if (argc > 2)
    OCTAVES = atoi (argv[2]);
  if (runs < 1)
    runs = 1;
  if (ref == NULL || out == NULL || plain == NULL || OCTAVES < 1 || OCTAVES > 16)
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
  t_plain = time_plain (&r, plain, runs);
  rows[n_rows++] = (Row) { "plain textbook loop (baseline)", 1, t_plain };
  rows[n_rows++] = (Row) { "our scalar reference (the spec)", 1, time_reference (&f, &r, ref, runs) };

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

  printf ("\n  %-40s %7s %9s %9s %12s %12s\n", "path", "threads", "wall ms", "CPU ms",
          "Msamples/CPU s", "vs plain");
  for (int k = 0; k < n_rows; k++)
    print_row (&rows[k], &t_plain);
  {
    /* Both loops make fBm of the same octaves; a check that the baseline
     * is doing real work (and was not optimised away). */
    double sum = 0.0;
    for (size_t i = 0; i < (size_t) SIDE * SIDE; i += 4099)
      sum += plain[i];
    printf ("  (plain loop checksum %.3f)\n", sum);
  }
  /* For tests/bench/peers/peers_fbm.sh: CPU seconds of the baseline and
   * of the node on one thread. */
  printf ("RESULT plain %.6f\nRESULT node %.6f\n", t_plain.cpu, rows[n_rows - 2].t.cpu);

  tg_value_unref (node1);
  tg_value_unref (nodeN);
  tg_graph_free (g);
  free (ref);
  free (out);
  free (plain);
  if (failures)
    {
      printf ("bench_fbm: %d output(s) differ\n", failures);
      return 1;
    }
  return 0;
}
