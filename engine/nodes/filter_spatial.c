/* Spatial filters: filter.blur (separable Gaussian) and filter.warp
 * (displacement by two maps).  Both are apron nodes: every output sample
 * reads a neighbourhood given in metres, so a 257-sample preview and a
 * 4097-sample build blur and warp the same terrain features.
 *
 * The blur is a direct convolution, not running sums or a box cascade:
 * each output sample adds the same inputs with the same weights in the
 * same order wherever its tile lies, so tiles and thread counts give
 * identical bytes.  select.curvature uses the same blur (tg__blur).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

#include "grid_util.h"
#include "spatial_util.h"

/* --- the shared Gaussian blur ----------------------------------------------- */

/* Support in cells, uncapped (so eval can tell when the cap would bite). */
static double
blur_support (double radius_m, double cell)
{
  if (!(radius_m > 0.0) || !(cell > 0.0))
    return 0.0;
  /* The tiny slack keeps radius = k * cell at k cells despite rounding. */
  return ceil (radius_m / cell - 1e-9);
}

int
tg__blur_cells (double radius_m, double cell)
{
  double r = blur_support (radius_m, cell);

  return r > TG__BLUR_MAX_CELLS ? TG__BLUR_MAX_CELLS : (int) r;
}

typedef struct
{
  const TgValue *in;
  const TgRegion *out;
  int r;            /* taps each side */
  const float *w;   /* 2r + 1 weights */
  float *tmp;       /* (out->height + 2r) rows of out->width */
  float *dst;
} BlurJob;

/* Horizontal pass over the rows of OUT grown by r vertically. */
static void
blur_h_rows (void *user, int begin, int end)
{
  const BlurJob *job = user;
  int w = job->out->width, taps = 2 * job->r + 1;

  for (int jj = begin; jj < end; jj++)
    {
      const float *src = tg__grid_row (job->in, job->out, jj - job->r) - job->r;
      float *acc = job->tmp + (size_t) jj * (size_t) w;
      for (int i = 0; i < w; i++)
        acc[i] = 0.0f;
      /* Tap-major loops: each is a contiguous multiply-add over the row. */
      for (int k = 0; k < taps; k++)
        {
          float wk = job->w[k];
          const float *s = src + k;
          for (int i = 0; i < w; i++)
            acc[i] += wk * s[i];
        }
    }
}

static void
blur_v_rows (void *user, int begin, int end)
{
  const BlurJob *job = user;
  int w = job->out->width, taps = 2 * job->r + 1;

  for (int j = begin; j < end; j++)
    {
      float *acc = job->dst + (size_t) j * (size_t) w;
      for (int i = 0; i < w; i++)
        acc[i] = 0.0f;
      for (int k = 0; k < taps; k++)
        {
          float wk = job->w[k];
          const float *s = job->tmp + (size_t) (j + k) * (size_t) w;
          for (int i = 0; i < w; i++)
            acc[i] += wk * s[i];
        }
    }
}

int
tg__blur (TgEvalCtx *c, const TgValue *in, const TgRegion *out, double radius_m,
          const char *param, float *dst)
{
  double support = blur_support (radius_m, out->cell);
  BlurJob job = { 0 };
  float *w;
  double sigma, sum = 0.0;
  int rc, grain;

  if (support > TG__BLUR_MAX_CELLS)
    return tg_eval_fail (c, TG_ERANGE,
                         "params.%s: %g m is %.0f samples at %g m per sample; at most %d",
                         param, radius_m, support, out->cell, TG__BLUR_MAX_CELLS);
  job.r = (int) support;
  job.in = in;
  job.out = out;
  job.dst = dst;
  if (job.r == 0)
    {
      for (int j = 0; j < out->height; j++)
        memcpy (dst + (size_t) j * (size_t) out->width, tg__grid_row (in, out, j),
                sizeof (float) * (size_t) out->width);
      return 0;
    }

  w = malloc (sizeof (float) * (size_t) (2 * job.r + 1));
  job.tmp = malloc (sizeof (float) * (size_t) (out->height + 2 * job.r) * (size_t) out->width);
  if (!w || !job.tmp)
    {
      free (w);
      free (job.tmp);
      return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
    }
  /* Sigma is a third of the radius: the kernel ends where the Gaussian
   * has fallen to 1% of its peak. */
  sigma = radius_m / 3.0;
  {
    double wd[2 * TG__BLUR_MAX_CELLS + 1];
    for (int k = -job.r; k <= job.r; k++)
      {
        double d = (double) k * out->cell / sigma;
        wd[k + job.r] = exp (-0.5 * d * d);
        sum += wd[k + job.r];
      }
    for (int k = 0; k <= 2 * job.r; k++)
      w[k] = (float) (wd[k] / sum);
  }
  job.w = w;
  /* A sample costs 2r + 1 taps: a wide blur takes few rows a chunk. */
  grain = tg__grain_rows_cost (out->width, 2 * job.r + 1);

  rc = tg_eval_parallel (c, out->height + 2 * job.r, grain, blur_h_rows, &job);
  if (rc == 0)
    rc = tg_eval_parallel (c, out->height, grain, blur_v_rows, &job);
  free (w);
  free (job.tmp);
  return rc;
}

