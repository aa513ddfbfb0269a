/* Selectors: masks in 0..1 from the terrain's height, slope, curvature and
 * aspect, the inputs of texturing (steep = rock, high = snow, north-facing
 * = moss).
 *
 * Every selector is a band with a smooth edge: 1 inside [min, max], a
 * smoothstep down to 0 over `falloff` outside it, so a mask covers
 * exactly the range asked for and fades beyond it.  Slope, curvature and
 * aspect are measured in world metres (height * world.height_m against
 * region->cell), so the same parameters select the same ground at any
 * resolution.  Angles: slope 0 = flat, 90 = vertical; aspect is the
 * compass direction the ground faces (downhill), 0 = north (+Z),
 * 90 = east (+X), 180 = south, 270 = west.
 */
#include <math.h>
#include <stdlib.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

#include "grid_util.h"
#include "spatial_util.h"

#define RAD2DEG (180.0 / M_PI)

static const TgPortDesc select_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Terrain to select from") },
};

static const TgPortDesc select_outputs[] = {
  { .name = "mask", .type = TG_TYPE_MASK, .label = N_("Mask"),
    .help = N_("1 where the terrain matches, fading to 0 over the falloff") },
};

static int
apron_one (const void *params, double cell_m)
{
  (void) params;
  (void) cell_m;
  return 1;
}

/* --- select.height -------------------------------------------------------- */

/* In height units (0..1 of world.height_m), like every height on a wire,
 * so a selection survives a change of the world's height scale along with
 * the terrain.  A range reaching 0 or 1 is open at that end: heights
 * pushed past the range by an unclamped combine stay selected. */

typedef struct
{
  double min_height, max_height, falloff;
} HeightParams;

static const TgParamDesc height_params[] = {
  TG_PARAM_FLOAT (HeightParams, min_height, .label = N_("Minimum"), .def = 0.5, .min = 0.0,
                  .max = 1.0,
                  .help = N_("Lowest height selected fully (0..1 of "
                             "the world's height; 0 = no lower limit)")),
  TG_PARAM_FLOAT (HeightParams, max_height, .label = N_("Maximum"), .def = 1.0, .min = 0.0,
                  .max = 1.0, .help = N_("Highest height selected fully (1 = no upper limit)")),
  TG_PARAM_FLOAT (HeightParams, falloff, .label = N_("Falloff"), .def = 0.05, .min = 0.0,
                  .max = 1.0,
                  .help = N_("Height over which the mask fades to 0 outside the range")),
};

static int
height_check (const void *params, TgError *err)
{
  const HeightParams *p = params;

  if (p->min_height > p->max_height)
    return tg_error_set (err, TG_ERANGE, "params.max_height", TG_MSG_MAX_BELOW_MIN, p->max_height,
                         p->min_height);
  return 0;
}

typedef struct
{
  double lo, hi, fall;
} HeightJob;

static void
height_row (const void *user, const TgRegion *r, int j, const float *const *in, float *dst)
{
  const HeightJob *job = user;

  (void) j;
  for (int i = 0; i < r->width; i++)
    dst[i] = (float) tg__band (in[0][i], job->lo, job->hi, job->fall);
}

static int
height_eval (TgEvalCtx *c)
{
  const HeightParams *p = tg_eval_params (c);
  HeightJob job;

  job.lo = p->min_height <= 0.0 ? -INFINITY : p->min_height;
  job.hi = p->max_height >= 1.0 ? INFINITY : p->max_height;
  job.fall = p->falloff;
  return tg_eval_map_rows (c, 1, height_row, &job);
}

static const TgNodeDesc height_desc = {
  .type = "select.height",
  .category = TG_CATEGORY_SELECTORS,
  .label = N_("Select height"),
  .help = N_("Mask of the terrain between two heights"),
  TG_INPUTS (select_inputs),
  TG_OUTPUTS (select_outputs),
  TG_PARAMS (HeightParams, height_params),
  .locality = TG_LOCALITY_LOCAL,
  .check = height_check,
  .eval = height_eval,
  .version = 1,
};
TG_NODE_REGISTER (height_desc);

/* --- select.slope and select.aspect: one gradient kernel ------------------- */

typedef struct
{
  double min_slope_deg, max_slope_deg, falloff_deg;
} SlopeParams;

