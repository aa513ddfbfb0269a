/* Height filters: remap, clamp, invert and terrace (local, one sample in,
 * one sample out) and normalize (global: it stretches the whole map by its
 * own minimum and maximum).
 *
 * Arithmetic is double precision per sample, rounded once to float, so the
 * result at the interesting values (range ends, pivots, step levels) is
 * exact and identical on every tile.
 */
#include <math.h>
#include <string.h>
#include <stdlib.h>

#include <tgraph/hash.h>
#include <tgraph/node.h>
#include <tgraph/param.h>

#include "grid_util.h"

static const TgPortDesc filter_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Height to filter") },
};

static const TgPortDesc filter_outputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Filtered height") },
};

/* Shared driver for the local filters: one kernel per row, chosen by a
 * switch outside the sample loop. */
typedef enum
{
  K_REMAP,
  K_CLAMP,
  K_INVERT,
  K_TERRACE,
} Kernel;

typedef struct
{
  Kernel kind;
  /* remap: out = o0 + (h - i0) * scale, optionally clamped to [lo, hi] */
  double i0, o0, scale, lo, hi;
  bool clamp;
  /* invert: out = twice_pivot - h */
  double twice_pivot;
  /* terrace */
  int steps;
  const double *bounds; /* steps + 1 levels, 0 .. 1, strictly increasing */
  double riser;         /* fraction of each step that slopes up, 0..1 */
} FilterJob;

/* Terrace of H: levels repeat every 1.0 so inputs outside 0..1 keep their
 * offset.  Within a step [b_k, b_k+1) the value holds b_k on the tread and
 * rises with a smoothstep over the last RISER fraction of the step. */
static inline double
terrace_value (const FilterJob *job, double h)
{
  double base, f, g, lo, hi;
  int k;

  if (!isfinite (h))
    return h;
  base = floor (h);
  f = h - base;
  if (job->bounds)
    {
      int a = 0, b = job->steps;
      while (b - a > 1)
        {
          int mid = (a + b) / 2;
          if (job->bounds[mid] <= f)
            a = mid;
          else
            b = mid;
        }
      k = a;
      lo = job->bounds[k];
      hi = job->bounds[k + 1];
    }
  else
    {
      k = (int) floor (f * job->steps);
      if (k >= job->steps)
        k = job->steps - 1;
      lo = (double) k / job->steps;
      hi = (double) (k + 1) / job->steps;
    }
  if (job->riser > 0.0)
    g = tg__smoothstep01 (((f - lo) / (hi - lo) - (1.0 - job->riser)) / job->riser);
  else
    g = 0.0;
  return base + lo + g * (hi - lo);
}

static void
filter_row (const void *user, const TgRegion *r, int j, const float *const *in, float *dst)
{
  const FilterJob *job = user;
  const float *src = in[0];
  int w = r->width;

  (void) j;
  switch (job->kind)
    {
    case K_REMAP:
      for (int i = 0; i < w; i++)
        {
          double v = job->o0 + ((double) src[i] - job->i0) * job->scale;
          if (job->clamp)
            v = v < job->lo ? job->lo : (v > job->hi ? job->hi : v);
          dst[i] = (float) v;
        }
      break;
    case K_CLAMP:
      for (int i = 0; i < w; i++)
        {
          double v = src[i];
          dst[i] = (float) (v < job->lo ? job->lo : (v > job->hi ? job->hi : v));
        }
      break;
    case K_INVERT:
      for (int i = 0; i < w; i++)
        dst[i] = (float) (job->twice_pivot - (double) src[i]);
      break;
    case K_TERRACE:
      for (int i = 0; i < w; i++)
        dst[i] = (float) terrace_value (job, src[i]);
      break;
    }
}

/* --- filter.remap --------------------------------------------------------- */

typedef struct
{
  double min_input, max_input, min_output, max_output;
  bool clamp;
} RemapParams;

static const TgParamDesc remap_params[] = {
  TG_PARAM_FLOAT (RemapParams, min_input, .label = N_("Input low"), .def = 0.0, .min = -1e6,
                  .max = 1e6, .soft_min = 0.0, .soft_max = 1.0,
                  .help = N_("Input height that maps to the output low")),
  TG_PARAM_FLOAT (RemapParams, max_input, .label = N_("Input high"), .def = 1.0, .min = -1e6,
                  .max = 1e6, .soft_min = 0.0, .soft_max = 1.0,
                  .help = N_("Input height that maps to the output high")),
  TG_PARAM_FLOAT (RemapParams, min_output, .label = N_("Output low"), .def = 0.0, .min = -1e6,
                  .max = 1e6, .soft_min = 0.0, .soft_max = 1.0,
                  .help = N_("Height the input low becomes")),
  TG_PARAM_FLOAT (RemapParams, max_output, .label = N_("Output high"), .def = 1.0, .min = -1e6,
                  .max = 1e6, .soft_min = 0.0, .soft_max = 1.0,
                  .help = N_("Height the input high becomes")),
  TG_PARAM_BOOL (RemapParams, clamp, .label = N_("Clamp"), .def = false,
                 .help = N_("Keep the result between the output low and high")),
};

