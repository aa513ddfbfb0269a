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

bool
tg__cache_get (TgCache *c, TgHash key, int n, TgValue **outs)
{
  int i;

  pthread_mutex_lock (&c->lock);
  i = find (c, key);
  if (i < 0 || c->entries[i].n != n)
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
evict_until (TgCache *c, size_t room)
{
  while (c->n > 0 && c->bytes + room > c->budget)
    {
      int lru = 0;
      for (int i = 1; i < c->n; i++)
        if (c->entries[i].used < c->entries[lru].used)
          lru = i;
      c->bytes -= c->entries[lru].bytes;
      entry_clear (&c->entries[lru]);
      c->entries[lru] = c->entries[--c->n];
    }
}

void
tg__cache_put (TgCache *c, TgHash key, int n, TgValue *const *outs)
{
  size_t bytes = 0;
  Entry *e;

  for (int k = 0; k < n; k++)
    bytes += outs[k] ? tg_value_bytes (outs[k]) : 0;
  pthread_mutex_lock (&c->lock);
  if (bytes > c->budget || find (c, key) >= 0)
    {
      pthread_mutex_unlock (&c->lock);
      return;
    }
  evict_until (c, bytes);
  if (c->n == c->cap)
    {
      int cap = c->cap ? c->cap * 2 : 64;
      Entry *grown = realloc (c->entries, sizeof (Entry) * (size_t) cap);
      if (grown == NULL)
        {
          pthread_mutex_unlock (&c->lock);
          return;
        }
      c->entries = grown;
      c->cap = cap;
    }
  e = &c->entries[c->n];
  e->outs = malloc (sizeof (TgValue *) * (size_t) (n ? n : 1));
  if (e->outs == NULL)
    {
      pthread_mutex_unlock (&c->lock);
      return;
    }
  e->key = key;
  e->n = n;
  e->bytes = bytes;
  e->used = ++c->clock;
  for (int k = 0; k < n; k++)
    e->outs[k] = tg_value_ref (outs[k]);
  c->bytes += bytes;
  c->n++;
  pthread_mutex_unlock (&c->lock);
}