static const TgParamDesc slope_params[] = {
  TG_PARAM_FLOAT (SlopeParams, min_slope_deg, .label = N_("Minimum"), .def = 30.0, .min = 0.0,
                  .max = 90.0, .unit = "deg",
                  .help = N_("Gentlest slope selected fully (0 = flat)")),
  TG_PARAM_FLOAT (SlopeParams, max_slope_deg, .label = N_("Maximum"), .def = 90.0, .min = 0.0,
                  .max = 90.0, .unit = "deg",
                  .help = N_("Steepest slope selected fully (90 = vertical)")),
  TG_PARAM_FLOAT (SlopeParams, falloff_deg, .label = N_("Falloff"), .def = 5.0, .min = 0.0,
                  .max = 90.0, .unit = "deg",
                  .help = N_("Angle over which the mask fades to 0 outside the range")),
};

static int
slope_check (const void *params, TgError *err)
{
  const SlopeParams *p = params;

  if (p->min_slope_deg > p->max_slope_deg)
    return tg_error_set (err, TG_ERANGE, "params.max_slope_deg", TG_MSG_MAX_SLOPE_BELOW_MIN,
                         p->max_slope_deg, p->min_slope_deg);
  return 0;
}

typedef struct
{
  double direction_deg, spread_deg, min_slope_deg;
} AspectParams;

static const TgParamDesc aspect_params[] = {
  TG_PARAM_FLOAT (AspectParams, direction_deg, .label = N_("Direction"), .def = 0.0, .min = 0.0,
                  .max = 360.0, .unit = "deg",
                  .help = N_("Compass direction the selected slopes face: 0 = north (+Z), 90 = "
                             "east (+X), 180 = south, 270 = west")),
  TG_PARAM_FLOAT (AspectParams, spread_deg, .label = N_("Spread"), .def = 90.0, .min = 0.0,
                  .max = 180.0, .unit = "deg",
                  .help = N_("Angle either side of the direction at which the mask reaches 0")),
  TG_PARAM_FLOAT (AspectParams, min_slope_deg, .label = N_("Minimum slope"), .def = 2.0, .min = 0.0,
                  .max = 90.0, .unit = "deg",
                  .help = N_("Flatter ground fades out, since it "
                             "faces no direction in particular")),
};

typedef enum
{
  GRAD_SLOPE,
  GRAD_ASPECT,
} GradKind;

typedef struct
{
  GradKind kind;
  double scale;       /* height_m / (2 * cell) */
  /* slope: band on the angle */
  double lo, hi, fall;
  /* slope, on the squared gradient t = tan^2 (slope): below T_ZERO or
   * above T_ZERO_HI the band is 0, between T_ONE_LO and T_ONE_HI it is
   * 1, without an arctangent; elsewhere (the falloff, NaN) it is
   * computed.  The bounds sit 1e-12 inside the true ones, far more than
   * the rounding of atan and tan, so the mask is the same bit for bit. */
  double t_zero, t_zero_hi, t_one_lo, t_one_hi;
  /* aspect */
  double dir, spread, min_slope;
} GradJob;

/* Angle between compass directions A and B, 0..180. */
static inline double
angle_between (double a, double b)
{
  double d = fmod (fabs (a - b), 360.0);

  return d > 180.0 ? 360.0 - d : d;
}

static void
grad_row (const void *user, const TgRegion *r, int j, const TgValue *const *in, float *dst)
{
  const GradJob *job = user;
  const float *n = tg__grid_row (in[0], r, j - 1);
  const float *m = tg__grid_row (in[0], r, j);
  const float *s = tg__grid_row (in[0], r, j + 1);

  if (job->kind == GRAD_SLOPE)
    for (int i = 0; i < r->width; i++)
      {
        double gx, gz, t;
        tg__gradient (n, m, s, i, job->scale, &gx, &gz);
        t = gx * gx + gz * gz;
        if (t < job->t_zero || t > job->t_zero_hi)
          dst[i] = 0.0f;
        else if (t > job->t_one_lo && t < job->t_one_hi)
          dst[i] = 1.0f;
        else
          dst[i] = (float) tg__band (atan (sqrt (t)) * RAD2DEG, job->lo, job->hi, job->fall);
      }
  else
    for (int i = 0; i < r->width; i++)
      {
        double gx, gz, slope, facing, v;
        tg__gradient (n, m, s, i, job->scale, &gx, &gz);
        slope = atan (sqrt (gx * gx + gz * gz)) * RAD2DEG;
        /* The ground faces downhill, -gradient; compass angle from
         * north (+Z) turning east (+X). */
        facing = atan2 (-gx, -gz) * RAD2DEG;
        if (facing < 0.0)
          facing += 360.0;
        v = job->spread > 0.0
              ? tg__smoothstep01 (1.0 - angle_between (facing, job->dir) / job->spread)
              : (double) (angle_between (facing, job->dir) == 0.0);
        if (job->min_slope > 0.0)
          v *= tg__smoothstep01 (slope / job->min_slope);
        else if (!(slope > 0.0))
          v = 0.0;
        dst[i] = (float) (isnan (v) ? 0.0 : v);
      }
}

