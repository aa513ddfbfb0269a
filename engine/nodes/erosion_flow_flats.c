/* erosion.flow's tiled scheme, the reduce of step 2: the ranks of the
 * flats that cross tile edges, holding one tile's list of flat samples at
 * a time plus border-sized state, however large the lakes.
 *
 * A rank (tg__flow_flat_rank) is made of two breadth-first distances, to
 * the flat's way out and from the higher ground around it, and of the
 * flat's largest distance from higher ground.  The distances are found by
 * label correction over tiles: a tile's walk starts from its own seeds
 * and from what its neighbours' border samples offer (their distance plus
 * one); when that lowers the tile's own border distances, the tiles
 * across those samples are walked again, the one offered the smallest
 * distance first (Dijkstra over tiles, which keeps the rework small).
 * Distances only fall and the fixed point is the shortest paths, which
 * are unique: the numbers one walk over every list at once gives.  The
 * parts of a flat in different tiles are joined by union-find over the
 * border for its maximum; a last pass over the tiles writes the ranks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/error.h>

#include "erosion_flow.h"

#define dx tg__flow_dx
#define dy tg__flow_dy

/* What the reduce keeps between tiles: per border node and per tile. */
typedef struct
{
  const TgTiling *t;
  const TgFlowBlobs *io;
  int fw, fh, nt;
  TgFlowNodes nd;
  float *lev;       /* level of the node's listed flat; NAN: none (or not read yet) */
  int32_t *dist[2]; /* to the way out, from higher ground; 0: none yet */
  int32_t *comp;    /* the node's flat part in its tile as a union-find id, -1: none */
  int32_t *parent;  /* union-find over part ids (a tile's parts: its nodes' range) */
  int32_t *top;     /* per part id: largest distance from higher ground */
  int64_t *count;   /* per tile: samples in its list, -1: not read yet */
  int32_t *prio;    /* per tile: least distance offered since its last walk */
  uint8_t *pend;    /* per tile: the kinds of distance offered (bit 1 << F) */
  TgFlowHeap heap;  /* tiles by PRIO, with stale entries */
  size_t held, peak;
} Reduce;

typedef struct
{
  int32_t d, i;
} Offer;

/* One tile's list and its walks. */
typedef struct
{
  int k;
  TgFlowRect r;
  int nb;
  void *blob;
  int64_t n;
  const int64_t *g;
  const float *lev;
  const uint8_t *fl;
  int32_t *map;     /* tile sample -> list index, -1: not listed */
  int32_t *dist[2]; /* per list sample, as in Reduce */
  int32_t *part;    /* per list sample: its flat part in the tile, from 0 */
  int32_t *queue;
  Offer *offer;     /* per border sample */
  int32_t n_parts;
  unsigned kinds;   /* the distances walked (bit 1 << F), the parts with F = 1 */
} Walk;

enum
{
  NOT_PENDING = INT32_MAX
};

static void
walk_clear (Walk *w)
{
  free (w->blob);
  free (w->map);
  free (w->dist[0]);
  free (w->dist[1]);
  free (w->part);
  free (w->queue);
  free (w->offer);
  memset (w, 0, sizeof *w);
}

static int
offer_cmp (const void *pa, const void *pb)
{
  const Offer *a = pa, *b = pb;

  if (a->d != b->d)
    return a->d < b->d ? -1 : 1;
  return (a->i > b->i) - (a->i < b->i);
}

/* The list indices of sample C's neighbours on its flat inside the
 * tile, in J[0..returned). */
static int
flat_neighbours (const Walk *w, int fw, int32_t c, int32_t j[8])
{
  int cx = (int) (w->g[c] % fw) - w->r.x0, cy = (int) (w->g[c] / fw) - w->r.y0, n = 0;

  for (int q = 0; q < 8; q++)
    {
      int x = cx + dx[q], y = cy + dy[q];
      int32_t i;
      if (x < 0 || x >= w->r.w || y < 0 || y >= w->r.h)
        continue;
      i = w->map[(size_t) y * w->r.w + x];
      if (i >= 0 && w->lev[i] == w->lev[c])
        j[n++] = i;
    }
  return n;
}

