/* erosion.flow over a whole world, and the same result tile by tile in
 * five steps, each tile talking to the others only through small blobs:
 *
 *  0  flood the tile from its own border with a label per border sample
 *     ("spill": border heights and the label graph);
 *     reduce: min-max flood of all label graphs from the world's edge
 *     ("F.IX.IY": the filled height of each tile's border samples);
 *  1  the tile's filled heights, max (local fill, F of its label); keep
 *     the ring of them within tg__flow_reach () of the border ("ring");
 *  2  with the neighbours' rings, the tile's flats: those inside it
 *     ranked here (their ring of ranks, "rring"), those touching its
 *     border listed with their seed flags ("flats");
 *     reduce: those flats' ranks, breadth-first over the tiles' lists
 *     read one at a time (erosion_flow_flats.c; "rank.IX.IY");
 *  3  route the tile (its filled heights and ranks over the window from
 *     rings and rank lists) and sum D8 water over it; keep per border
 *     sample what it sends and where ("acc");
 *     reduce: the D8 sums across tile edges, in the water's order over the
 *     border samples ("in.IX.IY": water entering each border sample);
 *  4  route again with that inflow: the area through every tile sample.
 *
 * Blobs are border-sized (rings: border x reach) except the lists of
 * flats that cross tile edges and their ranks, which hold all their
 * samples within the tile; every job holds at most a few of them at once.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/error.h>

#include "erosion_flow.h"

/* The whole-world routing, each array freed once its last use is over:
 * HM (when OWN_HM) after the fill, FILLED and RANK after the sums, whose
 * walk they hold once the MFD steps are done; when ACC_OUT is not NULL
 * the area is made there after the ranks.  One scratch block of 9 bytes a
 * sample goes from step to step (the fill's labels, the ranks' work
 * arrays, the receivers and water of the MFD steps) instead of each step
 * mapping fresh pages that the kernel zeroes: the peak stays that of the
 * MFD steps (filled heights, ranks, area, receivers and water, 25 bytes a
 * sample; the sums then hold the same). */
static int
whole (const TgFlowOpts *o, const float *hm, float *own_hm, int w, int h, double *acc,
       double **acc_out)
{
  size_t n = (size_t) w * (size_t) h;
  float *filled = malloc (sizeof (float) * (n ? n : 1));
  void *scratch = malloc (9 * (n ? n : 1));
  int32_t *rank = NULL;
  TgFlowWindow win = { w, h, 0, 0, w, h, 0, 0, w, h };
  TgFlowDirs d;
  int rc = TG_ENOMEM;

  if (filled && scratch)
    rc = tg__flow_fill_parallel_buf (o, hm, w, h, filled, scratch);
  free (own_hm);
  if (rc == 0 && !(rank = malloc (sizeof (int32_t) * (n ? n : 1))))
    rc = TG_ENOMEM;
  if (rc == 0)
    rc = tg__flow_ranks_buf (o, filled, w, h, rank, scratch);
  if (rc == 0 && acc_out && !(acc = *acc_out = malloc (sizeof (double) * (n ? n : 1))))
    rc = TG_ENOMEM;
  if (rc == 0)
    rc = tg__flow_route_dirs_buf (o, &win, filled, rank, acc, &d, scratch);
  if (rc == 0)
    rc = tg__flow_route_sums_buf (o, &win, &d, NULL, acc, NULL, (int32_t *) filled, rank);
  free (filled);
  free (rank);
  free (scratch);
  if (rc < 0 && acc_out)
    {
      free (*acc_out);
      *acc_out = NULL;
    }
  return rc;
}

int
tg__flow_whole (const TgFlowOpts *o, const float *hm, int w, int h, double *acc)
{
  return whole (o, hm, NULL, w, h, acc, NULL);
}

int
tg__flow_whole_take (const TgFlowOpts *o, float *hm, int w, int h, double **acc)
{
  *acc = NULL;
  return whole (o, hm, hm, w, h, NULL, acc);
}

bool
tg__flow_has_reduce (int step)
{
  return step == 0 || step == 2 || step == 3;
}

/* --- tiles, rings and blobs -------------------------------------------- */

TgFlowRect
tg__flow_tile_rect (const TgTiling *t, int fw, int fh, int ix, int iy)
{
  TgFlowRect r;

  r.x0 = tg_tile_start (fw, t->nx, ix);
  r.y0 = tg_tile_start (fh, t->ny, iy);
  r.w = tg_tile_start (fw, t->nx, ix + 1) - r.x0;
  r.h = tg_tile_start (fh, t->ny, iy + 1) - r.y0;
  return r;
}

/* The ring of a W x H tile: its samples closer than G to its border, in
 * raster order (the whole tile when it is small). */
static size_t
ring_count (int w, int h, int g)
{
  if (w <= 2 * g || h <= 2 * g)
    return (size_t) w * h;
  return (size_t) 2 * g * w + (size_t) (h - 2 * g) * 2 * g;
}

static int64_t
ring_index (int w, int h, int g, int x, int y)
{
  if (w <= 2 * g || h <= 2 * g)
    return (int64_t) y * w + x;
  if (y < g)
    return (int64_t) y * w + x;
  if (y >= h - g)
    return (int64_t) g * w + (int64_t) (h - 2 * g) * 2 * g + (int64_t) (y - (h - g)) * w + x;
  if (x < g)
    return (int64_t) g * w + (int64_t) (y - g) * 2 * g + x;
  if (x >= w - g)
    return (int64_t) g * w + (int64_t) (y - g) * 2 * g + g + (x - (w - g));
  return -1;
}

/* Blob NAME of tile (IX, IY) (-1, -1: the reduce), at least MIN bytes. */
static int
get_blob (const TgFlowBlobs *io, int ix, int iy, const char *name, size_t min, void **data,
          size_t *size)
{
  int rc = io->get (io->user, ix, iy, name, data, size);

  if (rc < 0)
    return rc;
  if (*size < min)
    {
      free (*data);
      *data = NULL;
      return TG_EPARSE;
    }
  return 0;
}

