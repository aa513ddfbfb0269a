/* 3D noise on a regular grid: the fast path of the lattice bases (perlin
 * and value) for the iso-surface mesher, which samples each block's
 * corners as a grid.
 *
 * Most of the lattice work can be shared between the points.  Along each
 * axis a sample's lattice cell, fraction and fade are the same for a
 * whole plane of points: they are computed once per axis and octave.  A
 * lattice corner's hash and gradient serve every sample of the eight
 * cells around it: per octave, each row of lattice corners (one lattice y
 * and z) is hashed once and its gradients are spread over the grid's x
 * samples (a "spread row": for each sample, the gradients of the corners
 * below and above it in x).  A row of samples then reads the four spread
 * rows of its lattice cell and does only the dot products and the
 * interpolation, in lanes the compiler vectorises.  Lattice z planes of
 * spread rows are kept two at a time (the cell's lower and upper corners)
 * and move up with the samples.
 *
 * The AVX-512 build of Perlin noise keeps lattice rows instead (each
 * corner's gradient once, and only gx spread over the x samples, which
 * every sample row of the lattice row's cells reads): per sample row it
 * computes each corner's gy dy + gz dz once and permutes that from
 * registers to the lanes, where one FMA adds gx dx (exact: gx is -1, 0 or
 * 1, so the FMA rounds once like the sum).  A row of at most 16 corners
 * (the coarse octaves) stays in registers.
 *
 * The arithmetic is the point kernel's (noise3.c), so the grid gives its
 * bits: with g in {-1, 0, 1}^3 and exactly two non-zero components,
 * (g_y d_y + g_z d_z) + g_x d_x rounds once, like grad3's sum of the two
 * non-zero terms.  The two can differ only in the sign of a zero, which
 * the fractal sum never shows (the sum starts at +0, and +0 + -0 is +0);
 * test_fields compares the two paths bit for bit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/error.h>
#include <tgraph/hash.h>

#include "noise3.h"

#ifdef TG__FBM_HAVE_X86
#include <immintrin.h>
#endif

#define G_CH 16      /* lanes per step along a grid row */
#define G_LAT_MAX 72 /* lattice corners per axis an octave may span */

typedef struct
{
  int span[3];       /* lattice cells between the first and the last sample */
  uint32_t cell0[3]; /* lattice cell of the first sample */
  int32_t *lx, *ly, *lz; /* per sample: lattice cell, from cell0 */
  float *xf, *x1f, *u;   /* per x sample (NP, padded with the last) */
  float *yf, *y1f, *v, *zf, *z1f, *w;
  float *plane[2];   /* rows of lattice z corners zl[0] and zl[1] */
  int zl[2];
  int lp;            /* lattice rows (below): floats per component, else 0 */
  size_t lrs;        /* floats per lattice row: 3 lp, and the spread gx (2 np) */
} GridOct;

/* The lattice cell and fraction of coordinate C (metres) in octave O
 * along AXIS: the point kernel's arithmetic. */
TG__FBM_KERNEL void
grid_split (const TgNoise3 *nz, const TgNoise3Octave *o, int axis, float c, uint32_t *cell,
            float *frac)
{
  tg__noise3_split (((double) c + nz->offset[axis]) * o->freq + o->off[axis], cell, frac);
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
  uint32_t hy = tg_mix32 (hz ^ (g->cell0[1] + (uint32_t) yl) * TG__NOISE3_KY);

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
TG__FBM_KERNEL void
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
      s[q] = tg__noise3_trilerp (c000, c100, c010, c110, c001, c101, c011, c111, u[q], v, w)
             * (value ? 1.0f : TG__NOISE3_PERLIN_NORM);
    }
}

#ifdef TG__FBM_HAVE_X86
static void grid_lattice_row (const TgNoise3Octave *o, const GridOct *g, int np, int yl, int zl,
                              float *restrict row);
#endif

/* Makes sure G's planes hold the spread rows of lattice z corners ZL and
 * ZL + 1 (the samples move up one lattice cell at a time, so usually the
 * upper plane becomes the lower and one plane is rebuilt). */
static void
grid_planes (const TgNoise3Octave *o, bool value, GridOct *g, int np, int zl)
{
  size_t rs = g->lp > 0 ? g->lrs : (size_t) (value ? 2 : 6) * (size_t) np;

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
#ifdef TG__FBM_HAVE_X86
        if (g->lp > 0)
          grid_lattice_row (o, g, np, yl, zl + p, g->plane[p] + (size_t) yl * rs);
        else
#endif
          grid_spread_row (o, value, g, np, yl, zl + p, g->plane[p] + (size_t) yl * rs);
      g->zl[p] = zl + p;
    }
}

