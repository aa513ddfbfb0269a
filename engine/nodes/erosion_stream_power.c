/* erosion.stream_power: rivers cut a drainage network into the terrain by
 * the stream power law, with hillslope diffusion, uplift and deposition
 * of the sediment they carry (the solver is erosion_stream_power_sim.c).
 *
 * Every parameter is physical (years, metres per year, m²/yr, the
 * erodibility K in m^(1 - 2m)/yr), and drainage area and slope are
 * measured in metres, so a 513 preview and a 2049 build of the same
 * world grow the same valleys: the resolution only sharpens them.
 *
 * The solver runs on a lattice of its own, `cell_m` apart over the
 * world's box, whatever the map's resolution: the map is averaged onto
 * it, and the change it computes is laid back over the map's samples
 * with the uniform cubic B-spline and added to them.  Bilinear showed
 * the solver's rows and columns as creases in a hillshade (its slope
 * jumps on every lattice line: alpine's `drainage` at 2049 was
 * cross-hatched every 4 samples); the B-spline is smooth in slope and
 * curvature and its weights sum to 1, so the change keeps its volume.  A river is one solver cell wide, so
 * the volume it cuts scales with the cell; a fixed solver cell makes a
 * 513 preview and a 4097 build the same landscape, and bounds the time.
 *
 * It is a global node without a tiled scheme: a river's incision depends
 * on everything upstream of it, over every time step.  A tiled build
 * computes it in one whole-world job (exact; its memory follows the
 * solver's grid, about 155 bytes a solver sample).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

#include "erosion_stream_power.h"
#include "erosion_util.h"
#include "grid_util.h"

typedef struct
{
  double duration_yr;
  double dt_yr;
  double uplift_m_per_yr;
  double erodibility;
  double m;
  double n;
  double diffusivity_m2_per_yr;
  double deposition;
  double min_channel_area_m2;
  double cell_m;
  double change_full_m;
} StreamPowerParams;

static const TgParamDesc sp_params[] = {
  TG_PARAM_FLOAT (StreamPowerParams, duration_yr, .label = N_("Duration"), .def = 200000.0,
                  .min = 0.0, .max = 1e9, .soft_min = 0.0, .soft_max = 2e6, .unit = "yr",
                  .help = N_("Geological time the landscape evolves for")),
  TG_PARAM_FLOAT (StreamPowerParams, dt_yr, .label = N_("Time step"), .def = 10000.0, .min = 1.0,
                  .max = 1e8, .soft_min = 100.0, .soft_max = 100000.0, .unit = "yr",
                  .help = N_("Length of one step; the solver is stable for any step, shorter "
                             "steps follow the rivers' history more closely")),
  TG_PARAM_FLOAT (StreamPowerParams, uplift_m_per_yr, .label = N_("Uplift"), .def = 0.0005,
                  .min = 0.0, .max = 1.0, .soft_min = 0.0, .soft_max = 0.01, .unit = "m/yr",
                  .help = N_("Rock uplift rate, times the uplift mask when one is linked; the "
                             "world's edge stays at base level")),
  TG_PARAM_FLOAT (StreamPowerParams, erodibility, .label = N_("Erodibility"), .def = 2e-5,
                  .min = 0.0, .max = 1.0, .soft_min = 0.0, .soft_max = 1e-3,
                  .help = N_("K of the stream power law E = K A^m S^n, in m^(1-2m)/yr: how fast "
                             "rivers cut")),
  TG_PARAM_FLOAT (StreamPowerParams, m, .label = N_("Area exponent"), .def = 0.45, .min = 0.0,
                  .max = 2.0,
                  .help = N_("m of the stream power law; m/n near 0.45 gives natural river "
                             "profiles")),
  TG_PARAM_FLOAT (StreamPowerParams, n, .label = N_("Slope exponent"), .def = 1.0, .min = 0.25,
                  .max = 4.0, .help = N_("n of the stream power law")),
  TG_PARAM_FLOAT (StreamPowerParams, diffusivity_m2_per_yr, .label = N_("Hillslope diffusivity"),
                  .def = 0.01, .min = 0.0, .max = 100.0, .soft_min = 0.0, .soft_max = 1.0,
                  .unit = "m²/yr",
                  .help = N_("How fast soil creep rounds ridges and hillslopes")),
  TG_PARAM_FLOAT (StreamPowerParams, deposition, .label = N_("Deposition"), .def = 1.0,
                  .min = 0.0, .max = 100.0, .soft_min = 0.0, .soft_max = 5.0,
                  .help = N_("G of the xi-q law: how readily the sediment settles where the "
                             "flow spreads (fans, filled valley floors); 0 carries it all away")),
  TG_PARAM_FLOAT (StreamPowerParams, min_channel_area_m2, .label = N_("Channel head area"),
                  .def = 10000.0, .min = 0.0, .max = 1e9, .soft_min = 0.0, .soft_max = 1e6,
                  .unit = "m²",
                  .help = N_("Drainage area where rivers begin: smaller catchments are hillslopes "
                             "that only creep, at any resolution")),
  TG_PARAM_FLOAT (StreamPowerParams, cell_m, .label = N_("Solver cell"), .def = 8.0, .min = 0.0,
                  .max = 10000.0, .soft_min = 0.0, .soft_max = 64.0, .unit = "m",
                  .help = N_("Cell size the rivers are solved at, the same for a preview and a "
                             "build, then laid over the map's own detail; 0 solves on the map's "
                             "own samples")),
  TG_PARAM_FLOAT (StreamPowerParams, change_full_m, .label = N_("Full change"), .def = 20.0,
                  .min = 0.001, .max = 1e5, .soft_min = 1.0, .soft_max = 200.0, .unit = "m",
                  .help = N_("Depth cut or laid down that reads as 1 in the erosion and deposit "
                             "masks")),
};

static const TgPortDesc sp_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Terrain to erode") },
  { .name = "uplift", .type = TG_TYPE_MASK, .label = N_("Uplift"), .optional = true,
    .help = N_("Where the rock rises: scales the uplift rate (1 everywhere when unlinked)") },
};

static const TgPortDesc sp_outputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Eroded terrain") },
  { .name = "area", .type = TG_TYPE_MASK, .label = N_("Drainage area"),
    .help = N_("Area draining through each sample, on a log scale of the world's area") },
  { .name = "erosion", .type = TG_TYPE_MASK, .label = N_("Erosion"),
    .help = N_("Where the rivers cut more than they laid down over the run: the depth over "
               "the full change") },
  { .name = "deposit", .type = TG_TYPE_MASK, .label = N_("Deposit"),
    .help = N_("Where sediment built the ground up over the run (fans, valley floors, lakes): "
               "the depth over the full change") },
};

static TgSpParams
sp_solver_params (const StreamPowerParams *p)
{
  TgSpParams s = {
    .duration_yr = p->duration_yr,
    .dt_yr = p->dt_yr,
    .uplift_m_per_yr = p->uplift_m_per_yr,
    .erodibility = p->erodibility,
    .m = p->m,
    .n = p->n,
    .diffusivity = p->diffusivity_m2_per_yr,
    .deposition = p->deposition,
    .channel_area = p->min_channel_area_m2,
  };
  return s;
}

static int
sp_check (const void *params, TgError *err)
{
  TgSpParams s = sp_solver_params (params);

  if (tg__sp_steps (&s) > 100000)
    return tg_error_set (err, TG_ERANGE, "params.dt_yr", TG_MSG_STEPS_TOO_MANY,
                         s.duration_yr / s.dt_yr);
  return 0;
}

/* --- the solver's grid ----------------------------------------------------- */

