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

struct TgField
{
  TgFieldEvalFn eval;
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

/* A value owning F (allocated with malloc; freed with its data). */
TgValue *tg_value_new_field (TgField *f);
const TgField *tg_value_field (const TgValue *v);

#ifdef __cplusplus
}
#endif
#endif
