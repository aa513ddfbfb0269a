/* The result cache: node outputs by content key, under a memory budget,
 * least recently used evicted first. */
#ifndef TG_CACHE_H
#define TG_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tgraph/hash.h"
#include "tgraph/value.h"

typedef struct TgCache TgCache;

TgCache *tg__cache_new (size_t budget_bytes);
void tg__cache_free (TgCache *c);
void tg__cache_clear (TgCache *c);
size_t tg__cache_bytes (const TgCache *c);
size_t tg__cache_budget (const TgCache *c);

/* On a hit that holds every output in WANT (bit K: output K; outputs
 * past the 64th always count as wanted) fills OUTS with N new references
 * (NULL where the entry lacks an output) and returns true. */
bool tg__cache_get (TgCache *c, TgHash key, int n, uint64_t want, TgValue **outs);
/* Whether KEY's results are in the cache (no reference taken, no use counted). */
bool tg__cache_has (TgCache *c, TgHash key);
/* Stores N outputs under KEY (takes new references of its own); some may
 * be NULL (outputs no read wanted).  An entry already under KEY stays,
 * unless OUTS has an output it lacks: then OUTS takes its place. */
void tg__cache_put (TgCache *c, TgHash key, int n, TgValue *const *outs);

#endif
