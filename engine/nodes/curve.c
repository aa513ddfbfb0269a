/* The height curve: remaps height through a user-edited curve (flat
 * plains, steep mid slopes, plateaus).
 *
 * The curve through the points is a monotone cubic Hermite spline with
 * Steffen's slopes (M. Steffen, "A simple method for monotonic
 * interpolation in one dimension", A&A 239, 1990): every segment is
 * monotone between its two points, so the curve never overshoots them, and
 * the slopes depend only on neighbouring points, so moving one point only
 * changes the curve nearby.  The spline is evaluated directly in double
 * precision per sample (no LUT), which keeps it exact at the points and
 * bit-identical however the map is tiled.  Outside the first and last
 * point the curve is flat, which also clamps inputs outside 0..1.
 */
#include <math.h>
#include <stdlib.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

#include "grid_util.h"

typedef struct
{
  TgCurve points;
} CurveParams;

static const double curve_identity[] = { 0.0, 0.0, 1.0, 1.0 };

static const TgParamDesc curve_params[] = {
  TG_PARAM_CURVE (CurveParams, points, curve_identity, .label = N_("Curve"),
                  .help = N_("Points [input, output]; the curve passes through them without "
                             "overshooting and stays flat beyond the first and last")),
};

static const TgPortDesc curve_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Height to remap") },
};

static const TgPortDesc curve_outputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Remapped height") },
};

/* Per segment i (from x[i] to x[i+1]):
 *   y(x) = y[i] + t * (m[i] + t * (c[i] + t * d[i])),  t = x - x[i]
 * clamped to the segment's y range (each Steffen segment is monotone, so
 * the clamp only removes rounding, never shape). */
typedef struct
{
  int n;
  double *x, *y, *m, *c, *d;
} Spline;

static double
sign_of (double v)
{
  return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0);
}

/* Steffen's end slope from the first two secants (or the last two). */
static double
end_slope (double s0, double s1, double h0, double h1)
{
  double p = s0 * (1.0 + h0 / (h0 + h1)) - s1 * h0 / (h0 + h1);

  if (p * s0 <= 0.0)
    return 0.0;
  if (fabs (p) > 2.0 * fabs (s0))
    return 2.0 * s0;
  return p;
}

static void
spline_clear (Spline *s)
{
  free (s->x);
  s->x = s->y = s->m = s->c = s->d = NULL;
}

static int
spline_init (Spline *s, const TgCurve *curve)
{
  int n = curve->n_points;

  s->n = n;
  s->x = malloc (sizeof (double) * 5 * (size_t) (n > 0 ? n : 1));
  if (!s->x)
    return TG_ENOMEM;
  s->y = s->x + n;
  s->m = s->y + n;
  s->c = s->m + n;
  s->d = s->c + n;
  for (int i = 0; i < n; i++)
    {
      s->x[i] = curve->xy[2 * i];
      s->y[i] = curve->xy[2 * i + 1];
      s->m[i] = s->c[i] = s->d[i] = 0.0;
    }
  if (n < 2)
    return 0;

  /* Slopes. */
  if (n == 2)
    {
      double sl = (s->y[1] - s->y[0]) / (s->x[1] - s->x[0]);
      s->m[0] = s->m[1] = sl;
    }
  else
    {
      for (int i = 1; i < n - 1; i++)
        {
          double h0 = s->x[i] - s->x[i - 1], h1 = s->x[i + 1] - s->x[i];
          double s0 = (s->y[i] - s->y[i - 1]) / h0, s1 = (s->y[i + 1] - s->y[i]) / h1;
          double p = (s0 * h1 + s1 * h0) / (h0 + h1);
          double lim = fmin (fmin (fabs (s0), fabs (s1)), 0.5 * fabs (p));
          s->m[i] = (sign_of (s0) + sign_of (s1)) * lim;
        }
      {
        double h0 = s->x[1] - s->x[0], h1 = s->x[2] - s->x[1];
        s->m[0] = end_slope ((s->y[1] - s->y[0]) / h0, (s->y[2] - s->y[1]) / h1, h0, h1);
      }
      {
        double h0 = s->x[n - 1] - s->x[n - 2], h1 = s->x[n - 2] - s->x[n - 3];
        s->m[n - 1] = end_slope ((s->y[n - 1] - s->y[n - 2]) / h0,
                                 (s->y[n - 2] - s->y[n - 3]) / h1, h0, h1);
      }
    }

  /* Cubic coefficients of each segment. */
  for (int i = 0; i < n - 1; i++)
    {
      double h = s->x[i + 1] - s->x[i];
      double sl = (s->y[i + 1] - s->y[i]) / h;
      s->c[i] = (3.0 * sl - 2.0 * s->m[i] - s->m[i + 1]) / h;
      s->d[i] = (s->m[i] + s->m[i + 1] - 2.0 * sl) / (h * h);
    }
  return 0;
}

static inline double
spline_eval (const Spline *s, double x)
{
  int n = s->n, lo, hi;
  double t, y, ylo, yhi;

  if (!(x > s->x[0]))   /* also NaN: take the first point */
    return s->y[0];
  if (x >= s->x[n - 1])
    return s->y[n - 1];

  /* Largest i with x[i] <= x. */
  lo = 0;
  hi = n - 1;
  while (hi - lo > 1)
    {
      int mid = (lo + hi) / 2;
      if (s->x[mid] <= x)
        lo = mid;
      else
        hi = mid;
    }
  t = x - s->x[lo];
  y = s->y[lo] + t * (s->m[lo] + t * (s->c[lo] + t * s->d[lo]));
  ylo = fmin (s->y[lo], s->y[lo + 1]);
  yhi = fmax (s->y[lo], s->y[lo + 1]);
  return y < ylo ? ylo : (y > yhi ? yhi : y);
}

static void
curve_row (const void *user, const TgRegion *r, int j, const float *const *in, float *dst)
{
  const Spline *spline = user;

  (void) j;
  for (int i = 0; i < r->width; i++)
    dst[i] = (float) spline_eval (spline, (double) in[0][i]);
}

static int
curve_check (const void *params, TgError *err)
{
  const CurveParams *p = params;

  if (p->points.n_points < 1 || !p->points.xy)
    return tg_error_set (err, TG_ERANGE, "params.points", TG_MSG_CURVE_NEEDS_POINT);
  for (int i = 1; i < p->points.n_points; i++)
    if (!(p->points.xy[2 * i] > p->points.xy[2 * i - 2]))
      return tg_error_set (err, TG_ERANGE, "params.points", TG_MSG_CURVE_POINT_X, i);
  return 0;
}

static int
curve_eval (TgEvalCtx *c)
{
  const CurveParams *p = tg_eval_params (c);
  Spline spline = { 0 };
  int rc;

  if (spline_init (&spline, &p->points) < 0)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  rc = tg_eval_map_rows (c, 1, curve_row, &spline);
  spline_clear (&spline);
  return rc;
}

static const TgNodeDesc curve_desc = {
  .type = "curve",
  .category = TG_CATEGORY_FILTERS,
  .label = N_("Curve"),
  .help = N_("Remaps height through a smooth monotone curve (plains, plateaus, steep slopes)"),
  TG_INPUTS (curve_inputs),
  TG_OUTPUTS (curve_outputs),
  TG_PARAMS (CurveParams, curve_params),
  .locality = TG_LOCALITY_LOCAL,
  .check = curve_check,
  .eval = curve_eval,
  .version = 1,
};
TG_NODE_REGISTER (curve_desc);
