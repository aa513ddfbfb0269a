/* erosion.flow: flow accumulation, how much of the world drains through
 * each sample, as a mask on a log scale for texturing rivers and gullies.
 *
 * Pits first: a Priority-Flood (Barnes, Lehman and Mulla 2014, with the
 * pit queue of their "improved" variant) floods the map from its edges in
 * order of height, raising every closed depression to its spill level.
 * The lakes this leaves are flat; their water is given a way across them
 * that converges down the middle towards the outlet (Barnes, Lehman and
 * Mulla 2014, flat resolution; see rank_flats), so rivers run through
 * lakes as one channel.  On slopes water goes to all strictly lower
 * neighbours in proportion to slope^exponent times contour length (MFD,
 * Quinn et al. 1991 / Freeman 1991) or to the steepest one (D8), and it
 * is added up from the top down.  Water leaves the world at its edge.
 *
 * The mask is log(1 + A / a) / log(1 + W / a), with A the area draining
 * through the sample (m²), W the world's area and a the cell area of a
 * 1025-sample map of the same world: it does not depend on the region's
 * own maximum, and river channels (whose catchment area is the same at any
 * resolution) read the same in a preview and a build.  One thread, fixed
 * order: deterministic.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

#include "erosion_util.h"
#include "grid_util.h"

enum
{
  ROUTE_MFD,
  ROUTE_D8,
};

static const char *const routing_choices[] = { "mfd", "d8", NULL };

typedef struct
{
  int routing;
  double exponent;
} FlowParams;

static const TgParamDesc flow_params[] = {
  TG_PARAM_ENUM (FlowParams, routing, N_("Routing"), "mfd", routing_choices,
                 N_("mfd: water spreads over every lower neighbour by slope (soft, natural "
                    "hillslopes); d8: all of it to the steepest one (sharp single lines)")),
  TG_PARAM_FLOAT (FlowParams, exponent, N_("Convergence"), 1.1, 0.1, 10.0, NULL,
                  N_("MFD slope exponent: higher sends more water down the steepest way")),
};

static const TgPortDesc flow_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Terrain the water runs over") },
};

static const TgPortDesc flow_outputs[] = {
  { .name = "flow", .type = TG_TYPE_MASK, .label = N_("Flow"),
    .help = N_("Area draining through each sample, on a log scale of the world's area") },
};

/* --- Priority-Flood ------------------------------------------------------ */

typedef struct
{
  float key;
  int32_t idx;
} HeapItem;

typedef struct
{
  HeapItem *a;
  size_t n;
} Heap;

static inline bool
heap_less (HeapItem x, HeapItem y)
{
  return x.key < y.key || (x.key == y.key && x.idx < y.idx);
}

static void
heap_push (Heap *h, float key, int32_t idx)
{
  size_t i = h->n++;
  HeapItem it = { key, idx };

  while (i > 0)
    {
      size_t p = (i - 1) / 2;
      if (!heap_less (it, h->a[p]))
        break;
      h->a[i] = h->a[p];
      i = p;
    }
  h->a[i] = it;
}

