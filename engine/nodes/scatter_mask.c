/* scatter.mask: Poisson-disk instances whose density follows a mask.
 *
 * A blue-noise set with a minimum spacing covers the whole world, and
 * each point is then kept with probability chance x mask.  Thinning a
 * fixed set rather than growing one per mask means editing the mask never
 * reshuffles the instances elsewhere, and the expected density is exactly
 * proportional to it.
 *
 * The set is world-anchored dart throwing: `attempts` darts in every cell
 * of r / sqrt 2 (a hash of the seed, the cell and the dart), thinned by
 * the spacing pass of scatter_common.h in blocks of r, darts in random
 * (hashed) order within a block.  With enough darts the set is maximal:
 * no gap holds another point.  (Bridson's growth, used before, is
 * sequential over the whole world; this gives a point that depends only
 * on darts within 5 r, which a tile can compute.)  Instances come ordered
 * by the world sample that owns them, north rows first.
 *
 * Determinism: every choice is a hash of the seed and the dart's cell and
 * number, and every pass runs in a fixed order, so the output is the same
 * on every run, machine and thread count.  The eval works in bands of
 * rows, each computed as a tile would be, so its memory follows the band,
 * and a tiled build's step is the same code over its tile.
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

typedef struct
{
  const char *prototype;
  double min_spacing_m;
  double base_chance;
  int attempts;
  TG__SCATTER_XFORM_FIELDS;
  int seed;
} MaskParams;

static const TgParamDesc mask_params[] = {
  TG_PARAM_STRING (MaskParams, prototype, .label = N_("Prototype"), .def_s = "instance",
                   .help = N_("Name of the object kind these instances place")),
  TG_PARAM_FLOAT (MaskParams, min_spacing_m, .label = N_("Minimum spacing"), .def = 4.0,
                  .min = 0.01, .max = 100000.0, .soft_min = 0.5, .soft_max = 100.0, .unit = "m",
                  .help = N_("No two instances closer than this")),
  TG_PARAM_FLOAT (MaskParams, base_chance, .label = N_("Chance"), .def = 1.0, .min = 0.0,
                  .max = 1.0,
                  .help = N_("Probability of keeping a point where "
                             "the mask is 1; the mask scales it")),
  TG_PARAM_INT (MaskParams, attempts, .label = N_("Attempts"), .def = 12, .min = 1, .max = 64,
                .help = N_("Candidates thrown in each cell of spacing / "
                           "sqrt 2; more packs tighter and runs slower")),
  TG__SCATTER_XFORM_PARAMS (MaskParams),
  TG_PARAM_SEED (MaskParams, seed, .label = N_("Seed"), .help = N_("Seed of every random choice")),
};

static const TgPortDesc mask_inputs[] = {
  { .name = "mask", .type = TG_TYPE_MASK, .label = N_("Density"),
    .help = N_("Probability of an instance, 0..1, over the world") },
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"), .optional = true,
    .help = N_("Terrain to snap to and to filter by height and slope") },
};

static const TgPortDesc mask_outputs[] = {
  { .name = "points", .type = TG_TYPE_POINTS, .label = N_("Instances"),
    .help = N_("The placed instances, by the world sample under them: north rows first, "
               "then west first") },
};

static int
mask_check (const void *params, TgError *err)
{
  const MaskParams *p = params;

  if (!p->prototype || !p->prototype[0])
    return tg_error_set (err, TG_EMISSING, "params.prototype", "no prototype name given");
  return tg__scatter_xform_check (p->min_yaw_deg, p->max_yaw_deg, p->min_scale, p->max_scale,
                                  p->min_height_m, p->max_height_m, err);
}

/* Dart cells (r / sqrt 2 wide) over the world at most. */
#define MAX_GRID_CELLS ((int64_t) 1 << 27)
/* Darts one band of the eval works on, about (40 bytes each). */
#define BAND_DARTS ((double) (1 << 20))

/* Hash channels of a dart (times the dart's number). */
enum
{
  H_X,
  H_Z,
  H_PRIO,
  H_KEEP,
  H_YAW,
  H_SCALE,
  H_N,
};

