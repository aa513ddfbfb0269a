/* Simple generators: a constant height, a linear gradient across the world
 * and island shapes (radial, square, rounded square) with a smooth edge.
 *
 * All three are local: every sample is a pure function of its world
 * position (from integer lattice indices) and the world size, never of the
 * region being computed, so tiles and previews agree bit for bit.
 */
#include <math.h>
#include <stdbool.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

#include "grid_util.h"

static const TgPortDesc gen_height_out[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("The generated height, 0..1 of the world's height range") },
};

/* --- gen.constant --------------------------------------------------------- */

typedef struct
{
  double value;
} ConstantParams;

static const TgParamDesc constant_params[] = {
  TG_PARAM_FLOAT (ConstantParams, value, .label = N_("Value"), .def = 0.5, .min = 0.0, .max = 1.0,
                  .help = N_("Height everywhere, as a fraction of the world's height range")),
};

static void
constant_row (const void *user, const TgRegion *r, int j, const float *const *in, float *dst)
{
  float value = *(const float *) user;

  (void) j;
  (void) in;
  for (int i = 0; i < r->width; i++)
    dst[i] = value;
}

static int
constant_eval (TgEvalCtx *c)
{
  const ConstantParams *p = tg_eval_params (c);
  float value = (float) p->value;

  return tg_eval_map_rows (c, 1, constant_row, &value);
}

