/* The row kernel of noise.fbm: the same values as the scalar reference
 * (noise_ref.c), bit for bit, computed in blocks of BLK samples.
 *
 * Each step is a loop over contiguous arrays with a constant trip count,
 * so GCC's -O2 vectoriser (the "very cheap" cost model, which wants no
 * epilogue) takes it whole: the lattice split (in double, floor by
 * truncation and a sign-bit fix instead of a libm call), the basis
 * (hashing, and gradients from bit operations instead of tables and
 * branches), then the octave sum.  Partial blocks are padded and the
 * padding thrown away.  The same source is compiled for the baseline ISA,
 * AVX2 and AVX-512, picked at run time; all do IEEE float operations in
 * the same order as the reference, so the bytes do not depend on the
 * machine.  That relies on the project's -ffp-contract=off: AVX-512F
 * implies FMA, and a contracted a * b + c rounds differently.  One case
 * has intrinsics of its own: Perlin along a row on AVX-512
 * (perlin_row_avx512), where a block's few cells are hashed once each
 * and every sample permutes its gradients out of registers.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "noise_fbm.h"

/* 64 samples: a multiple of every vector width, and at most 63 wasted
 * samples at the end of a row (under 6% of a 1025-sample row). */
#define BLK 64

typedef struct
{
  double qx[BLK], qz[BLK]; /* sampling positions, metres */
  uint32_t xi[BLK], zi[BLK];
  float xf[BLK], zf[BLK];
  float n[BLK];           /* this octave's noise, [-1, 1] */
  float d1[BLK], d2[BLK]; /* Worley: squared distances to the two nearest points */
  float acc[BLK];         /* octave sum, then the output */
  float w[BLK];           /* ridged: weight from the previous octave */
  float wx[BLK], wz[BLK]; /* warp displacement fields */
} Block;

/* A when M is all ones, B when M is 0, without a branch. */
TG__FBM_KERNEL float
select_f (uint32_t m, float a, float b)
{
  uint32_t ua, ub, r;
  float f;

  memcpy (&ua, &a, sizeof ua);
  memcpy (&ub, &b, sizeof ub);
  r = ub ^ ((ua ^ ub) & m);
  memcpy (&f, &r, sizeof f);
  return f;
}

/* P = Q * FREQ + OFF split into cells CI and fractions CF. */
TG__FBM_KERNEL void
lattice_1d (const double *restrict q, double freq, double off, uint32_t *restrict ci,
            float *restrict cf, bool fast)
{
  if (fast)
    for (int i = 0; i < BLK; i++)
      tg__fbm_split_fast (q[i] * freq + off, &ci[i], &cf[i]);
  else
    for (int i = 0; i < BLK; i++)
      tg__fbm_split (q[i] * freq + off, &ci[i], &cf[i]);
}

/* The simplex lattice: skew in double, then split both axes. */
TG__FBM_KERNEL void
lattice_skew (Block *b, const TgFbmOctave *o, bool fast)
{
  double freq = o->freq, ox = o->off_x, oz = o->off_z;

  if (fast)
    for (int i = 0; i < BLK; i++)
      {
        double px = b->qx[i] * freq + ox;
        double pz = b->qz[i] * freq + oz;
        double s = (px + pz) * TG__SIMPLEX_F2;

        tg__fbm_split_fast (px + s, &b->xi[i], &b->xf[i]);
        tg__fbm_split_fast (pz + s, &b->zi[i], &b->zf[i]);
      }
  else
    for (int i = 0; i < BLK; i++)
      {
        double px = b->qx[i] * freq + ox;
        double pz = b->qz[i] * freq + oz;
        double s = (px + pz) * TG__SIMPLEX_F2;

        tg__fbm_split (px + s, &b->xi[i], &b->xf[i]);
        tg__fbm_split (pz + s, &b->zi[i], &b->zf[i]);
      }
}

/* G . (DX, DZ) for the gradient the reference's tables hold for H: bit
 * 28 negates x, bit 29 negates z, bit 30 swaps the base pair (A, B).
 * Negation is a sign-bit flip and the products and the sum are the same
 * IEEE operations as the table's gx * dx + gz * dz (the sum commutes when
 * swapped).  Top bits, so that each mask is a shift or two. */
