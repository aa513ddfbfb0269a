/* erosion.stream_power: rivers cut a drainage network into the terrain by
 * the stream power law, with hillslope diffusion, uplift and deposition
 * of the sediment they carry (the solver is erosion_stream_power_sim.c).
 *
 * Every parameter is physical (years, metres per year, m²/yr, the
 * erodibility K in m^(1 - 2m)/yr), and drainage area and slope are
 * measured in metres, so a 513 preview and a 2049 build of the same
 * world grow the same valleys: the resolution only sharpens them.
 *
 * It is a global node without a tiled scheme: a river's incision depends
 * on everything upstream of it, over every time step.  A tiled build
 * computes it in one whole-world job (exact, with memory of about 60
 * bytes a sample); at world scale it is meant to run at a coarse
 * resolution of its own, which detail nodes downstream refine.
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
  };
  return s;
}

static int
sp_check (const void *params, TgError *err)
{
  TgSpParams s = sp_solver_params (params);

  if (tg__sp_steps (&s) > 100000)
    return tg_error_set (err, TG_ERANGE, "params.dt_yr",
                         "expected at most 100000 steps (duration_yr / dt_yr), got %.6g",
                         s.duration_yr / s.dt_yr);
  return 0;
}

/* --- the node -------------------------------------------------------------- */

typedef struct
{
  const TgRegion *r;
  const double *z, *area, *ero, *dep;
  double hm, inv_full_m, ref_area, log_max;
  TgValue *height, *area_out, *erosion, *deposit;
} SpFinish;

static void
sp_finish_rows (void *user, int begin, int end)
{
  const SpFinish *job = user;
  size_t w = (size_t) job->r->width;

  for (int j = begin; j < end; j++)
    {
      size_t o = (size_t) j * w;
      float *ho = tg_value_row (job->height, j), *ao = tg_value_row (job->area_out, j);
      float *eo = tg_value_row (job->erosion, j), *dout = tg_value_row (job->deposit, j);
      for (size_t i = 0; i < w; i++)
        {
          ho[i] = (float) (job->z[o + i] / job->hm);
          ao[i] = tg__erosion_mask_linear (log1p (job->area[o + i] / job->ref_area), job->log_max);
          /* Net of the two: a hillslope that sheds most of what it
           * catches is eroding, a fan or a filled floor is building up. */
          double net = (job->dep[o + i] - job->ero[o + i]) * job->inv_full_m;
          eo[i] = tg__erosion_mask_linear (-net, 1.0);
          dout[i] = tg__erosion_mask_linear (net, 1.0);
        }
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
  TgSpOpts o = { ctx_parallel, c, ctx_cancelled };
  size_t n = (size_t) r->width * (size_t) r->height;
  double hm = world->height_m > 0.0 ? world->height_m : 1.0;
  double *z = NULL, *area = NULL, *ero = NULL, *dep = NULL;
  float *uplift = NULL;
  SpFinish fin;
  int rc;

  if ((rc = tg__erosion_check (c, sp_check)) < 0)
    return rc;
  if ((rc = tg__check_grid_input (c, in, "height", r)) < 0)
    return rc;
  if (um && (rc = tg__check_grid_input (c, um, "uplift", r)) < 0)
    return rc;
  if (n > (size_t) INT32_MAX)
    return tg_eval_fail (c, TG_ERANGE, "a %d x %d map is too large for stream power",
                         r->width, r->height);
  z = malloc (sizeof (double) * n);
  area = malloc (sizeof (double) * n);
  ero = malloc (sizeof (double) * n);
  dep = malloc (sizeof (double) * n);
  uplift = um ? malloc (sizeof (float) * n) : NULL;
  if (!z || !area || !ero || !dep || (um && !uplift))
    {
      rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d map", r->width, r->height);
      goto out;
    }
  for (int j = 0; j < r->height; j++)
    {
      const float *src = tg__grid_row (in, r, j);
      for (int i = 0; i < r->width; i++)
        z[(size_t) j * r->width + i] = (double) (isfinite (src[i]) ? src[i] : 0.0f) * hm;
      if (uplift)
        {
          const float *u = tg__grid_row (um, r, j);
          for (int i = 0; i < r->width; i++)
            uplift[(size_t) j * r->width + i] = isfinite (u[i]) ? u[i] : 0.0f;
        }
    }
  rc = tg__sp_run (&o, &sp, r->width, r->height, r->cell, z, uplift,
                   &(TgSpOut) { .area = area, .eroded = ero, .deposited = dep });
  if (rc == TG_ENOMEM)
    rc = tg_eval_fail (c, rc, "out of memory for a %d x %d map", r->width, r->height);
  if (rc < 0)
    goto out;

  memset (&fin, 0, sizeof fin);
  fin.r = r;
  fin.z = z;
  fin.area = area;
  fin.ero = ero;
  fin.dep = dep;
  fin.hm = hm;
  fin.inv_full_m = 1.0 / p->change_full_m;
  tg__erosion_area_scale (world, r, &fin.ref_area, &fin.log_max);
  fin.height = tg_eval_new_output (c, 0, 1);
  fin.area_out = tg_eval_new_output (c, 1, 1);
  fin.erosion = tg_eval_new_output (c, 2, 1);
  fin.deposit = tg_eval_new_output (c, 3, 1);
  if (!fin.height || !fin.area_out || !fin.erosion || !fin.deposit)
    rc = tg_eval_fail (c, TG_ENOMEM, "out of memory");
  else
    rc = tg_eval_parallel (c, r->height, tg__grain_rows (r->width), sp_finish_rows, &fin);
out:
  free (z);
  free (area);
  free (ero);
  free (dep);
  free (uplift);
  return rc;
}

/* The solver's arrays: heights twice, spill levels, area and sediment in
 * doubles, receivers, stack and queue in int32, the flood's heap, and the
 * node's heights, area, incised and deposited depths and uplift copy:
 * about 100 bytes a sample. */
static void
sp_memory (TgMemQuery *q)
{
  q->work += 100 * tg_region_samples (q->region);
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
  .version = 1,
};
TG_NODE_REGISTER (stream_power_desc);
