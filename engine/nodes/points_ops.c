/* Operators on instance lists: points.filter (drop instances by a mask,
 * by terrain height or by slope, optionally only for some prototypes) and
 * points.merge (join lists, matching prototypes by name).
 *
 * Both keep the input order, so their output is as deterministic as their
 * inputs; the random mask mode draws from a hash of the seed and the
 * instance's index.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/hash.h>
#include <tgraph/node.h>
#include <tgraph/param.h>
#include <tgraph/points.h>

#include "scatter_common.h"

/* Copies instance I of SRC to DST with prototype PROTO. */
static int
copy_instance (TgPoints *dst, const TgPoints *src, int64_t i, int32_t proto)
{
  return tg_points_push (dst, src->position + 3 * i, src->rotation + 4 * i, src->scale + 3 * i,
                         proto);
}

static int
copy_protos (TgPoints *dst, const TgPoints *src)
{
  for (int k = 0; k < src->n_protos; k++)
    if (tg_points_add_proto (dst, src->proto_names[k]) < 0)
      return TG_ENOMEM;
  return 0;
}

static int
set_points_output (TgEvalCtx *c, TgPoints *p)
{
  TgValue *v = tg_value_new_points (p);

  if (!v)
    return tg_eval_fail (c, TG_ENOMEM, "out of memory");
  tg_eval_set_output (c, 0, v);
  return 0;
}

/* --- points.filter ------------------------------------------------------------ */

enum
{
  MASK_THRESHOLD,
  MASK_CHANCE,
};
static const char *const mask_mode_choices[] = { "threshold", "chance", NULL };

typedef struct
{
  const char *prototypes;
  int mask_mode;
  double threshold;
  bool invert;
  double min_height_m, max_height_m;
  double max_slope_deg;
  int seed;
} FilterParams;

static const TgParamDesc filter_params[] = {
  TG_PARAM_STRING (FilterParams, prototypes, N_("Prototypes"), "",
                   N_("Comma-separated prototype names the filter applies to; others pass "
                      "unchanged.  Empty: all")),
  TG_PARAM_ENUM (FilterParams, mask_mode, N_("Mask use"), "threshold", mask_mode_choices,
                 N_("threshold: keep where the mask is at least the threshold; chance: keep "
                    "with the mask's value as probability")),
  TG_PARAM_FLOAT (FilterParams, threshold, N_("Threshold"), 0.5, 0.0, 1.0, NULL,
                  N_("Mask value an instance needs to stay (threshold mode)")),
  TG_PARAM_BOOL (FilterParams, invert, N_("Invert mask"), false,
                 N_("Keep where the mask is low instead")),
  TG_PARAM_FLOAT_UI (FilterParams, min_height_m, N_("Lowest terrain"), -100000.0, -100000.0,
                     100000.0, 0.0, 2000.0, "m",
                     N_("Drop instances below this height: the terrain's when the height input "
                        "is linked, else the instance's own")),
  TG_PARAM_FLOAT_UI (FilterParams, max_height_m, N_("Highest terrain"), 100000.0, -100000.0,
                     100000.0, 0.0, 2000.0, "m", N_("Drop instances above this height")),
  TG_PARAM_FLOAT (FilterParams, max_slope_deg, N_("Steepest slope"), 90.0, 0.0, 90.0, "deg",
                  N_("Drop instances on terrain steeper than this (needs the height input; "
                     "90: no limit)")),
  TG_PARAM_SEED (FilterParams, seed, N_("Seed"), N_("Seed of the chance mode")),
};

static const TgPortDesc filter_inputs[] = {
  { .name = "points", .type = TG_TYPE_POINTS, .label = N_("Instances"),
    .help = N_("Instances to filter") },
  { .name = "mask", .type = TG_TYPE_MASK, .label = N_("Mask"), .optional = true,
    .help = N_("Where instances may stay, 0..1") },
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"), .optional = true,
    .help = N_("Terrain for the height and slope tests") },
};

