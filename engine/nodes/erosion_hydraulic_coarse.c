/* erosion.hydraulic on a simulation grid coarser than the build's: the
 * map averaged onto a world-anchored grid F cells apart (sample I at the
 * build's sample F I), and the change the droplets made there laid back
 * over the build's own samples.
 *
 * Down: a tent of radius F (weights F - |d|), which averages every fine
 * sample into the grid with the same total weight, so a one-cell line
 * keeps its integral.  Up: the uniform cubic B-spline.  At 1 m cells from
 * a 2 m grid (steep-flow.tgraph at 1025), bilinear showed the grid's rows
 * and columns as creases in a hillshade (the change's mean |second
 * difference| 3800x as large on the grid's columns as between them) and
 * Catmull-Rom a fine grid texture (1.23x), and it rings below zero in the
 * flow; the B-spline is smooth in slope and curvature, never negative,
 * and shows no grid (1.02x; the droplets on the build's own cells 1.00x).
 * Its weights sum to 1 at every phase and to F over the F phases, so
 * the change keeps its volume away from the world's edge, where the grid
 * is clamped.
 *
 * Every sample comes from world coordinates alone, clamped at the world's
 * edge, in one fixed order: a window gives the whole map's bytes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/error.h>

#include "erosion_hydraulic.h"
#include "erosion_util.h"

static inline int
clampi (int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

int
tg__hydraulic_coarse_n (int n, int f)
{
  return f > 1 ? (n - 1 + f - 1) / f + 1 : n;
}

void
tg__hydraulic_down_reach (const TgHydraulicRect *dr, int f, int w, int h, TgHydraulicRect *need)
{
  int x0 = clampi (f * dr->x0 - (f - 1), 0, w - 1), y0 = clampi (f * dr->y0 - (f - 1), 0, h - 1);
  int x1 = clampi (f * (dr->x0 + dr->w - 1) + (f - 1), 0, w - 1);
  int y1 = clampi (f * (dr->y0 + dr->h - 1) + (f - 1), 0, h - 1);

  *need = (TgHydraulicRect) { x0, y0, x1 - x0 + 1, y1 - y0 + 1 };
}

int
tg__hydraulic_downsample (const float *src, const TgHydraulicRect *sr, int w, int h, int f,
                          const TgHydraulicDecode *dec, float *dst, const TgHydraulicRect *dr,
                          int begin, int end)
{
  int taps = 2 * f - 1, span = f * (dr->w - 1) + taps, s0 = f * dr->x0 - (f - 1);
  float *wt = malloc (sizeof (float) * (size_t) taps);
  float *buf = malloc (sizeof (float) * (size_t) span);
  float *acc = malloc (sizeof (float) * (size_t) dr->w);

  if (!wt || !buf || !acc)
    {
      free (wt);
      free (buf);
      free (acc);
      return TG_ENOMEM;
    }
  for (int d = 0; d < taps; d++)
    wt[d] = (float) ((double) (f - abs (d - (f - 1))) / ((double) f * f));
  for (int J = begin; J < end; J++)
    {
      memset (acc, 0, sizeof (float) * (size_t) dr->w);
      for (int dj = 0; dj < taps; dj++)
        {
          int j = clampi (f * (dr->y0 + J) + dj - (f - 1), 0, h - 1);
          const float *row = src + (size_t) (j - sr->y0) * (size_t) sr->w;
          if (dec)
            for (int k = 0; k < span; k++)
              buf[k] = tg__hydraulic_drainage_area (row[clampi (s0 + k, 0, w - 1) - sr->x0],
                                                    dec->ref_area, dec->log_max)
                       * (float) dec->scale;
          else
            for (int k = 0; k < span; k++)
              buf[k] = row[clampi (s0 + k, 0, w - 1) - sr->x0];
          for (int I = 0; I < dr->w; I++)
            {
              const float *b = buf + (size_t) f * I;
              float sum = 0.0f;
              for (int d = 0; d < taps; d++)
                sum += wt[d] * b[d];
              acc[I] += wt[dj] * sum;
            }
        }
      memcpy (dst + (size_t) J * dr->w, acc, sizeof (float) * (size_t) dr->w);
    }
  free (wt);
  free (buf);
  free (acc);
  return 0;
}

void
tg__hydraulic_up_weights (int f, float (*wt)[4])
{
  for (int p = 0; p < f; p++)
    {
      double w[4];
      tg__bspline_weights ((double) p / f, w);
      for (int k = 0; k < 4; k++)
        wt[p][k] = (float) w[k];
    }
}

void
tg__hydraulic_up_reach (const TgHydraulicRect *fr, int f, int cw, int ch, TgHydraulicRect *need)
{
  int x0 = clampi (fr->x0 / f - 1, 0, cw - 1), y0 = clampi (fr->y0 / f - 1, 0, ch - 1);
  int x1 = clampi ((fr->x0 + fr->w - 1) / f + 2, 0, cw - 1);
  int y1 = clampi ((fr->y0 + fr->h - 1) / f + 2, 0, ch - 1);

  *need = (TgHydraulicRect) { x0, y0, x1 - x0 + 1, y1 - y0 + 1 };
}

void
tg__hydraulic_upsample_row (const float *c, const TgHydraulicRect *cr, int cw, int ch, int f,
                            const float (*wt)[4], int j, int i0, int n, float *tmp, float *out)
{
  const float *wy = wt[j % f];
  const float *r[4];
  int J = j / f, I0 = clampi (i0 / f - 1, 0, cw - 1), I1 = clampi ((i0 + n - 1) / f + 2, 0, cw - 1);

  for (int k = 0; k < 4; k++)
    r[k] = c + (size_t) (clampi (J - 1 + k, 0, ch - 1) - cr->y0) * (size_t) cr->w;
  /* TMP[I - I0] for the grid's columns I0..I1: the rows blended. */
  for (int I = I0; I <= I1; I++)
    {
      int o = I - cr->x0;
      tmp[I - I0] = wy[0] * r[0][o] + wy[1] * r[1][o] + wy[2] * r[2][o] + wy[3] * r[3][o];
    }
  for (int i = 0; i < n; i++)
    {
      int x = i0 + i, X = x / f;
      const float *wx = wt[x % f];
      out[i] = wx[0] * tmp[clampi (X - 1, 0, cw - 1) - I0] + wx[1] * tmp[X - I0]
               + wx[2] * tmp[clampi (X + 1, 0, cw - 1) - I0]
               + wx[3] * tmp[clampi (X + 2, 0, cw - 1) - I0];
    }
}
