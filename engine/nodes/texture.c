/* Texturing: masks become the weight maps and colour maps a game engine
 * paints its terrain with.
 *
 *   texture.splat      up to 8 masks, each a named layer with a priority and
 *                      an optional noise-broken edge, into `layers` whose
 *                      weights sum to 1 everywhere
 *   texture.biome      rules on height, moisture and heat (ranges with
 *                      blending) into named layers and a colour image
 *   texture.colorize   a colour ramp of a height or mask into an image
 *   texture.layer_colors  weight layers into a colour map, a colour a layer,
 *                      optionally varied in brightness and hue by noise
 *   texture.hillshade  relief shading in world metres, as a mask
 *   texture.normals    a tangent-space normal map (OpenGL or DirectX)
 *
 * Layering rule (splat and biome): layers are painted in order, each
 * covering what is below it by its mask, so
 *   weight_i = mask_i * prod over layers j above i of (1 - mask_j)
 * and the base layer takes what is left.  The weights are non-negative and
 * sum to 1 by construction (to float rounding, ~1e-7); the running
 * "uncovered" fraction is updated by subtraction, so the telescoping sum
 * holds sample by sample.  Layer 0 of the output is always the base.
 *
 * Colours are raw values (no gamma), as everywhere in Terrane.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/hash.h>
#include <tgraph/node.h>
#include <tgraph/param.h>

#include "grid_util.h"
#include "noise_fbm.h"
#include "spatial_util.h"

#define SPLAT_MAX 8
#define BIOME_MAX 8
#define STOPS_MAX 16
#define DEG2RAD (M_PI / 180.0)

/* --- texture noise: what breaks up an edge or varies a colour ------------- */

/* Samples of a row worked on at once (stack arrays of this size). */
#define TEX_BLOCK 256
#define TEX_NOISE_OCTAVES 5
/* Perlin fBm of 5 octaves, 2n - 1, has a standard deviation of 0.185 and
 * its 1st and 99th percentiles at -+0.41: times this it reaches -+1 there
 * (clamped beyond), so an amount of 1 means "the full range" for all but
 * the 2 % of the ground where the noise is at its extremes. */
#define TEX_NOISE_GAIN 2.5f
/* Salts of the noise streams, so that a layer's edge, brightness and hue
 * are three unrelated fields. */
#define TEX_SALT_BREAKUP 0x6b72u
#define TEX_SALT_BRIGHT 0x6272u
#define TEX_SALT_HUE 0x6875u

/* A layer's noise depends on its name, not its place in the list, so
 * reordering layers does not move their edges. */
static uint32_t
name_hash (const char *s)
{
  uint32_t h = 2166136261u; /* FNV-1a */

  for (; s && *s; s++)
    h = (h ^ (uint8_t) *s) * 16777619u;
  return h;
}

static void
tex_noise_plan (TgFbm *f, uint32_t node_seed, const char *name, uint32_t salt, double scale_m)
{
  TgFbmParams p = {
    .basis = TG__FBM_PERLIN,
    .mode = TG__FBM_MODE_FBM,
    .scale_m = scale_m,
    .octaves = TEX_NOISE_OCTAVES,
    .persistence = 0.5,
    .lacunarity = 2.0,
    .warp_scale_m = 1.0,
  };

  tg__fbm_plan (f, &p, tg_hash2 (node_seed, (int32_t) name_hash (name), (int32_t) salt));
}

/* Samples I0 .. I0 + N - 1 of row J of R as noise in -1..1 (see
 * TEX_NOISE_GAIN); world-anchored, so a tile is a window of the whole. */
static void
tex_noise_block (const TgFbm *f, const TgRegion *r, int j, int i0, int n, float *out)
{
  tg__fbm_row (f, r, j, i0, n, out);
  for (int i = 0; i < n; i++)
    {
      float u = (2.0f * out[i] - 1.0f) * TEX_NOISE_GAIN;
      out[i] = u < -1.0f ? -1.0f : (u > 1.0f ? 1.0f : u);
    }
}

/* Layer names end up in file names (export.splat's unreal preset) and in
 * engine material slots: letters, digits, '_' and '-' only. */
static bool
layer_name_ok (const char *s)
{
  if (!s || !s[0])
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')
          || *s == '_' || *s == '-'))
      return false;
  return true;
}

static int
check_layer_name (const char *name, const char *path, TgError *err)
{
  if (!layer_name_ok (name))
    return tg_error_set (err, TG_EINVAL, path, TG_MSG_LAYER_NAME, name ? name : "");
  return 0;
}

/* --- texture.splat ---------------------------------------------------------- */

/* Breakup: a layer's edge made irregular, as real scree / grass borders
 * are.  The mask's odds are scaled by noise before layering,
 *   m' = m / (m + (1 - m) e^-t),  t = ln 99 * breakup * u,
 * u the layer's fBm in -1..1: 0 and 1 stay 0 and 1 (no islands in the
 * open, no holes in the middle), and the m = 0.5 border moves inside the
 * soft edge the selector gave, at breakup 1 as far as where m was 1 % or
 * 99 %.  The weights are computed from m' by the same rule, so they sum
 * to 1 as before; breakup 0 leaves the mask untouched. */
#define BREAKUP_LOGIT 4.59511985013458992685 /* ln 99 */

typedef struct
{
  const char *name;
  int priority;
  double breakup;
  double breakup_scale_m;
} SplatLayer;

static const TgParamDesc splat_layer_params[] = {
  TG_PARAM_STRING (SplatLayer, name, .label = N_("Name"), .def_s = "layer",
                   .help = N_("Layer name (letters, digits, '_', '-'): a channel name and, for "
                              "Unreal, part of the file name")),
  TG_PARAM_INT (SplatLayer, priority, .label = N_("Priority"), .def = 1, .min = -1000, .max = 1000,
                .help = N_("Higher priority layers are painted over lower ones; equal priorities "
                           "stack in list order (later on top)")),
  TG_PARAM_FLOAT (SplatLayer, breakup, .label = N_("Breakup"), .def = 0.0, .min = 0.0, .max = 1.0,
                  .help = N_("How far noise moves the layer's edge inside the mask's soft edge: "
                             "0 keeps the mask's border, 1 lets it wander across the whole "
                             "falloff")),
  TG_PARAM_FLOAT (SplatLayer, breakup_scale_m, .label = N_("Breakup scale"), .def = 40.0,
                  .min = 1.0, .max = 1e5, .soft_min = 2.0, .soft_max = 1000.0, .unit = "m",
                  .help = N_("Feature size of the breakup noise, in metres")),
};

typedef struct
{
  const char *base_name;
  TgList layers;
} SplatParams;