/* One z slice's sums in ACC (NY rows of NP lanes) scaled to the noise's
 * range straight into OUT (rows SY apart, NX long). */
static inline void
scale_plane (const TgNoise3 *nz, const TgFieldGrid *gr, const float *acc, int np, float *out,
             size_t sy)
{
  float scale = nz->out_scale, bias = nz->out_bias, amplitude = nz->amplitude;

  for (int j = 0; j < gr->ny; j++)
    {
      const float *restrict a = acc + (size_t) j * (size_t) np;
      float *restrict o = out + (size_t) j * sy;

      for (int i = 0; i < gr->nx; i++)
        {
          float v = a[i] * scale + bias;

          v = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
          o[i] = amplitude * (2.0f * v - 1.0f);
        }
    }
}

/* The fractal sum over grid G (octave tables in OCT), a z slice at a
 * time, into OUT.  ACC and WGT hold a slice: NY rows of NP lanes. */
TG__FBM_KERNEL void
grid_sum (const TgNoise3 *nz, const TgFieldGrid *gr, float *out, size_t sy, size_t sz,
          GridOct *oct, int np, float *restrict acc, float *restrict wgt)
{
  bool value = nz->basis == TG__FBM_VALUE;
  size_t rs = (size_t) (value ? 2 : 6) * (size_t) np;
  float s[G_CH];

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
                  if (nz->mode == TG__FBM_MODE_FBM)
                    for (int q = 0; q < G_CH; q++)
                      a[i0 + q] += amp * s[q];
                  else if (nz->mode == TG__FBM_MODE_BILLOW)
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
      scale_plane (nz, gr, acc, np, out + (size_t) k * sz, sy);
    }
}

static void
grid_sum_generic (const TgNoise3 *nz, const TgFieldGrid *gr, float *out, size_t sy, size_t sz,
                  GridOct *oct, int np, float *acc, float *wgt)
{
  grid_sum (nz, gr, out, sy, sz, oct, np, acc, wgt);
}

#ifdef TG__FBM_HAVE_X86
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

#ifdef TG__FBM_HAVE_X86
#define AVX512_KERNEL                                                                     \
  static inline __attribute__ ((always_inline, target ("avx512f,avx512vl,avx512bw,avx512dq")))

AVX512_KERNEL __m512
lerp16 (__m512 a, __m512 b, __m512 t)
{
  return _mm512_add_ps (a, _mm512_mul_ps (t, _mm512_sub_ps (b, a)));
}

/* The dot products of 16 samples with the corners below (C0) and above
 * (C1) them in lattice row T (gy yq + gz zq per corner) and GX: T + gx xf,
 * one rounding like the spread rows' sum, since gx xf is exact (gx is -1,
 * 0 or 1), so the FMA gives the same bits.  The corners are permuted from
 * two registers of the row (corners BASE .. BASE + 31, IDX from BASE). */
AVX512_KERNEL void
lat_corners (const float *t, const float *gx, int base, __m512i idx, __m512i idx1, __m512 xf,
             __m512 x1f, __m512 *c0, __m512 *c1)
{
  __m512 tlo = _mm512_loadu_ps (t + base), thi = _mm512_loadu_ps (t + base + 16);
  __m512 glo = _mm512_loadu_ps (gx + base), ghi = _mm512_loadu_ps (gx + base + 16);

  *c0 = _mm512_fmadd_ps (_mm512_permutex2var_ps (glo, idx, ghi), xf,
                         _mm512_permutex2var_ps (tlo, idx, thi));
  *c1 = _mm512_fmadd_ps (_mm512_permutex2var_ps (glo, idx1, ghi), x1f,
                         _mm512_permutex2var_ps (tlo, idx1, thi));
}

/* The same with gathers, for 16 samples that span more than 30 lattice
 * cells (a grid finer than the lattice does not: a fallback). */
