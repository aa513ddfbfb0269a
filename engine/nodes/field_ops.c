/* Field operations: field.csg (union, intersection, subtraction and their
 * smooth versions), field.transform (translate, rotate, scale) and
 * field.displace (add a field or 3D noise).
 *
 * A composite field keeps references to its input values and evaluates
 * them batch by batch into scratch buffers on the stack: no grid is ever
 * materialised.  Each operation also works out its Lipschitz bound and,
 * where it can, the box outside which the field is positive, which is
 * what lets the mesher skip empty space.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "fields.h"

static const TgPortDesc field_out[] = {
  { .name = "field", .type = TG_TYPE_FIELD, .label = N_("Field"),
    .help = N_("The implicit field, negative inside") },
};

/* --- field.csg --------------------------------------------------------------- */

enum
{
  CSG_UNION,
  CSG_INTERSECTION,
  CSG_SUBTRACTION,
  CSG_SMOOTH_UNION,
  CSG_SMOOTH_INTERSECTION,
  CSG_SMOOTH_SUBTRACTION,
};

static const char *const csg_ops[] = { "union",        "intersection",        "subtraction",
                                       "smooth_union", "smooth_intersection", "smooth_subtraction",
                                       NULL };

typedef struct
{
  int op;
  double k_m;
} CsgParams;

static const TgParamDesc csg_params[] = {
  TG_PARAM_ENUM (CsgParams, op, .label = N_("Operation"), .def_s = "union", .choices = csg_ops,
                 .help = N_("union keeps what is inside either, intersection what is inside both, "
                            "subtraction what is inside A but not B; the smooth versions round the "
                            "seam over the blend radius")),
  TG_PARAM_FLOAT (CsgParams, k_m, .label = N_("Blend radius"), .def = 1.0, .min = 0.0, .max = 1e6,
                  .soft_min = 0.0, .soft_max = 100.0, .unit = "m",
                  .help = N_("Smooth operations: how far from the "
                             "seam the two shapes blend, in metres")),
};

static const TgPortDesc csg_inputs[] = {
  { .name = "a", .type = TG_TYPE_FIELD, .label = N_("A"), .help = N_("First field") },
  { .name = "b", .type = TG_TYPE_FIELD, .label = N_("B"), .help = N_("Second field") },
};

typedef struct
{
  TgValue *a, *b;
  int op;
  float k, inv_k;
} Csg;

static void
csg_free (void *p)
{
  Csg *d = p;

  tg_value_unref (d->a);
  tg_value_unref (d->b);
  free (d);
}

/* Polynomial smooth minimum (Quilez): min (a, b) - h^2 k / 4 with
 * h = max (k - |a - b|, 0) / k.  Its gradient is a convex combination of
 * the inputs' gradients, so it keeps their Lipschitz bound. */
static inline float
smin (float a, float b, float k, float inv_k)
{
  float h = k - fabsf (a - b);

  h = h > 0.0f ? h * inv_k : 0.0f;
  return fminf (a, b) - h * h * k * 0.25f;
}

static void
csg_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                float *out)
{
  const Csg *d = f->data;
  const TgField *fa = tg_value_field (d->a), *fb = tg_value_field (d->b);
  float b[TG_FIELD_BATCH_MAX];
  float k = d->k, ik = d->inv_k;

  fa->eval (fa, n, x, y, z, out);
  fb->eval (fb, n, x, y, z, b);
  switch (d->op)
    {
    case CSG_UNION:
      for (int i = 0; i < n; i++)
        out[i] = fminf (out[i], b[i]);
      break;
    case CSG_INTERSECTION:
      for (int i = 0; i < n; i++)
        out[i] = fmaxf (out[i], b[i]);
      break;
    case CSG_SUBTRACTION:
      for (int i = 0; i < n; i++)
        out[i] = fmaxf (out[i], -b[i]);
      break;
    case CSG_SMOOTH_UNION:
      for (int i = 0; i < n; i++)
        out[i] = smin (out[i], b[i], k, ik);
      break;
    case CSG_SMOOTH_INTERSECTION:
      for (int i = 0; i < n; i++)
        out[i] = -smin (-out[i], -b[i], k, ik);
      break;
    default:
      for (int i = 0; i < n; i++)
        out[i] = -smin (-out[i], b[i], k, ik);
      break;
    }
}

static void
box_union (TgField *f, const TgField *a, const TgField *b, float grow)
{
  f->bounded = a->bounded && b->bounded;
  for (int k = 0; k < 3 && f->bounded; k++)
    {
      f->min[k] = fminf (a->min[k], b->min[k]) - grow;
      f->max[k] = fmaxf (a->max[k], b->max[k]) + grow;
    }
}

