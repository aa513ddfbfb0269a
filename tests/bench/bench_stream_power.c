/* Benchmark of erosion.stream_power's solver (tg__sp_run) on an fBm
 * heightmap of an 8 km world: time per step, CPU and wall, on one thread
 * and on all of them, at several sizes so the growth with the number of
 * samples shows (the method is O(n) a step: 4x the samples should cost
 * about 4x the time), with a hash of the result so that a change that
 * alters the bytes shows.  Default parameters of the node, dt 10 kyr.
 *
 * On a shared machine the wall time says little, so each run also prints
 * its critical path: the CPU time outside the parallel calls plus, for
 * each call, its busiest thread's CPU time, what the step would take on
 * idle cores (with 1 thread it is the CPU time).
 *
 * And a breakdown of a step by phase (the solver's phase hook): each
 * thread's CPU time between its marks, added up over the threads, and the
 * wall time of the main thread between its marks (a parallel call's
 * wait for its last thread counted in the phase the call ran), and the
 * phase's share of the critical path: the main thread's CPU time between
 * its marks outside the parallel calls, plus, for each call, its busiest
 * thread's CPU time between that thread's marks (its time after its last
 * mark in the call counted in the main thread's next mark).
 *
 *   bench_stream_power [steps [size...]]     default 4 steps, 1025 2049 4097
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

#include "erosion_stream_power.h"
#include "../common/tgclock.h"
#include "bench_pool.h"

static void
die (const char *what, const TgError *err)
{
  fprintf (stderr, "bench_stream_power: %s: %s\n", what, err ? err->message : "failed");
  exit (1);
}

/* The input: the fBm node's height over SIZE^2 of an 8 km world, 800 m. */
static double *
make_height (int size)
{
  float *hm = bench_fbm_height ("bench_stream_power", size);
  double *z = malloc (sizeof (double) * (size_t) size * size);

  if (!z)
    die ("heightmap", NULL);
  for (size_t i = 0; i < (size_t) size * size; i++)
    z[i] = (double) hm[i] * 800.0;
  free (hm);
  return z;
}

/* The parallel hook of bench_pool, timing each thread's CPU: CPU adds
 * up every call's threads, CRIT every call's busiest thread. */
typedef struct
{
  int threads;
  double cpu, crit;
  pthread_mutex_t mu;
  double phase_cpu[TG_SP_PHASES], phase_wall[TG_SP_PHASES];
  double wall_mark; /* the main thread's last mark */
  int last_phase;   /* the phase marked last (by any thread) */
  pthread_t main;
  /* The critical path by phase; calls' time not yet given a phase; the
   * main thread's CPU in calls since its last mark outside them. */
  double phase_crit[TG_SP_PHASES], pending_crit, main_in_calls;
  double call_start; /* the main thread's CPU clock when the call began */
} Timed;

static const char *const phase_names[TG_SP_PHASES] = { "receivers", "basins", "passes", "stack",
                                                       "area", "incision", "deposition", "diffusion" };

/* Each thread's CPU clock at its last mark (a thread starts at 0). */
static _Thread_local double thread_mark;

typedef struct
{
  BenchPool *pool;
  double cpu;
  double phase[TG_SP_PHASES]; /* CPU between its marks in the call */
} TimedWorker;

/* The worker a thread is in a call as (NULL outside calls). */
static _Thread_local TimedWorker *thread_worker;

static void
timed_phase (void *ctx, int phase)
{
  Timed *t = ctx;
  double c = bench_thread_cpu_s ();

  bool main = pthread_equal (pthread_self (), t->main);

  pthread_mutex_lock (&t->mu);
  t->phase_cpu[phase] += c - thread_mark;
  t->last_phase = phase;
  if (main)
    {
      double w = tg_wall_s ();
      t->phase_wall[phase] += w - t->wall_mark;
      t->wall_mark = w;
    }
  if (thread_worker)
    {
      /* In a call: the part since the call began is the call's; on the
       * main thread the rest, before it, ran alone. */
      double from = main && t->call_start > thread_mark ? t->call_start : thread_mark;
      thread_worker->phase[phase] += c - from;
      if (main)
        {
          t->phase_crit[phase] += from - thread_mark - t->main_in_calls + t->pending_crit;
          t->main_in_calls = t->pending_crit = 0.0;
        }
    }
  else if (main)
    {
      t->phase_crit[phase] += c - thread_mark - t->main_in_calls + t->pending_crit;
      t->main_in_calls = t->pending_crit = 0.0;
    }
  pthread_mutex_unlock (&t->mu);
  thread_mark = c;
}

static void *
timed_worker (void *arg)
{
  TimedWorker *w = arg;
  double t0 = bench_thread_cpu_s ();

  thread_worker = w;
  bench_pool_worker (w->pool);
  thread_worker = NULL;
  w->cpu = bench_thread_cpu_s () - t0;
  return NULL;
}

