/* The engine's thread pool: one data-parallel job at a time, split into
 * chunks that workers (and the calling thread) take in turn.  Chunks
 * write disjoint outputs, so the result does not depend on which thread
 * ran which chunk. */
#ifndef TG_POOL_H
#define TG_POOL_H

#include <stdbool.h>

typedef struct TgPool TgPool;

typedef struct
{
  void (*fn) (void *user, int begin, int end);
  void *user;
  /* Polled before each chunk; when it returns true no new chunk starts. */
  bool (*should_stop) (void *hook_user);
  /* Called after each chunk with the number of items done so far. */
  void (*progress) (void *hook_user, int done, int total);
  void *hook_user;
} TgPoolJob;

TgPool *tg__pool_new (int threads);
void tg__pool_free (TgPool *p);
int tg__pool_threads (const TgPool *p);

/* Runs JOB over [0, N) in chunks of GRAIN; returns when every started
 * chunk has finished.  Returns true when all N items ran. */
bool tg__pool_run (TgPool *p, int n, int grain, const TgPoolJob *job);

int tg__cpu_count (void);

#endif