/* The solver's lattice: SW x SH samples over the world's box, the same
 * for any map resolution when cell_m is set (the map's own otherwise). */
typedef struct
{
  int sw, sh;
  double cell; /* solver cell (m) */
  bool direct; /* the map's own lattice: no resampling */
} SpGrid;

#define SP_GRID_MAX 16385

static SpGrid
sp_grid (const StreamPowerParams *p, const TgRegion *r)
{
  SpGrid g = { r->full_w, r->full_h, r->cell, true };
  double sx = r->cell * (r->full_w - 1), sz = r->cell * (r->full_h - 1);

  if (p->cell_m > 0.0)
    {
      double w = floor (sx / p->cell_m + 0.5) + 1.0, h = floor (sz / p->cell_m + 0.5) + 1.0;
      g.sw = w < 3.0 ? 3 : w > SP_GRID_MAX + 1.0 ? SP_GRID_MAX + 1 : (int) w;
      g.sh = h < 3.0 ? 3 : h > SP_GRID_MAX + 1.0 ? SP_GRID_MAX + 1 : (int) h;
      g.cell = sx / (g.sw - 1);
      g.direct = g.sw == r->full_w && g.sh == r->full_h;
    }
  return g;
}

/* Cubic B-spline samples of the solver's grids: along an axis of N
 * samples, the 4 lattice samples around U (lattice units, clamped at the
 * edge) and their weights.  The weights sum to 1 at every U. */