AVX512_KERNEL void
lat_corners_gather (const float *t, const float *gx, __m512i lx, __m512 xf, __m512 x1f,
                    __m512 *c0, __m512 *c1)
{
  __m512i lx1 = _mm512_add_epi32 (lx, _mm512_set1_epi32 (1));

  *c0 = _mm512_fmadd_ps (_mm512_i32gather_ps (lx, gx, 4), xf, _mm512_i32gather_ps (lx, t, 4));
  *c1 = _mm512_fmadd_ps (_mm512_i32gather_ps (lx1, gx, 4), x1f,
                         _mm512_i32gather_ps (lx1, t, 4));
}

/* The lattice row of corners (any x, YL, ZL) of a Perlin octave O into
 * ROW, for the AVX-512 kernel (lattice rows exist only there): gradient
 * components gx, gy, gz of lattice corner x at [0, 1, 2] * G->lp + x,
 * zeros past the span (the kernel reads whole registers of it and
 * permutes the corners to the samples); then, in a row of at most 16
 * corners, for the NP x samples, the gx of the corner below each (at 3
 * G->lp + i) and above it (3 G->lp + NP + i).  gx does not depend on the
 * sample's y and z, so spread once here it serves every sample row of the
 * lattice row's cells.  Sixteen corners at a time: the hash in lanes,
 * grad_vec's table permuted by its top four bits, the spread permuted by
 * the samples' cells. */
