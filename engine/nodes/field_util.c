/* The helpers every field node uses: a new TgField, the node's output
 * as a value, and an input held by a reference of its own; and a dense
 * volume as a field, with its grid path (field.slices).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <tgraph/tgraph.h>

#include "fields.h"

TgField *
tg__field_new (TgFieldEvalFn eval, void *data, void (*free_data) (void *))
{
  TgField *f = calloc (1, sizeof *f);

  if (f == NULL)
    {
      if (free_data)
        free_data (data);
      return NULL;
    }
  f->eval = eval;
  f->data = data;
  f->free_data = free_data;
  return f;
}

int
tg__field_output (TgEvalCtx *c, TgField *f)
{
  TgValue *v = tg_value_new_field (f);

  if (v == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  tg_eval_set_output (c, 0, v);
  return 0;
}

int
tg__field_input (TgEvalCtx *c, int index, const char *name, TgValue **ref)
{
  const TgValue *in = tg_eval_input (c, index);

  *ref = NULL;
  if (in == NULL || tg_value_field (in) == NULL)
    return tg_eval_fail (c, TG_EMISSING, TG_MSG_INPUT_NO_FIELD, name);
  /* Values are reference counted atomically; holding one is how a
   * composite field outlives the evaluation that made it. */
  *ref = tg_value_ref ((TgValue *) in);
  return 0;
}

/* --- dense volumes ---------------------------------------------------------------- */

/* Voxel (I, J, K) of VOL, 0 outside. */
static inline float
vol_at (const TgVolume *vol, int i, int j, int k)
{
  if ((unsigned) i >= (unsigned) vol->n[0] || (unsigned) j >= (unsigned) vol->n[1]
      || (unsigned) k >= (unsigned) vol->n[2])
    return 0.0f;
  return vol->v[i * vol->st[0] + j * vol->st[1] + k * vol->st[2]];
}

/* Coordinate C along AXIS in voxels, clamped so the int is defined: its
 * voxel *I and fraction *T. */
static inline void
vol_split (const TgVolume *vol, int axis, float c, int *i, float *t)
{
  float cc = fminf (fmaxf ((c - vol->org[axis]) * vol->inv[axis], -2.0f),
                    (float) vol->n[axis] + 1.0f);
  float fc = floorf (cc);

  *i = (int) fc;
  *t = cc - fc;
}

/* The interpolation of the eight voxels A[y][z][x] around a point, along
 * x, then z, then y: one sequence of roundings for both paths. */
static inline float
vol_lerp (float level, const float a[2][2][2], float tx, float ty, float tz)
{
  float c00 = a[0][0][0] + tx * (a[0][0][1] - a[0][0][0]);
  float c10 = a[0][1][0] + tx * (a[0][1][1] - a[0][1][0]);
  float c01 = a[1][0][0] + tx * (a[1][0][1] - a[1][0][0]);
  float c11 = a[1][1][0] + tx * (a[1][1][1] - a[1][1][0]);
  float c0 = c00 + tz * (c10 - c00);
  float c1 = c01 + tz * (c11 - c01);

  return level - (c0 + ty * (c1 - c0));
}

void
tg__volume_eval (const TgVolume *vol, int n, const float *x, const float *y, const float *z,
                 float *out)
{
  for (int q = 0; q < n; q++)
    {
      int i, j, k;
      float tx, ty, tz, a[2][2][2];

      vol_split (vol, 0, x[q], &i, &tx);
      vol_split (vol, 1, y[q], &j, &ty);
      vol_split (vol, 2, z[q], &k, &tz);
      for (int c = 0; c < 8; c++)
        a[c >> 2][c >> 1 & 1][c & 1] = vol_at (vol, i + (c & 1), j + (c >> 2), k + (c >> 1 & 1));
      out[q] = vol_lerp (vol->level, a, tx, ty, tz);
    }
}

/* One axis of a grid: each line's voxel and fraction, and whether every
 * line lies on a voxel centre. */