/* --- filter.blur --------------------------------------------------------------- */

typedef struct
{
  double radius_m;
} BlurParams;

static const TgParamDesc blur_params[] = {
  TG_PARAM_FLOAT (BlurParams, radius_m, .label = N_("Radius"), .def = 50.0, .min = 0.0, .max = 1e5,
                  .soft_min = 0.0, .soft_max = 1000.0, .unit = "m",
                  .help = N_("Reach of the Gaussian (three standard deviations); features smaller "
                             "than this are smoothed away")),
};

static const TgPortDesc height_in[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Height to filter") },
};

static const TgPortDesc height_out[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Filtered height") },
};

static int
blur_apron (const void *params, double cell_m)
{
  const BlurParams *p = params;

  return tg__blur_cells (p->radius_m, cell_m);
}

static int
blur_eval (TgEvalCtx *c)
{
  const BlurParams *p = tg_eval_params (c);
  const TgRegion *region = tg_eval_region (c);
  const TgValue *in = tg_eval_input (c, 0);
  TgValue *out;
  int rc;

  if ((rc = tg__check_grid_input (c, in, "height", region)) < 0)
    return rc;
  out = tg_eval_new_output (c, 0, 1);
  if (!out)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  return tg__blur (c, in, region, p->radius_m, "radius_m", out->data);
}

static int
blur_warn (const void *params, double cell_m, TgError *warn)
{
  const BlurParams *p = params;

  /* Radius 0 turns the blur off; one below a cell barely smooths. */
  return p->radius_m > 0.0
         && tg_warn_below_cells (warn, "radius_m", "Radius", p->radius_m, cell_m, 1);
}

static const TgNodeDesc blur_desc = {
  .type = "filter.blur",
  .category = TG_CATEGORY_FILTERS,
  .label = N_("Blur"),
  .help = N_("Smooths the height with a Gaussian of a radius in metres"),
  TG_INPUTS (height_in),
  TG_OUTPUTS (height_out),
  TG_PARAMS (BlurParams, blur_params),
  .locality = TG_LOCALITY_APRON,
  .apron = blur_apron,
  .eval = blur_eval,
  .warn = blur_warn,
  .version = 1,
};
TG_NODE_REGISTER (blur_desc);

/* --- filter.warp ---------------------------------------------------------------- */

/* out(x, z) = height(x + ox, z + oz), bilinear, with
 *   ox = (dx - 0.5) * 2 * amount_m   (east),
 *   oz = (dy - 0.5) * 2 * amount_m   (north),
 * dx and dy clamped to 0..1 (NaN = 0.5, no displacement).  So a mask of
 * 0.5 leaves the height in place and 0 / 1 read from amount_m away. */

typedef struct
{
  double amount_m;
} WarpParams;

static const TgParamDesc warp_params[] = {
  TG_PARAM_FLOAT (WarpParams, amount_m, .label = N_("Amount"), .def = 100.0, .min = 0.0, .max = 1e5,
                  .soft_min = 0.0, .soft_max = 1000.0, .unit = "m",
                  .help = N_("Largest displacement: a displacement map of 0 "
                             "or 1 reads the height from this far west/east "
                             "(dx) or south/north (dy); 0.5 stays in place")),
};

static const TgPortDesc warp_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Height to displace") },
  { .name = "dx", .type = TG_TYPE_MASK, .label = N_("Displace X"),
    .help = N_("East-west displacement, 0..1 centred at 0.5 (above 0.5 reads from the east)") },
  { .name = "dy", .type = TG_TYPE_MASK, .label = N_("Displace Y"),
    .help = N_("North-south displacement, 0..1 centred at 0.5 (above 0.5 reads from the "
               "north)") },
};