static int
remap_check (const void *params, TgError *err)
{
  const RemapParams *p = params;

  if (p->min_input == p->max_input)
    return tg_error_set (err, TG_ERANGE, "params.max_input", TG_MSG_INPUT_HIGH_EQUALS_LOW,
                         p->min_input);
  return 0;
}

static int
remap_eval (TgEvalCtx *c)
{
  const RemapParams *p = tg_eval_params (c);
  FilterJob job = { .kind = K_REMAP };

  job.i0 = p->min_input;
  job.o0 = p->min_output;
  job.scale = (p->max_output - p->min_output) / (p->max_input - p->min_input);
  job.lo = fmin (p->min_output, p->max_output);
  job.hi = fmax (p->min_output, p->max_output);
  job.clamp = p->clamp;
  return tg_eval_map_rows (c, 1, filter_row, &job);
}

static const TgNodeDesc remap_desc = {
  .type = "filter.remap",
  .category = TG_CATEGORY_FILTERS,
  .label = N_("Remap"),
  .help = N_("Maps the input range linearly onto the output range"),
  TG_INPUTS (filter_inputs),
  TG_OUTPUTS (filter_outputs),
  TG_PARAMS (RemapParams, remap_params),
  .locality = TG_LOCALITY_LOCAL,
  .check = remap_check,
  .eval = remap_eval,
  .version = 1,
};
TG_NODE_REGISTER (remap_desc);

/* --- filter.clamp --------------------------------------------------------- */

typedef struct
{
  double min_height, max_height;
} ClampParams;

static const TgParamDesc clamp_params[] = {
  TG_PARAM_FLOAT (ClampParams, min_height, .label = N_("Minimum"), .def = 0.0, .min = -1e6,
                  .max = 1e6, .soft_min = 0.0, .soft_max = 1.0,
                  .help = N_("Lower heights are raised to this")),
  TG_PARAM_FLOAT (ClampParams, max_height, .label = N_("Maximum"), .def = 1.0, .min = -1e6,
                  .max = 1e6, .soft_min = 0.0, .soft_max = 1.0,
                  .help = N_("Higher heights are lowered to this")),
};

static int
clamp_check (const void *params, TgError *err)
{
  const ClampParams *p = params;

  if (p->min_height > p->max_height)
    return tg_error_set (err, TG_ERANGE, "params.max_height", TG_MSG_MAX_BELOW_MIN, p->max_height,
                         p->min_height);
  return 0;
}

static int
clamp_eval (TgEvalCtx *c)
{
  const ClampParams *p = tg_eval_params (c);
  FilterJob job = { .kind = K_CLAMP };

  job.lo = p->min_height;
  job.hi = p->max_height;
  return tg_eval_map_rows (c, 1, filter_row, &job);
}

static const TgNodeDesc clamp_desc = {
  .type = "filter.clamp",
  .category = TG_CATEGORY_FILTERS,
  .label = N_("Clamp"),
  .help = N_("Limits height to a range"),
  TG_INPUTS (filter_inputs),
  TG_OUTPUTS (filter_outputs),
  TG_PARAMS (ClampParams, clamp_params),
  .locality = TG_LOCALITY_LOCAL,
  .check = clamp_check,
  .eval = clamp_eval,
  .version = 1,
};
TG_NODE_REGISTER (clamp_desc);

/* --- filter.invert -------------------------------------------------------- */

typedef struct
{
  double pivot;
} InvertParams;

static const TgParamDesc invert_params[] = {
  TG_PARAM_FLOAT (InvertParams, pivot, .label = N_("Pivot"), .def = 0.5, .min = 0.0, .max = 1.0,
                  .help = N_("Height that stays put; the result "
                             "is 2*pivot - h (1 - h by default)")),
};

static int
invert_eval (TgEvalCtx *c)
{
  const InvertParams *p = tg_eval_params (c);
  FilterJob job = { .kind = K_INVERT };

  job.twice_pivot = 2.0 * p->pivot;
  return tg_eval_map_rows (c, 1, filter_row, &job);
}

