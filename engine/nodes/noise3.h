/* Internal interface of the 3D noise (engine/nodes/noise3*.c), which the
 * field nodes field.noise and field.displace use.
 *
 * It is noise.fbm's noise in three dimensions: the same bases, octave
 * plan and fbm/ridged/billow shaping, with the same constants, hash
 * construction, fade and kernel helpers (noise_fbm.h).  noise3.c holds
 * the plan and the evaluation of any points, noise3_grid.c a faster path
 * for a regular grid of points (the iso-surface mesher's blocks) that
 * gives the same bits.  What both need lives here.
 */
#ifndef TG_NODES_NOISE3_H
#define TG_NODES_NOISE3_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tgraph/field.h>

#include "noise_fbm.h"

#define TG__N3_MAX_OCTAVES TG__FBM_MAX_OCTAVES

typedef struct
{
  uint32_t seed;
  float amp;
  double freq;   /* lattice cells per metre */
  double off[3]; /* in cells, drawn from the seed */
} TgNoise3Octave;

typedef struct
{
  int basis, worley_return, mode; /* TG__FBM_PERLIN .., TG__FBM_F1 .., TG__FBM_MODE_* */
  int n_octaves;
  TgNoise3Octave oct[TG__N3_MAX_OCTAVES];
  double offset[3];          /* metres added to the position */
  float out_scale, out_bias; /* acc -> 0..1, as noise.fbm */
  float amplitude;           /* metres: value = amplitude * (2 * v01 - 1) */
  float lipschitz;           /* a proven bound on |grad value|, per metre */
  TgFbmIsa isa;              /* which build of the batch kernels runs */
} TgNoise3;

/* The noise parameters as nodes declare them (a prefix of their structs). */
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
} TgNoise3Params;

void tg__noise3_plan (TgNoise3 *n, const TgNoise3Params *p, uint32_t seed);

/* OUT[i] = the noise at (X[i], Y[i], Z[i]), in -amplitude .. amplitude. */
void tg__noise3_eval (const TgNoise3 *n, int count, const float *x, const float *y,
                      const float *z, float *out);

/* True for the lattice bases (perlin, value): those have a batch kernel
 * and a grid path; simplex and worley are evaluated point by point. */
static inline bool
tg__noise3_lattice (const TgNoise3 *n)
{
  return n->basis == TG__FBM_PERLIN || n->basis == TG__FBM_VALUE;
}

/* OUT[i + j * SY + k * SZ] = the noise at grid point (i, j, k), bit for
 * bit what tg__noise3_eval gives there, with the lattice work shared
 * between the points.  1 when the noise has no grid path for G (a basis
 * that is not a lattice one, an octave finer than the grid's spacing, a
 * grid not increasing), else 0 or TG_ENOMEM. */
int tg__noise3_grid (const TgNoise3 *n, const TgFieldGrid *g, float *out, size_t sy, size_t sz,
                     TgFieldScratch *scratch);

/* --- shared arithmetic --------------------------------------------------- */

/* The lattice hash is tg__fbm_hash's construction with y mixed between
 * z and x, with this constant. */
#define TG__NOISE3_KY 0xC2B2AE3DU

/* Sup of |noise| per basis before normalisation, from a search over
 * positions with the best gradient at every corner, rounded up; a clamp
 * to [-1, 1] guards whatever the search missed.
 *   perlin, 12 cube-edge gradients, quintic fade: 1.0363
 *   simplex, same gradients, (0.5 - r^2)^4 kernel: 0.013007
 *   worley, jitter 0.9: F1 <= sqrt(3) * 0.95 = 1.6455; F2 < 2. */
#define TG__NOISE3_PERLIN_NORM (1.0f / 1.04f)
#define TG__NOISE3_SIMPLEX_NORM (1.0f / 0.0131f)
#define TG__NOISE3_WORLEY_F1_NORM (2.0f / 1.6455f)
#define TG__NOISE3_WORLEY_F2_NORM (1.0f)

/* Lattice coordinate P -> cell modulo 2^32 and fraction, as
 * tg__fbm_split, in operations that vectorise: the floor is reduced
 * modulo 2^32 in double (exact: |P| <= 2^50) and offset into int32. */
TG__FBM_KERNEL void
tg__noise3_split (double p, uint32_t *cell, float *frac)
{
  double fl, m;

  /* NaN too goes to -limit.  One conditional: GCC keeps floor a call
   * after two (even in builds where it is one instruction). */
  p = p >= -TG__FBM_SPLIT_LIMIT ? (p <= TG__FBM_SPLIT_LIMIT ? p : TG__FBM_SPLIT_LIMIT)
                                : -TG__FBM_SPLIT_LIMIT;
  fl = floor (p);
  m = fl - 4294967296.0 * floor (fl * (1.0 / 4294967296.0)) - 2147483648.0;
  *cell = (uint32_t) (int32_t) m ^ 0x80000000u;
  *frac = (float) (p - fl);
}

TG__FBM_KERNEL float
tg__noise3_lerp (float a, float b, float t)
{
  return a + t * (b - a);
}

/* The lattice cell's interpolation: corner values CXYZ (x, y, z each 0 or
 * 1) weighted by the faded fractions U, V, W. */
TG__FBM_KERNEL float
tg__noise3_trilerp (float c000, float c100, float c010, float c110, float c001, float c101,
                    float c011, float c111, float u, float v, float w)
{
  float lo = tg__noise3_lerp (tg__noise3_lerp (c000, c100, u), tg__noise3_lerp (c010, c110, u), v);
  float hi = tg__noise3_lerp (tg__noise3_lerp (c001, c101, u), tg__noise3_lerp (c011, c111, u), v);

  return tg__noise3_lerp (lo, hi, w);
}

#endif