static const TgParamDesc splat_params[] = {
  TG_PARAM_STRING (SplatParams, base_name, .label = N_("Base layer"), .def_s = "grass",
                   .help = N_("Name of the layer that takes whatever the "
                              "masks leave uncovered (always layer 0)")),
  TG_PARAM_LIST (SplatParams, layers, SplatLayer, splat_layer_params, .label = N_("Layers"),
                 .def_s = "name=rock|priority=1; name=snow|priority=2", .min = 0, .max = SPLAT_MAX,
                 .help = N_("One entry per mask input, in order: entry 1 is painted by mask1, "
                            "entry 2 by mask2, ...")),
};

/* Written out, not made by a macro, so xgettext sees each label whole. */
static const TgPortDesc splat_inputs[] = {
  { .name = "mask1", .type = TG_TYPE_MASK, .label = N_("Mask 1"), .optional = true,
    .help = N_("Where layer 1 lies (0..1); unlinked selects nothing") },
  { .name = "mask2", .type = TG_TYPE_MASK, .label = N_("Mask 2"), .optional = true,
    .help = N_("Where layer 2 lies (0..1); unlinked selects nothing") },
  { .name = "mask3", .type = TG_TYPE_MASK, .label = N_("Mask 3"), .optional = true,
    .help = N_("Where layer 3 lies (0..1); unlinked selects nothing") },
  { .name = "mask4", .type = TG_TYPE_MASK, .label = N_("Mask 4"), .optional = true,
    .help = N_("Where layer 4 lies (0..1); unlinked selects nothing") },
  { .name = "mask5", .type = TG_TYPE_MASK, .label = N_("Mask 5"), .optional = true,
    .help = N_("Where layer 5 lies (0..1); unlinked selects nothing") },
  { .name = "mask6", .type = TG_TYPE_MASK, .label = N_("Mask 6"), .optional = true,
    .help = N_("Where layer 6 lies (0..1); unlinked selects nothing") },
  { .name = "mask7", .type = TG_TYPE_MASK, .label = N_("Mask 7"), .optional = true,
    .help = N_("Where layer 7 lies (0..1); unlinked selects nothing") },
  { .name = "mask8", .type = TG_TYPE_MASK, .label = N_("Mask 8"), .optional = true,
    .help = N_("Where layer 8 lies (0..1); unlinked selects nothing") },
};

static const TgPortDesc splat_outputs[] = {
  { .name = "layers", .type = TG_TYPE_LAYERS, .label = N_("Layers"),
    .help = N_("Base layer then one weight per entry; weights sum to 1") },
};

static int
splat_check (const void *params, TgError *err)
{
  const SplatParams *p = params;
  const SplatLayer *l = p->layers.items;
  char path[64];
  int rc;

  if ((rc = check_layer_name (p->base_name, "params.base_name", err)) < 0)
    return rc;
  for (int k = 0; k < p->layers.n; k++)
    {
      snprintf (path, sizeof path, "params.layers[%d].name", k);
      if ((rc = check_layer_name (l[k].name, path, err)) < 0)
        return rc;
      if (strcmp (l[k].name, p->base_name) == 0)
        return tg_error_set (err, TG_EINVAL, path, TG_MSG_BASE_LAYER_NAME, l[k].name);
      for (int q = 0; q < k; q++)
        if (strcmp (l[k].name, l[q].name) == 0)
          return tg_error_set (err, TG_EINVAL, path, TG_MSG_LAYER_NAME_TWICE, l[k].name, q);
    }
  return 0;
}

/* Each linked mask paints the layer its entry names. */
static int
splat_check_links (const void *params, const bool *linked, TgError *err)
{
  const SplatParams *p = params;

  for (int k = p->layers.n; k < SPLAT_MAX; k++)
    if (linked[k])
      return tg_error_set (err, TG_EINVAL, "params.layers",
                           "input 'mask%d' is linked but params.layers has %d entr%s; add an "
                           "entry to name its layer",
                           k + 1, p->layers.n, p->layers.n == 1 ? "y" : "ies");
  return 0;
}

typedef struct
{
  const TgValue *mask[SPLAT_MAX];
  TgValue *out;
  int n;                  /* entries */
  int order[SPLAT_MAX];   /* entries from the top layer down */
  double breakup[SPLAT_MAX];
  TgFbm noise[SPLAT_MAX]; /* planned where breakup > 0 */
} SplatJob;

/* Samples of the noise kernel's block (noise_kernel.c's BLK): a run of
 * them costs what one does. */
#define TEX_NOISE_RUN 64

/* Mask values M[0 .. N) of entry K with its breakup applied, for samples
 * I0 .. I0 + N - 1 of row J, into OUT.  A mask of 0 or 1 stays what it
 * is (0 / (0 + e) and 1 / (1 + 0 e) for any finite e > 0), so the noise
 * and the exponential are computed only for runs holding a soft edge. */
static void
splat_breakup (const SplatJob *job, int k, int j, int i0, int n, const float *m, float *out)
{
  float u[TEX_NOISE_RUN];

  for (int s0 = 0; s0 < n; s0 += TEX_NOISE_RUN)
    {
      int ns = n - s0 < TEX_NOISE_RUN ? n - s0 : TEX_NOISE_RUN;
      bool soft = false;
      for (int i = s0; i < s0 + ns; i++)
        {
          out[i] = tg__mask01 (m[i]);
          soft |= out[i] > 0.0f && out[i] < 1.0f;
        }
      if (!soft)
        continue;
      tex_noise_block (&job->noise[k], &job->out->region, j, i0 + s0, ns, u);
      for (int i = s0; i < s0 + ns; i++)
        {
          double v = out[i];
          if (v > 0.0 && v < 1.0)
            {
              double e = exp (-BREAKUP_LOGIT * job->breakup[k] * (double) u[i - s0]);
              out[i] = (float) (v / (v + (1.0 - v) * e));
            }
        }
    }
}

static void
splat_rows (void *user, int begin, int end)
{
  const SplatJob *job = user;
  const TgRegion *r = &job->out->region;
  int ch = job->out->channels, w = r->width;
  float broken[TEX_BLOCK];

  for (int j = begin; j < end; j++)
    for (int i0 = 0; i0 < w; i0 += TEX_BLOCK)
      {
        int nb = w - i0 < TEX_BLOCK ? w - i0 : TEX_BLOCK;
        float *dst = tg_value_row (job->out, j) + (size_t) i0 * ch;
        /* Channel 0 holds the uncovered fraction while the layers are
         * painted top-down, and ends as the base layer's weight. */
        for (int i = 0; i < nb; i++)
          dst[(size_t) i * ch] = 1.0f;
        for (int o = 0; o < job->n; o++)
          {
            int k = job->order[o];
            float *wk = dst + 1 + k;
            if (!job->mask[k])
              {
                for (int i = 0; i < nb; i++)
                  wk[(size_t) i * ch] = 0.0f;
                continue;
              }
            const float *m = tg__grid_row (job->mask[k], r, j) + i0;
            if (job->breakup[k] > 0.0)
              {
                /* Already in 0..1. */
                splat_breakup (job, k, j, i0, nb, m, broken);
                m = broken;
              }
            for (int i = 0; i < nb; i++)
              {
                float cover = dst[(size_t) i * ch];
                float v = tg__mask01 (m[i]) * cover;
                wk[(size_t) i * ch] = v;
                dst[(size_t) i * ch] = cover - v;
              }
          }
      }
}

