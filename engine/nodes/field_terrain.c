/* Fields from terrain and noise: field.from_height (the heightfield as a
 * solid, y - h(x, z)) and field.noise (3D fractal noise in metres), plus
 * the 3D noise itself, which field.displace uses too.
 *
 * The noise has noise.fbm's bases (improved Perlin, simplex, value,
 * Worley), octave plan (per-octave seeds and lattice offsets drawn from
 * counter-based hashes) and fbm/ridged/billow shaping, on a 3D lattice
 * with the same hash construction and fade (noise_fbm.h).  Each field also
 * carries a proven Lipschitz bound, so the mesher can skip empty blocks
 * without ever missing a surface; the bounds are derived below per basis
 * (tight for perlin and value, loose for simplex and worley, which costs
 * skipping, never correctness).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "fields.h"
#include "noise_fbm.h"

/* --- 3D noise -------------------------------------------------------------- */

const char *const tg__noise3_basis_choices[] = { "perlin", "simplex", "value", "worley", NULL };
const char *const tg__noise3_worley_choices[] = { "f1", "f2", "f2_minus_f1", NULL };
const char *const tg__noise3_mode_choices[] = { "fbm", "ridged", "billow", NULL };

#define N3_KY 0xC2B2AE3DU

/* Sup of |noise| per basis before normalisation, from a search over
 * positions with the best gradient at every corner, rounded up; a clamp
 * to [-1, 1] guards whatever the search missed.
 *   perlin, 12 cube-edge gradients, quintic fade: 1.0363
 *   simplex, same gradients, (0.5 - r^2)^4 kernel: 0.013007
 *   worley, jitter 0.9: F1 <= sqrt(3) * 0.95 = 1.6455; F2 < 2. */
#define N3_PERLIN_NORM (1.0f / 1.04f)
#define N3_SIMPLEX_NORM (1.0f / 0.0131f)
#define N3_WORLEY_F1_NORM (2.0f / 1.6455f)
#define N3_WORLEY_F2_NORM (1.0f)

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
  h = tg_mix32 (h ^ y * N3_KY);
  return tg_mix32 (h ^ x * TG__FBM_HASH_KX);
}

static inline float
lerpf (float a, float b, float t)
{
  return a + t * (b - a);
}

/* --- Perlin and value noise, a batch at a time ---------------------------
 *
 * Plain loops over arrays that the compiler vectorises, compiled once per
 * ISA; the float operations are the same in every build (no contraction),
 * so every build gives the same bytes.  The lattice hash is tg__fbm_hash's
 * construction with y added (z, then y, then x), shared between the
 * corners that have the same z and y. */

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define N3_HAVE_X86 1
#endif

#define KERNEL static inline __attribute__ ((always_inline))
#define N3_BLK 256

/* Lattice coordinate P -> cell modulo 2^32 and fraction, as
 * tg__fbm_split, in operations that vectorise: the floor is reduced
 * modulo 2^32 in double (exact: |P| <= 2^50) and offset into int32. */
KERNEL void
split3 (double p, uint32_t *cell, float *frac)
{
  double fl, m;

  p = p >= -TG__FBM_SPLIT_LIMIT ? p : -TG__FBM_SPLIT_LIMIT; /* NaN too */
  p = p <= TG__FBM_SPLIT_LIMIT ? p : TG__FBM_SPLIT_LIMIT;
  fl = floor (p);
  m = fl - 4294967296.0 * floor (fl * (1.0 / 4294967296.0)) - 2147483648.0;
  *cell = (uint32_t) (int32_t) m ^ 0x80000000u;
  *frac = (float) (p - fl);
}

/* Truncation to int32 is exact while |p| < 2^31; blocks whose lattice
 * coordinates reach 2^30 take split3 instead. */
#define N3_FAST_LIMIT 1073741824.0

/* 1.0 when D < 0, else 0.0, from the sign bit (D + 0.0 turns -0.0 into
 * +0.0).  Integer masks, not a select between FP expressions, which the
 * vectoriser would see as branches (FP operations may trap). */
KERNEL double
one_if_negative (double d)
{
  uint64_t u;
  double r;

  d = d + 0.0;
  memcpy (&u, &d, sizeof u);
  u = (0 - (u >> 63)) & 0x3ff0000000000000ull;
  memcpy (&r, &u, sizeof r);
  return r;
}

/* split3 for |P| < 2^30: floor as truncate-and-fix.  P - T is exact and
 * D + 1 rounds the same exact value as P - floor (P): the same bits. */
KERNEL void
split3_fast (double p, uint32_t *cell, float *frac)
{
  double t = (double) (int32_t) p;
  double d = p - t;
  double one = one_if_negative (d);

  *cell = (uint32_t) (int32_t) (t - one);
  *frac = (float) (d + one);
}