static int
grad_run (TgEvalCtx *c, GradJob *job)
{
  const TgRegion *region = tg_eval_region (c);

  if (!(region->cell > 0.0))
    return tg_eval_fail (c, TG_EINVAL, TG_MSG_WORLD_NO_EXTENT);
  job->scale = tg_eval_world (c)->height_m / (2.0 * region->cell);
  return tg_eval_map_area_rows (c, 1, 1, grad_row, job);
}

#define SLOPE_T_MARGIN 1e-12

/* tan^2 of DEG degrees times MARGIN; AT0 for DEG at or below 0, AT90 at
 * or above 90. */
static double
slope_t (double deg, double margin, double at0, double at90)
{
  double t;

  if (!(deg > 0.0))
    return at0;
  if (!(deg < 90.0))
    return at90;
  t = tan (deg / RAD2DEG);
  return t * t * margin;
}

static int
slope_eval (TgEvalCtx *c)
{
  const SlopeParams *p = tg_eval_params (c);
  GradJob job = { .kind = GRAD_SLOPE };

  job.lo = p->min_slope_deg;
  job.hi = p->max_slope_deg;
  job.fall = p->falloff_deg;
  /* Where a bound has nothing to compare with, the test it makes never
   * passes (-1 or +inf), except that every slope is at or above 0. */
  job.t_zero = slope_t (job.lo - job.fall, 1.0 - SLOPE_T_MARGIN, -1.0, -1.0);
  job.t_zero_hi = slope_t (job.hi + job.fall, 1.0 + SLOPE_T_MARGIN, INFINITY, INFINITY);
  job.t_one_lo = slope_t (job.lo, 1.0 + SLOPE_T_MARGIN, -1.0, INFINITY);
  job.t_one_hi = slope_t (job.hi, 1.0 - SLOPE_T_MARGIN, -1.0, INFINITY);
  return grad_run (c, &job);
}

static const TgNodeDesc slope_desc = {
  .type = "select.slope",
  .category = TG_CATEGORY_SELECTORS,
  .label = N_("Select slope"),
  .help = N_("Mask of the terrain between two slope angles, measured in world metres"),
  TG_INPUTS (select_inputs),
  TG_OUTPUTS (select_outputs),
  TG_PARAMS (SlopeParams, slope_params),
  .locality = TG_LOCALITY_APRON,
  .apron = apron_one,
  .check = slope_check,
  .eval = slope_eval,
  .version = 1,
};
TG_NODE_REGISTER (slope_desc);

static int
aspect_eval (TgEvalCtx *c)
{
  const AspectParams *p = tg_eval_params (c);
  GradJob job = { .kind = GRAD_ASPECT };

  job.dir = fmod (p->direction_deg, 360.0);
  job.spread = p->spread_deg;
  job.min_slope = p->min_slope_deg;
  return grad_run (c, &job);
}

static const TgNodeDesc aspect_desc = {
  .type = "select.aspect",
  .category = TG_CATEGORY_SELECTORS,
  .label = N_("Select aspect"),
  .help = N_("Mask of the slopes facing a compass direction (0 = north, 90 = east)"),
  TG_INPUTS (select_inputs),
  TG_OUTPUTS (select_outputs),
  TG_PARAMS (AspectParams, aspect_params),
  .locality = TG_LOCALITY_APRON,
  .apron = apron_one,
  .eval = aspect_eval,
  .version = 1,
};
TG_NODE_REGISTER (aspect_desc);

/* --- select.curvature ------------------------------------------------------ */

