/* erosion.stream_power, the solver: landscape evolution by the stream
 * power law, dz/dt = U - K A^m S^n + G Qs / A + D lap z, one time step at
 * a time, each in O(n) apart from the flood's queue.
 *
 * A step:
 *  1. Flood.  A Priority-Flood from the world's edge (Barnes, Lehman and
 *     Mulla 2014, with the pit queue of their "improved" variant) gives
 *     every sample its spill level and visits samples in an order in
 *     which each comes after the one it drains to: the stack of Braun and
 *     Willett (2013), found without building donor lists.  A sample on a
 *     slope drains to its steepest lower neighbour on the filled surface
 *     (D8; such a neighbour was always visited first, as the flood
 *     visits samples by rising level), one in a lake or on a flat to the
 *     sample that flooded it, so lakes drain through their outlet.  The
 *     flood's queue is erosion.flow's radix heap (erosion_flow.h), which
 *     takes samples in a binary heap's order (height, then index); the
 *     flood is most of a step's time, a serial walk that jumps about the
 *     world (a cache miss or more per sample), so a step's cost grows a
 *     little faster than the samples.
 *  2. Drainage area: each sample's cell area, summed down the stack in
 *     reverse.
 *  3. Incision, implicit as Braun and Willett (2013): down the stack from
 *     the outlets, h = (h0 + U dt + F h_r) / (1 + F) with
 *     F = K dt A^m / L (n = 1, L the distance to the receiver h_r, which
 *     is already updated; none where A is below the channel-head area,
 *     which keeps the result from depending on the cell size: one cell of
 *     a coarse map would otherwise be a river), and Newton's method on
 *     h - h0 - U dt + K dt A^m ((h - h_r) / L)^n = 0 for other n.  It is
 *     stable for any dt: a river never cuts below its receiver.  A sample
 *     not above its receiver (a lake) is only uplifted.
 *  4. Deposition, up the stack: the sediment arriving (from upstream and
 *     incised here) settles by the xi-q law of Davy and Lague (2009) in
 *     FastScape's form (Yuan et al. 2019), a share G a / (A + G a) of the
 *     flux, solved for the flux leaving so it never goes negative.  What
 *     reaches a lake (a closed depression the flood found) goes to its
 *     outlet, which fills the lake from its deepest floor up, flat, before
 *     passing the rest on; lake floors do not incise.  Fans form where
 *     rivers leave steep ground, lakes and closed valleys fill.
 *  5. Hillslope diffusion, implicit (a row sweep then a column sweep, each
 *     a tridiagonal solve: unconditionally stable, no overshoot), rows or
 *     columns in parallel.
 *
 * The world's edge is base level: its samples keep their height, water
 * and sediment leave there.  Every serial loop runs in a fixed order and
 * every parallel one writes its own rows or columns, so the bytes do not
 * depend on the thread count.  Volumes are summed in fixed orders for the
 * budget a test checks: eroded = deposited + carried out.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/error.h>
#include <tgraph/hash.h>

#include "erosion_flow.h"
#include "erosion_stream_power.h"

/* Steps beyond this are refused by the node's check (a run's time). */
#define SP_STEPS_MAX 100000

int
tg__sp_steps (const TgSpParams *p)
{
  double s;

  if (!(p->duration_yr > 0.0) || !(p->dt_yr > 0.0))
    return 0;
  s = ceil (p->duration_yr / p->dt_yr - 1e-9);
  return s < 1.0 ? 1 : s > SP_STEPS_MAX ? SP_STEPS_MAX + 1 : (int) s;
}

/* --- the state of a run ---------------------------------------------------- */

static const int sp_dx[8] = { 1, -1, 0, 0, 1, -1, 1, -1 };
static const int sp_dy[8] = { 0, 0, 1, -1, 1, 1, -1, -1 };