/* Sorts entry indices by priority, highest first; ties keep the later
 * entry on top. */
static void
priority_order (const SplatLayer *l, int n, int *order)
{
  for (int k = 0; k < n; k++)
    order[k] = k;
  for (int a = 1; a < n; a++)
    for (int b = a; b > 0; b--)
      {
        int x = order[b - 1], y = order[b];
        bool swap = l[y].priority > l[x].priority || (l[y].priority == l[x].priority && y > x);
        if (!swap)
          break;
        order[b - 1] = y;
        order[b] = x;
      }
}

static int
splat_eval (TgEvalCtx *c)
{
  const SplatParams *p = tg_eval_params (c);
  const TgRegion *region = tg_eval_region (c);
  const SplatLayer *l = p->layers.items;
  SplatJob job = { 0 };
  int rc;

  job.n = p->layers.n;
  for (int k = 0; k < SPLAT_MAX; k++)
    {
      const TgValue *m = tg_eval_input (c, k);
      char port[16];
      /* splat_check_links saw that every linked mask has an entry. */
      if (!m)
        continue;
      snprintf (port, sizeof port, "mask%d", k + 1);
      if ((rc = tg__check_grid_input (c, m, port, region)) < 0)
        return rc;
      job.mask[k] = m;
    }
  priority_order (l, job.n, job.order);
  for (int k = 0; k < job.n; k++)
    {
      job.breakup[k] = l[k].breakup;
      if (l[k].breakup > 0.0)
        tex_noise_plan (&job.noise[k], tg_eval_seed (c, 0), l[k].name, TEX_SALT_BREAKUP,
                        l[k].breakup_scale_m);
    }
  job.out = tg_eval_new_output (c, 0, 1 + job.n);
  if (!job.out)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  if (tg_value_set_channel_name (job.out, 0, p->base_name) < 0)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  for (int k = 0; k < job.n; k++)
    if (tg_value_set_channel_name (job.out, 1 + k, l[k].name) < 0)
      return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  return tg_eval_parallel (c, region->height, tg__grain_rows (region->width), splat_rows, &job);
}

static int
splat_warn (const void *params, double cell_m, TgError *warn)
{
  const SplatParams *p = params;
  const SplatLayer *l = p->layers.items;
  char name[64];

  for (int k = 0; k < p->layers.n; k++)
    {
      snprintf (name, sizeof name, "layers[%d].breakup_scale_m", k);
      if (l[k].breakup > 0.0
          && tg_warn_below_cells (warn, name, "Breakup scale", l[k].breakup_scale_m, cell_m, 2))
        return 1;
    }
  return 0;
}

static const TgNodeDesc splat_desc = {
  .type = "texture.splat",
  .category = TG_CATEGORY_TEXTURING,
  .label = N_("Splat layers"),
  .help = N_("Up to 8 masks into named texture layers by priority; the weights sum to 1 and "
             "a base layer takes the rest"),
  TG_INPUTS (splat_inputs),
  TG_OUTPUTS (splat_outputs),
  TG_PARAMS (SplatParams, splat_params),
  .locality = TG_LOCALITY_LOCAL,
  .check = splat_check,
  .check_links = splat_check_links,
  .eval = splat_eval,
  .warn = splat_warn,
  .version = 1,
};
TG_NODE_REGISTER (splat_desc);

/* --- texture.biome ---------------------------------------------------------- */

/* Each rule is a box in (height, moisture, heat) with a soft edge: the
 * product of three bands (1 inside, smoothstep to 0 over `blend` outside;
 * a range reaching 0 or 1 is open at that end).  Rules are painted
 * first-listed on top, like an if / else-if chain with soft edges, and
 * the default biome takes the rest.  Unlinked moisture is 0.5; unlinked
 * heat is 1 - height (colder higher up), so "snow = high and cold" works
 * from the height alone. */

typedef struct
{
  const char *name;
  double color[4];
  double min_height, max_height;
  double min_moisture, max_moisture;
  double min_heat, max_heat;
  double blend;
} BiomeRule;

static const TgParamDesc biome_rule_params[] = {
  TG_PARAM_STRING (BiomeRule, name, .label = N_("Name"), .def_s = "biome",
                   .help = N_("Layer name (letters, digits, '_', '-')")),
  TG_PARAM_COLOR (BiomeRule, color, .label = N_("Colour"), .def_v = { 0.5, 0.5, 0.5, 1.0 },
                  .help = N_("Colour of the biome in the image output")),
  TG_PARAM_FLOAT (BiomeRule, min_height, .label = N_("Height from"), .def = 0.0, .min = 0.0,
                  .max = 1.0, .help = N_("Lowest height of the biome (0 = no lower limit)")),
  TG_PARAM_FLOAT (BiomeRule, max_height, .label = N_("Height to"), .def = 1.0, .min = 0.0,
                  .max = 1.0, .help = N_("Highest height of the biome (1 = no upper limit)")),
  TG_PARAM_FLOAT (BiomeRule, min_moisture, .label = N_("Moisture from"), .def = 0.0, .min = 0.0,
                  .max = 1.0, .help = N_("Driest ground of the biome (0 = no limit)")),
  TG_PARAM_FLOAT (BiomeRule, max_moisture, .label = N_("Moisture to"), .def = 1.0, .min = 0.0,
                  .max = 1.0, .help = N_("Wettest ground of the biome (1 = no limit)")),
  TG_PARAM_FLOAT (BiomeRule, min_heat, .label = N_("Heat from"), .def = 0.0, .min = 0.0, .max = 1.0,
                  .help = N_("Coldest ground of the biome (0 = no limit)")),
  TG_PARAM_FLOAT (BiomeRule, max_heat, .label = N_("Heat to"), .def = 1.0, .min = 0.0, .max = 1.0,
                  .help = N_("Warmest ground of the biome (1 = no limit)")),
  TG_PARAM_FLOAT (BiomeRule, blend, .label = N_("Blend"), .def = 0.05, .min = 0.0, .max = 1.0,
                  .help = N_("Width of the soft edge outside each range")),
};

typedef struct
{
  const char *default_name;
  double default_color[4];
  TgList rules;
} BiomeParams;