static bool
vol_axis (const TgVolume *vol, int axis, const float *c, int n, int *i, float *t)
{
  bool on = true;

  for (int q = 0; q < n; q++)
    {
      vol_split (vol, axis, c[q], &i[q], &t[q]);
      on &= t[q] == 0.0f;
    }
  return on;
}

/* Rows of a voxel-aligned grid ahead of the one being copied whose
 * voxels are prefetched: a block's window of a large volume is rows of a
 * few cache lines a plane apart, which the hardware prefetchers do not
 * follow, so without it every row waits on memory. */
#define VOL_AHEAD 8

/* Starts loading the voxels of row R (j + k NY) of grid G, IX0 + [XA, XB)
 * along x, when it exists and lies in the volume. */
static inline void
vol_prefetch_row (const TgVolume *vol, const TgFieldGrid *g, const int *iy, const int *iz, int r,
                  int ix0, int xa, int xb)
{
  int j = r % g->ny, k = r / g->ny;
  const float *p;

  if (k >= g->nz || (unsigned) iy[j] >= (unsigned) vol->n[1]
      || (unsigned) iz[k] >= (unsigned) vol->n[2] || xa >= xb)
    return;
  p = vol->v + iy[j] * vol->st[1] + iz[k] * vol->st[2] + (ix0 + xa);
  for (int i = 0; i < xb - xa; i += 16)
    __builtin_prefetch (p + i);
  __builtin_prefetch (p + (xb - xa - 1));
}

int
tg__volume_grid (const TgVolume *vol, const TgFieldGrid *g, float *out, size_t sy, size_t sz)
{
  int ix[TG_FIELD_GRID_MAX], iy[TG_FIELD_GRID_MAX], iz[TG_FIELD_GRID_MAX];
  float tx[TG_FIELD_GRID_MAX], ty[TG_FIELD_GRID_MAX], tz[TG_FIELD_GRID_MAX];
  bool on_x, on_y, on_z, run;
  /* On the voxel centres every fraction is 0, and with finite voxels the
   * interpolation adds only zeros to the voxel (level - v then has the
   * point path's bits unless level is -0, where the sign of a zero voxel
   * would tell). */
  bool copy;
  int xa = 0, xb = 0;

  if (g->nx > TG_FIELD_GRID_MAX || g->ny > TG_FIELD_GRID_MAX || g->nz > TG_FIELD_GRID_MAX)
    return 1;
  on_x = vol_axis (vol, 0, g->xs, g->nx, ix, tx);
  on_y = vol_axis (vol, 1, g->ys, g->ny, iy, ty);
  on_z = vol_axis (vol, 2, g->zs, g->nz, iz, tz);
  copy = on_x && on_y && on_z && vol->finite && !(vol->level == 0.0f && signbit (vol->level));
  /* Along x the points are voxels ix[0] + i, of which i in [XA, XB) lie
   * in the volume: a row is a run of voxels between zeros. */
  run = vol->st[0] == 1;
  for (int i = 1; i < g->nx && run; i++)
    run = ix[i] == ix[0] + i;
  if (run)
    {
      xa = ix[0] < 0 ? (-ix[0] < g->nx ? -ix[0] : g->nx) : 0;
      xb = vol->n[0] - ix[0] < g->nx ? vol->n[0] - ix[0] : g->nx;
      xb = xb > xa ? xb : xa;
    }
  for (int k = 0; k < g->nz; k++)
    for (int j = 0; j < g->ny; j++)
      {
        float *o = out + (size_t) j * sy + (size_t) k * sz;

        if (copy)
          {
            bool in_yz = (unsigned) iy[j] < (unsigned) vol->n[1]
                         && (unsigned) iz[k] < (unsigned) vol->n[2];
            const float *row = vol->v + iy[j] * vol->st[1] + iz[k] * vol->st[2];
            float level = vol->level;

            if (run)
              {
                vol_prefetch_row (vol, g, iy, iz, k * g->ny + j + VOL_AHEAD, ix[0], xa, xb);
                if (in_yz)
                  {
                    const float *p = row + (ix[0] + xa);

                    for (int i = 0; i < xa; i++)
                      o[i] = level - 0.0f;
                    for (int i = xa; i < xb; i++)
                      o[i] = level - p[i - xa];
                    for (int i = xb; i < g->nx; i++)
                      o[i] = level - 0.0f;
                  }
                else
                  for (int i = 0; i < g->nx; i++)
                    o[i] = level - 0.0f;
              }
            else
              for (int i = 0; i < g->nx; i++)
                o[i] = level - (in_yz && (unsigned) ix[i] < (unsigned) vol->n[0]
                                  ? row[ix[i] * vol->st[0]] : 0.0f);
            continue;
          }
        for (int i = 0; i < g->nx; i++)
          {
            float a[2][2][2];

            for (int c = 0; c < 8; c++)
              a[c >> 2][c >> 1 & 1][c & 1]
                = vol_at (vol, ix[i] + (c & 1), iy[j] + (c >> 2), iz[k] + (c >> 1 & 1));
            o[i] = vol_lerp (vol->level, a, tx[i], ty[j], tz[k]);
          }
      }
  return 0;
}

