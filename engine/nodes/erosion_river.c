/* erosion.river: river channels carved from flow accumulation.
 *
 * Every sample whose drainage area A (decoded from erosion.flow's mask,
 * which is a log scale of the world's area with a fixed reference cell,
 * so A is in m² and the same at any resolution) reaches min_area_km2
 * starts a channel.  Its width and depth follow hydraulic geometry
 * (Leopold and Maddock 1953): w = width_m (A / 1 km²)^b and
 * d = depth_m (A / 1 km²)^f, widths capped at max_width_m.  Each channel
 * sample carves a round-bottomed trough around itself, full depth out to
 * half the half-width and rising to the ground over the rest of the
 * half-width plus bank_m (a smoothstep, so the banks blend into the
 * slopes); where troughs overlap the deepest wins.  The river mask is the
 * wetted width, anti-aliased over one cell: since widths are in metres,
 * the share of the map it covers does not depend on the resolution.  The
 * bank mask is 1 out to the water's edge and falls to 0 across the bank
 * (the same smoothstep, over bank_m), for the gravel, sand or wet ground
 * a splat lays between the water and the slopes; its share holds across
 * resolutions as the river's does.
 *
 * An apron node: a sample is carved only by channel samples within the
 * widest trough's reach, and the carve is a maximum (order-free), so a
 * window, a tile or any thread count gives the same bytes.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

#include "erosion_util.h"
#include "grid_util.h"

#define RIVER_REF_AREA_M2 1e6 /* the 1 km² width_m and depth_m are given at */

typedef struct
{
  double min_area_km2;
  double width_m;
  double depth_m;
  double width_exponent;
  double depth_exponent;
  double bank_m;
  double max_width_m;
} RiverParams;

static const TgParamDesc river_params[] = {
  TG_PARAM_FLOAT (RiverParams, min_area_km2, .label = N_("Source area"), .def = 0.1, .min = 1e-4,
                  .max = 1e6, .soft_min = 0.01, .soft_max = 50.0, .unit = "km²",
                  .help = N_("Drainage area where a channel starts, in square kilometres: "
                             "smaller gives more, shorter tributaries")),
  TG_PARAM_FLOAT (RiverParams, width_m, .label = N_("Width"), .def = 6.0, .min = 0.01, .max = 1e4,
                  .soft_min = 0.5, .soft_max = 100.0, .unit = "m",
                  .help = N_("Channel width where 1 km² drains through it, in metres")),
  TG_PARAM_FLOAT (RiverParams, depth_m, .label = N_("Depth"), .def = 1.5, .min = 0.0, .max = 1e3,
                  .soft_min = 0.0, .soft_max = 20.0, .unit = "m",
                  .help = N_("Channel depth where 1 km² drains through it, in metres")),
  TG_PARAM_FLOAT (RiverParams, width_exponent, .label = N_("Width exponent"), .def = 0.5,
                  .min = 0.0, .max = 1.0,
                  .help = N_("How width grows with drainage area (w ∝ A^b); about 0.5 in "
                             "natural rivers")),
  TG_PARAM_FLOAT (RiverParams, depth_exponent, .label = N_("Depth exponent"), .def = 0.4,
                  .min = 0.0, .max = 1.0,
                  .help = N_("How depth grows with drainage area (d ∝ A^f); about 0.4 in "
                             "natural rivers")),
  TG_PARAM_FLOAT (RiverParams, bank_m, .label = N_("Bank"), .def = 8.0, .min = 0.0, .max = 1e4,
                  .soft_min = 0.0, .soft_max = 100.0, .unit = "m",
                  .help = N_("Width of the banks that blend the channel into the slopes, in "
                             "metres")),
  TG_PARAM_FLOAT (RiverParams, max_width_m, .label = N_("Maximum width"), .def = 80.0,
                  .min = 0.01, .max = 1e4, .soft_min = 1.0, .soft_max = 500.0, .unit = "m",
                  .help = N_("The widest a channel gets, in metres; also how far the node "
                             "reads around each sample")),
};

static const TgPortDesc river_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Terrain to carve") },
  { .name = "flow", .type = TG_TYPE_MASK, .label = N_("Flow"),
    .help = N_("Flow from the Flow node run on this height: the drainage area") },
};