static const TgParamDesc biome_params[] = {
  TG_PARAM_STRING (BiomeParams, default_name, .label = N_("Default biome"), .def_s = "grassland",
                   .help = N_("Name of the layer where no rule applies (always layer 0)")),
  TG_PARAM_COLOR (BiomeParams, default_color, .label = N_("Default colour"),
                  .def_v = { 0.36, 0.5, 0.22, 1.0 }, .help = N_("Colour where no rule applies")),
  TG_PARAM_LIST (BiomeParams, rules, BiomeRule, biome_rule_params, .label = N_("Rules"),
                 .def_s = "name=swamp|color=#4b5a36|max_height=0.25|min_moisture=0.6; "
                          "name=snow|color=#eef2f6|min_height=0.6|max_heat=0.35; "
                          "name=desert|color=#d2bc84|max_moisture=0.25|min_heat=0.6", .min = 0,
                 .max = BIOME_MAX,
                 .help = N_("Biomes by height, moisture and heat ranges; the first rule that "
                            "matches wins, with soft edges")),
};

static const TgPortDesc biome_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Terrain height, 0..1") },
  { .name = "moisture", .type = TG_TYPE_MASK, .label = N_("Moisture"), .optional = true,
    .help = N_("0 dry .. 1 wet; 0.5 when unlinked") },
  { .name = "heat", .type = TG_TYPE_MASK, .label = N_("Heat"), .optional = true,
    .help = N_("0 cold .. 1 hot; 1 - height when unlinked") },
};

static const TgPortDesc biome_outputs[] = {
  { .name = "layers", .type = TG_TYPE_LAYERS, .label = N_("Layers"),
    .help = N_("Default biome then one weight per rule; weights sum to 1") },
  { .name = "image", .type = TG_TYPE_IMAGE, .label = N_("Image"),
    .help = N_("The biome colours blended by weight (RGBA)") },
};

static int
range_check (double lo, double hi, int k, const char *field, TgError *err)
{
  char path[64];

  if (lo > hi)
    {
      snprintf (path, sizeof path, "params.rules[%d].max_%s", k, field);
      return tg_error_set (err, TG_ERANGE, path, TG_MSG_BELOW_MIN_FIELD, hi, field, lo);
    }
  return 0;
}

static int
biome_check (const void *params, TgError *err)
{
  const BiomeParams *p = params;
  const BiomeRule *r = p->rules.items;
  char path[64];
  int rc;

  if ((rc = check_layer_name (p->default_name, "params.default_name", err)) < 0)
    return rc;
  for (int k = 0; k < p->rules.n; k++)
    {
      snprintf (path, sizeof path, "params.rules[%d].name", k);
      if ((rc = check_layer_name (r[k].name, path, err)) < 0)
        return rc;
      if (strcmp (r[k].name, p->default_name) == 0)
        return tg_error_set (err, TG_EINVAL, path, TG_MSG_DEFAULT_BIOME_NAME, r[k].name);
      for (int q = 0; q < k; q++)
        if (strcmp (r[k].name, r[q].name) == 0)
          return tg_error_set (err, TG_EINVAL, path, TG_MSG_RULE_NAME_TWICE, r[k].name, q);
      if ((rc = range_check (r[k].min_height, r[k].max_height, k, "height", err)) < 0
          || (rc = range_check (r[k].min_moisture, r[k].max_moisture, k, "moisture", err)) < 0
          || (rc = range_check (r[k].min_heat, r[k].max_heat, k, "heat", err)) < 0)
        return rc;
    }
  return 0;
}

typedef struct
{
  double lo[3], hi[3]; /* height, moisture, heat; +-INFINITY when open */
  double blend;
  float rgba[4];
} BiomeBox;

typedef struct
{
  const TgValue *height, *moisture, *heat;
  TgValue *out, *img;
  int n;
  BiomeBox box[BIOME_MAX];
  float base_rgba[4];
} BiomeJob;

static void
biome_rows (void *user, int begin, int end)
{
  const BiomeJob *job = user;
  const TgRegion *r = &job->out->region;
  int ch = job->out->channels;

  for (int j = begin; j < end; j++)
    {
      const float *h = tg__grid_row (job->height, r, j);
      const float *mo = job->moisture ? tg__grid_row (job->moisture, r, j) : NULL;
      const float *he = job->heat ? tg__grid_row (job->heat, r, j) : NULL;
      float *dst = tg_value_row (job->out, j);
      float *img = tg_value_row (job->img, j);

      for (int i = 0; i < r->width; i++)
        {
          float *wt = dst + (size_t) i * ch, *px = img + (size_t) i * 4;
          double x[3];
          /* Float, as in splat: fl(m * cover) <= cover for m <= 1, so
           * cover never goes below 0. */
          float cover = 1.0f;
          float rgba[4] = { 0, 0, 0, 0 };
          x[0] = h[i];
          x[1] = mo ? tg__mask01 (mo[i]) : 0.5;
          x[2] = he ? tg__mask01 (he[i]) : tg__clamp01 (1.0 - (double) h[i]);
          for (int k = 0; k < job->n; k++)
            {
              const BiomeBox *b = &job->box[k];
              double m = tg__band (x[0], b->lo[0], b->hi[0], b->blend)
                         * tg__band (x[1], b->lo[1], b->hi[1], b->blend)
                         * tg__band (x[2], b->lo[2], b->hi[2], b->blend);
              float v = (float) m * cover;
              wt[1 + k] = v;
              cover -= v;
              for (int q = 0; q < 4; q++)
                rgba[q] += v * b->rgba[q];
            }
          wt[0] = cover;
          for (int q = 0; q < 4; q++)
            px[q] = rgba[q] + cover * job->base_rgba[q];
        }
    }
}

static int
biome_eval (TgEvalCtx *c)
{
  const BiomeParams *p = tg_eval_params (c);
  const TgRegion *region = tg_eval_region (c);
  const BiomeRule *rules = p->rules.items;
  BiomeJob job = { 0 };
  int rc;

  job.height = tg_eval_input (c, 0);
  job.moisture = tg_eval_input (c, 1);
  job.heat = tg_eval_input (c, 2);
  if ((rc = tg__check_grid_input (c, job.height, "height", region)) < 0
      || (job.moisture && (rc = tg__check_grid_input (c, job.moisture, "moisture", region)) < 0)
      || (job.heat && (rc = tg__check_grid_input (c, job.heat, "heat", region)) < 0))
    return rc;
  job.n = p->rules.n;
  for (int k = 0; k < job.n; k++)
    {
      const BiomeRule *ru = &rules[k];
      double lo[3] = { ru->min_height, ru->min_moisture, ru->min_heat };
      double hi[3] = { ru->max_height, ru->max_moisture, ru->max_heat };
      for (int a = 0; a < 3; a++)
        {
          job.box[k].lo[a] = lo[a] <= 0.0 ? -INFINITY : lo[a];
          job.box[k].hi[a] = hi[a] >= 1.0 ? INFINITY : hi[a];
        }
      job.box[k].blend = ru->blend;
      for (int q = 0; q < 4; q++)
        job.box[k].rgba[q] = (float) ru->color[q];
    }
  for (int q = 0; q < 4; q++)
    job.base_rgba[q] = (float) p->default_color[q];

  job.out = tg_eval_new_output (c, 0, 1 + job.n);
  job.img = tg_eval_new_output (c, 1, 4);
  if (!job.out || !job.img)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  if (tg_value_set_channel_name (job.out, 0, p->default_name) < 0)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  for (int k = 0; k < job.n; k++)
    if (tg_value_set_channel_name (job.out, 1 + k, rules[k].name) < 0)
      return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  return tg_eval_parallel (c, region->height, tg__grain_rows (region->width), biome_rows, &job);
}

