/* What the erosion benchmarks share: their input (the fBm node's height),
 * a plain chunked runner on NT threads (the engine's parallel hook, without
 * the engine's pool) and an FNV-1a hash to print beside each figure, so
 * runs that must agree can be seen to. */
#pragma once

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tgraph/tgraph.h>

/* The fBm node's normalised height over SIZE^2 of an 8 km world (800 m
 * high); PROG names the benchmark in an error, which ends the run. */
static inline float *
bench_fbm_height (const char *prog, int size)
{
  TgGraph *g = tg_graph_new ();
  TgWorld *w = tg_graph_world (g);
  TgError err = { 0 };
  TgEngineOptions o = { .threads = 0, .cache_bytes = 0 };
  TgEngine *e = tg_engine_new (&o);
  TgRegion full;
  TgValue *v = NULL;
  float *hm = malloc (sizeof (float) * (size_t) size * size);

  w->size_x = w->size_z = 8192.0;
  w->height_m = 800.0;
  tg_region_for_world (&full, w, size);
  if (tg_graph_add_node (g, "base", "noise.fbm", &err) < 0
      || tg_engine_pull (e, g, 0, 0, &full, NULL, &v, NULL, &err) != 0 || !v->data || !hm)
    {
      fprintf (stderr, "%s: the input heightmap: %s\n", prog, err.message[0] ? err.message : "failed");
      exit (1);
    }
  memcpy (hm, v->data, sizeof (float) * (size_t) size * size);
  tg_value_unref (v);
  tg_engine_free (e);
  tg_graph_free (g);
  return hm;
}

/* Runs WORKER on NT threads (at most 64), the calling thread one of
 * them: thread I gets ARGS + I * SIZE; returns when all are done. */
static inline void
bench_spawn (void *(*worker) (void *), void *args, size_t size, int nt)
{
  pthread_t th[64];

  nt = nt < 64 ? nt : 64;
  for (int i = 1; i < nt; i++)
    pthread_create (&th[i], NULL, worker, (char *) args + (size_t) i * size);
  worker (args);
  for (int i = 1; i < nt; i++)
    pthread_join (th[i], NULL);
}

/* The calling thread's CPU time in seconds. */
static inline double
bench_thread_cpu_s (void)
{
  struct timespec t;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

typedef struct
{
  void (*fn) (void *, int, int);
  void *user;
  int n, grain, next, nt;
  pthread_mutex_t mu;
} BenchPool;

static inline void *
bench_pool_worker (void *arg)
{
  BenchPool *p = arg;

  for (;;)
    {
      int b;
      pthread_mutex_lock (&p->mu);
      b = p->next;
      p->next += p->grain;
      pthread_mutex_unlock (&p->mu);
      if (b >= p->n)
        return NULL;
      p->fn (p->user, b, b + p->grain < p->n ? b + p->grain : p->n);
    }
}

/* The parallel hook: CTX points at the thread count. */
static inline int
bench_pool_parallel (void *ctx, int n, int grain, void (*fn) (void *, int, int), void *user)
{
  BenchPool p = { fn, user, n, grain, 0, *(int *) ctx, PTHREAD_MUTEX_INITIALIZER };

  bench_spawn (bench_pool_worker, &p, 0, p.nt);
  return 0;
}

static inline uint64_t
bench_fnv (const void *data, size_t size)
{
  const unsigned char *b = data;
  uint64_t hsh = 1469598103934665603ull;

  for (size_t i = 0; i < size; i++)
    hsh = (hsh ^ b[i]) * 1099511628211ull;
  return hsh;
}
