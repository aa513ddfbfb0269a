/* The scalar reference of noise.fbm: one sample at a time, written the
 * plain way (floor for the lattice split, one full hash per lattice
 * corner, branches where the maths has cases).  It defines the values the
 * row kernel in noise_kernel.c must reproduce bit for bit; the tests and
 * the benchmark compare the two.  Keep every float expression in the same
 * order as the kernel's, or the bytes will differ.
 */
#include <math.h>

#include "noise_fbm.h"

/* Gradient tables, the classic scalar way (the kernel builds the same
 * vectors from the hash bits with bit operations).  Index bits: 1
 * negates x, 2 negates z, 4 swaps x and z, 8 picks the base angle of the
 * 16 directions; the 24 directions have 8 entries per base angle k. */
#define GX(h, c, s) (((h) & 1 ? -1.0f : 1.0f) * ((h) & 4 ? (s) : (c)))
#define GZ(h, c, s) (((h) & 2 ? -1.0f : 1.0f) * ((h) & 4 ? (c) : (s)))
#define G8(c, s)                                                                                 \
  { GX (0, c, s), GZ (0, c, s) }, { GX (1, c, s), GZ (1, c, s) }, { GX (2, c, s), GZ (2, c, s) }, \
  { GX (3, c, s), GZ (3, c, s) }, { GX (4, c, s), GZ (4, c, s) }, { GX (5, c, s), GZ (5, c, s) }, \
  { GX (6, c, s), GZ (6, c, s) }, { GX (7, c, s), GZ (7, c, s) }

static const float grad16_table[16][2] = {
  G8 (TG__G16_C0, TG__G16_S0),
  G8 (TG__G16_C1, TG__G16_S1),
};

static const float grad24_table[24][2] = {
  G8 (TG__G24_C0, TG__G24_S0),
  G8 (TG__G24_C1, TG__G24_S1),
  G8 (TG__G24_C2, TG__G24_S2),
};

static float
grad16 (uint32_t h, float dx, float dz)
{
  /* The top bits of the hash: 28 negates x, 29 z, 30 swaps, 31 the angle. */
  const float *g = grad16_table[h >> 28];

  return g[0] * dx + g[1] * dz;
}

static float
grad24 (uint32_t h, float dx, float dz)
{
  uint32_t k = (((h >> 20) & 255u) * 3u) >> 8; /* 86, 85, 85 of 256 */
  const float *g = grad24_table[k * 8 + ((h >> 28) & 7)];

  return g[0] * dx + g[1] * dz;
}

static float
perlin (uint32_t seed, uint32_t xi, uint32_t zi, float xf, float zf)
{
  float g00 = grad16 (tg__fbm_hash (seed, xi, zi), xf, zf);
  float g10 = grad16 (tg__fbm_hash (seed, xi + 1, zi), xf - 1.0f, zf);
  float g01 = grad16 (tg__fbm_hash (seed, xi, zi + 1), xf, zf - 1.0f);
  float g11 = grad16 (tg__fbm_hash (seed, xi + 1, zi + 1), xf - 1.0f, zf - 1.0f);
  float u = tg__fbm_fade (xf);
  float v = tg__fbm_fade (zf);
  float a = g00 + u * (g10 - g00);
  float b = g01 + u * (g11 - g01);

  return (a + v * (b - a)) * TG__PERLIN_NORM;
}

static float
value (uint32_t seed, uint32_t xi, uint32_t zi, float xf, float zf)
{
  float v00 = tg__fbm_value (tg__fbm_hash (seed, xi, zi));
  float v10 = tg__fbm_value (tg__fbm_hash (seed, xi + 1, zi));
  float v01 = tg__fbm_value (tg__fbm_hash (seed, xi, zi + 1));
  float v11 = tg__fbm_value (tg__fbm_hash (seed, xi + 1, zi + 1));
  float u = tg__fbm_fade (xf);
  float v = tg__fbm_fade (zf);
  float a = v00 + u * (v10 - v00);
  float b = v01 + u * (v11 - v01);

  return a + v * (b - a);
}

/* OpenSimplex2-style: (XI, ZI) and (XF, ZF) are the skewed cell and
 * fraction.  The three vertices of the containing triangle each add
 * (0.5 - r^2)^4 * (gradient . offset) where r < sqrt(0.5); no other vertex
 * is that close. */