static const TgNodeDesc biome_desc = {
  .type = "texture.biome",
  .category = TG_CATEGORY_TEXTURING,
  .label = N_("Biomes"),
  .help = N_("Biome layers and colours from rules on height, moisture and heat "
             "(swamp = low and wet, snow = high and cold)"),
  TG_INPUTS (biome_inputs),
  TG_OUTPUTS (biome_outputs),
  TG_PARAMS (BiomeParams, biome_params),
  .locality = TG_LOCALITY_LOCAL,
  .check = biome_check,
  .eval = biome_eval,
  .version = 1,
};
TG_NODE_REGISTER (biome_desc);

/* --- texture.colorize ------------------------------------------------------- */

/* t = (v - min_input) / (max_input - min_input), clamped to 0..1, then the
 * colour interpolated linearly (raw values) between the two stops around
 * t; flat beyond the first and last stop.  Two stops at one position make
 * a hard edge (the later stop's colour from that position on).  With `shade` linked, RGB is multiplied by it (alpha not):
 * a colour map with baked relief shading for previews. */

typedef struct
{
  double position;
  double color[4];
} ColorStop;

static const TgParamDesc stop_params[] = {
  TG_PARAM_FLOAT (ColorStop, position, .label = N_("Position"), .def = 0.0, .min = 0.0, .max = 1.0,
                  .help = N_("Where on the ramp (0..1 of the input range) the colour sits")),
  TG_PARAM_COLOR (ColorStop, color, .label = N_("Colour"), .def_v = { 0.0, 0.0, 0.0, 1.0 },
                  .help = N_("Colour at the stop")),
};

typedef struct
{
  TgList stops;
  double min_input, max_input;
} ColorizeParams;

static const TgParamDesc colorize_params[] = {
  TG_PARAM_LIST (ColorizeParams, stops, ColorStop, stop_params, .label = N_("Colour ramp"),
                 .def_s = "position=0|color=#3d5a2a; position=0.3|color=#6f8c3f; "
                          "position=0.55|color=#85745a; position=0.75|color=#8e8c88; "
                          "position=0.9|color=#f2f4f6", .min = 1, .max = STOPS_MAX,
                 .help = N_("Gradient stops, positions not decreasing; colours are blended "
                            "linearly between them")),
  TG_PARAM_FLOAT (ColorizeParams, min_input, .label = N_("Input low"), .def = 0.0, .min = -1e6,
                  .max = 1e6, .soft_min = 0.0, .soft_max = 1.0,
                  .help = N_("Input value at the start of the ramp")),
  TG_PARAM_FLOAT (ColorizeParams, max_input, .label = N_("Input high"), .def = 1.0, .min = -1e6,
                  .max = 1e6, .soft_min = 0.0, .soft_max = 1.0,
                  .help = N_("Input value at the end of the ramp")),
};

static const TgPortDesc colorize_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Height or mask to colour") },
  { .name = "shade", .type = TG_TYPE_MASK, .label = N_("Shade"), .optional = true,
    .help = N_("Multiplies the colour (e.g. a hillshade); unlinked leaves it as is") },
};

static const TgPortDesc image_out[] = {
  { .name = "image", .type = TG_TYPE_IMAGE, .label = N_("Image"),
    .help = N_("RGBA colour, raw values") },
};

static int
colorize_check (const void *params, TgError *err)
{
  const ColorizeParams *p = params;
  const ColorStop *s = p->stops.items;

  for (int k = 1; k < p->stops.n; k++)
    if (s[k].position < s[k - 1].position)
      {
        char path[64];
        snprintf (path, sizeof path, "params.stops[%d].position", k);
        return tg_error_set (err, TG_ERANGE, path, TG_MSG_STOPS_ORDER, s[k].position,
                             s[k - 1].position);
      }
  if (p->min_input == p->max_input)
    return tg_error_set (err, TG_ERANGE, "params.max_input", TG_MSG_INPUT_HIGH_EQUALS_LOW,
                         p->min_input);
  return 0;
}

typedef struct
{
  int n;
  double pos[STOPS_MAX];
  double rgba[STOPS_MAX][4];
  double i0, scale;
} ColorizeJob;

static void
colorize_row (const void *user, const TgRegion *r, int j, const float *const *in, float *dst)
{
  const ColorizeJob *job = user;
  const float *src = in[0], *sh = in[1];
  int last = job->n - 1;

  (void) j;
  for (int i = 0; i < r->width; i++)
    {
      double t = ((double) src[i] - job->i0) * job->scale, f;
      float *px = dst + (size_t) i * 4;
      int k = 0;
      t = isnan (t) ? 0.0 : tg__clamp01 (t);
      /* First stop beyond t (at most 16: a scan beats a search); at a
       * hard edge (two stops at t) that is past both, so the later
       * colour holds from t on. */
      while (k < last && job->pos[k] <= t)
        k++;
      if (k == 0 || job->pos[k] <= t)
        for (int q = 0; q < 4; q++)
          px[q] = (float) job->rgba[k][q];
      else
        {
          f = (t - job->pos[k - 1]) / (job->pos[k] - job->pos[k - 1]);
          for (int q = 0; q < 4; q++)
            px[q] = (float) (job->rgba[k - 1][q] + (job->rgba[k][q] - job->rgba[k - 1][q]) * f);
        }
      if (sh)
        {
          float s = tg__mask01 (sh[i]);
          px[0] *= s;
          px[1] *= s;
          px[2] *= s;
        }
    }
}

static int
colorize_eval (TgEvalCtx *c)
{
  const ColorizeParams *p = tg_eval_params (c);
  const ColorStop *s = p->stops.items;
  ColorizeJob job = { 0 };

  if (p->stops.n < 1)
    return tg_eval_fail (c, TG_ERANGE, "params.stops: %s", TG_MSG_RAMP_NEEDS_STOP);
  job.n = p->stops.n > STOPS_MAX ? STOPS_MAX : p->stops.n;
  for (int k = 0; k < job.n; k++)
    {
      job.pos[k] = s[k].position;
      for (int q = 0; q < 4; q++)
        job.rgba[k][q] = s[k].color[q];
    }
  job.i0 = p->min_input;
  job.scale = 1.0 / (p->max_input - p->min_input);
  return tg_eval_map_rows (c, 4, colorize_row, &job);
}