TG__FBM_KERNEL float
grad_dot (uint32_t h, uint32_t a, uint32_t b, float dx, float dz)
{
  uint32_t swap = 0u - ((h >> 30) & 1u);
  uint32_t t = (a ^ b) & swap;
  float gx = tg__fbm_float ((a ^ t) ^ ((h << 3) & 0x80000000u));
  float gz = tg__fbm_float ((b ^ t) ^ ((h << 2) & 0x80000000u));

  return gx * dx + gz * dz;
}

/* 16 directions: bit 31 picks the base angle. */
TG__FBM_KERNEL float
grad16 (uint32_t h, float dx, float dz)
{
  uint32_t c0 = tg__fbm_bits (TG__G16_C0), s0 = tg__fbm_bits (TG__G16_S0);
  uint32_t m = 0u - (h >> 31);
  uint32_t a = c0 ^ ((c0 ^ tg__fbm_bits (TG__G16_C1)) & m);
  uint32_t b = s0 ^ ((s0 ^ tg__fbm_bits (TG__G16_S1)) & m);

  return grad_dot (h, a, b, dx, dz);
}

/* 24 directions: k = 0..2 from bits 20-27 picks the base angle. */
TG__FBM_KERNEL float
grad24 (uint32_t h, float dx, float dz)
{
  uint32_t k = (((h >> 20) & 255u) * 3u) >> 8;
  uint32_t m1 = 0u - (uint32_t) (k == 1), m2 = 0u - (uint32_t) (k == 2);
  float a = select_f (m2, TG__G24_C2, select_f (m1, TG__G24_C1, TG__G24_C0));
  float b = select_f (m2, TG__G24_S2, select_f (m1, TG__G24_S1, TG__G24_S0));

  return grad_dot (h, tg__fbm_bits (a), tg__fbm_bits (b), dx, dz);
}

#ifdef TG__FBM_HAVE_X86
#include <immintrin.h>

#define TG__AVX512 __attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq")))

/* tg__fbm_hash_zx on 16 lanes. */
TG__AVX512 static inline __m512i
hash_zx_avx512 (__m512i hz, __m512i x)
{
  __m512i kx = _mm512_set1_epi32 ((int) TG__FBM_HASH_KX);
  __m512i h = _mm512_xor_si512 (hz, _mm512_mullo_epi32 (x, kx));

  h = _mm512_xor_si512 (h, _mm512_srli_epi32 (h, 16));
  h = _mm512_mullo_epi32 (h, _mm512_set1_epi32 (0x7feb352d));
  h = _mm512_xor_si512 (h, _mm512_srli_epi32 (h, 15));
  h = _mm512_mullo_epi32 (h, _mm512_set1_epi32 ((int) 0x846ca68bU));
  return _mm512_xor_si512 (h, _mm512_srli_epi32 (h, 16));
}

/* grad16's gradient for 16 hashes, as float bits: *GX and *GZ. */
TG__AVX512 static inline void
grad16_avx512 (__m512i h, __m512 *gx, __m512 *gz)
{
  const __m512i sign = _mm512_set1_epi32 ((int) 0x80000000U);
  __m512i c0 = _mm512_set1_epi32 ((int) tg__fbm_bits (TG__G16_C0));
  __m512i s0 = _mm512_set1_epi32 ((int) tg__fbm_bits (TG__G16_S0));
  __m512i c1 = _mm512_set1_epi32 ((int) tg__fbm_bits (TG__G16_C1));
  __m512i s1 = _mm512_set1_epi32 ((int) tg__fbm_bits (TG__G16_S1));
  __mmask16 angle = _mm512_movepi32_mask (h);                          /* bit 31 */
  __mmask16 swap = _mm512_movepi32_mask (_mm512_slli_epi32 (h, 1));    /* bit 30 */
  __m512i a = _mm512_mask_blend_epi32 (angle, c0, c1);
  __m512i b = _mm512_mask_blend_epi32 (angle, s0, s1);
  __m512i x = _mm512_mask_blend_epi32 (swap, a, b);
  __m512i z = _mm512_mask_blend_epi32 (swap, b, a);

  x = _mm512_xor_si512 (x, _mm512_and_si512 (_mm512_slli_epi32 (h, 3), sign));
  z = _mm512_xor_si512 (z, _mm512_and_si512 (_mm512_slli_epi32 (h, 2), sign));
  *gx = _mm512_castsi512_ps (x);
  *gz = _mm512_castsi512_ps (z);
}

