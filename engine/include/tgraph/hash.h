/* Hashing: counter-based random numbers for nodes, and content keys.
 *
 * Every random choice in the engine is a pure function of (seed,
 * coordinates or index), never shared mutable state, so any thread may
 * compute any sample and the result stays the same.
 */
#ifndef TGRAPH_HASH_H
#define TGRAPH_HASH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* SplitMix64's finaliser: a bijective 64-bit mix. */
static inline uint64_t
tg_mix64 (uint64_t x)
{
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/* A 32-bit mix (lowbias32, Wellons), fast enough for per-sample use. */
static inline uint32_t
tg_mix32 (uint32_t x)
{
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

static inline uint32_t
tg_hash2 (uint32_t seed, int32_t x, int32_t y)
{
  return tg_mix32 (tg_mix32 (seed ^ (uint32_t) x * 0x9E3779B1U) ^ (uint32_t) y * 0x85EBCA77U);
}

static inline uint32_t
tg_hash3 (uint32_t seed, int32_t x, int32_t y, int32_t z)
{
  return tg_mix32 (tg_hash2 (seed, x, y) ^ (uint32_t) z * 0xC2B2AE3DU);
}

/* A uniform float in [0, 1) from the top 24 bits of H. */
static inline float
tg_hash_unit (uint32_t h)
{
  return (float) (h >> 8) * (1.0f / 16777216.0f);
}

/* A 128-bit streaming hash for content keys. */
typedef struct
{
  uint64_t a, b;
} TgHash;

typedef struct
{
  uint64_t a, b;
  uint64_t n;
} TgHasher;

void tg_hasher_init (TgHasher *h);
void tg_hasher_bytes (TgHasher *h, const void *data, size_t n);
void tg_hasher_u64 (TgHasher *h, uint64_t v);
void tg_hasher_double (TgHasher *h, double v);
void tg_hasher_str (TgHasher *h, const char *s); /* NULL and "" differ */
TgHash tg_hasher_finish (const TgHasher *h);

#ifdef __cplusplus
}
#endif
#endif