static float
simplex (uint32_t seed, uint32_t xi, uint32_t zi, float xf, float zf)
{
  float t = (xf + zf) * TG__SIMPLEX_G2;
  float dx0 = xf - t, dz0 = zf - t;
  float dx1 = dx0 - TG__SIMPLEX_1_2G2, dz1 = dz0 - TG__SIMPLEX_1_2G2;
  float dx2, dz2, a;
  uint32_t h2;
  float n = 0.0f;

  a = 0.5f - dx0 * dx0 - dz0 * dz0;
  if (a > 0.0f)
    n += (a * a) * (a * a) * grad24 (tg__fbm_hash (seed, xi, zi), dx0, dz0);
  a = 0.5f - dx1 * dx1 - dz1 * dz1;
  if (a > 0.0f)
    n += (a * a) * (a * a) * grad24 (tg__fbm_hash (seed, xi + 1, zi + 1), dx1, dz1);
  if (xf > zf)
    {
      dx2 = dx0 - TG__SIMPLEX_1_G2;
      dz2 = dz0 + TG__SIMPLEX_G2;
      h2 = tg__fbm_hash (seed, xi + 1, zi);
    }
  else
    {
      dx2 = dx0 + TG__SIMPLEX_G2;
      dz2 = dz0 - TG__SIMPLEX_1_G2;
      h2 = tg__fbm_hash (seed, xi, zi + 1);
    }
  a = 0.5f - dx2 * dx2 - dz2 * dz2;
  if (a > 0.0f)
    n += (a * a) * (a * a) * grad24 (h2, dx2, dz2);
  return n * TG__SIMPLEX_NORM;
}

/* Cellular noise: one jittered feature point per cell, the nearest (F1)
 * and second nearest (F2).  The reference scans all 5x5 cells around the
 * sample, a superset of the kernel's 4x4, so comparing the two also
 * checks that the kernel's search misses nothing. */
static float
worley (uint32_t seed, int ret, uint32_t xi, uint32_t zi, float xf, float zf)
{
  float d1 = 1e30f, d2 = 1e30f, f1, f2;

  for (int k = -2; k <= 2; k++)
    for (int m = -2; m <= 2; m++)
      {
        uint32_t h = tg__fbm_hash (seed, xi + (uint32_t) k, zi + (uint32_t) m);
        float px = TG__WORLEY_LO + (float) (int32_t) (h & 0xffffu) * TG__WORLEY_STEP;
        float pz = TG__WORLEY_LO + (float) (int32_t) (h >> 16) * TG__WORLEY_STEP;
        float dx = ((float) k - xf) + px;
        float dz = ((float) m - zf) + pz;
        float d = dx * dx + dz * dz;

        tg__fbm_worley_keep (d, &d1, &d2);
      }
  f1 = sqrtf (d1);
  f2 = sqrtf (d2);
  if (ret == TG__FBM_F1)
    return f1 * TG__WORLEY_F1_NORM - 1.0f;
  if (ret == TG__FBM_F2)
    return f2 * TG__WORLEY_F2_NORM - 1.0f;
  return (f2 - f1) * TG__WORLEY_F2_NORM - 1.0f;
}

/* One octave of BASIS at position (QX, QZ) in metres, in [-1, 1]. */
static float
octave (const TgFbm *f, int basis, const TgFbmOctave *o, double qx, double qz)
{
  double px = qx * o->freq + o->off_x;
  double pz = qz * o->freq + o->off_z;
  uint32_t xi, zi;
  float xf, zf;

  if (basis == TG__FBM_SIMPLEX)
    {
      double s = (px + pz) * TG__SIMPLEX_F2;

      tg__fbm_split (px + s, &xi, &xf);
      tg__fbm_split (pz + s, &zi, &zf);
      return simplex (o->seed, xi, zi, xf, zf);
    }
  tg__fbm_split (px, &xi, &xf);
  tg__fbm_split (pz, &zi, &zf);
  switch (basis)
    {
    case TG__FBM_VALUE:
      return value (o->seed, xi, zi, xf, zf);
    case TG__FBM_WORLEY:
      return worley (o->seed, f->worley_return, xi, zi, xf, zf);
    default:
      return perlin (o->seed, xi, zi, xf, zf);
    }
}

float
tg__fbm_reference_sample (const TgFbm *f, double x, double z)
{
  double qx = x + f->offset_x;
  double qz = z + f->offset_z;
  float acc = 0.0f, w = 1.0f, out;

  if (f->warp)
    {
      float wx = 0.0f, wz = 0.0f;

      for (int i = 0; i < TG__FBM_WARP_OCTAVES; i++)
        {
          wx += f->warp_oct[0][i].amp * octave (f, TG__FBM_PERLIN, &f->warp_oct[0][i], qx, qz);
          wz += f->warp_oct[1][i].amp * octave (f, TG__FBM_PERLIN, &f->warp_oct[1][i], qx, qz);
        }
      qx = qx + f->warp_m * (double) (wx * f->warp_norm);
      qz = qz + f->warp_m * (double) (wz * f->warp_norm);
    }

  for (int i = 0; i < f->n_octaves; i++)
    {
      const TgFbmOctave *o = &f->oct[i];

      acc = tg__fbm_octave_add (f->mode, acc, o->amp, octave (f, f->basis, o, qx, qz), &w);
    }

  out = acc * f->out_scale + f->out_bias;
  if (out < 0.0f)
    out = 0.0f;
  if (out > 1.0f)
    out = 1.0f;
  return out;
}
