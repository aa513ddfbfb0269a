/* Shared parts of the scatter nodes: terrain sampling, the transform and
 * filter checks, the linear-time minimum-spacing pass and the value noise
 * that hides the candidate grid.  See scatter_common.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scatter_common.h"

void
tg__scatter_buf_push (TgScatterBuf *b, const TgScatterCand *c)
{
  if (b->n == b->cap)
    {
      int64_t cap = b->cap ? b->cap * 2 : 1024;
      TgScatterCand *grown;
      if (b->oom)
        return;
      grown = realloc (b->c, sizeof (TgScatterCand) * (size_t) cap);
      if (!grown)
        {
          b->oom = true;
          return;
        }
      b->c = grown;
      b->cap = cap;
    }
  b->c[b->n++] = *c;
}

void
tg__scatter_buf_clear (TgScatterBuf *b)
{
  free (b->c);
  memset (b, 0, sizeof *b);
}

int
tg__scatter_xform_check (double min_yaw_deg, double max_yaw_deg, double min_scale,
                         double max_scale, double min_height_m, double max_height_m,
                         TgError *err)
{
  if (max_yaw_deg < min_yaw_deg)
    return tg_error_set (err, TG_ERANGE, "params.max_yaw_deg",
                         "the yaw range ends (%g deg) before it starts (%g deg)", max_yaw_deg,
                         min_yaw_deg);
  if (max_scale < min_scale)
    return tg_error_set (err, TG_ERANGE, "params.max_scale",
                         "the scale range ends (%g) below where it starts (%g)", max_scale,
                         min_scale);
  if (max_height_m < min_height_m)
    return tg_error_set (err, TG_ERANGE, "params.max_height_m",
                         "the highest terrain (%g m) is below the lowest (%g m)", max_height_m,
                         min_height_m);
  return 0;
}

void
tg__terrain_sample (const TgTerrain *t, double x, double z, double *y_m, double *slope_tan)
{
  const TgValue *h = t->height;
  const TgRegion *r;
  double u, v, fx, fy, h00, h10, h01, h11, du, dv;
  int i0, j0, i1, j1;
  const float *row0, *row1;

  if (!h)
    {
      *y_m = 0.0;
      *slope_tan = 0.0;
      return;
    }
  r = &h->region;
  /* Continuous sample coordinates; column 0 west, row 0 north. */
  u = (x - tg_region_x (r, 0)) / r->cell;
  v = (tg_region_z (r, 0) - z) / r->cell;
  u = u > 0.0 ? (u < (double) (r->width - 1) ? u : (double) (r->width - 1)) : 0.0;
  v = v > 0.0 ? (v < (double) (r->height - 1) ? v : (double) (r->height - 1)) : 0.0;
  i0 = (int) floor (u);
  j0 = (int) floor (v);
  if (i0 > r->width - 2)
    i0 = r->width > 1 ? r->width - 2 : 0;
  if (j0 > r->height - 2)
    j0 = r->height > 1 ? r->height - 2 : 0;
  i1 = r->width > 1 ? i0 + 1 : i0;
  j1 = r->height > 1 ? j0 + 1 : j0;
  fx = u - (double) i0;
  fy = v - (double) j0;
  row0 = tg_value_row (h, j0);
  row1 = tg_value_row (h, j1);
  h00 = row0[i0];
  h10 = row0[i1];
  h01 = row1[i0];
  h11 = row1[i1];
  *y_m = ((h00 * (1.0 - fx) + h10 * fx) * (1.0 - fy) + (h01 * (1.0 - fx) + h11 * fx) * fy)
         * t->height_m;
  /* The derivative of the same bilinear patch, so a slope limit means
   * exactly the surface the instance stands on. */
  du = ((h10 - h00) * (1.0 - fy) + (h11 - h01) * fy) * t->height_m / r->cell;
  dv = ((h01 - h00) * (1.0 - fx) + (h11 - h10) * fx) * t->height_m / r->cell;
  *slope_tan = sqrt (du * du + dv * dv);
}

void
tg__scatter_filter_init (TgScatterFilter *f, const TgValue *height, double height_m, bool snap,
                         double min_height_m, double max_height_m, double max_slope_deg)
{
  memset (f, 0, sizeof *f);
  f->terrain.height = height;
  f->terrain.height_m = height_m;
  f->snap = snap && height;
  f->min_height_m = min_height_m;
  f->max_height_m = max_height_m;
  f->max_slope_tan = max_slope_deg >= 90.0 ? INFINITY : tan (max_slope_deg * (M_PI / 180.0));
  /* Without terrain the ground is flat at 0 m, and the height range
   * still applies to that. */
  if (height)
    f->need_sample = f->snap || max_slope_deg < 90.0 || min_height_m > -1e5 || max_height_m < 1e5;
  else
    f->need_sample = min_height_m > 0.0 || max_height_m < 0.0;
}