static double
warp_support (const WarpParams *p, double cell)
{
  if (!(p->amount_m > 0.0) || !(cell > 0.0))
    return 0.0;
  /* One more sample for the bilinear neighbour. */
  return ceil (p->amount_m / cell - 1e-9) + 1.0;
}

static int
warp_apron (const void *params, double cell_m)
{
  double r = warp_support (params, cell_m);

  return r > TG__BLUR_MAX_CELLS ? TG__BLUR_MAX_CELLS : (int) r;
}

typedef struct
{
  const TgValue *h, *dx, *dy;
  TgValue *out;
  double scale_cells; /* 2 * amount_m / cell */
} WarpJob;

static inline double
warp_offset (float m)
{
  double v = isnan (m) ? 0.5 : tg__clamp01 (m);
  return v - 0.5;
}

static void
warp_rows (void *user, int begin, int end)
{
  const WarpJob *job = user;
  const TgRegion *r = &job->out->region, *hr = &job->h->region;
  int last_c = hr->width - 2, last_r = hr->height - 2;

  for (int j = begin; j < end; j++)
    {
      const float *mx = tg__grid_row (job->dx, r, j);
      const float *my = tg__grid_row (job->dy, r, j);
      float *dst = tg_value_row (job->out, j);
      for (int i = 0; i < r->width; i++)
        {
          /* Positions in absolute lattice samples, so the same sample of
           * any tile rounds the same way.  Rows grow southwards. */
          double col = (double) (r->col0 + i) + warp_offset (mx[i]) * job->scale_cells;
          double row = (double) (r->row0 + j) - warp_offset (my[i]) * job->scale_cells;
          double c0 = floor (col), r0 = floor (row);
          double fx = col - c0, fy = row - r0;
          int ci = (int) c0 - hr->col0, ri = (int) r0 - hr->row0;
          const float *a, *b;
          double top, bot;

          /* The apron covers every reachable position; the clamp only
           * guards against rounding at its very edge. */
          if (ci < 0)
            ci = 0, fx = 0.0;
          else if (ci > last_c)
            ci = last_c, fx = 1.0;
          if (ri < 0)
            ri = 0, fy = 0.0;
          else if (ri > last_r)
            ri = last_r, fy = 1.0;
          a = tg_value_row (job->h, ri) + ci;
          b = a + hr->width;
          top = (double) a[0] + ((double) a[1] - (double) a[0]) * fx;
          bot = (double) b[0] + ((double) b[1] - (double) b[0]) * fx;
          dst[i] = (float) (top + (bot - top) * fy);
        }
    }
}

static int
warp_eval (TgEvalCtx *c)
{
  const WarpParams *p = tg_eval_params (c);
  const TgRegion *region = tg_eval_region (c);
  WarpJob job = { 0 };
  double support = warp_support (p, region->cell);
  int rc;

  if (support > TG__BLUR_MAX_CELLS)
    return tg_eval_fail (c, TG_ERANGE,
                         "params.amount_m: %g m is %.0f samples at %g m per sample; at most %d",
                         p->amount_m, support, region->cell, TG__BLUR_MAX_CELLS);
  job.h = tg_eval_input (c, 0);
  job.dx = tg_eval_input (c, 1);
  job.dy = tg_eval_input (c, 2);
  if ((rc = tg__check_grid_input (c, job.h, "height", region)) < 0
      || (rc = tg__check_grid_input (c, job.dx, "dx", region)) < 0
      || (rc = tg__check_grid_input (c, job.dy, "dy", region)) < 0)
    return rc;
  if (job.h->region.width < 2 || job.h->region.height < 2)
    return tg_eval_fail (c, TG_EINVAL, "input 'height' needs at least 2 x 2 samples");
  job.out = tg_eval_new_output (c, 0, 1);
  if (!job.out)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  job.scale_cells = 2.0 * p->amount_m / region->cell;
  return tg_eval_parallel (c, region->height, tg__grain_rows (region->width), warp_rows, &job);
}

static const TgNodeDesc warp_desc = {
  .type = "filter.warp",
  .category = TG_CATEGORY_FILTERS,
  .label = N_("Warp"),
  .help = N_("Displaces the height by two maps (east-west and north-south), up to a "
             "distance in metres"),
  TG_INPUTS (warp_inputs),
  TG_OUTPUTS (height_out),
  TG_PARAMS (WarpParams, warp_params),
  .locality = TG_LOCALITY_APRON,
  .apron = warp_apron,
  .eval = warp_eval,
  .version = 1,
};
TG_NODE_REGISTER (warp_desc);
