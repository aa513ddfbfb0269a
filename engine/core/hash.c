/* The 128-bit streaming hash behind cache keys.  Two independent 64-bit
 * lanes over 8-byte words; not cryptographic, but a collision between two
 * different graphs' keys is out of reach in practice. */
#include <string.h>

#include "tgraph/hash.h"

void
tg_hasher_init (TgHasher *h)
{
  h->a = 0x6a09e667f3bcc908ULL;
  h->b = 0xbb67ae8584caa73bULL;
  h->n = 0;
}

static void
hasher_word (TgHasher *h, uint64_t w)
{
  h->a = tg_mix64 (h->a ^ w) + 0x9e3779b97f4a7c15ULL;
  h->b = tg_mix64 (h->b + w * 0xc2b2ae3d27d4eb4fULL) ^ (h->b >> 17);
  h->n++;
}

void
tg_hasher_bytes (TgHasher *h, const void *data, size_t n)
{
  const unsigned char *p = data;
  uint64_t w;

  hasher_word (h, (uint64_t) n);
  while (n >= 8)
    {
      memcpy (&w, p, 8);
      hasher_word (h, w);
      p += 8;
      n -= 8;
    }
  if (n)
    {
      w = 0;
      memcpy (&w, p, n);
      hasher_word (h, w ^ ((uint64_t) n << 56));
    }
}

void
tg_hasher_u64 (TgHasher *h, uint64_t v)
{
  hasher_word (h, v);
}

void
tg_hasher_double (TgHasher *h, double v)
{
  uint64_t w;

  if (v == 0.0)
    v = 0.0; /* -0.0 and 0.0 give the same results everywhere we use them */
  memcpy (&w, &v, 8);
  hasher_word (h, w);
}

void
tg_hasher_str (TgHasher *h, const char *s)
{
  if (s == NULL)
    {
      hasher_word (h, 0xffffffffffffffffULL);
      return;
    }
  tg_hasher_bytes (h, s, strlen (s));
}

TgHash
tg_hasher_finish (const TgHasher *h)
{
  TgHash r;

  r.a = tg_mix64 (h->a ^ tg_mix64 (h->n));
  r.b = tg_mix64 (h->b ^ r.a);
  return r;
}