static int
get_reduce_blob (const TgFlowBlobs *io, const char *what, int ix, int iy, size_t min,
                 void **data, size_t *size)
{
  char name[64];

  snprintf (name, sizeof name, "%s.%d.%d", what, ix, iy);
  return get_blob (io, -1, -1, name, min, data, size);
}

int
tg__flow_put_reduce_blob (const TgFlowBlobs *io, const char *what, int ix, int iy, const void *data,
                 size_t size)
{
  char name[64];

  snprintf (name, sizeof name, "%s.%d.%d", what, ix, iy);
  return io->put (io->user, name, data, size);
}

/* --- step 0 and its reduce: the fill ----------------------------------- */

/* The "spill" blob of a tile: its border heights and its label graph E. */
static char *
spill_blob (const TgFlowRect *tr, const float *hm, const TgFlowSpill *e, size_t ne, size_t *size)
{
  int nb = tg__flow_border_count (tr->w, tr->h);
  int32_t head[2] = { nb, (int32_t) ne };
  char *blob;
  float *bh;

  *size = sizeof head + sizeof (float) * nb + sizeof (TgFlowSpill) * ne;
  if (!(blob = malloc (*size)))
    return NULL;
  bh = (float *) (blob + sizeof head);
  memcpy (blob, head, sizeof head);
  for (int k = 0; k < nb; k++)
    {
      int x, y;
      tg__flow_border_xy (tr->w, tr->h, k, &x, &y);
      bh[k] = hm[(size_t) y * tr->w + x];
    }
  if (ne > 0)
    memcpy (bh + nb, e, sizeof (TgFlowSpill) * ne);
  return blob;
}

static int
step_spill (const TgFlowOpts *o, const TgFlowRect *tr, const float *hm, const TgFlowBlobs *io)
{
  size_t n = (size_t) tr->w * tr->h, ne = 0, size = 0;
  int rc;
  float *lf = malloc (sizeof (float) * n);
  int32_t *label = malloc (sizeof (int32_t) * n);
  TgFlowSpill *e = NULL;
  char *blob = NULL;

  rc = lf && label ? tg__flow_fill_tile (o, hm, tr->w, tr->h, lf, label, &e, &ne) : TG_ENOMEM;
  if (rc == 0 && !(blob = spill_blob (tr, hm, e, ne, &size)))
    rc = TG_ENOMEM;
  if (rc == 0)
    rc = io->put (io->user, "spill", blob, size);
  free (blob);
  free (e);
  free (lf);
  free (label);
  return rc;
}

int
tg__flow_nodes_init (TgFlowNodes *nd, const TgTiling *t, int fw, int fh)
{
  int nt = t->nx * t->ny;

  nd->t = t;
  nd->fw = fw;
  nd->fh = fh;
  nd->off = malloc (sizeof (int64_t) * (nt + 1));
  if (!nd->off)
    return TG_ENOMEM;
  nd->off[0] = 0;
  for (int k = 0; k < nt; k++)
    {
      TgFlowRect r = tg__flow_tile_rect (t, fw, fh, k % t->nx, k / t->nx);
      nd->off[k + 1] = nd->off[k] + tg__flow_border_count (r.w, r.h);
    }
  return 0;
}

int64_t
tg__flow_node_of (const TgFlowNodes *nd, int gx, int gy, int *tile)
{
  int tx = tg__flow_tile_of (nd->fw, nd->t->nx, gx), ty = tg__flow_tile_of (nd->fh, nd->t->ny, gy);
  TgFlowRect r = tg__flow_tile_rect (nd->t, nd->fw, nd->fh, tx, ty);

  *tile = ty * nd->t->nx + tx;
  return nd->off[*tile] + tg__flow_border_index (r.w, r.h, gx - r.x0, gy - r.y0);
}

void
tg__flow_node_xy (const TgFlowNodes *nd, int t, int64_t u, int *gx, int *gy)
{
  TgFlowRect r = tg__flow_tile_rect (nd->t, nd->fw, nd->fh, t % nd->t->nx, t / nd->t->nx);
  int x, y;

  tg__flow_border_xy (r.w, r.h, (int) (u - nd->off[t]), &x, &y);
  *gx = r.x0 + x;
  *gy = r.y0 + y;
}

