/* erosion.flow: flow accumulation, how much of the world drains through
 * each sample, as a mask on a log scale for texturing rivers and gullies.
 *
 * Pits first: a Priority-Flood (Barnes, Lehman and Mulla 2014, with the
 * pit queue of their "improved" variant) floods the map from its edges in
 * order of height, raising every closed depression to its spill level.
 * The lakes this leaves are flat; their water is given a way across them
 * that converges down the middle towards the outlet (Barnes, Lehman and
 * Mulla 2014, flat resolution), so rivers run through lakes as one
 * channel.  On slopes water goes to the steepest lower neighbour (D8) or,
 * for its first TG__FLOW_MFD_STEPS steps, to all of them in proportion to
 * slope^exponent times contour length (MFD, Quinn et al. 1991) and then
 * down the steepest way; it leaves the world at its edge.
 *
 * The mask is log(1 + A / a) / log(1 + W / a), with A the area draining
 * through the sample (m²), W the world's area and a the cell area of a
 * 1025-sample map of the same world: it does not depend on the region's
 * own maximum, and river channels (whose catchment area is the same at any
 * resolution) read the same in a preview and a build.
 *
 * Every step is exact under tiling (see erosion_flow.h for the files):
 * the fill is a min-max over paths, the ranks are breadth-first
 * distances, the MFD steps are a pull over a fixed window and the rest
 * are sums of integers, so a tiled build (the scheme below) gives the
 * whole evaluation's bytes for any tiling and thread count.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

#include "erosion_flow.h"
#include "erosion_util.h"
#include "grid_util.h"

static const char *const routing_choices[] = { "mfd", "d8", NULL };

typedef struct
{
  int routing;
  double exponent;
} FlowParams;

static const TgParamDesc flow_params[] = {
  TG_PARAM_ENUM (FlowParams, routing, .label = N_("Routing"), .def_s = "mfd",
                 .choices = routing_choices,
                 .help = N_("mfd: water spreads over every lower neighbour by slope (soft, natural "
                            "hillslopes); d8: all of it to the steepest one (sharp single lines)")),
  TG_PARAM_FLOAT (FlowParams, exponent, .label = N_("Convergence"), .def = 1.1, .min = 0.1,
                  .max = 10.0,
                  .help = N_("MFD slope exponent: higher sends more water down the steepest way")),
};

static const TgPortDesc flow_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Terrain the water runs over") },
};

static const TgPortDesc flow_outputs[] = {
  { .name = "flow", .type = TG_TYPE_MASK, .label = N_("Flow"),
    .help = N_("Area draining through each sample, on a log scale of the world's area") },
};

/* --- the node ---------------------------------------------------------- */

typedef struct
{
  const double *acc;
  TgValue *out;
  double cell_area_over_ref, log_max;
} FlowFinish;

static void
flow_finish_rows (void *user, int begin, int end)
{
  const FlowFinish *job = user;
  int w = job->out->region.width;

  for (int j = begin; j < end; j++)
    {
      const double *a = job->acc + (size_t) j * w;
      float *o = tg_value_row (job->out, j);
      for (int i = 0; i < w; i++)
        o[i] = tg__erosion_mask_linear (log1p (a[i] * job->cell_area_over_ref), job->log_max);
    }
}

/* The mask from the area ACC over the context's region: the same numbers
 * for a tile as for the whole world, since the scale is the world's. */
static int
flow_output (TgEvalCtx *c, const double *acc)
{
  const TgRegion *r = tg_eval_region (c);
  const TgWorld *world = tg_eval_world (c);
  double ref_area, log_max;
  FlowFinish fin;

  tg__erosion_area_scale (world, r, &ref_area, &log_max);
  fin = (FlowFinish) { acc, NULL, r->cell * r->cell / ref_area, log_max };

  fin.out = tg_eval_new_output (c, 0, 1);
  if (!fin.out)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  return tg_eval_parallel (c, r->height, tg__grain_rows (r->width), flow_finish_rows, &fin);
}

/* The input over the context's region, a NaN (which would break the
 * flood's ordering) read as sea level.  Returns it malloc'ed, or NULL
 * after failing the node. */
