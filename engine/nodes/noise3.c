/* 3D fractal noise: the plan, and the noise at any points.
 *
 * The noise has noise.fbm's bases (improved Perlin, simplex, value,
 * Worley), octave plan (per-octave seeds and lattice offsets drawn from
 * counter-based hashes) and fbm/ridged/billow shaping, on a 3D lattice
 * with the same hash construction and fade (noise_fbm.h).  The plan also
 * works out a proven Lipschitz bound, so the mesher can skip empty blocks
 * without ever missing a surface; the bounds are derived below per basis
 * (tight for perlin and value, loose for simplex and worley, which costs
 * skipping, never correctness).  The grid path is in noise3_grid.c.
 */
#include <math.h>
#include <string.h>

#include <tgraph/hash.h>

#include "noise3.h"

/* Lipschitz bounds per lattice unit, before normalisation.
 *   perlin: for a position p and a direction e, e . grad n is a sum over
 *     the 8 corners of e . grad (w_c(p) g_c . (p - c)), each with its own
 *     gradient, so its largest value over every gradient choice is the sum
 *     of the per-corner maxima; the largest of that over p in the cell and
 *     e on the sphere (a grid search refined by hill climbing) is 3.75, at
 *     the cell centre along an axis (2 fade'(1/2)); random gradients reach
 *     3.38.  1% margin.
 *   value: the same search with |e . grad w_c| per corner: 3.75 too.
 *   simplex: per vertex |grad (a^4 g.d)| <= |g| (8 a^3 r^2 + a^4) with
 *     a = 0.5 - r^2, at most 0.0787 * sqrt 2 (at r^2 = 1/14); 4 vertices.
 *   worley: distances are 1-Lipschitz (F2 - F1: 2). */
#define N3_PERLIN_LIP (3.75f * 1.01f)
#define N3_VALUE_LIP (3.75f * 1.01f)
#define N3_SIMPLEX_LIP (4.0f * 0.0787f * 1.4142136f)

enum
{
  STREAM_OCTAVE3 = 11,
};

static inline uint32_t
hash3 (uint32_t seed, uint32_t x, uint32_t y, uint32_t z)
{
  uint32_t h = tg_mix32 (seed ^ z * TG__FBM_HASH_KZ);
  h = tg_mix32 (h ^ y * TG__NOISE3_KY);
  return tg_mix32 (h ^ x * TG__FBM_HASH_KX);
}

/* --- Perlin and value noise, a batch at a time ---------------------------
 *
 * Plain loops over arrays that the compiler vectorises, compiled once per
 * ISA; the float operations are the same in every build (no contraction),
 * so every build gives the same bytes.  The lattice hash is tg__fbm_hash's
 * construction with y added (z, then y, then x), shared between the
 * corners that have the same z and y. */

#define N3_BLK 256

/* Perlin 2002's 12 cube-edge gradients (16 entries, four repeated),
 * picked by the top hash bits and dotted with (X, Y, Z): u = k < 8 ? x
 * : y, v = k < 4 ? y : (k is 12 or 14 ? x : z), signs from bits 0 and 1;
 * selects and signs with integer masks so the loop vectorises. */
TG__FBM_KERNEL float
grad3 (uint32_t h, float x, float y, float z)
{
  uint32_t k = h >> 28;
  uint32_t ux = tg__fbm_bits (x), uy = tg__fbm_bits (y), uz = tg__fbm_bits (z);
  uint32_t m8 = 0u - (uint32_t) (k < 8), m4 = 0u - (uint32_t) (k < 4);
  uint32_t mx = 0u - (uint32_t) ((k == 12) | (k == 14));
  uint32_t u = uy ^ ((ux ^ uy) & m8);
  uint32_t vzx = uz ^ ((ux ^ uz) & mx);
  uint32_t v = vzx ^ ((uy ^ vzx) & m4);

  return tg__fbm_float (u ^ (k & 1) << 31) + tg__fbm_float (v ^ (k & 2) << 30);
}

/* One octave of Perlin (VALUE false) or value noise at N3_BLK points
 * (QX, QY, QZ) in metres, into S.  A constant trip count and constant
 * VALUE and FAST let GCC's -O2 ("very cheap") vectoriser take the loop. */
