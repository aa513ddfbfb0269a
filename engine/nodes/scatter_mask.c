/* scatter.mask: Poisson-disk instances whose density follows a mask.
 *
 * A blue-noise set with a minimum spacing covers the whole world
 * (Bridson's algorithm, with the candidates on the annulus' inner edge at
 * evenly stepped angles from a random start, as M. Roberts suggests: a
 * denser packing for fewer attempts), and each point is then kept with
 * probability chance x mask.  Thinning a fixed set rather than growing
 * one per mask means editing the mask never reshuffles the instances
 * elsewhere, and the expected density is exactly proportional to it.
 *
 * Determinism: the algorithm is sequential, and every choice (which active
 * point to grow, the start angle, the keep draw) is a hash of the seed
 * and a counter, so the output is the same on every run and machine.
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
  TG_PARAM_STRING (MaskParams, prototype, N_("Prototype"), "instance",
                   N_("Name of the object kind these instances place")),
  TG_PARAM_FLOAT_UI (MaskParams, min_spacing_m, N_("Minimum spacing"), 4.0, 0.01, 100000.0,
                     0.5, 100.0, "m", N_("No two instances closer than this")),
  TG_PARAM_FLOAT (MaskParams, base_chance, N_("Chance"), 1.0, 0.0, 1.0, NULL,
                  N_("Probability of keeping a point where the mask is 1; the mask scales it")),
  TG_PARAM_INT (MaskParams, attempts, N_("Attempts"), 12, 1, 64,
                N_("Candidates tried around each point before it stops growing; more packs "
                   "tighter and runs slower")),
  TG__SCATTER_XFORM_PARAMS (MaskParams),
  TG_PARAM_SEED (MaskParams, seed, N_("Seed"), N_("Seed of every random choice")),
};

static const TgPortDesc mask_inputs[] = {
  { .name = "mask", .type = TG_TYPE_MASK, .label = N_("Density"),
    .help = N_("Probability of an instance, 0..1, over the world") },
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"), .optional = true,
    .help = N_("Terrain to snap to and to filter by height and slope") },
};

static const TgPortDesc mask_outputs[] = {
  { .name = "points", .type = TG_TYPE_POINTS, .label = N_("Instances"),
    .help = N_("The placed instances, in the order the Poisson-disk set grew") },
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

/* Grid cells (r / sqrt 2 wide, at most one point each) one evaluation
 * may use: 8 bytes each. */
#define MAX_GRID_CELLS ((int64_t) 1 << 27)
/* An empty grid cell: far enough that no distance test passes. */
#define FAR 1e30f
/* Padding around the grid so the 5 x 5 neighbourhood needs no bounds checks. */
#define PAD 2

typedef struct
{
  float x, z;
} P2;

typedef struct
{
  P2 *pts;
  int64_t n, cap;
} P2Buf;

static int
p2_push (P2Buf *b, float x, float z)
{
  if (b->n == b->cap)
    {
      int64_t cap = b->cap ? b->cap * 2 : 4096;
      P2 *grown = realloc (b->pts, sizeof (P2) * (size_t) cap);
      if (!grown)
        return TG_ENOMEM;
      b->pts = grown;
      b->cap = cap;
    }
  b->pts[b->n].x = x;
  b->pts[b->n].z = z;
  b->n++;
  return 0;
}

/* The Poisson-disk set over [X0, X0 + SX] x [Z0, Z0 + SZ] with spacing R:
 * fills OUT, or returns TG_ENOMEM / TG_ECANCELLED. */