KERNEL float
f_of (uint32_t u)
{
  float f;

  memcpy (&f, &u, sizeof f);
  return f;
}

KERNEL uint32_t
u_of (float f)
{
  uint32_t u;

  memcpy (&u, &f, sizeof u);
  return u;
}

/* Perlin 2002's 12 cube-edge gradients (16 entries, four repeated),
 * picked by the top hash bits and dotted with (X, Y, Z): u = k < 8 ? x
 * : y, v = k < 4 ? y : (k is 12 or 14 ? x : z), signs from bits 0 and 1;
 * selects and signs with integer masks so the loop vectorises. */
KERNEL float
grad3 (uint32_t h, float x, float y, float z)
{
  uint32_t k = h >> 28;
  uint32_t ux = u_of (x), uy = u_of (y), uz = u_of (z);
  uint32_t m8 = 0u - (uint32_t) (k < 8), m4 = 0u - (uint32_t) (k < 4);
  uint32_t mx = 0u - (uint32_t) ((k == 12) | (k == 14));
  uint32_t u = uy ^ ((ux ^ uy) & m8);
  uint32_t vzx = uz ^ ((ux ^ uz) & mx);
  uint32_t v = vzx ^ ((uy ^ vzx) & m4);

  return f_of (u ^ (k & 1) << 31) + f_of (v ^ (k & 2) << 30);
}

/* One octave of Perlin (VALUE false) or value noise at N3_BLK points
 * (QX, QY, QZ) in metres, into S.  A constant trip count and constant
 * VALUE and FAST let GCC's -O2 ("very cheap") vectoriser take the loop. */
KERNEL void
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
          split3_fast (qx[i] * o->freq + o->off[0], &xi, &xf);
          split3_fast (qy[i] * o->freq + o->off[1], &yi, &yf);
          split3_fast (qz[i] * o->freq + o->off[2], &zi, &zf);
        }
      else
        {
          split3 (qx[i] * o->freq + o->off[0], &xi, &xf);
          split3 (qy[i] * o->freq + o->off[1], &yi, &yf);
          split3 (qz[i] * o->freq + o->off[2], &zi, &zf);
        }
      hz0 = tg_mix32 (seed ^ zi * TG__FBM_HASH_KZ);
      hz1 = tg_mix32 (seed ^ (zi + 1u) * TG__FBM_HASH_KZ);
      h00 = tg_mix32 (hz0 ^ yi * N3_KY);
      h10 = tg_mix32 (hz0 ^ (yi + 1u) * N3_KY);
      h01 = tg_mix32 (hz1 ^ yi * N3_KY);
      h11 = tg_mix32 (hz1 ^ (yi + 1u) * N3_KY);
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
      s[i] = lerpf (lerpf (lerpf (c000, c100, u), lerpf (c010, c110, u), v),
                    lerpf (lerpf (c001, c101, u), lerpf (c011, c111, u), v), w)
             * (value ? 1.0f : N3_PERLIN_NORM);
    }
}

/* The whole fractal sum for N <= N3_BLK points; a partial block repeats
 * its last point, and the copies are dropped. */
KERNEL void
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
        fast &= fabs (qx[i] * o->freq + o->off[0]) < N3_FAST_LIMIT
                && fabs (qy[i] * o->freq + o->off[1]) < N3_FAST_LIMIT
                && fabs (qz[i] * o->freq + o->off[2]) < N3_FAST_LIMIT;
      if (nz->basis == TG__N3_VALUE)
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
      if (nz->mode == 0)
        for (int i = 0; i < N3_BLK; i++)
          acc[i] += amp * s[i];
      else if (nz->mode == 2)
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

#ifdef N3_HAVE_X86
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
#ifdef N3_HAVE_X86
      if (nz->isa == TG__FBM_ISA_AVX512)
        lattice_avx512 (nz, n, x + i, y + i, z + i, out + i);
      else if (nz->isa == TG__FBM_ISA_AVX2)
        lattice_avx2 (nz, n, x + i, y + i, z + i, out + i);
      else
#endif
        lattice_generic (nz, n, x + i, y + i, z + i, out + i);
    }
}

/* --- Perlin and value noise on a regular grid -----------------------------
 *
 * The mesher samples a block's corners, a regular grid, so most of the
 * lattice work can be shared between points.  Along each axis a sample's
 * lattice cell, fraction and fade are the same for a whole plane of
 * points: they are computed once per axis and octave.  A lattice corner's
 * hash and gradient serve every sample of the eight cells around it: per
 * octave, each row of lattice corners (one lattice y and z) is hashed once
 * and its gradients are spread over the grid's x samples (a "spread row":
 * for each sample, the gradients of the corners below and above it in x).
 * A row of samples then reads the four spread rows of its lattice cell and
 * does only the dot products and the interpolation, in lanes the compiler
 * vectorises.  Lattice z planes of spread rows are kept two at a time
 * (the cell's lower and upper corners) and move up with the samples.
 *
 * The arithmetic is the point kernel's, so the grid gives its bits: with g
 * in {-1, 0, 1}^3 and exactly two non-zero components, (g_y d_y + g_z
 * d_z) + g_x d_x rounds once, like grad3's sum of the two non-zero terms.
 * The two can differ only in the sign of a zero, which the fractal sum
 * never shows (the sum starts at +0, and +0 + -0 is +0); test_fields
 * compares the two paths bit for bit. */

