/* Helpers shared by the selectors (select.c), the spatial filters
 * (filter_spatial.c), mask combining and the texturing nodes (texture.c):
 * the smooth band that turns a value range into a 0..1 mask, the height
 * gradient in world metres, and the separable Gaussian blur that
 * filter.blur and select.curvature both use.  Internal to engine/nodes.
 */
#ifndef TG_NODES_SPATIAL_UTIL_H
#define TG_NODES_SPATIAL_UTIL_H

#include <math.h>

#include <tgraph/node.h>
#include <tgraph/value.h>

#include "grid_util.h"

/* Largest blur support, in cells, on each side.  Bounds the apron (and so
 * the memory upstream nodes spend on it); a larger radius at a fine
 * resolution fails with a message instead of silently blurring less. */
#define TG__BLUR_MAX_CELLS 1024

/* 1 inside [LO, HI], 0 farther than FALL outside it, a smoothstep in
 * between; FALL = 0 gives a hard edge (the ends count as inside).  Pass
 * -INFINITY / INFINITY for an open end.  NaN gives 0. */
static inline double
tg__band (double x, double lo, double hi, double fall)
{
  if (isnan (x))
    return 0.0;
  if (x < lo)
    return fall > 0.0 ? tg__smoothstep01 (1.0 - (lo - x) / fall) : 0.0;
  if (x > hi)
    return fall > 0.0 ? tg__smoothstep01 (1.0 - (x - hi) / fall) : 0.0;
  return 1.0;
}

/* Clamps a mask sample to 0..1; NaN becomes 0. */
static inline float
tg__mask01 (float v)
{
  return v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f;
}

/* Central-difference gradient of height grid IN at sample (I, J) of region
 * R (IN covers R grown by one sample), in metres per metre: GX towards
 * east (+X), GZ towards north (+Z; row J - 1 is north of row J).  SCALE is
 * height_m / (2 * cell). */
static inline void
tg__gradient (const float *north, const float *mid, const float *south, int i, double scale,
              double *gx, double *gz)
{
  *gx = ((double) mid[i + 1] - (double) mid[i - 1]) * scale;
  *gz = ((double) north[i] - (double) south[i]) * scale;
}

/* Samples of border the blur of RADIUS_M needs at CELL metres a sample
 * (the Gaussian's sigma is a third of the radius), capped at
 * TG__BLUR_MAX_CELLS. */
int tg__blur_cells (double radius_m, double cell);

/* Blurs one-channel grid IN (covering OUT grown by tg__blur_cells) with a
 * separable Gaussian of RADIUS_M into DST, OUT->width x OUT->height floats
 * row by row.  Each output sample sums the same inputs in the same order
 * wherever the window lies, so tiles match the whole map bit for bit.
 * Fails the node (naming PARAM) when the radius needs more than
 * TG__BLUR_MAX_CELLS samples. */
int tg__blur (TgEvalCtx *c, const TgValue *in, const TgRegion *out, double radius_m,
              const char *param, float *dst);

#endif