static const TgNodeDesc colorize_desc = {
  .type = "texture.colorize",
  .category = TG_CATEGORY_TEXTURING,
  .label = N_("Colorize"),
  .help = N_("Colours a height or mask through a colour ramp"),
  TG_INPUTS (colorize_inputs),
  TG_OUTPUTS (image_out),
  TG_PARAMS (ColorizeParams, colorize_params),
  .locality = TG_LOCALITY_LOCAL,
  .check = colorize_check,
  .eval = colorize_eval,
  .version = 1,
};
TG_NODE_REGISTER (colorize_desc);

/* --- texture.layer_colors ---------------------------------------------------- */

/* A colour map from weight layers: each layer's colour, found by its
 * name, times its weight, summed (raw values).  With weights that sum to
 * 1 (splat, biome) the result is a proper blend; the optional shade
 * multiplies RGB as in texture.colorize.  A layer with no colour fails
 * with its name rather than turning black unnoticed.
 *
 * Variation keeps a layer from being one flat colour: two fBm fields of
 * the layer (u, v in -1..1, see TEX_NOISE_GAIN) turn its hue about the
 * grey axis by variation * v * VARIATION_HUE and scale its brightness by
 * 1 + variation * u, clamped to 0..1; alpha stays.  Variation 0 is the
 * flat colour, to the bit. */
#define VARIATION_HUE (45.0 * DEG2RAD)

typedef struct
{
  const char *name;
  double color[4];
  double variation;
  double variation_scale_m;
} LayerColor;

static const TgParamDesc layer_color_params[] = {
  TG_PARAM_STRING (LayerColor, name, .label = N_("Layer"), .def_s = "layer",
                   .help = N_("Name of the layer to colour")),
  TG_PARAM_COLOR (LayerColor, color, .label = N_("Colour"), .def_v = { 0.5, 0.5, 0.5, 1.0 },
                  .help = N_("Colour where the layer has all the weight")),
  TG_PARAM_FLOAT (LayerColor, variation, .label = N_("Variation"), .def = 0.0, .min = 0.0,
                  .max = 1.0,
                  .help = N_("Noise in the layer's colour: brightness varies by up to this "
                             "fraction and hue by up to 45 degrees times it; 0 is one flat "
                             "colour")),
  TG_PARAM_FLOAT (LayerColor, variation_scale_m, .label = N_("Variation scale"), .def = 60.0,
                  .min = 1.0, .max = 1e5, .soft_min = 2.0, .soft_max = 2000.0, .unit = "m",
                  .help = N_("Feature size of the colour noise, in metres")),
};

typedef struct
{
  TgList colors;
} LayerColorsParams;

static const TgParamDesc layer_colors_params[] = {
  TG_PARAM_LIST (LayerColorsParams, colors, LayerColor, layer_color_params, .label = N_("Colours"),
                 .def_s = "name=grass|color=#5a7a34; name=rock|color=#77726b; "
                          "name=snow|color=#eef1f4", .min = 1, .max = SPLAT_MAX * 4,
                 .help = N_("A colour per layer name; every layer of the input needs one")),
};

static const TgPortDesc layer_colors_inputs[] = {
  { .name = "layers", .type = TG_TYPE_LAYERS, .label = N_("Layers"),
    .help = N_("Weight layers, e.g. from Splat layers or Biomes") },
  { .name = "shade", .type = TG_TYPE_MASK, .label = N_("Shade"), .optional = true,
    .help = N_("Multiplies the colour (e.g. a hillshade); unlinked leaves it as is") },
};

#define LAYER_COLORS_MAX 32
#define LAYER_COLORS_BLOCK 64

typedef struct
{
  const TgValue *in, *shade;
  TgValue *out;
  int n;
  float rgba[LAYER_COLORS_MAX][4];
  double variation[LAYER_COLORS_MAX];
  int varied[LAYER_COLORS_MAX]; /* layers with variation > 0, in order */
  int n_varied;
  TgFbm *noise;                 /* 2 per varied layer: brightness, hue */
} LayerColorsJob;

/* The varied colours of layer K over N samples into COL (RGBA each),
 * from its noise U (brightness) and V (hue), where its weights W (N of
 * them, STRIDE floats apart) are above 0.  Elsewhere the colour is
 * multiplied by a weight of 0 and is left as the flat colour: the same
 * sums, without the sine and cosine. */
static void
vary_colors (const LayerColorsJob *job, int k, int n, const float *w, int stride, const float *u,
             const float *v, float *col)
{
  const float *c = job->rgba[k];
  double mean = ((double) c[0] + c[1] + c[2]) / 3.0, amount = job->variation[k];
  /* (k x c) sqrt 3 for the grey axis k = (1, 1, 1) / sqrt 3. */
  double cross[3] = { (double) c[2] - c[1], (double) c[0] - c[2], (double) c[1] - c[0] };

  for (int i = 0; i < n; i++)
    {
      float *px = col + (size_t) i * 4;
      if (!(w[(size_t) i * stride] > 0.0f))
        {
          memcpy (px, c, 4 * sizeof (float));
          continue;
        }
      double a = amount * VARIATION_HUE * (double) v[i], ca = cos (a), sa = sin (a) / sqrt (3.0);
      double b = 1.0 + amount * (double) u[i];
      for (int q = 0; q < 3; q++)
        px[q] = (float) tg__clamp01 ((mean + ((double) c[q] - mean) * ca + cross[q] * sa) * b);
      px[3] = c[3];
    }
}

/* Whether any of the N weights W (STRIDE floats apart) is above 0: a
 * layer with none in a block adds exactly 0 there, so its noise is not
 * needed. */
static bool
any_weight (const float *w, int n, int stride)
{
  for (int i = 0; i < n; i++)
    if (w[(size_t) i * stride] > 0.0f)
      return true;
  return false;
}