/* The tile's parts: its flats, as far as they lie in it, each one walked
 * from its first sample in list order. */
static int
walk_parts (Walk *w, int fw)
{
  w->n_parts = 0;
  for (int64_t i = 0; i < w->n; i++)
    w->part[i] = -1;
  for (int64_t i = 0; i < w->n; i++)
    if (w->part[i] < 0)
      {
        size_t head = 0, tail = 0;
        /* Every part touches the tile's border (step 2 listed only those),
         * so its id stays within the tile's range of nodes. */
        if (w->n_parts == w->nb)
          return TG_EPARSE;
        w->part[i] = w->n_parts++;
        w->queue[tail++] = (int32_t) i;
        while (head < tail)
          {
            int32_t c = w->queue[head++], j[8];
            for (int m = flat_neighbours (w, fw, c, j); m-- > 0;)
              if (w->part[j[m]] < 0)
                {
                  w->part[j[m]] = w->part[c];
                  w->queue[tail++] = j[m];
                }
          }
      }
  return 0;
}

/* Gives sample C's unreached neighbours on its flat its distance + 1 and
 * queues them; returns the queue's new end. */
static size_t
walk_hand_on (Walk *w, int fw, int32_t *d, int32_t c, size_t tail)
{
  int32_t j[8];

  for (int m = flat_neighbours (w, fw, c, j); m-- > 0;)
    if (d[j[m]] == 0)
      {
        d[j[m]] = d[c] + 1;
        w->queue[tail++] = j[m];
      }
  return tail;
}

/* Distances of kind F (0: to the way out, 1: from higher ground) over
 * the tile: its own seeds at 1 and the neighbours' offers (sorted), one
 * distance at a time as in a breadth-first walk, so that each sample's
 * first distance is its least. */
static void
walk_distances (const Reduce *rd, Walk *w, int f)
{
  uint8_t bit = f == 0 ? TG__FLAT_DRAIN : TG__FLAT_HIGH;
  int32_t *d = w->dist[f];
  const int32_t *bd = rd->dist[f];
  size_t head = 0, tail = 0, n_off = 0, o = 0;

  for (int64_t i = 0; i < w->n; i++)
    {
      d[i] = 0;
      if (w->fl[i] & bit)
        {
          d[i] = 1;
          w->queue[tail++] = (int32_t) i;
        }
    }
  for (int b = 0; b < w->nb; b++)
    {
      int x, y;
      int32_t i, best = 0;
      tg__flow_border_xy (w->r.w, w->r.h, b, &x, &y);
      if ((i = w->map[(size_t) y * w->r.w + x]) < 0)
        continue;
      for (int q = 0; q < 8; q++)
        {
          int gx = w->r.x0 + x + dx[q], gy = w->r.y0 + y + dy[q], tv;
          int64_t v;
          if (gx < 0 || gx >= rd->fw || gy < 0 || gy >= rd->fh
              || (gx >= w->r.x0 && gx < w->r.x0 + w->r.w && gy >= w->r.y0
                  && gy < w->r.y0 + w->r.h))
            continue;
          v = tg__flow_node_of (&rd->nd, gx, gy, &tv);
          if (rd->lev[v] == w->lev[i] && bd[v] > 0 && (best == 0 || bd[v] + 1 < best))
            best = bd[v] + 1;
        }
      if (best > 0)
        w->offer[n_off++] = (Offer) { best, i };
    }
  qsort (w->offer, n_off, sizeof (Offer), offer_cmp);
  while (head < tail || o < n_off)
    {
      int32_t level = head < tail ? d[w->queue[head]] : w->offer[o].d;
      size_t o0 = o;
      if (o < n_off && w->offer[o].d < level)
        level = w->offer[o].d;
      /* The offers of this distance take it before any sample of it hands
       * on its own (a neighbour's would be one more). */
      for (; o < n_off && w->offer[o].d == level; o++)
        if (d[w->offer[o].i] == 0)
          d[w->offer[o].i] = level;
        else
          w->offer[o].i = -1; /* reached no further away already */
      for (size_t k = o0; k < o; k++)
        if (w->offer[k].i >= 0)
          tail = walk_hand_on (w, rd->fw, d, w->offer[k].i, tail);
      while (head < tail && d[w->queue[head]] == level)
        tail = walk_hand_on (w, rd->fw, d, w->queue[head++], tail);
    }
}

