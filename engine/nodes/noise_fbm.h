/* Internal interface of the noise.fbm node (engine/nodes/noise*.c).
 *
 * The node file turns its parameters into a TgFbm plan; two evaluators
 * read the same plan: a plain per-sample reference (noise_ref.c) and a
 * row kernel (noise_kernel.c) that batches samples into contiguous arrays
 * the compiler vectorises.  Both must give bit-identical floats, so what
 * they share lives here: the lattice split and hash, the fade, the value
 * lattice and every constant.  The 3D noise of the field nodes (noise3.h)
 * is built on the same pieces, and its batch kernels on the same
 * vectorisable helpers (the end of this file).  Only the noise files,
 * their tests and the benchmark include this header directly.
 */
#ifndef TG_NOISE_FBM_H
#define TG_NOISE_FBM_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <tgraph/hash.h>
#include <tgraph/region.h>

enum
{
  TG__FBM_PERLIN,
  TG__FBM_SIMPLEX,
  TG__FBM_VALUE,
  TG__FBM_WORLEY,
};

enum
{
  TG__FBM_F1,
  TG__FBM_F2,
  TG__FBM_F2_MINUS_F1,
};

enum
{
  TG__FBM_MODE_FBM,
  TG__FBM_MODE_RIDGED,
  TG__FBM_MODE_BILLOW,
};

#define TG__FBM_MAX_OCTAVES 16
/* Octaves of the Perlin fBm that displaces the sampling position. */
#define TG__FBM_WARP_OCTAVES 3

/* The node's parameters, in descriptor order (filled by the engine). */
typedef struct
{
  int basis;
  int worley_return;
  int mode;
  double scale_m;
  int octaves;
  double persistence;
  double lacunarity;
  int seed;
  double offset_m[2];
  double warp_m;
  double warp_scale_m;
} TgFbmParams;

/* One octave: its own lattice seed, frequency and lattice offset. */
typedef struct
{
  uint32_t seed;
  float amp;
  double freq;         /* lattice cells per metre */
  double off_x, off_z; /* in cells, drawn from the seed */
} TgFbmOctave;

/* Which build of the row kernel runs; every build gives the same bytes. */
typedef enum
{
  TG__FBM_ISA_GENERIC, /* baseline (SSE2 on x86-64) */
  TG__FBM_ISA_AVX2,
  TG__FBM_ISA_AVX512, /* F, VL, BW, DQ */
  TG__FBM_ISA_COUNT
} TgFbmIsa;

typedef struct
{
  int basis, worley_return, mode;
  int n_octaves; /* octaves whose amplitude can still change a float */
  TgFbmOctave oct[TG__FBM_MAX_OCTAVES];
  double offset_x, offset_z; /* metres added to world x, z */
  int warp;                  /* domain warp on */
  double warp_m;
  TgFbmOctave warp_oct[2][TG__FBM_WARP_OCTAVES]; /* x and z displacement fields */
  float warp_norm;           /* 1 / sum of the warp amplitudes */
  float out_scale, out_bias; /* out = acc * out_scale + out_bias */
  TgFbmIsa isa;              /* set by the plan to the best available */
} TgFbm;

/* Resolves P and SEED (already combined with the world seed) into F. */
void tg__fbm_plan (TgFbm *f, const TgFbmParams *p, uint32_t seed);

/* The value at world position (X, Z), one sample at a time, the plain way. */
float tg__fbm_reference_sample (const TgFbm *f, double x, double z);

/* Samples I0 .. I0 + N - 1 of row ROW of R into OUT. */
void tg__fbm_row (const TgFbm *f, const TgRegion *r, int row, int i0, int n, float *out);

/* N samples at arbitrary world positions (X[k], Z[k]). */
void tg__fbm_points (const TgFbm *f, const double *x, const double *z, int n, float *out);

bool tg__fbm_isa_supported (TgFbmIsa isa);
TgFbmIsa tg__fbm_best_isa (void);
const char *tg__fbm_isa_name (TgFbmIsa isa);

/* --- shared arithmetic --------------------------------------------------- */

/* Lattice coordinates are clamped to +-2^50 cells before the split, so
 * the int64 conversion is defined for any input; past 2^50 a double has
 * no fraction left, the noise is flat there anyway. */
#define TG__FBM_SPLIT_LIMIT 1125899906842624.0

/* Lattice coordinate P -> integer cell (modulo 2^32) and fraction.  The
 * split is done in double so that fine octaves far from the origin keep
 * their precision; only the fraction drops to float. */
