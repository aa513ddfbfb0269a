/* The result cache.  A few hundred entries at most (one per node and
 * region), so a flat array searched linearly is both simple and fast
 * enough; eviction drops the least recently used entries until the
 * budget holds. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"

typedef struct
{
  TgHash key;
  int n;
  TgValue **outs;
  size_t bytes;
  uint64_t used;
} Entry;

struct TgCache
{
  pthread_mutex_t lock;
  Entry *entries;
  int n, cap;
  size_t bytes, budget;
  uint64_t clock;
};

TgCache *
tg__cache_new (size_t budget_bytes)
{
  TgCache *c = calloc (1, sizeof *c);

  if (c == NULL)
    return NULL;
  pthread_mutex_init (&c->lock, NULL);
  c->budget = budget_bytes;
  return c;
}

static void
entry_clear (Entry *e)
{
  for (int i = 0; i < e->n; i++)
    tg_value_unref (e->outs[i]);
  free (e->outs);
}

void
tg__cache_clear (TgCache *c)
{
  pthread_mutex_lock (&c->lock);
  for (int i = 0; i < c->n; i++)
    entry_clear (&c->entries[i]);
  c->n = 0;
  c->bytes = 0;
  pthread_mutex_unlock (&c->lock);
}

void
tg__cache_free (TgCache *c)
{
  if (c == NULL)
    return;
  tg__cache_clear (c);
  free (c->entries);
  pthread_mutex_destroy (&c->lock);
  free (c);
}

size_t
tg__cache_bytes (const TgCache *c)
{
  return c->bytes;
}

static int
find (const TgCache *c, TgHash key)
{
  for (int i = 0; i < c->n; i++)
    if (c->entries[i].key.a == key.a && c->entries[i].key.b == key.b)
      return i;
  return -1;
}

size_t
tg__cache_budget (const TgCache *c)
{
  return c->budget;
}

bool
tg__cache_has (TgCache *c, TgHash key)
{
  bool has;

  pthread_mutex_lock (&c->lock);
  has = find (c, key) >= 0;
  pthread_mutex_unlock (&c->lock);
  return has;
}

/* Whether E holds every output in WANT. */
static bool
entry_holds (const Entry *e, uint64_t want)
{
  for (int k = 0; k < e->n; k++)
    if (e->outs[k] == NULL && (k >= 64 || (want >> k) & 1))
      return false;
  return true;
}

bool
tg__cache_get (TgCache *c, TgHash key, int n, uint64_t want, TgValue **outs)
{
  int i;

  pthread_mutex_lock (&c->lock);
  i = find (c, key);
  if (i < 0 || c->entries[i].n != n || !entry_holds (&c->entries[i], want))
    {
      pthread_mutex_unlock (&c->lock);
      return false;
    }
  c->entries[i].used = ++c->clock;
  for (int k = 0; k < n; k++)
    outs[k] = tg_value_ref (c->entries[i].outs[k]);
  pthread_mutex_unlock (&c->lock);
  return true;
}

static void
remove_entry (TgCache *c, int i)
{
  c->bytes -= c->entries[i].bytes;
  entry_clear (&c->entries[i]);
  c->entries[i] = c->entries[--c->n];
}

static void
evict_until (TgCache *c, size_t room)
{
  while (c->n > 0 && c->bytes + room > c->budget)
    {
      int lru = 0;
      for (int i = 1; i < c->n; i++)
        if (c->entries[i].used < c->entries[lru].used)
          lru = i;
      remove_entry (c, lru);
    }
}

void
tg__cache_put (TgCache *c, TgHash key, int n, TgValue *const *outs_in)
{
  size_t bytes = 0;
  uint64_t has = 0;
  TgValue **outs;
  Entry *e;
  int old;

  /* Room for the outputs merged with an old entry's (below). */
  outs = malloc (sizeof (TgValue *) * (size_t) (n ? n : 1));
  if (outs == NULL)
    return;
  memcpy (outs, outs_in, sizeof (TgValue *) * (size_t) n);
  for (int k = 0; k < n; k++)
    if (outs[k] && k < 64)
      has |= UINT64_C (1) << k;
  pthread_mutex_lock (&c->lock);
  old = find (c, key);
  if (old >= 0 && (c->entries[old].n != n || entry_holds (&c->entries[old], has)))
    {
      pthread_mutex_unlock (&c->lock);
      free (outs);
      return;
    }
  /* The old entry lacks an output this one has (a node that skipped an
   * output nobody read, run again for it): one entry with the outputs of
   * both, which are the same results. */
  for (int k = 0; old >= 0 && k < n; k++)
    if (outs[k] == NULL)
      outs[k] = c->entries[old].outs[k];
  for (int k = 0; k < n; k++)
    bytes += outs[k] ? tg_value_bytes (outs[k]) : 0;
  if (bytes > c->budget)
    {
      pthread_mutex_unlock (&c->lock);
      free (outs);
      return;
    }
  /* The entry's own references, taken before the old entry lets go of
   * those it shares. */
  for (int k = 0; k < n; k++)
    tg_value_ref (outs[k]);
  if (old >= 0)
    remove_entry (c, old);
  evict_until (c, bytes);
  if (c->n == c->cap)
    {
      int cap = c->cap ? c->cap * 2 : 64;
      Entry *grown = realloc (c->entries, sizeof (Entry) * (size_t) cap);
      if (grown == NULL)
        {
          pthread_mutex_unlock (&c->lock);
          for (int k = 0; k < n; k++)
            tg_value_unref (outs[k]);
          free (outs);
          return;
        }
      c->entries = grown;
      c->cap = cap;
    }
  e = &c->entries[c->n];
  e->outs = outs;
  e->key = key;
  e->n = n;
  e->bytes = bytes;
  e->used = ++c->clock;
  c->bytes += bytes;
  c->n++;
  pthread_mutex_unlock (&c->lock);
}