static void
layer_colors_rows (void *user, int begin, int end)
{
  const LayerColorsJob *job = user;
  const TgRegion *r = &job->out->region;
  int n = job->n;
  float u[LAYER_COLORS_BLOCK], v[LAYER_COLORS_BLOCK];
  /* The varied colours of every varied layer over the block (32 KiB). */
  float col[LAYER_COLORS_MAX][LAYER_COLORS_BLOCK * 4];
  float acc[LAYER_COLORS_BLOCK * 4];
  /* Per layer: its varied colours' index in COL, -1 for the flat colour,
   * -2 for no weight in the block. */
  int slot[LAYER_COLORS_MAX];

  for (int j = begin; j < end; j++)
    for (int i0 = 0; i0 < r->width; i0 += LAYER_COLORS_BLOCK)
      {
        int nb = r->width - i0 < LAYER_COLORS_BLOCK ? r->width - i0 : LAYER_COLORS_BLOCK;
        const float *w = tg_value_row (job->in, r->row0 - job->in->region.row0 + j)
                         + (size_t) (r->col0 - job->in->region.col0 + i0) * (size_t) n;
        const float *sh = job->shade ? tg__grid_row (job->shade, r, j) + i0 : NULL;
        float *dst = tg_value_row (job->out, j) + (size_t) i0 * 4;
        /* A layer with no weight in the block adds exactly 0 to every
         * sum there: neither its noise nor its term is computed. */
        for (int k = 0; k < n; k++)
          slot[k] = any_weight (w + k, nb, n) ? -1 : -2;
        for (int q = 0; q < job->n_varied; q++)
          {
            int k = job->varied[q];
            if (slot[k] == -2)
              continue;
            tex_noise_block (&job->noise[2 * q], r, j, i0, nb, u);
            tex_noise_block (&job->noise[2 * q + 1], r, j, i0, nb, v);
            vary_colors (job, k, nb, w + k, n, u, v, col[q]);
            slot[k] = q;
          }
        /* Layer by layer over the block, each pixel's sum in layer
         * order as before. */
        memset (acc, 0, sizeof (float) * 4 * (size_t) nb);
        for (int k = 0; k < n; k++)
          {
            const float *wk = w + k;
            if (slot[k] == -2)
              continue;
            if (slot[k] == -1)
              {
                const float *c = job->rgba[k];
                for (int i = 0; i < nb; i++)
                  {
                    float a = tg__mask01 (wk[(size_t) i * n]);
                    for (int q = 0; q < 4; q++)
                      acc[i * 4 + q] += a * c[q];
                  }
              }
            else
              {
                const float *c = col[slot[k]];
                for (int i = 0; i < nb; i++)
                  {
                    float a = tg__mask01 (wk[(size_t) i * n]);
                    for (int q = 0; q < 4; q++)
                      acc[i * 4 + q] += a * c[i * 4 + q];
                  }
              }
          }
        if (sh)
          for (int i = 0; i < nb; i++)
            {
              float s = tg__mask01 (sh[i]);
              for (int q = 0; q < 3; q++)
                acc[i * 4 + q] *= s;
            }
        memcpy (dst, acc, sizeof (float) * 4 * (size_t) nb);
      }
}

static int
layer_colors_eval (TgEvalCtx *c)
{
  const LayerColorsParams *p = tg_eval_params (c);
  const TgRegion *region = tg_eval_region (c);
  const LayerColor *lc = p->colors.items;
  LayerColorsJob job = { 0 };
  int item[LAYER_COLORS_MAX]; /* the colour entry of each layer */
  int rc;

  job.in = tg_eval_input (c, 0);
  job.shade = tg_eval_input (c, 1);
  if (!job.in || !job.in->data)
    return tg_eval_fail (c, TG_EMISSING, TG_MSG_INPUT_NO_DATA, "layers");
  if (job.in->channels < 1 || job.in->channels > LAYER_COLORS_MAX)
    return tg_eval_fail (c, TG_ETYPE, "input 'layers' has %d layers; 1 to %d can be coloured",
                         job.in->channels, LAYER_COLORS_MAX);
  if (!tg_region_contains (&job.in->region, region))
    return tg_eval_fail (c, TG_EINVAL, TG_MSG_INPUT_NOT_COVERED, "layers");
  if (job.shade && (rc = tg__check_grid_input (c, job.shade, "shade", region)) < 0)
    return rc;
  job.n = job.in->channels;
  for (int k = 0; k < job.n; k++)
    {
      const char *name = job.in->channel_names ? job.in->channel_names[k] : NULL;
      int found = -1;
      for (int q = 0; q < p->colors.n && found < 0; q++)
        if (name && lc[q].name && strcmp (lc[q].name, name) == 0)
          found = q;
      if (found < 0)
        return tg_eval_fail (c, TG_EINVAL, "params.colors: no colour for layer \"%s\"",
                             name ? name : "(unnamed)");
      for (int q = 0; q < 4; q++)
        job.rgba[k][q] = (float) lc[found].color[q];
      job.variation[k] = lc[found].variation;
      item[k] = found;
      if (lc[found].variation > 0.0)
        job.varied[job.n_varied++] = k;
    }
  if (job.n_varied > 0)
    {
      uint32_t seed = tg_eval_seed (c, 0);
      job.noise = malloc (sizeof (TgFbm) * 2 * (size_t) job.n_varied);
      if (!job.noise)
        return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
      for (int q = 0; q < job.n_varied; q++)
        {
          const LayerColor *l = &lc[item[job.varied[q]]];
          tex_noise_plan (&job.noise[2 * q], seed, l->name, TEX_SALT_BRIGHT, l->variation_scale_m);
          tex_noise_plan (&job.noise[2 * q + 1], seed, l->name, TEX_SALT_HUE,
                          l->variation_scale_m);
        }
    }
  job.out = tg_eval_new_output (c, 0, 4);
  if (!job.out)
    rc = tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  else
    rc = tg_eval_parallel (c, region->height, tg__grain_rows (region->width), layer_colors_rows,
                           &job);
  free (job.noise);
  return rc;
}

static int
layer_colors_warn (const void *params, double cell_m, TgError *warn)
{
  const LayerColorsParams *p = params;
  const LayerColor *l = p->colors.items;
  char name[64];

  for (int k = 0; k < p->colors.n; k++)
    {
      snprintf (name, sizeof name, "colors[%d].variation_scale_m", k);
      if (l[k].variation > 0.0
          && tg_warn_below_cells (warn, name, "Variation scale", l[k].variation_scale_m, cell_m,
                                  2))
        return 1;
    }
  return 0;
}

static const TgNodeDesc layer_colors_desc = {
  .type = "texture.layer_colors",
  .category = TG_CATEGORY_TEXTURING,
  .label = N_("Colour layers"),
  .help = N_("A colour map from weight layers: each layer's colour blended by its weight"),
  TG_INPUTS (layer_colors_inputs),
  TG_OUTPUTS (image_out),
  TG_PARAMS (LayerColorsParams, layer_colors_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = layer_colors_eval,
  .warn = layer_colors_warn,
  .version = 1,
};
TG_NODE_REGISTER (layer_colors_desc);

/* --- texture.hillshade and texture.normals: the surface normal -------------- */

/* The normal of the surface y = height * height_m over (x east, z north),
 * from central differences in world metres (apron 1), so shading and
 * normal maps do not change with resolution. */

static const TgPortDesc shade_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Terrain to shade") },
};

static int
apron_one (const void *params, double cell_m)
{
  (void) params;
  (void) cell_m;
  return 1;
}

typedef struct
{
  double azimuth_deg, elevation_deg, exaggeration, ambient;
} HillshadeParams;