TG__FBM_KERNEL void
octave3 (const TgNoise3Octave *o, bool value, bool fast, const double *restrict qx,
         const double *restrict qy, const double *restrict qz, float *restrict s)
{
  uint32_t seed = o->seed;

  for (int i = 0; i < N3_BLK; i++)
    {
      uint32_t xi, yi, zi, hz0, hz1, h00, h10, h01, h11, x0, x1;
      float xf, yf, zf, x1f, y1f, z1f, u, v, w, c000, c100, c010, c110, c001, c101, c011,
        c111;

      if (fast)
        {
          tg__fbm_split_fast (qx[i] * o->freq + o->off[0], &xi, &xf);
          tg__fbm_split_fast (qy[i] * o->freq + o->off[1], &yi, &yf);
          tg__fbm_split_fast (qz[i] * o->freq + o->off[2], &zi, &zf);
        }
      else
        {
          tg__noise3_split (qx[i] * o->freq + o->off[0], &xi, &xf);
          tg__noise3_split (qy[i] * o->freq + o->off[1], &yi, &yf);
          tg__noise3_split (qz[i] * o->freq + o->off[2], &zi, &zf);
        }
      hz0 = tg_mix32 (seed ^ zi * TG__FBM_HASH_KZ);
      hz1 = tg_mix32 (seed ^ (zi + 1u) * TG__FBM_HASH_KZ);
      h00 = tg_mix32 (hz0 ^ yi * TG__NOISE3_KY);
      h10 = tg_mix32 (hz0 ^ (yi + 1u) * TG__NOISE3_KY);
      h01 = tg_mix32 (hz1 ^ yi * TG__NOISE3_KY);
      h11 = tg_mix32 (hz1 ^ (yi + 1u) * TG__NOISE3_KY);
      x0 = xi * TG__FBM_HASH_KX;
      x1 = (xi + 1u) * TG__FBM_HASH_KX;
      x1f = xf - 1.0f;
      y1f = yf - 1.0f;
      z1f = zf - 1.0f;
      if (value)
        {
          c000 = tg__fbm_value (tg_mix32 (h00 ^ x0));
          c100 = tg__fbm_value (tg_mix32 (h00 ^ x1));
          c010 = tg__fbm_value (tg_mix32 (h10 ^ x0));
          c110 = tg__fbm_value (tg_mix32 (h10 ^ x1));
          c001 = tg__fbm_value (tg_mix32 (h01 ^ x0));
          c101 = tg__fbm_value (tg_mix32 (h01 ^ x1));
          c011 = tg__fbm_value (tg_mix32 (h11 ^ x0));
          c111 = tg__fbm_value (tg_mix32 (h11 ^ x1));
        }
      else
        {
          c000 = grad3 (tg_mix32 (h00 ^ x0), xf, yf, zf);
          c100 = grad3 (tg_mix32 (h00 ^ x1), x1f, yf, zf);
          c010 = grad3 (tg_mix32 (h10 ^ x0), xf, y1f, zf);
          c110 = grad3 (tg_mix32 (h10 ^ x1), x1f, y1f, zf);
          c001 = grad3 (tg_mix32 (h01 ^ x0), xf, yf, z1f);
          c101 = grad3 (tg_mix32 (h01 ^ x1), x1f, yf, z1f);
          c011 = grad3 (tg_mix32 (h11 ^ x0), xf, y1f, z1f);
          c111 = grad3 (tg_mix32 (h11 ^ x1), x1f, y1f, z1f);
        }
      u = tg__fbm_fade (xf);
      v = tg__fbm_fade (yf);
      w = tg__fbm_fade (zf);
      s[i] = tg__noise3_trilerp (c000, c100, c010, c110, c001, c101, c011, c111, u, v, w)
             * (value ? 1.0f : TG__NOISE3_PERLIN_NORM);
    }
}

/* The whole fractal sum for N <= N3_BLK points; a partial block repeats
 * its last point, and the copies are dropped. */
