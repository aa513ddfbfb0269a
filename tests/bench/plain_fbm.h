/* The honest baseline for fBm: the loop anyone would write from a
 * textbook.  Ken Perlin's improved noise ("Improving Noise", SIGGRAPH
 * 2002) in 2D: a shuffled 256-entry permutation table, gradients
 * (±1, ±1) in his select-and-negate form, a fast floor, the quintic fade
 * and bilinear blending, summed over octaves in double-precision
 * coordinates.  Scalar, one sample at a time, compiled with the same
 * flags as the engine; no tricks either way.  Benchmarks only
 * (tests/bench and tests/bench/peers).
 */
#ifndef TG_BENCH_PLAIN_FBM_H
#define TG_BENCH_PLAIN_FBM_H

#include <math.h>
#include <stdint.h>

typedef struct
{
  int perm[512];
} PlainPerlin;

static inline void
plain_perlin_init (PlainPerlin *p, uint32_t seed)
{
  uint32_t s = seed * 2654435761u + 1u;

  for (int i = 0; i < 256; i++)
    p->perm[i] = i;
  for (int i = 255; i > 0; i--)
    {
      int j, t;
      s = s * 1664525u + 1013904223u;
      j = (int) ((s >> 8) % (uint32_t) (i + 1));
      t = p->perm[i];
      p->perm[i] = p->perm[j];
      p->perm[j] = t;
    }
  for (int i = 0; i < 256; i++)
    p->perm[256 + i] = p->perm[i];
}

static inline double
plain_fade (double t)
{
  return t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
}

static inline double
plain_lerp (double t, double a, double b)
{
  return a + t * (b - a);
}

/* Perlin's own select-and-negate form (cmov, not a jump table). */
static inline double
plain_grad (int hash, double x, double y)
{
  double u = hash & 4 ? y : x, v = hash & 4 ? x : y;

  return (hash & 1 ? -u : u) + (hash & 2 ? -v : v);
}

static inline double
plain_perlin (const PlainPerlin *p, double x, double y)
{
  /* Gustavson's fastfloor ("Simplex noise demystified"), as such loops do. */
  int ix = (int) x - (x < (int) x), iy = (int) y - (y < (int) y);
  int X = ix & 255, Y = iy & 255;
  double fx = ix, fy = iy;
  double u, v;
  int a, b;

  x -= fx;
  y -= fy;
  u = plain_fade (x);
  v = plain_fade (y);
  a = p->perm[X] + Y;
  b = p->perm[X + 1] + Y;
  return plain_lerp (v,
                     plain_lerp (u, plain_grad (p->perm[a], x, y),
                                 plain_grad (p->perm[b], x - 1.0, y)),
                     plain_lerp (u, plain_grad (p->perm[a + 1], x, y - 1.0),
                                 plain_grad (p->perm[b + 1], x - 1.0, y - 1.0)));
}

/* fBm of OCTAVES octaves at world (X, Z) with a first wavelength SCALE_M. */
static inline float
plain_fbm (const PlainPerlin *p, double x, double z, double scale_m, int octaves)
{
  double sum = 0.0, amp = 0.5, freq = 1.0 / scale_m;

  for (int o = 0; o < octaves; o++)
    {
      sum += amp * plain_perlin (p, x * freq + 17.0 * o, z * freq + 31.0 * o);
      amp *= 0.5;
      freq *= 2.0;
    }
  return (float) (0.5 + 0.5 * sum);
}

#endif