#define G_CH 16      /* lanes per step along a grid row */
#define G_LAT_MAX 72 /* lattice corners per axis an octave may span */

typedef struct
{
  int span[3];       /* lattice cells between the first and the last sample */
  uint32_t cell0[3]; /* lattice cell of the first sample */
  int32_t *lx, *ly, *lz; /* per sample: lattice cell, from cell0 */
  float *xf, *x1f, *u;   /* per x sample (NP, padded with the last) */
  float *yf, *y1f, *v, *zf, *z1f, *w;
  float *plane[2];   /* spread rows of lattice z corners zl[0] and zl[1] */
  int zl[2];
} GridOct;

/* The lattice cell and fraction of coordinate C (metres) in octave O
 * along AXIS: the point kernel's arithmetic. */
KERNEL void
grid_split (const TgNoise3 *nz, const TgNoise3Octave *o, int axis, float c, uint32_t *cell,
            float *frac)
{
  split3 (((double) c + nz->offset[axis]) * o->freq + o->off[axis], cell, frac);
}

/* Gradient K of grad3 as a vector: u is x for K < 8, else y; v is y for
 * K < 4, x for 12 and 14, z otherwise; bit 0 flips u, bit 1 flips v. */
static void
grad_vec (uint32_t k, float *g)
{
  float su = (k & 1) ? -1.0f : 1.0f, sv = (k & 2) ? -1.0f : 1.0f;

  g[0] = g[1] = g[2] = 0.0f;
  if (k < 8)
    {
      g[0] = su;
      g[k < 4 ? 1 : 2] = sv;
    }
  else
    {
      g[1] = su;
      g[(k == 12 || k == 14) ? 0 : 2] = sv;
    }
}

/* The spread row of lattice corners (any x, YL, ZL) of octave O into ROW:
 * for x samples i < NP, gradient components gx, gy, gz of the corner below
 * (at [0, 1, 2] * NP + i) and above (at [3, 4, 5] * NP + i); value noise
 * keeps just the two corner values. */
static void
grid_spread_row (const TgNoise3Octave *o, bool value, const GridOct *g, int np, int yl, int zl,
                 float *restrict row)
{
  float gr[G_LAT_MAX][3];
  uint32_t hz = tg_mix32 (o->seed ^ (g->cell0[2] + (uint32_t) zl) * TG__FBM_HASH_KZ);
  uint32_t hy = tg_mix32 (hz ^ (g->cell0[1] + (uint32_t) yl) * N3_KY);

  for (int x = 0; x <= g->span[0] + 1; x++)
    {
      uint32_t h = tg_mix32 (hy ^ (g->cell0[0] + (uint32_t) x) * TG__FBM_HASH_KX);

      if (value)
        gr[x][0] = tg__fbm_value (h);
      else
        grad_vec (h >> 28, gr[x]);
    }
  if (value)
    for (int i = 0; i < np; i++)
      {
        row[i] = gr[g->lx[i]][0];
        row[np + i] = gr[g->lx[i] + 1][0];
      }
  else
    for (int i = 0; i < np; i++)
      for (int k = 0; k < 3; k++)
        {
          row[k * np + i] = gr[g->lx[i]][k];
          row[(3 + k) * np + i] = gr[g->lx[i] + 1][k];
        }
}

/* G_CH samples of one octave along a grid row, lanes I0 .. I0 + G_CH - 1,
 * from the spread rows R00 (lattice y, z), R10 (y + 1), R01 (z + 1) and R11
 * into S. */