/* Perlin noise over a block on one z, for AVX-512, with the same IEEE
 * operations as perlin_loop.  Along a row the block's cells rise slowly
 * (at most a few per block at the octaves that matter), so the gradients
 * are computed once per cell, 16 or 32 cells from the block's first, and
 * each sample takes its four from registers with a permute instead of
 * hashing all four corners.  Returns false, having written nothing, when
 * some sample's cell lies further on (fine octaves): perlin_loop then. */
TG__AVX512 __attribute__ ((noinline)) static bool
perlin_row_avx512 (Block *b, uint32_t seed, uint32_t zi0, float zf0)
{
  uint32_t base = b->xi[0];
  __m512i vbase = _mm512_set1_epi32 ((int) base);
  __m512i hz0 = _mm512_set1_epi32 ((int) tg__fbm_hash_z (seed, zi0));
  __m512i hz1 = _mm512_set1_epi32 ((int) tg__fbm_hash_z (seed, zi0 + 1));
  __m512i lane = _mm512_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i one = _mm512_set1_epi32 (1);
  __m512 t0x[2], t0z[2], t1x[2], t1z[2];
  __m512i maxi = _mm512_setzero_si512 ();
  uint32_t span;
  bool wide;
  /* The z side is the same for the whole block. */
  float fz = zf0, fz1 = zf0 - 1.0f, v = tg__fbm_fade (zf0);
  __m512 vfz = _mm512_set1_ps (fz), vfz1 = _mm512_set1_ps (fz1), vv = _mm512_set1_ps (v);
  __m512 norm = _mm512_set1_ps (TG__PERLIN_NORM);

  for (int i = 0; i < BLK; i += 16)
    maxi = _mm512_max_epu32 (maxi, _mm512_sub_epi32 (_mm512_loadu_si512 (b->xi + i), vbase));
  span = (uint32_t) _mm512_reduce_max_epu32 (maxi);
  if (span > 30)
    return false;
  wide = span > 14;
  for (int t = 0; t < (wide ? 2 : 1); t++)
    {
      __m512i cell = _mm512_add_epi32 (vbase, _mm512_add_epi32 (lane, _mm512_set1_epi32 (16 * t)));

      grad16_avx512 (hash_zx_avx512 (hz0, cell), &t0x[t], &t0z[t]);
      grad16_avx512 (hash_zx_avx512 (hz1, cell), &t1x[t], &t1z[t]);
    }
  if (!wide)
    {
      t0x[1] = t0x[0];
      t0z[1] = t0z[0];
      t1x[1] = t1x[0];
      t1z[1] = t1z[0];
    }
  for (int i = 0; i < BLK; i += 16)
    {
      __m512i k0 = _mm512_sub_epi32 (_mm512_loadu_si512 (b->xi + i), vbase);
      __m512i k1 = _mm512_add_epi32 (k0, one);
      __m512 fx = _mm512_loadu_ps (b->xf + i);
      __m512 fx1 = _mm512_sub_ps (fx, _mm512_set1_ps (1.0f));
      __m512 x00, z00, x10, z10, x01, z01, x11, z11;
      __m512 g00, g10, g01, g11, u, a, c, n;

      if (wide)
        {
          x00 = _mm512_permutex2var_ps (t0x[0], k0, t0x[1]);
          z00 = _mm512_permutex2var_ps (t0z[0], k0, t0z[1]);
          x10 = _mm512_permutex2var_ps (t0x[0], k1, t0x[1]);
          z10 = _mm512_permutex2var_ps (t0z[0], k1, t0z[1]);
          x01 = _mm512_permutex2var_ps (t1x[0], k0, t1x[1]);
          z01 = _mm512_permutex2var_ps (t1z[0], k0, t1z[1]);
          x11 = _mm512_permutex2var_ps (t1x[0], k1, t1x[1]);
          z11 = _mm512_permutex2var_ps (t1z[0], k1, t1z[1]);
        }
      else
        {
          x00 = _mm512_permutexvar_ps (k0, t0x[0]);
          z00 = _mm512_permutexvar_ps (k0, t0z[0]);
          x10 = _mm512_permutexvar_ps (k1, t0x[0]);
          z10 = _mm512_permutexvar_ps (k1, t0z[0]);
          x01 = _mm512_permutexvar_ps (k0, t1x[0]);
          z01 = _mm512_permutexvar_ps (k0, t1z[0]);
          x11 = _mm512_permutexvar_ps (k1, t1x[0]);
          z11 = _mm512_permutexvar_ps (k1, t1z[0]);
        }
      /* gx * dx + gz * dz, as grad_dot. */
      g00 = _mm512_add_ps (_mm512_mul_ps (x00, fx), _mm512_mul_ps (z00, vfz));
      g10 = _mm512_add_ps (_mm512_mul_ps (x10, fx1), _mm512_mul_ps (z10, vfz));
      g01 = _mm512_add_ps (_mm512_mul_ps (x01, fx), _mm512_mul_ps (z01, vfz1));
      g11 = _mm512_add_ps (_mm512_mul_ps (x11, fx1), _mm512_mul_ps (z11, vfz1));
      /* tg__fbm_fade: t * t * t * (t * (t * 6 - 15) + 10). */
      u = _mm512_sub_ps (_mm512_mul_ps (fx, _mm512_set1_ps (6.0f)), _mm512_set1_ps (15.0f));
      u = _mm512_add_ps (_mm512_mul_ps (fx, u), _mm512_set1_ps (10.0f));
      u = _mm512_mul_ps (_mm512_mul_ps (_mm512_mul_ps (fx, fx), fx), u);
      a = _mm512_add_ps (g00, _mm512_mul_ps (u, _mm512_sub_ps (g10, g00)));
      c = _mm512_add_ps (g01, _mm512_mul_ps (u, _mm512_sub_ps (g11, g01)));
      n = _mm512_mul_ps (_mm512_add_ps (a, _mm512_mul_ps (vv, _mm512_sub_ps (c, a))), norm);
      _mm512_storeu_ps (b->n + i, n);
    }
  return true;
}
#endif