static const TgPortDesc river_outputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Terrain with the channels carved") },
  { .name = "river", .type = TG_TYPE_MASK, .label = N_("River"),
    .help = N_("Water: 1 across each channel's width") },
  { .name = "bank", .type = TG_TYPE_MASK, .label = N_("Banks"),
    .help = N_("1 out to the water's edge, falling to 0 across the bank: gravel and wet "
               "ground beside the water") },
};

static int
river_check (const void *params, TgError *err)
{
  const RiverParams *p = params;

  if (p->width_m > p->max_width_m)
    return tg_error_set (err, TG_ERANGE, "params.width_m", TG_MSG_WIDTH_OVER_MAX, p->width_m,
                         p->max_width_m);
  return 0;
}

/* Reach of the widest trough, in samples. */
static int
river_apron (const void *params, double cell_m)
{
  const RiverParams *p = params;
  double reach = 0.5 * p->max_width_m + p->bank_m;

  return cell_m > 0.0 ? (int) ceil (reach / cell_m) + 1 : 0;
}

/* A channel sample: its column in the input, half-width and depth. */
typedef struct
{
  int col;
  float half_w, depth;
} Channel;

typedef struct
{
  const TgValue *height;
  const TgRegion *out;
  TgValue *carved, *river, *shore;
  const Channel *ch;
  const size_t *row_start; /* channels of input row k: row_start[k] .. row_start[k + 1] */
  int in_row0, in_rows;
  double cell, bank, inv_height_m;
} RiverJob;

static void
river_rows (void *user, int begin, int end)
{
  const RiverJob *job = user;
  const TgRegion *o = job->out;
  int w = o->width;

  for (int j = begin; j < end; j++)
    {
      int gj = o->row0 + j;
      const float *h = tg__grid_row (job->height, o, j);
      /* The output rows gather the deepest carve and the wetness first. */
      float *carve = tg_value_row (job->carved, j), *wet = tg_value_row (job->river, j);
      float *shore = tg_value_row (job->shore, j);

      memset (carve, 0, sizeof (float) * (size_t) w);
      memset (wet, 0, sizeof (float) * (size_t) w);
      memset (shore, 0, sizeof (float) * (size_t) w);
      for (int k = 0; k < job->in_rows; k++)
        {
          double dz = (double) (job->in_row0 + k - gj) * job->cell;
          for (size_t c = job->row_start[k]; c < job->row_start[k + 1]; c++)
            {
              const Channel *ch = &job->ch[c];
              double hw = ch->half_w, reach = hw + job->bank, inner = 0.5 * hw;
              int lo, hi;

              if (fabs (dz) >= reach)
                continue;
              lo = (int) floor ((double) ch->col - reach / job->cell) - o->col0;
              hi = (int) ceil ((double) ch->col + reach / job->cell) - o->col0;
              lo = lo < 0 ? 0 : lo;
              hi = hi > w - 1 ? w - 1 : hi;
              for (int i = lo; i <= hi; i++)
                {
                  double dx = (double) (o->col0 + i - ch->col) * job->cell;
                  double d = sqrt (dx * dx + dz * dz), cv, wv, bv;
                  if (d >= reach)
                    continue;
                  cv = ch->depth * (1.0 - tg__smoothstep01 ((d - inner) / (reach - inner)));
                  wv = tg__clamp01 ((hw - d) / job->cell + 0.5);
                  bv = d <= hw              ? 1.0
                       : job->bank > 0.0 ? 1.0 - tg__smoothstep01 ((d - hw) / job->bank)
                                         : wv;
                  if ((float) cv > carve[i])
                    carve[i] = (float) cv;
                  if ((float) wv > wet[i])
                    wet[i] = (float) wv;
                  if ((float) bv > shore[i])
                    shore[i] = (float) bv;
                }
            }
        }
      for (int i = 0; i < w; i++)
        carve[i] = (float) ((double) h[i] - (double) carve[i] * job->inv_height_m);
    }
}