static const TgNodeDesc gen_constant_desc = {
  .type = "gen.constant",
  .category = TG_CATEGORY_GENERATORS,
  .label = N_("Constant"),
  .help = N_("The same height everywhere"),
  TG_OUTPUTS (gen_height_out),
  TG_PARAMS (ConstantParams, constant_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = constant_eval,
  .version = 1,
};
TG_NODE_REGISTER (gen_constant_desc);

/* --- gen.gradient --------------------------------------------------------- */

typedef struct
{
  double angle_deg;
  double from;
  double to;
} GradientParams;

static const TgParamDesc gradient_params[] = {
  TG_PARAM_FLOAT (GradientParams, angle_deg, .label = N_("Direction"), .def = 0.0, .min = 0.0,
                  .max = 360.0, .unit = "deg",
                  .help = N_("Direction the height rises towards, counter-clockwise from east (0 = "
                             "west to east, 90 = south to north)")),
  TG_PARAM_FLOAT (GradientParams, from, .label = N_("From"), .def = 0.0, .min = 0.0, .max = 1.0,
                  .help = N_("Height at the world edge the gradient starts from")),
  TG_PARAM_FLOAT (GradientParams, to, .label = N_("To"), .def = 1.0, .min = 0.0, .max = 1.0,
                  .help = N_("Height at the opposite world edge")),
};

/* cos and sin of DEG, exact at multiples of 90 degrees so that axis-aligned
 * gradients reach their end values exactly at the world's edges. */
static void
unit_direction (double deg, double *dx, double *dz)
{
  double d = fmod (deg, 360.0);

  if (d < 0.0)
    d += 360.0;
  if (d == 0.0)
    *dx = 1.0, *dz = 0.0;
  else if (d == 90.0)
    *dx = 0.0, *dz = 1.0;
  else if (d == 180.0)
    *dx = -1.0, *dz = 0.0;
  else if (d == 270.0)
    *dx = 0.0, *dz = -1.0;
  else
    {
      double r = d * (M_PI / 180.0);
      *dx = cos (r);
      *dz = sin (r);
    }
}

typedef struct
{
  double dx, dz;     /* unit direction of rise */
  double half_span;  /* largest projection of a world corner on (dx, dz) */
  double from, to;
} GradientJob;

static void
gradient_row (const void *user, const TgRegion *r, int j, const float *const *in, float *dst)
{
  const GradientJob *job = user;
  double z = tg_region_z (r, j);

  (void) in;
  for (int i = 0; i < r->width; i++)
    {
      double x = tg_region_x (r, i);
      /* Projection on the direction, mapped so the world's extreme
       * corners along it are 0 and 1; clamped for apron samples
       * outside the world. */
      double t = tg__clamp01 (0.5 + (x * job->dx + z * job->dz) / (2.0 * job->half_span));
      dst[i] = (float) (job->from + (job->to - job->from) * t);
    }
}

static int
gradient_eval (TgEvalCtx *c)
{
  const GradientParams *p = tg_eval_params (c);
  const TgWorld *w = tg_eval_world (c);
  GradientJob job;

  unit_direction (p->angle_deg, &job.dx, &job.dz);
  job.half_span = 0.5 * (fabs (job.dx) * w->size_x + fabs (job.dz) * w->size_z);
  if (!(job.half_span > 0.0))
    return tg_eval_fail (c, TG_EINVAL, "the world has no extent along the gradient");
  job.from = p->from;
  job.to = p->to;
  return tg_eval_map_rows (c, 1, gradient_row, &job);
}

static const TgNodeDesc gen_gradient_desc = {
  .type = "gen.gradient",
  .category = TG_CATEGORY_GENERATORS,
  .label = N_("Gradient"),
  .help = N_("A linear ramp across the whole world, from one edge to the opposite one"),
  TG_OUTPUTS (gen_height_out),
  TG_PARAMS (GradientParams, gradient_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = gradient_eval,
  .version = 1,
};
TG_NODE_REGISTER (gen_gradient_desc);

/* --- gen.shape ------------------------------------------------------------ */

enum
{
  SHAPE_RADIAL,
  SHAPE_SQUARE,
  SHAPE_ROUNDED_SQUARE,
};

static const char *const shape_choices[] = { "radial", "square", "rounded_square", NULL };

typedef struct
{
  int shape;
  double radius_m;
  double falloff_m;
  double center_m[2];
} ShapeParams;

static const TgParamDesc shape_params[] = {
  TG_PARAM_ENUM (ShapeParams, shape, .label = N_("Shape"), .def_s = "radial",
                 .choices = shape_choices,
                 .help = N_("Outline: a disc, a square, or a square "
                            "with rounded corners (a superellipse)")),
  TG_PARAM_FLOAT (ShapeParams, radius_m, .label = N_("Radius"), .def = 1500.0, .min = 0.0,
                  .max = 1e7, .soft_min = 0.0, .soft_max = 10000.0, .unit = "m",
                  .help = N_("Outer radius (half the side for "
                             "squares), where the shape reaches 0")),
  TG_PARAM_FLOAT (ShapeParams, falloff_m, .label = N_("Falloff"), .def = 500.0, .min = 0.0,
                  .max = 1e7, .soft_min = 0.0, .soft_max = 5000.0, .unit = "m",
                  .help = N_("Width of the smooth edge inside the radius; 0 gives a hard edge")),
  TG_PARAM_VEC2 (ShapeParams, center_m, .label = N_("Centre"), .def_v = { 0.0, 0.0 }, .unit = "m",
                 .help = N_("Centre of the shape as world X, Z")),
};

typedef struct
{
  int shape;
  double radius, falloff;
  double cx, cz;
} ShapeJob;

static void
shape_row (const void *user, const TgRegion *r, int j, const float *const *in, float *dst)
{
  const ShapeJob *job = user;
  double dz = tg_region_z (r, j) - job->cz;

  (void) in;
  for (int i = 0; i < r->width; i++)
    {
      double dx = tg_region_x (r, i) - job->cx;
      double d, v;

      switch (job->shape)
        {
        case SHAPE_SQUARE:
          d = fmax (fabs (dx), fabs (dz));
          break;
        case SHAPE_ROUNDED_SQUARE:
          /* L4 norm: a squircle, square-ish with round corners. */
          d = sqrt (sqrt (dx * dx * dx * dx + dz * dz * dz * dz));
          break;
        default:
          d = sqrt (dx * dx + dz * dz);
          break;
        }
      if (job->falloff > 0.0)
        v = tg__smoothstep01 ((job->radius - d) / job->falloff);
      else
        v = d <= job->radius ? 1.0 : 0.0;
      dst[i] = (float) v;
    }
}

static int
shape_eval (TgEvalCtx *c)
{
  const ShapeParams *p = tg_eval_params (c);
  ShapeJob job;

  job.shape = p->shape;
  job.radius = p->radius_m;
  job.falloff = p->falloff_m;
  job.cx = p->center_m[0];
  job.cz = p->center_m[1];
  return tg_eval_map_rows (c, 1, shape_row, &job);
}

static const TgNodeDesc gen_shape_desc = {
  .type = "gen.shape",
  .category = TG_CATEGORY_GENERATORS,
  .label = N_("Shape"),
  .help = N_("An island mask: 1 inside the shape, 0 outside, with a smoothstep edge"),
  TG_OUTPUTS (gen_height_out),
  TG_PARAMS (ShapeParams, shape_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = shape_eval,
  .version = 1,
};
TG_NODE_REGISTER (gen_shape_desc);