KERNEL void
grid_row (bool value, int np, int i0, const GridOct *restrict g, int j, int k,
          const float *restrict r00, const float *restrict r10, const float *restrict r01,
          const float *restrict r11, float *restrict s)
{
  const float *xf = g->xf + i0, *x1f = g->x1f + i0, *u = g->u + i0;
  float yf = g->yf[j], y1f = g->y1f[j], v = g->v[j];
  float zf = g->zf[k], z1f = g->z1f[k], w = g->w[k];

  r00 += i0;
  r10 += i0;
  r01 += i0;
  r11 += i0;
  for (int q = 0; q < G_CH; q++)
    {
      float c000, c100, c010, c110, c001, c101, c011, c111;

      if (value)
        {
          c000 = r00[q];
          c100 = r00[np + q];
          c010 = r10[q];
          c110 = r10[np + q];
          c001 = r01[q];
          c101 = r01[np + q];
          c011 = r11[q];
          c111 = r11[np + q];
        }
      else
        {
          c000 = (r00[np + q] * yf + r00[2 * np + q] * zf) + r00[q] * xf[q];
          c100 = (r00[4 * np + q] * yf + r00[5 * np + q] * zf) + r00[3 * np + q] * x1f[q];
          c010 = (r10[np + q] * y1f + r10[2 * np + q] * zf) + r10[q] * xf[q];
          c110 = (r10[4 * np + q] * y1f + r10[5 * np + q] * zf) + r10[3 * np + q] * x1f[q];
          c001 = (r01[np + q] * yf + r01[2 * np + q] * z1f) + r01[q] * xf[q];
          c101 = (r01[4 * np + q] * yf + r01[5 * np + q] * z1f) + r01[3 * np + q] * x1f[q];
          c011 = (r11[np + q] * y1f + r11[2 * np + q] * z1f) + r11[q] * xf[q];
          c111 = (r11[4 * np + q] * y1f + r11[5 * np + q] * z1f) + r11[3 * np + q] * x1f[q];
        }
      s[q] = lerpf (lerpf (lerpf (c000, c100, u[q]), lerpf (c010, c110, u[q]), v),
                    lerpf (lerpf (c001, c101, u[q]), lerpf (c011, c111, u[q]), v), w)
             * (value ? 1.0f : N3_PERLIN_NORM);
    }
}

/* Makes sure G's planes hold the spread rows of lattice z corners ZL and
 * ZL + 1 (the samples move up one lattice cell at a time, so usually the
 * upper plane becomes the lower and one plane is rebuilt). */
static void
grid_planes (const TgNoise3Octave *o, bool value, GridOct *g, int np, int zl)
{
  size_t rs = (size_t) (value ? 2 : 6) * (size_t) np;

  for (int p = 0; p < 2; p++)
    {
      if (g->zl[p] == zl + p)
        continue;
      if (p == 0 && g->zl[1] == zl)
        {
          float *t = g->plane[0];
          g->plane[0] = g->plane[1];
          g->plane[1] = t;
          g->zl[0] = zl;
          g->zl[1] = -1;
          continue;
        }
      for (int yl = 0; yl <= g->span[1] + 1; yl++)
        grid_spread_row (o, value, g, np, yl, zl + p, g->plane[p] + (size_t) yl * rs);
      g->zl[p] = zl + p;
    }
}

/* The fractal sum over grid G (octave tables in OCT), a z slice at a
 * time, into OUT.  ACC and WGT hold a slice: NY rows of NP lanes. */
KERNEL void
grid_sum (const TgNoise3 *nz, const TgFieldGrid *gr, float *out, size_t sy, size_t sz,
          GridOct *oct, int np, float *restrict acc, float *restrict wgt)
{
  bool value = nz->basis == TG__N3_VALUE;
  size_t rs = (size_t) (value ? 2 : 6) * (size_t) np;
  float s[G_CH], scale = nz->out_scale, bias = nz->out_bias, amplitude = nz->amplitude;

  for (int k = 0; k < gr->nz; k++)
    {
      for (size_t t = 0; t < (size_t) gr->ny * (size_t) np; t++)
        {
          acc[t] = 0.0f;
          wgt[t] = 1.0f;
        }
      for (int oi = 0; oi < nz->n_octaves; oi++)
        {
          const TgNoise3Octave *o = &nz->oct[oi];
          GridOct *g = &oct[oi];
          float amp = o->amp;
          int zl = g->lz[k];

          grid_planes (o, value, g, np, zl);
          for (int j = 0; j < gr->ny; j++)
            {
              size_t yl = (size_t) g->ly[j];
              const float *r00 = g->plane[0] + yl * rs, *r10 = r00 + rs;
              const float *r01 = g->plane[1] + yl * rs, *r11 = r01 + rs;
              float *a = acc + (size_t) j * (size_t) np, *wt = wgt + (size_t) j * (size_t) np;

              for (int i0 = 0; i0 < np; i0 += G_CH)
                {
                  if (value)
                    grid_row (true, np, i0, g, j, k, r00, r10, r01, r11, s);
                  else
                    grid_row (false, np, i0, g, j, k, r00, r10, r01, r11, s);
                  if (nz->mode == 0)
                    for (int q = 0; q < G_CH; q++)
                      a[i0 + q] += amp * s[q];
                  else if (nz->mode == 2)
                    for (int q = 0; q < G_CH; q++)
                      a[i0 + q] += amp * fabsf (s[q]);
                  else
                    for (int q = 0; q < G_CH; q++)
                      {
                        float r = 1.0f - fabsf (s[q]);

                        r = r * r;
                        r = r * wt[i0 + q];
                        a[i0 + q] += amp * r;
                        r = r * TG__FBM_RIDGE_GAIN;
                        wt[i0 + q] = r > 1.0f ? 1.0f : r;
                      }
                }
            }
        }
      for (int j = 0; j < gr->ny; j++)
        {
          float *a = acc + (size_t) j * (size_t) np;

          for (int i0 = 0; i0 < np; i0 += G_CH)
            for (int q = 0; q < G_CH; q++)
              {
                float v = a[i0 + q] * scale + bias;

                v = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
                a[i0 + q] = amplitude * (2.0f * v - 1.0f);
              }
          memcpy (out + (size_t) k * sz + (size_t) j * sy, a, sizeof (float) * (size_t) gr->nx);
        }
    }
}

