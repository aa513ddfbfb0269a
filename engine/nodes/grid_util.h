/* Small helpers shared by the basic node families (generators, curve,
 * combine, filters, selectors, heightmap I/O): reading an input grid
 * over the output region, picking a row grain for tg_eval_parallel, and
 * the few scalar shaping functions several nodes use.  Internal to engine/nodes.
 */
#ifndef TG_NODES_GRID_UTIL_H
#define TG_NODES_GRID_UTIL_H

#include <math.h>
#include <stddef.h>

#include <tgraph/node.h>
#include <tgraph/region.h>
#include <tgraph/value.h>

/* Rows per chunk for tg_eval_parallel: about 64k samples a chunk, so
 * cancellation and progress stay responsive on big maps while small
 * previews do not drown in scheduling.  Only a function of the width, so
 * the chunking never depends on the thread count. */
static inline int
tg__grain_rows (int width)
{
  int g = 65536 / (width > 0 ? width : 1);
  return g < 1 ? 1 : g;
}

/* Rows per chunk for a kernel of COST multiply-adds a sample (a
 * convolution's taps): about 32M a chunk, some 10 ms, so cancel is seen
 * that soon, while a chunk's rows still share their input rows in cache;
 * never more rows than a point filter's chunk. */
static inline int
tg__grain_rows_cost (int width, int cost)
{
  double g = 33554432.0 / ((double) (width > 0 ? width : 1) * (double) (cost > 1 ? cost : 1));
  int rows = g < 1.0 ? 1 : (int) g, most = tg__grain_rows (width);

  return rows < most ? rows : most;
}

/* Checks that input IN (port NAME) is a one-channel grid covering OUT, as
 * the engine promises; fails the node with a clear message otherwise. */
static inline int
tg__check_grid_input (TgEvalCtx *c, const TgValue *in, const char *name, const TgRegion *out)
{
  if (!in || !in->data)
    return tg_eval_fail (c, TG_EMISSING, TG_MSG_INPUT_NO_DATA, name);
  if (in->channels != 1)
    return tg_eval_fail (c, TG_ETYPE, TG_MSG_INPUT_CHANNELS, name, in->channels, 1);
  if (!tg_region_contains (&in->region, out))
    return tg_eval_fail (c, TG_EINVAL, TG_MSG_INPUT_NOT_COVERED, name);
  return 0;
}

/* Row J of region R read from grid V, which contains R (one channel).  An
 * input may carry a larger window than the output; this indexes into it. */
static inline const float *
tg__grid_row (const TgValue *v, const TgRegion *r, int j)
{
  size_t dy = (size_t) (r->row0 - v->region.row0 + j);
  size_t dx = (size_t) (r->col0 - v->region.col0);
  return v->data + dy * (size_t) v->region.width + dx;
}

static inline double
tg__clamp01 (double t)
{
  return t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
}

/* Hermite smoothstep of T clamped to 0..1: 0 -> 0, 0.5 -> 0.5, 1 -> 1. */
static inline double
tg__smoothstep01 (double t)
{
  t = tg__clamp01 (t);
  return t * t * (3.0 - 2.0 * t);
}

#endif