static int
reduce_spill (const TgTiling *t, int fw, int fh, const TgFlowBlobs *io)
{
  int nt = t->nx * t->ny, rc;
  TgFlowNodes nd;
  int64_t n, *adj_off = NULL;
  float *hmv = NULL, *fill = NULL, *adj_w = NULL;
  int32_t *adj = NULL, *tile_of = NULL;
  uint8_t *done = NULL;
  TgFlowHeap heap = { 0 };
  void **blobs = NULL;

  if ((rc = tg__flow_nodes_init (&nd, t, fw, fh)) < 0)
    return rc;
  n = nd.off[nt];
  rc = TG_ENOMEM;
  blobs = calloc (nt, sizeof (void *));
  hmv = malloc (sizeof (float) * (n ? n : 1));
  fill = malloc (sizeof (float) * (n ? n : 1));
  tile_of = malloc (sizeof (int32_t) * (n ? n : 1));
  done = calloc (n ? n : 1, 1);
  adj_off = calloc (n + 1, sizeof (int64_t));
  if (!blobs || !hmv || !fill || !tile_of || !done || !adj_off)
    goto out;
  for (int k = 0; k < nt; k++)
    {
      int32_t head[2];
      size_t size;
      int nb = (int) (nd.off[k + 1] - nd.off[k]);
      if (nb == 0)
        continue;
      if ((rc = get_blob (io, k % t->nx, k / t->nx, "spill", sizeof head, &blobs[k], &size)) < 0)
        goto out;
      memcpy (head, blobs[k], sizeof head);
      rc = TG_EPARSE;
      if (head[0] != nb
          || size != sizeof head + sizeof (float) * nb + sizeof (TgFlowSpill) * (size_t) head[1])
        goto out;
      memcpy (hmv + nd.off[k], (char *) blobs[k] + sizeof head, sizeof (float) * nb);
      for (int i = 0; i < nb; i++)
        tile_of[nd.off[k] + i] = k;
    }
  /* The label graphs, both ways, as adjacency lists. */
  for (int k = 0; k < nt; k++)
    if (blobs[k])
      {
        int32_t head[2];
        const TgFlowSpill *e;
        memcpy (head, blobs[k], sizeof head);
        e = (const TgFlowSpill *) ((char *) blobs[k] + sizeof head + sizeof (float) * head[0]);
        for (int32_t i = 0; i < head[1]; i++)
          {
            adj_off[nd.off[k] + e[i].a + 1]++;
            adj_off[nd.off[k] + e[i].b + 1]++;
          }
      }
  for (int64_t u = 0; u < n; u++)
    adj_off[u + 1] += adj_off[u];
  rc = TG_ENOMEM;
  adj = malloc (sizeof (int32_t) * (adj_off[n] ? adj_off[n] : 1));
  adj_w = malloc (sizeof (float) * (adj_off[n] ? adj_off[n] : 1));
  if (!adj || !adj_w)
    goto out;
  {
    int64_t *fillp = malloc (sizeof (int64_t) * (n ? n : 1));
    if (!fillp)
      goto out;
    memcpy (fillp, adj_off, sizeof (int64_t) * (n ? n : 1));
    for (int k = 0; k < nt; k++)
      if (blobs[k])
        {
          int32_t head[2];
          const TgFlowSpill *e;
          memcpy (head, blobs[k], sizeof head);
          e = (const TgFlowSpill *) ((char *) blobs[k] + sizeof head + sizeof (float) * head[0]);
          for (int32_t i = 0; i < head[1]; i++)
            {
              int64_t a = nd.off[k] + e[i].a, b = nd.off[k] + e[i].b;
              adj[fillp[a]] = (int32_t) b;
              adj_w[fillp[a]++] = e[i].w;
              adj[fillp[b]] = (int32_t) a;
              adj_w[fillp[b]++] = e[i].w;
            }
        }
    free (fillp);
  }

  /* Min-max flood from the world's edge: each node's filled height is the
   * lowest "highest step" over ways out, found in order like the fill. */
  for (int64_t u = 0; u < n; u++)
    {
      int gx, gy;
      tg__flow_node_xy (&nd, tile_of[u], u, &gx, &gy);
      fill[u] = INFINITY;
      if (gx == 0 || gy == 0 || gx == fw - 1 || gy == fh - 1)
        {
          fill[u] = hmv[u];
          if ((rc = tg__flow_heap_push (&heap, fill[u], (int32_t) u)) < 0)
            goto out;
        }
    }
  while (heap.n > 0)
    {
      TgFlowHeapItem it = tg__flow_heap_pop (&heap);
      int64_t u = it.idx;
      int gx, gy;
      if (done[u])
        continue;
      done[u] = 1;
      for (int64_t a = adj_off[u]; a < adj_off[u + 1]; a++)
        {
          int32_t v = adj[a];
          float c = adj_w[a] > fill[u] ? adj_w[a] : fill[u];
          if (c < fill[v])
            {
              fill[v] = c;
              if ((rc = tg__flow_heap_push (&heap, c, v)) < 0)
                goto out;
            }
        }
      /* Steps across tile edges. */
      tg__flow_node_xy (&nd, tile_of[u], u, &gx, &gy);
      for (int q = 0; q < 8; q++)
        {
          int x = gx + tg__flow_dx[q], y = gy + tg__flow_dy[q], tv;
          int64_t v;
          float c;
          if (x < 0 || x >= fw || y < 0 || y >= fh)
            continue;
          v = tg__flow_node_of (&nd, x, y, &tv);
          if (tv == tile_of[u])
            continue;
          c = hmv[v] > hmv[u] ? hmv[v] : hmv[u];
          c = c > fill[u] ? c : fill[u];
          if (c < fill[v])
            {
              fill[v] = c;
              if ((rc = tg__flow_heap_push (&heap, c, (int32_t) v)) < 0)
                goto out;
            }
        }
    }
  rc = 0;
  for (int k = 0; k < nt && rc == 0; k++)
    if (blobs[k])
      rc = tg__flow_put_reduce_blob (io, "F", k % t->nx, k / t->nx, fill + nd.off[k],
                            sizeof (float) * (size_t) (nd.off[k + 1] - nd.off[k]));
out:
  if (blobs)
    for (int k = 0; k < nt; k++)
      free (blobs[k]);
  free (blobs);
  free (heap.a);
  free (nd.off);
  free (hmv);
  free (fill);
  free (tile_of);
  free (done);
  free (adj_off);
  free (adj);
  free (adj_w);
  return rc;
}

/* --- steps 1 to 4 ------------------------------------------------------ */

/* The tile's filled heights: its own flood raised to its labels' spill. */
static int
tile_filled (const TgFlowOpts *o, const TgTiling *t, const TgFlowRect *tr, const float *hm,
             const TgFlowBlobs *io, float *filled)
{
  size_t n = (size_t) tr->w * tr->h, size;
  int nb = tg__flow_border_count (tr->w, tr->h), rc;
  int32_t *label = malloc (sizeof (int32_t) * n);
  void *f = NULL;

  rc = label ? tg__flow_fill_tile (o, hm, tr->w, tr->h, filled, label, NULL, NULL) : TG_ENOMEM;
  if (rc == 0)
    rc = get_reduce_blob (io, "F", t->ix, t->iy, sizeof (float) * nb, &f, &size);
  if (rc == 0)
    for (size_t i = 0; i < n; i++)
      {
        float s = ((const float *) f)[label[i]];
        filled[i] = s > filled[i] ? s : filled[i];
      }
  free (f);
  free (label);
  return rc;
}