static int
poisson (TgEvalCtx *c, uint32_t seed, double x0, double z0, double sx, double sz, double r,
         int k, P2Buf *out)
{
  double g = r / M_SQRT2, r2 = r * r, rad = r * (1.0 + 1e-3);
  double step_c = cos (2.0 * M_PI / k), step_s = sin (2.0 * M_PI / k);
  int64_t gw = (int64_t) floor (sx / g) + 1, gh = (int64_t) floor (sz / g) + 1;
  int64_t stride = gw + 2 * PAD;
  int64_t ncell = stride * (gh + 2 * PAD);
  double expected = sx * sz / (r2 * 0.75);
  P2 *grid;
  int32_t *active;
  int64_t n_active = 0, cap_active = 4096;
  uint64_t step = 0;
  int rc = 0;

  grid = malloc (sizeof (P2) * (size_t) ncell);
  active = malloc (sizeof (int32_t) * (size_t) cap_active);
  if (!grid || !active)
    {
      free (grid);
      free (active);
      return TG_ENOMEM;
    }
  for (int64_t i = 0; i < ncell; i++)
    grid[i].x = grid[i].z = FAR;

#define CELL_OF(px, pz)                                                                       \
  ((((int64_t) (((double) (pz) - z0) / g) < gh ? (int64_t) (((double) (pz) - z0) / g) : gh - 1) \
    + PAD) * stride                                                                           \
   + ((int64_t) (((double) (px) - x0) / g) < gw ? (int64_t) (((double) (px) - x0) / g) : gw - 1) \
   + PAD)

  {
    float fx = (float) (x0 + sx * tg_hash_unit (tg_hash3 (seed, -1, -1, 0)));
    float fz = (float) (z0 + sz * tg_hash_unit (tg_hash3 (seed, -1, -1, 1)));
    if ((rc = p2_push (out, fx, fz)) < 0)
      goto done;
    grid[CELL_OF (fx, fz)] = out->pts[0];
    active[n_active++] = 0;
  }

  while (n_active > 0)
    {
      int32_t lo = (int32_t) (uint32_t) step, hi = (int32_t) (uint32_t) (step >> 32);
      uint32_t h = tg_hash3 (seed, lo, hi, 2);
      int64_t ai = (int64_t) (((uint64_t) h * (uint64_t) n_active) >> 32);
      P2 parent = out->pts[active[ai]];
      double theta = 2.0 * M_PI * tg_hash_unit (tg_hash3 (seed, lo, hi, 3));
      double dc = cos (theta), ds = sin (theta);
      bool grew = false;

      if ((step & 0xffff) == 0 && step)
        {
          if (tg_eval_cancelled (c))
            {
              rc = TG_ECANCELLED;
              goto done;
            }
          tg_eval_progress (c, fmin (0.95, (double) out->n / expected));
        }
      step++;
      for (int j = 0; j < k; j++)
        {
          double cx = (double) parent.x + rad * dc, cz = (double) parent.z + rad * ds;
          double t = dc * step_c - ds * step_s;
          ds = ds * step_c + dc * step_s;
          dc = t;
          if (cx >= x0 && cx <= x0 + sx && cz >= z0 && cz <= z0 + sz)
            {
              float fx = (float) cx, fz = (float) cz;
              int64_t cell = CELL_OF (fx, fz);
              bool ok = grid[cell].x == FAR;
              for (int dz = -2; dz <= 2 && ok; dz++)
                {
                  const P2 *row = grid + cell + dz * stride;
                  for (int dx = -2; dx <= 2; dx++)
                    {
                      double ex = (double) row[dx].x - (double) fx;
                      double ez = (double) row[dx].z - (double) fz;
                      /* Corners of the 5 x 5 block are always r or more away. */
                      ok &= (ex * ex + ez * ez >= r2) | ((dx == -2 || dx == 2)
                                                        & (dz == -2 || dz == 2));
                    }
                }
              if (!ok)
                continue;
              if (out->n >= INT32_MAX || (rc = p2_push (out, fx, fz)) < 0)
                {
                  rc = TG_ENOMEM;
                  goto done;
                }
              grid[cell] = out->pts[out->n - 1];
              if (n_active == cap_active)
                {
                  int32_t *grown = realloc (active, sizeof (int32_t) * (size_t) cap_active * 2);
                  if (!grown)
                    {
                      rc = TG_ENOMEM;
                      goto done;
                    }
                  active = grown;
                  cap_active *= 2;
                }
              active[n_active++] = (int32_t) (out->n - 1);
              grew = true;
              break;
            }
        }
      if (!grew)
        active[ai] = active[--n_active];
    }
#undef CELL_OF

done:
  free (grid);
  free (active);
  return rc;
}