typedef struct
{
  int at[4];
  double w[4];
} SpTaps;

static void
bspline_taps (double u, int n, SpTaps *t)
{
  int i = (int) floor (u);
  double f;

  i = i < 0 ? 0 : i > n - 1 ? n - 1 : i;
  f = u - i;
  tg__bspline_weights (f < 0.0 ? 0.0 : f > 1.0 ? 1.0 : f, t->w);
  for (int k = 0; k < 4; k++)
    {
      int a = i - 1 + k;
      t->at[k] = a < 0 ? 0 : a > n - 1 ? n - 1 : a;
    }
}

/* The solver's columns a map row segment blends at a time (on the
 * stack, 3 grids). */
#define SP_SPAN 256

/* Solver columns LO..HI of the blend of the grid's rows (W samples each)
 * by TY into OUT[0..HI - LO]: a map row's samples are then 4 taps of OUT
 * apart. */
static void
bspline_rows (const double *grid, int w, const SpTaps *ty, int lo, int hi, double *out)
{
  const double *r0 = grid + (size_t) ty->at[0] * w, *r1 = grid + (size_t) ty->at[1] * w;
  const double *r2 = grid + (size_t) ty->at[2] * w, *r3 = grid + (size_t) ty->at[3] * w;

  for (int I = lo; I <= hi; I++)
    out[I - lo] = ty->w[0] * r0[I] + ty->w[1] * r1[I] + ty->w[2] * r2[I] + ty->w[3] * r3[I];
}

static inline double
bspline_at (const double *row, int lo, const SpTaps *tx)
{
  return tx->w[0] * row[tx->at[0] - lo] + tx->w[1] * row[tx->at[1] - lo]
         + tx->w[2] * row[tx->at[2] - lo] + tx->w[3] * row[tx->at[3] - lo];
}

/* A map grid onto the solver's: the mean of the map's samples within half
 * a solver cell (or a bilinear sample when the map is the coarser). */
typedef struct
{
  const TgValue *in;
  const TgRegion *r;
  const SpGrid *g;
  double scale;
  double *out;
} SpDown;