static int
timed_parallel (void *ctx, int n, int grain, void (*fn) (void *, int, int), void *user)
{
  Timed *t = ctx;
  BenchPool p = { fn, user, n, grain, 0, t->threads, PTHREAD_MUTEX_INITIALIZER };
  TimedWorker wk[64];
  int nt = t->threads < 64 ? t->threads : 64, busiest = 0;
  double most = 0.0, marked = 0.0;

  for (int i = 0; i < nt; i++)
    wk[i] = (TimedWorker) { &p, 0.0, { 0 } };
  t->last_phase = -1;
  t->call_start = bench_thread_cpu_s ();
  bench_spawn (timed_worker, wk, sizeof wk[0], nt);
  /* What the main thread did in the call since its last mark is not its
   * own serial time. */
  t->main_in_calls += bench_thread_cpu_s () - (thread_mark > t->call_start ? thread_mark : t->call_start);
  if (t->last_phase >= 0)
    {
      /* The wait for the last thread, in the call's phase. */
      double w = tg_wall_s ();
      t->phase_wall[t->last_phase] += w - t->wall_mark;
      t->wall_mark = w;
    }
  for (int i = 0; i < nt; i++)
    {
      t->cpu += wk[i].cpu;
      if (wk[i].cpu > most)
        most = wk[i].cpu, busiest = i;
    }
  t->crit += most;
  for (int k = 0; k < TG_SP_PHASES; k++)
    {
      t->phase_crit[k] += wk[busiest].phase[k];
      marked += wk[busiest].phase[k];
    }
  t->pending_crit += most - marked;
  return 0;
}

static double
run (const double *z0, int size, int threads, int steps, double prev_ms)
{
  size_t n = (size_t) size * size;
  double *z = malloc (sizeof (double) * n), c0, t0, cpu, wall;
  TgSpParams p = { .duration_yr = 10000.0 * steps, .dt_yr = 10000.0, .uplift_m_per_yr = 0.0005,
                   .erodibility = 2e-5, .m = 0.45, .n = 1.0, .diffusivity = 0.01,
                   .deposition = 1.0, .channel_area = 10000.0 };
  Timed timed = { .threads = threads, .mu = PTHREAD_MUTEX_INITIALIZER, .main = pthread_self () };
  TgSpOpts o = { timed_parallel, &timed, NULL, timed_phase };
  TgSpStats st = { 0 };
  TgSpOut out = { .stats = &st };

  if (!z)
    die ("memory", NULL);
  memcpy (z, z0, sizeof (double) * n);
  c0 = tg_cpu_s ();
  t0 = tg_wall_s ();
  thread_mark = bench_thread_cpu_s ();
  timed.wall_mark = t0;
  if (tg__sp_run (&o, &p, size, size, 8192.0 / (size - 1), z, NULL, &out) != 0)
    die ("run", NULL);
  cpu = tg_cpu_s () - c0;
  wall = tg_wall_s () - t0;
  printf ("stream_power %d^2, %d thread%s, %d steps: %.1f ms CPU / %.1f ms wall a step "
          "(%.2f steps/s wall), critical path %.1f ms a step (%.2f steps/s on idle cores)",
          size, threads, threads == 1 ? "" : "s", st.steps, cpu / st.steps * 1e3,
          wall / st.steps * 1e3, st.steps / wall,
          (cpu - timed.cpu + timed.crit) / st.steps * 1e3, st.steps / (cpu - timed.cpu + timed.crit));
  if (prev_ms > 0.0)
    printf (", %.2fx the CPU of the size before", cpu / st.steps * 1e3 / prev_ms);
  printf ("; z fnv %016" PRIx64 "\n", bench_fnv (z, sizeof (double) * n));
  printf ("  a step, ms CPU / wall / critical path:");
  for (int k = 0; k < TG_SP_PHASES; k++)
    printf (" %s %.1f / %.1f / %.1f%s", phase_names[k], timed.phase_cpu[k] / st.steps * 1e3,
            timed.phase_wall[k] / st.steps * 1e3, timed.phase_crit[k] / st.steps * 1e3,
            k < TG_SP_PHASES - 1 ? "," : "\n");
  fflush (stdout);
  free (z);
  return cpu / st.steps * 1e3;
}

int
main (int argc, char **argv)
{
  int steps = argc > 1 ? atoi (argv[1]) : 4;
  int threads = (int) sysconf (_SC_NPROCESSORS_ONLN);
  int sizes[16] = { 1025, 2049, 4097 }, ns = 3;
  double prev[2] = { 0.0, 0.0 };

  if (argc > 2)
    for (ns = 0; ns + 2 < argc && ns < 16; ns++)
      sizes[ns] = atoi (argv[ns + 2]);
  if (steps < 1)
    {
      fprintf (stderr, "usage: bench_stream_power [steps >= 1 [size...]]\n");
      return 2;
    }
  for (int k = 0; k < ns; k++)
    {
      double *z;
      if (sizes[k] < 3)
        {
          fprintf (stderr, "bench_stream_power: size %d < 3\n", sizes[k]);
          return 2;
        }
      z = make_height (sizes[k]);
      prev[0] = run (z, sizes[k], 1, steps, prev[0]);
      if (threads > 1)
        prev[1] = run (z, sizes[k], threads, steps, prev[1]);
      free (z);
    }
  return 0;
}
