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
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
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
  TG_PARAM_STRING (FilterParams, prototypes, .label = N_("Prototypes"), .def_s = "",
                   .help = N_("Comma-separated prototype names the filter applies to; others pass "
                              "unchanged.  Empty: all")),
  TG_PARAM_ENUM (FilterParams, mask_mode, .label = N_("Mask use"), .def_s = "threshold",
                 .choices = mask_mode_choices,
                 .help = N_("threshold: keep where the mask is at least the threshold; chance: "
                            "keep with the mask's value as probability")),
  TG_PARAM_FLOAT (FilterParams, threshold, .label = N_("Threshold"), .def = 0.5, .min = 0.0,
                  .max = 1.0, .help = N_("Mask value an instance needs to stay (threshold mode)")),
  TG_PARAM_BOOL (FilterParams, invert, .label = N_("Invert mask"), .def = false,
                 .help = N_("Keep where the mask is low instead")),
  TG_PARAM_FLOAT (FilterParams, min_height_m, .label = N_("Lowest terrain"), .def = -100000.0,
                  .min = -100000.0, .max = 100000.0, .soft_min = 0.0, .soft_max = 2000.0,
                  .unit = "m",
                  .help = N_("Drop instances below this height: the terrain's when the height "
                             "input is linked, else the instance's own")),
  TG_PARAM_FLOAT (FilterParams, max_height_m, .label = N_("Highest terrain"), .def = 100000.0,
                  .min = -100000.0, .max = 100000.0, .soft_min = 0.0, .soft_max = 2000.0,
                  .unit = "m", .help = N_("Drop instances above this height")),
  TG_PARAM_FLOAT (FilterParams, max_slope_deg, .label = N_("Steepest slope"), .def = 90.0,
                  .min = 0.0, .max = 90.0, .unit = "deg",
                  .help = N_("Drop instances on terrain steeper than "
                             "this (needs the height input; 90: no limit)")),
  TG_PARAM_SEED (FilterParams, seed, .label = N_("Seed"), .help = N_("Seed of the chance mode")),
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
    return tg_error_set (err, TG_ERANGE, "params.max_height_m", TG_MSG_HIGHEST_BELOW_LOWEST,
                         p->max_height_m, p->min_height_m);
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

/* What one evaluation of points.filter reads, checked once. */
typedef struct
{
  const FilterParams *p;
  const TgPoints *in;
  const TgValue *mask;
  const TgValue *height;
  TgTerrain mask_t, terrain;
  double max_tan;
  uint32_t seed;
  bool *applies; /* per input prototype */
} FilterJob;

static int
filter_begin (TgEvalCtx *c, FilterJob *job)
{
  const FilterParams *p = tg_eval_params (c);

  memset (job, 0, sizeof *job);
  job->p = p;
  job->in = tg_value_points (tg_eval_input (c, 0));
  job->mask = tg_eval_input (c, 1);
  job->height = tg_eval_input (c, 2);
  if (!job->in)
    return tg_eval_fail (c, TG_ETYPE, TG_MSG_INPUT_NO_INSTANCES, "points");
  if (p->max_slope_deg < 90.0 && !job->height)
    return tg_eval_fail (c, TG_EMISSING, "params.max_slope_deg: %s", TG_MSG_SLOPE_NEEDS_HEIGHT);
  if ((job->mask && job->mask->channels != 1) || (job->height && job->height->channels != 1))
    return tg_eval_fail (c, TG_ETYPE, TG_MSG_MASK_HEIGHT_ONE_CHANNEL);
  job->mask_t = (TgTerrain) { .height = job->mask, .height_m = 1.0 };
  job->terrain = (TgTerrain) { .height = job->height, .height_m = tg_eval_world (c)->height_m };
  job->max_tan = p->max_slope_deg >= 90.0 ? INFINITY : tan (p->max_slope_deg * (M_PI / 180.0));
  job->seed = tg_eval_seed (c, p->seed);
  job->applies = calloc ((size_t) (job->in->n_protos ? job->in->n_protos : 1), sizeof (bool));
  if (!job->applies)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  for (int k = 0; k < job->in->n_protos; k++)
    job->applies[k] = !p->prototypes || !p->prototypes[0]
                      || name_in_list (p->prototypes, job->in->proto_names[k]);
  return 0;
}

