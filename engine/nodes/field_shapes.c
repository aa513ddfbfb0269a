/* Primitive fields: field.sphere, field.box (with rounded edges),
 * field.capsule, field.torus and field.plane.
 *
 * Each is an exact signed distance in metres (negative inside), so its
 * Lipschitz bound is 1 and its bounding box is the shape's own: the
 * mesher can skip any block farther from the surface than its
 * half-diagonal.  Shapes sit in world space (+Y up); move and turn them
 * with field.transform.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "fields.h"

static const TgPortDesc field_out[] = {
  { .name = "field", .type = TG_TYPE_FIELD, .label = N_("Field"),
    .help = N_("Signed distance in metres, negative inside") },
};

/* The shape constants every primitive needs, in float. */
typedef struct
{
  float c[3];    /* centre, or segment start */
  float d[3];    /* box half size less the rounding; capsule segment; plane normal */
  float r, r2;   /* radius, rounding; torus minor radius; plane offset */
  float inv_len2;
} Shape;

static int
shape_output (TgEvalCtx *c, TgFieldEvalFn eval, const Shape *s, const double lo[3],
              const double hi[3])
{
  Shape *copy = malloc (sizeof *copy);
  TgField *f;

  if (copy == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  *copy = *s;
  f = tg__field_new (eval, copy, free);
  if (f == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  f->lipschitz = 1.0f;
  f->bounded = lo != NULL;
  for (int k = 0; k < 3 && lo; k++)
    {
      /* Rounded outward so a float never lands inside the surface's box. */
      f->min[k] = nextafterf ((float) lo[k], -INFINITY);
      f->max[k] = nextafterf ((float) hi[k], INFINITY);
    }
  return tg__field_output (c, f);
}

/* --- field.sphere ------------------------------------------------------------ */

typedef struct
{
  double center_m[3];
  double radius_m;
} SphereParams;

static const TgParamDesc sphere_params[] = {
  TG_PARAM_VEC3 (SphereParams, center_m, .label = N_("Centre"), .def_v = { 0.0, 0.0, 0.0 },
                 .unit = "m", .help = N_("Centre of the sphere (x, y, z), in metres")),
  TG_PARAM_FLOAT (SphereParams, radius_m, .label = N_("Radius"), .def = 10.0, .min = 1e-6,
                  .max = 1e7, .soft_min = 0.1, .soft_max = 1000.0, .unit = "m",
                  .help = N_("Radius of the sphere, in metres")),
};

static void
sphere_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                   float *out)
{
  const Shape *s = f->data;

  for (int i = 0; i < n; i++)
    {
      float dx = x[i] - s->c[0], dy = y[i] - s->c[1], dz = z[i] - s->c[2];
      out[i] = sqrtf (dx * dx + dy * dy + dz * dz) - s->r;
    }
}

static int
sphere_eval (TgEvalCtx *c)
{
  const SphereParams *p = tg_eval_params (c);
  Shape s = { 0 };
  double lo[3], hi[3];

  for (int k = 0; k < 3; k++)
    {
      s.c[k] = (float) p->center_m[k];
      lo[k] = p->center_m[k] - p->radius_m;
      hi[k] = p->center_m[k] + p->radius_m;
    }
  s.r = (float) p->radius_m;
  return shape_output (c, sphere_field_eval, &s, lo, hi);
}

static const TgNodeDesc sphere_desc = {
  .type = "field.sphere",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("Sphere"),
  .help = N_("A sphere as a signed distance field"),
  TG_OUTPUTS (field_out),
  TG_PARAMS (SphereParams, sphere_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = sphere_eval,
  .version = 1,
};
TG_NODE_REGISTER (sphere_desc);

/* --- field.box --------------------------------------------------------------- */

typedef struct
{
  double center_m[3];
  double size_m[3];
  double rounding_m;
} BoxParams;

static const TgParamDesc box_params[] = {
  TG_PARAM_VEC3 (BoxParams, center_m, .label = N_("Centre"), .def_v = { 0.0, 0.0, 0.0 },
                 .unit = "m", .help = N_("Centre of the box (x, y, z), in metres")),
  TG_PARAM_VEC3 (BoxParams, size_m, .label = N_("Size"), .def_v = { 10.0, 10.0, 10.0 }, .unit = "m",
                 .help = N_("Full size of the box along x, y and z, in metres")),
  TG_PARAM_FLOAT (BoxParams, rounding_m, .label = N_("Rounding"), .def = 0.0, .min = 0.0,
                  .max = 1e7, .soft_min = 0.0, .soft_max = 100.0, .unit = "m",
                  .help = N_("Radius of the rounded edges and corners, "
                             "in metres; at most half the smallest size")),
};

static int
box_check (const void *params, TgError *err)
{
  const BoxParams *p = params;
  double smallest = fmin (p->size_m[0], fmin (p->size_m[1], p->size_m[2]));

  if (!(smallest > 0.0))
    return tg_error_set (err, TG_ERANGE, "params.size_m", TG_MSG_SIZES_ABOVE_0, smallest);
  if (p->rounding_m > 0.5 * smallest)
    return tg_error_set (err, TG_ERANGE, "params.rounding_m", TG_MSG_ROUNDING_TOO_LARGE,
                         p->rounding_m, smallest);
  return 0;
}

/* Exact distance to a box of half size d + r with edges rounded by r. */
static void
box_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                float *out)
{
  const Shape *s = f->data;

  for (int i = 0; i < n; i++)
    {
      float qx = fabsf (x[i] - s->c[0]) - s->d[0];
      float qy = fabsf (y[i] - s->c[1]) - s->d[1];
      float qz = fabsf (z[i] - s->c[2]) - s->d[2];
      float ox = fmaxf (qx, 0.0f), oy = fmaxf (qy, 0.0f), oz = fmaxf (qz, 0.0f);
      float in = fminf (fmaxf (qx, fmaxf (qy, qz)), 0.0f);

      out[i] = sqrtf (ox * ox + oy * oy + oz * oz) + in - s->r;
    }
}

static int
box_eval (TgEvalCtx *c)
{
  const BoxParams *p = tg_eval_params (c);
  Shape s = { 0 };
  double lo[3], hi[3];

  for (int k = 0; k < 3; k++)
    {
      s.c[k] = (float) p->center_m[k];
      s.d[k] = (float) (0.5 * p->size_m[k] - p->rounding_m);
      lo[k] = p->center_m[k] - 0.5 * p->size_m[k];
      hi[k] = p->center_m[k] + 0.5 * p->size_m[k];
    }
  s.r = (float) p->rounding_m;
  return shape_output (c, box_field_eval, &s, lo, hi);
}

static const TgNodeDesc box_desc = {
  .type = "field.box",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("Box"),
  .help = N_("An axis-aligned box, optionally with rounded edges, as a signed distance field"),
  TG_OUTPUTS (field_out),
  TG_PARAMS (BoxParams, box_params),
  .locality = TG_LOCALITY_GLOBAL,
  .check = box_check,
  .eval = box_eval,
  .version = 1,
};
TG_NODE_REGISTER (box_desc);

/* --- field.capsule ----------------------------------------------------------- */

typedef struct
{
  double a_m[3];
  double b_m[3];
  double radius_m;
} CapsuleParams;

static const TgParamDesc capsule_params[] = {
  TG_PARAM_VEC3 (CapsuleParams, a_m, .label = N_("End A"), .def_v = { 0.0, -5.0, 0.0 }, .unit = "m",
                 .help = N_("One end of the capsule's axis (x, y, z), in metres")),
  TG_PARAM_VEC3 (CapsuleParams, b_m, .label = N_("End B"), .def_v = { 0.0, 5.0, 0.0 }, .unit = "m",
                 .help = N_("The other end of the axis, in metres")),
  TG_PARAM_FLOAT (CapsuleParams, radius_m, .label = N_("Radius"), .def = 2.0, .min = 1e-6,
                  .max = 1e7, .soft_min = 0.1, .soft_max = 100.0, .unit = "m",
                  .help = N_("Radius around the axis, in metres")),
};

static void
capsule_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                    float *out)
{
  const Shape *s = f->data;

  for (int i = 0; i < n; i++)
    {
      float px = x[i] - s->c[0], py = y[i] - s->c[1], pz = z[i] - s->c[2];
      float h = (px * s->d[0] + py * s->d[1] + pz * s->d[2]) * s->inv_len2;
      float dx, dy, dz;

      h = h < 0.0f ? 0.0f : (h > 1.0f ? 1.0f : h);
      dx = px - s->d[0] * h;
      dy = py - s->d[1] * h;
      dz = pz - s->d[2] * h;
      out[i] = sqrtf (dx * dx + dy * dy + dz * dz) - s->r;
    }
}

