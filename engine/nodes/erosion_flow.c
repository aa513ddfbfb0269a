/* erosion.flow: flow accumulation, how much of the world drains through
 * each sample, as a mask on a log scale for texturing rivers and gullies.
 *
 * Pits and flats first: a Priority-Flood (Barnes, Lehman and Mulla 2014,
 * with the pit queue of their "improved" variant) floods the map from its
 * edges in order of height, raising every closed depression to its spill
 * level and remembering, for every sample, the neighbour the flood reached
 * it from.  The flood's order is a drainage order: every sample comes
 * after all its strictly lower neighbours.  Water is then routed in the
 * reverse order, either to all strictly lower neighbours in proportion to
 * slope^1.1 times contour length (MFD, Quinn et al. 1991 / Freeman 1991)
 * or to the steepest one (D8); on a filled flat it follows the flood back
 * towards the spill point, so rivers run through lakes instead of
 * stopping.  Water leaves the world at its edge.
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

/* Fills FILLED (the depression-filled heights), ORDER (samples in flood
 * order) and PARENT (the neighbour each sample was reached from, -1 on
 * the edge).  Returns 0 or TG_ENOMEM. */
static int
priority_flood (const float *hm, int w, int h, float *filled, int32_t *order, int32_t *parent)
{
  size_t n = (size_t) w * (size_t) h, n_out = 0, pq_head = 0, pq_tail = 0;
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
          parent[i] = -1;
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
      order[n_out++] = c;
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
          parent[i] = c;
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

/* --- routing ----------------------------------------------------------- */

static void
route (const float *filled, const int32_t *order, const int32_t *parent, int w, int h,
       int routing, double exponent, double *acc)
{
  size_t n = (size_t) w * (size_t) h;
  /* Quinn's contour lengths (in cells) and distances for the neighbours. */
  static const double contour[8] = { 0.5, 0.5, 0.5, 0.5, 0.354, 0.354, 0.354, 0.354 };
  static const double dist[8] = { 1, 1, 1, 1, M_SQRT2, M_SQRT2, M_SQRT2, M_SQRT2 };

  for (size_t k = 0; k < n; k++)
    acc[k] = 1.0;
  for (size_t k = n; k-- > 0;)
    {
      int32_t c = order[k];
      int cx = (int) (c % w), cy = (int) (c / w);
      double wt[8], sum = 0.0, best = 0.0;
      int bq = -1;

      for (int q = 0; q < 8; q++)
        {
          int x = cx + nb_dx[q], y = cy + nb_dy[q];
          double drop;
          wt[q] = 0.0;
          if (x < 0 || x >= w || y < 0 || y >= h)
            continue;
          drop = (double) filled[c] - (double) filled[(size_t) y * w + x];
          if (!(drop > 0.0))
            continue;
          drop /= dist[q];
          if (drop > best)
            {
              best = drop;
              bq = q;
            }
          if (routing == ROUTE_MFD)
            {
              wt[q] = pow (drop, exponent) * contour[q];
              sum += wt[q];
            }
        }
      if (bq < 0)
        {
          /* A flat (or a filled lake): follow the flood back to the spill
           * point.  Edge samples without a lower neighbour drain out. */
          if (parent[c] >= 0)
            acc[parent[c]] += acc[c];
          continue;
        }
      if (routing == ROUTE_D8 || !(sum > 0.0))
        {
          acc[(size_t) (cy + nb_dy[bq]) * w + (cx + nb_dx[bq])] += acc[c];
          continue;
        }
      for (int q = 0; q < 8; q++)
        if (wt[q] > 0.0)
          acc[(size_t) (cy + nb_dy[q]) * w + (cx + nb_dx[q])] += acc[c] * (wt[q] / sum);
    }
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
  float *hm = NULL, *filled = NULL;
  int32_t *order = NULL, *parent = NULL;
  double *acc = NULL;
  FlowFinish fin;

  if ((rc = tg__check_grid_input (c, in, "height", r)) < 0)
    return rc;
  if (n > (size_t) INT32_MAX)
    return tg_eval_fail (c, TG_ERANGE, "a %d x %d map is too large for flow routing", w, h);
  hm = malloc (sizeof (float) * n);
  filled = malloc (sizeof (float) * n);
  order = malloc (sizeof (int32_t) * n);
  parent = malloc (sizeof (int32_t) * n);
  acc = malloc (sizeof (double) * n);
  if (!hm || !filled || !order || !parent || !acc)
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
  if (priority_flood (hm, w, h, filled, order, parent) < 0)
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
  route (filled, order, parent, w, h, p->routing, p->exponent, acc);

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
  free (order);
  free (parent);
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
  .version = 1,
};
TG_NODE_REGISTER (flow_desc);