static int
step_ring (const TgFlowOpts *o, const TgTiling *t, const TgFlowRect *tr, const float *hm,
           const TgFlowBlobs *io)
{
  int g = tg__flow_reach (o), rc;
  size_t n = (size_t) tr->w * tr->h;
  float *filled = malloc (sizeof (float) * n), *ring = malloc (sizeof (float) * ring_count (tr->w, tr->h, g));

  rc = filled && ring ? tile_filled (o, t, tr, hm, io, filled) : TG_ENOMEM;
  if (rc == 0)
    {
      for (int y = 0; y < tr->h; y++)
        for (int x = 0; x < tr->w; x++)
          {
            int64_t k = ring_index (tr->w, tr->h, g, x, y);
            if (k >= 0)
              ring[k] = filled[(size_t) y * tr->w + x];
          }
      rc = io->put (io->user, "ring", ring, sizeof (float) * ring_count (tr->w, tr->h, g));
    }
  free (filled);
  free (ring);
  return rc;
}

/* The tiles whose samples window WIN covers, as ranges. */
static void
window_tiles (const TgTiling *t, const TgFlowWindow *win, int *tx0, int *tx1, int *ty0, int *ty1)
{
  *tx0 = tg__flow_tile_of (win->fw, t->nx, win->wx0);
  *tx1 = tg__flow_tile_of (win->fw, t->nx, win->wx0 + win->ww - 1);
  *ty0 = tg__flow_tile_of (win->fh, t->ny, win->wy0);
  *ty1 = tg__flow_tile_of (win->fh, t->ny, win->wy0 + win->wh - 1);
}

/* The filled heights over the tile and reach () around it (cut at the
 * world's edge): the tile's own, the rest from the neighbours' rings. */
static int
load_window (const TgFlowOpts *o, const TgTiling *t, int fw, int fh, const TgFlowRect *tr,
             const float *hm, const TgFlowBlobs *io, TgFlowWindow *win, float **filled_out)
{
  int g = tg__flow_reach (o), tx0, tx1, ty0, ty1, rc;
  float *own = malloc (sizeof (float) * (size_t) tr->w * tr->h), *filled;

  win->fw = fw;
  win->fh = fh;
  win->tx0 = tr->x0;
  win->ty0 = tr->y0;
  win->tw = tr->w;
  win->th = tr->h;
  win->wx0 = tr->x0 - g > 0 ? tr->x0 - g : 0;
  win->wy0 = tr->y0 - g > 0 ? tr->y0 - g : 0;
  win->ww = (tr->x0 + tr->w + g < fw ? tr->x0 + tr->w + g : fw) - win->wx0;
  win->wh = (tr->y0 + tr->h + g < fh ? tr->y0 + tr->h + g : fh) - win->wy0;
  filled = malloc (sizeof (float) * (size_t) win->ww * win->wh);
  *filled_out = filled;
  if (!own || !filled)
    {
      free (own);
      return TG_ENOMEM;
    }
  if ((rc = tile_filled (o, t, tr, hm, io, own)) < 0)
    {
      free (own);
      return rc;
    }
  for (int y = 0; y < tr->h; y++)
    memcpy (filled + (size_t) (tr->y0 - win->wy0 + y) * win->ww + (tr->x0 - win->wx0),
            own + (size_t) y * tr->w, sizeof (float) * tr->w);
  free (own);
  window_tiles (t, win, &tx0, &tx1, &ty0, &ty1);
  for (int ty = ty0; ty <= ty1; ty++)
    for (int tx = tx0; tx <= tx1; tx++)
      {
        TgFlowRect u = tg__flow_tile_rect (t, fw, fh, tx, ty);
        void *ring;
        size_t size;
        if ((tx == t->ix && ty == t->iy) || u.w == 0 || u.h == 0)
          continue;
        if ((rc = get_blob (io, tx, ty, "ring", sizeof (float) * ring_count (u.w, u.h, g), &ring,
                            &size)) < 0)
          return rc;
        for (int y = u.y0 > win->wy0 ? u.y0 : win->wy0; y < u.y0 + u.h && y < win->wy0 + win->wh;
             y++)
          for (int x = u.x0 > win->wx0 ? u.x0 : win->wx0;
               x < u.x0 + u.w && x < win->wx0 + win->ww; x++)
            {
              /* Within reach of this tile, so within the ring of that one. */
              int64_t k = ring_index (u.w, u.h, g, x - u.x0, y - u.y0);
              filled[(size_t) (y - win->wy0) * win->ww + (x - win->wx0)]
                = k >= 0 ? ((const float *) ring)[k] : NAN;
            }
        free (ring);
      }
  return 0;
}

/* Flat, with the world's edge where it is (the window's may be nearer). */
static bool
win_flat (const TgFlowWindow *win, const float *filled, int x, int y)
{
  int gx = win->wx0 + x, gy = win->wy0 + y;
  float z = filled[(size_t) y * win->ww + x];

  if (gx == 0 || gy == 0 || gx == win->fw - 1 || gy == win->fh - 1)
    return false;
  for (int q = 0; q < 8; q++)
    if (filled[(size_t) (y + tg__flow_dy[q]) * win->ww + (x + tg__flow_dx[q])] < z)
      return false;
  return true;
}

/* The tile's flat samples with their seed flags, parted in two: SPAN,
 * the flats that touch the tile's border (they may go on in other tiles:
 * the reduce ranks them), and the flats inside it, complete here, which
 * it ranks itself into INNER_RANK (a tile-sized map, -1 elsewhere). */
typedef struct
{
  int64_t *g;
  float *lev;
  uint8_t *fl;
  size_t n;
} FlatList;

static void
flat_list_clear (FlatList *l)
{
  free (l->g);
  free (l->lev);
  free (l->fl);
  memset (l, 0, sizeof *l);
}