static void
grid_sum_generic (const TgNoise3 *nz, const TgFieldGrid *gr, float *out, size_t sy, size_t sz,
                  GridOct *oct, int np, float *acc, float *wgt)
{
  grid_sum (nz, gr, out, sy, sz, oct, np, acc, wgt);
}

#ifdef N3_HAVE_X86
__attribute__ ((target ("avx2"))) static void
grid_sum_avx2 (const TgNoise3 *nz, const TgFieldGrid *gr, float *out, size_t sy, size_t sz,
               GridOct *oct, int np, float *acc, float *wgt)
{
  grid_sum (nz, gr, out, sy, sz, oct, np, acc, wgt);
}

__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq"))) static void
grid_sum_avx512 (const TgNoise3 *nz, const TgFieldGrid *gr, float *out, size_t sy, size_t sz,
                 GridOct *oct, int np, float *acc, float *wgt)
{
  grid_sum (nz, gr, out, sy, sz, oct, np, acc, wgt);
}
#endif

/* Fills the per-axis tables of one axis: cell from CELL0, fraction, its
 * complement and fade, for N samples and N_PAD lanes (padding repeats the
 * last sample).  False when a sample falls outside the span (coordinates
 * not increasing). */
static bool
grid_axis (const TgNoise3 *nz, const TgNoise3Octave *o, int axis, const float *c, int n,
           int n_pad, uint32_t cell0, int span, int32_t *l, float *f, float *f1, float *fd)
{
  for (int i = 0; i < n_pad; i++)
    {
      uint32_t cell;
      float fr;

      grid_split (nz, o, axis, c[i < n ? i : n - 1], &cell, &fr);
      l[i] = (int32_t) (cell - cell0);
      if (l[i] < 0 || l[i] > span)
        return false;
      f[i] = fr;
      f1[i] = fr - 1.0f;
      fd[i] = tg__fbm_fade (fr);
    }
  return true;
}

static size_t
align64 (size_t n)
{
  return (n + 63) & ~(size_t) 63;
}

/* Carves N bytes from *P (64-byte aligned). */
static void *
carve (unsigned char **p, size_t n)
{
  void *r = *p;

  *p += align64 (n);
  return r;
}

/* 1 when the noise has no grid path for G (a basis without one, an octave
 * finer than the grid's spacing, a grid not increasing), else 0 or
 * TG_ENOMEM. */