static int
river_eval (TgEvalCtx *c)
{
  const RiverParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  const TgWorld *world = tg_eval_world (c);
  const TgValue *height = tg_eval_input (c, 0), *flow = tg_eval_input (c, 1);
  double ref_area, log_max, m_min;
  double min_area = p->min_area_km2 * 1e6, cap = p->max_width_m / p->width_m;
  RiverJob job = { 0 };
  Channel *ch = NULL;
  size_t *row_start = NULL, n = 0, cap_n = 0;
  int rc;

  /* erosion.flow's scale, to read its mask back as m². */
  tg__erosion_area_scale (world, r, &ref_area, &log_max);
  if ((rc = tg__check_grid_input (c, height, "height", r)) < 0
      || (rc = tg__check_grid_input (c, flow, "flow", r)) < 0)
    return rc;
  if (flow->region.row0 != height->region.row0 || flow->region.col0 != height->region.col0
      || flow->region.width != height->region.width
      || flow->region.height != height->region.height)
    return tg_eval_fail (c, TG_EINVAL, TG_MSG_INPUTS_REGIONS_DIFFER, "height", "flow");

  /* The flow mask below which the area is surely under min_area (the
   * mask is log1p (area / ref_area) / log_max, increasing), 1e-9 under
   * the true bound, far beyond the rounding of log1p and expm1: most of
   * the map is skipped without an expm1, the rest decided as before. */
  m_min = log1p (min_area / ref_area) / log_max * (1.0 - 1e-9);
  /* The channel samples of the whole input (the output grown by the
   * apron), row by row. */
  job.in_row0 = flow->region.row0;
  job.in_rows = flow->region.height;
  row_start = malloc (sizeof (size_t) * ((size_t) job.in_rows + 1));
  if (!row_start)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  for (int k = 0; k < job.in_rows; k++)
    {
      const float *m = tg_value_row (flow, k);
      row_start[k] = n;
      for (int i = 0; i < flow->region.width; i++)
        {
          double area, ratio;
          if (!(m[i] > 0.0f) || (double) m[i] < m_min)
            continue;
          area = ref_area * expm1 ((double) m[i] * log_max);
          if (area < min_area)
            continue;
          if (n == cap_n)
            {
              size_t grow = cap_n ? 2 * cap_n : 1024;
              Channel *bigger = realloc (ch, sizeof (Channel) * grow);
              if (!bigger)
                {
                  free (ch);
                  free (row_start);
                  return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
                }
              ch = bigger;
              cap_n = grow;
            }
          ratio = pow (area / RIVER_REF_AREA_M2, p->width_exponent);
          ratio = ratio < cap ? ratio : cap;
          ch[n].col = flow->region.col0 + i;
          ch[n].half_w = (float) (0.5 * p->width_m * ratio);
          ch[n].depth = (float) (p->depth_m
                                 * (p->width_exponent > 0.0
                                      ? pow (ratio, p->depth_exponent / p->width_exponent)
                                      : pow (area / RIVER_REF_AREA_M2, p->depth_exponent)));
          n++;
        }
    }
  row_start[job.in_rows] = n;

  job.height = height;
  job.out = r;
  job.ch = ch;
  job.row_start = row_start;
  job.cell = r->cell;
  job.bank = p->bank_m;
  job.inv_height_m = 1.0 / world->height_m;
  job.carved = tg_eval_new_output (c, 0, 1);
  job.river = tg_eval_new_output (c, 1, 1);
  job.shore = tg_eval_new_output (c, 2, 1);
  if (!job.carved || !job.river || !job.shore)
    rc = tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  else
    rc = tg_eval_parallel (c, r->height, tg__grain_rows_cost (r->width, 8), river_rows, &job);
  free (ch);
  free (row_start);
  return rc;
}

static const TgNodeDesc river_desc = {
  .type = "erosion.river",
  .category = TG_CATEGORY_EROSION,
  .label = N_("River"),
  .help = N_("Carves river channels where enough area drains, metres wide and deep growing "
             "with the drainage area, with banks blended into the slopes; outputs the carved "
             "height, a river mask and a bank mask"),
  TG_INPUTS (river_inputs),
  TG_OUTPUTS (river_outputs),
  TG_PARAMS (RiverParams, river_params),
  .locality = TG_LOCALITY_APRON,
  .apron = river_apron,
  .check = river_check,
  .eval = river_eval,
  .version = 1,
};
TG_NODE_REGISTER (river_desc);
