/* Bedding strata: filter.strata on heights and field.strata on fields.
 *
 * Sedimentary rock is laid down in beds of a few metres that erode at
 * different rates, so a cliff or a slope cut through them shows ledges:
 * hard beds stand out as steps or overhangs, soft ones recede.  Both nodes
 * measure where a point sits in that stack with one coordinate,
 *
 *   u = (y + tan (dip) * (x sin (azimuth) + z cos (azimuth)) + warp (x, z))
 *       / thickness,
 *
 * in metres: the beds are planes tilted by the dip angle, falling towards
 * the azimuth (0 north, 90 east), bent by a 2D noise of warp_m metres so
 * they do not read as ruled lines.  Bed k = floor (u) has a hardness in
 * 1 - variation .. 1 drawn from the seed and k.
 *
 * filter.strata reshapes a height (y = the height in metres) the way
 * filter.terrace does, bed by bed: a hard bed gets a flat tread and a
 * steep riser, strength blends towards that shape.  field.strata recedes
 * a field's surface where beds are soft (the field grows by up to depth_m
 * there), with the change from one bed's hardness to the next over a
 * fraction of the bed (sharpness 1: a thin band), so a vertical wall gets
 * ledges and notches along the bedding.  It only removes material: the
 * surface stays inside the input's, and its Lipschitz bound is the
 * input's plus a bound of the recession's gradient.
 *
 * Everything is a function of the world position, so tiles and thread
 * counts see the same values.
 */
#include <math.h>
#include <stdlib.h>

#include <tgraph/hash.h>
#include <tgraph/node.h>
#include <tgraph/param.h>

#include "fields.h"
#include "grid_util.h"
#include "noise3.h"

/* The warp noise: 3 octaves of Perlin fBm. */
#define STRATA_WARP_OCTAVES 3
#define STRATA_HARDNESS_SALT 0x57a7a5u
/* Samples of a row filter.strata works on at once (stack arrays). */
#define STRATA_ROW_BATCH 256

/* The warp noise is 2D: sampled at y = 0 (batches of at most this). */
static const float zero_y[TG_FIELD_BATCH_MAX];

/* The bedding geometry both nodes share, planned from the parameters. */
typedef struct
{
  double inv_thickness, thickness;
  double dir_x, dir_z; /* tan (dip) times the unit vector towards the azimuth */
  bool warp;
  TgNoise3 noise;
  uint32_t seed;
  double variation;
} Beds;

static void
beds_plan (Beds *b, double thickness_m, double dip_deg, double azimuth_deg, double warp_m,
           double warp_scale_m, double variation, uint32_t seed)
{
  double t = tan (dip_deg * (M_PI / 180.0)), a = azimuth_deg * (M_PI / 180.0);
  TgNoise3Params np = { .basis = TG__FBM_PERLIN,
                        .mode = TG__FBM_MODE_FBM,
                        .amplitude_m = warp_m,
                        .scale_m = warp_scale_m,
                        .octaves = STRATA_WARP_OCTAVES,
                        .persistence = 0.5,
                        .lacunarity = 2.0 };

  b->thickness = thickness_m;
  b->inv_thickness = 1.0 / thickness_m;
  b->dir_x = t * sin (a);
  b->dir_z = t * cos (a);
  b->warp = warp_m > 0.0;
  b->seed = seed;
  b->variation = tg__clamp01 (variation);
  tg__noise3_plan (&b->noise, &np, tg_hash2 (seed, 0x3a7, 0x5a1));
}

/* Hardness of bed K, 1 - variation .. 1. */
static inline double
bed_hardness (const Beds *b, double k)
{
  int32_t ki = (int32_t) k;

  return 1.0 - b->variation * tg_hash_unit (tg_hash2 (b->seed, ki, (int32_t) STRATA_HARDNESS_SALT));
}

/* U of N points: Y[i] plus the tilt at (X[i], Z[i]), plus the warp (W:
 * scratch of N floats), over the thickness. */
static void
beds_coord (const Beds *b, int n, const float *x, const float *y, const float *z, float *w,
            double *u)
{
  if (b->warp)
    {
      tg__noise3_eval (&b->noise, n, x, zero_y, z, w);
    }
  for (int i = 0; i < n; i++)
    {
      double s = (double) y[i] + b->dir_x * (double) x[i] + b->dir_z * (double) z[i]
                 + (b->warp ? (double) w[i] : 0.0);
      u[i] = s * b->inv_thickness;
    }
}