static float *
flow_heights (TgEvalCtx *c)
{
  const TgRegion *r = tg_eval_region (c);
  const TgValue *in = tg_eval_input (c, 0);
  size_t n = (size_t) r->width * (size_t) r->height;
  float *hm;

  if (tg__check_grid_input (c, in, "height", r) < 0)
    return NULL;
  if (n > (size_t) INT32_MAX)
    {
      tg_eval_fail (c, TG_ERANGE, "a %d x %d map is too large for flow routing", r->width,
                    r->height);
      return NULL;
    }
  if (!(hm = malloc (sizeof (float) * (n ? n : 1))))
    {
      tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d map", r->width, r->height);
      return NULL;
    }
  for (int j = 0; j < r->height; j++)
    {
      const float *src = tg__grid_row (in, r, j);
      float *dst = hm + (size_t) j * r->width;
      for (int i = 0; i < r->width; i++)
        dst[i] = isfinite (src[i]) ? src[i] : 0.0f;
    }
  return hm;
}

static int
ctx_parallel (void *ctx, int n, int grain, void (*fn) (void *, int, int), void *user)
{
  return tg_eval_parallel (ctx, n, grain, fn, user);
}

static bool
ctx_cancelled (void *ctx)
{
  return tg_eval_cancelled (ctx);
}

static TgFlowOpts
flow_opts (TgEvalCtx *c)
{
  const FlowParams *p = tg_eval_params (c);
  TgFlowOpts o = { p->routing == 1 ? TG__FLOW_D8 : TG__FLOW_MFD, p->exponent, ctx_parallel, c,
                   ctx_cancelled };

  return o;
}

static int
flow_failed (TgEvalCtx *c, int rc)
{
  const TgRegion *r = tg_eval_region (c);

  if (rc == TG_ECANCELLED)
    return rc;
  if (rc == TG_ENOMEM)
    return tg_eval_fail (c, rc, "out of memory for a %d x %d map", r->width, r->height);
  return tg_eval_fail (c, rc, "flow routing failed: %s", tg_strerror (rc));
}

static int
flow_eval (TgEvalCtx *c)
{
  const TgRegion *r = tg_eval_region (c);
  TgFlowOpts o = flow_opts (c);
  float *hm = flow_heights (c);
  double *acc = NULL;
  int rc;

  if (!hm)
    return TG_EEVAL;
  rc = tg__flow_whole_take (&o, hm, r->width, r->height, &acc);
  if (rc < 0)
    rc = flow_failed (c, rc);
  else if (tg_eval_cancelled (c))
    rc = TG_ECANCELLED;
  else
    rc = flow_output (c, acc);
  free (acc);
  return rc;
}

/* --- the tiled scheme (erosion_flow_tiled.c) ------------------------------ */

static int
ctx_put (void *user, const char *name, const void *data, size_t size)
{
  return tg_eval_blob_put (user, name, data, size);
}

static int
ctx_get (void *user, int ix, int iy, const char *name, void **data, size_t *size)
{
  return tg_eval_blob_get (user, ix, iy, name, data, size);
}

static int
flow_n_steps (const void *params, const TgRegion *full)
{
  (void) params;
  (void) full;
  return TG__FLOW_N_STEPS;
}

static int
flow_halo (const void *params, const TgRegion *full, int step)
{
  /* Every step reads the heights over its tile only; what it needs of
   * the neighbours comes in blobs. */
  (void) params;
  (void) full;
  (void) step;
  return 0;
}

static bool
flow_has_reduce (const void *params, const TgRegion *full, int step)
{
  (void) params;
  (void) full;
  return tg__flow_has_reduce (step);
}

static int
flow_tile_step (TgEvalCtx *c, int step)
{
  const TgRegion *r = tg_eval_region (c);
  const TgTiling *t = tg_eval_tiling (c);
  TgFlowOpts o = flow_opts (c);
  TgFlowBlobs io = { c, ctx_put, ctx_get };
  bool last = step == TG__FLOW_N_STEPS - 1;
  double *acc = NULL;
  float *hm;
  int rc;

  if (!t)
    return tg_eval_fail (c, TG_EINVAL, "a tiled step outside a tiled build");
  if (!(hm = flow_heights (c)))
    return TG_EEVAL;
  if (last && !(acc = malloc (sizeof (double) * ((size_t) r->width * r->height + 1))))
    rc = TG_ENOMEM;
  else
    rc = tg__flow_tile_step (&o, t, r->full_w, r->full_h, hm, step, &io, acc);
  free (hm);
  if (rc < 0)
    rc = flow_failed (c, rc);
  else if (last)
    rc = flow_output (c, acc);
  free (acc);
  return rc;
}