/* Whether input instance I stays. */
static bool
filter_keep (const FilterJob *job, int64_t i)
{
  const FilterParams *p = job->p;
  const float *pos = job->in->position + 3 * i;
  int32_t proto = job->in->proto[i];
  double y = pos[1], tan_s = 0.0;
  bool keep;

  if (!(proto >= 0 && proto < job->in->n_protos && job->applies[proto]))
    return true;
  if (job->height)
    tg__terrain_surface (&job->terrain, pos[0], pos[2], &y, &tan_s);
  keep = y >= p->min_height_m && y <= p->max_height_m && tan_s <= job->max_tan;
  if (keep && job->mask)
    {
      double m, unused;
      tg__terrain_sample (&job->mask_t, pos[0], pos[2], &m, &unused);
      if (p->invert)
        m = 1.0 - m;
      if (p->mask_mode == MASK_THRESHOLD)
        keep = p->invert ? m > 1.0 - p->threshold : m >= p->threshold;
      else
        keep = tg_hash_unit (tg_hash3 (job->seed, (int32_t) i, (int32_t) (i >> 32), 9)) < m;
    }
  return keep;
}

/* Sets output 0 to the input instances in [BEGIN, END) that KEEP (a
 * bitmap over the input; NULL: decide here) lets through. */
static int
filter_emit (TgEvalCtx *c, const FilterJob *job, int64_t begin, int64_t end,
             const uint8_t *keep)
{
  TgPoints *out = tg_points_new ();

  if (!out || copy_protos (out, job->in) < 0)
    goto oom;
  for (int64_t i = begin; i < end; i++)
    {
      bool k = keep ? (keep[i >> 3] >> (i & 7)) & 1 : filter_keep (job, i);
      if (k && copy_instance (out, job->in, i, job->in->proto[i]) < 0)
        goto oom;
    }
  return set_points_output (c, out);

oom:
  tg_points_free (out);
  return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
}

static int
filter_eval (TgEvalCtx *c)
{
  FilterJob job;
  int rc = filter_begin (c, &job);

  if (rc == 0)
    rc = filter_emit (c, &job, 0, job.in->n, NULL);
  free (job.applies);
  return rc;
}

/* Tiled: the input list comes whole, the maps over a tile.  Step 0: each
 * tile decides the instances its samples own (tg__scatter_owner), as a
 * sorted list of input indices; the reduce ORs them into one bitmap; step
 * 1: tile K of the T (row by row) emits the kept instances of the K-th
 * of T equal index ranges, so the join is a concatenation in input order.
 * The decisions are the whole eval's (filter_keep, maps read at the
 * whole map's bits), so the bytes are too. */

static int
filter_n_steps (const void *params, const TgRegion *full)
{
  (void) params;
  (void) full;
  return 2;
}

static int
filter_halo (const void *params, const TgRegion *full, int step)
{
  (void) params;
  (void) full;
  /* The cell under a point reaches one sample past the owner; one more
   * for rounding.  Step 1 reads only the list. */
  return step == 0 ? 2 : 0;
}

static bool
filter_has_reduce (const void *params, const TgRegion *full, int step)
{
  (void) params;
  (void) full;
  return step == 0;
}

/* Start of range K of NT over N items (N below 2^43: N x NT fits). */
static int64_t
range_start (int64_t n, int64_t nt, int64_t k)
{
  return n * k / nt;
}

static int
filter_tile_step (TgEvalCtx *c, int step)
{
  const TgTiling *t = tg_eval_tiling (c);
  const TgRegion *region = tg_eval_region (c);
  TgRegion full = tg_region_full (region);
  FilterJob job;
  int rc = filter_begin (c, &job);

  if (rc < 0)
    {
      free (job.applies);
      return rc;
    }
  if (step == 0)
    {
      /* [n input, n kept, kept indices...] */
      uint64_t *list = malloc (sizeof (uint64_t) * (size_t) (job.in->n + 2));
      int64_t k = 0;
      if (!list)
        {
          free (job.applies);
          return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
        }
      for (int64_t i = 0; i < job.in->n; i++)
        {
          const float *pos = job.in->position + 3 * i;
          int col, row;
          tg__scatter_owner (&full, pos[0], pos[2], &col, &row);
          if (col >= region->col0 && col < region->col0 + region->width && row >= region->row0
              && row < region->row0 + region->height && filter_keep (&job, i))
            list[2 + k++] = (uint64_t) i;
        }
      list[0] = (uint64_t) job.in->n;
      list[1] = (uint64_t) k;
      rc = tg_eval_blob_put (c, "kept", list, sizeof (uint64_t) * (size_t) (k + 2));
      free (list);
    }
  else
    {
      int64_t nt = (int64_t) t->nx * t->ny, me = (int64_t) t->iy * t->nx + t->ix;
      void *data = NULL;
      size_t size = 0;
      rc = tg_eval_blob_get (c, -1, -1, "kept", &data, &size);
      if (rc == 0
          && (size < sizeof (uint64_t)
              || ((const uint64_t *) data)[0] != (uint64_t) job.in->n
              || size != sizeof (uint64_t) + (size_t) ((job.in->n + 7) / 8)))
        rc = tg_eval_fail (c, TG_EPARSE, "the kept instances' bitmap is damaged");
      if (rc == 0)
        rc = filter_emit (c, &job, range_start (job.in->n, nt, me),
                          range_start (job.in->n, nt, me + 1),
                          (const uint8_t *) data + sizeof (uint64_t));
      free (data);
    }
  free (job.applies);
  return rc;
}