/* Grid cells kept for the spacing pass at most; beyond that the cells
 * grow (still at least SPACING wide, so 3 x 3 cells stay enough). */
#define SPACING_MAX_SLOTS (1 << 25)

int64_t
tg__scatter_spacing (TgScatterCand *c, int64_t n, double spacing, bool per_proto, int n_protos,
                     double x0, double z0, double sx, double sz)
{
  int slots_per_cell = per_proto ? (n_protos > 0 ? n_protos : 1) : 1;
  double g = spacing, s2 = spacing * spacing;
  int64_t gw, gh, k = 0;
  int32_t *head, *next;

  if (n == 0 || !(spacing > 0.0))
    return n;
  if (n > INT32_MAX)
    return TG_ENOMEM;
  for (;;)
    {
      gw = (int64_t) floor (sx / g) + 1;
      gh = (int64_t) floor (sz / g) + 1;
      if ((double) gw * (double) gh * slots_per_cell <= (double) SPACING_MAX_SLOTS)
        break;
      g *= 1.5;
    }
  head = malloc (sizeof (int32_t) * (size_t) (gw * gh * slots_per_cell));
  next = malloc (sizeof (int32_t) * (size_t) n);
  if (!head || !next)
    {
      free (head);
      free (next);
      return TG_ENOMEM;
    }
  memset (head, 0xff, sizeof (int32_t) * (size_t) (gw * gh * slots_per_cell));

  for (int64_t i = 0; i < n; i++)
    {
      TgScatterCand cand = c[i];
      double x = cand.x, z = cand.z;
      int64_t gx = (int64_t) floor ((x - x0) / g), gz = (int64_t) floor ((z - z0) / g);
      int slot = per_proto ? cand.proto : 0;
      bool ok = true;

      gx = gx < 0 ? 0 : (gx >= gw ? gw - 1 : gx);
      gz = gz < 0 ? 0 : (gz >= gh ? gh - 1 : gz);
      for (int64_t nz = gz - 1; nz <= gz + 1 && ok; nz++)
        {
          if (nz < 0 || nz >= gh)
            continue;
          for (int64_t nx = gx - 1; nx <= gx + 1 && ok; nx++)
            {
              if (nx < 0 || nx >= gw)
                continue;
              for (int32_t q = head[(nz * gw + nx) * slots_per_cell + slot]; q >= 0; q = next[q])
                {
                  double dx = (double) c[q].x - x, dz = (double) c[q].z - z;
                  if (dx * dx + dz * dz < s2)
                    {
                      ok = false;
                      break;
                    }
                }
            }
        }
      if (!ok)
        continue;
      c[k] = cand;
      next[k] = head[(gz * gw + gx) * slots_per_cell + slot];
      head[(gz * gw + gx) * slots_per_cell + slot] = (int32_t) k;
      k++;
    }
  free (head);
  free (next);
  return k;
}

int
tg__scatter_emit (TgPoints *p, const TgScatterCand *c, int64_t n)
{
  if (tg_points_reserve (p, p->n + n) < 0)
    return TG_ENOMEM;
  for (int64_t i = 0; i < n; i++)
    {
      double half = 0.5 * (double) c[i].yaw;
      float pos[3] = { c[i].x, c[i].y, c[i].z };
      float rot[4] = { 0.0f, (float) sin (half), 0.0f, (float) cos (half) };
      float scale[3] = { c[i].scale, c[i].scale, c[i].scale };
      if (tg_points_push (p, pos, rot, scale, c[i].proto) < 0)
        return TG_ENOMEM;
    }
  return 0;
}

static inline double
fade5 (double t)
{
  return t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
}

static inline double
lattice (uint32_t seed, int32_t x, int32_t z)
{
  return 2.0 * (double) tg_hash_unit (tg_hash2 (seed, x, z)) - 1.0;
}

double
tg__scatter_value_noise (uint32_t seed, double x, double z)
{
  double fx = floor (x), fz = floor (z);
  int32_t ix = (int32_t) fx, iz = (int32_t) fz;
  double tx = fade5 (x - fx), tz = fade5 (z - fz);
  double a = lattice (seed, ix, iz), b = lattice (seed, ix + 1, iz);
  double c = lattice (seed, ix, iz + 1), d = lattice (seed, ix + 1, iz + 1);
  double top = a + (b - a) * tx, bot = c + (d - c) * tx;

  return top + (bot - top) * tz;
}