typedef struct
{
  const TgSpOpts *o;
  const TgSpParams *p;
  int w, h;
  size_t n;
  double cell, cell_area;
  const float *uplift;
  double *z, *zn;   /* heights at the step's start and end (metres) */
  double *fill;     /* spill levels */
  double *area;     /* drainage area (m²) */
  double *qs;       /* sediment arriving at each sample in this step (m³) */
  int32_t *rec;     /* receiver; itself on the world's edge */
  int32_t *order;   /* the stack: every sample after its receiver */
  int32_t *rank;    /* each sample's place in ORDER */
  int32_t *pit;     /* the flood's queue of samples below the level */
  int32_t *lake;    /* a lake sample's outlet (the sample whose level floods it), else -1 */
  int32_t *lk_beg, *lk_len; /* an outlet's lake: a run of PIT (every lake's samples are
                             * queued together, before the flood goes on) */
  TgFlowQueue heap; /* the flood's queue (erosion.flow's: lowest first, ties by index) */
  double *ero, *dep; /* the run's incised and deposited depths (may be NULL) */
  double dt, rdiff; /* this step's dt and D dt / cell² */
  double kl[2];     /* K dt / L^n for the two distances to a receiver */
  double *cp, *den; /* the diffusion's tridiagonal factors */
} Sp;

static bool
sp_cancelled (const Sp *s)
{
  return s->o && s->o->cancelled && s->o->cancelled (s->o->ctx);
}

static int
sp_parallel (const Sp *s, int n, int grain, void (*fn) (void *, int, int), void *user)
{
  if (s->o && s->o->parallel)
    return s->o->parallel (s->o->ctx, n, grain, fn, user);
  fn (user, 0, n);
  return 0;
}

/* Step 1's spill levels from the flood, rows [BEGIN, END) in parallel: a
 * lake sample's is its outlet's height (the level the flood was at when
 * it took the outlet from the queue), every other sample's its own. */
static void
sp_fill_rows (void *user, int begin, int end)
{
  Sp *s = user;

  for (size_t k = (size_t) begin * s->w; k < (size_t) end * s->w; k++)
    s->fill[k] = s->z[s->lake[k] >= 0 ? (size_t) s->lake[k] : k];
}

/* Step 1: flood parents, lakes and the stack, then the spill levels. */
static int
sp_flood (Sp *s)
{
  int w = s->w, h = s->h;
  size_t nord = 0, head = 0, tail = 0;
  int32_t outlet = -1;
  double level = 0.0;
  int rc;

  memset (s->rec, 0xff, sizeof (int32_t) * s->n); /* -1: not reached */
  memset (s->lake, 0xff, sizeof (int32_t) * s->n);
  memset (s->lk_len, 0, sizeof (int32_t) * s->n);
  tg__flow_queue_reset (&s->heap);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
        {
          size_t k = (size_t) y * w + x;
          s->rec[k] = (int32_t) k;
          if ((rc = tg__flow_queue_push (&s->heap, tg__flow_key_f64 (s->z[k]), (int32_t) k)) < 0)
            return rc;
        }
  while (head < tail || s->heap.n > 0)
    {
      int32_t c;
      int cx = 0, cy = 0;
      bool edge;

      if (head < tail)
        c = s->pit[head++];
      else
        {
          /* The queue is empty: the last outlet's lake is complete. */
          if ((c = tg__flow_queue_pop (&s->heap)) < 0)
            return TG_ENOMEM;
          if (outlet >= 0)
            s->lk_len[outlet] = (int32_t) (tail - (size_t) s->lk_beg[outlet]);
          outlet = c;
          s->lk_beg[c] = (int32_t) tail;
          /* The level of the lake it floods: every sample queued from
           * here on lies at or below it. */
          level = s->z[c];
        }
      /* The flood jumps about the world: ask for the next sample's
       * neighbourhood while this one's is worked on. */
      {
        int32_t nx = head < tail ? s->pit[head] : tg__flow_queue_peek (&s->heap);
        if (nx >= w && (size_t) nx + (size_t) w < s->n)
          {
            __builtin_prefetch (s->rec + nx - w);
            __builtin_prefetch (s->rec + nx + w);
            __builtin_prefetch (s->z + nx - w);
            __builtin_prefetch (s->z + nx);
            __builtin_prefetch (s->z + nx + w);
          }
      }
      /* Only the edge's samples (their own receivers) need the bounds. */
      edge = s->rec[c] == c;
      if (edge)
        {
          cx = c % w;
          cy = c / w;
        }

      if ((nord & 0xfff) == 0 && sp_cancelled (s))
        return TG_ECANCELLED;
      s->rank[c] = (int32_t) nord;
      s->order[nord++] = c;
      for (int q = 0; q < 8; q++)
        {
          size_t k;
          if (edge)
            {
              int nx = cx + sp_dx[q], ny = cy + sp_dy[q];
              if (nx < 0 || ny < 0 || nx >= w || ny >= h)
                continue;
              k = (size_t) ny * w + nx;
            }
          else
            k = (size_t) ((ptrdiff_t) c + sp_dy[q] * (ptrdiff_t) w + sp_dx[q]);
          if (s->rec[k] >= 0)
            continue;
          s->rec[k] = c;
          if (s->z[k] <= level)
            {
              s->lake[k] = outlet;
              s->pit[tail++] = (int32_t) k;
            }
          else
            {
              if ((rc = tg__flow_queue_push (&s->heap, tg__flow_key_f64 (s->z[k]), (int32_t) k)) < 0)
                return rc;
            }
        }
    }
  if (outlet >= 0)
    s->lk_len[outlet] = (int32_t) (tail - (size_t) s->lk_beg[outlet]);
  return sp_parallel (s, h, 64, sp_fill_rows, s);
}