static int
noise3_grid (const TgNoise3 *nz, const TgFieldGrid *gr, float *out, size_t sy, size_t sz,
             TgFieldScratch *w)
{
  const float *cs[3] = { gr->xs, gr->ys, gr->zs };
  int n[3] = { gr->nx, gr->ny, gr->nz };
  int np = (gr->nx + G_CH - 1) / G_CH * G_CH;
  bool value = nz->basis == TG__N3_VALUE;
  GridOct oct[TG__N3_MAX_OCTAVES];
  size_t bytes = 0;
  unsigned char *p;
  int rc;

  if ((nz->basis != TG__N3_PERLIN && !value) || gr->nx < 1 || gr->ny < 1 || gr->nz < 1
      || gr->nx > TG_FIELD_GRID_MAX || gr->ny > TG_FIELD_GRID_MAX || gr->nz > TG_FIELD_GRID_MAX)
    return 1;
  /* Spans first, to size the scratch. */
  for (int oi = 0; oi < nz->n_octaves; oi++)
    {
      GridOct *g = &oct[oi];

      for (int a = 0; a < 3; a++)
        {
          uint32_t last;
          float fr;

          grid_split (nz, &nz->oct[oi], a, cs[a][0], &g->cell0[a], &fr);
          grid_split (nz, &nz->oct[oi], a, cs[a][n[a] - 1], &last, &fr);
          if (last - g->cell0[a] > G_LAT_MAX - 2)
            return 1;
          g->span[a] = (int) (last - g->cell0[a]);
        }
      bytes += 3 * align64 (sizeof (int32_t) * TG_FIELD_GRID_MAX)
               + 9 * align64 (sizeof (float) * TG_FIELD_GRID_MAX)
               + 2 * align64 (sizeof (float) * (size_t) (value ? 2 : 6) * (size_t) np
                              * (size_t) (g->span[1] + 2));
    }
  bytes += 2 * align64 (sizeof (float) * (size_t) np * (size_t) gr->ny);
  if ((rc = tg_field_scratch_reserve (w, bytes)) < 0)
    return rc;
  p = w->buf;
  for (int oi = 0; oi < nz->n_octaves; oi++)
    {
      GridOct *g = &oct[oi];
      const TgNoise3Octave *o = &nz->oct[oi];
      size_t pl = sizeof (float) * (size_t) (value ? 2 : 6) * (size_t) np
                  * (size_t) (g->span[1] + 2);

      g->lx = carve (&p, sizeof (int32_t) * TG_FIELD_GRID_MAX);
      g->ly = carve (&p, sizeof (int32_t) * TG_FIELD_GRID_MAX);
      g->lz = carve (&p, sizeof (int32_t) * TG_FIELD_GRID_MAX);
      g->xf = carve (&p, sizeof (float) * TG_FIELD_GRID_MAX);
      g->x1f = carve (&p, sizeof (float) * TG_FIELD_GRID_MAX);
      g->u = carve (&p, sizeof (float) * TG_FIELD_GRID_MAX);
      g->yf = carve (&p, sizeof (float) * TG_FIELD_GRID_MAX);
      g->y1f = carve (&p, sizeof (float) * TG_FIELD_GRID_MAX);
      g->v = carve (&p, sizeof (float) * TG_FIELD_GRID_MAX);
      g->zf = carve (&p, sizeof (float) * TG_FIELD_GRID_MAX);
      g->z1f = carve (&p, sizeof (float) * TG_FIELD_GRID_MAX);
      g->w = carve (&p, sizeof (float) * TG_FIELD_GRID_MAX);
      g->plane[0] = carve (&p, pl);
      g->plane[1] = carve (&p, pl);
      g->zl[0] = g->zl[1] = -1;
      if (!grid_axis (nz, o, 0, gr->xs, gr->nx, np, g->cell0[0], g->span[0], g->lx, g->xf,
                      g->x1f, g->u)
          || !grid_axis (nz, o, 1, gr->ys, gr->ny, gr->ny, g->cell0[1], g->span[1], g->ly,
                         g->yf, g->y1f, g->v)
          || !grid_axis (nz, o, 2, gr->zs, gr->nz, gr->nz, g->cell0[2], g->span[2], g->lz,
                         g->zf, g->z1f, g->w))
        return 1;
    }
  {
    float *acc = carve (&p, sizeof (float) * (size_t) np * (size_t) gr->ny);
    float *wgt = carve (&p, sizeof (float) * (size_t) np * (size_t) gr->ny);

#ifdef N3_HAVE_X86
    if (nz->isa == TG__FBM_ISA_AVX512)
      grid_sum_avx512 (nz, gr, out, sy, sz, oct, np, acc, wgt);
    else if (nz->isa == TG__FBM_ISA_AVX2)
      grid_sum_avx2 (nz, gr, out, sy, sz, oct, np, acc, wgt);
    else
#endif
      grid_sum_generic (nz, gr, out, sy, sz, oct, np, acc, wgt);
  }
  return 0;
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
  n *= N3_SIMPLEX_NORM;
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

          if (d < d1)
            {
              d2 = d1;
              d1 = d;
            }
          else if (d < d2)
            d2 = d;
        }
  f1 = sqrtf (d1);
  f2 = sqrtf (d2);
  if (ret == 0)
    v = f1 * N3_WORLEY_F1_NORM - 1.0f;
  else if (ret == 1)
    v = f2 * N3_WORLEY_F2_NORM - 1.0f;
  else
    v = (f2 - f1) * N3_WORLEY_F2_NORM - 1.0f;
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
    case TG__N3_SIMPLEX:
      lip_basis = N3_SIMPLEX_LIP * N3_SIMPLEX_NORM;
      break;
    case TG__N3_VALUE:
      lip_basis = N3_VALUE_LIP;
      break;
    case TG__N3_WORLEY:
      lip_basis = (p->worley_return == 2 ? 2.0 : 1.0)
                  * (p->worley_return == 0 ? N3_WORLEY_F1_NORM : N3_WORLEY_F2_NORM);
      break;
    default:
      lip_basis = N3_PERLIN_LIP * N3_PERLIN_NORM;
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
      if (p->mode == 1)
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
  if (p->mode == 0)
    {
      n->out_scale = (float) (0.5 / sum);
      n->out_bias = 0.5f;
    }
  else
    {
      n->out_scale = (float) (1.0 / sum);
      n->out_bias = 0.0f;
    }
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

      if (n->basis == TG__N3_SIMPLEX)
        s = simplex3 (o->seed, px, py, pz);
      else
        {
          tg__fbm_split (px, &xi, &xf);
          tg__fbm_split (py, &yi, &yf);
          tg__fbm_split (pz, &zi, &zf);
          s = worley3 (o->seed, n->worley_return, xi, yi, zi, xf, yf, zf);
        }
      if (n->mode == 0)
        acc += o->amp * s;
      else if (n->mode == 2)
        acc += o->amp * fabsf (s);
      else
        {
          float r = 1.0f - fabsf (s);

          r = r * r;
          r = r * w;
          acc += o->amp * r;
          w = r * TG__FBM_RIDGE_GAIN;
          if (w > 1.0f)
            w = 1.0f;
        }
    }
  v = acc * n->out_scale + n->out_bias;
  v = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
  return n->amplitude * (2.0f * v - 1.0f);
}

