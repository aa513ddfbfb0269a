/* erosion.flow, filling: the Priority-Flood of Barnes, Lehman and Mulla
 * (2014, with the pit queue of their "improved" variant, and slopes
 * traced off the queue as in Zhou, Sun and Fu 2016) over the whole
 * world, and the same flood over one tile from its own border with a
 * label per border sample, as in Barnes (2016), "Parallel priority-flood
 * depression filling for trillion cell digital elevation models".
 *
 * Why the tiled fill has the whole flood's bytes: the filled height of a
 * sample is min over paths to the world's edge of the highest height on
 * the path, a quantity made of comparisons alone (every value is one of
 * the input heights).  A path from inside a tile first meets the tile's
 * border at some sample p, so fill(c) = min over p of max(D(c, p),
 * fill(p)) with D the same min-max inside the tile.  The labelled flood
 * gives lf(c) = min over p of D(c, p), reached from p = label(c), and
 * the label graph (labels x, y meet at max(lf) of two touching samples)
 * has between any two border samples no larger a min-max than the tile
 * itself, and no smaller one (each of its edges is a real path).  So the
 * spill solve over all tiles' label graphs and the steps across tile
 * edges gives fill(p) exactly, and fill(c) = max(lf(c), fill(label(c))).
 */
#include <stdlib.h>
#include <string.h>

#include <tgraph/error.h>

#include "erosion_flow.h"

const int tg__flow_dx[8] = { 1, -1, 0, 0, 1, -1, 1, -1 };
const int tg__flow_dy[8] = { 0, 0, 1, -1, 1, 1, -1, -1 };

static inline bool
heap_less (TgFlowHeapItem x, TgFlowHeapItem y)
{
  return x.key < y.key || (x.key == y.key && x.idx < y.idx);
}

int
tg__flow_heap_push (TgFlowHeap *h, float key, int32_t idx)
{
  size_t i;
  TgFlowHeapItem it = { key, idx };

  if (h->n == h->cap)
    {
      size_t cap = h->cap ? 2 * h->cap : 256;
      TgFlowHeapItem *a = realloc (h->a, sizeof (TgFlowHeapItem) * cap);
      if (!a)
        return TG_ENOMEM;
      h->a = a;
      h->cap = cap;
    }
  i = h->n++;
  while (i > 0)
    {
      size_t p = (i - 1) / 2;
      if (!heap_less (it, h->a[p]))
        break;
      h->a[i] = h->a[p];
      i = p;
    }
  h->a[i] = it;
  return 0;
}

TgFlowHeapItem
tg__flow_heap_pop (TgFlowHeap *h)
{
  TgFlowHeapItem top = h->a[0], last = h->a[--h->n];
  size_t i = 0, n = h->n;

  for (;;)
    {
      size_t l = 2 * i + 1, m;
      if (l >= n)
        break;
      m = (l + 1 < n && heap_less (h->a[l + 1], h->a[l])) ? l + 1 : l;
      if (!heap_less (h->a[m], last))
        break;
      h->a[i] = h->a[m];
      i = m;
    }
  if (n > 0)
    h->a[i] = last;
  return top;
}

/* --- tile borders ---------------------------------------------------------- */

int
tg__flow_border_count (int w, int h)
{
  if (w <= 0 || h <= 0)
    return 0;
  if (h == 1)
    return w;
  return 2 * w + (h - 2) * (w > 1 ? 2 : 1);
}

int
tg__flow_border_index (int w, int h, int x, int y)
{
  int per_row = w > 1 ? 2 : 1;

  if (y == 0)
    return x;
  if (y == h - 1)
    return w + (h - 2) * per_row + x;
  return w + (y - 1) * per_row + (x == 0 ? 0 : per_row - 1);
}

void
tg__flow_border_xy (int w, int h, int k, int *x, int *y)
{
  int per_row = w > 1 ? 2 : 1, mid = (h - 2) * per_row;

  if (k < w)
    {
      *x = k;
      *y = 0;
      return;
    }
  k -= w;
  if (h > 2 && k < mid)
    {
      *y = 1 + k / per_row;
      *x = k % per_row == 0 ? 0 : w - 1;
      return;
    }
  *x = k - (h > 2 ? mid : 0);
  *y = h - 1;
}