__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq"))) static void
grid_lattice_row (const TgNoise3Octave *o, const GridOct *g, int np, int yl, int zl,
                  float *restrict row)
{
  uint32_t hz = tg_mix32 (o->seed ^ (g->cell0[2] + (uint32_t) zl) * TG__FBM_HASH_KZ);
  uint32_t hy = tg_mix32 (hz ^ (g->cell0[1] + (uint32_t) yl) * TG__NOISE3_KY);
  const __m512i lane = _mm512_setr_epi32 (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i one = _mm512_set1_epi32 (1);
  /* grad_vec (k) for k = 0 .. 15, a component a row. */
  static const float grad_tab[3][16] = {
    { 1, -1, 1, -1, 1, -1, 1, -1, 0, 0, 0, 0, 1, 0, -1, 0 },
    { 1, 1, -1, -1, 0, 0, 0, 0, 1, -1, 1, -1, 1, -1, 1, -1 },
    { 0, 0, 0, 0, 1, 1, -1, -1, 1, 1, -1, -1, 0, 1, 0, -1 },
  };
  const __m512 tab[3] = { _mm512_loadu_ps (grad_tab[0]), _mm512_loadu_ps (grad_tab[1]),
                          _mm512_loadu_ps (grad_tab[2]) };
  size_t lp = (size_t) g->lp;
  int n = g->span[0] + 2; /* corners */
  for (int x0 = 0; x0 < (int) lp; x0 += 16)
    {
      __m512i x = _mm512_add_epi32 (_mm512_set1_epi32 ((int) (g->cell0[0] + (uint32_t) x0)), lane);
      __m512i h = _mm512_xor_si512 (_mm512_set1_epi32 ((int) hy),
                                    _mm512_mullo_epi32 (x, _mm512_set1_epi32 ((int) TG__FBM_HASH_KX)));
      __mmask16 used = x0 >= n ? 0 : x0 + 16 <= n ? 0xffff : (__mmask16) ((1u << (n - x0)) - 1);

      h = _mm512_xor_si512 (h, _mm512_srli_epi32 (h, 16));
      h = _mm512_mullo_epi32 (h, _mm512_set1_epi32 (0x7feb352d));
      h = _mm512_xor_si512 (h, _mm512_srli_epi32 (h, 15));
      h = _mm512_mullo_epi32 (h, _mm512_set1_epi32 ((int) 0x846ca68bU));
      h = _mm512_xor_si512 (h, _mm512_srli_epi32 (h, 16));
      h = _mm512_srli_epi32 (h, 28);
      for (int c = 0; c < 3; c++)
        _mm512_storeu_ps (row + (size_t) c * lp + (size_t) x0,
                          _mm512_maskz_permutexvar_ps (used, h, tab[c]));
    }
  /* Only a row of at most 16 corners is read spread (the kernel permutes
   * wider rows' gx along with their partial sums). */
  if (n <= 16)
    for (int i0 = 0; i0 < np; i0 += 16)
      {
        __m512i lx = _mm512_loadu_si512 (g->lx + i0), lx1 = _mm512_add_epi32 (lx, one);
        __m512 gx = _mm512_loadu_ps (row);
        float *sp = row + 3 * lp + (size_t) i0;

        _mm512_storeu_ps (sp, _mm512_permutexvar_ps (lx, gx));
        _mm512_storeu_ps (sp + np, _mm512_permutexvar_ps (lx1, gx));
      }
}

/* grid_sum for Perlin noise in AVX-512, from lattice rows (grid_lattice_row)
 * instead of spread rows: per sample row and octave, each lattice corner's
 * gy yq + gz zq is computed once into TB (the four lattice rows of the
 * cell, G->lp floats each), and a sample's corner is that plus gx xf, its
 * gradients and partial sums permuted from registers to the lanes.  The
 * operations on each value are grid_row's, in the same order, so the bits
 * are the same (test_fields, every ISA). */
__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq,prfchw"))) static void
grid_sum_perlin_avx512 (const TgNoise3 *nz, const TgFieldGrid *gr, float *out, size_t sy,
                        size_t sz, GridOct *oct, int np, float *restrict acc,
                        float *restrict wgt, float *restrict tb)
{
  const __m512 norm = _mm512_set1_ps (TG__NOISE3_PERLIN_NORM), one = _mm512_set1_ps (1.0f);
  const __m512 gain = _mm512_set1_ps (TG__FBM_RIDGE_GAIN);
  const __m512i sign = _mm512_set1_epi32 (0x7fffffff);
  int lp_max = 0;

  /* Past the corners used, TB is read into registers but never chosen. */
  for (int oi = 0; oi < nz->n_octaves; oi++)
    lp_max = oct[oi].lp > lp_max ? oct[oi].lp : lp_max;
  memset (tb, 0, sizeof (float) * 4 * (size_t) lp_max);
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
          __m512 amp = _mm512_set1_ps (o->amp), w = _mm512_set1_ps (g->w[k]);
          size_t lp = (size_t) g->lp, rs = g->lrs;
          size_t tl = (size_t) (g->span[0] + 2 + 15) / 16 * 16; /* corners used */
          __m512 zq[4];

          grid_planes (o, false, g, np, g->lz[k]);
          zq[0] = zq[1] = _mm512_set1_ps (g->zf[k]);
          zq[2] = zq[3] = _mm512_set1_ps (g->z1f[k]);
          for (int j = 0; j < gr->ny; j++)
            {
              size_t yl = (size_t) g->ly[j];
              const float *r[4];
              __m512 yq[4], v = _mm512_set1_ps (g->v[j]), t16[4];
              float *a = acc + (size_t) j * (size_t) np, *wt = wgt + (size_t) j * (size_t) np;

              r[0] = g->plane[0] + yl * rs;
              r[1] = r[0] + rs;
              r[2] = g->plane[1] + yl * rs;
              r[3] = r[2] + rs;
              /* The slice's output row, for writing, while the octaves are
               * summed: scale_plane's stores then find their lines (the
               * mesher's slab is larger than L2; stores that miss stall a
               * pass that only stores). */
              if (oi == 0)
                {
                  const char *orow = (const char *) (out + (size_t) k * sz + (size_t) j * sy);

                  for (int b = 0; b < gr->nx * 4; b += 64)
                    __builtin_prefetch (orow + b, 1, 3);
                  __builtin_prefetch (orow + gr->nx * 4 - 1, 1, 3);
                }
              yq[0] = yq[2] = _mm512_set1_ps (g->yf[j]);
              yq[1] = yq[3] = _mm512_set1_ps (g->y1f[j]);
              /* A row of at most 16 corners stays in registers (T16, G16). */
              if (tl == 16)
                for (int q = 0; q < 4; q++)
                  {
                    t16[q] = _mm512_add_ps (_mm512_mul_ps (_mm512_loadu_ps (r[q] + lp), yq[q]),
                                            _mm512_mul_ps (_mm512_loadu_ps (r[q] + 2 * lp), zq[q]));
                  }
              else
                for (int q = 0; q < 4; q++)
                  for (size_t x = 0; x < tl; x += 16)
                    _mm512_storeu_ps (
                      tb + q * lp + x,
                      _mm512_add_ps (_mm512_mul_ps (_mm512_loadu_ps (r[q] + lp + x), yq[q]),
                                     _mm512_mul_ps (_mm512_loadu_ps (r[q] + 2 * lp + x), zq[q])));
              for (int i0 = 0; i0 < np; i0 += 16)
                {
                  __m512i lx = _mm512_loadu_si512 (g->lx + i0);
                  __m512 xf = _mm512_loadu_ps (g->xf + i0), x1f = _mm512_loadu_ps (g->x1f + i0);
                  __m512 u = _mm512_loadu_ps (g->u + i0);
                  __m512 c[4][2], s;
                  int base = g->lx[i0] & ~15; /* aligned with the stores to TB */

                  if (tl == 16)
                    {
                      __m512i lx1 = _mm512_add_epi32 (lx, _mm512_set1_epi32 (1));

                      for (int q = 0; q < 4; q++)
                        {
                          const float *sg = r[q] + 3 * lp + (size_t) i0; /* spread gx */

                          c[q][0] = _mm512_fmadd_ps (_mm512_loadu_ps (sg), xf,
                                                     _mm512_permutexvar_ps (lx, t16[q]));
                          c[q][1] = _mm512_fmadd_ps (_mm512_loadu_ps (sg + np), x1f,
                                                     _mm512_permutexvar_ps (lx1, t16[q]));
                        }
                    }
                  else if (g->lx[i0 + 15] - base < 31)
                    {
                      __m512i idx = _mm512_sub_epi32 (lx, _mm512_set1_epi32 (base));
                      __m512i idx1 = _mm512_add_epi32 (idx, _mm512_set1_epi32 (1));

                      for (int q = 0; q < 4; q++)
                        lat_corners (tb + q * lp, r[q], base, idx, idx1, xf, x1f, &c[q][0],
                                     &c[q][1]);
                    }
                  else
                    for (int q = 0; q < 4; q++)
                      lat_corners_gather (tb + q * lp, r[q], lx, xf, x1f, &c[q][0], &c[q][1]);
                  /* c[q]: 0 (y, z), 1 (y + 1, z), 2 (y, z + 1), 3 (y + 1, z + 1) */
                  s = lerp16 (lerp16 (lerp16 (c[0][0], c[0][1], u), lerp16 (c[1][0], c[1][1], u), v),
                              lerp16 (lerp16 (c[2][0], c[2][1], u), lerp16 (c[3][0], c[3][1], u), v),
                              w);
                  s = _mm512_mul_ps (s, norm);
                  if (nz->mode == TG__FBM_MODE_FBM)
                    _mm512_storeu_ps (a + i0, _mm512_add_ps (_mm512_loadu_ps (a + i0),
                                                             _mm512_mul_ps (amp, s)));
                  else if (nz->mode == TG__FBM_MODE_BILLOW)
                    _mm512_storeu_ps (
                      a + i0, _mm512_add_ps (_mm512_loadu_ps (a + i0),
                                             _mm512_mul_ps (amp, _mm512_castsi512_ps (
                                                                   _mm512_and_si512 (
                                                                     _mm512_castps_si512 (s),
                                                                     sign)))));
                  else
                    {
                      __m512 rr = _mm512_sub_ps (
                        one, _mm512_castsi512_ps (
                               _mm512_and_si512 (_mm512_castps_si512 (s), sign)));

                      rr = _mm512_mul_ps (rr, rr);
                      rr = _mm512_mul_ps (rr, _mm512_loadu_ps (wt + i0));
                      _mm512_storeu_ps (a + i0, _mm512_add_ps (_mm512_loadu_ps (a + i0),
                                                               _mm512_mul_ps (amp, rr)));
                      rr = _mm512_mul_ps (rr, gain);
                      _mm512_storeu_ps (wt + i0,
                                        _mm512_mask_blend_ps (
                                          _mm512_cmp_ps_mask (rr, one, _CMP_GT_OQ), rr, one));
                    }
                }
            }
        }
      scale_plane (nz, gr, acc, np, out + (size_t) k * sz, sy);
    }
}
#endif

