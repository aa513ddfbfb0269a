/* Fields from terrain and noise: field.from_height (the heightfield as a
 * solid, y - h(x, z)) and field.noise (the 3D noise of noise3.c in
 * metres, with its grid path for the mesher).
 */
#include <math.h>
#include <stdlib.h>

#include <tgraph/tgraph.h>

#include "fields.h"

/* --- field.noise -------------------------------------------------------- */

const char *const tg__noise3_basis_choices[] = { "perlin", "simplex", "value", "worley", NULL };
const char *const tg__noise3_worley_choices[] = { "f1", "f2", "f2_minus_f1", NULL };
const char *const tg__noise3_mode_choices[] = { "fbm", "ridged", "billow", NULL };

/* field.noise's parameters are exactly the 3D noise's. */
typedef TgNoise3Params NoiseParams;

static const TgParamDesc noise_params[] = {
  TG__NOISE3_PARAMS (10.0),
};

static const TgPortDesc field_out[] = {
  { .name = "field", .type = TG_TYPE_FIELD, .label = N_("Field"),
    .help = N_("The implicit field, negative inside") },
};

static void
noise_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                  float *out)
{
  tg__noise3_eval (f->data, n, x, y, z, out);
}

static int
noise_field_grid (const TgField *f, const TgFieldGrid *g, float *out, size_t sy, size_t sz,
                  TgFieldScratch *scratch)
{
  return tg__noise3_grid (f->data, g, out, sy, sz, scratch);
}

static int
noise_eval (TgEvalCtx *c)
{
  const NoiseParams *p = tg_eval_params (c);
  TgNoise3 *plan = malloc (sizeof *plan);
  TgField *f;

  if (plan == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  tg__noise3_plan (plan, p, tg_eval_seed (c, p->seed));
  f = tg__field_new (noise_field_eval, plan, free);
  if (f == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  if (tg__noise3_lattice (plan))
    f->eval_grid = noise_field_grid;
  f->lipschitz = plan->lipschitz;
  f->bounded = false;
  return tg__field_output (c, f);
}

static const TgNodeDesc noise_desc = {
  .type = "field.noise",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("3D Noise Field"),
  .help = N_("3D fractal noise as a field, from minus to plus the amplitude in metres: the "
             "bases and octave shaping of FBM Noise, in three dimensions.  Use it through "
             "Displace, or mesh it with an iso level for caves and sponges."),
  TG_OUTPUTS (field_out),
  TG_PARAMS (NoiseParams, noise_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = noise_eval,
  .version = 1,
};
TG_NODE_REGISTER (noise_desc);

/* --- field.from_height ---------------------------------------------------- */

typedef struct
{
  double offset_m;
} FromHeightParams;

static const TgParamDesc from_height_params[] = {
  TG_PARAM_FLOAT (FromHeightParams, offset_m, .label = N_("Offset"), .def = 0.0, .min = -1e6,
                  .max = 1e6, .soft_min = -1000.0, .soft_max = 1000.0, .unit = "m",
                  .help = N_("Raises the solid by this many metres")),
};

static const TgPortDesc from_height_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("The terrain; 1.0 is the world's height in metres") },
};

typedef struct
{
  TgValue *height;  /* reference held for the field's lifetime */
  double x0, z0;    /* world position of sample (0, 0): NW corner */
  double inv_cell;
  int w, h;
  float scale;      /* world.height_m */
  float offset;     /* metres */
} FromHeight;

static void
from_height_free (void *p)
{
  FromHeight *d = p;

  tg_value_unref (d->height);
  free (d);
}

static inline float
lerpf (float a, float b, float t)
{
  return a + t * (b - a);
}

/* Bilinear in world metres, the border repeating beyond the world; row 0
 * is north (+Z maximum), column 0 west (-X minimum). */
static void
from_height_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                        float *out)
{
  const FromHeight *d = f->data;
  const float *data = d->height->data;
  double wmax = (double) (d->w - 1), hmax = (double) (d->h - 1);

  for (int i = 0; i < n; i++)
    {
      double cx = ((double) x[i] - d->x0) * d->inv_cell;
      double cz = (d->z0 - (double) z[i]) * d->inv_cell;
      int i0, j0, i1, j1;
      float fx, fz, a, b, hgt;

      cx = cx > 0.0 ? (cx < wmax ? cx : wmax) : 0.0;
      cz = cz > 0.0 ? (cz < hmax ? cz : hmax) : 0.0;
      i0 = (int) cx;
      j0 = (int) cz;
      i1 = i0 + 1 < d->w ? i0 + 1 : i0;
      j1 = j0 + 1 < d->h ? j0 + 1 : j0;
      fx = (float) (cx - (double) i0);
      fz = (float) (cz - (double) j0);
      a = lerpf (data[(size_t) j0 * (size_t) d->w + (size_t) i0],
                 data[(size_t) j0 * (size_t) d->w + (size_t) i1], fx);
      b = lerpf (data[(size_t) j1 * (size_t) d->w + (size_t) i0],
                 data[(size_t) j1 * (size_t) d->w + (size_t) i1], fx);
      hgt = lerpf (a, b, fz);
      out[i] = y[i] - (hgt * d->scale + d->offset);
    }
}

static int
from_height_eval (TgEvalCtx *c)
{
  const FromHeightParams *p = tg_eval_params (c);
  const TgValue *in = tg_eval_input (c, 0);
  const TgWorld *world = tg_eval_world (c);
  FromHeight *d;
  TgField *f;
  double sx = 0.0, sz = 0.0, slope;

  if (in == NULL || in->data == NULL || in->channels != 1)
    return tg_eval_fail (c, TG_EMISSING, "input 'height' has no single-channel data");
  d = calloc (1, sizeof *d);
  if (d == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  d->height = tg_value_ref ((TgValue *) in);
  d->w = in->region.width;
  d->h = in->region.height;
  d->x0 = tg_region_x (&in->region, 0);
  d->z0 = tg_region_z (&in->region, 0);
  d->inv_cell = 1.0 / in->region.cell;
  d->scale = (float) world->height_m;
  d->offset = (float) p->offset_m;

  /* The steepest step between neighbours bounds the bilinear gradient. */
  for (int j = 0; j < d->h; j++)
    {
      const float *r0 = in->data + (size_t) j * (size_t) d->w;
      const float *r1 = j + 1 < d->h ? r0 + d->w : NULL;

      for (int i = 0; i < d->w; i++)
        {
          if (i + 1 < d->w)
            sx = fmax (sx, fabs ((double) r0[i + 1] - (double) r0[i]));
          if (r1)
            sz = fmax (sz, fabs ((double) r1[i] - (double) r0[i]));
        }
    }
  sx *= world->height_m / in->region.cell;
  sz *= world->height_m / in->region.cell;
  slope = sqrt (1.0 + sx * sx + sz * sz);

  f = tg__field_new (from_height_field_eval, d, from_height_free);
  if (f == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  f->lipschitz = (float) (slope * 1.001);
  f->bounded = false;
  return tg__field_output (c, f);
}

static const TgNodeDesc from_height_desc = {
  .type = "field.from_height",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("Terrain Field"),
  .help = N_("The terrain as a solid: the field is y minus the terrain height at (x, z), "
             "negative below the ground.  Combine it with shapes to cut tunnels and caves "
             "or add overhangs."),
  TG_INPUTS (from_height_inputs),
  TG_OUTPUTS (field_out),
  TG_PARAMS (FromHeightParams, from_height_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = from_height_eval,
  .version = 1,
};
TG_NODE_REGISTER (from_height_desc);