void
tg__noise3_eval (const TgNoise3 *n, int count, const float *x, const float *y, const float *z,
                 float *out)
{
  if (n->basis == TG__N3_PERLIN || n->basis == TG__N3_VALUE)
    {
      lattice_eval (n, count, x, y, z, out);
      return;
    }
  for (int i = 0; i < count; i++)
    out[i] = noise3_sample (n, x[i], y[i], z[i]);
}

/* --- field.noise -------------------------------------------------------- */

typedef struct
{
  int basis;
  int worley_return;
  int mode;
  double amplitude_m;
  double scale_m;
  int octaves;
  double persistence;
  double lacunarity;
  int seed;
  double offset_m[3];
} NoiseParams;

static const TgParamDesc noise_params[] = {
  TG__NOISE3_PARAMS (NoiseParams, 10.0),
};

static const TgPortDesc field_out[] = {
  { .name = "field", .type = TG_TYPE_FIELD, .label = N_("Field"),
    .help = N_("The implicit field, negative inside") },
};

static void
noise_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                  float *out)
{
  tg__noise3_eval (f->data, n, x, y, z, out);
}

static int
noise_field_grid (const TgField *f, const TgFieldGrid *g, float *out, size_t sy, size_t sz,
                  TgFieldScratch *scratch)
{
  return noise3_grid (f->data, g, out, sy, sz, scratch);
}

static void
noise_params_copy (TgNoise3Params *d, const NoiseParams *p)
{
  d->basis = p->basis;
  d->worley_return = p->worley_return;
  d->mode = p->mode;
  d->amplitude_m = p->amplitude_m;
  d->scale_m = p->scale_m;
  d->octaves = p->octaves;
  d->persistence = p->persistence;
  d->lacunarity = p->lacunarity;
  d->seed = p->seed;
  memcpy (d->offset_m, p->offset_m, sizeof d->offset_m);
}

static int
noise_eval (TgEvalCtx *c)
{
  const NoiseParams *p = tg_eval_params (c);
  TgNoise3Params np;
  TgNoise3 *plan = malloc (sizeof *plan);
  TgField *f;

  if (plan == NULL)
    return tg_eval_fail (c, TG_ENOMEM, "out of memory");
  noise_params_copy (&np, p);
  tg__noise3_plan (plan, &np, tg_eval_seed (c, p->seed));
  f = tg__field_new (noise_field_eval, plan, free);
  if (f == NULL)
    return tg_eval_fail (c, TG_ENOMEM, "out of memory");
  if (plan->basis == TG__N3_PERLIN || plan->basis == TG__N3_VALUE)
    f->eval_grid = noise_field_grid;
  f->lipschitz = plan->lipschitz;
  f->bounded = false;
  return tg__field_output (c, f);
}

static const TgNodeDesc noise_desc = {
  .type = "field.noise",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("3D Noise Field"),
  .help = N_("3D fractal noise as a field, from minus to plus the amplitude in metres: the "
             "bases and octave shaping of FBM Noise, in three dimensions.  Use it through "
             "Displace, or mesh it with an iso level for caves and sponges."),
  TG_OUTPUTS (field_out),
  TG_PARAMS (NoiseParams, noise_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = noise_eval,
  .version = 1,
};
TG_NODE_REGISTER (noise_desc);

/* --- field.from_height ---------------------------------------------------- */

typedef struct
{
  double offset_m;
} FromHeightParams;

static const TgParamDesc from_height_params[] = {
  TG_PARAM_FLOAT (FromHeightParams, offset_m, .label = N_("Offset"), .def = 0.0, .min = -1e6,
                  .max = 1e6, .soft_min = -1000.0, .soft_max = 1000.0, .unit = "m",
                  .help = N_("Raises the solid by this many metres")),
};

static const TgPortDesc from_height_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("The terrain; 1.0 is the world's height in metres") },
};

