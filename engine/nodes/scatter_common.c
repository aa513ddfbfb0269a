/* Shared parts of the scatter nodes: terrain sampling, the transform and
 * filter checks, the linear-time minimum-spacing pass and its block
 * order, the instance order and its tiled join, and the value noise that
 * hides the candidate grid.  See scatter_common.h.
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
    return tg_error_set (err, TG_ERANGE, "params.max_yaw_deg", TG_MSG_YAW_RANGE, max_yaw_deg,
                         min_yaw_deg);
  if (max_scale < min_scale)
    return tg_error_set (err, TG_ERANGE, "params.max_scale", TG_MSG_SCALE_RANGE, max_scale,
                         min_scale);
  if (max_height_m < min_height_m)
    return tg_error_set (err, TG_ERANGE, "params.max_height_m", TG_MSG_HIGHEST_BELOW_LOWEST,
                         max_height_m, min_height_m);
  return 0;
}

/* The cell of T's grid under (X, Z): its north-west sample (I0, J0),
 * the samples east and south of it (I1, J1; the same on a one-sample
 * axis) and the position in it (FX east, FY south, in [0, 1]).
 * Positions outside the grid are clamped to its edge. */
typedef struct
{
  int i0, j0, i1, j1;
  double fx, fy;
} TerrainCell;

static void
terrain_cell (const TgRegion *r, double x, double z, TerrainCell *c)
{
  /* Continuous sample coordinates; column 0 west, row 0 north.  Taking
   * the window's first sample off afterwards is exact (an integer off a
   * double of at least its size), so a tile sees the whole map's bits. */
  double u = (x - r->origin_x) / r->cell - (double) r->col0;
  double v = (r->origin_z - z) / r->cell - (double) r->row0;

  u = u > 0.0 ? (u < (double) (r->width - 1) ? u : (double) (r->width - 1)) : 0.0;
  v = v > 0.0 ? (v < (double) (r->height - 1) ? v : (double) (r->height - 1)) : 0.0;
  c->i0 = (int) floor (u);
  c->j0 = (int) floor (v);
  if (c->i0 > r->width - 2)
    c->i0 = r->width > 1 ? r->width - 2 : 0;
  if (c->j0 > r->height - 2)
    c->j0 = r->height > 1 ? r->height - 2 : 0;
  c->i1 = r->width > 1 ? c->i0 + 1 : c->i0;
  c->j1 = r->height > 1 ? c->j0 + 1 : c->j0;
  c->fx = u - (double) c->i0;
  c->fy = v - (double) c->j0;
}

/* The cell of T's grid under (X, Z) and its samples a b / c d (a
 * north-west, rows running south) in H; false, for flat ground at 0 m,
 * when T has no grid. */
static bool
terrain_corners (const TgTerrain *t, double x, double z, TerrainCell *c, double h[4])
{
  const float *row0, *row1;

  if (!t->height)
    return false;
  terrain_cell (&t->height->region, x, z, c);
  row0 = tg_value_row (t->height, c->j0);
  row1 = tg_value_row (t->height, c->j1);
  h[0] = row0[c->i0];
  h[1] = row0[c->i1];
  h[2] = row1[c->i0];
  h[3] = row1[c->i1];
  return true;
}

void
tg__terrain_sample (const TgTerrain *t, double x, double z, double *y_m, double *slope_tan)
{
  TerrainCell c;
  double h[4], du, dv, cell;

  *y_m = *slope_tan = 0.0;
  if (!terrain_corners (t, x, z, &c, h))
    return;
  *y_m = ((h[0] * (1.0 - c.fx) + h[1] * c.fx) * (1.0 - c.fy)
          + (h[2] * (1.0 - c.fx) + h[3] * c.fx) * c.fy)
         * t->height_m;
  /* The derivative of the same bilinear patch. */
  cell = t->height->region.cell;
  du = ((h[1] - h[0]) * (1.0 - c.fy) + (h[3] - h[2]) * c.fy) * t->height_m / cell;
  dv = ((h[2] - h[0]) * (1.0 - c.fx) + (h[3] - h[1]) * c.fx) * t->height_m / cell;
  *slope_tan = sqrt (du * du + dv * dv);
}