/* Perlin and value noise share the bilinear shape; ZCONST: the whole
 * block lies on one z (a row without warp), so the z lattice is a scalar. */
TG__FBM_KERNEL void
perlin_loop (Block *b, uint32_t seed, bool zconst, uint32_t zi0, float zf0)
{
  for (int i = 0; i < BLK; i++)
    {
      uint32_t z0 = zconst ? zi0 : b->zi[i];
      float fz = zconst ? zf0 : b->zf[i];
      float fx = b->xf[i];
      uint32_t x0 = b->xi[i];
      uint32_t hz0 = tg__fbm_hash_z (seed, z0); /* loop-invariant on a row */
      uint32_t hz1 = tg__fbm_hash_z (seed, z0 + 1);
      float g00 = grad16 (tg__fbm_hash_zx (hz0, x0), fx, fz);
      float g10 = grad16 (tg__fbm_hash_zx (hz0, x0 + 1), fx - 1.0f, fz);
      float g01 = grad16 (tg__fbm_hash_zx (hz1, x0), fx, fz - 1.0f);
      float g11 = grad16 (tg__fbm_hash_zx (hz1, x0 + 1), fx - 1.0f, fz - 1.0f);
      float u = tg__fbm_fade (fx);
      float v = tg__fbm_fade (fz);
      float a = g00 + u * (g10 - g00);
      float c = g01 + u * (g11 - g01);

      b->n[i] = (a + v * (c - a)) * TG__PERLIN_NORM;
    }
}

TG__FBM_KERNEL void
value_loop (Block *b, uint32_t seed, bool zconst, uint32_t zi0, float zf0)
{
  for (int i = 0; i < BLK; i++)
    {
      uint32_t z0 = zconst ? zi0 : b->zi[i];
      float fz = zconst ? zf0 : b->zf[i];
      float fx = b->xf[i];
      uint32_t x0 = b->xi[i];
      uint32_t hz0 = tg__fbm_hash_z (seed, z0);
      uint32_t hz1 = tg__fbm_hash_z (seed, z0 + 1);
      float v00 = tg__fbm_value (tg__fbm_hash_zx (hz0, x0));
      float v10 = tg__fbm_value (tg__fbm_hash_zx (hz0, x0 + 1));
      float v01 = tg__fbm_value (tg__fbm_hash_zx (hz1, x0));
      float v11 = tg__fbm_value (tg__fbm_hash_zx (hz1, x0 + 1));
      float u = tg__fbm_fade (fx);
      float v = tg__fbm_fade (fz);
      float a = v00 + u * (v10 - v00);
      float c = v01 + u * (v11 - v01);

      b->n[i] = a + v * (c - a);
    }
}