/* Step 1, receivers: a sample on open ground (its fill is its height)
 * drains to its steepest neighbour lower on the filled surface.  One in a
 * lake or on a flat drains to a neighbour on the same level that the
 * flood reached before it, picked by a hash of its position: water finds
 * its way across as a random walk towards the outlet, not along the
 * flood's straight breadth-first rays, which would carve straight
 * parallel grooves once the flat stands above its outlet. */
static void
sp_receiver_rows (void *user, int begin, int end)
{
  Sp *s = user;
  int w = s->w;

  for (int y = begin + 1; y < end + 1; y++)
    for (int x = 1; x < w - 1; x++)
      {
        size_t k = (size_t) y * w + x;
        double best = 0.0;
        int32_t r = s->rec[k], cand[8];
        int nc = 0;
        if (!(s->fill[k] > s->z[k]))
          for (int q = 0; q < 8; q++)
            {
              size_t nb = (size_t) (y + sp_dy[q]) * w + (size_t) (x + sp_dx[q]);
              double drop = s->fill[k] - s->fill[nb];
              double slope = q < 4 ? drop : drop * M_SQRT1_2;
              if (drop > 0.0 && slope > best)
                {
                  best = slope;
                  r = (int32_t) nb;
                }
            }
        if (best > 0.0)
          {
            s->rec[k] = r;
            continue;
          }
        for (int q = 0; q < 8; q++)
          {
            size_t nb = (size_t) (y + sp_dy[q]) * w + (size_t) (x + sp_dx[q]);
            if (s->fill[nb] == s->fill[k] && s->rank[nb] < s->rank[k])
              cand[nc++] = (int32_t) nb;
          }
        if (nc > 0)
          s->rec[k] = cand[tg_hash2 (0x5f3759dfu, x, y) % (uint32_t) nc];
      }
}

/* Whether receiver B of A is a diagonal neighbour (they are neighbours). */
static inline bool
sp_diagonal (const Sp *s, int32_t a, int32_t b)
{
  int32_t d = a - b;

  return !(d == 1 || d == -1 || d == s->w || d == -s->w);
}

static double
sp_uplift (const Sp *s, size_t k)
{
  double u = s->p->uplift_m_per_yr * s->dt;

  return s->uplift ? u * (double) s->uplift[k] : u;
}

/* Step 3 for one sample: the new height from H0 (uplifted), its
 * receiver's new height HR, F = K dt A^m / L^n. */