/* A bound on |grad u| per metre. */
static double
beds_coord_lipschitz (const Beds *b)
{
  double tilt = hypot (b->dir_x, b->dir_z);

  return (1.0 + tilt + (b->warp ? (double) b->noise.lipschitz : 0.0)) * b->inv_thickness;
}

/* The bedding parameters, in the order of each node's struct. */
#define STRATA_BED_PARAMS(S, THICK_DEF)                                                          \
  TG_PARAM_FLOAT (S, thickness_m, .label = N_("Bed thickness"), .def = (THICK_DEF), .min = 0.01, \
                  .max = 1e5, .soft_min = 0.5, .soft_max = 200.0, .unit = "m",                   \
                  .help = N_("Thickness of one bed of rock, in metres")),                         \
    TG_PARAM_FLOAT (S, dip_deg, .label = N_("Dip"), .def = 8.0, .min = 0.0, .max = 80.0,          \
                    .unit = "deg",                                                                 \
                    .help = N_("How steeply the beds are tilted from horizontal, in degrees")),  \
    TG_PARAM_FLOAT (S, dip_azimuth_deg, .label = N_("Dip direction"), .def = 90.0, .min = 0.0,  \
                    .max = 360.0, .unit = "deg",                                                   \
                    .help = N_("Compass direction the beds fall towards: 0 north, 90 east")),    \
    TG_PARAM_FLOAT (S, hardness_variation, .label = N_("Hardness variation"), .def = 0.6,       \
                    .min = 0.0, .max = 1.0,                                                      \
                    .help = N_("How much the beds differ: 0 every bed equally hard; 1 some "     \
                               "beds barely show")),                                             \
    TG_PARAM_FLOAT (S, warp_m, .label = N_("Warp"), .def = 3.0, .min = 0.0, .max = 1e4,           \
                    .soft_min = 0.0, .soft_max = 100.0, .unit = "m",                             \
                    .help = N_("How far noise bends the beds up or down, in metres")),           \
    TG_PARAM_FLOAT (S, warp_scale_m, .label = N_("Warp scale"), .def = 300.0, .min = 1.0,        \
                    .max = 1e6, .soft_min = 10.0, .soft_max = 5000.0, .unit = "m",               \
                    .help = N_("Feature size of the bending noise, in metres")),                 \
    TG_PARAM_SEED (S, seed, .label = N_("Seed"),                                                 \
                   .help = N_("Picks the beds' hardness and bending; combined with the world "   \
                              "seed"))

/* --- filter.strata ------------------------------------------------------------- */

typedef struct
{
  double thickness_m;
  double dip_deg;
  double dip_azimuth_deg;
  double hardness_variation;
  double warp_m;
  double warp_scale_m;
  int seed;
  double strength;
  double sharpness;
} StrataParams;

static const TgParamDesc strata_params[] = {
  STRATA_BED_PARAMS (StrataParams, 12.0),
  TG_PARAM_FLOAT (StrataParams, strength, .label = N_("Strength"), .def = 0.7, .min = 0.0,
                  .max = 1.0,
                  .help = N_("0 leaves the height alone; 1 cuts every hard bed into a flat "
                             "tread and a riser")),
  TG_PARAM_FLOAT (StrataParams, sharpness, .label = N_("Sharpness"), .def = 0.6, .min = 0.0,
                  .max = 1.0,
                  .help = N_("0: rounded benches; 1: flat treads with vertical risers")),
};

static const TgPortDesc strata_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Height to cut into beds") },
  { .name = "mask", .type = TG_TYPE_MASK, .label = N_("Mask"), .optional = true,
    .help = N_("Where the strata show (times Strength); everywhere when unlinked") },
};

static const TgPortDesc strata_outputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Height with bedding ledges") },
};

typedef struct
{
  Beds beds;
  double height_m, inv_height_m, strength, riser;
} StrataJob;

/* Whether the N samples of SRC are all beyond the MASK (at or below 0):
 * the beds leave them as they are.  Heights must be finite and not 0,
 * where the general path's sum would keep a sign of 0 from the target. */
static bool
strata_bare (const float *src, const float *mask, int n)
{
  for (int i = 0; i < n; i++)
    if (!(mask[i] <= 0.0f) || !isfinite (src[i]) || src[i] == 0.0f)
      return false;
  return true;
}