int
tg__flow_tile_of (int n, int nt, int g)
{
  int i = (int) (((int64_t) g * nt) / n);

  /* Start from the proportional guess; tiles may be empty when NT > N. */
  if (i >= nt)
    i = nt - 1;
  while (i > 0 && tg_tile_start (n, nt, i) > g)
    i--;
  while (i + 1 < nt && tg_tile_start (n, nt, i + 1) <= g)
    i++;
  return i;
}

/* --- the floods ------------------------------------------------------------- */

bool
tg__flow_cancelled (const TgFlowOpts *o)
{
  return o && o->cancelled && o->cancelled (o->parallel_ctx);
}

/* --- the floods' queue (erosion_flow.h) ----------------------------------- */

static inline int
queue_bucket (uint32_t k, uint32_t last)
{
  return k == last ? 0 : 32 - __builtin_clz (k ^ last);
}

static int
queue_add (TgFlowQueueBucket *b, uint32_t key, int32_t idx)
{
  if (b->n == b->cap)
    {
      size_t cap = b->cap ? 2 * b->cap : 1024;
      TgFlowQueueItem *a = realloc (b->a, sizeof (TgFlowQueueItem) * cap);
      if (!a)
        return TG_ENOMEM;
      b->a = a;
      b->cap = cap;
    }
  b->a[b->n].key = key;
  b->a[b->n].idx = idx;
  b->n++;
  return 0;
}

int
tg__flow_queue_push (TgFlowQueue *q, uint32_t key, int32_t idx)
{
  int k = queue_bucket (key, q->last);
  TgFlowQueueBucket *b = &q->b[k];
  size_t i;

  if (queue_add (b, key, idx) < 0)
    return TG_ENOMEM;
  q->n++;
  if (k > 0)
    return 0;
  /* (Not from a flood, which pushes above the level it takes.)  Keep
   * bucket 0 sorted by falling index. */
  for (i = b->n - 1; i > 0 && b->a[i - 1].idx < idx; i--)
    b->a[i] = b->a[i - 1];
  b->a[i].key = key;
  b->a[i].idx = idx;
  return 0;
}

static int
by_idx_desc (const void *pa, const void *pb)
{
  const TgFlowQueueItem *a = pa, *b = pb;

  return a->idx > b->idx ? -1 : a->idx < b->idx;
}

int32_t
tg__flow_queue_pop (TgFlowQueue *q)
{
  TgFlowQueueBucket *z = &q->b[0];

  if (z->n == 0)
    {
      int i = 1;
      TgFlowQueueBucket *src;
      uint32_t lo;
      while (q->b[i].n == 0)
        i++;
      src = &q->b[i];
      lo = src->a[0].key;
      for (size_t k = 1; k < src->n; k++)
        lo = src->a[k].key < lo ? src->a[k].key : lo;
      q->last = lo;
      /* Every key here goes to a lower bucket, the smallest ones to 0.
       * Equal keys are all in one bucket (the one of their highest bit
       * differing from LAST), so bucket 0 now holds all of LO's. */
      for (size_t k = 0; k < src->n; k++)
        if (queue_add (&q->b[queue_bucket (src->a[k].key, lo)], src->a[k].key, src->a[k].idx) < 0)
          return -1;
      src->n = 0;
      if (z->n == 2)
        {
          if (z->a[0].idx < z->a[1].idx)
            {
              TgFlowQueueItem t = z->a[0];
              z->a[0] = z->a[1];
              z->a[1] = t;
            }
        }
      else if (z->n > 2)
        qsort (z->a, z->n, sizeof (TgFlowQueueItem), by_idx_desc);
    }
  q->n--;
  return z->a[--z->n].idx;
}

void
tg__flow_queue_reset (TgFlowQueue *q)
{
  for (int i = 0; i < 33; i++)
    q->b[i].n = 0;
  q->last = 0;
  q->n = 0;
}

void
tg__flow_queue_free (TgFlowQueue *q)
{
  for (int i = 0; i < 33; i++)
    free (q->b[i].a);
  memset (q, 0, sizeof *q);
}

/* Samples the flood takes between two looks at the cancel hook. */
#define FILL_POLL ((size_t) 1 << 16)

/* The floods' stack of samples traced up a slope (below), grown as
 * needed.  0 or TG_ENOMEM. */