/* Fills the per-axis tables of one axis: cell from CELL0, fraction, its
 * complement and fade, for N samples and N_PAD lanes (padding repeats the
 * last sample).  False when a sample falls outside the span (coordinates
 * not increasing).  Built per ISA like the kernels (the AVX-512 build
 * rounds in registers where the baseline calls floor), the same bits. */
TG__FBM_KERNEL bool
grid_axis_body (const TgNoise3 *nz, const TgNoise3Octave *o, int axis, const float *c, int n,
                int n_pad, uint32_t cell0, int span, int32_t *l, float *f, float *f1, float *fd)
{
  bool ok = true;

  for (int i = 0; i < n_pad; i++)
    {
      uint32_t cell;
      float fr;

      grid_split (nz, o, axis, c[i < n ? i : n - 1], &cell, &fr);
      l[i] = (int32_t) (cell - cell0);
      ok &= l[i] >= 0 && l[i] <= span;
      f[i] = fr;
      f1[i] = fr - 1.0f;
      fd[i] = tg__fbm_fade (fr);
    }
  return ok;
}

#ifdef TG__FBM_HAVE_X86
__attribute__ ((target ("avx512f,avx512vl,avx512bw,avx512dq"))) static bool
grid_axis_avx512 (const TgNoise3 *nz, const TgNoise3Octave *o, int axis, const float *c, int n,
                  int n_pad, uint32_t cell0, int span, int32_t *l, float *f, float *f1,
                  float *fd)
{
  return grid_axis_body (nz, o, axis, c, n, n_pad, cell0, span, l, f, f1, fd);
}
#endif