TG__FBM_KERNEL void
lattice_block (const TgNoise3 *nz, int n, const float *x, const float *y, const float *z,
               float *out)
{
  double qx[N3_BLK], qy[N3_BLK], qz[N3_BLK];
  float acc[N3_BLK], wgt[N3_BLK], s[N3_BLK];

  for (int i = 0; i < N3_BLK; i++)
    {
      int j = i < n ? i : n - 1;
      qx[i] = (double) x[j] + nz->offset[0];
      qy[i] = (double) y[j] + nz->offset[1];
      qz[i] = (double) z[j] + nz->offset[2];
      acc[i] = 0.0f;
      wgt[i] = 1.0f;
    }
  for (int k = 0; k < nz->n_octaves; k++)
    {
      const TgNoise3Octave *o = &nz->oct[k];
      float amp = o->amp;

      bool fast = true;

      /* Outside +-2^30 cells truncation to int32 is no floor: take the
       * general split for this block. */
      for (int i = 0; i < N3_BLK; i++)
        fast &= fabs (qx[i] * o->freq + o->off[0]) < TG__FBM_FAST_LIMIT
                && fabs (qy[i] * o->freq + o->off[1]) < TG__FBM_FAST_LIMIT
                && fabs (qz[i] * o->freq + o->off[2]) < TG__FBM_FAST_LIMIT;
      if (nz->basis == TG__FBM_VALUE)
        {
          if (fast)
            octave3 (o, true, true, qx, qy, qz, s);
          else
            octave3 (o, true, false, qx, qy, qz, s);
        }
      else if (fast)
        octave3 (o, false, true, qx, qy, qz, s);
      else
        octave3 (o, false, false, qx, qy, qz, s);
      if (nz->mode == TG__FBM_MODE_FBM)
        for (int i = 0; i < N3_BLK; i++)
          acc[i] += amp * s[i];
      else if (nz->mode == TG__FBM_MODE_BILLOW)
        for (int i = 0; i < N3_BLK; i++)
          acc[i] += amp * fabsf (s[i]);
      else
        for (int i = 0; i < N3_BLK; i++)
          {
            float r = 1.0f - fabsf (s[i]);

            r = r * r;
            r = r * wgt[i];
            acc[i] += amp * r;
            r = r * TG__FBM_RIDGE_GAIN;
            wgt[i] = r > 1.0f ? 1.0f : r;
          }
    }
  for (int i = 0; i < N3_BLK; i++)
    {
      float v = acc[i] * nz->out_scale + nz->out_bias;

      v = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
      s[i] = nz->amplitude * (2.0f * v - 1.0f);
    }
  memcpy (out, s, sizeof (float) * (size_t) n);
}

static void
lattice_generic (const TgNoise3 *nz, int n, const float *x, const float *y, const float *z,
                 float *out)
{
  lattice_block (nz, n, x, y, z, out);
}

#ifdef TG__FBM_HAVE_X86
__attribute__ ((target ("avx2"))) static void
lattice_avx2 (const TgNoise3 *nz, int n, const float *x, const float *y, const float *z,
              float *out)
{
  lattice_block (nz, n, x, y, z, out);
}

__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq"))) static void
lattice_avx512 (const TgNoise3 *nz, int n, const float *x, const float *y, const float *z,
                float *out)
{
  lattice_block (nz, n, x, y, z, out);
}
#endif

static void
lattice_eval (const TgNoise3 *nz, int count, const float *x, const float *y, const float *z,
              float *out)
{
  for (int i = 0; i < count; i += N3_BLK)
    {
      int n = count - i < N3_BLK ? count - i : N3_BLK;
#ifdef TG__FBM_HAVE_X86
      if (nz->isa == TG__FBM_ISA_AVX512)
        lattice_avx512 (nz, n, x + i, y + i, z + i, out + i);
      else if (nz->isa == TG__FBM_ISA_AVX2)
        lattice_avx2 (nz, n, x + i, y + i, z + i, out + i);
      else
#endif
        lattice_generic (nz, n, x + i, y + i, z + i, out + i);
    }
}

/* 3D simplex (tetrahedral lattice) with the OpenSimplex-style radius
 * r^2 < 0.5, so only the 4 vertices of the containing simplex count.
 * (PX, PY, PZ) is the position in lattice units. */
