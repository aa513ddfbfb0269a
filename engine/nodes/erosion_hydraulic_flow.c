/* erosion.hydraulic with a drainage input: droplets that carve branching
 * gullies instead of curtains (issue 14).
 *
 * Curtains: droplets on a steep face run side by side down the fall line,
 * each falls into the groove the one before cut, and the face ends up
 * combed into parallel grooves a brush apart.  Real gullies branch: water
 * gathers from the faces into a few drainage lines that join downhill,
 * and erosion grows with the water a line carries (stream power,
 * E ~ A^m S^n).
 *
 * A droplet sees only its own path, so the water it joins has to come
 * from outside: erosion.flow's accumulation over the terrain before
 * erosion, which is the same for any tiling.  Its mask gives the area A
 * draining through each cell (m²); the node turns it into the channel
 * map, a factor on each droplet's capacity
 *
 *     f = clamp ((A / A0)^m, floor, ceil)
 *
 * so that drainage lines (A above A0, m²) erode more and faces with
 * little upslope area erode less, and a droplet on a face (f below 1)
 * wears the ground with a wider brush, up to the face radius (metres) at
 * the floor, which smooths grooves across the face instead of cutting
 * them.  Both depend on A in m² and radii in metres, so a preview and a
 * build carve the same drainage.
 *
 * The drainage input is static: computed before erosion, it cannot see
 * the gullies the droplets carve, and the faces still wear into gullies
 * side by side.  Gully feedback (discharge_area_m2, after Nick McDonald's
 * particle hydrology, 2020 and 2023) closes the loop: the flow map the
 * droplets write as they run is read by the droplets after them as the
 * area draining through each cell (the water over the rain fallen per
 * cell), which sets the same factor (times the input's, if linked), and
 * a droplet turns toward the side of its path whose water, channel_pull_m
 * away, is more.  A gully that happens to carry more water cuts deeper
 * and draws its neighbours in; they join as tributaries, and the faces
 * drain through branching networks.  The flow map then lives in the
 * lattice phases with the height (erosion_hydraulic_sim.c), so tiled
 * builds stay exact.
 */
#include <math.h>

#include "erosion_hydraulic.h"

void
tg__hydraulic_channel_levels (const TgHydraulicSetup *s, float radius[TG__HYDRAULIC_LEVELS],
                              float thr[TG__HYDRAULIC_LEVELS])
{
  int n = TG__HYDRAULIC_LEVELS;
  bool wider = s->face_radius > s->brush_radius && s->channel_floor > 0.0f
               && s->channel_floor < 1.0f;

  for (int k = 0; k < n; k++)
    {
      double t = (double) k / (n - 1);
      /* Radii from the plain brush to the face brush, in equal ratios;
       * level K where log f / log floor is nearest K / (n - 1). */
      radius[k] = wider ? (float) (s->brush_radius * pow (s->face_radius / s->brush_radius, t))
                        : s->brush_radius;
      if (radius[k] > TG__HYDRAULIC_BRUSH_MAX)
        radius[k] = TG__HYDRAULIC_BRUSH_MAX;
      thr[k] = k > 0 && wider ? (float) pow (s->channel_floor, (k - 0.5) / (n - 1)) : 0.0f;
    }
}

float
tg__hydraulic_drainage_area (float m, double ref_area, double log_max)
{
  double a = isfinite (m) ? ref_area * expm1 ((double) m * log_max) : 0.0;

  return (float) (a > 0.0 ? a : 0.0);
}

float
tg__hydraulic_channel_factor (float a, double area0, double exponent, double floor, double ceil)
{
  double f = a > 0.0f ? pow ((double) a / area0, exponent) : 0.0;

  return (float) (f > floor ? (f < ceil ? f : ceil) : floor);
}

/* Box averages of radius R along one axis: each output cell is the mean
 * of the input cells within R of it along the axis, cut at the map's
 * edge, summed from the lowest index up starting at 0.0f.  The passes
 * run over whole rows, a row of sums at a time, so that the loops over a
 * row vectorise; each cell's sum still takes its terms in that order
 * (one long chain of adds per cell made the smoothing latency-bound, and
 * the columns strided across rows). */

/* Along a row: cells IN[0 .. N) into OUT. */
static void
box_row (const float *restrict in, float *restrict out, int n, int r)
{
  int a = r < n ? r : n, b = n - r > a ? n - r : a;

  /* Cells whose window the row's ends cut, one at a time. */
  for (int i = 0; i < n; i = i + 1 == a ? b : i + 1)
    {
      int lo = i - r < 0 ? 0 : i - r, hi = i + r >= n ? n - 1 : i + r;
      float sum = 0.0f;
      for (int k = lo; k <= hi; k++)
        sum += in[k];
      out[i] = sum / (float) (hi - lo + 1);
    }
  /* The others, [A, B): the whole window of 2 R + 1. */
  for (int i = a; i < b; i++)
    out[i] = 0.0f;
  for (int k = -r; k <= r; k++)
    for (int i = a; i < b; i++)
      out[i] += in[i + k];
  for (int i = a; i < b; i++)
    out[i] = out[i] / (float) (2 * r + 1);
}

/* Along the columns: row J of OUT from rows of IN (W floats each, H of
 * them). */
static void
box_rows (const float *restrict in, float *restrict out, int w, int h, int j, int r)
{
  int lo = j - r < 0 ? 0 : j - r, hi = j + r >= h ? h - 1 : j + r;

  for (int i = 0; i < w; i++)
    out[i] = 0.0f;
  for (int k = lo; k <= hi; k++)
    {
      const float *row = in + (size_t) k * w;
      for (int i = 0; i < w; i++)
        out[i] += row[i];
    }
  for (int i = 0; i < w; i++)
    out[i] = out[i] / (float) (hi - lo + 1);
}

void
tg__hydraulic_channel_smooth (float *map, float *tmp, int w, int h, int r)
{
  /* Twice: a tent of radius 2 R, without the square's edges. */
  for (int pass = 0; pass < 2 && r > 0; pass++)
    {
      for (int j = 0; j < h; j++)
        box_row (map + (size_t) j * w, tmp + (size_t) j * w, w, r);
      for (int j = 0; j < h; j++)
        box_rows (tmp, map + (size_t) j * w, w, h, j, r);
    }
}