static const TgPortDesc points_outputs[] = {
  { .name = "points", .type = TG_TYPE_POINTS, .label = N_("Instances"),
    .help = N_("The instances that remain, in their input order") },
};

static int
filter_check (const void *params, TgError *err)
{
  const FilterParams *p = params;

  if (p->max_height_m < p->min_height_m)
    return tg_error_set (err, TG_ERANGE, "params.max_height_m",
                         "the highest terrain (%g m) is below the lowest (%g m)", p->max_height_m,
                         p->min_height_m);
  return 0;
}

/* Whether NAME is one of the comma-separated LIST (spaces around names
 * ignored). */
static bool
name_in_list (const char *list, const char *name)
{
  size_t len = strlen (name);
  const char *s = list;

  while (*s)
    {
      const char *end = strchr (s, ',');
      const char *a = s, *b = end ? end : s + strlen (s);
      while (a < b && *a == ' ')
        a++;
      while (b > a && b[-1] == ' ')
        b--;
      if ((size_t) (b - a) == len && strncmp (a, name, len) == 0)
        return true;
      if (!end)
        break;
      s = end + 1;
    }
  return false;
}

static int
filter_eval (TgEvalCtx *c)
{
  const FilterParams *p = tg_eval_params (c);
  const TgWorld *world = tg_eval_world (c);
  const TgPoints *in = tg_value_points (tg_eval_input (c, 0));
  const TgValue *mask = tg_eval_input (c, 1);
  const TgValue *height = tg_eval_input (c, 2);
  TgTerrain mask_t = { .height = mask, .height_m = 1.0 };
  TgTerrain terrain = { .height = height, .height_m = world->height_m };
  double max_tan = p->max_slope_deg >= 90.0 ? INFINITY : tan (p->max_slope_deg * (M_PI / 180.0));
  uint32_t seed = tg_eval_seed (c, p->seed);
  bool *applies = NULL;
  TgPoints *out;

  if (!in)
    return tg_eval_fail (c, TG_ETYPE, "input 'points' carries no instances");
  if (p->max_slope_deg < 90.0 && !height)
    return tg_eval_fail (c, TG_EMISSING,
                         "params.max_slope_deg: a slope limit needs the height input linked");
  if ((mask && mask->channels != 1) || (height && height->channels != 1))
    return tg_eval_fail (c, TG_ETYPE, "the mask and height inputs must be one-channel grids");

  out = tg_points_new ();
  applies = calloc ((size_t) (in->n_protos ? in->n_protos : 1), sizeof (bool));
  if (!out || !applies || copy_protos (out, in) < 0)
    goto oom;
  for (int k = 0; k < in->n_protos; k++)
    {
      applies[k] = !p->prototypes || !p->prototypes[0]
                   || name_in_list (p->prototypes, in->proto_names[k]);
    }

  for (int64_t i = 0; i < in->n; i++)
    {
      const float *pos = in->position + 3 * i;
      int32_t proto = in->proto[i];
      bool keep = true;
      if (proto >= 0 && proto < in->n_protos && applies[proto])
        {
          double y = pos[1], tan_s = 0.0;
          if (height)
            tg__terrain_sample (&terrain, pos[0], pos[2], &y, &tan_s);
          keep = y >= p->min_height_m && y <= p->max_height_m && tan_s <= max_tan;
          if (keep && mask)
            {
              double m, unused;
              tg__terrain_sample (&mask_t, pos[0], pos[2], &m, &unused);
              if (p->invert)
                m = 1.0 - m;
              if (p->mask_mode == MASK_THRESHOLD)
                keep = p->invert ? m > 1.0 - p->threshold : m >= p->threshold;
              else
                keep = tg_hash_unit (tg_hash3 (seed, (int32_t) i, (int32_t) (i >> 32), 9)) < m;
            }
        }
      if (keep && copy_instance (out, in, i, proto) < 0)
        goto oom;
    }
  free (applies);
  return set_points_output (c, out);

oom:
  free (applies);
  tg_points_free (out);
  return tg_eval_fail (c, TG_ENOMEM, "out of memory");
}