void
tg__terrain_surface (const TgTerrain *t, double x, double z, double *y_m, double *slope_tan)
{
  TerrainCell c;
  double h[4], du, dv;

  *y_m = *slope_tan = 0.0;
  if (!terrain_corners (t, x, z, &c, h))
    return;
  /* The vertex heights exactly as mesh.heightfield stores them (floats). */
  for (int k = 0; k < 4; k++)
    h[k] = (float) (h[k] * t->height_m);
  /* mesh.heightfield cuts cell a b / c d along b-c into (a, b, c) and
   * (b, d, c); the plane of the one holding the point. */
  if (c.fx + c.fy <= 1.0)
    {
      du = h[1] - h[0];
      dv = h[2] - h[0];
      *y_m = h[0] + du * c.fx + dv * c.fy;
    }
  else
    {
      du = h[3] - h[2];
      dv = h[3] - h[1];
      *y_m = h[3] - du * (1.0 - c.fx) - dv * (1.0 - c.fy);
    }
  du /= t->height->region.cell;
  dv /= t->height->region.cell;
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

/* --- world-anchored spacing and order ------------------------------------- */

/* Stable LSD radix sort of C by KEY (both permuted), 16 bits a pass;
 * passes where every key has the same digit are skipped.  0, TG_ENOMEM,
 * or TG_ECANCELLED when CTX (may be NULL) is cancelled between two passes
 * (a pass over a band's million darts takes some 15 ms), C and KEY then
 * left in no particular order. */
static int
sort_by_key (TgEvalCtx *ctx, TgScatterCand *c, uint64_t *key, int64_t n)
{
  TgScatterCand *tc, *sc = c, *dc;
  uint64_t *tk, *sk = key, *dk;
  int64_t *count;
  int rc = 0;

  if (n < 2)
    return 0;
  tc = malloc (sizeof (TgScatterCand) * (size_t) n);
  tk = malloc (sizeof (uint64_t) * (size_t) n);
  count = malloc (sizeof (int64_t) * 65536);
  if (!tc || !tk || !count)
    {
      free (tc);
      free (tk);
      free (count);
      return TG_ENOMEM;
    }
  dc = tc;
  dk = tk;
  for (int shift = 0; shift < 64 && rc == 0; shift += 16)
    {
      int64_t sum = 0;
      bool one = false;
      if (ctx && tg_eval_cancelled (ctx))
        {
          rc = TG_ECANCELLED;
          break;
        }
      memset (count, 0, sizeof (int64_t) * 65536);
      for (int64_t i = 0; i < n; i++)
        count[(sk[i] >> shift) & 0xffff]++;
      for (int d = 0; d < 65536; d++)
        {
          int64_t k = count[d];
          one |= k == n;
          count[d] = sum;
          sum += k;
        }
      if (one)
        continue;
      for (int64_t i = 0; i < n; i++)
        {
          int64_t at = count[(sk[i] >> shift) & 0xffff]++;
          dc[at] = sc[i];
          dk[at] = sk[i];
        }
      {
        TgScatterCand *t = sc;
        uint64_t *u = sk;
        sc = dc, dc = t;
        sk = dk, dk = u;
      }
    }
  if (rc == 0 && sc != c)
    {
      memcpy (c, sc, sizeof (TgScatterCand) * (size_t) n);
      memcpy (key, sk, sizeof (uint64_t) * (size_t) n);
    }
  free (tc);
  free (tk);
  free (count);
  return rc;
}

/* The block side: a hair over the spacing, so that blocks of one phase
 * stay more than SPACING apart whatever the rounding of a position's
 * block (otherwise a chain of same-phase blocks could interact). */
static double
block_side (double spacing, double block_min_m)
{
  return fmax (spacing, block_min_m) * (1.0 + 1e-6);
}

double
tg__scatter_ring_m (double spacing, double block_min_m)
{
  /* 3 blocks of dependence, 1 for where the owner's block starts and 1
   * for rounding at block borders. */
  return spacing > 0.0 ? 5.0 * block_side (spacing, block_min_m) : 0.0;
}

int64_t
tg__scatter_space_blocks (TgEvalCtx *ctx, TgScatterCand *c, int64_t n, double spacing,
                          double block_min_m, bool per_proto, int n_protos, double west,
                          double north)
{
  double b = block_side (spacing, block_min_m);
  double x0 = INFINITY, x1 = -INFINITY, z0 = INFINITY, z1 = -INFINITY;
  int64_t bx0 = INT64_MAX, bz0 = INT64_MAX, bx1 = INT64_MIN, bz1 = INT64_MIN, k = 0;
  bool any_prio = false;
  uint64_t *key;
  int rc = 0;

  if (n == 0 || !(spacing > 0.0))
    return n;
  key = malloc (sizeof (uint64_t) * (size_t) n);
  if (!key)
    return TG_ENOMEM;
  for (int64_t i = 0; i < n; i++)
    {
      int64_t bx = (int64_t) floor (((double) c[i].x - west) / b);
      int64_t bz = (int64_t) floor ((north - (double) c[i].z) / b);
      bx0 = bx < bx0 ? bx : bx0;
      bx1 = bx > bx1 ? bx : bx1;
      bz0 = bz < bz0 ? bz : bz0;
      bz1 = bz > bz1 ? bz : bz1;
      x0 = fmin (x0, c[i].x);
      x1 = fmax (x1, c[i].x);
      z0 = fmin (z0, c[i].z);
      z1 = fmax (z1, c[i].z);
      any_prio |= c[i].prio != 0;
    }
  if ((double) (bx1 - bx0 + 1) * (double) (bz1 - bz0 + 1) > 0x1p60)
    {
      free (key);
      return TG_ENOMEM;
    }
  /* (phase, block, prio, seq): C comes in seq order and both sorts are
   * stable.  Each sort of millions of candidates takes a while: the sorts
   * look at the token between their passes, and the spacing pass is
   * looked at before. */
  if (any_prio)
    {
      for (int64_t i = 0; i < n; i++)
        key[i] = c[i].prio;
      if ((rc = sort_by_key (ctx, c, key, n)) < 0)
        goto out;
    }
  for (int64_t i = 0; i < n; i++)
    {
      int64_t bx = (int64_t) floor (((double) c[i].x - west) / b);
      int64_t bz = (int64_t) floor ((north - (double) c[i].z) / b);
      uint64_t phase = (uint64_t) (bx & 1) | (uint64_t) (bz & 1) << 1;
      key[i] = phase << 61 | (uint64_t) ((bz - bz0) * (bx1 - bx0 + 1) + (bx - bx0));
    }
  if ((rc = sort_by_key (ctx, c, key, n)) < 0)
    goto out;
  if (ctx && tg_eval_cancelled (ctx))
    {
      rc = TG_ECANCELLED;
      goto out;
    }
  if ((k = tg__scatter_spacing (c, n, spacing, per_proto, n_protos, x0, z0, x1 - x0, z1 - z0)) < 0)
    {
      rc = TG_ENOMEM;
      goto out;
    }
  for (int64_t i = 0; i < k; i++)
    key[i] = c[i].seq;
  rc = sort_by_key (ctx, c, key, k);
out:
  free (key);
  return rc < 0 ? rc : k;
}

void
tg__scatter_owner (const TgRegion *full, double x, double z, int *col, int *row)
{
  double u = (x - full->origin_x) / full->cell, v = (full->origin_z - z) / full->cell;

  u = u > 0.0 ? (u < (double) (full->full_w - 1) ? u : (double) (full->full_w - 1)) : 0.0;
  v = v > 0.0 ? (v < (double) (full->full_h - 1) ? v : (double) (full->full_h - 1)) : 0.0;
  *col = (int) floor (u);
  *row = (int) floor (v);
}

int64_t
tg__scatter_keep_owned (TgScatterCand *c, int64_t n, const TgRegion *full, const TgRegion *win)
{
  int64_t k = 0;

  for (int64_t i = 0; i < n; i++)
    {
      int col, row;
      tg__scatter_owner (full, c[i].x, c[i].z, &col, &row);
      if (col >= win->col0 && col < win->col0 + win->width && row >= win->row0
          && row < win->row0 + win->height)
        c[k++] = c[i];
    }
  return k;
}

int
tg__scatter_order (TgScatterCand *c, int64_t n, const TgRegion *full)
{
  uint64_t *key = malloc (sizeof (uint64_t) * (size_t) (n ? n : 1));
  int rc;

  if (!key)
    return TG_ENOMEM;
  for (int64_t i = 0; i < n; i++)
    {
      int col, row;
      tg__scatter_owner (full, c[i].x, c[i].z, &col, &row);
      key[i] = (uint64_t) row * (uint64_t) full->full_w + (uint64_t) col;
    }
  rc = sort_by_key (NULL, c, key, n);
  free (key);
  return rc;
}

int
tg__scatter_halo (const TgRegion *full, double ring_m)
{
  /* The area reaches RING_M and a cell past the owned samples; the
   * footprint of the cell under a point adds one more and rounding of the ratio another. */
  double h = ceil (ring_m / full->cell) + 4.0;
  double most = (double) (full->full_w > full->full_h ? full->full_w : full->full_h);

  return (int) (h < most ? h : most);
}

TgValue *
tg__scatter_join (const TgRegion *full, const TgTiling *t, TgValue *const *parts, TgError *err)
{
  int n_parts = t->nx * t->ny;
  const TgPoints *p0 = tg_value_points (parts[0]);
  int64_t total = 0, *at = NULL;
  TgPoints *out = NULL;
  TgValue *v;

  for (int q = 0; q < n_parts; q++)
    {
      const TgPoints *p = parts[q] ? tg_value_points (parts[q]) : NULL;
      if (!p || !p0 || p->n_protos != p0->n_protos)
        {
          tg_error_set (err, TG_EINVAL, NULL, "tile %d's share of the instances is missing or "
                        "has other prototypes", q);
          return NULL;
        }
      for (int k = 0; k < p->n_protos; k++)
        if (strcmp (p->proto_names[k], p0->proto_names[k]) != 0)
          {
            tg_error_set (err, TG_EINVAL, NULL, "tile %d's share has other prototypes", q);
            return NULL;
          }
      total += p->n;
    }
  out = tg_points_new ();
  at = calloc ((size_t) n_parts, sizeof (int64_t));
  if (!out || !at || tg_points_reserve (out, total) < 0)
    goto oom;
  for (int k = 0; k < p0->n_protos; k++)
    if (tg_points_add_proto (out, p0->proto_names[k]) < 0)
      goto oom;
  /* The instance order is by owning sample row: a row's instances are
   * its tiles' runs for that row, west to east. */
  for (int iy = 0; iy < t->ny; iy++)
    for (int row = tg_tile_start (full->full_h, t->ny, iy);
         row < tg_tile_start (full->full_h, t->ny, iy + 1); row++)
      for (int ix = 0; ix < t->nx; ix++)
        {
          int q = iy * t->nx + ix;
          const TgPoints *p = tg_value_points (parts[q]);
          for (; at[q] < p->n; at[q]++)
            {
              const float *pos = p->position + 3 * at[q];
              int col, r;
              tg__scatter_owner (full, pos[0], pos[2], &col, &r);
              if (r != row)
                break;
              if (tg_points_push (out, pos, p->rotation + 4 * at[q], p->scale + 3 * at[q],
                                  p->proto[at[q]])
                  < 0)
                goto oom;
            }
        }
  for (int q = 0; q < n_parts; q++)
    if (at[q] != tg_value_points (parts[q])->n)
      {
        free (at);
        tg_points_free (out);
        tg_error_set (err, TG_EINVAL, NULL,
                      "tile %d's share of the instances is out of order or outside the tile",
                      q);
        return NULL;
      }
  free (at);
  v = tg_value_new_points (out);
  if (!v)
    tg_error_set (err, TG_ENOMEM, NULL, TG_MSG_OUT_OF_MEMORY);
  return v;

oom:
  free (at);
  tg_points_free (out);
  tg_error_set (err, TG_ENOMEM, NULL, "out of memory joining the instances");
  return NULL;
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
