/* What the erosion benchmarks share: a plain chunked runner on NT threads
 * (the engine's parallel hook, without the engine's pool) and an FNV-1a
 * hash to print beside each figure, so runs that must agree can be seen to. */
#pragma once

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

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
  pthread_t th[64];

  for (int i = 1; i < p.nt && i < 64; i++)
    pthread_create (&th[i], NULL, bench_pool_worker, &p);
  bench_pool_worker (&p);
  for (int i = 1; i < p.nt && i < 64; i++)
    pthread_join (th[i], NULL);
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