static int
tile_flats (const TgFlowWindow *win, const float *filled, FlatList *span, int32_t *inner_rank)
{
  int tw = win->tw, th = win->th, ox = win->tx0 - win->wx0, oy = win->ty0 - win->wy0;
  size_t nt = (size_t) tw * th, m = 0, head, tail;
  int32_t *idx = malloc (sizeof (int32_t) * (nt ? nt : 1)), *queue = malloc (sizeof (int32_t) * (nt ? nt : 1));
  uint8_t *flags = malloc (nt ? nt : 1), *outer = calloc (nt ? nt : 1, 1);
  FlatList in = { 0 };
  int32_t *rank = NULL;
  int rc = TG_ENOMEM;

  memset (span, 0, sizeof *span);
  if (!idx || !queue || !flags || !outer)
    goto out;
  for (int y = 0; y < th; y++)
    for (int x = 0; x < tw; x++)
      {
        int wx = ox + x, wy = oy + y;
        float z = filled[(size_t) wy * win->ww + wx];
        uint8_t f = 0;
        size_t c = (size_t) y * tw + x;
        inner_rank[c] = -1;
        idx[c] = -1;
        if (!win_flat (win, filled, wx, wy))
          continue;
        for (int q = 0; q < 8; q++)
          {
            int nx = wx + tg__flow_dx[q], ny = wy + tg__flow_dy[q];
            float zn = filled[(size_t) ny * win->ww + nx];
            if (zn > z)
              f |= TG__FLAT_HIGH;
            else if (zn == z && !win_flat (win, filled, nx, ny))
              f |= TG__FLAT_DRAIN;
          }
        flags[c] = f;
        idx[c] = 0;
        m++;
      }
  /* Flats that reach the tile's border: a walk from the border samples. */
  head = tail = 0;
  for (int k = 0; k < tg__flow_border_count (tw, th); k++)
    {
      int x, y;
      tg__flow_border_xy (tw, th, k, &x, &y);
      if (idx[(size_t) y * tw + x] == 0)
        {
          outer[(size_t) y * tw + x] = 1;
          queue[tail++] = y * tw + x;
        }
    }
  while (head < tail)
    {
      int32_t c = queue[head++];
      int cx = c % tw, cy = c / tw;
      for (int q = 0; q < 8; q++)
        {
          int x = cx + tg__flow_dx[q], y = cy + tg__flow_dy[q];
          size_t i = (size_t) y * tw + x;
          if (x < 0 || x >= tw || y < 0 || y >= th || idx[i] != 0 || outer[i]
              || filled[(size_t) (oy + y) * win->ww + ox + x]
                   != filled[(size_t) (oy + cy) * win->ww + ox + cx])
            continue;
          outer[i] = 1;
          queue[tail++] = (int32_t) i;
        }
    }
  span->n = tail;
  in.n = m - tail;
  span->g = malloc (sizeof (int64_t) * (span->n ? span->n : 1));
  span->lev = malloc (sizeof (float) * (span->n ? span->n : 1));
  span->fl = malloc (span->n ? span->n : 1);
  in.g = malloc (sizeof (int64_t) * (in.n ? in.n : 1));
  in.lev = malloc (sizeof (float) * (in.n ? in.n : 1));
  in.fl = malloc (in.n ? in.n : 1);
  rank = malloc (sizeof (int32_t) * (in.n ? in.n : 1));
  if (!span->g || !span->lev || !span->fl || !in.g || !in.lev || !in.fl || !rank)
    goto out;
  /* Both lists in raster order (world index order). */
  span->n = in.n = 0;
  for (size_t c = 0; c < nt; c++)
    if (idx[c] == 0)
      {
        FlatList *l = outer[c] ? span : &in;
        int x = (int) (c % tw), y = (int) (c / tw);
        l->g[l->n] = (int64_t) (win->ty0 + y) * win->fw + (win->tx0 + x);
        l->lev[l->n] = filled[(size_t) (oy + y) * win->ww + ox + x];
        l->fl[l->n] = flags[c];
        idx[c] = (int32_t) l->n++;
      }
  if ((rc = tg__flow_ranks_sparse (in.g, in.lev, in.fl, in.n, win->fw, rank)) < 0)
    goto out;
  for (size_t c = 0; c < nt; c++)
    if (idx[c] >= 0 && !outer[c])
      inner_rank[c] = rank[idx[c]];
  rc = 0;
out:
  if (rc < 0)
    flat_list_clear (span);
  flat_list_clear (&in);
  free (rank);
  free (idx);
  free (queue);
  free (flags);
  free (outer);
  return rc;
}

static int
step_flats (const TgFlowOpts *o, const TgTiling *t, int fw, int fh, const TgFlowRect *tr,
            const float *hm, const TgFlowBlobs *io)
{
  TgFlowWindow win;
  float *filled = NULL;
  int g = tg__flow_reach (o), rc = load_window (o, t, fw, fh, tr, hm, io, &win, &filled);
  size_t nt = (size_t) tr->w * tr->h, nr = ring_count (tr->w, tr->h, g);
  int32_t *inner = malloc (sizeof (int32_t) * (nt ? nt : 1)), *ring = malloc (sizeof (int32_t) * (nr ? nr : 1));
  FlatList span = { 0 };
  char *blob = NULL;
  size_t size;

  if (rc == 0 && (!inner || !ring))
    rc = TG_ENOMEM;
  if (rc == 0)
    rc = tile_flats (&win, filled, &span, inner);
  size = sizeof (int64_t) + span.n * (sizeof (int64_t) + sizeof (float) + 1);
  if (rc == 0 && !(blob = malloc (size)))
    rc = TG_ENOMEM;
  if (rc == 0)
    {
      int64_t n64 = (int64_t) span.n;
      char *p = blob;
      memcpy (p, &n64, sizeof n64);
      p += sizeof n64;
      memcpy (p, span.g, sizeof (int64_t) * span.n);
      p += sizeof (int64_t) * span.n;
      memcpy (p, span.lev, sizeof (float) * span.n);
      p += sizeof (float) * span.n;
      memcpy (p, span.fl, span.n);
      rc = io->put (io->user, "flats", blob, size);
    }
  if (rc == 0)
    {
      /* The inner flats' ranks where the neighbours' windows reach. */
      for (int y = 0; y < tr->h; y++)
        for (int x = 0; x < tr->w; x++)
          {
            int64_t k = ring_index (tr->w, tr->h, g, x, y);
            if (k >= 0)
              ring[k] = inner[(size_t) y * tr->w + x];
          }
      rc = io->put (io->user, "rring", ring, sizeof (int32_t) * nr);
    }
  flat_list_clear (&span);
  free (blob);
  free (filled);
  free (inner);
  free (ring);
  return rc;
}