static double
sp_incise (double h0, double hr, double f, double n)
{
  double h;

  if (!(h0 > hr) || !(f > 0.0))
    return h0;
  if (n == 1.0)
    return (h0 + f * hr) / (1.0 + f);
  /* Newton on g(h) = h - h0 + F (h - hr)^n, increasing on (hr, h0]; for
   * n > 1 it is convex there and the iterates fall monotonically from h0
   * to the root, for n < 1 a step below hr is halved back instead. */
  h = h0;
  for (int it = 0; it < 50; it++)
    {
      double d = h - hr, g = h - h0 + f * pow (d, n), dg = 1.0 + n * f * pow (d, n - 1.0);
      double nh = h - g / dg;
      if (!(nh > hr))
        nh = hr + 0.5 * (h - hr);
      if (fabs (nh - h) <= 1e-12 * (1.0 + fabs (h)))
        {
          h = nh;
          break;
        }
      h = nh;
    }
  return h;
}

typedef struct
{
  double depth;
  int32_t idx;
} SpDepth;

/* Whether floor X comes before Y: deeper first, then by index. */
static inline bool
deeper (SpDepth x, SpDepth y)
{
  return x.depth > y.depth || (x.depth == y.depth && x.idx < y.idx);
}

/* Moves D[I] down the heap D[0..N) whose top is the deepest floor. */
static void
depth_sift (SpDepth *d, size_t n, size_t i)
{
  SpDepth it = d[i];

  for (;;)
    {
      size_t l = 2 * i + 1, c;
      if (l >= n)
        break;
      c = l + 1 < n && deeper (d[l + 1], d[l]) ? l + 1 : l;
      if (!deeper (d[c], it))
        break;
      d[i] = d[c];
      i = c;
    }
  d[i] = it;
}

/* Takes the deepest floor of the heap D[0..N) to D[N - 1]. */
static void
depth_pop (SpDepth *d, size_t n)
{
  SpDepth top = d[0];

  d[0] = d[n - 1];
  d[n - 1] = top;
  if (n > 2)
    depth_sift (d, n - 1, 0);
}

/* Lays sediment V (m³) into the lake of OUTLET, deepest first, so its
 * floor rises flat: a lake fills from the bottom, as a real one does,
 * never in streaks along the routes across it.  Returns the volume used
 * (all of V, or the lake's capacity), or -1 when out of memory. */
static double
sp_fill_lake (Sp *s, int32_t outlet, double v, TgSpStats *st)
{
  const int32_t *cells = s->pit + s->lk_beg[outlet];
  int len = s->lk_len[outlet];
  double a = s->cell_area, cap = 0.0, used = 0.0, level = 0.0, sum = 0.0;
  SpDepth *d;
  int j;

  for (int k = 0; k < len; k++)
    cap += (s->fill[cells[k]] - s->z[cells[k]]) * a;
  if (!(v < cap))
    {
      /* Full: every floor up to the spill level. */
      for (int k = 0; k < len; k++)
        {
          int32_t i = cells[k];
          double t = s->fill[i] - s->z[i];
          s->zn[i] += t;
          if (s->dep)
            s->dep[i] += t;
          used += t * a;
        }
      st->deposited += used;
      return used;
    }
  if (!(v > 0.0))
    return 0.0;
  if (!(d = malloc (sizeof (SpDepth) * (size_t) len)))
    return -1.0;
  for (int k = 0; k < len; k++)
    d[k] = (SpDepth) { s->fill[cells[k]] - s->z[cells[k]], cells[k] };
  /* The floors deepest first, taken from a heap only as far as they are
   * needed (the k-th deepest lands in d[len - 1 - k]): usually a few of a
   * large lake's. */
  for (size_t i = (size_t) len / 2; i-- > 0;)
    depth_sift (d, (size_t) len, i);
  /* The j deepest floors rise to LEVEL below the spill level, with
   * a * sum (depth - level) = v, and the next floor is not deeper. */
  for (j = 1; j <= len; j++)
    {
      depth_pop (d, (size_t) (len - j + 1));
      sum += d[len - j].depth;
      level = (sum - v / a) / j;
      if (j == len || d[0].depth <= level)
        break;
    }
  for (int k = 0; k < j && k < len; k++)
    {
      const SpDepth *f = &d[len - 1 - k];
      double t = f->depth - level;
      if (!(t > 0.0))
        continue;
      s->zn[f->idx] += t;
      if (s->dep)
        s->dep[f->idx] += t;
      used += t * a;
    }
  free (d);
  st->deposited += used;
  return used;
}