/* A vertex adds nothing when a <= 0.  (a + |a|) / 2 is exactly a when
 * a > 0 and +0 otherwise; the +-0 it then adds leaves the running sum
 * unchanged, as the reference's branch does.  (A select against 0 gets
 * folded into branches, which stops the vectoriser.) */
TG__FBM_KERNEL float
simplex_vertex (uint32_t h, float dx, float dz)
{
  float a = 0.5f - dx * dx - dz * dz;

  a = (a + fabsf (a)) * 0.5f;
  return (a * a) * (a * a) * grad24 (h, dx, dz);
}

TG__FBM_KERNEL void
simplex_loop (Block *b, uint32_t seed)
{
  for (int i = 0; i < BLK; i++)
    {
      uint32_t x0 = b->xi[i], z0 = b->zi[i];
      float xf = b->xf[i], zf = b->zf[i];
      float t = (xf + zf) * TG__SIMPLEX_G2;
      float dx0 = xf - t, dz0 = zf - t;
      float dx1 = dx0 - TG__SIMPLEX_1_2G2, dz1 = dz0 - TG__SIMPLEX_1_2G2;
      uint32_t right = 0u - (uint32_t) (xf > zf);
      /* x - c and x + (-c) are the same IEEE operation. */
      float dx2 = dx0 + select_f (right, -TG__SIMPLEX_1_G2, TG__SIMPLEX_G2);
      float dz2 = dz0 + select_f (right, TG__SIMPLEX_G2, -TG__SIMPLEX_1_G2);
      uint32_t hz0 = tg__fbm_hash_z (seed, z0);
      uint32_t hz1 = tg__fbm_hash_z (seed, z0 + 1);
      /* The middle vertex: (x0 + 1, z0) right of the diagonal, else (x0, z0 + 1). */
      uint32_t h2 = tg__fbm_hash_zx ((hz0 & right) | (hz1 & ~right), x0 + (right & 1u));
      float n = 0.0f;

      n += simplex_vertex (tg__fbm_hash_zx (hz0, x0), dx0, dz0);
      n += simplex_vertex (tg__fbm_hash_zx (hz1, x0 + 1), dx1, dz1);
      n += simplex_vertex (h2, dx2, dz2);
      b->n[i] = n * TG__SIMPLEX_NORM;
    }
}

/* One candidate cell of the Worley search: keeps the two smallest
 * squared distances with min/max selects (no branches). */
TG__FBM_KERNEL void
worley_cell (uint32_t hz, uint32_t x, float ex, float ez, float *d1, float *d2)
{
  uint32_t h = tg__fbm_hash_zx (hz, x);
  float px = TG__WORLEY_LO + (float) (int32_t) (h & 0xffffu) * TG__WORLEY_STEP;
  float pz = TG__WORLEY_LO + (float) (int32_t) (h >> 16) * TG__WORLEY_STEP;
  float dx = ex + px;
  float dz = ez + pz;
  float d = dx * dx + dz * dz;
  float hi = *d1 > d ? *d1 : d;

  *d2 = *d2 < hi ? *d2 : hi;
  *d1 = *d1 < d ? *d1 : d;
}