/* Reads tile K's list and walks the distances of KINDS from what the
 * border holds; the parts go with the distances from higher ground. */
static int
walk_tile (Reduce *rd, int k, unsigned kinds, Walk *w)
{
  int rc;
  size_t n, nts, bytes;

  memset (w, 0, sizeof *w);
  w->k = k;
  w->kinds = kinds;
  w->r = tg__flow_tile_rect (rd->t, rd->fw, rd->fh, k % rd->t->nx, k / rd->t->nx);
  w->nb = tg__flow_border_count (w->r.w, w->r.h);
  if ((rc = tg__flow_get_flats (rd->io, k % rd->t->nx, k / rd->t->nx, &w->blob, &w->n, &w->g)) < 0)
    return rc;
  w->lev = (const float *) (w->g + w->n);
  w->fl = (const uint8_t *) (w->lev + w->n);
  if (w->n == 0)
    return 0;
  n = (size_t) w->n;
  nts = (size_t) w->r.w * w->r.h;
  if (n > nts)
    return TG_EPARSE;
  w->map = malloc (sizeof (int32_t) * nts);
  w->dist[0] = malloc (sizeof (int32_t) * n);
  w->dist[1] = malloc (sizeof (int32_t) * n);
  w->part = malloc (sizeof (int32_t) * n);
  w->queue = malloc (sizeof (int32_t) * n);
  w->offer = malloc (sizeof (Offer) * w->nb);
  bytes = n * (sizeof (int64_t) + sizeof (float) + 1 + 4 * sizeof (int32_t))
          + sizeof (int32_t) * nts + sizeof (Offer) * w->nb;
  if (rd->held + bytes > rd->peak)
    rd->peak = rd->held + bytes;
  if (!w->map || !w->dist[0] || !w->dist[1] || !w->part || !w->queue || !w->offer)
    return TG_ENOMEM;
  memset (w->map, 0xff, sizeof (int32_t) * nts);
  for (size_t i = 0; i < n; i++)
    {
      int64_t x = w->g[i] % rd->fw - w->r.x0, y = w->g[i] / rd->fw - w->r.y0;
      if (w->g[i] < 0 || x < 0 || x >= w->r.w || y < 0 || y >= w->r.h)
        return TG_EPARSE;
      w->map[y * w->r.w + x] = (int32_t) i;
    }
  if ((kinds & 2) && (rc = walk_parts (w, rd->fw)) < 0)
    return rc;
  for (int f = 0; f < 2; f++)
    if (kinds & (1u << f))
      walk_distances (rd, w, f);
  return 0;
}

static int
offer_tile (Reduce *rd, int tile, unsigned kinds, int32_t d)
{
  rd->pend[tile] |= kinds;
  if (d >= rd->prio[tile])
    return 0;
  rd->prio[tile] = d;
  return tg__flow_heap_push (&rd->heap, (float) d, tile);
}

/* After a walk: the tile's border levels, distances and parts, its parts'
 * largest distance from higher ground, and offers to the tiles across
 * border samples whose distance fell.  A kind not walked has not changed
 * since the tile's last walk, nor have its parts. */