int
tg__flow_get_flats (const TgFlowBlobs *io, int ix, int iy, void **blob, int64_t *n,
                    const int64_t **g)
{
  size_t size;
  int rc = get_blob (io, ix, iy, "flats", sizeof (int64_t), blob, &size);

  if (rc < 0)
    return rc;
  memcpy (n, *blob, sizeof (int64_t));
  if (*n < 0 || size != sizeof (int64_t) + (size_t) *n * (sizeof (int64_t) + sizeof (float) + 1))
    {
      free (*blob);
      *blob = NULL;
      return TG_EPARSE;
    }
  *g = (const int64_t *) ((char *) *blob + sizeof (int64_t));
  return 0;
}

/* Filled heights and ranks over the window, then the routing. */
static int
route_tile (const TgFlowOpts *o, const TgTiling *t, int fw, int fh, const TgFlowRect *tr,
            const float *hm, const TgFlowBlobs *io, const int64_t *inflow, double *acc,
            TgFlowBorder *border)
{
  TgFlowWindow win;
  float *filled = NULL;
  int32_t *rank = NULL, *inner = NULL;
  int g = tg__flow_reach (o), tx0, tx1, ty0, ty1;
  int rc = load_window (o, t, fw, fh, tr, hm, io, &win, &filled);
  size_t n = (size_t) win.ww * win.wh;
  FlatList span = { 0 };

  if (rc == 0 && (!(rank = malloc (sizeof (int32_t) * n))
                  || !(inner = malloc (sizeof (int32_t) * ((size_t) tr->w * tr->h + 1)))))
    rc = TG_ENOMEM;
  /* The tile's own inner flats again, as step 2 ranked them (the list of
   * the others comes from the blob with the ranks: freed at once, as is
   * the tile-sized map, to leave room for the routing). */
  if (rc == 0)
    rc = tile_flats (&win, filled, &span, inner);
  flat_list_clear (&span);
  if (rc < 0)
    goto out;
  for (size_t i = 0; i < n; i++)
    rank[i] = -1;
  for (int y = 0; y < tr->h; y++)
    memcpy (rank + (size_t) (tr->y0 - win.wy0 + y) * win.ww + (tr->x0 - win.wx0),
            inner + (size_t) y * tr->w, sizeof (int32_t) * tr->w);
  free (inner);
  inner = NULL;
  window_tiles (t, &win, &tx0, &tx1, &ty0, &ty1);
  for (int ty = ty0; ty <= ty1 && rc == 0; ty++)
    for (int tx = tx0; tx <= tx1 && rc == 0; tx++)
      {
        TgFlowRect u = tg__flow_tile_rect (t, fw, fh, tx, ty);
        void *blob = NULL, *rk = NULL, *rr = NULL;
        int64_t m;
        size_t size;
        const int64_t *gi;
        if (u.w == 0 || u.h == 0)
          continue;
        /* The flats over tile edges, ranked by the reduce. */
        if ((rc = tg__flow_get_flats (io, tx, ty, &blob, &m, &gi)) == 0
            && (rc = get_reduce_blob (io, "rank", tx, ty, sizeof (int32_t) * m, &rk, &size)) == 0)
          for (int64_t k = 0; k < m; k++)
            {
              int x = (int) (gi[k] % fw) - win.wx0, y = (int) (gi[k] / fw) - win.wy0;
              if (x >= 0 && x < win.ww && y >= 0 && y < win.wh)
                rank[(size_t) y * win.ww + x] = ((const int32_t *) rk)[k];
            }
        /* A neighbour's inner flats, from its ring. */
        if (rc == 0 && !(tx == t->ix && ty == t->iy)
            && (rc = get_blob (io, tx, ty, "rring", sizeof (int32_t) * ring_count (u.w, u.h, g), &rr,
                               &size)) == 0)
          for (int y = u.y0 > win.wy0 ? u.y0 : win.wy0; y < u.y0 + u.h && y < win.wy0 + win.wh; y++)
            for (int x = u.x0 > win.wx0 ? u.x0 : win.wx0; x < u.x0 + u.w && x < win.wx0 + win.ww;
                 x++)
              {
                int64_t k = ring_index (u.w, u.h, g, x - u.x0, y - u.y0);
                int32_t v = k >= 0 ? ((const int32_t *) rr)[k] : -1;
                if (v >= 0)
                  rank[(size_t) (y - win.wy0) * win.ww + (x - win.wx0)] = v;
              }
        free (blob);
        free (rk);
        free (rr);
      }
  if (rc == 0)
    rc = tg__flow_route (o, &win, filled, rank, inflow, acc, border);
out:
  flat_list_clear (&span);
  free (filled);
  free (rank);
  free (inner);
  return rc;
}

static int
step_sums (const TgFlowOpts *o, const TgTiling *t, int fw, int fh, const TgFlowRect *tr,
           const float *hm, const TgFlowBlobs *io)
{
  int nb = tg__flow_border_count (tr->w, tr->h), rc;
  TgFlowBorder *b = malloc (sizeof (TgFlowBorder) * nb);

  rc = b ? route_tile (o, t, fw, fh, tr, hm, io, NULL, NULL, b) : TG_ENOMEM;
  if (rc == 0)
    rc = io->put (io->user, "acc", b, sizeof (TgFlowBorder) * nb);
  free (b);
  return rc;
}