typedef struct
{
  int32_t *a;
  size_t n, cap;
} FillStack;

static inline int
stack_push (FillStack *s, int32_t i)
{
  if (s->n == s->cap)
    {
      size_t cap = s->cap ? 2 * s->cap : 4096;
      int32_t *a = realloc (s->a, sizeof (int32_t) * cap);
      if (!a)
        return TG_ENOMEM;
      s->a = a;
      s->cap = cap;
    }
  s->a[s->n++] = i;
  return 0;
}

/* The flood's order, with the slopes traced as in Zhou, Sun and Fu (2016,
 * "An efficient variant of the Priority-Flood algorithm"): a sample found
 * above the level it was reached at keeps its own height, whatever the
 * order (the way it was reached goes no higher), so instead of waiting in
 * the priority queue it is taken at once from a plain stack, and so are
 * the neighbours it finds at or above its own height.  Only a traced
 * sample with a lower neighbour not yet reached goes to the priority
 * queue (that neighbour's level is not known yet), to be taken in order
 * as before.  Depression samples (at or below the level they are reached
 * at) are filled from the pit queue at the level being taken.  So the
 * queue holds a fraction of the samples and every filled height is the
 * same (a min-max over paths: no order changes it). */
int
tg__flow_fill (const TgFlowOpts *o, const float *hm, int w, int h, float *filled)
{
  size_t taken = 0;
  bool stopped = false, nomem = false;
  size_t n = (size_t) w * (size_t) h, pq_head = 0, pq_tail = 0;
  TgFlowQueue heap = { 0 };
  FillStack trace = { 0 };
  int32_t *pit = malloc (sizeof (int32_t) * n);
  uint8_t *seen = calloc (n, 1);
  int32_t off[8];

  for (int q = 0; q < 8; q++)
    off[q] = tg__flow_dy[q] * w + tg__flow_dx[q];
  if (!pit || !seen)
    {
      free (pit);
      free (seen);
      return TG_ENOMEM;
    }
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      if (y == 0 || y == h - 1 || x == 0 || x == w - 1)
        {
          int32_t i = (int32_t) ((size_t) y * w + x);
          seen[i] = 2;
          filled[i] = hm[i];
          nomem |= tg__flow_queue_push (&heap, tg__flow_key_f32 (hm[i]), i) < 0;
        }
  while (pq_head < pq_tail || trace.n > 0 || heap.n > 0)
    {
      /* Depression samples first: they sit at the level being processed;
       * then the slopes traced up from it. */
      int32_t c;
      int cx, cy;
      float level;

      if (pq_head < pq_tail)
        c = pit[pq_head++];
      else if (trace.n > 0)
        {
          /* Traced: inside the world (only the seeds are on its edge). */
          bool lower = false;
          c = trace.a[--trace.n];
          level = filled[c];
          for (int q = 0; q < 8; q++)
            {
              int32_t i = c + off[q];
              if (seen[i])
                continue;
              if (hm[i] < level)
                {
                  lower = true;
                  continue;
                }
              seen[i] = 1;
              filled[i] = hm[i];
              nomem |= stack_push (&trace, i) < 0;
            }
          if (lower)
            nomem |= tg__flow_queue_push (&heap, tg__flow_key_f32 (level), c) < 0;
          if (nomem)
            break;
          if (++taken % FILL_POLL == 0 && (stopped = tg__flow_cancelled (o)))
            break;
          continue;
        }
      else
        c = tg__flow_queue_pop (&heap);

      if (c < 0)
        nomem = true;
      if (nomem)
        break;
      level = filled[c];
      if (++taken % FILL_POLL == 0 && (stopped = tg__flow_cancelled (o)))
        break;

      if (seen[c] == 1)
        {
          /* Not on the world's edge (only the seeds are): all eight
           * neighbours are there, at fixed offsets. */
          for (int q = 0; q < 8; q++)
            {
              int32_t i = c + off[q];
              if (seen[i])
                continue;
              seen[i] = 1;
              if (hm[i] <= level)
                {
                  filled[i] = level;
                  pit[pq_tail++] = i;
                }
              else
                {
                  filled[i] = hm[i];
                  nomem |= stack_push (&trace, i) < 0;
                }
            }
          if (pq_head == pq_tail)
            pq_head = pq_tail = 0;
          continue;
        }
      cx = (int) (c % w);
      cy = (int) (c / w);
      for (int q = 0; q < 8; q++)
        {
          int x = cx + tg__flow_dx[q], y = cy + tg__flow_dy[q];
          int32_t i;
          if (x < 0 || x >= w || y < 0 || y >= h)
            continue;
          i = (int32_t) ((size_t) y * w + x);
          if (seen[i])
            continue;
          seen[i] = 1;
          if (hm[i] <= level)
            {
              filled[i] = level;
              pit[pq_tail++] = i;
            }
          else
            {
              filled[i] = hm[i];
              nomem |= stack_push (&trace, i) < 0;
            }
        }
      /* The pit queue only grows while it drains; reuse it from the start
       * when it empties. */
      if (pq_head == pq_tail)
        pq_head = pq_tail = 0;
    }
  tg__flow_queue_free (&heap);
  free (trace.a);
  free (pit);
  free (seen);
  if (nomem)
    return TG_ENOMEM;
  return stopped ? TG_ECANCELLED : 0;
}