typedef struct
{
  TgValue *height;  /* reference held for the field's lifetime */
  double x0, z0;    /* world position of sample (0, 0): NW corner */
  double inv_cell;
  int w, h;
  float scale;      /* world.height_m */
  float offset;     /* metres */
} FromHeight;

static void
from_height_free (void *p)
{
  FromHeight *d = p;

  tg_value_unref (d->height);
  free (d);
}

/* Bilinear in world metres, the border repeating beyond the world; row 0
 * is north (+Z maximum), column 0 west (-X minimum). */
static void
from_height_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                        float *out)
{
  const FromHeight *d = f->data;
  const float *data = d->height->data;
  double wmax = (double) (d->w - 1), hmax = (double) (d->h - 1);

  for (int i = 0; i < n; i++)
    {
      double cx = ((double) x[i] - d->x0) * d->inv_cell;
      double cz = (d->z0 - (double) z[i]) * d->inv_cell;
      int i0, j0, i1, j1;
      float fx, fz, a, b, hgt;

      cx = cx > 0.0 ? (cx < wmax ? cx : wmax) : 0.0;
      cz = cz > 0.0 ? (cz < hmax ? cz : hmax) : 0.0;
      i0 = (int) cx;
      j0 = (int) cz;
      i1 = i0 + 1 < d->w ? i0 + 1 : i0;
      j1 = j0 + 1 < d->h ? j0 + 1 : j0;
      fx = (float) (cx - (double) i0);
      fz = (float) (cz - (double) j0);
      a = lerpf (data[(size_t) j0 * (size_t) d->w + (size_t) i0],
                 data[(size_t) j0 * (size_t) d->w + (size_t) i1], fx);
      b = lerpf (data[(size_t) j1 * (size_t) d->w + (size_t) i0],
                 data[(size_t) j1 * (size_t) d->w + (size_t) i1], fx);
      hgt = lerpf (a, b, fz);
      out[i] = y[i] - (hgt * d->scale + d->offset);
    }
}

static int
from_height_eval (TgEvalCtx *c)
{
  const FromHeightParams *p = tg_eval_params (c);
  const TgValue *in = tg_eval_input (c, 0);
  const TgWorld *world = tg_eval_world (c);
  FromHeight *d;
  TgField *f;
  double sx = 0.0, sz = 0.0, slope;

  if (in == NULL || in->data == NULL || in->channels != 1)
    return tg_eval_fail (c, TG_EMISSING, "input 'height' has no single-channel data");
  d = calloc (1, sizeof *d);
  if (d == NULL)
    return tg_eval_fail (c, TG_ENOMEM, "out of memory");
  d->height = tg_value_ref ((TgValue *) in);
  d->w = in->region.width;
  d->h = in->region.height;
  d->x0 = tg_region_x (&in->region, 0);
  d->z0 = tg_region_z (&in->region, 0);
  d->inv_cell = 1.0 / in->region.cell;
  d->scale = (float) world->height_m;
  d->offset = (float) p->offset_m;

  /* The steepest step between neighbours bounds the bilinear gradient. */
  for (int j = 0; j < d->h; j++)
    {
      const float *r0 = in->data + (size_t) j * (size_t) d->w;
      const float *r1 = j + 1 < d->h ? r0 + d->w : NULL;

      for (int i = 0; i < d->w; i++)
        {
          if (i + 1 < d->w)
            sx = fmax (sx, fabs ((double) r0[i + 1] - (double) r0[i]));
          if (r1)
            sz = fmax (sz, fabs ((double) r1[i] - (double) r0[i]));
        }
    }
  sx *= world->height_m / in->region.cell;
  sz *= world->height_m / in->region.cell;
  slope = sqrt (1.0 + sx * sx + sz * sz);

  f = tg__field_new (from_height_field_eval, d, from_height_free);
  if (f == NULL)
    return tg_eval_fail (c, TG_ENOMEM, "out of memory");
  f->lipschitz = (float) (slope * 1.001);
  f->bounded = false;
  return tg__field_output (c, f);
}

static const TgNodeDesc from_height_desc = {
  .type = "field.from_height",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("Terrain Field"),
  .help = N_("The terrain as a solid: the field is y minus the terrain height at (x, z), "
             "negative below the ground.  Combine it with shapes to cut tunnels and caves "
             "or add overhangs."),
  TG_INPUTS (from_height_inputs),
  TG_OUTPUTS (field_out),
  TG_PARAMS (FromHeightParams, from_height_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = from_height_eval,
  .version = 1,
};
TG_NODE_REGISTER (from_height_desc);