/* The reduce of step 3: the water each tile sends out by a border sample
 * is what the tile gathers there plus what entered it upstream of it;
 * what enters is what the neighbours send.  Solved in the water's order
 * (every border sample once all water bound for it is known), in integers. */
static int
reduce_sums (const TgTiling *t, int fw, int fh, const TgFlowBlobs *io)
{
  int nt = t->nx * t->ny, rc;
  TgFlowNodes nd;
  int64_t n, head = 0, tail = 0, *tgt = NULL, *inflow = NULL, *gathered = NULL, *queue = NULL;
  int32_t *pend_in = NULL, *pend_ex = NULL, *tile = NULL;
  TgFlowBorder *rec = NULL;

  if ((rc = tg__flow_nodes_init (&nd, t, fw, fh)) < 0)
    return rc;
  n = nd.off[nt];
  rc = TG_ENOMEM;
  rec = malloc (sizeof (TgFlowBorder) * (n ? n : 1));
  tgt = malloc (sizeof (int64_t) * (n ? n : 1));
  inflow = calloc (n ? n : 1, sizeof (int64_t));
  gathered = calloc (n ? n : 1, sizeof (int64_t));
  queue = malloc (sizeof (int64_t) * (n ? n : 1));
  pend_in = calloc (n ? n : 1, sizeof (int32_t));
  pend_ex = calloc (n ? n : 1, sizeof (int32_t));
  tile = malloc (sizeof (int32_t) * (n ? n : 1));
  if (!rec || !tgt || !inflow || !gathered || !queue || !pend_in || !pend_ex || !tile)
    goto out;
  for (int k = 0; k < nt; k++)
    {
      int64_t nb = nd.off[k + 1] - nd.off[k];
      void *blob;
      size_t size;
      if (nb == 0)
        continue;
      if ((rc = get_blob (io, k % t->nx, k / t->nx, "acc", sizeof (TgFlowBorder) * nb, &blob,
                          &size)) < 0)
        goto out;
      memcpy (rec + nd.off[k], blob, sizeof (TgFlowBorder) * nb);
      free (blob);
      for (int64_t i = 0; i < nb; i++)
        tile[nd.off[k] + i] = k;
    }
  for (int64_t x = 0; x < n; x++)
    {
      int tv;
      tgt[x] = -1;
      if (rec[x].recv >= 0)
        {
          tgt[x] = tg__flow_node_of (&nd, (int) (rec[x].recv % fw), (int) (rec[x].recv / fw), &tv);
          pend_in[tgt[x]]++;
        }
      if (rec[x].link >= 0)
        pend_ex[nd.off[tile[x]] + rec[x].link]++;
    }
  for (int64_t x = 0; x < n; x++)
    if (pend_in[x] == 0)
      queue[tail++] = x;
  while (head < tail)
    {
      int64_t e = queue[head++], x;
      if (rec[e].link < 0)
        continue;
      x = nd.off[tile[e]] + rec[e].link;
      gathered[x] += inflow[e];
      if (--pend_ex[x] == 0 && tgt[x] >= 0)
        {
          int64_t v = tgt[x];
          inflow[v] += rec[x].local + gathered[x];
          if (--pend_in[v] == 0)
            queue[tail++] = v;
        }
    }
  rc = tail == n ? 0 : TG_EINVAL; /* else a cycle: the routing is broken */
  for (int k = 0; k < nt && rc == 0; k++)
    if (nd.off[k + 1] > nd.off[k])
      rc = tg__flow_put_reduce_blob (io, "in", k % t->nx, k / t->nx, inflow + nd.off[k],
                            sizeof (int64_t) * (size_t) (nd.off[k + 1] - nd.off[k]));
out:
  free (nd.off);
  free (rec);
  free (tgt);
  free (inflow);
  free (gathered);
  free (queue);
  free (pend_in);
  free (pend_ex);
  free (tile);
  return rc;
}

static int
step_finish (const TgFlowOpts *o, const TgTiling *t, int fw, int fh, const TgFlowRect *tr,
             const float *hm, const TgFlowBlobs *io, double *acc)
{
  int nb = tg__flow_border_count (tr->w, tr->h), rc;
  void *in = NULL;
  size_t size;

  rc = get_reduce_blob (io, "in", t->ix, t->iy, sizeof (int64_t) * nb, &in, &size);
  if (rc == 0)
    rc = route_tile (o, t, fw, fh, tr, hm, io, in, acc, NULL);
  free (in);
  return rc;
}

/* --- the whole fill on several threads ---------------------------------- */

/* The whole fill as the tiled scheme's step 0, its reduce and step 1 over
 * bands of rows, the bands' floods in parallel: the filled heights are a
 * min-max over paths (see erosion_flow_fill.c), the same bytes as the one
 * flood's, however the world is cut.  A band holds about FILL_STRIP_SAMPLES
 * samples (at least 4 bands, at most FILL_STRIPS, of 64 rows or more):
 * the floods are bound by memory latency, and a band whose arrays stay
 * near the caches costs less CPU than a larger one; at 2049^2 on two
 * threads, 9 interleaved runs, median fill CPU 0.628 s with 4 bands,
 * 0.567 s with 8, 0.572 s with 16 (the whole flood: ~0.52 s). */
#define FILL_STRIPS 64
#define FILL_STRIP_SAMPLES ((size_t) 1 << 19)

typedef struct
{
  const TgFlowOpts *o;
  const float *hm;
  float *filled;
  int32_t *label;
  int w, h, ns, failed;
  char *spill[FILL_STRIPS];
  size_t spill_size[FILL_STRIPS];
  float *f[FILL_STRIPS]; /* the reduce's filled heights of each band's border */
} FillPar;