typedef struct
{
  const MaskParams *p;
  uint32_t seed;
  double west, north, east, south, g;
  int64_t gw, gh;
} Darts;

static double
mask_ring_m (const MaskParams *p)
{
  return tg__scatter_ring_m (p->min_spacing_m, p->min_spacing_m);
}

/* The darts within RING of window WIN of FULL, in seq order, into BUF;
 * stops early, at a row of cells, once cancel is asked. */
static void
darts_near (TgEvalCtx *c, const Darts *d, const TgRegion *full, const TgRegion *win, double ring,
            TgScatterBuf *buf)
{
  double bw = tg_region_x (full, win->col0) - ring, be = tg_region_x (full, win->col0 + win->width) + ring;
  double bn = tg_region_z (full, win->row0) + ring, bs = tg_region_z (full, win->row0 + win->height) - ring;
  int64_t cx0 = (int64_t) fmax (0.0, floor ((bw - d->west) / d->g) - 1.0);
  int64_t cx1 = (int64_t) fmin ((double) d->gw, floor ((be - d->west) / d->g) + 2.0);
  int64_t cz0 = (int64_t) fmax (0.0, floor ((d->north - bn) / d->g) - 1.0);
  int64_t cz1 = (int64_t) fmin ((double) d->gh, floor ((d->north - bs) / d->g) + 2.0);
  int k = d->p->attempts;

  for (int64_t cz = cz0; cz < cz1 && !tg_eval_cancelled (c); cz++)
    for (int64_t cx = cx0; cx < cx1; cx++)
      for (int j = 0; j < k; j++)
        {
          int32_t ix = (int32_t) cx, iz = (int32_t) cz;
          TgScatterCand cand = { 0 };
          double x = d->west + ((double) cx + tg_hash_unit (tg_hash3 (d->seed, ix, iz, j * H_N + H_X))) * d->g;
          double z = d->north - ((double) cz + tg_hash_unit (tg_hash3 (d->seed, ix, iz, j * H_N + H_Z))) * d->g;
          cand.x = (float) x;
          cand.z = (float) z;
          if (!((double) cand.x >= d->west && (double) cand.x <= d->east
                && (double) cand.z >= d->south && (double) cand.z <= d->north)
              || !((double) cand.x >= bw && (double) cand.x <= be && (double) cand.z >= bs
                   && (double) cand.z <= bn))
            continue;
          cand.seq = ((uint64_t) cz * (uint64_t) d->gw + (uint64_t) cx) * (uint64_t) k
                     + (uint64_t) j;
          cand.prio = tg_hash3 (d->seed, ix, iz, j * H_N + H_PRIO);
          tg__scatter_buf_push (buf, &cand);
        }
}

/* Whether cancel was asked; if so, BUF is freed. */
static bool
band_cancelled (TgEvalCtx *c, TgScatterBuf *buf)
{
  if (!tg_eval_cancelled (c))
    return false;
  tg__scatter_buf_clear (buf);
  return true;
}