static void
sp_down_rows (void *user, int begin, int end)
{
  const SpDown *job = user;
  const TgRegion *r = job->r;
  int w = r->full_w, h = r->full_h;
  double qx = (double) (w - 1) / (job->g->sw - 1), qy = (double) (h - 1) / (job->g->sh - 1);

  for (int J = begin; J < end; J++)
    for (int I = 0; I < job->g->sw; I++)
      {
        double u = I * qx, v = J * qy, sum = 0.0;
        int i0, i1, j0, j1, n = 0;
        if (qx <= 1.0 || qy <= 1.0)
          {
            int i = (int) floor (u), j = (int) floor (v);
            double fu, fv, a, b, c2, d;
            i = i > w - 2 ? w - 2 : i;
            j = j > h - 2 ? h - 2 : j;
            fu = u - i, fv = v - j;
            a = tg__grid_row (job->in, r, j)[i];
            b = tg__grid_row (job->in, r, j)[i + 1];
            c2 = tg__grid_row (job->in, r, j + 1)[i];
            d = tg__grid_row (job->in, r, j + 1)[i + 1];
            sum = (a * (1.0 - fu) + b * fu) * (1.0 - fv) + (c2 * (1.0 - fu) + d * fu) * fv;
            job->out[(size_t) J * job->g->sw + I] = (isfinite (sum) ? sum : 0.0) * job->scale;
            continue;
          }
        i0 = (int) ceil (u - 0.5 * qx), i1 = (int) floor (u + 0.5 * qx);
        j0 = (int) ceil (v - 0.5 * qy), j1 = (int) floor (v + 0.5 * qy);
        i0 = i0 < 0 ? 0 : i0, j0 = j0 < 0 ? 0 : j0;
        i1 = i1 > w - 1 ? w - 1 : i1, j1 = j1 > h - 1 ? h - 1 : j1;
        for (int j = j0; j <= j1; j++)
          {
            const float *row = tg__grid_row (job->in, r, j);
            for (int i = i0; i <= i1; i++)
              if (isfinite (row[i]))
                sum += row[i], n++;
          }
        job->out[(size_t) J * job->g->sw + I] = n ? sum / n * job->scale : 0.0;
      }
}

/* --- the node -------------------------------------------------------------- */

typedef struct
{
  const TgRegion *r;
  const TgValue *in;
  const SpGrid *g;
  const double *z, *dz, *area, *net; /* over the solver's grid; DZ = z - z0 */
  double hm, inv_full_m, ref_area, log_max;
  TgValue *height, *area_out, *erosion, *deposit;
  /* Resampled (not direct): per map column, its B-spline taps on the
   * solver's columns, the same for every row. */
  const SpTaps *col;
} SpFinish;

/* One map row's height and masks, straight from the solver's samples. */
static void
finish_direct (const SpFinish *job, int j, float *ho, float *ao, float *eo, float *dout)
{
  int w = job->r->width;

  for (int i = 0; i < w; i++)
    {
      size_t o = (size_t) j * w + (size_t) i;
      ho[i] = (float) (job->z[o] / job->hm);
      ao[i] = tg__erosion_mask_linear (log1p (job->area[o] / job->ref_area), job->log_max);
      /* Net of the two: a hillslope that sheds most of what it catches
       * is eroding, a fan or a filled floor is building up. */
      eo[i] = tg__erosion_mask_linear (-job->net[o] * job->inv_full_m, 1.0);
      dout[i] = tg__erosion_mask_linear (job->net[o] * job->inv_full_m, 1.0);
    }
}

/* The same resampled: the map's own detail plus the solver's change, in
 * segments of map columns whose taps span at most SP_SPAN solver
 * columns (the taps only move right along a row). */