/* Step 3's parts that need no upstream result, rows [BEGIN, END) in
 * parallel: ZN gets each sample's height uplifted (its own on the edge)
 * and QS (free until step 4) F = K dt A^m / L^n, 0 where nothing incises
 * (the edge, under water, above the channel head). */
static void
sp_incision_rows (void *user, int begin, int end)
{
  Sp *s = user;
  const TgSpParams *p = s->p;

  for (size_t i = (size_t) begin * s->w; i < (size_t) end * s->w; i++)
    {
      int32_t r = s->rec[i];
      if (r == (int32_t) i)
        {
          s->zn[i] = s->z[i];
          s->qs[i] = 0.0;
          continue;
        }
      s->zn[i] = s->z[i] + sp_uplift (s, i);
      if (s->lake[i] >= 0 || s->area[i] < p->channel_area)
        s->qs[i] = 0.0; /* under water, or above the channel head: no incision */
      else
        s->qs[i] = s->kl[sp_diagonal (s, (int32_t) i, r)] * pow (s->area[i], p->m);
    }
}

static void
sp_zero_rows (void *user, int begin, int end)
{
  Sp *s = user;

  memset (s->qs + (size_t) begin * s->w, 0, sizeof (double) * (size_t) (end - begin) * s->w);
}

/* Steps 2 to 4.  0, TG_ENOMEM or TG_ECANCELLED. */
static int
sp_fluvial (Sp *s, TgSpStats *st)
{
  const TgSpParams *p = s->p;
  size_t n = s->n;
  double a = s->cell_area, kdt = p->erodibility * s->dt, g = p->deposition;
  int rc;

  s->kl[0] = kdt / pow (s->cell, p->n);
  s->kl[1] = kdt / pow (s->cell * M_SQRT2, p->n);
  for (size_t k = 0; k < n; k++)
    s->area[k] = a;
  for (size_t k = n; k-- > 0;)
    {
      int32_t i = s->order[k], r = s->rec[i];
      if ((k & 0xfff) == 0 && sp_cancelled (s))
        return TG_ECANCELLED;
      if (r != i)
        s->area[r] += s->area[i];
    }
  if ((rc = sp_parallel (s, s->h, 16, sp_incision_rows, s)) < 0)
    return rc;
  /* Down the stack: a receiver's new height comes first.  (F = 0 leaves
   * the uplifted height.) */
  for (size_t k = 0; k < n; k++)
    {
      int32_t i = s->order[k], r = s->rec[i];
      if ((k & 0xfff) == 0 && sp_cancelled (s))
        return TG_ECANCELLED;
      if (r != i && s->qs[i] > 0.0)
        s->zn[i] = sp_incise (s->zn[i], s->zn[r], s->qs[i], p->n);
    }
  if ((rc = sp_parallel (s, s->h, 64, sp_zero_rows, s)) < 0)
    return rc;
  /* Up the stack: a sample's sediment is complete once its donors are
   * done.  What reaches a lake sample goes to its outlet, which fills
   * the lake before passing the rest on. */
  for (size_t k = n; k-- > 0;)
    {
      int32_t i = s->order[k], r = s->rec[i];
      double up = 0.0, e = 0.0, qin, d;
      if ((k & 0xfff) == 0 && sp_cancelled (s))
        return TG_ECANCELLED;
      if (r != i)
        {
          up = sp_uplift (s, (size_t) i);
          e = s->z[i] + up - s->zn[i];
          e = e > 0.0 ? e : 0.0;
        }
      qin = s->qs[i] + e * a;
      st->eroded += e * a;
      st->uplift += up * a;
      if (s->ero)
        s->ero[i] += e;
      if (s->lake[i] >= 0)
        {
          s->qs[s->lake[i]] += qin;
          continue;
        }
      if (s->lk_len[i] > 0)
        {
          double used = sp_fill_lake (s, i, qin, st);
          if (used < 0.0)
            return TG_ENOMEM;
          qin -= used;
        }
      if (r == i)
        {
          st->outflux += qin;
          continue;
        }
      d = g > 0.0 ? g * qin / (s->area[i] + g * a) : 0.0;
      s->zn[i] += d;
      s->qs[r] += qin - d * a;
      if (s->dep)
        s->dep[i] += d;
      st->deposited += d * a;
    }
  return 0;
}