/* Appends to PTS the instances the samples of WIN own. */
static int
mask_window (TgEvalCtx *c, const Darts *d, const TgRegion *full, const TgRegion *win,
             const TgTerrain *density, const TgScatterFilter *filter, TgPoints *pts)
{
  const MaskParams *p = d->p;
  TgScatterBuf buf = { 0 };
  int64_t n, k = 0;
  int rc = 0;

  darts_near (c, d, full, win, mask_ring_m (p) + full->cell, &buf);
  if (buf.oom)
    {
      tg__scatter_buf_clear (&buf);
      return tg_eval_fail (c, TG_ENOMEM, "out of memory for the Poisson-disk darts");
    }
  /* A band holds a few million darts when the spacing is fine: look at
   * the token between its passes too. */
  if (band_cancelled (c, &buf))
    return TG_ECANCELLED;
  n = tg__scatter_space_blocks (c, buf.c, buf.n, p->min_spacing_m, p->min_spacing_m, false, 1,
                                d->west, d->north);
  if (n == TG_ECANCELLED)
    {
      tg__scatter_buf_clear (&buf);
      return TG_ECANCELLED;
    }
  if (n < 0)
    {
      tg__scatter_buf_clear (&buf);
      return tg_eval_fail (c, TG_ENOMEM, "out of memory for the spacing pass");
    }
  if (band_cancelled (c, &buf))
    return TG_ECANCELLED;
  n = tg__scatter_keep_owned (buf.c, n, full, win);
  for (int64_t i = 0; i < n; i++)
    {
      TgScatterCand cand = buf.c[i];
      int64_t cell = (int64_t) (cand.seq / (uint64_t) p->attempts);
      int32_t ix = (int32_t) (cell % d->gw), iz = (int32_t) (cell / d->gw);
      int j = (int) (cand.seq % (uint64_t) p->attempts);
      double dens, unused;
      tg__terrain_sample (density, cand.x, cand.z, &dens, &unused);
      if (!(tg_hash_unit (tg_hash3 (d->seed, ix, iz, j * H_N + H_KEEP)) < p->base_chance * dens))
        continue;
      cand.yaw = (float) tg__scatter_lerp_hash (p->min_yaw_deg * (M_PI / 180.0),
                                                p->max_yaw_deg * (M_PI / 180.0),
                                                tg_hash3 (d->seed, ix, iz, j * H_N + H_YAW));
      cand.scale = (float) tg__scatter_lerp_hash (p->min_scale, p->max_scale,
                                                  tg_hash3 (d->seed, ix, iz, j * H_N + H_SCALE));
      cand.proto = 0;
      if (!tg__scatter_filter (filter, &cand))
        continue;
      buf.c[k++] = cand;
    }
  if (tg__scatter_order (buf.c, k, full) < 0 || tg__scatter_emit (pts, buf.c, k) < 0)
    rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for the instances");
  tg__scatter_buf_clear (&buf);
  return rc;
}

/* The instances the samples of the evaluation's region own: the whole
 * world in an eval, a tile in a tiled step (inputs grown by the halo). */
static int
mask_eval (TgEvalCtx *c)
{
  const MaskParams *p = tg_eval_params (c);
  const TgWorld *world = tg_eval_world (c);
  const TgRegion *region = tg_eval_region (c);
  const TgValue *mask = tg_eval_input (c, 0);
  const TgValue *height = tg_eval_input (c, 1);
  TgRegion full = tg_region_full (region);
  TgScatterFilter filter;
  TgTerrain density = { .height = mask, .height_m = 1.0 };
  TgPoints *pts;
  TgValue *out;
  Darts d = { 0 };
  double mask_max = 0.0, per_row, ring = mask_ring_m (p) + full.cell;
  int band_rows;

  if (!mask || !mask->data || mask->channels != 1)
    return tg_eval_fail (c, TG_ETYPE, TG_MSG_INPUT_ONE_CHANNEL, "mask");
  if (height && (!height->data || height->channels != 1))
    return tg_eval_fail (c, TG_ETYPE, TG_MSG_INPUT_ONE_CHANNEL, "height");
  if (!(world->size_x > 0.0) || !(world->size_z > 0.0))
    return tg_eval_fail (c, TG_EINVAL, TG_MSG_WORLD_NO_EXTENT);
  d.p = p;
  d.seed = tg_eval_seed (c, p->seed);
  d.g = p->min_spacing_m / M_SQRT2;
  d.west = -0.5 * world->size_x;
  d.east = 0.5 * world->size_x;
  d.north = 0.5 * world->size_z;
  d.south = -0.5 * world->size_z;
  d.gw = (int64_t) ceil (world->size_x / d.g);
  d.gh = (int64_t) ceil (world->size_z / d.g);
  if ((double) (d.gw + 1) * (double) (d.gh + 1) > (double) MAX_GRID_CELLS)
    return tg_eval_fail (c, TG_ERANGE,
                         "params.min_spacing_m: %g m over a %g x %g m world means about %.3g "
                         "points; raise the spacing (the limit is about %.3g points)",
                         p->min_spacing_m, world->size_x, world->size_z,
                         world->size_x * world->size_z / (p->min_spacing_m * p->min_spacing_m),
                         (double) MAX_GRID_CELLS / 2.0);

  pts = tg_points_new ();
  if (!pts || tg_points_add_proto (pts, p->prototype) < 0)
    {
      tg_points_free (pts);
      return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
    }
  for (int j = 0; j < mask->region.height; j++)
    {
      const float *row = tg_value_row (mask, j);
      for (int i = 0; i < mask->region.width; i++)
        mask_max = row[i] > mask_max ? row[i] : mask_max;
    }
  tg__scatter_filter_init (&filter, height, world->height_m, p->snap, p->min_height_m,
                           p->max_height_m, p->max_slope_deg);

  /* Bands of whole rows: each band's instances follow the last band's in
   * the instance order, and a band needs only the darts near it.  An
   * empty mask keeps nothing anywhere, so it skips them all. */
  per_row = world->size_x * full.cell * p->attempts / (d.g * d.g);
  band_rows = (int) fmin ((double) region->height,
                          fmax (2.0 * ring / full.cell, BAND_DARTS / per_row));
  if (band_rows < 1)
    band_rows = 1;
  for (int r0 = 0; mask_max > 0.0 && p->base_chance > 0.0 && r0 < region->height;
       r0 += band_rows)
    {
      int rows = region->height - r0 < band_rows ? region->height - r0 : band_rows;
      TgRegion band = tg_region_window (&full, region->col0, region->row0 + r0, region->width,
                                        rows);
      int rc;
      if (tg_eval_cancelled (c))
        {
          tg_points_free (pts);
          return TG_ECANCELLED;
        }
      if ((rc = mask_window (c, &d, &full, &band, &density, &filter, pts)) < 0)
        {
          tg_points_free (pts);
          return rc;
        }
      tg_eval_progress (c, (double) (r0 + rows) / region->height);
    }
  out = tg_value_new_points (pts);
  if (!out)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  tg_eval_set_output (c, 0, out);
  return 0;
}

