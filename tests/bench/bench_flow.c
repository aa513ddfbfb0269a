/* Benchmark of erosion.flow's whole-world evaluation on an fBm heightmap,
 * phase by phase (fill, flat ranks, the MFD steps, the D8 sums), CPU and
 * wall time both, on one thread and on all of them, with the hash of the
 * result so that a change that alters the bytes shows.  Each phase also
 * gets its critical path, what it would take on idle cores: the CPU time
 * outside the parallel calls plus, for each call, its busiest thread's
 * CPU time (on a shared machine the wall time of several threads says
 * little).  The same heightmap can be written as raw little-endian f32
 * for the GRASS peer (peers/peers_flow.sh).
 *
 *   bench_flow [size [runs [out.r32]]]   default 2049, 3 runs (0: only write the heightmap)
 *
 * BENCH_FLOW_THREADS=N runs on N threads only (1: the one-thread run
 * alone), for a profile of one of them.
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

/* The parallel hook of bench_pool, timing each thread's CPU: CPU adds up
 * every call's threads, CRIT every call's busiest thread; CALLS counts
 * the calls (each ends waiting for its last thread, which on a loaded
 * machine may not be running). */
typedef struct
{
  int threads;
  double cpu, crit;
  int calls;
} Timed;

typedef struct
{
  BenchPool *pool;
  double cpu;
} TimedWorker;

static void *
timed_worker (void *arg)
{
  TimedWorker *w = arg;
  double t0 = bench_thread_cpu_s ();

  bench_pool_worker (w->pool);
  w->cpu = bench_thread_cpu_s () - t0;
  return NULL;
}

static int
timed_parallel (void *ctx, int n, int grain, void (*fn) (void *, int, int), void *user)
{
  Timed *t = ctx;
  BenchPool p = { fn, user, n, grain, 0, t->threads, PTHREAD_MUTEX_INITIALIZER };
  TimedWorker wk[64];
  int nt = t->threads < 64 ? t->threads : 64;
  double most = 0.0;

  for (int i = 0; i < nt; i++)
    wk[i] = (TimedWorker) { &p, 0.0 };
  bench_spawn (timed_worker, wk, sizeof wk[0], nt);
  for (int i = 0; i < nt; i++)
    {
      t->cpu += wk[i].cpu;
      most = wk[i].cpu > most ? wk[i].cpu : most;
    }
  t->crit += most;
  t->calls++;
  return 0;
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
  double best[4][3], tot[3] = { 1e30, 1e30, 1e30 };
  Timed timed = { threads, 0.0, 0.0, 0 };
  int calls[5] = { 0 };
  TgFlowOpts o = { TG__FLOW_MFD, 1.1, threads > 1 ? timed_parallel : NULL, &timed, NULL };
  TgFlowWindow win = { size, size, 0, 0, size, size, 0, 0, size, size };

  for (int p = 0; p < 4; p++)
    best[p][0] = best[p][1] = best[p][2] = 1e30;
  for (int r = 0; r < runs; r++)
    {
      /* CPU, wall and critical path at each mark. */
      double c[5], t[5], k[5];
      TgFlowDirs d;
#define MARK(i)                                                                                  \
  c[i] = tg_cpu_s (), t[i] = tg_wall_s (), k[i] = c[i] - timed.cpu + timed.crit,                 \
  calls[i] = timed.calls
      /* The node's steps as it calls them (erosion_flow_tiled.c, whole):
       * one scratch block from step to step, and the filled heights' and
       * ranks' arrays for the sums' walk. */
      void *scratch;
      MARK (0);
      if (!(scratch = malloc (9 * n)))
        die ("scratch", NULL);
      if (tg__flow_fill_parallel_buf (&o, hm, size, size, filled, scratch) != 0)
        die ("fill", NULL);
      MARK (1);
      if (tg__flow_ranks_buf (&o, filled, size, size, rank, scratch) != 0)
        die ("ranks", NULL);
      MARK (2);
      if (tg__flow_route_dirs_buf (&o, &win, filled, rank, acc, &d, scratch) != 0)
        die ("MFD steps", NULL);
      MARK (3);
      if (tg__flow_route_sums_buf (&o, &win, &d, NULL, acc, NULL, (int32_t *) filled, rank) != 0)
        die ("sums", NULL);
      free (scratch);
      MARK (4);
#undef MARK
      for (int p = 0; p < 4; p++)
        {
          best[p][0] = fmin (best[p][0], c[p + 1] - c[p]);
          best[p][1] = fmin (best[p][1], t[p + 1] - t[p]);
          best[p][2] = fmin (best[p][2], k[p + 1] - k[p]);
        }
      tot[0] = fmin (tot[0], c[4] - c[0]);
      tot[1] = fmin (tot[1], t[4] - t[0]);
      tot[2] = fmin (tot[2], k[4] - k[0]);
    }
  printf ("flow %d^2, %d thread%s, best of %d: fill %.3f/%.3f s, ranks %.3f/%.3f s, "
          "mfd %.3f/%.3f s, sums %.3f/%.3f s; total CPU %.3f s, wall %.3f s; "
          "acc fnv %016" PRIx64 "\n",
          size, threads, threads == 1 ? "" : "s", runs, best[0][0], best[0][1], best[1][0],
          best[1][1], best[2][0], best[2][1], best[3][0], best[3][1], tot[0], tot[1],
          bench_fnv (acc, sizeof (double) * n));
  if (threads > 1)
    printf ("  critical path (idle cores), best of %d: fill %.3f s, ranks %.3f s, mfd %.3f s, "
            "sums %.3f s; total %.3f s; parallel calls (last run): %d, %d, %d, %d\n",
            runs, best[0][2], best[1][2], best[2][2], best[3][2], tot[2], calls[1] - calls[0],
            calls[2] - calls[1], calls[3] - calls[2], calls[4] - calls[3]);
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

  if (size < 3 || runs < 0)
    {
      fprintf (stderr, "usage: bench_flow [size >= 3 [runs >= 0 [out.r32]]]\n");
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
  if (getenv ("BENCH_FLOW_THREADS"))
    {
      int only = atoi (getenv ("BENCH_FLOW_THREADS"));
      if (runs > 0 && only > 0)
        run (hm, size, only, runs);
    }
  else
    {
      if (runs > 0)
        run (hm, size, 1, runs);
      if (runs > 0 && threads > 1)
        run (hm, size, threads, runs);
    }
  free (hm);
  return 0;
}