static int
filter_reduce (TgEvalCtx *c, int step)
{
  const TgTiling *t = tg_eval_tiling (c);
  uint8_t *bits = NULL;
  uint64_t n = 0;
  size_t nb = 0;
  int rc = 0;

  (void) step;
  for (int iy = 0; rc == 0 && iy < t->ny; iy++)
    for (int ix = 0; rc == 0 && ix < t->nx; ix++)
      {
        uint64_t *list = NULL;
        size_t size = 0;
        if ((rc = tg_eval_blob_get (c, ix, iy, "kept", (void **) &list, &size)) < 0)
          break;
        if (size < 2 * sizeof (uint64_t) || (bits && list[0] != n)
            || size != sizeof (uint64_t) * (size_t) (list[1] + 2))
          rc = tg_eval_fail (c, TG_EPARSE, "tile %d,%d's kept instances are damaged", ix, iy);
        if (rc == 0 && !bits)
          {
            n = list[0];
            nb = sizeof (uint64_t) + (size_t) ((n + 7) / 8);
            bits = calloc (1, nb);
            if (!bits)
              rc = tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
            else
              memcpy (bits, &n, sizeof n);
          }
        for (uint64_t k = 0; rc == 0 && k < list[1]; k++)
          {
            uint64_t i = list[2 + k];
            if (i >= n)
              rc = tg_eval_fail (c, TG_EPARSE, "tile %d,%d's kept instances are damaged", ix,
                                 iy);
            else
              bits[sizeof (uint64_t) + i / 8] |= (uint8_t) (1u << (i & 7));
          }
        free (list);
      }
  if (rc == 0)
    rc = tg_eval_blob_put (c, "kept", bits, nb);
  free (bits);
  return rc;
}

static TgValue *
filter_join (const void *params, const TgRegion *full, const TgTiling *t, int output,
             TgValue *const *parts, TgError *err)
{
  const TgPoints *p0 = tg_value_points (parts[0]);
  TgPoints *out = tg_points_new ();
  int64_t total = 0;
  TgValue *v;

  (void) params;
  (void) full;
  (void) output;
  if (!out || !p0 || copy_protos (out, p0) < 0)
    goto fail;
  for (int q = 0; q < t->nx * t->ny; q++)
    {
      const TgPoints *p = tg_value_points (parts[q]);
      if (!p || p->n_protos != p0->n_protos)
        goto fail;
      total += p->n;
    }
  if (tg_points_reserve (out, total) < 0)
    goto fail;
  for (int q = 0; q < t->nx * t->ny; q++)
    {
      const TgPoints *p = tg_value_points (parts[q]);
      for (int64_t i = 0; i < p->n; i++)
        if (copy_instance (out, p, i, p->proto[i]) < 0)
          goto fail;
    }
  v = tg_value_new_points (out);
  if (!v)
    tg_error_set (err, TG_ENOMEM, NULL, TG_MSG_OUT_OF_MEMORY);
  return v;

fail:
  tg_points_free (out);
  tg_error_set (err, TG_EINVAL, NULL, "a tile's share of the filtered instances is missing, "
                "or out of memory");
  return NULL;
}

static const TgTiledScheme filter_tiled = {
  .n_steps = filter_n_steps,
  .halo = filter_halo,
  .tile_step = filter_tile_step,
  .has_reduce = filter_has_reduce,
  .reduce = filter_reduce,
  .join = filter_join,
};

static const TgNodeDesc filter_desc = {
  .type = "points.filter",
  .category = TG_CATEGORY_SCATTER,
  .label = N_("Filter instances"),
  .help = N_("Drops instances by a mask, by terrain height or by slope, for all prototypes "
             "or only some"),
  TG_INPUTS (filter_inputs),
  TG_OUTPUTS (points_outputs),
  TG_PARAMS (FilterParams, filter_params),
  .locality = TG_LOCALITY_GLOBAL,
  .check = filter_check,
  .eval = filter_eval,
  .tiled = &filter_tiled,
  .version = 2,
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
          return tg_eval_fail (c, TG_ETYPE, TG_MSG_INPUT_NO_INSTANCES, merge_inputs[k].name);
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
  return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
}

static const TgNodeDesc merge_desc = {
  .type = "points.merge",
  .category = TG_CATEGORY_SCATTER,
  .label = N_("Merge instances"),
  .help = N_("Joins instance lists in input order; prototypes with the same name become one"),
  TG_INPUTS (merge_inputs),
  TG_OUTPUTS (points_outputs),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = merge_eval,
  .version = 1,
};
TG_NODE_REGISTER (merge_desc);