static const TgNodeDesc invert_desc = {
  .type = "filter.invert",
  .category = TG_CATEGORY_FILTERS,
  .label = N_("Invert"),
  .help = N_("Turns the terrain upside down about a pivot height: valleys become ridges"),
  TG_INPUTS (filter_inputs),
  TG_OUTPUTS (filter_outputs),
  TG_PARAMS (InvertParams, invert_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = invert_eval,
  .version = 1,
};
TG_NODE_REGISTER (invert_desc);

/* --- filter.terrace ------------------------------------------------------- */

#define TERRACE_STEPS_MAX 256

typedef struct
{
  int steps;
  double sharpness;
  bool uniform;
  int seed;
} TerraceParams;

static const TgParamDesc terrace_params[] = {
  TG_PARAM_INT (TerraceParams, steps, .label = N_("Steps"), .def = 8, .min = 1,
                .max = TERRACE_STEPS_MAX, .help = N_("Number of steps between height 0 and 1")),
  TG_PARAM_FLOAT (TerraceParams, sharpness, .label = N_("Sharpness"), .def = 0.5, .min = 0.0,
                  .max = 1.0,
                  .help = N_("0: smooth rounded steps; 1: flat treads with vertical risers")),
  TG_PARAM_BOOL (TerraceParams, uniform, .label = N_("Uniform"), .def = true,
                 .help = N_("Evenly spaced steps; off varies each step's height from the seed")),
  TG_PARAM_SEED (TerraceParams, seed, .label = N_("Seed"),
                 .help = N_("Varies the step spacing when Uniform is off")),
};

static int
terrace_eval (TgEvalCtx *c)
{
  const TerraceParams *p = tg_eval_params (c);
  FilterJob job = { .kind = K_TERRACE };
  double bounds[TERRACE_STEPS_MAX + 1];
  int steps = p->steps < 1 ? 1 : (p->steps > TERRACE_STEPS_MAX ? TERRACE_STEPS_MAX : p->steps);

  job.steps = steps;
  job.riser = 1.0 - tg__clamp01 (p->sharpness);
  if (!p->uniform)
    {
      /* Each inner level moves by up to 35% of a step, so neighbours
       * stay at least 30% of a step apart and the levels keep their
       * order. */
      uint32_t seed = tg_eval_seed (c, p->seed);
      bounds[0] = 0.0;
      bounds[steps] = 1.0;
      for (int k = 1; k < steps; k++)
        {
          double u = tg_hash_unit (tg_hash2 (seed, k, 0x7e77ace));
          bounds[k] = ((double) k + 0.7 * (u - 0.5)) / steps;
        }
      job.bounds = bounds;
    }
  return tg_eval_map_rows (c, 1, filter_row, &job);
}

static const TgNodeDesc terrace_desc = {
  .type = "filter.terrace",
  .category = TG_CATEGORY_FILTERS,
  .label = N_("Terrace"),
  .help = N_("Cuts the height into steps, from smooth benches to hard cliffs"),
  TG_INPUTS (filter_inputs),
  TG_OUTPUTS (filter_outputs),
  TG_PARAMS (TerraceParams, terrace_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = terrace_eval,
  .version = 1,
};
TG_NODE_REGISTER (terrace_desc);

/* --- filter.normalize ----------------------------------------------------- */

/* Global: the engine hands this node the whole lattice.  The minimum and
 * maximum are reduced per row into an array, then combined in row order,
 * so the result does not depend on how rows were split among threads. */

typedef struct
{
  const TgValue *in;
  TgRegion region; /* what is read */
  float *row_min, *row_max;
} NormalizeJob;

/* How the range found is stretched onto 0..1. */
typedef struct
{
  double lo, span;
  bool flat;
} StretchJob;

static void
normalize_reduce_rows (void *user, int begin, int end)
{
  const NormalizeJob *job = user;
  const TgRegion *r = &job->region;

  for (int j = begin; j < end; j++)
    {
      const float *src = tg__grid_row (job->in, r, j);
      float mn = INFINITY, mx = -INFINITY;
      /* NaN compares false both ways and is skipped. */
      for (int i = 0; i < r->width; i++)
        {
          mn = src[i] < mn ? src[i] : mn;
          mx = src[i] > mx ? src[i] : mx;
        }
      job->row_min[j] = mn;
      job->row_max[j] = mx;
    }
}

static void
normalize_apply_row (const void *user, const TgRegion *r, int j, const float *const *in,
                     float *dst)
{
  const StretchJob *job = user;
  const float *src = in[0];

  (void) j;
  if (job->flat)
    for (int i = 0; i < r->width; i++)
      dst[i] = (float) tg__clamp01 (src[i]);
  else
    /* A division, not a multiply by the reciprocal: x / x is exactly
     * 1, so the maximum lands on 1.0 exactly. */
    for (int i = 0; i < r->width; i++)
      dst[i] = (float) (((double) src[i] - job->lo) / job->span);
}

/* The lowest and highest sample of the input over the context's region. */
static int
normalize_range (TgEvalCtx *c, float *mn_out, float *mx_out)
{
  const TgRegion *region = tg_eval_region (c);
  NormalizeJob job = { 0 };
  float mn = INFINITY, mx = -INFINITY;
  int rc;

  job.in = tg_eval_input (c, 0);
  if ((rc = tg__check_grid_input (c, job.in, "height", region)) < 0)
    return rc;
  job.row_min = malloc (sizeof (float) * 2 * (size_t) (region->height > 0 ? region->height : 1));
  if (!job.row_min)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  job.row_max = job.row_min + region->height;
  job.region = *region;
  rc = tg_eval_parallel (c, region->height, tg__grain_rows (region->width), normalize_reduce_rows,
                         &job);
  for (int j = 0; rc == 0 && j < region->height; j++)
    {
      mn = job.row_min[j] < mn ? job.row_min[j] : mn;
      mx = job.row_max[j] > mx ? job.row_max[j] : mx;
    }
  free (job.row_min);
  *mn_out = mn;
  *mx_out = mx;
  return rc;
}

/* Writes the output over the context's region stretched from MN..MX. */
static int
normalize_apply (TgEvalCtx *c, float mn, float mx)
{
  StretchJob job;

  /* A flat (or empty, or all-NaN) map has no range to stretch: pass it
   * through clamped to 0..1 instead of dividing by zero.  + 0.0 makes a
   * -0 minimum +0, so which zero was met first (an order that differs
   * between a whole map and its tiles) cannot show in the result. */
  job.lo = (double) mn + 0.0;
  job.span = (double) mx - (double) mn;
  job.flat = !(job.span > 0.0) || !isfinite (job.span);
  return tg_eval_map_rows (c, 1, normalize_apply_row, &job);
}

static int
normalize_eval (TgEvalCtx *c)
{
  float mn, mx;
  int rc = normalize_range (c, &mn, &mx);

  return rc < 0 ? rc : normalize_apply (c, mn, mx);
}

/* Tiled: each tile's range (step 0), one reduction of the ranges in tile
 * order, then each tile stretched by the world's range (step 1).  Minimum
 * and maximum are exact in any order, so the bytes are the whole map's. */
static int
normalize_n_steps (const void *params, const TgRegion *full)
{
  (void) params;
  (void) full;
  return 2;
}

static int
normalize_halo (const void *params, const TgRegion *full, int step)
{
  (void) params;
  (void) full;
  (void) step;
  return 0;
}

static bool
normalize_has_reduce (const void *params, const TgRegion *full, int step)
{
  (void) params;
  (void) full;
  return step == 0;
}

static int
normalize_tile_step (TgEvalCtx *c, int step)
{
  float range[2];
  void *data;
  size_t size;
  int rc;

  if (step == 0)
    {
      if ((rc = normalize_range (c, &range[0], &range[1])) < 0)
        return rc;
      return tg_eval_blob_put (c, "range", range, sizeof range);
    }
  if ((rc = tg_eval_blob_get (c, -1, -1, "range", &data, &size)) < 0)
    return rc;
  if (size != sizeof range)
    {
      free (data);
      return tg_eval_fail (c, TG_EPARSE, "the world's range is damaged");
    }
  memcpy (range, data, sizeof range);
  free (data);
  return normalize_apply (c, range[0], range[1]);
}

static int
normalize_reduce (TgEvalCtx *c, int step)
{
  const TgTiling *t = tg_eval_tiling (c);
  float mn = INFINITY, mx = -INFINITY, range[2];

  (void) step;
  for (int iy = 0; iy < t->ny; iy++)
    for (int ix = 0; ix < t->nx; ix++)
      {
        void *data;
        size_t size;
        int rc = tg_eval_blob_get (c, ix, iy, "range", &data, &size);
        if (rc < 0)
          return rc;
        if (size != sizeof range)
          {
            free (data);
            return tg_eval_fail (c, TG_EPARSE, "tile %d,%d's range is damaged", ix, iy);
          }
        memcpy (range, data, sizeof range);
        free (data);
        mn = range[0] < mn ? range[0] : mn;
        mx = range[1] > mx ? range[1] : mx;
      }
  range[0] = mn;
  range[1] = mx;
  return tg_eval_blob_put (c, "range", range, sizeof range);
}

static const TgTiledScheme normalize_tiled = {
  .n_steps = normalize_n_steps,
  .halo = normalize_halo,
  .tile_step = normalize_tile_step,
  .has_reduce = normalize_has_reduce,
  .reduce = normalize_reduce,
};

static const TgNodeDesc normalize_desc = {
  .type = "filter.normalize",
  .category = TG_CATEGORY_FILTERS,
  .label = N_("Normalize"),
  .help = N_("Stretches the whole map so its lowest point is 0 and its highest 1"),
  TG_INPUTS (filter_inputs),
  TG_OUTPUTS (filter_outputs),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = normalize_eval,
  .tiled = &normalize_tiled,
  .version = 1,
};
TG_NODE_REGISTER (normalize_desc);