static int
flow_reduce (TgEvalCtx *c, int step)
{
  const TgRegion *r = tg_eval_region (c);
  const TgTiling *t = tg_eval_tiling (c);
  TgFlowOpts o = flow_opts (c);
  TgFlowBlobs io = { c, ctx_put, ctx_get };
  int rc;

  if (!t)
    return tg_eval_fail (c, TG_EINVAL, "a tiled reduce outside a tiled build");
  rc = tg__flow_reduce (&o, t, r->full_w, r->full_h, step, &io, NULL);
  return rc < 0 ? flow_failed (c, rc) : 0;
}

/* Bytes a job of the tiled scheme holds, from its arrays: a tile step
 * works on the tile grown by the routing's reach (heights, filled
 * heights, ranks, labels; the sums in steps 3 and 4, whose MFD shares are
 * made row by row); the reduces of steps 0 and 3 hold a node per
 * tile-edge sample; the flats' reduce one tile's flat list at a time and
 * border distances.  Per sample figures measured at 1024² and 2048²
 * tiles (RSS), with a quarter to spare; steps 3 and 4 scaled by their
 * peak RSS at 2049² tiles since the shares went (258 -> 163 MB and
 * 290 -> 179 MB). */
static uint64_t
flow_work_bytes (const void *params, const TgRegion *full, const TgTiling *t, int step,
                 bool reduce)
{
  static const uint64_t per_window_sample[TG__FLOW_N_STEPS] = { 24, 24, 44, 52, 56 };
  const FlowParams *p = params;
  TgFlowOpts o = { .routing = p->routing == 1 ? TG__FLOW_D8 : TG__FLOW_MFD };
  uint64_t tw = (uint64_t) (full->full_w + t->nx - 1) / (uint64_t) t->nx;
  uint64_t th = (uint64_t) (full->full_h + t->ny - 1) / (uint64_t) t->ny;
  uint64_t reach = (uint64_t) tg__flow_reach (&o);
  uint64_t edges = 2 * ((uint64_t) (t->nx + 1) * (uint64_t) full->full_h
                        + (uint64_t) (t->ny + 1) * (uint64_t) full->full_w);

  if (step < 0 || step >= TG__FLOW_N_STEPS)
    return 0;
  if (!reduce)
    return per_window_sample[step] * (tw + 2 * reach) * (th + 2 * reach);
  if (step == 2)
    return 48 * tw * th + 32 * edges;
  return 128 * edges;
}

static const TgTiledScheme flow_scheme = {
  .n_steps = flow_n_steps,
  .halo = flow_halo,
  .tile_step = flow_tile_step,
  .has_reduce = flow_has_reduce,
  .reduce = flow_reduce,
  .work_bytes = flow_work_bytes,
};

/* The whole-world routing at its peak, the MFD steps: filled heights,
 * ranks, the area in doubles, the receivers and the water in fixed point
 * (the shares are made row by row; the input's copy is gone with the
 * fill); 26 bytes a sample, measured (RSS) between 2049² and 4097². */
static void
flow_memory (TgMemQuery *q)
{
  q->work += 26 * tg_region_samples (q->region);
}

static const TgNodeDesc flow_desc = {
  .type = "erosion.flow",
  .category = TG_CATEGORY_EROSION,
  .label = N_("Flow"),
  .help = N_("Where water gathers: the area draining through each point, on a log scale, "
             "with pits filled so rivers reach the edge"),
  TG_INPUTS (flow_inputs),
  TG_OUTPUTS (flow_outputs),
  TG_PARAMS (FlowParams, flow_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = flow_eval,
  .memory = flow_memory,
  .tiled = &flow_scheme,
  .version = 4,
};
TG_NODE_REGISTER (flow_desc);