static float
simplex3 (uint32_t s, double px, double py, double pz)
{
  const double F3 = 1.0 / 3.0;
  const float G3 = 1.0f / 6.0f;
  double sk = (px + py + pz) * F3;
  uint32_t xi, yi, zi;
  float xf, yf, zf, t, x0, y0, z0, n = 0.0f;
  int i1, j1, k1, i2, j2, k2;

  tg__fbm_split (px + sk, &xi, &xf);
  tg__fbm_split (py + sk, &yi, &yf);
  tg__fbm_split (pz + sk, &zi, &zf);
  /* Offsets from the cell's origin vertex, unskewed. */
  t = (xf + yf + zf) * G3;
  x0 = xf - t;
  y0 = yf - t;
  z0 = zf - t;
  if (xf >= yf)
    {
      if (yf >= zf)
        i1 = 1, j1 = 0, k1 = 0, i2 = 1, j2 = 1, k2 = 0;
      else if (xf >= zf)
        i1 = 1, j1 = 0, k1 = 0, i2 = 1, j2 = 0, k2 = 1;
      else
        i1 = 0, j1 = 0, k1 = 1, i2 = 1, j2 = 0, k2 = 1;
    }
  else
    {
      if (yf < zf)
        i1 = 0, j1 = 0, k1 = 1, i2 = 0, j2 = 1, k2 = 1;
      else if (xf < zf)
        i1 = 0, j1 = 1, k1 = 0, i2 = 0, j2 = 1, k2 = 1;
      else
        i1 = 0, j1 = 1, k1 = 0, i2 = 1, j2 = 1, k2 = 0;
    }
  {
    float dx[4] = { x0, x0 - (float) i1 + G3, x0 - (float) i2 + 2.0f * G3, x0 - 1.0f + 3.0f * G3 };
    float dy[4] = { y0, y0 - (float) j1 + G3, y0 - (float) j2 + 2.0f * G3, y0 - 1.0f + 3.0f * G3 };
    float dz[4] = { z0, z0 - (float) k1 + G3, z0 - (float) k2 + 2.0f * G3, z0 - 1.0f + 3.0f * G3 };
    uint32_t ox[4] = { 0, (uint32_t) i1, (uint32_t) i2, 1 };
    uint32_t oy[4] = { 0, (uint32_t) j1, (uint32_t) j2, 1 };
    uint32_t oz[4] = { 0, (uint32_t) k1, (uint32_t) k2, 1 };

    for (int q = 0; q < 4; q++)
      {
        float a = 0.5f - dx[q] * dx[q] - dy[q] * dy[q] - dz[q] * dz[q];

        if (a > 0.0f)
          n += (a * a) * (a * a)
               * grad3 (hash3 (s, xi + ox[q], yi + oy[q], zi + oz[q]), dx[q], dy[q], dz[q]);
      }
  }
  n *= TG__NOISE3_SIMPLEX_NORM;
  return n < -1.0f ? -1.0f : (n > 1.0f ? 1.0f : n);
}

/* Cellular noise: one feature point per cell in the middle 90% of it.
 * All 5x5x5 cells around the sample are searched: any point outside lies
 * more than 2 cells away, farther than F1 and F2 can be, so the result is
 * exact (and seamless). */
static float
worley3 (uint32_t s, int ret, uint32_t xi, uint32_t yi, uint32_t zi, float xf, float yf,
         float zf)
{
  float d1 = 1e30f, d2 = 1e30f, f1, f2, v;

  for (int c = -2; c <= 2; c++)
    for (int b = -2; b <= 2; b++)
      for (int a = -2; a <= 2; a++)
        {
          uint32_t h = hash3 (s, xi + (uint32_t) a, yi + (uint32_t) b, zi + (uint32_t) c);
          uint32_t h2 = tg_mix32 (h ^ 0x68E31DA4U);
          float px = TG__WORLEY_LO + (float) (int32_t) (h & 0xffffu) * TG__WORLEY_STEP;
          float py = TG__WORLEY_LO + (float) (int32_t) (h >> 16) * TG__WORLEY_STEP;
          float pz = TG__WORLEY_LO + (float) (int32_t) (h2 & 0xffffu) * TG__WORLEY_STEP;
          float dx = ((float) a - xf) + px;
          float dy = ((float) b - yf) + py;
          float dz = ((float) c - zf) + pz;
          float d = dx * dx + dy * dy + dz * dz;

          tg__fbm_worley_keep (d, &d1, &d2);
        }
  f1 = sqrtf (d1);
  f2 = sqrtf (d2);
  if (ret == TG__FBM_F1)
    v = f1 * TG__NOISE3_WORLEY_F1_NORM - 1.0f;
  else if (ret == TG__FBM_F2)
    v = f2 * TG__NOISE3_WORLEY_F2_NORM - 1.0f;
  else
    v = (f2 - f1) * TG__NOISE3_WORLEY_F2_NORM - 1.0f;
  return v < -1.0f ? -1.0f : (v > 1.0f ? 1.0f : v);
}

static void
plan_octave3 (TgNoise3Octave *o, uint32_t seed, int index, double freq, double amp)
{
  o->seed = tg_hash3 (seed, STREAM_OCTAVE3, index, 0);
  for (int k = 0; k < 3; k++)
    o->off[k] = (double) tg_hash3 (seed, STREAM_OCTAVE3, index, 1 + k) * (1.0 / 65536.0);
  o->freq = freq;
  o->amp = (float) amp;
}