static int
capsule_eval (TgEvalCtx *c)
{
  const CapsuleParams *p = tg_eval_params (c);
  Shape s = { 0 };
  double lo[3], hi[3], len2 = 0.0;

  for (int k = 0; k < 3; k++)
    {
      double d = p->b_m[k] - p->a_m[k];
      s.c[k] = (float) p->a_m[k];
      s.d[k] = (float) d;
      len2 += d * d;
      lo[k] = fmin (p->a_m[k], p->b_m[k]) - p->radius_m;
      hi[k] = fmax (p->a_m[k], p->b_m[k]) + p->radius_m;
    }
  /* Coincident ends make a sphere: h stays 0. */
  s.inv_len2 = len2 > 0.0 ? (float) (1.0 / len2) : 0.0f;
  s.r = (float) p->radius_m;
  return shape_output (c, capsule_field_eval, &s, lo, hi);
}

static const TgNodeDesc capsule_desc = {
  .type = "field.capsule",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("Capsule"),
  .help = N_("A cylinder with round ends between two points, as a signed distance field: "
             "tunnels, pillars, branches"),
  TG_OUTPUTS (field_out),
  TG_PARAMS (CapsuleParams, capsule_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = capsule_eval,
  .version = 1,
};
TG_NODE_REGISTER (capsule_desc);

/* --- field.torus ------------------------------------------------------------- */

typedef struct
{
  double center_m[3];
  double major_radius_m;
  double minor_radius_m;
} TorusParams;

static const TgParamDesc torus_params[] = {
  TG_PARAM_VEC3 (TorusParams, center_m, .label = N_("Centre"), .def_v = { 0.0, 0.0, 0.0 },
                 .unit = "m", .help = N_("Centre of the ring (x, y, z), in metres")),
  TG_PARAM_FLOAT (TorusParams, major_radius_m, .label = N_("Ring radius"), .def = 10.0, .min = 0.0,
                  .max = 1e7, .soft_min = 0.0, .soft_max = 1000.0, .unit = "m",
                  .help = N_("From the centre to the middle of the tube, in metres")),
  TG_PARAM_FLOAT (TorusParams, minor_radius_m, .label = N_("Tube radius"), .def = 2.0, .min = 1e-6,
                  .max = 1e7, .soft_min = 0.1, .soft_max = 100.0, .unit = "m",
                  .help = N_("Radius of the tube, in metres")),
};

/* The ring lies flat, in the XZ plane around +Y. */
static void
torus_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                  float *out)
{
  const Shape *s = f->data;

  for (int i = 0; i < n; i++)
    {
      float px = x[i] - s->c[0], py = y[i] - s->c[1], pz = z[i] - s->c[2];
      float q = sqrtf (px * px + pz * pz) - s->r2;

      out[i] = sqrtf (q * q + py * py) - s->r;
    }
}