static int
spill_cmp (const void *pa, const void *pb)
{
  const TgFlowSpill *a = pa, *b = pb;

  if (a->a != b->a)
    return a->a < b->a ? -1 : 1;
  if (a->b != b->b)
    return a->b < b->b ? -1 : 1;
  return a->w < b->w ? -1 : a->w > b->w;
}

/* Each pair of E[0..N) once, at its lowest meeting height; returns how
 * many are left. */
static size_t
spill_compact (TgFlowSpill *e, size_t n)
{
  size_t m = 0;

  qsort (e, n, sizeof (TgFlowSpill), spill_cmp);
  for (size_t k = 0; k < n; k++)
    if (m == 0 || e[k].a != e[m - 1].a || e[k].b != e[m - 1].b)
      e[m++] = e[k];
  return m;
}

/* Notes that floods A and B meet at height W in the spill list E (N of
 * CAP), compacting it as it fills: floods meet all along their shores, so
 * it grows with the pairs.  0 or TG_ENOMEM. */
static int
note_spill (TgFlowSpill **e, size_t *n, size_t *cap, int32_t a, int32_t b, float w)
{
  if (*n == *cap)
    {
      if (*cap > 0)
        *n = spill_compact (*e, *n);
      if (*cap == 0 || *n > *cap / 2)
        {
          size_t c = *cap ? 2 * *cap : 1024;
          TgFlowSpill *g = realloc (*e, sizeof (TgFlowSpill) * c);
          if (!g)
            return TG_ENOMEM;
          *e = g;
          *cap = c;
        }
    }
  (*e)[*n].a = a < b ? a : b;
  (*e)[*n].b = a < b ? b : a;
  (*e)[*n].w = w;
  (*n)++;
  return 0;
}

/* The flood of tg__flow_fill (slopes traced, see there) with labels and
 * the spill graph.  A label is any seed the sample is reached from at its
 * local fill, which the tracing keeps (a traced sample keeps its height,
 * which the way from its finder's seed does not exceed).  Each sample is
 * taken at least once with all its neighbours looked at (a traced sample
 * with a lower neighbour not yet reached is taken again from the queue),
 * and then notes a meeting with every neighbour of another label reached
 * before it at or below its level: of two touching samples of different
 * labels, the second one taken so notes the first, or the first reached
 * the second (one label), so every meeting is noted at max (lf) of the
 * two.
 *
 * The flood is bound by memory latency (most samples go through the
 * queue, and come out of it far from where the flood last was), so it
 * reads two arrays only: LF holds a sample's height until it is reached
 * and its local fill from then on, and LABEL is -1 until it is reached
 * (no array of its own says so), a seed's label carrying FILL_SEED (the
 * border samples need the bounds) until the end: a sample's neighbours
 * are six cache lines (three rows of two arrays) rather than twelve (the
 * heights, the levels, the labels and a byte of state apart). */
#define FILL_SEED ((int32_t) 1 << 30)