/* One axis of a view: the N points C are voxels I0 + q, of which q in
 * [*LO, *HI) lie in the volume.  A point's voxel is vol_split's before it
 * clamps: a point clamped to two voxels outside is on that voxel (its
 * fraction 0) and every voxel around it is outside, so it has the value
 * of any point outside, LEVEL - 0. */
static bool
view_axis (const TgVolume *vol, int axis, const float *c, int n, int *i0, int *lo, int *hi)
{
  for (int q = 0; q < n; q++)
    {
      float cc = (c[q] - vol->org[axis]) * vol->inv[axis];

      if (!(fabsf (cc) < 1e9f) || cc != floorf (cc))
        return false;
      if (q == 0)
        *i0 = (int) cc;
      if ((int) cc != *i0 + q)
        return false;
    }
  *lo = *i0 < 0 ? (-*i0 < n ? -*i0 : n) : 0;
  *hi = vol->n[axis] - *i0 < n ? vol->n[axis] - *i0 : n;
  *hi = *hi > *lo ? *hi : *lo;
  return true;
}

int
tg__volume_view (const TgVolume *vol, const TgFieldGrid *g, TgFieldView *view)
{
  const int n[3] = { g->nx, g->ny, g->nz };
  const float *c[3] = { g->xs, g->ys, g->zs };
  int i0[3];
  int64_t lo = 0, hi = 0;

  /* The copy's conditions (tg__volume_grid): finite voxels, a level that
   * is not -0; and x stride 1, so that a row is read as one. */
  if (!vol->finite || (vol->level == 0.0f && signbit (vol->level)) || vol->st[0] != 1
      || n[0] < 1 || n[1] < 1 || n[2] < 1)
    return 1;
  for (int k = 0; k < 3; k++)
    if (!view_axis (vol, k, c[k], n[k], &i0[k], &view->lo[k], &view->hi[k]))
      return 1;
  view->v = vol->v;
  view->at = i0[0] + i0[1] * vol->st[1] + i0[2] * vol->st[2];
  view->sy = vol->st[1];
  view->sz = vol->st[2];
  view->level = vol->level;
  /* Every offset of the grid within int32: its corners bound them. */
  for (int q = 0; q < 8; q++)
    {
      int64_t o = (int64_t) view->at + (q & 1 ? n[0] - 1 : 0)
                  + (int64_t) view->sy * (q & 2 ? n[1] - 1 : 0)
                  + (int64_t) view->sz * (q & 4 ? n[2] - 1 : 0);

      lo = q == 0 || o < lo ? o : lo;
      hi = q == 0 || o > hi ? o : hi;
    }
  return lo >= INT32_MIN && hi <= INT32_MAX ? 0 : 1;
}

static inline float
vmax4 (float a, float b, float c, float d)
{
  float ab = a > b ? a : b, cd = c > d ? c : d;

  return ab > cd ? ab : cd;
}