static inline void
tg__fbm_split (double p, uint32_t *cell, float *frac)
{
  double fl;

  if (!(p >= -TG__FBM_SPLIT_LIMIT)) /* also catches NaN */
    p = -TG__FBM_SPLIT_LIMIT;
  if (!(p <= TG__FBM_SPLIT_LIMIT))
    p = TG__FBM_SPLIT_LIMIT;
  fl = floor (p);
  *cell = (uint32_t) (int64_t) fl;
  *frac = (float) (p - fl);
}

/* Simplex skew (sqrt(3) - 1) / 2 in double; unskew G2 = (3 - sqrt(3)) / 6. */
#define TG__SIMPLEX_F2 0.36602540378443864676
#define TG__SIMPLEX_G2 0.21132486540518711775f
#define TG__SIMPLEX_1_G2 0.78867513459481288225f  /* 1 - G2 */
#define TG__SIMPLEX_1_2G2 0.57735026918962576451f /* 1 - 2 G2 */

/* Ranges of each basis before normalisation, so every basis lands in
 * [-1, 1].  They are suprema over all gradient choices and positions,
 * found by exhaustive search (each corner's gradient can be chosen
 * independently, so the sup is a sum of per-corner maxima), rounded up:
 *   perlin, 16 directions, quintic fade: 0.6953527 at (0.5, 0.4734)
 *   simplex, 24 directions, (0.5 - r^2)^4: 0.010016341 at (0.448, 0.980)
 *   worley, jitter 0.9: F1 <= sqrt(2) * 0.95 = 1.3435029 (at a corner),
 *                       F2 <= hypot(1.45, 0.45) = 1.5182226 (at the centre) */
#define TG__PERLIN_NORM (1.0f / 0.69536f)
#define TG__SIMPLEX_NORM (1.0f / 0.0100164f)
#define TG__WORLEY_F1_NORM (2.0f / 1.34351f)
#define TG__WORLEY_F2_NORM (2.0f / 1.51823f)

/* Worley feature points: one per cell, in the middle 90% of it.  The
 * kernel searches 4x4 cells: the 3x3 block around the sample plus the
 * next column and row on the side of the cell the sample is nearer to.
 * Any point outside lies at least 1.5 + (1 - J) / 2 = 1.55 cells away,
 * more than F2 can be (1.518), so F1 and F2 are exact and cellular noise
 * has no seams (with a plain 3x3 search that needs J < 0.657, and the
 * cells line up on a visible grid). */
#define TG__WORLEY_LO 0.05f
#define TG__WORLEY_STEP (0.9f / 65536.0f)

/* Ridged: each octave's signal (1 - |n|)^2 is weighted by the previous
 * one's, times this gain, clamped to 1 (Musgrave's ridged multifractal). */
#define TG__FBM_RIDGE_GAIN 2.0f

/* Gradient directions, unit length.  Perlin: 16 directions at
 * 11.25 + 22.5 k degrees (none on an axis or a diagonal, so the square
 * lattice does not show).  Simplex: 24 at 7.5 + 15 k degrees, which suits
 * the triangular lattice.  The top hash bits pick them: bit 28 negates
 * x, 29 negates z, 30 swaps x and z, and bit 31 (16) or k = 0..2 from
 * bits 20-27 (24) the base angle.  The reference reads tables, the kernel
 * builds the vectors with bit operations. */
#define TG__G16_C0 0.98078528040323044913f /* cos 11.25 */
#define TG__G16_S0 0.19509032201612826785f
#define TG__G16_C1 0.83146961230254523708f /* cos 33.75 */
#define TG__G16_S1 0.55557023301960222474f
#define TG__G24_C0 0.99144486137381041114f /* cos 7.5 */
#define TG__G24_S0 0.13052619222005159155f
#define TG__G24_C1 0.92387953251128675613f /* cos 22.5 */
#define TG__G24_S1 0.38268343236508977173f
#define TG__G24_C2 0.79335334029123516458f /* cos 37.5 */
#define TG__G24_S2 0.60876142900872063942f

#define TG__FBM_HASH_KX 0x9E3779B1U
#define TG__FBM_HASH_KZ 0x85EBCA77U

/* The lattice hash: tg_hash2's construction on unsigned cells, z mixed
 * first, so that cells wrap modulo 2^32 with no signed overflow and, on
 * a row of constant z, the kernel mixes z once per row instead of once
 * per sample. */
static inline uint32_t
tg__fbm_hash_z (uint32_t seed, uint32_t z)
{
  return tg_mix32 (seed ^ z * TG__FBM_HASH_KZ);
}

static inline uint32_t
tg__fbm_hash_zx (uint32_t hz, uint32_t x)
{
  return tg_mix32 (hz ^ x * TG__FBM_HASH_KX);
}

static inline uint32_t
tg__fbm_hash (uint32_t seed, uint32_t x, uint32_t z)
{
  return tg__fbm_hash_zx (tg__fbm_hash_z (seed, z), x);
}