/* --- step 5: implicit diffusion, one tridiagonal sweep per axis ------------ */

/* Factors of the system -r u[k-1] + (1 + 2r) u[k] - r u[k+1] = d[k] on
 * 1 .. L-2 (Thomas' algorithm; the same for every line of the sweep). */
static void
sp_diffusion_factors (Sp *s, int len)
{
  double r = s->rdiff, b = 1.0 + 2.0 * r;

  s->den[1] = b;
  s->cp[1] = -r / b;
  for (int k = 2; k < len - 1; k++)
    {
      s->den[k] = b + r * s->cp[k - 1];
      s->cp[k] = -r / s->den[k];
    }
}

/* Rows [BEGIN, END) of the interior, each solved along x in place. */
static void
sp_diffuse_rows (void *user, int begin, int end)
{
  Sp *s = user;
  int w = s->w;
  double r = s->rdiff;

  for (int y = begin + 1; y < end + 1; y++)
    {
      double *u = s->zn + (size_t) y * w;
      /* Forward: u[k - 1] holds the edge value (k = 1) or the previous
       * eliminated right-hand side; the last one also takes the edge. */
      for (int k = 1; k < w - 1; k++)
        {
          double d = u[k] + r * u[k - 1];
          if (k == w - 2)
            d += r * u[w - 1];
          u[k] = d / s->den[k];
        }
      for (int k = w - 3; k >= 1; k--)
        u[k] -= s->cp[k] * u[k + 1];
    }
}

/* Columns [BEGIN, END) of the interior (a block at a time, walking rows
 * so memory is read in order), each solved along y in place. */
static void
sp_diffuse_cols (void *user, int begin, int end)
{
  Sp *s = user;
  int w = s->w, h = s->h, x0 = begin + 1, x1 = end + 1;
  double r = s->rdiff, *z = s->zn;

  for (int y = 1; y < h - 1; y++)
    {
      double *u = z + (size_t) y * w, *up = u - w;
      for (int x = x0; x < x1; x++)
        {
          double d = u[x] + r * up[x];
          if (y == h - 2)
            d += r * u[x + w];
          u[x] = d / s->den[y];
        }
    }
  for (int y = h - 3; y >= 1; y--)
    {
      double *u = z + (size_t) y * w, *dn = u + w;
      for (int x = x0; x < x1; x++)
        u[x] -= s->cp[y] * dn[x];
    }
}

static double
sp_interior_sum (const Sp *s)
{
  double sum = 0.0;

  for (int y = 1; y < s->h - 1; y++)
    for (int x = 1; x < s->w - 1; x++)
      sum += s->zn[(size_t) y * s->w + x];
  return sum;
}

static int
sp_diffuse (Sp *s, TgSpStats *st)
{
  double before;
  int rc;

  if (!(s->p->diffusivity > 0.0) || s->w < 3 || s->h < 3)
    return 0;
  before = sp_interior_sum (s);
  s->rdiff = s->p->diffusivity * s->dt / s->cell_area;
  sp_diffusion_factors (s, s->w);
  if ((rc = sp_parallel (s, s->h - 2, 16, sp_diffuse_rows, s)) < 0)
    return rc;
  sp_diffusion_factors (s, s->h);
  if ((rc = sp_parallel (s, s->w - 2, 64, sp_diffuse_cols, s)) < 0)
    return rc;
  st->diffused += (before - sp_interior_sum (s)) * s->cell_area;
  return 0;
}