static void
strata_row (const void *user, const TgRegion *r, int j, const float *const *in, float *dst)
{
  const StrataJob *job = user;
  const Beds *b = &job->beds;
  const float *src = in[0], *mask = in[1];
  float x[STRATA_ROW_BATCH], z[STRATA_ROW_BATCH], w[STRATA_ROW_BATCH];
  double zj = tg_region_z (r, j);

  for (int i0 = 0; i0 < r->width; i0 += STRATA_ROW_BATCH)
    {
      int n = r->width - i0 < STRATA_ROW_BATCH ? r->width - i0 : STRATA_ROW_BATCH;

      if (mask && strata_bare (src + i0, mask + i0, n))
        {
          /* a = 0: ((1 - 0) h_m + 0 target) / height_m, the same bits
           * for any finite target, without the warp noise. */
          for (int i = 0; i < n; i++)
            dst[i0 + i] = (float) ((double) src[i0 + i] * job->height_m * job->inv_height_m);
          continue;
        }
      for (int i = 0; i < n; i++)
        {
          x[i] = (float) tg_region_x (r, i0 + i);
          z[i] = (float) zj;
        }
      if (b->warp)
        tg__noise3_eval (&b->noise, n, x, zero_y, z, w);
      for (int i = 0; i < n; i++)
        {
          double h_m = (double) src[i0 + i] * job->height_m, offset, u, k, f, g, target, a;

          if (!isfinite (h_m))
            {
              dst[i0 + i] = src[i0 + i];
              continue;
            }
          /* In double, from the height itself: the beds' levels stay exact. */
          offset = b->dir_x * tg_region_x (r, i0 + i) + b->dir_z * zj
                   + (b->warp ? (double) w[i] : 0.0);
          u = (h_m + offset) * b->inv_thickness;
          k = floor (u);
          f = u - k;
          g = job->riser > 0.0 ? tg__smoothstep01 ((f - (1.0 - job->riser)) / job->riser) : 0.0;
          /* The height whose bed coordinate is the terrace shape g. */
          target = (k + g) * b->thickness - offset;
          a = job->strength * bed_hardness (b, k);
          if (mask)
            a *= tg__clamp01 (mask[i0 + i]);
          dst[i0 + i] = (float) (((1.0 - a) * h_m + a * target) * job->inv_height_m);
        }
    }
}

static int
strata_eval (TgEvalCtx *c)
{
  const StrataParams *p = tg_eval_params (c);
  const TgWorld *world = tg_eval_world (c);
  StrataJob *job = malloc (sizeof *job);
  int rc;

  if (!job)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  beds_plan (&job->beds, p->thickness_m, p->dip_deg, p->dip_azimuth_deg, p->warp_m,
             p->warp_scale_m, p->hardness_variation, tg_eval_seed (c, p->seed));
  job->height_m = world->height_m;
  job->inv_height_m = 1.0 / world->height_m;
  job->strength = tg__clamp01 (p->strength);
  job->riser = 1.0 - tg__clamp01 (p->sharpness);
  rc = tg_eval_map_rows (c, 1, strata_row, job);
  free (job);
  return rc;
}