/* Curvature at the scale of radius_m: how far (in metres) the ground lies
 * above the Gaussian-weighted average of its surroundings.  Ridges, knolls
 * and crests are above it (convex), gullies, hollows and valley floors
 * below (concave).  The mask reaches 1 at `depth_m` above (or below). */

enum
{
  CURV_CONVEX,
  CURV_CONCAVE,
  CURV_BOTH,
};

static const char *const curvature_modes[] = { "convex", "concave", "both", NULL };

typedef struct
{
  int mode;
  double radius_m, depth_m;
} CurvatureParams;

static const TgParamDesc curvature_params[] = {
  TG_PARAM_ENUM (CurvatureParams, mode, .label = N_("Select"), .def_s = "convex",
                 .choices = curvature_modes,
                 .help = N_("convex: ridges and crests; concave: gullies and hollows; both")),
  TG_PARAM_FLOAT (CurvatureParams, radius_m, .label = N_("Radius"), .def = 50.0, .min = 0.0,
                  .max = 1e5, .soft_min = 0.0, .soft_max = 1000.0, .unit = "m",
                  .help = N_("Size of the surroundings each point is "
                             "compared with; larger finds larger landforms")),
  TG_PARAM_FLOAT (CurvatureParams, depth_m, .label = N_("Depth"), .def = 5.0, .min = 1e-6,
                  .max = 1e5, .soft_min = 0.1, .soft_max = 100.0, .unit = "m",
                  .help = N_("Height above (convex) or below (concave) "
                             "the surroundings that gives a full mask")),
};

static int
curvature_apron (const void *params, double cell_m)
{
  const CurvatureParams *p = params;

  return tg__blur_cells (p->radius_m, cell_m);
}

typedef struct
{
  const TgValue *in;
  TgValue *out;
  int mode;
  double inv_depth; /* height_m / depth_m */
} CurvJob;

static void
curvature_rows (void *user, int begin, int end)
{
  const CurvJob *job = user;
  const TgRegion *r = &job->out->region;

  for (int j = begin; j < end; j++)
    {
      const float *h = tg__grid_row (job->in, r, j);
      float *dst = tg_value_row (job->out, j); /* holds the blurred height */
      for (int i = 0; i < r->width; i++)
        {
          double d = ((double) h[i] - (double) dst[i]) * job->inv_depth;
          if (job->mode == CURV_CONCAVE)
            d = -d;
          else if (job->mode == CURV_BOTH)
            d = fabs (d);
          dst[i] = (float) (isnan (d) ? 0.0 : tg__clamp01 (d));
        }
    }
}

static int
curvature_eval (TgEvalCtx *c)
{
  const CurvatureParams *p = tg_eval_params (c);
  const TgRegion *region = tg_eval_region (c);
  CurvJob job = { 0 };
  int rc;

  job.in = tg_eval_input (c, 0);
  if ((rc = tg__check_grid_input (c, job.in, "height", region)) < 0)
    return rc;
  if (!(p->depth_m > 0.0))
    return tg_eval_fail (c, TG_ERANGE, "params.depth_m: must be above 0, got %g", p->depth_m);
  job.out = tg_eval_new_output (c, 0, 1);
  if (!job.out)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  if ((rc = tg__blur (c, job.in, region, p->radius_m, "radius_m", job.out->data)) < 0)
    return rc;
  job.mode = p->mode;
  job.inv_depth = tg_eval_world (c)->height_m / p->depth_m;
  return tg_eval_parallel (c, region->height, tg__grain_rows (region->width), curvature_rows,
                           &job);
}

static int
curvature_warn (const void *params, double cell_m, TgError *warn)
{
  const CurvatureParams *p = params;

  return tg_warn_below_cells (warn, "radius_m", "Radius", p->radius_m, cell_m, 1);
}

static const TgNodeDesc curvature_desc = {
  .type = "select.curvature",
  .category = TG_CATEGORY_SELECTORS,
  .label = N_("Select curvature"),
  .help = N_("Mask of ridges (convex) or gullies (concave) at a scale in metres"),
  TG_INPUTS (select_inputs),
  TG_OUTPUTS (select_outputs),
  TG_PARAMS (CurvatureParams, curvature_params),
  .locality = TG_LOCALITY_APRON,
  .apron = curvature_apron,
  .eval = curvature_eval,
  .warn = curvature_warn,
  .version = 1,
};
TG_NODE_REGISTER (curvature_desc);