static int
torus_eval (TgEvalCtx *c)
{
  const TorusParams *p = tg_eval_params (c);
  Shape s = { 0 };
  double lo[3], hi[3], reach = p->major_radius_m + p->minor_radius_m;

  for (int k = 0; k < 3; k++)
    {
      double e = k == 1 ? p->minor_radius_m : reach;
      s.c[k] = (float) p->center_m[k];
      lo[k] = p->center_m[k] - e;
      hi[k] = p->center_m[k] + e;
    }
  s.r2 = (float) p->major_radius_m;
  s.r = (float) p->minor_radius_m;
  return shape_output (c, torus_field_eval, &s, lo, hi);
}

static const TgNodeDesc torus_desc = {
  .type = "field.torus",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("Torus"),
  .help = N_("A ring lying flat (around the y axis) as a signed distance field; turn it "
             "with Transform Field for an arch"),
  TG_OUTPUTS (field_out),
  TG_PARAMS (TorusParams, torus_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = torus_eval,
  .version = 1,
};
TG_NODE_REGISTER (torus_desc);

/* --- field.plane ------------------------------------------------------------- */

typedef struct
{
  double normal[3];
  double offset_m;
} PlaneParams;

static const TgParamDesc plane_params[] = {
  TG_PARAM_VEC3 (PlaneParams, normal, .label = N_("Normal"), .def_v = { 0.0, 1.0, 0.0 },
                 .help = N_("Direction the plane faces (any "
                            "length but 0); the solid is behind it")),
  TG_PARAM_FLOAT (PlaneParams, offset_m, .label = N_("Offset"), .def = 0.0, .min = -1e7, .max = 1e7,
                  .soft_min = -1000.0, .soft_max = 1000.0, .unit = "m",
                  .help = N_("Distance of the plane from the origin along its normal, in metres")),
};

static int
plane_check (const void *params, TgError *err)
{
  const PlaneParams *p = params;
  double len = sqrt (p->normal[0] * p->normal[0] + p->normal[1] * p->normal[1]
                     + p->normal[2] * p->normal[2]);

  if (!(len > 1e-12))
    return tg_error_set (err, TG_ERANGE, "params.normal", TG_MSG_NORMAL_ZERO);
  return 0;
}

static void
plane_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                  float *out)
{
  const Shape *s = f->data;

  for (int i = 0; i < n; i++)
    out[i] = x[i] * s->d[0] + y[i] * s->d[1] + z[i] * s->d[2] - s->r;
}

static int
plane_eval (TgEvalCtx *c)
{
  const PlaneParams *p = tg_eval_params (c);
  Shape s = { 0 };
  double len;

  len = sqrt (p->normal[0] * p->normal[0] + p->normal[1] * p->normal[1]
              + p->normal[2] * p->normal[2]);
  for (int k = 0; k < 3; k++)
    s.d[k] = (float) (p->normal[k] / len);
  s.r = (float) p->offset_m;
  return shape_output (c, plane_field_eval, &s, NULL, NULL);
}

static const TgNodeDesc plane_desc = {
  .type = "field.plane",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("Plane"),
  .help = N_("A half-space: solid behind a plane, as a signed distance field"),
  TG_OUTPUTS (field_out),
  TG_PARAMS (PlaneParams, plane_params),
  .locality = TG_LOCALITY_GLOBAL,
  .check = plane_check,
  .eval = plane_eval,
  .version = 1,
};
TG_NODE_REGISTER (plane_desc);