static TgFlowRect
strip_rect (const FillPar *fp, int k)
{
  TgFlowRect r = { 0, tg_tile_start (fp->h, fp->ns, k), fp->w, 0 };

  r.h = tg_tile_start (fp->h, fp->ns, k + 1) - r.y0;
  return r;
}

static void
fill_par_strips (void *user, int begin, int end)
{
  FillPar *fp = user;

  for (int k = begin; k < end; k++)
    {
      TgFlowRect r = strip_rect (fp, k);
      size_t off = (size_t) r.y0 * fp->w, ne = 0;
      TgFlowSpill *e = NULL;
      int rc = tg__flow_fill_tile (fp->o, fp->hm + off, r.w, r.h, fp->filled + off,
                                   fp->label + off, &e, &ne);
      if (rc == 0 && !(fp->spill[k] = spill_blob (&r, fp->hm + off, e, ne, &fp->spill_size[k])))
        rc = TG_ENOMEM;
      free (e);
      if (rc < 0)
        fp->failed = rc; /* any failure fails the whole; which one does not matter */
    }
}

static int
fill_par_put (void *user, const char *name, const void *data, size_t size)
{
  FillPar *fp = user;
  int ix, iy;

  if (sscanf (name, "F.%d.%d", &ix, &iy) != 2 || ix != 0 || iy < 0 || iy >= fp->ns)
    return TG_EINVAL;
  free (fp->f[iy]);
  if (!(fp->f[iy] = malloc (size ? size : 1)))
    return TG_ENOMEM;
  memcpy (fp->f[iy], data, size);
  return 0;
}

static int
fill_par_get (void *user, int ix, int iy, const char *name, void **data, size_t *size)
{
  FillPar *fp = user;

  if (strcmp (name, "spill") != 0 || ix != 0 || iy < 0 || iy >= fp->ns || !fp->spill[iy])
    return TG_EMISSING;
  if (!(*data = malloc (fp->spill_size[iy])))
    return TG_ENOMEM;
  memcpy (*data, fp->spill[iy], fp->spill_size[iy]);
  *size = fp->spill_size[iy];
  return 0;
}

static void
fill_par_raise (void *user, int begin, int end)
{
  FillPar *fp = user;

  for (int k = begin; k < end; k++)
    {
      TgFlowRect r = strip_rect (fp, k);
      size_t off = (size_t) r.y0 * fp->w, n = (size_t) r.w * r.h;
      float *lf = fp->filled + off;
      const int32_t *label = fp->label + off;
      for (size_t i = 0; i < n; i++)
        {
          float s = fp->f[k][label[i]];
          lf[i] = s > lf[i] ? s : lf[i];
        }
    }
}

int
tg__flow_fill_parallel (const TgFlowOpts *o, const float *hm, int w, int h, float *filled)
{
  return tg__flow_fill_parallel_buf (o, hm, w, h, filled, NULL);
}

int
tg__flow_fill_parallel_buf (const TgFlowOpts *o, const float *hm, int w, int h, float *filled,
                            int32_t *label)
{
  size_t by_area = ((size_t) w * h + FILL_STRIP_SAMPLES / 2) / FILL_STRIP_SAMPLES;
  int ns = by_area < 4 ? 4 : by_area > FILL_STRIPS ? FILL_STRIPS : (int) by_area;
  FillPar fp = { o, hm, filled, NULL, w, h, h / 64 < ns ? h / 64 : ns, 0, { 0 }, { 0 }, { 0 } };
  TgTiling t = { 1, fp.ns, -1, -1 };
  TgFlowBlobs io = { &fp, fill_par_put, fill_par_get };
  int rc;

  if (!o || !o->parallel || fp.ns < 2)
    return tg__flow_fill (o, hm, w, h, filled);
  if (!(fp.label = label ? label : malloc (sizeof (int32_t) * (size_t) w * h)))
    return TG_ENOMEM;
  rc = o->parallel (o->parallel_ctx, fp.ns, 1, fill_par_strips, &fp);
  if (rc == 0)
    rc = fp.failed;
  if (rc == 0 && tg__flow_cancelled (o))
    rc = TG_ECANCELLED;
  if (rc == 0)
    rc = tg__flow_reduce (o, &t, w, h, 0, &io, NULL);
  for (int k = 0; k < fp.ns && rc == 0; k++)
    if (!fp.f[k])
      rc = TG_EINVAL;
  if (rc == 0)
    rc = o->parallel (o->parallel_ctx, fp.ns, 1, fill_par_raise, &fp);
  for (int k = 0; k < fp.ns; k++)
    {
      free (fp.spill[k]);
      free (fp.f[k]);
    }
  if (fp.label != label)
    free (fp.label);
  return rc;
}

int
tg__flow_tile_step (const TgFlowOpts *o, const TgTiling *t, int fw, int fh, const float *hm,
                    int step, const TgFlowBlobs *io, double *acc)
{
  TgFlowRect tr = tg__flow_tile_rect (t, fw, fh, t->ix, t->iy);

  if (tr.w == 0 || tr.h == 0)
    return 0;
  switch (step)
    {
    case 0:
      return step_spill (o, &tr, hm, io);
    case 1:
      return step_ring (o, t, &tr, hm, io);
    case 2:
      return step_flats (o, t, fw, fh, &tr, hm, io);
    case 3:
      return step_sums (o, t, fw, fh, &tr, hm, io);
    case 4:
      return step_finish (o, t, fw, fh, &tr, hm, io, acc);
    default:
      return TG_EINVAL;
    }
}

int
tg__flow_reduce (const TgFlowOpts *o, const TgTiling *t, int fw, int fh, int step,
                 const TgFlowBlobs *io, size_t *work_bytes)
{
  (void) o;
  if (work_bytes)
    *work_bytes = 0;
  switch (step)
    {
    case 0:
      return reduce_spill (t, fw, fh, io);
    case 2:
      return tg__flow_reduce_flats (t, fw, fh, io, work_bytes);
    case 3:
      return reduce_sums (t, fw, fh, io);
    default:
      return TG_EINVAL;
    }
}