int
tg__flow_fill_tile (const TgFlowOpts *o, const float *hm, int w, int h, float *lf, int32_t *label,
                    TgFlowSpill **edges, size_t *n_edges)
{
  size_t n = (size_t) w * (size_t) h, pq_head = 0, pq_tail = 0, ne = 0, cap = 0, taken = 0;
  int nb = tg__flow_border_count (w, h), rc = 0;
  TgFlowQueue heap = { 0 };
  FillStack trace = { 0 };
  int32_t *pit = NULL;
  TgFlowSpill *e = NULL;
  int32_t off[8];

  for (int q = 0; q < 8; q++)
    off[q] = tg__flow_dy[q] * w + tg__flow_dx[q];
  if (edges)
    {
      *edges = NULL;
      *n_edges = 0;
    }
  if (nb >= FILL_SEED)
    return TG_ERANGE;
  if (!(pit = malloc (sizeof (int32_t) * (n ? n : 1))))
    return TG_ENOMEM;
  memcpy (lf, hm, sizeof (float) * n);
  memset (label, 0xff, sizeof (int32_t) * n);
  for (int k = 0; k < nb; k++)
    {
      int x, y;
      int32_t i;
      tg__flow_border_xy (w, h, k, &x, &y);
      i = (int32_t) ((size_t) y * w + x);
      label[i] = k | FILL_SEED;
      if (tg__flow_queue_push (&heap, tg__flow_key_f32 (hm[i]), i) < 0)
        {
          rc = TG_ENOMEM;
          goto out;
        }
    }
  while (pq_head < pq_tail || trace.n > 0 || heap.n > 0)
    {
      int32_t c, lc;
      int cx, cy;
      bool traced = false, lower = false;
      float level;

      if (pq_head < pq_tail)
        c = pit[pq_head++];
      else if (trace.n > 0)
        {
          c = trace.a[--trace.n];
          traced = true;
        }
      else
        c = tg__flow_queue_pop (&heap);
      if (c < 0)
        {
          rc = TG_ENOMEM;
          goto out;
        }
      level = lf[c];
      lc = label[c];

      if (++taken % FILL_POLL == 0 && tg__flow_cancelled (o))
        {
          rc = TG_ECANCELLED;
          goto out;
        }
      /* Only the border's samples (the seeds) need the bounds; the others
       * take their neighbours at fixed offsets. */
      if (lc & FILL_SEED)
        {
          lc &= ~FILL_SEED;
          cx = (int) (c % w);
          cy = (int) (c / w);
        }
      else
        cx = cy = -1;
      for (int q = 0; q < 8; q++)
        {
          int32_t i, li;
          if (cx >= 0)
            {
              int x = cx + tg__flow_dx[q], y = cy + tg__flow_dy[q];
              if (x < 0 || x >= w || y < 0 || y >= h)
                continue;
              i = (int32_t) ((size_t) y * w + x);
            }
          else
            i = c + off[q];
          li = label[i];
          if (li >= 0)
            {
              /* Two floods meet: a way between their seeds at this height
               * (both samples hold their lf already).  A neighbour above
               * the level is noted when it is taken. */
              li &= ~FILL_SEED;
              if (edges && li != lc && lf[i] <= level
                  && note_spill (&e, &ne, &cap, li, lc, level) < 0)
                {
                  rc = TG_ENOMEM;
                  goto out;
                }
              continue;
            }
          /* Not reached yet: LF[I] is its height. */
          if (traced && lf[i] < level)
            {
              /* Its level is not known yet: C goes to the queue. */
              lower = true;
              continue;
            }
          label[i] = lc;
          if (lf[i] <= level && !traced)
            {
              lf[i] = level;
              pit[pq_tail++] = i;
            }
          else if (stack_push (&trace, i) < 0)
            {
              rc = TG_ENOMEM;
              goto out;
            }
        }
      if (lower && tg__flow_queue_push (&heap, tg__flow_key_f32 (level), c) < 0)
        {
          rc = TG_ENOMEM;
          goto out;
        }
      if (pq_head == pq_tail)
        pq_head = pq_tail = 0;
    }
  for (int k = 0; k < nb; k++)
    {
      int x, y;
      tg__flow_border_xy (w, h, k, &x, &y);
      label[(size_t) y * w + x] &= ~FILL_SEED;
    }
  if (edges && ne > 0)
    {
      *edges = e;
      *n_edges = spill_compact (e, ne);
      e = NULL;
    }
out:
  free (e);
  free (trace.a);
  tg__flow_queue_free (&heap);
  free (pit);
  return rc;
}
