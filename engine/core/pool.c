/* A small pthread pool for data-parallel loops. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "pool.h"

struct TgPool
{
  int n_threads; /* including the caller */
  pthread_t *threads;
  pthread_mutex_t lock;
  pthread_cond_t wake, idle;
  unsigned long generation;
  bool quit;
  int busy; /* workers still on the current job */
  /* the current job */
  const TgPoolJob *job;
  int n, grain;
  atomic_int next, done;
  atomic_bool stopped;
};

int
tg__cpu_count (void)
{
  long n = sysconf (_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int) n : 1;
}

static void
work (TgPool *p)
{
  const TgPoolJob *job = p->job;

  for (;;)
    {
      int begin, end, done;
      if (atomic_load_explicit (&p->stopped, memory_order_relaxed))
        break;
      if (job->should_stop && job->should_stop (job->hook_user))
        {
          atomic_store (&p->stopped, true);
          break;
        }
      begin = atomic_fetch_add (&p->next, p->grain);
      if (begin >= p->n)
        break;
      end = begin + p->grain < p->n ? begin + p->grain : p->n;
      job->fn (job->user, begin, end);
      done = atomic_fetch_add (&p->done, end - begin) + (end - begin);
      if (job->progress)
        job->progress (job->hook_user, done, p->n);
    }
}

static void *
worker_main (void *data)
{
  TgPool *p = data;
  unsigned long seen = 0;

  pthread_mutex_lock (&p->lock);
  for (;;)
    {
      while (!p->quit && p->generation == seen)
        pthread_cond_wait (&p->wake, &p->lock);
      if (p->quit)
        break;
      seen = p->generation;
      pthread_mutex_unlock (&p->lock);
      work (p);
      pthread_mutex_lock (&p->lock);
      if (--p->busy == 0)
        pthread_cond_signal (&p->idle);
    }
  pthread_mutex_unlock (&p->lock);
  return NULL;
}

TgPool *
tg__pool_new (int threads)
{
  TgPool *p = calloc (1, sizeof *p);

  if (p == NULL)
    return NULL;
  if (threads <= 0)
    threads = tg__cpu_count ();
  p->n_threads = threads;
  pthread_mutex_init (&p->lock, NULL);
  pthread_cond_init (&p->wake, NULL);
  pthread_cond_init (&p->idle, NULL);
  if (threads > 1)
    {
      p->threads = calloc ((size_t) threads - 1, sizeof (pthread_t));
      if (p->threads == NULL)
        {
          tg__pool_free (p);
          return NULL;
        }
      for (int i = 0; i < threads - 1; i++)
        if (pthread_create (&p->threads[i], NULL, worker_main, p) != 0)
          {
            /* Run with the threads we got. */
            p->n_threads = i + 1;
            break;
          }
    }
  return p;
}

void
tg__pool_free (TgPool *p)
{
  if (p == NULL)
    return;
  pthread_mutex_lock (&p->lock);
  p->quit = true;
  pthread_cond_broadcast (&p->wake);
  pthread_mutex_unlock (&p->lock);
  for (int i = 0; i < p->n_threads - 1 && p->threads; i++)
    pthread_join (p->threads[i], NULL);
  free (p->threads);
  pthread_mutex_destroy (&p->lock);
  pthread_cond_destroy (&p->wake);
  pthread_cond_destroy (&p->idle);
  free (p);
}

int
tg__pool_threads (const TgPool *p)
{
  return p->n_threads;
}

bool
tg__pool_run (TgPool *p, int n, int grain, const TgPoolJob *job)
{
  int chunks;

  if (n <= 0)
    return true;
  if (grain < 1)
    grain = 1;
  p->job = job;
  p->n = n;
  p->grain = grain;
  atomic_store (&p->next, 0);
  atomic_store (&p->done, 0);
  atomic_store (&p->stopped, false);
  chunks = (n + grain - 1) / grain;
  if (p->n_threads > 1 && chunks > 1)
    {
      pthread_mutex_lock (&p->lock);
      p->busy = p->n_threads - 1;
      p->generation++;
      pthread_cond_broadcast (&p->wake);
      pthread_mutex_unlock (&p->lock);
      work (p);
      pthread_mutex_lock (&p->lock);
      while (p->busy > 0)
        pthread_cond_wait (&p->idle, &p->lock);
      pthread_mutex_unlock (&p->lock);
    }
  else
    work (p);
  return atomic_load (&p->done) == n;
}