/* --- tiled builds ------------------------------------------------------------------ */

static int
mask_n_steps (const void *params, const TgRegion *full)
{
  (void) params;
  (void) full;
  return 1;
}

static int
mask_halo (const void *params, const TgRegion *full, int step)
{
  (void) step;
  return tg__scatter_halo (full, mask_ring_m (params));
}

static int
mask_tile_step (TgEvalCtx *c, int step)
{
  (void) step;
  return mask_eval (c);
}

static TgValue *
mask_join (const void *params, const TgRegion *full, const TgTiling *t, int output,
           TgValue *const *parts, TgError *err)
{
  (void) params;
  (void) output;
  return tg__scatter_join (full, t, parts, err);
}

/* The whole instance list the export job reads. */
static uint64_t
mask_work_bytes (const void *params, const TgRegion *full, const TgTiling *t, int step,
                 bool reduce)
{
  const MaskParams *p = params;

  (void) t;
  return step == -1 && !reduce ? tg__scatter_joined_bytes (full, 0.0, p->min_spacing_m) : 0;
}

static const TgTiledScheme mask_tiled = {
  .n_steps = mask_n_steps,
  .halo = mask_halo,
  .tile_step = mask_tile_step,
  .join = mask_join,
  .work_bytes = mask_work_bytes,
};

static const TgNodeDesc mask_desc = {
  .type = "scatter.mask",
  .category = TG_CATEGORY_SCATTER,
  .label = N_("Scatter by mask"),
  .help = N_("Places instances as Poisson-disk (blue noise) points with a minimum spacing, "
             "kept with a probability that follows a density mask, then filtered by "
             "terrain height and slope"),
  TG_INPUTS (mask_inputs),
  TG_OUTPUTS (mask_outputs),
  TG_PARAMS (MaskParams, mask_params),
  .locality = TG_LOCALITY_GLOBAL,
  .check = mask_check,
  .eval = mask_eval,
  .tiled = &mask_tiled,
  /* 2: world-anchored darts and block spacing instead of Bridson's growth,
   * instances by owning sample. */
  .version = 3,
};
TG_NODE_REGISTER (mask_desc);