TG__FBM_KERNEL void
worley_loop (Block *b, uint32_t seed, int ret, bool zconst, uint32_t zi0, float zf0)
{
  for (int i = 0; i < BLK; i++)
    {
      uint32_t x0 = b->xi[i];
      uint32_t z0 = zconst ? zi0 : b->zi[i];
      float xf = b->xf[i];
      float zf = zconst ? zf0 : b->zf[i];
      /* The fourth column and row: 2 cells away on the sample's nearer side. */
      uint32_t west = 0u - (uint32_t) (xf < 0.5f);
      uint32_t north = 0u - (uint32_t) (zf < 0.5f); /* loop-invariant on a row */
      uint32_t xe = x0 + ((west & (0u - 2u)) | (~west & 2u));
      uint32_t ze = z0 + ((north & (0u - 2u)) | (~north & 2u));
      uint32_t hzm = tg__fbm_hash_z (seed, z0 - 1);
      uint32_t hz0 = tg__fbm_hash_z (seed, z0);
      uint32_t hzp = tg__fbm_hash_z (seed, z0 + 1);
      uint32_t hze = tg__fbm_hash_z (seed, ze);
      float ex_m = -1.0f - xf, ex_0 = 0.0f - xf, ex_p = 1.0f - xf;
      float ex_e = select_f (west, -2.0f, 2.0f) - xf;
      float ez_m = -1.0f - zf, ez_0 = 0.0f - zf, ez_p = 1.0f - zf;
      float ez_e = select_f (north, -2.0f, 2.0f) - zf;
      float d1 = 1e30f, d2 = 1e30f;

      worley_cell (hzm, x0 - 1, ex_m, ez_m, &d1, &d2);
      worley_cell (hzm, x0, ex_0, ez_m, &d1, &d2);
      worley_cell (hzm, x0 + 1, ex_p, ez_m, &d1, &d2);
      worley_cell (hzm, xe, ex_e, ez_m, &d1, &d2);
      worley_cell (hz0, x0 - 1, ex_m, ez_0, &d1, &d2);
      worley_cell (hz0, x0, ex_0, ez_0, &d1, &d2);
      worley_cell (hz0, x0 + 1, ex_p, ez_0, &d1, &d2);
      worley_cell (hz0, xe, ex_e, ez_0, &d1, &d2);
      worley_cell (hzp, x0 - 1, ex_m, ez_p, &d1, &d2);
      worley_cell (hzp, x0, ex_0, ez_p, &d1, &d2);
      worley_cell (hzp, x0 + 1, ex_p, ez_p, &d1, &d2);
      worley_cell (hzp, xe, ex_e, ez_p, &d1, &d2);
      worley_cell (hze, x0 - 1, ex_m, ez_e, &d1, &d2);
      worley_cell (hze, x0, ex_0, ez_e, &d1, &d2);
      worley_cell (hze, x0 + 1, ex_p, ez_e, &d1, &d2);
      worley_cell (hze, xe, ex_e, ez_e, &d1, &d2);
      b->d1[i] = d1;
      b->d2[i] = d2;
    }
  /* sqrtf may set errno, so GCC keeps it scalar (-fno-math-errno is not
   * ours to set); in a loop of its own it does not hold back the search. */
  for (int i = 0; i < BLK; i++)
    {
      float f1 = sqrtf (b->d1[i]);
      float f2 = sqrtf (b->d2[i]);

      if (ret == TG__FBM_F1)
        b->n[i] = f1 * TG__WORLEY_F1_NORM - 1.0f;
      else if (ret == TG__FBM_F2)
        b->n[i] = f2 * TG__WORLEY_F2_NORM - 1.0f;
      else
        b->n[i] = (f2 - f1) * TG__WORLEY_F2_NORM - 1.0f;
    }
}

/* Largest |q| of the block, to decide whether the fast split is exact.
 * On the bits: a max of doubles is not reordered into a vector reduction
 * (NaN and -0), a max of integers is, and non-negative doubles order as
 * their bits.  A NaN gives a NaN, and the exact split. */
TG__FBM_KERNEL double
block_extent (const double *q)
{
  uint64_t m = 0;
  double r;

  for (int i = 0; i < BLK; i++)
    {
      uint64_t u;

      memcpy (&u, &q[i], sizeof u);
      u &= 0x7fffffffffffffffull;
      m = u > m ? u : m;
    }
  memcpy (&r, &m, sizeof r);
  return r;
}