/* The squared gradient bound of cell (I, J, K) (lower voxel), in voxel steps. */
static inline double
vol_cell_g2 (const TgVolume *vol, int i, int j, int k)
{
  float a[2][2][2], m[3] = { 0.0f, 0.0f, 0.0f };
  double g2 = 0.0;

  for (int c = 0; c < 8; c++)
    a[c >> 2][c >> 1 & 1][c & 1] = vol_at (vol, i + (c & 1), j + (c >> 2), k + (c >> 1 & 1));
  for (int u = 0; u < 2; u++)
    for (int w = 0; w < 2; w++)
      {
        m[0] = fmaxf (m[0], fabsf (a[u][w][1] - a[u][w][0]));
        m[1] = fmaxf (m[1], fabsf (a[1][u][w] - a[0][u][w]));
        m[2] = fmaxf (m[2], fabsf (a[u][1][w] - a[u][0][w]));
      }
  for (int q = 0; q < 3; q++)
    g2 += ((double) m[q] * vol->inv[q]) * ((double) m[q] * vol->inv[q]);
  return g2;
}

double
tg__volume_scan (TgVolume *vol, bool border)
{
  int lo = border ? -1 : 0, e[3];
  const ptrdiff_t *st = vol->st;
  double best = 0.0;
  bool finite = true;

  /* Inside a cell the trilinear derivative along x is a blend of the
   * cell's four x steps, so |grad| <= |(max x step, max y step, max z
   * step)| (over the voxel size) there; the field is continuous, so the
   * largest such bound over the cells bounds it everywhere. */
  for (int k = 0; k < vol->n[2]; k++)
    for (int j = 0; j < vol->n[1]; j++)
      {
        const float *row = vol->v + j * st[1] + k * st[2];
        for (int i = 0; i < vol->n[0]; i++)
          finite &= isfinite (row[i * st[0]]) != 0;
      }
  vol->finite = finite;
  if (!finite)
    return INFINITY;
  for (int k = 0; k < 3; k++)
    e[k] = border ? vol->n[k] : vol->n[k] - 1;
  for (int k = lo; k < e[2]; k++)
    for (int j = lo; j < e[1]; j++)
      {
        bool inner = j >= 0 && j + 1 < vol->n[1] && k >= 0 && k + 1 < vol->n[2];
        float fx = vol->inv[0], fy = vol->inv[1], fz = vol->inv[2];

        if (!inner)
          {
            for (int i = lo; i < e[0]; i++)
              {
                double g2 = vol_cell_g2 (vol, i, j, k);
                best = g2 > best ? g2 : best;
              }
            continue;
          }
        if (border)
          {
            double g0 = vol_cell_g2 (vol, -1, j, k), g1 = vol_cell_g2 (vol, vol->n[0] - 1, j, k);
            best = g0 > best ? g0 : best;
            best = g1 > best ? g1 : best;
          }
        /* The row's inner cells, read straight. */
        {
          const float *p00 = vol->v + j * st[1] + k * st[2], *p10 = p00 + st[1],
                      *p01 = p00 + st[2], *p11 = p10 + st[2];
          ptrdiff_t sx = st[0];
          float rb = 0.0f;

          /* vol_cell_g2 in float, with a relative margin for its rounding:
           * the voxels are finite, so max is a compare that vectorises. */
          for (int i = 0; i + 1 < vol->n[0]; i++)
            {
              ptrdiff_t a = i * sx, b = a + sx;
              float cx = vmax4 (fabsf (p00[b] - p00[a]), fabsf (p10[b] - p10[a]),
                                fabsf (p01[b] - p01[a]), fabsf (p11[b] - p11[a]));
              float cy = vmax4 (fabsf (p10[a] - p00[a]), fabsf (p10[b] - p00[b]),
                                fabsf (p11[a] - p01[a]), fabsf (p11[b] - p01[b]));
              float cz = vmax4 (fabsf (p01[a] - p00[a]), fabsf (p01[b] - p00[b]),
                                fabsf (p11[a] - p10[a]), fabsf (p11[b] - p10[b]));
              float g2 = (cx * fx) * (cx * fx) + (cy * fy) * (cy * fy) + (cz * fz) * (cz * fz);

              rb = g2 > rb ? g2 : rb;
            }
          best = (double) rb * (1.0 + 1e-5) > best ? (double) rb * (1.0 + 1e-5) : best;
        }
      }
  return sqrt (best);
}
