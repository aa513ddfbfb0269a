/* Benchmark of erosion.flow's whole-world evaluation on an fBm heightmap,
 * phase by phase (fill, flat ranks, the MFD steps, the D8 sums), CPU and
 * wall time both, on
 * one thread and on all of them, with the hash of the result so that a
 * change that alters the bytes shows.  The same heightmap can be written
 * as raw little-endian f32 for the GRASS peer (peers/peers_flow.sh).
 *
 *   bench_flow [size [runs [out.r32]]]      default 2049, 3 runs
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tgraph/tgraph.h>

#include "erosion_flow.h"
#include "../common/tgclock.h"
#include "bench_pool.h"

static void
die (const char *what, const TgError *err)
{
  fprintf (stderr, "bench_flow: %s: %s\n", what, err ? err->message : "failed");
  exit (1);
}

/* The input: the fBm node's height over SIZE^2 of an 8 km world. */
static float *
make_height (int size)
{
  return bench_fbm_height ("bench_flow", size);
}

static void
run (const float *hm, int size, int threads, int runs)
{
  size_t n = (size_t) size * size;
  float *filled = malloc (sizeof (float) * n);
  int32_t *rank = malloc (sizeof (int32_t) * n);
  double *acc = malloc (sizeof (double) * n);
  double best[4][2], tot[2] = { 1e30, 1e30 };
  TgFlowOpts o = { TG__FLOW_MFD, 1.1, threads > 1 ? bench_pool_parallel : NULL, &threads, NULL };
  TgFlowWindow win = { size, size, 0, 0, size, size, 0, 0, size, size };

  for (int p = 0; p < 4; p++)
    best[p][0] = best[p][1] = 1e30;
  for (int r = 0; r < runs; r++)
    {
      double c[5], t[5];
      TgFlowDirs d;
      c[0] = tg_cpu_s (), t[0] = tg_wall_s ();
      if (tg__flow_fill_parallel (&o, hm, size, size, filled) != 0)
        die ("fill", NULL);
      c[1] = tg_cpu_s (), t[1] = tg_wall_s ();
      if (tg__flow_ranks (&o, filled, size, size, rank) != 0)
        die ("ranks", NULL);
      c[2] = tg_cpu_s (), t[2] = tg_wall_s ();
      /* tg__flow_route in its two parts, as the node calls them. */
      if (tg__flow_route_dirs (&o, &win, filled, rank, acc, &d) != 0)
        die ("MFD steps", NULL);
      c[3] = tg_cpu_s (), t[3] = tg_wall_s ();
      if (tg__flow_route_sums (&o, &win, &d, NULL, acc, NULL) != 0)
        die ("sums", NULL);
      c[4] = tg_cpu_s (), t[4] = tg_wall_s ();
      for (int p = 0; p < 4; p++)
        {
          best[p][0] = fmin (best[p][0], c[p + 1] - c[p]);
          best[p][1] = fmin (best[p][1], t[p + 1] - t[p]);
        }
      tot[0] = fmin (tot[0], c[4] - c[0]);
      tot[1] = fmin (tot[1], t[4] - t[0]);
    }
  printf ("flow %d^2, %d thread%s, best of %d: fill %.3f/%.3f s, ranks %.3f/%.3f s, "
          "mfd %.3f/%.3f s, sums %.3f/%.3f s; total CPU %.3f s, wall %.3f s; "
          "acc fnv %016" PRIx64 "\n",
          size, threads, threads == 1 ? "" : "s", runs, best[0][0], best[0][1], best[1][0],
          best[1][1], best[2][0], best[2][1], best[3][0], best[3][1], tot[0], tot[1],
          bench_fnv (acc, sizeof (double) * n));
  free (filled);
  free (rank);
  free (acc);
}

int
main (int argc, char **argv)
{
  int size = argc > 1 ? atoi (argv[1]) : 2049;
  int runs = argc > 2 ? atoi (argv[2]) : 3;
  int threads = (int) sysconf (_SC_NPROCESSORS_ONLN);
  float *hm;

  if (size < 3 || runs < 1)
    {
      fprintf (stderr, "usage: bench_flow [size >= 3 [runs >= 1 [out.r32]]]\n");
      return 2;
    }
  hm = make_height (size);
  if (argc > 3)
    {
      FILE *f = fopen (argv[3], "wb");
      if (!f || fwrite (hm, sizeof (float), (size_t) size * size, f) != (size_t) size * size
          || fclose (f) != 0)
        {
          fprintf (stderr, "bench_flow: cannot write %s\n", argv[3]);
          return 1;
        }
    }
  run (hm, size, 1, runs);
  if (threads > 1)
    run (hm, size, threads, runs);
  free (hm);
  return 0;
}