static void
finish_resampled (const SpFinish *job, int j, const float *src, float *ho, float *ao, float *eo,
                  float *dout)
{
  const SpGrid *g = job->g;
  const SpTaps *col = job->col;
  int w = job->r->width;
  double qy = (double) (g->sh - 1) / (job->r->full_h - 1);
  double dz_row[SP_SPAN], area_row[SP_SPAN], net_row[SP_SPAN];
  SpTaps ty;

  bspline_taps (j * qy, g->sh, &ty);
  for (int i0 = 0, i1; i0 < w; i0 = i1)
    {
      int lo = col[i0].at[0], hi;
      for (i1 = i0 + 1; i1 < w && col[i1].at[3] - lo < SP_SPAN; i1++)
        ;
      hi = col[i1 - 1].at[3];
      bspline_rows (job->dz, g->sw, &ty, lo, hi, dz_row);
      bspline_rows (job->area, g->sw, &ty, lo, hi, area_row);
      bspline_rows (job->net, g->sw, &ty, lo, hi, net_row);
      for (int i = i0; i < i1; i++)
        {
          double dz = bspline_at (dz_row, lo, &col[i]);
          double area = bspline_at (area_row, lo, &col[i]);
          double net = bspline_at (net_row, lo, &col[i]);
          ho[i] = (float) ((double) (isfinite (src[i]) ? src[i] : 0.0f) + dz / job->hm);
          ao[i] = tg__erosion_mask_linear (log1p (area / job->ref_area), job->log_max);
          eo[i] = tg__erosion_mask_linear (-net * job->inv_full_m, 1.0);
          dout[i] = tg__erosion_mask_linear (net * job->inv_full_m, 1.0);
        }
    }
}

static void
sp_finish_rows (void *user, int begin, int end)
{
  const SpFinish *job = user;

  for (int j = begin; j < end; j++)
    {
      float *ho = tg_value_row (job->height, j), *ao = tg_value_row (job->area_out, j);
      float *eo = tg_value_row (job->erosion, j), *dout = tg_value_row (job->deposit, j);
      if (job->g->direct)
        finish_direct (job, j, ho, ao, eo, dout);
      else
        finish_resampled (job, j, tg__grid_row (job->in, job->r, j), ho, ao, eo, dout);
    }
}

static int
ctx_parallel (void *ctx, int n, int grain, void (*fn) (void *, int, int), void *user)
{
  return tg_eval_parallel (ctx, n, grain, fn, user);
}

static bool
ctx_cancelled (void *ctx)
{
  return tg_eval_cancelled (ctx);
}