static HeapItem
heap_pop (Heap *h)
{
  HeapItem top = h->a[0], last = h->a[--h->n];
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

static const int nb_dx[8] = { 1, -1, 0, 0, 1, -1, 1, -1 };
static const int nb_dy[8] = { 0, 0, 1, -1, 1, 1, -1, -1 };

/* Fills FILLED with the depression-filled heights.  Returns 0 or
 * TG_ENOMEM. */
static int
priority_flood (const float *hm, int w, int h, float *filled)
{
  size_t n = (size_t) w * (size_t) h, pq_head = 0, pq_tail = 0;
  Heap heap = { malloc (sizeof (HeapItem) * n), 0 };
  int32_t *pit = malloc (sizeof (int32_t) * n);
  uint8_t *seen = calloc (n, 1);

  if (!heap.a || !pit || !seen)
    {
      free (heap.a);
      free (pit);
      free (seen);
      return TG_ENOMEM;
    }
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      if (y == 0 || y == h - 1 || x == 0 || x == w - 1)
        {
          int32_t i = (int32_t) ((size_t) y * w + x);
          seen[i] = 1;
          filled[i] = hm[i];
          heap_push (&heap, hm[i], i);
        }
  while (pq_head < pq_tail || heap.n > 0)
    {
      int32_t c;
      int cx, cy;
      float level;

      /* Depression cells first: they sit at the level being processed. */
      if (pq_head < pq_tail)
        c = pit[pq_head++];
      else
        c = heap_pop (&heap).idx;
      level = filled[c];
      cx = (int) (c % w);
      cy = (int) (c / w);
      for (int q = 0; q < 8; q++)
        {
          int x = cx + nb_dx[q], y = cy + nb_dy[q];
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
              heap_push (&heap, hm[i], i);
            }
        }
      /* The pit queue only grows while it drains; reuse it from the start
       * when it empties. */
      if (pq_head == pq_tail)
        pq_head = pq_tail = 0;
    }
  free (heap.a);
  free (pit);
  free (seen);
  return 0;
}

/* --- flats ------------------------------------------------------------- */

/* A flat sample lies inside the map with no strictly lower neighbour:
 * the floor of a filled lake, or ground that is level by construction.
 * Edge samples are never flat: water leaves the world there. */
static bool
is_flat (const float *filled, int w, int h, int x, int y)
{
  float z = filled[(size_t) y * w + x];

  if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
    return false;
  for (int q = 0; q < 8; q++)
    if (filled[(size_t) (y + nb_dy[q]) * w + (x + nb_dx[q])] < z)
      return false;
  return true;
}

/* A breadth-first walk over the flat samples of one level: from the
 * seeds in QUEUE[0..n_seed) (their MARK already set), every flat sample of
 * a seed's level whose MARK is 0 gets its neighbour's + STEP (1 counts
 * steps, 0 copies a label), in the order it is reached.  Returns the
 * number of samples in QUEUE at the end. */
static size_t
flat_walk (const float *filled, const uint8_t *flat, int w, int h, int32_t *queue, size_t n_seed,
           int32_t *mark, int32_t step)
{
  size_t head = 0, tail = n_seed;

  while (head < tail)
    {
      int32_t c = queue[head++];
      int cx = (int) (c % w), cy = (int) (c / w);
      for (int q = 0; q < 8; q++)
        {
          int x = cx + nb_dx[q], y = cy + nb_dy[q];
          int32_t i;
          if (x < 0 || x >= w || y < 0 || y >= h)
            continue;
          i = (int32_t) ((size_t) y * w + x);
          if (!flat[i] || mark[i] != 0 || filled[i] != filled[c])
            continue;
          mark[i] = mark[c] + step;
          queue[tail++] = i;
        }
    }
  return tail;
}

/* A slope across every flat (Barnes, Lehman and Mulla 2014, "An
 * efficient assignment of drainage direction over flat surfaces"): each
 * flat sample gets the rank
 *
 *   2 * (steps to the flat's way out) + (largest - steps from higher ground)
 *
 * and water on a flat runs down the ranks as it runs down heights
 * elsewhere: towards the outlet while keeping away from the higher ground
 * around it, so it gathers into one channel down the middle of a lake
 * instead of running to the spill point in parallel straight lines.
 * Every flat sample has a neighbour of lower rank (one step closer to the
 * way out gains 2, the second term changes by at most 1); the samples of
 * the flat's level that drain (the way out) rank below all of them.
 * Fills RANK (-1 off flats).  SCRATCH_A and SCRATCH_B hold 2 n int32
 * each.  Returns 0 or TG_ENOMEM. */