static const TgNodeDesc filter_desc = {
  .type = "points.filter",
  .category = "Scatter",
  .label = N_("Filter instances"),
  .help = N_("Drops instances by a mask, by terrain height or by slope, for all prototypes "
             "or only some"),
  .inputs = filter_inputs,
  .n_inputs = TG_N_ELEMENTS (filter_inputs),
  .outputs = points_outputs,
  .n_outputs = TG_N_ELEMENTS (points_outputs),
  .params = filter_params,
  .n_params = TG_N_ELEMENTS (filter_params),
  .params_size = sizeof (FilterParams),
  .locality = TG_LOCALITY_GLOBAL,
  .check = filter_check,
  .eval = filter_eval,
  .version = 1,
};
TG_NODE_REGISTER (filter_desc);

/* --- points.merge ----------------------------------------------------------------- */

static const TgPortDesc merge_inputs[] = {
  { .name = "a", .type = TG_TYPE_POINTS, .label = N_("A"), .help = N_("First instances") },
  { .name = "b", .type = TG_TYPE_POINTS, .label = N_("B"), .help = N_("Instances after A") },
  { .name = "c", .type = TG_TYPE_POINTS, .label = N_("C"), .optional = true,
    .help = N_("Instances after B") },
  { .name = "d", .type = TG_TYPE_POINTS, .label = N_("D"), .optional = true,
    .help = N_("Instances after C") },
};

static int
merge_eval (TgEvalCtx *c)
{
  TgPoints *out = tg_points_new ();
  int32_t *map = NULL;
  int64_t total = 0;

  if (!out)
    goto oom;
  for (int k = 0; k < TG_N_ELEMENTS (merge_inputs); k++)
    {
      const TgValue *v = tg_eval_input (c, k);
      if (v && !tg_value_points (v))
        {
          tg_points_free (out);
          return tg_eval_fail (c, TG_ETYPE, "input '%s' carries no instances",
                               merge_inputs[k].name);
        }
      if (v)
        total += tg_value_points (v)->n;
    }
  if (tg_points_reserve (out, total) < 0)
    goto oom;
  for (int k = 0; k < TG_N_ELEMENTS (merge_inputs); k++)
    {
      const TgPoints *in = tg_value_points (tg_eval_input (c, k));
      if (!in)
        continue;
      /* Prototypes by name, in order of first appearance. */
      map = malloc (sizeof (int32_t) * (size_t) (in->n_protos ? in->n_protos : 1));
      if (!map)
        goto oom;
      for (int q = 0; q < in->n_protos; q++)
        {
          int found = 0;
          while (found < out->n_protos && strcmp (out->proto_names[found], in->proto_names[q]))
            found++;
          if (found == out->n_protos && (found = tg_points_add_proto (out, in->proto_names[q])) < 0)
            goto oom;
          map[q] = found;
        }
      for (int64_t i = 0; i < in->n; i++)
        {
          int32_t q = in->proto[i];
          if (copy_instance (out, in, i, q >= 0 && q < in->n_protos ? map[q] : q) < 0)
            goto oom;
        }
      free (map);
      map = NULL;
    }
  return set_points_output (c, out);

oom:
  free (map);
  tg_points_free (out);
  return tg_eval_fail (c, TG_ENOMEM, "out of memory");
}

static const TgNodeDesc merge_desc = {
  .type = "points.merge",
  .category = "Scatter",
  .label = N_("Merge instances"),
  .help = N_("Joins instance lists in input order; prototypes with the same name become one"),
  .inputs = merge_inputs,
  .n_inputs = TG_N_ELEMENTS (merge_inputs),
  .outputs = points_outputs,
  .n_outputs = TG_N_ELEMENTS (points_outputs),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = merge_eval,
  .version = 1,
};
TG_NODE_REGISTER (merge_desc);