static const TgParamDesc hillshade_params[] = {
  TG_PARAM_FLOAT (HillshadeParams, azimuth_deg, .label = N_("Sun direction"), .def = 315.0,
                  .min = 0.0, .max = 360.0, .unit = "deg",
                  .help = N_("Compass direction the light comes from: 0 = north, 90 = east, 315 = "
                             "north-west (the cartographic default)")),
  TG_PARAM_FLOAT (HillshadeParams, elevation_deg, .label = N_("Sun elevation"), .def = 45.0,
                  .min = 0.0, .max = 90.0, .unit = "deg",
                  .help = N_("Angle of the sun above the horizon")),
  TG_PARAM_FLOAT (HillshadeParams, exaggeration, .label = N_("Exaggeration"), .def = 1.0,
                  .min = 0.0, .max = 100.0, .soft_min = 0.0, .soft_max = 10.0,
                  .help = N_("Multiplies the relief before shading")),
  TG_PARAM_FLOAT (HillshadeParams, ambient, .label = N_("Ambient"), .def = 0.0, .min = 0.0,
                  .max = 1.0,
                  .help = N_("Light from the whole sky: slopes facing away from the sun keep this "
                             "much (0 = black shadows, as in a cartographic hillshade)")),
};

static const TgPortDesc hillshade_outputs[] = {
  { .name = "mask", .type = TG_TYPE_MASK, .label = N_("Shade"),
    .help = N_("Lambertian shade, ambient (facing away) .. 1 (facing the sun)") },
};

enum
{
  NORMALS_OPENGL,
  NORMALS_DIRECTX,
};

static const char *const normal_conventions[] = { "opengl", "directx", NULL };

typedef struct
{
  int convention;
  double strength;
} NormalsParams;

static const TgParamDesc normals_params[] = {
  TG_PARAM_ENUM (NormalsParams, convention, .label = N_("Convention"), .def_s = "opengl",
                 .choices = normal_conventions,
                 .help = N_("opengl: green points north (+Y up; Unity, Godot, Blender); directx: "
                            "green points south (-Y; Unreal)")),
  TG_PARAM_FLOAT (NormalsParams, strength, .label = N_("Strength"), .def = 1.0, .min = 0.0,
                  .max = 100.0, .soft_min = 0.0, .soft_max = 10.0,
                  .help = N_("Multiplies the relief; 1 is the true surface")),
};

typedef enum
{
  SURF_HILLSHADE,
  SURF_NORMALS,
} SurfKind;

typedef struct
{
  SurfKind kind;
  double scale;        /* height_m * exaggeration / (2 cell) */
  double lx, ly, lz;   /* hillshade: unit vector to the sun (east, up, north) */
  double ambient;      /* hillshade: the shade of a slope facing away */
  double green_sign;   /* normals: +1 OpenGL, -1 DirectX */
} SurfJob;

static void
surf_row (const void *user, const TgRegion *r, int j, const TgValue *const *in, float *dst)
{
  const SurfJob *job = user;
  const float *n = tg__grid_row (in[0], r, j - 1);
  const float *m = tg__grid_row (in[0], r, j);
  const float *s = tg__grid_row (in[0], r, j + 1);

  for (int i = 0; i < r->width; i++)
    {
      double gx, gz, inv;
      tg__gradient (n, m, s, i, job->scale, &gx, &gz);
      /* Unit normal (-gx, 1, -gz) in (east, up, north). */
      inv = 1.0 / sqrt (gx * gx + gz * gz + 1.0);
      if (job->kind == SURF_HILLSHADE)
        {
          double d = (-gx * job->lx + job->ly - gz * job->lz) * inv;
          d = isnan (d) ? 0.0 : tg__clamp01 (d);
          dst[i] = (float) (job->ambient + (1.0 - job->ambient) * d);
        }
      else
        {
          float *px = dst + (size_t) i * 4;
          /* Tangent space: X = east (U), Y = north (V up), Z = out. */
          px[0] = (float) (0.5 - 0.5 * gx * inv);
          px[1] = (float) (0.5 - 0.5 * job->green_sign * gz * inv);
          px[2] = (float) (0.5 + 0.5 * inv);
          px[3] = 1.0f;
        }
    }
}

static int
surf_run (TgEvalCtx *c, SurfJob *job, double exaggeration)
{
  const TgRegion *region = tg_eval_region (c);

  if (!(region->cell > 0.0))
    return tg_eval_fail (c, TG_EINVAL, TG_MSG_WORLD_NO_EXTENT);
  job->scale = tg_eval_world (c)->height_m * exaggeration / (2.0 * region->cell);
  return tg_eval_map_area_rows (c, 1, job->kind == SURF_NORMALS ? 4 : 1, surf_row, job);
}

static int
hillshade_eval (TgEvalCtx *c)
{
  const HillshadeParams *p = tg_eval_params (c);
  SurfJob job = { .kind = SURF_HILLSHADE };
  double az = p->azimuth_deg * DEG2RAD, el = p->elevation_deg * DEG2RAD;

  job.lx = sin (az) * cos (el);
  job.ly = sin (el);
  job.lz = cos (az) * cos (el);
  job.ambient = p->ambient;
  return surf_run (c, &job, p->exaggeration);
}

static const TgNodeDesc hillshade_desc = {
  .type = "texture.hillshade",
  .category = TG_CATEGORY_TEXTURING,
  .label = N_("Hillshade"),
  .help = N_("Relief shading under a sun at a compass direction and elevation"),
  TG_INPUTS (shade_inputs),
  TG_OUTPUTS (hillshade_outputs),
  TG_PARAMS (HillshadeParams, hillshade_params),
  .locality = TG_LOCALITY_APRON,
  .apron = apron_one,
  .eval = hillshade_eval,
  .version = 1,
};
TG_NODE_REGISTER (hillshade_desc);

static int
normals_eval (TgEvalCtx *c)
{
  const NormalsParams *p = tg_eval_params (c);
  SurfJob job = { .kind = SURF_NORMALS };

  job.green_sign = p->convention == NORMALS_DIRECTX ? -1.0 : 1.0;
  return surf_run (c, &job, p->strength);
}

static const TgNodeDesc normals_desc = {
  .type = "texture.normals",
  .category = TG_CATEGORY_TEXTURING,
  .label = N_("Normal map"),
  .help = N_("Tangent-space normal map of the terrain (R = east, G = north for OpenGL or "
             "south for DirectX, B = up), encoded as 0.5 + 0.5 * n"),
  TG_INPUTS (shade_inputs),
  TG_OUTPUTS (image_out),
  TG_PARAMS (NormalsParams, normals_params),
  .locality = TG_LOCALITY_APRON,
  .apron = apron_one,
  .eval = normals_eval,
  .version = 1,
};
TG_NODE_REGISTER (normals_desc);