static int
mask_eval (TgEvalCtx *c)
{
  const MaskParams *p = tg_eval_params (c);
  const TgWorld *world = tg_eval_world (c);
  const TgValue *mask = tg_eval_input (c, 0);
  const TgValue *height = tg_eval_input (c, 1);
  TgScatterFilter filter;
  TgTerrain density = { .height = mask, .height_m = 1.0 };
  TgScatterBuf kept = { 0 };
  P2Buf set = { 0 };
  TgPoints *pts;
  TgValue *out;
  double g = p->min_spacing_m / M_SQRT2, mask_max = 0.0;
  uint32_t seed = tg_eval_seed (c, p->seed);
  int rc;

  if (!mask || !mask->data || mask->channels != 1)
    return tg_eval_fail (c, TG_ETYPE, "input 'mask' must be a one-channel grid");
  if (height && (!height->data || height->channels != 1))
    return tg_eval_fail (c, TG_ETYPE, "input 'height' must be a one-channel grid");
  if (!(world->size_x > 0.0) || !(world->size_z > 0.0))
    return tg_eval_fail (c, TG_EINVAL, "the world has no extent");
  if ((floor (world->size_x / g) + 1 + 2 * PAD) * (floor (world->size_z / g) + 1 + 2 * PAD)
      > (double) MAX_GRID_CELLS)
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
      return tg_eval_fail (c, TG_ENOMEM, "out of memory");
    }
  for (int j = 0; j < mask->region.height; j++)
    {
      const float *row = tg_value_row (mask, j);
      for (int i = 0; i < mask->region.width; i++)
        mask_max = row[i] > mask_max ? row[i] : mask_max;
    }

  /* An empty mask places nothing: skip the whole set. */
  if (mask_max > 0.0 && p->base_chance > 0.0)
    {
      rc = poisson (c, seed, -0.5 * world->size_x, -0.5 * world->size_z, world->size_x,
                    world->size_z, p->min_spacing_m, p->attempts, &set);
      if (rc < 0)
        {
          free (set.pts);
          tg_points_free (pts);
          if (rc == TG_ECANCELLED)
            return rc;
          return tg_eval_fail (c, rc, "out of memory for the Poisson-disk set");
        }
    }

  tg__scatter_filter_init (&filter, height, world->height_m, p->snap, p->min_height_m,
                           p->max_height_m, p->max_slope_deg);
  for (int64_t i = 0; i < set.n; i++)
    {
      TgScatterCand cand = { .x = set.pts[i].x, .z = set.pts[i].z };
      double d, unused;
      int32_t lo = (int32_t) i;
      tg__terrain_sample (&density, cand.x, cand.z, &d, &unused);
      if (!(tg_hash_unit (tg_hash3 (seed, lo, 0, 4)) < p->base_chance * d))
        continue;
      cand.yaw = (float) tg__scatter_lerp_hash (p->min_yaw_deg * (M_PI / 180.0),
                                                p->max_yaw_deg * (M_PI / 180.0),
                                                tg_hash3 (seed, lo, 0, 5));
      cand.scale = (float) tg__scatter_lerp_hash (p->min_scale, p->max_scale,
                                                  tg_hash3 (seed, lo, 0, 6));
      cand.proto = 0;
      if (!tg__scatter_filter (&filter, &cand))
        continue;
      tg__scatter_buf_push (&kept, &cand);
    }
  free (set.pts);
  if (kept.oom || tg__scatter_emit (pts, kept.c, kept.n) < 0)
    {
      tg__scatter_buf_clear (&kept);
      tg_points_free (pts);
      return tg_eval_fail (c, TG_ENOMEM, "out of memory for the instances");
    }
  tg__scatter_buf_clear (&kept);
  out = tg_value_new_points (pts);
  if (!out)
    return tg_eval_fail (c, TG_ENOMEM, "out of memory");
  tg_eval_set_output (c, 0, out);
  return 0;
}

static const TgNodeDesc mask_desc = {
  .type = "scatter.mask",
  .category = "Scatter",
  .label = N_("Scatter by mask"),
  .help = N_("Places instances as Poisson-disk (blue noise) points with a minimum spacing, "
             "kept with a probability that follows a density mask, then filtered by "
             "terrain height and slope"),
  .inputs = mask_inputs,
  .n_inputs = TG_N_ELEMENTS (mask_inputs),
  .outputs = mask_outputs,
  .n_outputs = TG_N_ELEMENTS (mask_outputs),
  .params = mask_params,
  .n_params = TG_N_ELEMENTS (mask_params),
  .params_size = sizeof (MaskParams),
  .locality = TG_LOCALITY_GLOBAL,
  .check = mask_check,
  .eval = mask_eval,
  .version = 1,
};
TG_NODE_REGISTER (mask_desc);