void
tg__noise3_plan (TgNoise3 *n, const TgNoise3Params *p, uint32_t seed)
{
  int count = p->octaves < 1 ? 1 : (p->octaves > TG__N3_MAX_OCTAVES ? TG__N3_MAX_OCTAVES
                                                                     : p->octaves);
  double freq = 1.0 / p->scale_m, amp = 1.0, sum = 0.0;
  double lip_basis, lip = 0.0, ds_prev = 0.0;
  int i;

  memset (n, 0, sizeof *n);
  n->basis = p->basis;
  n->worley_return = p->worley_return;
  n->mode = p->mode;
  for (int k = 0; k < 3; k++)
    n->offset[k] = p->offset_m[k];
  switch (p->basis)
    {
    case TG__FBM_SIMPLEX:
      lip_basis = N3_SIMPLEX_LIP * TG__NOISE3_SIMPLEX_NORM;
      break;
    case TG__FBM_VALUE:
      lip_basis = N3_VALUE_LIP;
      break;
    case TG__FBM_WORLEY:
      lip_basis = (p->worley_return == TG__FBM_F2_MINUS_F1 ? 2.0 : 1.0)
                  * (p->worley_return == TG__FBM_F1 ? TG__NOISE3_WORLEY_F1_NORM
                                                    : TG__NOISE3_WORLEY_F2_NORM);
      break;
    default:
      lip_basis = N3_PERLIN_LIP * TG__NOISE3_PERLIN_NORM;
      break;
    }
  for (i = 0; i < count; i++)
    {
      double ds;

      if (i > 0 && amp < 1.0 / 16777216.0)
        break;
      plan_octave3 (&n->oct[i], seed, i, freq, amp);
      sum += (double) n->oct[i].amp;
      /* d(signal)/dp per metre: |n| and n alike for fbm and billow; for
       * ridged s_i = (1 - |n_i|)^2 w_i with w_i = min (1, 2 s_i-1). */
      if (p->mode == TG__FBM_MODE_RIDGED)
        {
          ds = 2.0 * lip_basis * freq + 2.0 * ds_prev;
          ds_prev = ds;
        }
      else
        ds = lip_basis * freq;
      lip += (double) n->oct[i].amp * ds;
      freq *= p->lacunarity;
      amp *= p->persistence;
    }
  n->n_octaves = i;
  tg__fbm_out_map (p->mode, sum, &n->out_scale, &n->out_bias);
  n->amplitude = (float) p->amplitude_m;
  n->isa = tg__fbm_best_isa ();
  /* value = A (2 (acc * scale + bias) - 1); a float rounding margin. */
  n->lipschitz = (float) (p->amplitude_m * 2.0 * (double) n->out_scale * lip * 1.001);
}

/* Simplex and Worley noise, one point at a time: their vertex choice and
 * cell search branch per point. */
static float
noise3_sample (const TgNoise3 *n, float x, float y, float z)
{
  double qx = (double) x + n->offset[0];
  double qy = (double) y + n->offset[1];
  double qz = (double) z + n->offset[2];
  float acc = 0.0f, w = 1.0f, v;

  for (int i = 0; i < n->n_octaves; i++)
    {
      const TgNoise3Octave *o = &n->oct[i];
      double px = qx * o->freq + o->off[0];
      double py = qy * o->freq + o->off[1];
      double pz = qz * o->freq + o->off[2];
      uint32_t xi, yi, zi;
      float xf, yf, zf, s;

      if (n->basis == TG__FBM_SIMPLEX)
        s = simplex3 (o->seed, px, py, pz);
      else
        {
          tg__fbm_split (px, &xi, &xf);
          tg__fbm_split (py, &yi, &yf);
          tg__fbm_split (pz, &zi, &zf);
          s = worley3 (o->seed, n->worley_return, xi, yi, zi, xf, yf, zf);
        }
      acc = tg__fbm_octave_add (n->mode, acc, o->amp, s, &w);
    }
  v = acc * n->out_scale + n->out_bias;
  v = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
  return n->amplitude * (2.0f * v - 1.0f);
}

void
tg__noise3_eval (const TgNoise3 *n, int count, const float *x, const float *y, const float *z,
                 float *out)
{
  if (tg__noise3_lattice (n))
    {
      lattice_eval (n, count, x, y, z, out);
      return;
    }
  for (int i = 0; i < count; i++)
    out[i] = noise3_sample (n, x[i], y[i], z[i]);
}