static int
csg_eval (TgEvalCtx *c)
{
  const CsgParams *p = tg_eval_params (c);
  const TgField *fa, *fb;
  Csg *d = calloc (1, sizeof *d);
  TgField *f;
  int rc;

  if (d == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  if ((rc = tg__field_input (c, 0, "a", &d->a)) < 0
      || (rc = tg__field_input (c, 1, "b", &d->b)) < 0)
    {
      csg_free (d);
      return rc;
    }
  d->op = p->op;
  d->k = (float) p->k_m;
  d->inv_k = p->k_m > 0.0 ? (float) (1.0 / p->k_m) : 0.0f;
  /* A zero blend radius is the sharp operation (h is 0 everywhere). */
  if (p->k_m <= 0.0 && d->op >= CSG_SMOOTH_UNION)
    d->op -= CSG_SMOOTH_UNION;
  fa = tg_value_field (d->a);
  fb = tg_value_field (d->b);
  f = tg__field_new (csg_field_eval, d, csg_free);
  if (f == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  f->lipschitz = fa->lipschitz > 0.0f && fb->lipschitz > 0.0f
                   ? fmaxf (fa->lipschitz, fb->lipschitz) : 0.0f;
  switch (d->op)
    {
    case CSG_UNION:
      box_union (f, fa, fb, 0.0f);
      break;
    case CSG_INTERSECTION:
    case CSG_SMOOTH_INTERSECTION:
      /* Both are >= max (a, b): positive outside either input's box. */
      f->bounded = fa->bounded || fb->bounded;
      for (int k = 0; k < 3; k++)
        {
          f->min[k] = fa->bounded && fb->bounded ? fmaxf (fa->min[k], fb->min[k])
                      : (fa->bounded ? fa->min[k] : fb->min[k]);
          f->max[k] = fa->bounded && fb->bounded ? fminf (fa->max[k], fb->max[k])
                      : (fa->bounded ? fa->max[k] : fb->max[k]);
        }
      break;
    case CSG_SUBTRACTION:
    case CSG_SMOOTH_SUBTRACTION:
      /* Both are >= a, positive outside A's box. */
      f->bounded = fa->bounded;
      memcpy (f->min, fa->min, sizeof f->min);
      memcpy (f->max, fa->max, sizeof f->max);
      break;
    default:
      /* The smooth union dips below min (a, b) by k / 4 near the seam:
       * nothing guarantees it stays positive just outside the boxes. */
      f->bounded = false;
      break;
    }
  return tg__field_output (c, f);
}

static const TgNodeDesc csg_desc = {
  .type = "field.csg",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("Field CSG"),
  .help = N_("Combines two fields: union, intersection or subtraction (A minus B), sharp or "
             "smooth with a blend radius in metres"),
  TG_INPUTS (csg_inputs),
  TG_OUTPUTS (field_out),
  TG_PARAMS (CsgParams, csg_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = csg_eval,
  .version = 1,
};
TG_NODE_REGISTER (csg_desc);

/* --- field.transform --------------------------------------------------------- */

typedef struct
{
  double translate_m[3];
  double rotate_deg[3];
  double scale[3];
} TransformParams;

static const TgParamDesc transform_params[] = {
  TG_PARAM_VEC3 (TransformParams, translate_m, .label = N_("Translate"), .def_v = { 0.0, 0.0, 0.0 },
                 .unit = "m", .help = N_("Moves the shape by this many metres (x, y, z)")),
  TG_PARAM_VEC3 (TransformParams, rotate_deg, .label = N_("Rotate"), .def_v = { 0.0, 0.0, 0.0 },
                 .unit = "deg",
                 .help = N_("Turns the shape about the x, then y, "
                            "then z axis, in degrees (right-handed)")),
  TG_PARAM_VEC3 (TransformParams, scale, .label = N_("Scale"), .def_v = { 1.0, 1.0, 1.0 },
                 .help = N_("Stretches the shape along x, y and "
                            "z (before rotating); must not be 0")),
};

static const TgPortDesc transform_inputs[] = {
  { .name = "field", .type = TG_TYPE_FIELD, .label = N_("Field"),
    .help = N_("The field to move") },
};

typedef struct
{
  TgValue *in;
  float m[9];   /* world -> local: S^-1 R^T */
  float t[3];
  float mul;    /* smallest |scale|: keeps a distance a distance */
} Transform;

static void
transform_free (void *p)
{
  Transform *d = p;

  tg_value_unref (d->in);
  free (d);
}

static void
transform_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                      float *out)
{
  const Transform *d = f->data;
  const TgField *in = tg_value_field (d->in);
  float lx[TG_FIELD_BATCH_MAX], ly[TG_FIELD_BATCH_MAX], lz[TG_FIELD_BATCH_MAX];
  const float *m = d->m;

  for (int i = 0; i < n; i++)
    {
      float px = x[i] - d->t[0], py = y[i] - d->t[1], pz = z[i] - d->t[2];

      lx[i] = m[0] * px + m[1] * py + m[2] * pz;
      ly[i] = m[3] * px + m[4] * py + m[5] * pz;
      lz[i] = m[6] * px + m[7] * py + m[8] * pz;
    }
  in->eval (in, n, lx, ly, lz, out);
  for (int i = 0; i < n; i++)
    out[i] *= d->mul;
}

static int
transform_check (const void *params, TgError *err)
{
  const TransformParams *p = params;
  static const char *const axis[] = { "x", "y", "z" };

  for (int k = 0; k < 3; k++)
    if (!(fabs (p->scale[k]) >= 1e-6))
      return tg_error_set (err, TG_ERANGE, "params.scale", TG_MSG_SCALE_AXIS_ZERO, axis[k],
                           p->scale[k]);
  return 0;
}

/* R = Rz Ry Rx (x first), row-major. */
static void
rotation (const double deg[3], double r[9])
{
  double a = deg[0] * (M_PI / 180.0), b = deg[1] * (M_PI / 180.0), g = deg[2] * (M_PI / 180.0);
  double ca = cos (a), sa = sin (a), cb = cos (b), sb = sin (b), cg = cos (g), sg = sin (g);

  r[0] = cg * cb;
  r[1] = cg * sb * sa - sg * ca;
  r[2] = cg * sb * ca + sg * sa;
  r[3] = sg * cb;
  r[4] = sg * sb * sa + cg * ca;
  r[5] = sg * sb * ca - cg * sa;
  r[6] = -sb;
  r[7] = cb * sa;
  r[8] = cb * ca;
}

static int
transform_eval (TgEvalCtx *c)
{
  const TransformParams *p = tg_eval_params (c);
  const TgField *in;
  Transform *d;
  TgField *f;
  double r[9], smin;
  int rc;

  d = calloc (1, sizeof *d);
  if (d == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  if ((rc = tg__field_input (c, 0, "field", &d->in)) < 0)
    {
      transform_free (d);
      return rc;
    }
  in = tg_value_field (d->in);
  rotation (p->rotate_deg, r);
  smin = fmin (fabs (p->scale[0]), fmin (fabs (p->scale[1]), fabs (p->scale[2])));
  for (int i = 0; i < 3; i++)
    {
      for (int j = 0; j < 3; j++)
        d->m[3 * i + j] = (float) (r[3 * j + i] / p->scale[i]); /* (S^-1 R^T)_ij */
      d->t[i] = (float) p->translate_m[i];
    }
  /* f'(p) = s_min f (T^-1 p): |T^-1| = 1 / s_min, so a Lipschitz bound L
   * stays L, and a signed distance stays exact under uniform scaling and
   * a lower bound of the distance otherwise. */
  d->mul = (float) smin;
  f = tg__field_new (transform_field_eval, d, transform_free);
  if (f == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  f->lipschitz = in->lipschitz > 0.0f ? (float) ((double) in->lipschitz * 1.0001) : 0.0f;
  f->bounded = in->bounded;
  if (in->bounded)
    {
      /* The box of the 8 transformed corners. */
      for (int k = 0; k < 3; k++)
        {
          f->min[k] = INFINITY;
          f->max[k] = -INFINITY;
        }
      for (int corner = 0; corner < 8; corner++)
        {
          double q[3], w[3];

          for (int k = 0; k < 3; k++)
            q[k] = (corner >> k & 1 ? in->max[k] : in->min[k]) * p->scale[k];
          for (int k = 0; k < 3; k++)
            {
              w[k] = r[3 * k] * q[0] + r[3 * k + 1] * q[1] + r[3 * k + 2] * q[2]
                     + p->translate_m[k];
              f->min[k] = fminf (f->min[k], (float) w[k]);
              f->max[k] = fmaxf (f->max[k], (float) w[k]);
            }
        }
      /* Float rounding of the corners: widen by a hair. */
      for (int k = 0; k < 3; k++)
        {
          float pad = 1e-5f * (fabsf (f->min[k]) + fabsf (f->max[k])) + 1e-6f;
          f->min[k] -= pad;
          f->max[k] += pad;
        }
    }
  return tg__field_output (c, f);
}

static const TgNodeDesc transform_desc = {
  .type = "field.transform",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("Transform Field"),
  .help = N_("Scales, rotates (x, then y, then z) and moves a field.  Values are multiplied by "
             "the smallest scale, so a signed distance stays a distance under uniform "
             "scaling and a safe underestimate otherwise."),
  TG_INPUTS (transform_inputs),
  TG_OUTPUTS (field_out),
  TG_PARAMS (TransformParams, transform_params),
  .locality = TG_LOCALITY_GLOBAL,
  .check = transform_check,
  .eval = transform_eval,
  .version = 1,
};
TG_NODE_REGISTER (transform_desc);

/* --- field.displace ---------------------------------------------------------- */

typedef struct
{
  TgNoise3Params noise; /* first: TG__NOISE3_PARAMS's offsets are its own */
  double amount;
} DisplaceParams;
_Static_assert (offsetof (DisplaceParams, noise) == 0, "the noise parameters come first");

static const TgParamDesc displace_params[] = {
  TG__NOISE3_PARAMS (2.0),
  TG_PARAM_FLOAT (DisplaceParams, amount, .label = N_("Amount"), .def = 1.0, .min = -1e6,
                  .max = 1e6, .soft_min = -2.0, .soft_max = 2.0,
                  .help = N_("Multiplies the displacement: the noise, "
                             "or the 'by' field when one is linked")),
};

static const TgPortDesc displace_inputs[] = {
  { .name = "field", .type = TG_TYPE_FIELD, .label = N_("Field"),
    .help = N_("The shape to roughen") },
  { .name = "by", .type = TG_TYPE_FIELD, .label = N_("By"), .optional = true,
    .help = N_("A field to add instead of the built-in 3D noise") },
};

typedef struct
{
  TgValue *in, *by;  /* BY is NULL when the noise is used */
  TgNoise3 noise;
  float amount;
} Displace;

static void
displace_free (void *p)
{
  Displace *d = p;

  tg_value_unref (d->in);
  tg_value_unref (d->by);
  free (d);
}

static void
displace_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                     float *out)
{
  const Displace *d = f->data;
  const TgField *in = tg_value_field (d->in);
  float b[TG_FIELD_BATCH_MAX];

  in->eval (in, n, x, y, z, out);
  if (d->by)
    {
      const TgField *by = tg_value_field (d->by);
      by->eval (by, n, x, y, z, b);
    }
  else
    tg__noise3_eval (&d->noise, n, x, y, z, b);
  for (int i = 0; i < n; i++)
    out[i] += d->amount * b[i];
}

static int
displace_eval (TgEvalCtx *c)
{
  const DisplaceParams *p = tg_eval_params (c);
  const TgField *in, *by = NULL;
  Displace *d = calloc (1, sizeof *d);
  TgField *f;
  double lip_by;
  int rc;

  if (d == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  if ((rc = tg__field_input (c, 0, "field", &d->in)) < 0)
    {
      displace_free (d);
      return rc;
    }
  if (tg_eval_input (c, 1) && (rc = tg__field_input (c, 1, "by", &d->by)) < 0)
    {
      displace_free (d);
      return rc;
    }
  tg__noise3_plan (&d->noise, &p->noise, tg_eval_seed (c, p->noise.seed));
  d->amount = (float) p->amount;
  in = tg_value_field (d->in);
  if (d->by)
    by = tg_value_field (d->by);
  lip_by = by ? by->lipschitz : d->noise.lipschitz;
  f = tg__field_new (displace_field_eval, d, displace_free);
  if (f == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  f->lipschitz = in->lipschitz > 0.0f && (by == NULL || by->lipschitz > 0.0f)
                   ? (float) (((double) in->lipschitz + fabs (p->amount) * lip_by) * 1.0001)
                   : 0.0f;
  /* Adding a bounded amount can push the surface out of the box by any
   * distance the input field does not promise to exceed: unbounded. */
  f->bounded = false;
  return tg__field_output (c, f);
}

static const TgNodeDesc displace_desc = {
  .type = "field.displace",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("Displace Field"),
  .help = N_("Adds 3D noise (or a linked field) to a field, times an amount: rough rocks, "
             "eroded cliffs, lumpy caves"),
  TG_INPUTS (displace_inputs),
  TG_OUTPUTS (field_out),
  TG_PARAMS (DisplaceParams, displace_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = displace_eval,
  .version = 1,
};
TG_NODE_REGISTER (displace_desc);