static int
sp_eval (TgEvalCtx *c)
{
  const StreamPowerParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  const TgWorld *world = tg_eval_world (c);
  const TgValue *in = tg_eval_input (c, 0), *um = tg_eval_input (c, 1);
  TgSpParams sp = sp_solver_params (p);
  TgSpOpts o = { ctx_parallel, c, ctx_cancelled, NULL };
  SpGrid g = sp_grid (p, r);
  size_t n = (size_t) g.sw * (size_t) g.sh;
  double hm = world->height_m > 0.0 ? world->height_m : 1.0;
  double *z0 = NULL, *z = NULL, *area = NULL, *ero = NULL, *dep = NULL, *up = NULL;
  float *uplift = NULL;
  SpTaps *col = NULL;
  SpFinish fin;
  SpDown down;
  int rc;

  if ((rc = tg__erosion_check (c, sp_check)) < 0)
    return rc;
  if ((rc = tg__check_grid_input (c, in, "height", r)) < 0)
    return rc;
  if (um && (rc = tg__check_grid_input (c, um, "uplift", r)) < 0)
    return rc;
  if (g.sw > SP_GRID_MAX || g.sh > SP_GRID_MAX)
    return tg_eval_fail (c, TG_ERANGE,
                         "params.cell_m: %g m cells make a solver grid over %d samples a side",
                         p->cell_m, SP_GRID_MAX);
  z0 = malloc (sizeof (double) * n);
  z = malloc (sizeof (double) * n);
  area = malloc (sizeof (double) * n);
  ero = malloc (sizeof (double) * n);
  dep = malloc (sizeof (double) * n);
  up = um ? malloc (sizeof (double) * n) : NULL;
  uplift = um ? malloc (sizeof (float) * n) : NULL;
  if (!z0 || !z || !area || !ero || !dep || (um && (!uplift || !up)))
    {
      rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d solver grid", g.sw, g.sh);
      goto out;
    }
  down = (SpDown) { in, r, &g, hm, z0 };
  if ((rc = tg_eval_parallel (c, g.sh, tg__grain_rows (g.sw), sp_down_rows, &down)) < 0)
    goto out;
  if (um)
    {
      down = (SpDown) { um, r, &g, 1.0, up };
      if ((rc = tg_eval_parallel (c, g.sh, tg__grain_rows (g.sw), sp_down_rows, &down)) < 0)
        goto out;
      for (size_t k = 0; k < n; k++)
        uplift[k] = (float) up[k];
    }
  memcpy (z, z0, sizeof (double) * n);
  rc = tg__sp_run (&o, &sp, g.sw, g.sh, g.cell, z, uplift,
                   &(TgSpOut) { .area = area, .eroded = ero, .deposited = dep });
  if (rc == TG_ENOMEM)
    rc = tg_eval_fail (c, rc, "out of memory for a %d x %d solver grid", g.sw, g.sh);
  if (rc < 0)
    goto out;
  for (size_t k = 0; k < n; k++)
    {
      dep[k] -= ero[k]; /* the net deposit */
      z0[k] = z[k] - z0[k]; /* the change */
    }

  memset (&fin, 0, sizeof fin);
  fin.r = r;
  fin.in = in;
  fin.g = &g;
  fin.z = z;
  fin.dz = z0;
  fin.area = area;
  fin.net = dep;
  fin.hm = hm;
  fin.inv_full_m = 1.0 / p->change_full_m;
  tg__erosion_area_scale (world, r, &fin.ref_area, &fin.log_max);
  fin.height = tg_eval_new_output (c, 0, 1);
  fin.area_out = tg_eval_new_output (c, 1, 1);
  fin.erosion = tg_eval_new_output (c, 2, 1);
  fin.deposit = tg_eval_new_output (c, 3, 1);
  if (!g.direct)
    {
      double qx = (double) (g.sw - 1) / (r->full_w - 1);
      col = malloc (sizeof *col * (size_t) r->width);
      if (col)
        for (int i = 0; i < r->width; i++)
          bspline_taps (i * qx, g.sw, &col[i]);
      fin.col = col;
    }
  if (!fin.height || !fin.area_out || !fin.erosion || !fin.deposit || (!g.direct && !col))
    rc = tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  else
    rc = tg_eval_parallel (c, r->height, tg__grain_rows (r->width), sp_finish_rows, &fin);
out:
  free (col);
  free (z0);
  free (z);
  free (area);
  free (ero);
  free (dep);
  free (up);
  free (uplift);
  return rc;
}

/* The solver's arrays (heights three times, spill levels, area and
 * sediment in doubles; receivers twice, stack and its inverse, basins,
 * lakes twice and uplift in 32 bits; donor masks; 82 bytes) and the
 * node's (start and end heights, area, incised and deposited depths,
 * uplift; 52 bytes), with some room: about 155 bytes a solver sample. */
static void
sp_memory (TgMemQuery *q)
{
  SpGrid g = sp_grid (q->params, q->region);

  q->work += 155 * (uint64_t) g.sw * (uint64_t) g.sh;
}

static const TgNodeDesc stream_power_desc = {
  .type = "erosion.stream_power",
  .category = TG_CATEGORY_EROSION,
  .label = N_("Stream power erosion"),
  .help = N_("Rivers carve a branching drainage network over geological time (the stream power "
             "law, solved as FastScape does), with uplift, hillslope creep and sediment that "
             "settles in fans and valley floors"),
  TG_INPUTS (sp_inputs),
  TG_OUTPUTS (sp_outputs),
  TG_PARAMS (StreamPowerParams, sp_params),
  .locality = TG_LOCALITY_GLOBAL,
  .check = sp_check,
  .eval = sp_eval,
  .memory = sp_memory,
  .version = 4,
};
TG_NODE_REGISTER (stream_power_desc);