/* BASIS at octave O into b->n, from the positions in b->qx, b->qz. */
TG__FBM_KERNEL void
octave_noise (const TgFbm *f, int basis, const TgFbmOctave *o, Block *b, bool zconst, double ax,
              double az, TgFbmIsa isa)
{
  /* Bounds |px| + |pz|, which also bounds the skewed coordinates. */
  double reach = (ax * o->freq + o->off_x) + (az * o->freq + o->off_z);
  bool fast = reach * (1.0 + TG__SIMPLEX_F2) < TG__FBM_FAST_LIMIT;
  uint32_t zi0 = 0;
  float zf0 = 0.0f;

  if (basis == TG__FBM_SIMPLEX)
    {
      lattice_skew (b, o, fast);
      simplex_loop (b, o->seed);
      return;
    }
  lattice_1d (b->qx, o->freq, o->off_x, b->xi, b->xf, fast);
  if (zconst)
    tg__fbm_split (b->qz[0] * o->freq + o->off_z, &zi0, &zf0);
  else
    lattice_1d (b->qz, o->freq, o->off_z, b->zi, b->zf, fast);

  if (basis == TG__FBM_WORLEY)
    {
      int ret = f->worley_return;

      if (zconst)
        {
          if (ret == TG__FBM_F1)
            worley_loop (b, o->seed, TG__FBM_F1, true, zi0, zf0);
          else if (ret == TG__FBM_F2)
            worley_loop (b, o->seed, TG__FBM_F2, true, zi0, zf0);
          else
            worley_loop (b, o->seed, TG__FBM_F2_MINUS_F1, true, zi0, zf0);
        }
      else
        {
          if (ret == TG__FBM_F1)
            worley_loop (b, o->seed, TG__FBM_F1, false, 0, 0.0f);
          else if (ret == TG__FBM_F2)
            worley_loop (b, o->seed, TG__FBM_F2, false, 0, 0.0f);
          else
            worley_loop (b, o->seed, TG__FBM_F2_MINUS_F1, false, 0, 0.0f);
        }
    }
  else if (basis == TG__FBM_VALUE)
    {
      if (zconst)
        value_loop (b, o->seed, true, zi0, zf0);
      else
        value_loop (b, o->seed, false, 0, 0.0f);
    }
  else
    {
#ifdef TG__FBM_HAVE_X86
      if (isa == TG__FBM_ISA_AVX512 && zconst && perlin_row_avx512 (b, o->seed, zi0, zf0))
        return;
#endif
      if (zconst)
        perlin_loop (b, o->seed, true, zi0, zf0);
      else
        perlin_loop (b, o->seed, false, 0, 0.0f);
    }
}

/* The whole pipeline for one block; b->qx, b->qz hold the offset
 * positions, b->acc receives the output. */
TG__FBM_KERNEL void
fbm_block (const TgFbm *f, Block *b, bool zconst, TgFbmIsa isa)
{
  double ax, az;

  if (f->warp)
    {
      float wn = f->warp_norm;
      double wm = f->warp_m;

      ax = block_extent (b->qx);
      az = block_extent (b->qz);
      for (int i = 0; i < BLK; i++)
        {
          b->wx[i] = 0.0f;
          b->wz[i] = 0.0f;
        }
      for (int k = 0; k < TG__FBM_WARP_OCTAVES; k++)
        {
          const TgFbmOctave *o = &f->warp_oct[0][k];
          float amp = o->amp;

          octave_noise (f, TG__FBM_PERLIN, o, b, zconst, ax, az, isa);
          for (int i = 0; i < BLK; i++)
            b->wx[i] += amp * b->n[i];
          o = &f->warp_oct[1][k];
          amp = o->amp;
          octave_noise (f, TG__FBM_PERLIN, o, b, zconst, ax, az, isa);
          for (int i = 0; i < BLK; i++)
            b->wz[i] += amp * b->n[i];
        }
      for (int i = 0; i < BLK; i++)
        {
          b->qx[i] = b->qx[i] + wm * (double) (b->wx[i] * wn);
          b->qz[i] = b->qz[i] + wm * (double) (b->wz[i] * wn);
        }
      zconst = false;
    }

  ax = block_extent (b->qx);
  az = zconst ? fabs (b->qz[0]) : block_extent (b->qz);
  for (int i = 0; i < BLK; i++)
    {
      b->acc[i] = 0.0f;
      b->w[i] = 1.0f;
    }

  for (int k = 0; k < f->n_octaves; k++)
    {
      const TgFbmOctave *o = &f->oct[k];
      float amp = o->amp;

      octave_noise (f, f->basis, o, b, zconst, ax, az, isa);
      if (f->mode == TG__FBM_MODE_FBM)
        for (int i = 0; i < BLK; i++)
          b->acc[i] += amp * b->n[i];
      else if (f->mode == TG__FBM_MODE_BILLOW)
        for (int i = 0; i < BLK; i++)
          b->acc[i] += amp * fabsf (b->n[i]);
      else
        for (int i = 0; i < BLK; i++)
          {
            float s = 1.0f - fabsf (b->n[i]);
            float g;

            s = s * s;
            s = s * b->w[i];
            b->acc[i] += amp * s;
            g = s * TG__FBM_RIDGE_GAIN;
            b->w[i] = g > 1.0f ? 1.0f : g;
          }
    }

  {
    float scale = f->out_scale, bias = f->out_bias;

    for (int i = 0; i < BLK; i++)
      {
        float v = b->acc[i] * scale + bias;

        v = v < 0.0f ? 0.0f : v;
        b->acc[i] = v > 1.0f ? 1.0f : v;
      }
  }
}