/* 6t^5 - 15t^4 + 10t^3 (Perlin 2002). */
static inline float
tg__fbm_fade (float t)
{
  return t * t * t * (t * (t * 6.0f - 15.0f) + 10.0f);
}

/* A lattice value in [-1, 1) from the top 24 bits (exact in float). */
static inline float
tg__fbm_value (uint32_t h)
{
  return (float) (int32_t) (h >> 8) * (1.0f / 8388608.0f) - 1.0f;
}

/* Worley: keeps *D1 <= *D2 the two smallest squared distances seen, D
 * being the next (the scalar form; the batch kernel selects instead). */
static inline void
tg__fbm_worley_keep (float d, float *d1, float *d2)
{
  if (d < *d1)
    {
      *d2 = *d1;
      *d1 = d;
    }
  else if (d < *d2)
    *d2 = d;
}

/* One octave's signal N, in [-1, 1], with amplitude AMP added to ACC the
 * way MODE combines octaves: fbm sums N, billow |N|, ridged (1 - |N|)^2
 * times the weight *W, which starts at 1 and becomes this octave's
 * signal times TG__FBM_RIDGE_GAIN, clamped to 1.  The batch kernels do
 * the same operations in loops of their own. */
static inline float
tg__fbm_octave_add (int mode, float acc, float amp, float n, float *w)
{
  float r;

  if (mode == TG__FBM_MODE_FBM)
    return acc + amp * n;
  if (mode == TG__FBM_MODE_BILLOW)
    return acc + amp * fabsf (n);
  r = 1.0f - fabsf (n);
  r = r * r;
  r = r * *w;
  *w = r * TG__FBM_RIDGE_GAIN;
  if (*w > 1.0f)
    *w = 1.0f;
  return acc + amp * r;
}

/* The map of the octave sum to [0, 1], out = acc * *SCALE + *BIAS, for
 * octave amplitudes summing to SUM: fbm sums signals in [-1, 1], billow
 * and ridged in [0, 1]. */
static inline void
tg__fbm_out_map (int mode, double sum, float *scale, float *bias)
{
  *scale = (float) ((mode == TG__FBM_MODE_FBM ? 0.5 : 1.0) / sum);
  *bias = mode == TG__FBM_MODE_FBM ? 0.5f : 0.0f;
}

/* --- helpers of the batch kernels ------------------------------------------
 *
 * The batch kernels (2D in noise_kernel.c, 3D in noise3.c and
 * noise3_grid.c) are plain loops compiled once per ISA; these helpers are
 * inlined into each build.  They use integer masks instead of branches or
 * libm calls, so that the vectoriser takes the loops around them. */

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define TG__FBM_HAVE_X86 1
#endif

#define TG__FBM_KERNEL static inline __attribute__ ((always_inline))

/* Truncation to int32 is exact and defined while |p| < 2^31; blocks
 * whose lattice coordinates may exceed 2^30 take another split. */
#define TG__FBM_FAST_LIMIT 1073741824.0

/* 1.0 when D < 0, else 0.0, from the sign bit.  Written with integer
 * masks: a select between FP expressions would be turned into branches
 * (the FP operations may trap), and a bool-to-int64 select has no SSE2
 * vector form.  D + 0.0 turns -0.0 into +0.0. */
TG__FBM_KERNEL double
tg__fbm_one_if_negative (double d)
{
  uint64_t u;
  double r;

  d = d + 0.0;
  memcpy (&u, &d, sizeof u);
  u = (0 - (u >> 63)) & 0x3ff0000000000000ull;
  memcpy (&r, &u, sizeof r);
  return r;
}

/* tg__fbm_split for |P| < TG__FBM_FAST_LIMIT: floor as truncate-and-fix
 * (the vectoriser cannot call floor()).  P - T is exact, and D + 1 rounds
 * the same exact value as P - floor (P), so cell and fraction are the
 * same bits. */
TG__FBM_KERNEL void
tg__fbm_split_fast (double p, uint32_t *cell, float *frac)
{
  double t = (double) (int32_t) p;
  double d = p - t;
  double one = tg__fbm_one_if_negative (d);

  *cell = (uint32_t) (int32_t) (t - one);
  *frac = (float) (d + one);
}

/* Float from bits and back, for sign flips without branches. */
TG__FBM_KERNEL uint32_t
tg__fbm_bits (float f)
{
  uint32_t u;

  memcpy (&u, &f, sizeof u);
  return u;
}

TG__FBM_KERNEL float
tg__fbm_float (uint32_t u)
{
  float f;

  memcpy (&f, &u, sizeof f);
  return f;
}

#endif