static int
walk_publish (Reduce *rd, const Walk *w)
{
  int64_t off = rd->nd.off[w->k];
  int rc = 0;

  if (w->kinds & 2)
    {
      for (int32_t p = 0; p < w->n_parts; p++)
        rd->top[off + p] = 0;
      for (int64_t i = 0; i < w->n; i++)
        if (w->dist[1][i] > rd->top[off + w->part[i]])
          rd->top[off + w->part[i]] = w->dist[1][i];
    }
  for (int b = 0; b < w->nb && rc == 0; b++)
    {
      int x, y;
      int64_t u = off + b;
      int32_t i = -1;
      tg__flow_border_xy (w->r.w, w->r.h, b, &x, &y);
      if (w->n > 0)
        i = w->map[(size_t) y * w->r.w + x];
      rd->lev[u] = i >= 0 ? w->lev[i] : NAN;
      if (w->kinds & 2)
        rd->comp[u] = i >= 0 ? (int32_t) (off + w->part[i]) : -1;
      for (int f = 0; f < 2 && i >= 0 && rc == 0; f++)
        {
          int32_t d;
          if (!(w->kinds & (1u << f)) || (d = w->dist[f][i]) == rd->dist[f][u])
            continue;
          rd->dist[f][u] = d;
          for (int q = 0; q < 8 && rc == 0; q++)
            {
              int gx = w->r.x0 + x + dx[q], gy = w->r.y0 + y + dy[q], tv;
              int64_t v;
              if (gx < 0 || gx >= rd->fw || gy < 0 || gy >= rd->fh)
                continue;
              v = tg__flow_node_of (&rd->nd, gx, gy, &tv);
              if (tv != w->k && (rd->count[tv] < 0 || rd->lev[v] == w->lev[i]))
                rc = offer_tile (rd, tv, 1u << f, d + 1);
            }
        }
    }
  return rc;
}

static int32_t
uf_find (int32_t *parent, int32_t a)
{
  while (parent[a] != a)
    {
      parent[a] = parent[parent[a]];
      a = parent[a];
    }
  return a;
}

/* Joins the parts that meet across tile edges; a root's TOP becomes its
 * flat's largest distance from higher ground. */
static void
join_parts (Reduce *rd)
{
  for (int64_t u = 0; u < rd->nd.off[rd->nt]; u++)
    rd->parent[u] = (int32_t) u;
  for (int k = 0; k < rd->nt; k++)
    for (int64_t u = rd->nd.off[k]; u < rd->nd.off[k + 1]; u++)
      {
        int gx, gy;
        if (rd->comp[u] < 0)
          continue;
        tg__flow_node_xy (&rd->nd, k, u, &gx, &gy);
        for (int q = 0; q < 8; q++)
          {
            int x = gx + dx[q], y = gy + dy[q], tv;
            int64_t v;
            int32_t a, b;
            if (x < 0 || x >= rd->fw || y < 0 || y >= rd->fh)
              continue;
            v = tg__flow_node_of (&rd->nd, x, y, &tv);
            if (tv == k || rd->comp[v] < 0 || rd->lev[v] != rd->lev[u])
              continue;
            a = uf_find (rd->parent, rd->comp[u]);
            b = uf_find (rd->parent, rd->comp[v]);
            if (a == b)
              continue;
            rd->parent[b] = a;
            if (rd->top[b] > rd->top[a])
              rd->top[a] = rd->top[b];
          }
      }
}

static void
reduce_clear (Reduce *rd)
{
  free (rd->nd.off);
  free (rd->lev);
  free (rd->dist[0]);
  free (rd->dist[1]);
  free (rd->comp);
  free (rd->parent);
  free (rd->top);
  free (rd->count);
  free (rd->prio);
  free (rd->pend);
  free (rd->heap.a);
}

