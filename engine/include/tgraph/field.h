/* The `field` wire type: an implicit 3D scalar field, negative inside.
 *
 * A field is a function the engine samples in batches of points; no node
 * materialises a dense grid of the world.  Composite fields (CSG,
 * transforms, displacement) hold references to their input values and
 * evaluate them batch by batch into scratch buffers.  Coordinates are in
 * metres, world space, +Y up.
 *
 * `lipschitz` bounds how fast the field changes: |f(p) - f(q)| <= L |p - q|.
 * A true signed distance has L = 1.  A mesher may skip a block whose
 * centre value exceeds L times its half-diagonal (plus the iso level): no
 * surface can cross it.  L = 0 means unknown (never skip).
 */
#ifndef TGRAPH_FIELD_H
#define TGRAPH_FIELD_H

#include <stdbool.h>
#include <stddef.h>

#include "value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TgField TgField;

/* Evaluates N points (x[i], y[i], z[i]) into OUT[i].  Must be thread-safe
 * and pure: the same point always gives the same value.  N is at most
 * TG_FIELD_BATCH_MAX. */
typedef void (*TgFieldEvalFn) (const TgField *f, int n, const float *x, const float *y,
                               const float *z, float *out);

#define TG_FIELD_BATCH_MAX 4096

/* A regular grid of points (xs[i], ys[j], zs[k]), i < nx, j < ny, k < nz,
 * in metres; each axis increasing, at most TG_FIELD_GRID_MAX points a side. */
typedef struct
{
  const float *xs, *ys, *zs;
  int nx, ny, nz;
} TgFieldGrid;

#define TG_FIELD_GRID_MAX 64

/* Scratch memory that grid sampling grows as it needs (64-byte aligned)
 * and keeps for the next call: zero it before the first call, release it
 * with tg_field_scratch_clear.  One per thread. */
typedef struct
{
  void *buf;
  size_t cap;
} TgFieldScratch;

/* Evaluates every point of grid G into OUT[i + j * SY + k * SZ], bit for
 * bit what the field's eval gives there, sharing work between the points;
 * thread-safe like eval.  0, TG_ENOMEM, or 1 when it has no fast path for
 * this grid (then the caller evaluates the points in batches). */
typedef int (*TgFieldGridFn) (const TgField *f, const TgFieldGrid *g, float *out, size_t sy,
                              size_t sz, TgFieldScratch *scratch);

/* Values a field keeps on a lattice (a dense volume's voxels), lent for
 * reading in place: point (i, j, k) of a grid the field was asked about
 * has the value LEVEL - V[AT + i + j SY + k SZ] when LO[a] <= its index
 * < HI[a] along every axis a (the point is stored), else LEVEL - 0.0f;
 * bit for bit what eval gives there.  Every such offset, stored or not,
 * fits an int32; V + offset is only formed for stored points. */
typedef struct
{
  const float *v;
  ptrdiff_t at, sy, sz;
  int lo[3], hi[3];
  float level;
} TgFieldView;

/* Fills VIEW for grid G (of any size, unlike eval_grid): 0, or 1 when the
 * grid's points are not the stored lattice's (then the caller samples
 * them).  VIEW stays valid as long as the field. */
typedef int (*TgFieldViewFn) (const TgField *f, const TgFieldGrid *g, TgFieldView *view);

struct TgField
{
  TgFieldEvalFn eval;
  /* Optional (NULL: none): set when a grid costs much less than its
   * points one by one, as a lattice noise's shared lattice work. */
  TgFieldGridFn eval_grid;
  /* Set with eval_grid when a grid costs about what reading its values
   * does (a dense volume): a mesher then gains nothing by sharing
   * samples between its blocks, which would only add a copy. */
  bool grid_cheap;
  /* Optional (NULL: none): the stored values themselves, so that a
   * mesher reads a dense volume where it lies instead of copying it. */
  TgFieldViewFn view;
  void (*free_data) (void *data);
  void *data;
  float lipschitz;
  /* Where the surface may be (the field is positive outside); when
   * bounded is false the field may cross zero anywhere. */
  bool bounded;
  float min[3], max[3];
};

/* Evaluates any number of points, in TG_FIELD_BATCH_MAX batches. */
void tg_field_eval (const TgField *f, size_t n, const float *x, const float *y, const float *z,
                    float *out);

/* Evaluates grid G into OUT[i + j * SY + k * SZ], through F's eval_grid
 * when it has one, else its eval in batches: the same bits either way.
 * 0 or TG_ENOMEM. */
int tg_field_eval_grid (const TgField *f, const TgFieldGrid *g, float *out, size_t sy, size_t sz,
                        TgFieldScratch *scratch);

/* Makes SCRATCH hold at least BYTES; 0 or TG_ENOMEM (SCRATCH unchanged). */
int tg_field_scratch_reserve (TgFieldScratch *scratch, size_t bytes);
void tg_field_scratch_clear (TgFieldScratch *scratch);

/* A value owning F (allocated with malloc; freed with its data). */
TgValue *tg_value_new_field (TgField *f);
const TgField *tg_value_field (const TgValue *v);

#ifdef __cplusplus
}
#endif
#endif