static int
rank_flats (const float *filled, int w, int h, int32_t *rank, int32_t *scratch_a,
            int32_t *scratch_b)
{
  size_t n = (size_t) w * (size_t) h, n_seed = 0;
  int32_t *low = scratch_a, *high = scratch_a + n, *queue = scratch_b, *label = scratch_b + n;
  int32_t n_labels = 0, *largest;
  uint8_t *flat = calloc (n, 1), any_flat = 0;

  if (!flat)
    return TG_ENOMEM;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      any_flat |= flat[(size_t) y * w + x] = is_flat (filled, w, h, x, y);
  if (!any_flat)
    {
      for (size_t i = 0; i < n; i++)
        rank[i] = -1;
      free (flat);
      return 0;
    }

  /* Each flat (flat samples of one level, connected) gets a label. */
  memset (label, 0, sizeof (int32_t) * n);
  for (size_t i = 0; i < n; i++)
    if (flat[i] && label[i] == 0)
      {
        label[i] = ++n_labels;
        queue[0] = (int32_t) i;
        flat_walk (filled, flat, w, h, queue, 1, label, 0);
      }

  /* Steps to the way out: from the samples of the same level that do
   * drain (they have a lower neighbour or lie on the edge; 0 steps),
   * found from the flats' side: flats are few.  -1 marks a seed taken
   * until the walk starts. */
  memset (low, 0, sizeof (int32_t) * n);
  for (size_t i = 0; i < n; i++)
    {
      int x = (int) (i % w), y = (int) (i / w);
      if (!flat[i])
        continue;
      for (int q = 0; q < 8; q++)
        {
          size_t j = (size_t) (y + nb_dy[q]) * w + (x + nb_dx[q]);
          if (!flat[j] && filled[j] == filled[i] && low[j] == 0)
            {
              low[j] = -1;
              queue[n_seed++] = (int32_t) j;
            }
        }
    }
  for (size_t k = 0; k < n_seed; k++)
    low[queue[k]] = 0;
  flat_walk (filled, flat, w, h, queue, n_seed, low, 1);

  /* Steps from higher ground: from the flat samples next to it (1 step). */
  memset (high, 0, sizeof (int32_t) * n);
  n_seed = 0;
  for (size_t i = 0; i < n; i++)
    {
      int x = (int) (i % w), y = (int) (i / w);
      if (!flat[i])
        continue;
      for (int q = 0; q < 8; q++)
        if (filled[(size_t) (y + nb_dy[q]) * w + (x + nb_dx[q])] > filled[i])
          {
            high[i] = 1;
            queue[n_seed++] = (int32_t) i;
            break;
          }
    }
  flat_walk (filled, flat, w, h, queue, n_seed, high, 1);

  largest = calloc ((size_t) n_labels + 1, sizeof (int32_t));
  if (!largest)
    {
      free (flat);
      return TG_ENOMEM;
    }
  for (size_t i = 0; i < n; i++)
    if (flat[i] && high[i] > largest[label[i]])
      largest[label[i]] = high[i];

  for (size_t i = 0; i < n; i++)
    {
      if (!flat[i])
        rank[i] = -1;
      else if (low[i] == 0)
        rank[i] = INT32_MAX; /* (never after the fill) no way out */
      else
        rank[i] = 2 * low[i] + (high[i] ? largest[label[i]] - high[i] : 0);
    }
  free (largest);
  free (flat);
  return 0;
}

/* --- routing ----------------------------------------------------------- */

/* Where a sample's water goes: on slopes to all strictly lower
 * neighbours in proportion to slope^EXPONENT times contour length (MFD)
 * or to the steepest one (D8); on a flat the same down its ranks, among
 * the neighbours of its level.  Returns the receivers as a bit mask over
 * the 8 neighbours and, when WT is not NULL, fills WT[8] with their
 * shares (an MFD share may underflow to 0; the receiver still counts).
 * An edge sample with nowhere lower drains out of the world (mask 0). */