int
tg__flow_reduce_flats (const TgTiling *t, int fw, int fh, const TgFlowBlobs *io,
                       size_t *work_bytes)
{
  Reduce rd = { .t = t, .io = io, .fw = fw, .fh = fh, .nt = t->nx * t->ny };
  Walk w = { 0 };
  int64_t nn;
  int rc;

  if ((rc = tg__flow_nodes_init (&rd.nd, t, fw, fh)) < 0)
    return rc;
  nn = rd.nd.off[rd.nt];
  if (nn > INT32_MAX)
    {
      reduce_clear (&rd);
      return TG_ERANGE;
    }
  rd.lev = malloc (sizeof (float) * (nn ? nn : 1));
  rd.dist[0] = calloc (nn ? nn : 1, sizeof (int32_t));
  rd.dist[1] = calloc (nn ? nn : 1, sizeof (int32_t));
  rd.comp = malloc (sizeof (int32_t) * (nn ? nn : 1));
  rd.parent = malloc (sizeof (int32_t) * (nn ? nn : 1));
  rd.top = calloc (nn ? nn : 1, sizeof (int32_t));
  rd.count = malloc (sizeof (int64_t) * rd.nt);
  rd.prio = malloc (sizeof (int32_t) * rd.nt);
  rd.pend = calloc (rd.nt, 1);
  rd.held = (size_t) nn * (sizeof (float) + 5 * sizeof (int32_t))
            + (size_t) rd.nt * (2 * sizeof (int64_t) + sizeof (int32_t) + 1);
  rc = TG_ENOMEM;
  if (!rd.lev || !rd.dist[0] || !rd.dist[1] || !rd.comp || !rd.parent || !rd.top || !rd.count
      || !rd.prio || !rd.pend)
    goto out;
  for (int64_t u = 0; u < nn; u++)
    {
      rd.lev[u] = NAN;
      rd.comp[u] = -1;
    }
  /* Every tile is walked once (its seeds are not known before), then
   * again while its neighbours offer less than it had. */
  rc = 0;
  for (int k = 0; k < rd.nt && rc == 0; k++)
    {
      rd.count[k] = rd.nd.off[k + 1] > rd.nd.off[k] ? -1 : 0;
      rd.prio[k] = NOT_PENDING;
      if (rd.count[k] < 0)
        rc = offer_tile (&rd, k, 3, 1);
    }
  while (rc == 0 && rd.heap.n > 0)
    {
      int k = tg__flow_heap_pop (&rd.heap).idx;
      size_t heap_bytes = sizeof (TgFlowHeapItem) * rd.heap.cap;
      unsigned kinds = rd.pend[k];
      if (rd.prio[k] == NOT_PENDING)
        continue;
      rd.prio[k] = NOT_PENDING;
      rd.pend[k] = 0;
      rd.held += heap_bytes;
      if ((rc = walk_tile (&rd, k, kinds, &w)) == 0)
        {
          rd.count[k] = w.n;
          rc = walk_publish (&rd, &w);
        }
      rd.held -= heap_bytes;
      walk_clear (&w);
    }
  if (rc < 0)
    goto out;
  join_parts (&rd);
  /* The ranks, walking each tile once more from the final border. */
  for (int k = 0; k < rd.nt && rc == 0; k++)
    {
      int ix = k % t->nx, iy = k / t->nx;
      static const int32_t none = 0;
      if (rd.count[k] == 0)
        {
          if (rd.nd.off[k + 1] > rd.nd.off[k])
            rc = tg__flow_put_reduce_blob (io, "rank", ix, iy, &none, 0);
          continue;
        }
      if ((rc = walk_tile (&rd, k, 3, &w)) == 0)
        {
          int32_t off = (int32_t) rd.nd.off[k];
          for (int64_t i = 0; i < w.n; i++)
            {
              int32_t top = rd.top[uf_find (rd.parent, off + w.part[i])];
              w.dist[0][i] = tg__flow_flat_rank (w.dist[0][i], w.dist[1][i], top);
            }
          rc = tg__flow_put_reduce_blob (io, "rank", ix, iy, w.dist[0],
                                         sizeof (int32_t) * (size_t) w.n);
        }
      walk_clear (&w);
    }
out:

  if (work_bytes)
    *work_bytes = rd.peak > rd.held ? rd.peak : rd.held;
  walk_clear (&w);
  reduce_clear (&rd);
  return rc;
}