/* --- the run --------------------------------------------------------------- */

static void
sp_clear (Sp *s)
{
  free (s->fill);
  free (s->area);
  free (s->qs);
  free (s->rec);
  free (s->order);
  free (s->pit);
  free (s->rank);
  free (s->lake);
  free (s->lk_beg);
  free (s->lk_len);
  tg__flow_queue_free (&s->heap);
  free (s->cp);
  free (s->den);
}

int
tg__sp_run (const TgSpOpts *o, const TgSpParams *p, int w, int h, double cell_m, double *z,
            const float *uplift, const TgSpOut *out)
{
  Sp s = { 0 };
  TgSpStats st = { 0 };
  int steps = tg__sp_steps (p), rc = 0, len = w > h ? w : h;
  double *own;

  s.o = o;
  s.p = p;
  s.w = w;
  s.h = h;
  s.n = (size_t) w * (size_t) h;
  s.cell = cell_m;
  s.cell_area = cell_m * cell_m;
  s.uplift = uplift;
  s.ero = out ? out->eroded : NULL;
  s.dep = out ? out->deposited : NULL;
  for (size_t k = 0; k < s.n; k++)
    {
      if (s.ero)
        s.ero[k] = 0.0;
      if (s.dep)
        s.dep[k] = 0.0;
    }
  s.zn = own = malloc (sizeof (double) * s.n);
  s.fill = malloc (sizeof (double) * s.n);
  s.area = malloc (sizeof (double) * s.n);
  s.qs = malloc (sizeof (double) * s.n);
  s.rec = malloc (sizeof (int32_t) * s.n);
  s.order = malloc (sizeof (int32_t) * s.n);
  s.pit = malloc (sizeof (int32_t) * s.n);
  s.rank = malloc (sizeof (int32_t) * s.n);
  s.lake = malloc (sizeof (int32_t) * s.n);
  s.lk_beg = malloc (sizeof (int32_t) * s.n);
  s.lk_len = malloc (sizeof (int32_t) * s.n);
  s.cp = malloc (sizeof (double) * (size_t) (len + 1));
  s.den = malloc (sizeof (double) * (size_t) (len + 1));
  if (!own || !s.fill || !s.area || !s.qs || !s.rec || !s.order || !s.pit || !s.rank || !s.lake || !s.lk_beg
      || !s.lk_len || !s.cp || !s.den)
    {
      free (own);
      sp_clear (&s);
      return TG_ENOMEM;
    }
  s.z = z;
  for (int t = 0; t < steps && rc == 0; t++)
    {
      double *tmp;
      s.dt = t < steps - 1 ? p->dt_yr : p->duration_yr - p->dt_yr * (double) (steps - 1);
      if (!(s.dt > 0.0))
        break;
      if (sp_cancelled (&s))
        rc = TG_ECANCELLED;
      else if ((rc = sp_flood (&s)) == 0 && w > 2 && h > 2)
        rc = sp_parallel (&s, h - 2, 16, sp_receiver_rows, &s);
      if (rc < 0)
        break;
      if ((rc = sp_fluvial (&s, &st)) < 0 || (rc = sp_diffuse (&s, &st)) < 0)
        break;
      tmp = s.z;
      s.z = s.zn;
      s.zn = tmp;
      st.steps++;
    }
  /* The steps swap the caller's array and OWN; the result goes to Z. */
  if (rc == 0 && s.z != z)
    memcpy (z, s.z, sizeof (double) * s.n);
  free (own);
  if (rc == 0 && out && out->area)
    memcpy (out->area, s.area, sizeof (double) * s.n);
  if (out && out->stats)
    *out->stats = st;
  sp_clear (&s);
  return rc;
}