static unsigned
receivers (const float *filled, const int32_t *rank, int w, int h, int routing, double exponent,
           int32_t c, double *wt)
{
  /* Quinn's contour lengths (in cells) and distances for the neighbours. */
  static const double contour[8] = { 0.5, 0.5, 0.5, 0.5, 0.354, 0.354, 0.354, 0.354 };
  static const double dist[8] = { 1, 1, 1, 1, M_SQRT2, M_SQRT2, M_SQRT2, M_SQRT2 };
  int cx = (int) (c % w), cy = (int) (c / w), bq = -1;
  double drop[8], sum = 0.0, best = 0.0;
  unsigned mask = 0;

  for (int q = 0; q < 8; q++)
    {
      int x = cx + nb_dx[q], y = cy + nb_dy[q];
      size_t j = (size_t) y * w + x;
      double d;
      drop[q] = 0.0;
      if (x < 0 || x >= w || y < 0 || y >= h)
        continue;
      if (rank[c] >= 0)
        d = filled[j] == filled[c] ? (double) rank[c] - (double) rank[j] : 0.0;
      else
        d = (double) filled[c] - (double) filled[j];
      if (!(d > 0.0))
        continue;
      drop[q] = d / dist[q];
      mask |= 1u << q;
      if (drop[q] > best)
        {
          best = drop[q];
          bq = q;
        }
    }
  if (bq < 0)
    return 0;
  if (routing == ROUTE_D8)
    mask = 1u << bq;
  if (!wt)
    return mask;
  for (int q = 0; q < 8; q++)
    {
      wt[q] = 0.0;
      if (routing == ROUTE_MFD && (mask & (1u << q)))
        {
          wt[q] = pow (drop[q], exponent) * contour[q];
          sum += wt[q];
        }
    }
  if (routing == ROUTE_D8 || !(sum > 0.0))
    {
      /* D8, or every MFD share underflowed: all to the steepest. */
      for (int q = 0; q < 8; q++)
        wt[q] = q == bq;
      return mask;
    }
  for (int q = 0; q < 8; q++)
    wt[q] /= sum;
  return mask;
}

/* Accumulates the area (in samples) draining through every sample:
 * upstream samples first (Kahn's order, from the samples nothing drains
 * into), so the result does not depend on how flats were reached.
 * QUEUE holds n int32.  Returns 0 or TG_ENOMEM. */
static int
route (const float *filled, const int32_t *rank, int w, int h, int routing, double exponent,
       int32_t *queue, double *acc)
{
  size_t n = (size_t) w * (size_t) h, head = 0, tail = 0;
  uint8_t *donors = calloc (n, 1);
  double wt[8];

  if (!donors)
    return TG_ENOMEM;
  for (size_t i = 0; i < n; i++)
    {
      int cx = (int) (i % w), cy = (int) (i / w);

      unsigned mask = receivers (filled, rank, w, h, routing, exponent, (int32_t) i, NULL);

      acc[i] = 1.0;
      for (int q = 0; q < 8; q++)
        if (mask & (1u << q))
          donors[(size_t) (cy + nb_dy[q]) * w + (cx + nb_dx[q])]++;
    }
  for (size_t i = 0; i < n; i++)
    if (donors[i] == 0)
      queue[tail++] = (int32_t) i;
  while (head < tail)
    {
      int32_t c = queue[head++];
      int cx = (int) (c % w), cy = (int) (c / w);
      unsigned mask = receivers (filled, rank, w, h, routing, exponent, c, wt);

      for (int q = 0; q < 8; q++)
        if (mask & (1u << q))
          {
            size_t j = (size_t) (cy + nb_dy[q]) * w + (cx + nb_dx[q]);
            acc[j] += acc[c] * wt[q];
            if (--donors[j] == 0)
              queue[tail++] = (int32_t) j;
          }
    }
  free (donors);
  return 0;
}

/* --- the node ---------------------------------------------------------- */

typedef struct
{
  const double *acc;
  TgValue *out;
  double cell_area_over_ref, log_max;
} FlowFinish;