static bool
grid_axis (const TgNoise3 *nz, const TgNoise3Octave *o, int axis, const float *c, int n,
           int n_pad, uint32_t cell0, int span, int32_t *l, float *f, float *f1, float *fd)
{
#ifdef TG__FBM_HAVE_X86
  if (nz->isa == TG__FBM_ISA_AVX512)
    return grid_axis_avx512 (nz, o, axis, c, n, n_pad, cell0, span, l, f, f1, fd);
#endif
  return grid_axis_body (nz, o, axis, c, n, n_pad, cell0, span, l, f, f1, fd);
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

int
tg__noise3_grid (const TgNoise3 *nz, const TgFieldGrid *gr, float *out, size_t sy, size_t sz,
                 TgFieldScratch *w)
{
  const float *cs[3] = { gr->xs, gr->ys, gr->zs };
  int n[3] = { gr->nx, gr->ny, gr->nz };
  int np = (gr->nx + G_CH - 1) / G_CH * G_CH;
  bool value = nz->basis == TG__FBM_VALUE;
  /* Lattice rows for the AVX-512 Perlin kernel (whole registers past the
   * last corner), else spread rows. */
  bool lat = !value && nz->isa == TG__FBM_ISA_AVX512;
  size_t lp_max = 0;
  GridOct oct[TG__N3_MAX_OCTAVES];
  size_t bytes = 0;
  unsigned char *p;
  int rc;

  if (!tg__noise3_lattice (nz) || gr->nx < 1 || gr->ny < 1 || gr->nz < 1
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
      g->lp = lat ? (g->span[0] + 2 + 15) / 16 * 16 + 32 : 0;
      g->lrs = 3 * (size_t) g->lp + 2 * (size_t) np;
      lp_max = (size_t) g->lp > lp_max ? (size_t) g->lp : lp_max;
      bytes += 3 * align64 (sizeof (int32_t) * TG_FIELD_GRID_MAX)
               + 9 * align64 (sizeof (float) * TG_FIELD_GRID_MAX)
               + 2 * align64 (sizeof (float) * (lat ? g->lrs : (size_t) (value ? 2 : 6) * (size_t) np)
                              * (size_t) (g->span[1] + 2));
    }
  bytes += 2 * align64 (sizeof (float) * (size_t) np * (size_t) gr->ny)
           + align64 (sizeof (float) * 4 * lp_max);
  if ((rc = tg_field_scratch_reserve (w, bytes)) < 0)
    return rc;
  p = w->buf;
  for (int oi = 0; oi < nz->n_octaves; oi++)
    {
      GridOct *g = &oct[oi];
      const TgNoise3Octave *o = &nz->oct[oi];
      size_t pl = sizeof (float) * (lat ? g->lrs : (size_t) (value ? 2 : 6) * (size_t) np)
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
    float *tb = carve (&p, sizeof (float) * 4 * lp_max);

#ifdef TG__FBM_HAVE_X86
    if (lat)
      grid_sum_perlin_avx512 (nz, gr, out, sy, sz, oct, np, acc, wgt, tb);
    else if (nz->isa == TG__FBM_ISA_AVX512)
      grid_sum_avx512 (nz, gr, out, sy, sz, oct, np, acc, wgt);
    else if (nz->isa == TG__FBM_ISA_AVX2)
      grid_sum_avx2 (nz, gr, out, sy, sz, oct, np, acc, wgt);
    else
#endif
      grid_sum_generic (nz, gr, out, sy, sz, oct, np, acc, wgt);
  }
  return 0;
}