/* The same pipeline compiled for each ISA; the vectoriser picks the
 * vector width.  AVX-512F brings FMA with it: -ffp-contract=off keeps
 * a * b + c as two roundings, as in the reference. */
static void
fbm_block_generic (const TgFbm *f, Block *b, bool zconst)
{
  fbm_block (f, b, zconst, TG__FBM_ISA_GENERIC);
}

#ifdef TG__FBM_HAVE_X86
__attribute__ ((target ("avx2"))) static void
fbm_block_avx2 (const TgFbm *f, Block *b, bool zconst)
{
  fbm_block (f, b, zconst, TG__FBM_ISA_AVX2);
}

__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq"))) static void
fbm_block_avx512 (const TgFbm *f, Block *b, bool zconst)
{
  fbm_block (f, b, zconst, TG__FBM_ISA_AVX512);
}
#endif

static void
run_block (const TgFbm *f, Block *b, bool zconst)
{
#ifdef TG__FBM_HAVE_X86
  if (f->isa == TG__FBM_ISA_AVX512)
    {
      fbm_block_avx512 (f, b, zconst);
      return;
    }
  if (f->isa == TG__FBM_ISA_AVX2)
    {
      fbm_block_avx2 (f, b, zconst);
      return;
    }
#endif
  fbm_block_generic (f, b, zconst);
}

bool
tg__fbm_isa_supported (TgFbmIsa isa)
{
  switch (isa)
    {
    case TG__FBM_ISA_GENERIC:
      return true;
#ifdef TG__FBM_HAVE_X86
    case TG__FBM_ISA_AVX2:
      return __builtin_cpu_supports ("avx2");
    case TG__FBM_ISA_AVX512:
      return __builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512vl")
             && __builtin_cpu_supports ("avx512bw") && __builtin_cpu_supports ("avx512dq");
#endif
    default:
      return false;
    }
}

TgFbmIsa
tg__fbm_best_isa (void)
{
  if (tg__fbm_isa_supported (TG__FBM_ISA_AVX512))
    return TG__FBM_ISA_AVX512;
  if (tg__fbm_isa_supported (TG__FBM_ISA_AVX2))
    return TG__FBM_ISA_AVX2;
  return TG__FBM_ISA_GENERIC;
}

const char *
tg__fbm_isa_name (TgFbmIsa isa)
{
  switch (isa)
    {
    case TG__FBM_ISA_AVX2:
      return "avx2";
    case TG__FBM_ISA_AVX512:
      return "avx512";
    default:
      return "generic";
    }
}

void
tg__fbm_row (const TgFbm *f, const TgRegion *r, int row, int i0, int n, float *out)
{
  double z = tg_region_z (r, row) + f->offset_z;
  Block b;

  for (int k = 0; k < n; k += BLK)
    {
      int m = n - k < BLK ? n - k : BLK;

      /* Positions past the end of the row are computed and dropped. */
      for (int i = 0; i < BLK; i++)
        {
          b.qx[i] = tg_region_x (r, i0 + k + i) + f->offset_x;
          b.qz[i] = z;
        }
      run_block (f, &b, true);
      memcpy (out + k, b.acc, (size_t) m * sizeof (float));
    }
}

void
tg__fbm_points (const TgFbm *f, const double *x, const double *z, int n, float *out)
{
  Block b;

  for (int k = 0; k < n; k += BLK)
    {
      int m = n - k < BLK ? n - k : BLK;

      for (int i = 0; i < BLK; i++)
        {
          int s = k + (i < m ? i : m - 1);

          b.qx[i] = x[s] + f->offset_x;
          b.qz[i] = z[s] + f->offset_z;
        }
      run_block (f, &b, false);
      memcpy (out + k, b.acc, (size_t) m * sizeof (float));
    }
}