static void
flow_finish_rows (void *user, int begin, int end)
{
  const FlowFinish *job = user;
  int w = job->out->region.width;

  for (int j = begin; j < end; j++)
    {
      const double *a = job->acc + (size_t) j * w;
      float *o = tg_value_row (job->out, j);
      for (int i = 0; i < w; i++)
        o[i] = tg__erosion_mask_linear (log1p (a[i] * job->cell_area_over_ref), job->log_max);
    }
}

static int
flow_eval (TgEvalCtx *c)
{
  const FlowParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  const TgValue *in = tg_eval_input (c, 0);
  const TgWorld *world = tg_eval_world (c);
  int w = r->width, h = r->height, rc;
  size_t n = (size_t) w * (size_t) h;
  /* Four buffers, each used twice: the input heights, then the flats'
   * ranks; the flats' scratch, then the accumulation (8 bytes a sample);
   * more scratch, then the routing queue. */
  float *hm = NULL, *filled = NULL;
  int32_t *rank, *scratch = NULL;
  double *acc = NULL;
  FlowFinish fin;

  if ((rc = tg__check_grid_input (c, in, "height", r)) < 0)
    return rc;
  if (n > (size_t) INT32_MAX)
    return tg_eval_fail (c, TG_ERANGE, "a %d x %d map is too large for flow routing", w, h);
  hm = malloc (sizeof (float) * n);
  filled = malloc (sizeof (float) * n);
  scratch = malloc (sizeof (int32_t) * 2 * n);
  acc = malloc (sizeof (double) * n);
  if (!hm || !filled || !scratch || !acc)
    {
      rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d map", w, h);
      goto out;
    }
  /* A NaN would break the flood's ordering; treat it as sea level. */
  for (int j = 0; j < h; j++)
    {
      const float *src = tg__grid_row (in, r, j);
      float *dst = hm + (size_t) j * w;
      for (int i = 0; i < w; i++)
        dst[i] = isfinite (src[i]) ? src[i] : 0.0f;
    }
  rank = (int32_t *) hm;
  if (priority_flood (hm, w, h, filled) < 0
      || rank_flats (filled, w, h, rank, (int32_t *) acc, scratch) < 0)
    {
      rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d map", w, h);
      goto out;
    }
  tg_eval_progress (c, 0.5);
  if (tg_eval_cancelled (c))
    {
      rc = TG_ECANCELLED;
      goto out;
    }
  if (route (filled, rank, w, h, p->routing, p->exponent, scratch, acc) < 0)
    {
      rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d map", w, h);
      goto out;
    }

  {
    /* Reference cell: a 1025-sample map of this world. */
    double sx = world->size_x > 0 ? world->size_x : r->cell * (r->full_w - 1);
    double sz = world->size_z > 0 ? world->size_z : r->cell * (r->full_h - 1);
    double ref_area = (sx / 1024.0) * (sx / 1024.0);
    fin.acc = acc;
    fin.cell_area_over_ref = r->cell * r->cell / ref_area;
    fin.log_max = log1p (sx * sz / ref_area);
  }
  fin.out = tg_eval_new_output (c, 0, 1);
  if (!fin.out)
    rc = tg_eval_fail (c, TG_ENOMEM, "out of memory");
  else
    rc = tg_eval_parallel (c, h, tg__grain_rows (w), flow_finish_rows, &fin);
out:
  free (hm);
  free (filled);
  free (scratch);
  free (acc);
  return rc;
}

static const TgNodeDesc flow_desc = {
  .type = "erosion.flow",
  .category = "Erosion",
  .label = N_("Flow"),
  .help = N_("Where water gathers: the area draining through each point, on a log scale, "
             "with pits filled so rivers reach the edge"),
  .inputs = flow_inputs,
  .n_inputs = TG_N_ELEMENTS (flow_inputs),
  .outputs = flow_outputs,
  .n_outputs = TG_N_ELEMENTS (flow_outputs),
  .params = flow_params,
  .n_params = TG_N_ELEMENTS (flow_params),
  .params_size = sizeof (FlowParams),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = flow_eval,
  .version = 2,
};
TG_NODE_REGISTER (flow_desc);