static const TgNodeDesc strata_desc = {
  .type = "filter.strata",
  .category = TG_CATEGORY_FILTERS,
  .label = N_("Strata"),
  .help = N_("Cuts the height into tilted beds of rock of varying hardness: ledges, benches "
             "and cliff bands that follow the bedding, in metres"),
  TG_INPUTS (strata_inputs),
  TG_OUTPUTS (strata_outputs),
  TG_PARAMS (StrataParams, strata_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = strata_eval,
  .version = 1,
};
TG_NODE_REGISTER (strata_desc);

/* --- field.strata -------------------------------------------------------------- */

typedef struct
{
  double thickness_m;
  double dip_deg;
  double dip_azimuth_deg;
  double hardness_variation;
  double warp_m;
  double warp_scale_m;
  int seed;
  double depth_m;
  double sharpness;
} FieldStrataParams;

static const TgParamDesc field_strata_params[] = {
  STRATA_BED_PARAMS (FieldStrataParams, 4.0),
  TG_PARAM_FLOAT (FieldStrataParams, depth_m, .label = N_("Depth"), .def = 1.5, .min = 0.0,
                  .max = 1e4, .soft_min = 0.0, .soft_max = 20.0, .unit = "m",
                  .help = N_("How far the softest bed recedes behind the surface, in metres")),
  TG_PARAM_FLOAT (FieldStrataParams, sharpness, .label = N_("Sharpness"), .def = 0.7, .min = 0.0,
                  .max = 0.95,
                  .help = N_("How abruptly one bed gives way to the next: 0 over the whole "
                             "bed; 0.95 in a twentieth of it (sharp ledges)")),
};

static const TgPortDesc field_strata_inputs[] = {
  { .name = "field", .type = TG_TYPE_FIELD, .label = N_("Field"),
    .help = N_("The rock to cut beds into") },
};

static const TgPortDesc field_strata_outputs[] = {
  { .name = "field", .type = TG_TYPE_FIELD, .label = N_("Field"),
    .help = N_("The rock with its beds, negative inside") },
};

typedef struct
{
  TgValue *in;
  Beds beds;
  double depth, band; /* band: fraction of a bed over which hardness changes */
} FieldStrata;

static void
field_strata_free (void *p)
{
  FieldStrata *s = p;

  tg_value_unref (s->in);
  free (s);
}

static void
field_strata_field_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                         float *out)
{
  const FieldStrata *s = f->data;
  const TgField *in = tg_value_field (s->in);
  float w[TG_FIELD_BATCH_MAX];
  double u[TG_FIELD_BATCH_MAX];

  in->eval (in, n, x, y, z, out);
  beds_coord (&s->beds, n, x, y, z, w, u);
  for (int i = 0; i < n; i++)
    {
      double k, fr, hard;

      if (!isfinite (u[i]))
        continue;
      k = floor (u[i]);
      fr = u[i] - k;
      hard = bed_hardness (&s->beds, k);
      if (fr < s->band)
        {
          /* The bottom of bed k: from the bed below's hardness to k's. */
          double below = bed_hardness (&s->beds, k - 1.0);
          hard = below + (hard - below) * tg__smoothstep01 (fr / s->band);
        }
      out[i] += (float) (s->depth * (1.0 - hard));
    }
}

static int
field_strata_eval (TgEvalCtx *c)
{
  const FieldStrataParams *p = tg_eval_params (c);
  FieldStrata *s = calloc (1, sizeof *s);
  const TgField *in;
  TgField *f;
  int rc;

  if (s == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  if ((rc = tg__field_input (c, 0, "field", &s->in)) < 0)
    {
      field_strata_free (s);
      return rc;
    }
  beds_plan (&s->beds, p->thickness_m, p->dip_deg, p->dip_azimuth_deg, p->warp_m,
             p->warp_scale_m, p->hardness_variation, tg_eval_seed (c, p->seed));
  s->depth = p->depth_m;
  s->band = 1.0 - (p->sharpness < 0.0 ? 0.0 : (p->sharpness > 0.95 ? 0.95 : p->sharpness));
  in = tg_value_field (s->in);
  f = tg__field_new (field_strata_field_eval, s, field_strata_free);
  if (f == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  /* The recession changes by at most depth * 1.5 / band per bed (the
   * smoothstep's steepest slope), times how fast u changes. */
  f->lipschitz = in->lipschitz > 0.0f
                   ? (float) (((double) in->lipschitz
                               + s->depth * s->beds.variation * 1.5 / s->band
                                   * beds_coord_lipschitz (&s->beds))
                              * 1.0001)
                   : 0.0f;
  /* The field only grows: the surface stays where the input's may be. */
  f->bounded = in->bounded;
  for (int a = 0; a < 3; a++)
    {
      f->min[a] = in->min[a];
      f->max[a] = in->max[a];
    }
  return tg__field_output (c, f);
}

static const TgNodeDesc field_strata_desc = {
  .type = "field.strata",
  .category = TG_CATEGORY_FIELDS,
  .label = N_("Strata Field"),
  .help = N_("Cuts tilted beds of rock into a field: soft beds recede, hard ones stand out as "
             "ledges along cliffs, arches and overhangs"),
  TG_INPUTS (field_strata_inputs),
  TG_OUTPUTS (field_strata_outputs),
  TG_PARAMS (FieldStrataParams, field_strata_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = field_strata_eval,
  .version = 1,
};
TG_NODE_REGISTER (field_strata_desc);
