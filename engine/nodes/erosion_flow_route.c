/* erosion.flow, routing: flat ranks, where each sample's water goes, and
 * the sums of water that make the result, all in a form whose bytes do not
 * depend on how the world is cut into tiles.
 *
 * Flats get the ranks of Barnes, Lehman and Mulla (2014, flat resolution):
 * integer breadth-first distances, which are the same numbers however and
 * in whatever order they are found, so the dense walk over a whole world
 * and the sparse one over a list of flat samples (the tiled reduce) agree.
 *
 * Water: D8 sends all of a sample's water to its steepest lower neighbour
 * (down the ranks on a flat).  MFD spreads it over all lower neighbours by
 * slope^exponent times contour length (Quinn et al. 1991), but only for
 * TG__FLOW_MFD_STEPS steps, after which it follows D8.  That bound is what
 * makes it exact under tiling: the spreading is a pull over a fixed
 * window (each value a fixed function of its neighbours, in a fixed
 * order), and what is left after it is a D8 sum of integers (fixed point,
 * TG__FLOW_ONE a sample), which no order or cut can change.  Unbounded
 * MFD cannot be: the share of each water entering a tile that leaves by
 * each border sample is a dense border x border matrix of reals.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/error.h>

#include "erosion_flow.h"
#include "erosion_util.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#ifdef TG__EROSION_HAVE_X86
#include <immintrin.h>
#endif

#define dx tg__flow_dx
#define dy tg__flow_dy

/* Direction from a neighbour back to the sample. */
static const int opposite[8] = { 1, 0, 3, 2, 7, 6, 5, 4 };

/* --- dense flat ranks ---------------------------------------------------- */

/* A flat sample lies inside the world with no strictly lower neighbour:
 * the floor of a filled lake, or ground that is level by construction.
 * Edge samples are never flat: water leaves the world there. */
static bool
is_flat (const float *filled, int w, int h, int x, int y)
{
  float z = filled[(size_t) y * w + x];

  if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
    return false;
  for (int q = 0; q < 8; q++)
    if (filled[(size_t) (y + dy[q]) * w + (x + dx[q])] < z)
      return false;
  return true;
}

/* A breadth-first walk over the flat samples of one level: from the seeds
 * in QUEUE[0..n_seed) (their MARK already set), every flat sample of a
 * seed's level whose MARK is 0 gets its neighbour's + STEP, in the order
 * it is reached. */
static void
flat_walk (const float *filled, const uint8_t *flat, int w, int h, int32_t *queue, size_t n_seed,
           int32_t *mark, int32_t step)
{
  size_t head = 0, tail = n_seed;

  int32_t off[8];

  for (int q = 0; q < 8; q++)
    off[q] = dy[q] * w + dx[q];
  while (head < tail)
    {
      int32_t c = queue[head++];
      if (flat[c])
        {
          /* Flat samples are inside the world: no bounds to check. */
          for (int q = 0; q < 8; q++)
            {
              int32_t i = c + off[q];
              if (!flat[i] || mark[i] != 0 || filled[i] != filled[c])
                continue;
              mark[i] = mark[c] + step;
              queue[tail++] = i;
            }
          continue;
        }
      int cx = (int) (c % w), cy = (int) (c / w);
      for (int q = 0; q < 8; q++)
        {
          int x = cx + dx[q], y = cy + dy[q];
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
}

/* Each flat sample gets the rank
 *
 *   2 * (steps to the flat's way out) + (largest - steps from higher ground)
 *
 * and water on a flat runs down the ranks as it runs down heights
 * elsewhere: towards the outlet while keeping away from the higher ground
 * around it, so it gathers into one channel down the middle of a lake.
 * Every flat sample has a neighbour of lower rank (one step closer to the
 * way out gains 2, the second term changes by at most 1); the samples of
 * the flat's level that drain (the way out) rank below all of them. */
int32_t
tg__flow_flat_rank (int32_t low, int32_t high, int32_t largest)
{
  if (low == 0)
    return INT32_MAX; /* (never after the fill) no way out */
  return 2 * low + (high ? largest - high : 0);
}

static int run_rows (const TgFlowOpts *o, int rows, int width, void (*fn) (void *, int, int),
                     void *user);

typedef struct
{
  const float *filled;
  uint8_t *flat;
  int w, h;
} FlatJob;

static void
flat_rows (void *user, int begin, int end)
{
  const FlatJob *j = user;

  int w = j->w;

  for (int y = begin; y < end; y++)
    {
      const float *r1 = j->filled + (size_t) y * w, *r0 = r1 - w, *r2 = r1 + w;
      uint8_t *f = j->flat + (size_t) y * w;
      if (y == 0 || y == j->h - 1 || w < 3)
        {
          for (int x = 0; x < w; x++)
            f[x] = is_flat (j->filled, w, j->h, x, y);
          continue;
        }
      /* Inside rows: is_flat without its bounds, no branch per neighbour. */
      f[0] = f[w - 1] = 0;
      for (int x = 1; x < w - 1; x++)
        {
          float z = r1[x];
          f[x] = !(r1[x + 1] < z) & !(r1[x - 1] < z) & !(r2[x] < z) & !(r0[x] < z)
                 & !(r2[x + 1] < z) & !(r2[x - 1] < z) & !(r0[x + 1] < z) & !(r0[x - 1] < z);
        }
    }
}

/* The walks of the flat ranks, each with its own queue (sized to the
 * samples it can take, and freed when it is done): 0 finds the steps from
 * higher ground, 1 labels the flats (counting them in N_LABELS), 2 finds
 * the steps to the way out.  Walk 0 goes first since it is the longest
 * (its seeds line every shore, so its wave runs over the whole map at
 * once: 0.06 to 0.10 s CPU at 2049², against 0.03 and 0.05 for the other
 * two); on two threads the other two then share the second one.  N_FLAT
 * counts the flat samples; FAILED[k] says walk k ran out of memory. */
typedef struct
{
  const float *filled;
  const uint8_t *flat;
  int w, h;
  size_t n_flat;
  int32_t *label, *low, *high;
  int32_t n_labels;
  bool failed[3];
} RankJob;

static void
rank_walks (void *user, int begin, int end)
{
  RankJob *j = user;
  const float *filled = j->filled;
  const uint8_t *flat = j->flat;
  int w = j->w, h = j->h;
  size_t n = (size_t) w * (size_t) h, n_seed = 0;

  for (int k = begin; k < end; k++)
    {
      int32_t *queue = NULL;
      n_seed = 0;
      if (k == 1)
        {
          /* Each flat (flat samples of one level, connected) gets a label;
           * a walk takes flat samples only. */
          memset (j->label, 0, sizeof (int32_t) * n);
          if (!(queue = malloc (sizeof (int32_t) * (j->n_flat ? j->n_flat : 1))))
            goto failed;
          for (size_t i = 0; i < n; i++)
            if (flat[i] && j->label[i] == 0)
              {
                j->label[i] = ++j->n_labels;
                queue[0] = (int32_t) i;
                flat_walk (filled, flat, w, h, queue, 1, j->label, 0);
              }
        }
      else if (k == 2)
        {
          /* Steps to the way out: from the samples of the same level that
           * do drain (0 steps), found from the flats' side (flat samples
           * are inside the world) in one pass, the queue growing while it
           * takes them (the walk then needs N_FLAT more).  -1 marks a seed
           * taken until the walk starts. */
          int32_t *low = j->low;
          size_t cap = j->n_flat + j->n_flat / 8 + 16;
          memset (low, 0, sizeof (int32_t) * n);
          if (!(queue = malloc (sizeof (int32_t) * cap)))
            goto failed;
          for (int y = 1; y < h - 1; y++)
            for (int x = 1; x < w - 1; x++)
              {
                size_t i = (size_t) y * w + x;
                if (!flat[i])
                  continue;
                for (int q = 0; q < 8; q++)
                  {
                    size_t nb = (size_t) (y + dy[q]) * w + (x + dx[q]);
                    if (flat[nb] || filled[nb] != filled[i] || low[nb] != 0)
                      continue;
                    if (n_seed == cap - j->n_flat)
                      {
                        int32_t *g = realloc (queue, sizeof (int32_t) * (cap += cap / 2));
                        if (!g)
                          goto failed;
                        queue = g;
                      }
                    low[nb] = -1;
                    queue[n_seed++] = (int32_t) nb;
                  }
              }
          for (size_t s = 0; s < n_seed; s++)
            low[queue[s]] = 0;
          flat_walk (filled, flat, w, h, queue, n_seed, low, 1);
        }
      else
        {
          /* Steps from higher ground: from the flat samples next to it (1
           * step); a walk takes flat samples only. */
          int32_t *high = j->high;
          memset (high, 0, sizeof (int32_t) * n);
          if (!(queue = malloc (sizeof (int32_t) * (j->n_flat ? j->n_flat : 1))))
            goto failed;
          for (int y = 1; y < h - 1; y++)
            for (int x = 1; x < w - 1; x++)
              {
                size_t i = (size_t) y * w + x;
                if (!flat[i])
                  continue;
                for (int q = 0; q < 8; q++)
                  if (filled[(size_t) (y + dy[q]) * w + (x + dx[q])] > filled[i])
                    {
                      high[i] = 1;
                      queue[n_seed++] = (int32_t) i;
                      break;
                    }
              }
          flat_walk (filled, flat, w, h, queue, n_seed, high, 1);
        }
      free (queue);
      continue;
    failed:
      free (queue);
      j->failed[k] = true;
    }
}

/* Each sample's rank from its walks, by rows: RANK is LOW, each sample's
 * rank replacing its own steps to the way out. */
typedef struct
{
  const uint8_t *flat;
  const int32_t *low, *high, *label, *largest;
  int32_t *rank;
  int w;
} RankRows;

static void
rank_rows (void *user, int begin, int end)
{
  const RankRows *r = user;

  for (size_t i = (size_t) begin * r->w; i < (size_t) end * r->w; i++)
    r->rank[i] = r->flat[i] ? tg__flow_flat_rank (r->low[i], r->high[i], r->largest[r->label[i]])
                            : -1;
}

int
tg__flow_ranks (const TgFlowOpts *o, const float *filled, int w, int h, int32_t *rank)
{
  return tg__flow_ranks_buf (o, filled, w, h, rank, NULL);
}

int
tg__flow_ranks_buf (const TgFlowOpts *o, const float *filled, int w, int h, int32_t *rank,
                    void *scratch)
{
  size_t n = (size_t) w * (size_t) h, n_flat = 0;
  /* The steps to the way out go in RANK, which each sample's rank then
   * replaces.  HIGH, LABEL and FLAT (which flat_rows writes whole) are
   * SCRATCH's when there is one. */
  int32_t *low = rank, *high = scratch ? scratch : malloc (sizeof (int32_t) * n);
  int32_t *label = scratch ? (int32_t *) scratch + n : malloc (sizeof (int32_t) * n);
  int32_t n_labels = 0, *largest = NULL;
  uint8_t *flat = scratch ? (uint8_t *) scratch + 8 * n : calloc (n, 1);
  int rc = TG_ENOMEM;
  FlatJob fj = { filled, flat, w, h };
  RankJob rj;

  if (!high || !label || !flat)
    goto out;
  if (run_rows (o, h, w, flat_rows, &fj) < 0)
    goto out;
  for (size_t i = 0; i < n; i++)
    n_flat += flat[i];
  if (n_flat == 0)
    {
      for (size_t i = 0; i < n; i++)
        rank[i] = -1;
      rc = 0;
      goto out;
    }

  /* The three walks need only FLAT and FILLED: one job each. */
  rj = (RankJob) { filled, flat, w, h, n_flat, label, low, high, 0, { false, false, false } };
  if (!o->parallel)
    rank_walks (&rj, 0, 3);
  else if (o->parallel (o->parallel_ctx, 3, 1, rank_walks, &rj) < 0)
    goto out;
  if (rj.failed[0] || rj.failed[1] || rj.failed[2])
    goto out;
  n_labels = rj.n_labels;
  if (tg__flow_cancelled (o))
    {
      rc = TG_ECANCELLED;
      goto out;
    }

  largest = calloc ((size_t) n_labels + 1, sizeof (int32_t));
  if (!largest)
    goto out;
  for (size_t i = 0; i < n; i++)
    if (flat[i] && high[i] > largest[label[i]])
      largest[label[i]] = high[i];
  {
    RankRows rr = { flat, low, high, label, largest, rank, w };
    if (run_rows (o, h, w, rank_rows, &rr) < 0)
      goto out;
  }
  rc = 0;
out:
  free (largest);
  if (!scratch)
    {
      free (high);
      free (label);
      free (flat);
    }
  return rc;
}

/* --- sparse flat ranks (the tiled reduce) ------------------------------- */

typedef struct
{
  int64_t g;
  int32_t i;
} Keyed;

static int
keyed_cmp (const void *pa, const void *pb)
{
  const Keyed *a = pa, *b = pb;

  return a->g < b->g ? -1 : a->g > b->g;
}

static int32_t
find_sorted (const Keyed *k, size_t n, int64_t g)
{
  size_t lo = 0, hi = n;

  while (lo < hi)
    {
      size_t mid = lo + (hi - lo) / 2;
      if (k[mid].g < g)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo < n && k[lo].g == g ? (int32_t) lo : -1;
}

/* The breadth-first walk of flat_walk over the list: NB holds each
 * sample's 8 neighbours on its flat (-1: none). */
static void
sparse_walk (const int32_t *nb, int32_t *queue, size_t n_seed, int32_t *mark, int32_t step)
{
  size_t head = 0, tail = n_seed;

  while (head < tail)
    {
      int32_t c = queue[head++];
      for (int q = 0; q < 8; q++)
        {
          int32_t i = nb[(size_t) c * 8 + q];
          if (i < 0 || mark[i] != 0)
            continue;
          mark[i] = mark[c] + step;
          queue[tail++] = i;
        }
    }
}

int
tg__flow_ranks_sparse (const int64_t *gidx, const float *level, const uint8_t *flags,
                       size_t n, int fw, int32_t *rank)
{
  Keyed *k = malloc (sizeof (Keyed) * (n ? n : 1));
  int32_t *nb = malloc (sizeof (int32_t) * 8 * (n ? n : 1));
  int32_t *low = calloc (n ? n : 1, sizeof (int32_t)), *high = calloc (n ? n : 1, sizeof (int32_t));
  int32_t *label = calloc (n ? n : 1, sizeof (int32_t)), *queue = malloc (sizeof (int32_t) * (n ? n : 1));
  int32_t n_labels = 0, *largest = NULL;
  size_t n_seed;
  int rc = TG_ENOMEM;

  if (!k || !nb || !low || !high || !label || !queue)
    goto out;
  for (size_t s = 0; s < n; s++)
    {
      k[s].g = gidx[s];
      k[s].i = (int32_t) s;
    }
  qsort (k, n, sizeof (Keyed), keyed_cmp);
  /* Work in sorted order; neighbours on the same flat by binary search. */
  for (size_t s = 0; s < n; s++)
    {
      int64_t gx = k[s].g % fw, gy = k[s].g / fw;
      for (int q = 0; q < 8; q++)
        {
          int64_t x = gx + dx[q], y = gy + dy[q];
          int32_t t = -1;
          if (x >= 0 && x < fw && y >= 0)
            t = find_sorted (k, n, y * fw + x);
          if (t >= 0 && level[k[t].i] != level[k[s].i])
            t = -1;
          nb[s * 8 + q] = t;
        }
    }
  for (size_t s = 0; s < n; s++)
    if (label[s] == 0)
      {
        label[s] = ++n_labels;
        queue[0] = (int32_t) s;
        sparse_walk (nb, queue, 1, label, 0);
      }
  n_seed = 0;
  for (size_t s = 0; s < n; s++)
    if (flags[k[s].i] & TG__FLAT_DRAIN)
      {
        low[s] = 1;
        queue[n_seed++] = (int32_t) s;
      }
  sparse_walk (nb, queue, n_seed, low, 1);
  n_seed = 0;
  for (size_t s = 0; s < n; s++)
    if (flags[k[s].i] & TG__FLAT_HIGH)
      {
        high[s] = 1;
        queue[n_seed++] = (int32_t) s;
      }
  sparse_walk (nb, queue, n_seed, high, 1);
  largest = calloc ((size_t) n_labels + 1, sizeof (int32_t));
  if (!largest)
    goto out;
  for (size_t s = 0; s < n; s++)
    if (high[s] > largest[label[s]])
      largest[label[s]] = high[s];
  for (size_t s = 0; s < n; s++)
    rank[k[s].i] = tg__flow_flat_rank (low[s], high[s], largest[label[s]]);
  rc = 0;
out:
  free (largest);
  free (k);
  free (nb);
  free (low);
  free (high);
  free (label);
  free (queue);
  return rc;
}

/* --- receivers ------------------------------------------------------------ */

int
tg__flow_reach (const TgFlowOpts *o)
{
  /* The MFD steps reach that far (each one neighbour further, its shares
   * one more); D8 and the flats' flags need two samples. */
  return o->routing == TG__FLOW_MFD ? TG__FLOW_MFD_STEPS + 1 : 2;
}

/* Where a sample's water goes: to all strictly lower neighbours (MFD) or
 * to the steepest one (D8); on a flat the same down its ranks, among the
 * neighbours of its level.  Returns the receivers as a bit mask, *BEST
 * the steepest (-1: none; an edge sample with nowhere lower drains out of
 * the world) and, when DROP is not NULL, fills DROP[8] with the drop
 * over distance to each receiver (mfd_shares_row makes the shares). */
static unsigned
receivers (const float *filled, const int32_t *rank, int w, int h, int routing, int cx, int cy,
           double *drop_out, int *best_q)
{
  static const double dist[8] = { 1, 1, 1, 1, M_SQRT2, M_SQRT2, M_SQRT2, M_SQRT2 };
  size_t c = (size_t) cy * w + cx;
  bool inner = cx > 0 && cy > 0 && cx < w - 1 && cy < h - 1;
  int bq = -1;
  double drop[8], best = 0.0;
  unsigned mask = 0;

  for (int q = 0; q < 8; q++)
    {
      int x = cx + dx[q], y = cy + dy[q];
      size_t j = (size_t) y * w + x;
      double d;
      drop[q] = 0.0;
      if (!inner && (x < 0 || x >= w || y < 0 || y >= h))
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
  *best_q = bq;
  if (bq < 0 || routing == TG__FLOW_D8)
    return bq < 0 ? 0 : 1u << bq;
  if (drop_out)
    memcpy (drop_out, drop, sizeof drop);
  return mask;
}

/* --- the sums ---------------------------------------------------------- */

/* Whether window sample (X, Y) has all its neighbours in the window or
 * beyond the world's edge: only there are its receivers known. */
static inline bool
known (const TgFlowWindow *win, int x, int y)
{
  return (x > 0 || win->wx0 == 0) && (y > 0 || win->wy0 == 0)
         && (x < win->ww - 1 || win->wx0 + win->ww == win->fw)
         && (y < win->wh - 1 || win->wy0 + win->wh == win->fh);
}

/* The MFD steps over the window, as jobs over bands of its rows. */
typedef struct
{
  const TgFlowOpts *o;
  const TgFlowWindow *win;
  const float *filled;
  const int32_t *rank;
  double *s;
  int64_t *src;
  /* The steepest receiver of each tile sample (-1: none). */
  int8_t *dir;
  /* Per band: 1 when its job ran out of memory. */
  int8_t *failed;
  int isa; /* the pulls' kernel (PULL_*) */
} MfdJob;

/* Window rows whose shares a band holds at once: the rows its steps read
 * at one time (TG__FLOW_MFD_STEPS + 2) and the one being made. */
#define SHARE_ROWS (TG__FLOW_MFD_STEPS + 3)

static void pow_rows (int isa, double *v, size_t n, double p);

/* The MFD pulls' kernel enum (their code is further down). */
enum
{
  PULL_SSE2,
  PULL_AVX2,
  PULL_AVX512,
};

static const double mfd_contour[8] = { 0.5, 0.5, 0.5, 0.5, 0.354, 0.354, 0.354, 0.354 };

#ifdef TG__EROSION_HAVE_X86
/* mfd_shares_row's two passes over the inner samples [X, END) of an inner
 * row (all eight neighbours in the window), eight samples a vector in
 * AVX-512, with the scalar code's IEEE operations in its order in every
 * lane (so the same bytes).  The first takes the drops (both the height
 * and the flat formula, selected per lane), the receivers and the
 * steepest, saving MASK and BEST_Q per sample and the drops of the
 * samples with two receivers or more in PW (compressed in receiver order
 * for each eight samples; the second pass expands them in the same
 * order; PW has room for 8 more); it returns the new count of PW.  The second makes the shares of
 * every plane at those samples: a receiver's weight over the sum (the
 * other planes 0 / sum = 0), or 1 for the steepest when there is one
 * receiver or every power underflowed. */
__attribute__ ((target ("avx512f,avx512dq"))) static size_t
shares_drops_avx512 (const float *r1, const int32_t *rk, int ww, int x, int end, double *pw,
                     size_t np, uint8_t *mask, int8_t *best_q)
{
  const float *r0 = r1 - ww, *r2 = r1 + ww;
  const float *nf[8] = { r1 + 1, r1 - 1, r2, r0, r2 + 1, r2 - 1, r0 + 1, r0 - 1 };
  const int32_t *nr[8] = { rk + 1,      rk - 1,      rk + ww,     rk - ww,
                           rk + ww + 1, rk + ww - 1, rk - ww + 1, rk - ww - 1 };
  const __m512d zero = _mm512_setzero_pd (), sqrt2 = _mm512_set1_pd (M_SQRT2);
  const __m512i one = _mm512_set1_epi64 (1);

  for (; x + 8 <= end; x += 8)
    {
      __m512d fc = _mm512_cvtps_pd (_mm256_loadu_ps (r1 + x));
      __m512d rc = _mm512_cvtepi32_pd (_mm256_loadu_si256 ((const __m256i *) (rk + x)));
      __mmask8 fl = _mm512_cmp_pd_mask (rc, zero, _CMP_GE_OQ), gt[8], multi;
      __m512d d[8], best = zero;
      __m512i bq = _mm512_set1_epi64 (-1), m = _mm512_setzero_si512 ();
      for (int q = 0; q < 8; q++)
        {
          __m512d nb = _mm512_cvtps_pd (_mm256_loadu_ps (nf[q] + x));
          __mmask8 bt;
          d[q] = _mm512_sub_pd (fc, nb);
          if (fl)
            {
              __mmask8 eq = _mm512_cmp_pd_mask (nb, fc, _CMP_EQ_OQ);
              __m512d nrk = _mm512_cvtepi32_pd (_mm256_loadu_si256 ((const __m256i *) (nr[q] + x)));
              d[q] = _mm512_mask_mov_pd (d[q], fl, _mm512_maskz_sub_pd (eq, rc, nrk));
            }
          if (q >= 4)
            d[q] = _mm512_div_pd (d[q], sqrt2);
          gt[q] = _mm512_cmp_pd_mask (d[q], zero, _CMP_GT_OQ);
          bt = _mm512_cmp_pd_mask (d[q], best, _CMP_GT_OQ);
          best = _mm512_mask_mov_pd (best, bt, d[q]);
          bq = _mm512_mask_mov_epi64 (bq, bt, _mm512_set1_epi64 (q));
          m = _mm512_mask_or_epi64 (m, gt[q], m, _mm512_set1_epi64 (1 << q));
        }
      multi = _mm512_test_epi64_mask (m, _mm512_sub_epi64 (m, one));
      for (int q = 0; q < 8; q++)
        {
          __mmask8 k = gt[q] & multi;
          /* In a register, then a whole vector stored (PW has room for
           * it): the store form of the compress is microcode on Zen 4. */
          _mm512_storeu_pd (pw + np, _mm512_maskz_compress_pd (k, d[q]));
          np += (size_t) __builtin_popcount (k);
        }
      _mm_storel_epi64 ((__m128i *) (mask + x), _mm512_cvtepi64_epi8 (m));
      _mm_storel_epi64 ((__m128i *) (best_q + x), _mm512_cvtepi64_epi8 (bq));
    }
  return np;
}

__attribute__ ((target ("avx512f,avx512dq"))) static size_t
shares_make_avx512 (float *sh, int ww, int x, int end, const double *pw, size_t np,
                    const uint8_t *mask, const int8_t *best_q)
{
  const __m512d zero = _mm512_setzero_pd (), unit = _mm512_set1_pd (1.0);
  const __m512i one = _mm512_set1_epi64 (1);

  for (; x + 8 <= end; x += 8)
    {
      __m512i m = _mm512_cvtepu8_epi64 (_mm_loadl_epi64 ((const __m128i *) (mask + x)));
      __m512i bq = _mm512_cvtepi8_epi64 (_mm_loadl_epi64 ((const __m128i *) (best_q + x)));
      __mmask8 multi = _mm512_test_epi64_mask (m, _mm512_sub_epi64 (m, one)), ok;
      __m512d wt[8], sum = zero;
      for (int q = 0; q < 8; q++)
        {
          __mmask8 k = _mm512_test_epi64_mask (m, _mm512_set1_epi64 (1 << q)) & multi;
          wt[q] = _mm512_mul_pd (_mm512_maskz_expand_pd (k, _mm512_loadu_pd (pw + np)),
                                 _mm512_set1_pd (mfd_contour[q]));
          np += (size_t) __builtin_popcount (k);
          sum = _mm512_add_pd (sum, wt[q]);
        }
      ok = multi & _mm512_cmp_pd_mask (sum, zero, _CMP_GT_OQ);
      for (int q = 0; q < 8; q++)
        {
          __mmask8 steep = _mm512_cmpeq_epi64_mask (bq, _mm512_set1_epi64 (q));
          __m512d v = _mm512_mask_mov_pd (_mm512_maskz_mov_pd (steep, unit), ok,
                                          _mm512_div_pd (wt[q], sum));
          _mm256_storeu_ps (sh + (size_t) q * ww + x, _mm512_cvtpd_ps (v));
        }
    }
  return np;
}
#endif

/* The shares of window row Y, 8 planes of WW floats (plane q the share
 * each sample sends to its neighbour q), into SH; the steepest receivers
 * of the tile's samples on that row into DIR when OWN.  A share is
 * drop^exponent times Quinn's contour length (in cells), over their sum
 * in neighbour order; one receiver takes 1 exactly, and when the powers
 * all underflow to 0 the steepest takes it all.  The powers of the row
 * are taken in one vector pass over its samples' drops: PW (8 WW
 * doubles), MASK and BEST_Q (WW each) hold the row's receivers in
 * between.  With AVX-512 the inner samples of an inner row [VX0, VX1)
 * take the vector passes above. */
static void
mfd_shares_row (const MfdJob *j, int y, float *sh, bool own, double *pw, uint8_t *mask,
                int8_t *best_q)
{
  const TgFlowWindow *win = j->win;
  int ww = win->ww, ox = win->tx0 - win->wx0, oy = win->ty0 - win->wy0;
  bool in_tile = own && y >= oy && y < oy + win->th;
  size_t np = 0;

  const float *r1 = j->filled + (size_t) y * ww, *r0 = r1 - ww, *r2 = r1 + ww;
  const int32_t *rk = j->rank + (size_t) y * ww;
  bool inner_row = y > 0 && y < win->wh - 1;
  int vx0 = 1, vx1 = 1;

#ifdef TG__EROSION_HAVE_X86
  if (j->isa == PULL_AVX512 && inner_row && ww > 2)
    vx1 = 1 + (ww - 2) / 8 * 8;
#endif
  if (vx1 == vx0)
    for (int q = 0; q < 8; q++)
      memset (sh + (size_t) q * ww, 0, sizeof (float) * ww);
  else
    for (int q = 0; q < 8; q++)
      {
        /* The vector pass writes every plane of its samples. */
        sh[(size_t) q * ww] = 0.0f;
        for (int x = vx1; x < ww; x++)
          sh[(size_t) q * ww + x] = 0.0f;
      }
  for (int x = 0; x < ww; x++)
    {
      double drop[8];
      int bq = -1;
      unsigned m = 0;
#ifdef TG__EROSION_HAVE_X86
      if (x == vx0 && vx1 > vx0)
        {
          np = shares_drops_avx512 (r1, rk, ww, vx0, vx1, pw, np, mask, best_q);
          x = vx1 - 1;
          continue;
        }
#endif
      if (inner_row && x > 0 && x < ww - 1)
        {
          /* receivers () inside the window: the same drops (over M_SQRT2
           * on the diagonals; down the ranks among the samples of a flat's
           * level), the same steepest (the first of equal ones), without
           * its bounds tests. */
          double fc = r1[x], best = 0.0;
          if (rk[x] < 0)
            {
              drop[0] = fc - r1[x + 1];
              drop[1] = fc - r1[x - 1];
              drop[2] = fc - r2[x];
              drop[3] = fc - r0[x];
              drop[4] = (fc - r2[x + 1]) / M_SQRT2;
              drop[5] = (fc - r2[x - 1]) / M_SQRT2;
              drop[6] = (fc - r0[x + 1]) / M_SQRT2;
              drop[7] = (fc - r0[x - 1]) / M_SQRT2;
            }
          else
            {
              double rc = rk[x];
#define FLAT_DROP(row, rrow, i) ((row)[i] == r1[x] ? rc - (double) (rrow)[i] : 0.0)
              drop[0] = FLAT_DROP (r1, rk, x + 1);
              drop[1] = FLAT_DROP (r1, rk, x - 1);
              drop[2] = FLAT_DROP (r2, rk + ww, x);
              drop[3] = FLAT_DROP (r0, rk - ww, x);
              drop[4] = FLAT_DROP (r2, rk + ww, x + 1) / M_SQRT2;
              drop[5] = FLAT_DROP (r2, rk + ww, x - 1) / M_SQRT2;
              drop[6] = FLAT_DROP (r0, rk - ww, x + 1) / M_SQRT2;
              drop[7] = FLAT_DROP (r0, rk - ww, x - 1) / M_SQRT2;
#undef FLAT_DROP
            }
          for (int q = 0; q < 8; q++)
            {
              m |= (unsigned) (drop[q] > 0.0) << q;
              if (drop[q] > best)
                {
                  best = drop[q];
                  bq = q;
                }
            }
        }
      else if (known (win, x, y))
        m = receivers (j->filled, j->rank, ww, win->wh, j->o->routing, x, y, drop, &bq);
      best_q[x] = (int8_t) bq;
      if ((m & (m - 1)) == 0)
        {
          /* None, or one receiver (the steepest): its share is w / w = 1
           * exactly, without the power. */
          if (m)
            sh[(size_t) bq * ww + x] = 1.0f;
          mask[x] = 0;
          continue;
        }
      mask[x] = (uint8_t) m;
      for (int q = 0; q < 8; q++)
        if (m & (1u << q))
          pw[np++] = drop[q];
    }
  if (in_tile)
    memcpy (j->dir + (size_t) (y - oy) * win->tw, best_q + ox, (size_t) win->tw);
  pow_rows (j->isa, pw, np, j->o->exponent);
  np = 0;
  for (int x = 0; x < ww; x++)
    {
      unsigned m = mask[x];
      double wt[8], sum = 0.0;
      int bq = -1;
#ifdef TG__EROSION_HAVE_X86
      if (x == vx0 && vx1 > vx0)
        {
          np = shares_make_avx512 (sh, ww, vx0, vx1, pw, np, mask, best_q);
          x = vx1 - 1;
          continue;
        }
#endif
      if (!m)
        continue;
      for (int q = 0; q < 8; q++)
        if (m & (1u << q))
          {
            wt[q] = pw[np++] * mfd_contour[q];
            sum += wt[q];
          }
      if (!(sum > 0.0))
        {
          /* Every power underflowed: all to the steepest (the largest
           * drop, the first of equal ones), found again. */
          receivers (j->filled, j->rank, ww, win->wh, j->o->routing, x, y, NULL, &bq);
          sh[(size_t) bq * ww + x] = 1.0f;
          continue;
        }
      for (int q = 0; q < 8; q++)
        if (m & (1u << q))
          sh[(size_t) q * ww + x] = (float) (wt[q] / sum);
    }
}

/* The share plane Q of window row Y in the band's ring SH. */
#define SHARE(sh, ww, y, q) ((sh) + ((size_t) ((y) % SHARE_ROWS) * 8 + (size_t) (q)) * (ww))

/* One pull at window sample (X, Y) from the previous step's rows
 * R[0..2] = Y - 1, Y, Y + 1 (NULL outside the window) into OUT,
 * neighbours outside the window left out; SH the band's shares. */
static inline void
mfd_pull_edge (const MfdJob *j, const float *sh, const float *const r[3], float *out, int x, int y)
{
  const TgFlowWindow *win = j->win;
  size_t ww = (size_t) win->ww;
  double sum = 0.0;

  for (int q = 0; q < 8; q++)
    {
      int nx = x + dx[q], ny = y + dy[q];
      if (nx < 0 || nx >= win->ww || ny < 0 || ny >= win->wh)
        continue;
      sum += (double) r[dy[q] + 1][nx] * SHARE (sh, ww, ny, opposite[q])[nx];
    }
  out[x] = (float) sum;
}

/* The pulls' kernels: each takes the samples [X, END) of a row, 2, 4 or 8
 * at a time, and returns where it stopped.  V[q] and S[q] are the row of
 * water and the share plane that point back from neighbour q, shifted so
 * that index x reads sample x's neighbour; every lane does the scalar
 * code's products and sums in its order (no contraction: meson.build
 * turns it off), so every kernel gives the same bytes. */
#ifdef __SSE2__
static size_t
pull_sse2 (const float *const v[8], const float *const s[8], float *out, size_t x, size_t end)
{
  for (; x + 2 <= end; x += 2)
    {
      __m128d sum = _mm_setzero_pd ();
      for (int q = 0; q < 8; q++)
        {
          __m128d a = _mm_cvtps_pd (_mm_castsi128_ps (_mm_loadl_epi64 ((const __m128i *) (v[q] + x))));
          __m128d b = _mm_cvtps_pd (_mm_castsi128_ps (_mm_loadl_epi64 ((const __m128i *) (s[q] + x))));
          sum = _mm_add_pd (sum, _mm_mul_pd (a, b));
        }
      _mm_storel_pi ((__m64 *) (out + x), _mm_cvtpd_ps (sum));
    }
  return x;
}
#endif

#ifdef TG__EROSION_HAVE_X86
__attribute__ ((target ("avx2"))) static size_t
pull_avx2 (const float *const v[8], const float *const s[8], float *out, size_t x, size_t end)
{
  for (; x + 4 <= end; x += 4)
    {
      __m256d sum = _mm256_setzero_pd ();
      for (int q = 0; q < 8; q++)
        sum = _mm256_add_pd (sum, _mm256_mul_pd (_mm256_cvtps_pd (_mm_loadu_ps (v[q] + x)),
                                                 _mm256_cvtps_pd (_mm_loadu_ps (s[q] + x))));
      _mm_storeu_ps (out + x, _mm256_cvtpd_ps (sum));
    }
  return x;
}

__attribute__ ((target ("avx512f"))) static size_t
pull_avx512 (const float *const v[8], const float *const s[8], float *out, size_t x, size_t end)
{
  for (; x + 8 <= end; x += 8)
    {
      __m512d sum = _mm512_setzero_pd ();
      for (int q = 0; q < 8; q++)
        sum = _mm512_add_pd (sum, _mm512_mul_pd (_mm512_cvtps_pd (_mm256_loadu_ps (v[q] + x)),
                                                 _mm512_cvtps_pd (_mm256_loadu_ps (s[q] + x))));
      _mm256_storeu_ps (out + x, _mm512_cvtpd_ps (sum));
    }
  return x;
}
#endif

/* The best pull kernel this CPU runs, or the one TG_FLOW_ISA asks for
 * (tg__erosion_isa). */
static int
pull_isa (void)
{
  static const int of[] = { PULL_SSE2, PULL_AVX2, PULL_AVX512 };

  return of[tg__erosion_isa ("TG_FLOW_ISA")];
}

/* --- the MFD power ------------------------------------------------------- */

static inline double
pow_asdouble (uint64_t u)
{
  double d;

  memcpy (&d, &u, sizeof d);
  return d;
}

static inline uint64_t
pow_asuint (double d)
{
  uint64_t u;

  memcpy (&u, &d, sizeof u);
  return u;
}

/* tg__flow_pow, branch-free (selects only) so that the loops of
 * pow_rows vectorise: every lane does the same IEEE operations.
 *
 * log2 X: X = 2^E M with M in [sqrt(1/2), sqrt(2)) (a subnormal X is
 * scaled by 2^54 first), log M = 2 atanh S = 2 (S + S^3/3 + ...) with
 * S = (M - 1) / (M + 1), |S| < 0.1716: the series to S^17 leaves a
 * relative error near 1e-16.  2^Y: Y = N + F with N the nearest integer
 * (the 1.5 * 2^52 trick) and |F| <= 1/2, 2^F = e^T with T = F ln 2,
 * |T| < 0.347, by its Taylor series to T^12 (error near 1e-16), times 2^N
 * built in the exponent bits. */
static inline double
pow_one (double x, double p)
{
  static const double ln2 = 0x1.62e42fefa39efp-1, inv_ln2 = 0x1.71547652b82fep0;
  const double shift = 0x1.8p52;
  bool sub = x < 0x1p-1022;
  /* An unconditional product by 1 or 2^54 made in the bits, so that the
   * compiler keeps no branch around it (the vectoriser wants none). */
  double xs = x * pow_asdouble (0x3ff0000000000000ull + ((uint64_t) sub * (54ull << 52)));
  uint64_t u = pow_asuint (xs) + (0x3ff0000000000000ull - 0x3fe6a09e667f3bcdull);
  /* E + 1087 (less the 54 of a subnormal) in the low bits of a double of
   * exponent 52: exact. */
  double e = pow_asdouble (0x4330000000000000ull | ((u >> 52) + 64u - (uint64_t) sub * 54u))
             - (0x1p52 + 1087.0);
  double m = pow_asdouble ((u & 0x000fffffffffffffull) + 0x3fe6a09e667f3bcdull);
  double s = (m - 1.0) / (m + 1.0), z = s * s, l, y, n, t, r;
  uint64_t nb, keep, big;

  l = 1.0 / 17.0;
  l = l * z + 1.0 / 15.0;
  l = l * z + 1.0 / 13.0;
  l = l * z + 1.0 / 11.0;
  l = l * z + 1.0 / 9.0;
  l = l * z + 1.0 / 7.0;
  l = l * z + 1.0 / 5.0;
  l = l * z + 1.0 / 3.0;
  l = l * z;
  /* log M = 2 S + 2 S L: the small term apart keeps the leading one exact. */
  l = (2.0 * s + 2.0 * s * l) * inv_ln2;
  y = p * (e + l);
  nb = pow_asuint (y + shift);
  n = pow_asdouble (nb) - shift;
  t = (y - n) * ln2;
  r = 1.0 / 479001600.0;
  r = r * t + 1.0 / 39916800.0;
  r = r * t + 1.0 / 3628800.0;
  r = r * t + 1.0 / 362880.0;
  r = r * t + 1.0 / 40320.0;
  r = r * t + 1.0 / 5040.0;
  r = r * t + 1.0 / 720.0;
  r = r * t + 1.0 / 120.0;
  r = r * t + 1.0 / 24.0;
  r = r * t + 1.0 / 6.0;
  r = r * t + 0.5;
  r = r * t + 1.0;
  r = r * t + 1.0;
  /* 2^N for N in [-1021, 1023]: the low bits of NB hold 2^51 + N. */
  r *= pow_asdouble (((nb & 0x000fffffffffffffull) - 0x0008000000000000ull + 1023u) << 52);
  /* 0 below 2^-1021, infinity from 2^1023, as masks of the bits (a
   * select here would become a branch around the work above). */
  keep = (uint64_t) 0 - (uint64_t) (y >= -1021.0);
  big = (uint64_t) 0 - (uint64_t) (y >= 1023.0);
  return pow_asdouble ((pow_asuint (r) & keep & ~big) | (0x7ff0000000000000ull & big));
}

double
tg__flow_pow (double x, double p)
{
  return p == 1.0 ? x : pow_one (x, p);
}

/* The same loop for each ISA; the vectoriser picks the width. */
static void
pow_rows_generic (double *v, size_t n, double p)
{
  for (size_t i = 0; i < n; i++)
    v[i] = pow_one (v[i], p);
}

#ifdef TG__EROSION_HAVE_X86
__attribute__ ((target ("avx2"))) static void
pow_rows_avx2 (double *v, size_t n, double p)
{
  for (size_t i = 0; i < n; i++)
    v[i] = pow_one (v[i], p);
}

__attribute__ ((target ("avx512f,avx512vl,avx512dq"))) static void
pow_rows_avx512 (double *v, size_t n, double p)
{
  for (size_t i = 0; i < n; i++)
    v[i] = pow_one (v[i], p);
}
#endif

static void
pow_rows (int isa, double *v, size_t n, double p)
{
  if (p == 1.0)
    return;
#ifdef TG__EROSION_HAVE_X86
  if (isa == PULL_AVX512)
    {
      pow_rows_avx512 (v, n, p);
      return;
    }
  if (isa == PULL_AVX2)
    {
      pow_rows_avx2 (v, n, p);
      return;
    }
#endif
  (void) isa;
  pow_rows_generic (v, n, p);
}

void
tg__flow_pow_n (double *v, size_t n, double p)
{
  pow_rows (pull_isa (), v, n, p);
}

/* The same pull over row Y's samples 1 .. ww - 2 of a row with rows above
 * and below: every neighbour is there, so each term is a plain load from
 * a shifted row of V and of the share plane that points back, in the same
 * neighbour order as mfd_pull_edge (the same bytes), and the loop runs
 * along x with no branches. */
static void
mfd_pull_inner (const MfdJob *j, const float *sh, const float *const r[3], float *out, int y)
{
  size_t ww = (size_t) j->win->ww, x = 1, end = ww - 1;
  const float *const v[8] = {
    r[1] + 1, r[1] - 1, r[2], r[0], r[2] + 1, r[2] - 1, r[0] + 1, r[0] - 1,
  };
  const float *const s[8] = {
    SHARE (sh, ww, y, 1) + 1,     /* q 0: (+1, 0) */
    SHARE (sh, ww, y, 0) - 1,     /* q 1: (-1, 0) */
    SHARE (sh, ww, y + 1, 3),     /* q 2: (0, +1) */
    SHARE (sh, ww, y - 1, 2),     /* q 3: (0, -1) */
    SHARE (sh, ww, y + 1, 7) + 1, /* q 4: (+1, +1) */
    SHARE (sh, ww, y + 1, 6) - 1, /* q 5: (-1, +1) */
    SHARE (sh, ww, y - 1, 5) + 1, /* q 6: (+1, -1) */
    SHARE (sh, ww, y - 1, 4) - 1, /* q 7: (-1, -1) */
  };

#ifdef TG__EROSION_HAVE_X86
  if (j->isa == PULL_AVX512)
    x = pull_avx512 (v, s, out, x, end);
  else if (j->isa == PULL_AVX2)
    x = pull_avx2 (v, s, out, x, end);
#endif
#ifdef __SSE2__
  x = pull_sse2 (v, s, out, x, end);
#endif
  for (; x < end; x++)
    {
      double sum = 0.0;
      for (int q = 0; q < 8; q++)
        sum += (double) v[q][x] * s[q][x];
      out[x] = (float) sum;
    }
}

/* S[i] += V[i] for i < N, each float widened to double (exact), so any
 * vector width gives the scalar loop's bits. */
#ifdef TG__EROSION_HAVE_X86
__attribute__ ((target ("avx512f"))) static void
add_row_avx512 (double *s, const float *v, int n)
{
  int i = 0;

  for (; i + 8 <= n; i += 8)
    _mm512_storeu_pd (s + i, _mm512_add_pd (_mm512_loadu_pd (s + i),
                                            _mm512_cvtps_pd (_mm256_loadu_ps (v + i))));
  for (; i < n; i++)
    s[i] += v[i];
}

__attribute__ ((target ("avx2"))) static void
add_row_avx2 (double *s, const float *v, int n)
{
  int i = 0;

  for (; i + 4 <= n; i += 4)
    _mm256_storeu_pd (s + i, _mm256_add_pd (_mm256_loadu_pd (s + i),
                                            _mm256_cvtps_pd (_mm_loadu_ps (v + i))));
  for (; i < n; i++)
    s[i] += v[i];
}
#endif

static void
add_row (int isa, double *s, const float *v, int n)
{
#ifdef TG__EROSION_HAVE_X86
  if (isa == PULL_AVX512)
    {
      add_row_avx512 (s, v, n);
      return;
    }
  if (isa == PULL_AVX2)
    {
      add_row_avx2 (s, v, n);
      return;
    }
#endif
  (void) isa;
  for (int i = 0; i < n; i++)
    s[i] += v[i];
}

/* llround (V * TG__FLOW_ONE) without the call: V * 2^20 is exact (a
 * float's 24 bits scaled), and for 0 <= V * 2^20 < 2^51 adding 0.5 is
 * exact too (the sum spans at most 53 bits), so truncating it rounds half
 * away from zero as llround does.  Water is never negative; anything
 * else goes to llround. */
static inline int64_t
fixed_point (float v)
{
  double d = (double) v * (double) TG__FLOW_ONE;

  return d >= 0.0 && d < 0x1p51 ? (int64_t) (d + 0.5) : llround (d);
}

/* Rows a band of the MFD steps ends with (the steps of a band start
 * TG__FLOW_MFD_STEPS rows further out on each side). */
#define MFD_BAND 256

/* Floats a band's job holds: the rows of its steps and its shares. */
static size_t
mfd_band_floats (int ww)
{
  return ((size_t) TG__FLOW_MFD_STEPS * 4 + 1 + (size_t) SHARE_ROWS * 8) * (size_t) ww;
}

/* The MFD steps over one band of window rows, as a wavefront: step K of
 * row Y is taken right after step K - 1 of row Y + 1, so each step's rows
 * live in a ring of four, and the shares of a row are made just before
 * its first step reads them and kept in a ring until its last step has,
 * all in cache, instead of a sweep over the window per step and eight
 * floats a sample of shares in memory.  Every value is the same function
 * of the same values as in a sweep (same bytes); the halo rows (and their
 * shares) are taken by both bands that need them.  MEM holds
 * mfd_band_floats floats, PW, MASK and BEST_Q the row buffers of
 * mfd_shares_row. */
static void
mfd_band (const MfdJob *j, int band, float *mem, double *pw, uint8_t *mask, int8_t *best_q)
{
  const TgFlowWindow *win = j->win;
  const int K = TG__FLOW_MFD_STEPS;
  int ww = win->ww, wh = win->wh, ox = win->tx0 - win->wx0, oy = win->ty0 - win->wy0;
  int y0 = band * MFD_BAND, y1 = y0 + MFD_BAND < wh ? y0 + MFD_BAND : wh;
  int sy = y0 - K > 0 ? y0 - K : 0, sy1 = y1 + K < wh ? y1 + K : wh;
  float *ring = mem, *ones = ring, *sh = mem + ((size_t) K * 4 + 1) * ww;

#define RING_ROW(k, y) (ring + ((size_t) ((k) - 1) * 4 + 1 + (size_t) ((y) & 3)) * ww)
  for (int x = 0; x < ww; x++)
    ones[x] = 1.0f;
  for (int t = y0 - K + 1; t < y1 + K; t++)
    {
      /* Step 1 of row t - 1 reads the shares of row t. */
      for (; sy < sy1 && sy <= t; sy++)
        mfd_shares_row (j, sy, SHARE (sh, ww, sy, 0), sy >= y0 && sy < y1, pw, mask,
                        best_q);
      for (int k = 1; k <= K; k++)
        {
          int y = t - k, lo = y0 - (K - k), hi = y1 + (K - k);
          const float *r[3];
          float *out;
          if (y < lo || y >= hi || y < 0 || y >= wh)
            continue;
          for (int d = -1; d <= 1; d++)
            r[d + 1] = y + d < 0 || y + d >= wh ? NULL : k == 1 ? ones : RING_ROW (k - 1, y + d);
          out = RING_ROW (k, y);
          /* What row Y holds before step K moves it on. */
          if (j->s && y >= y0 && y < y1 && y >= oy && y < oy + win->th)
            add_row (j->isa, j->s + (size_t) (y - oy) * win->tw, r[1] + ox, win->tw);
          if (y > 0 && y < wh - 1 && ww > 2)
            {
              mfd_pull_inner (j, sh, r, out, y);
              mfd_pull_edge (j, sh, r, out, 0, y);
              mfd_pull_edge (j, sh, r, out, ww - 1, y);
            }
          else
            for (int x = 0; x < ww; x++)
              mfd_pull_edge (j, sh, r, out, x, y);
          if (k == K && y >= y0 && y < y1 && y >= oy && y < oy + win->th)
            for (int i = 0; i < win->tw; i++)
              j->src[(size_t) (y - oy) * win->tw + i] = fixed_point (out[ox + i]);
        }
    }
#undef RING_ROW
}

static void
mfd_band_jobs (void *user, int begin, int end)
{
  const MfdJob *j = user;
  size_t ww = (size_t) j->win->ww;
  float *mem = malloc (sizeof (float) * mfd_band_floats (j->win->ww));
  /* (Eight more: the vector passes store and load whole vectors.) */
  double *pw = malloc (sizeof (double) * (8 * ww + 8));
  /* MASK, then BEST_Q. */
  uint8_t *mask = malloc (2 * ww);

  for (int b = begin; b < end; b++)
    {
      if (mem && pw && mask)
        mfd_band (j, b, mem, pw, mask, (int8_t *) mask + ww);
      else
        j->failed[b] = 1;
    }
  free (mem);
  free (pw);
  free (mask);
}

static int
run_rows (const TgFlowOpts *o, int rows, int width, void (*fn) (void *, int, int), void *user)
{
  /* About 64k samples a job: a function of the width only, and every job
   * writes its own rows, so the bytes do not depend on the threads. */
  int grain = 65536 / (width > 0 ? width : 1);

  if (!o->parallel)
    {
      fn (user, 0, rows);
      return 0;
    }
  return o->parallel (o->parallel_ctx, rows, grain < 1 ? 1 : grain, fn, user);
}

/* S (over the tile) gets the water each tile sample holds in the first
 * TG__FLOW_MFD_STEPS steps, SRC what is at it after them, in fixed point,
 * and DIR each tile sample's steepest receiver.  Each step is a pull: a
 * sample's new water is its neighbours' times their shares towards it, in
 * neighbour order, so its value is a fixed function of the window around
 * it. */
static int
mfd_steps (const TgFlowOpts *o, const TgFlowWindow *win, const float *filled, const int32_t *rank,
           double *s, int64_t *src, int8_t *dir)
{
  int n_bands = (win->wh + MFD_BAND - 1) / MFD_BAND, rc = 0;
  MfdJob j = { o, win, filled, rank, s, src, dir, calloc ((size_t) n_bands + 1, 1), pull_isa () };

  if (!j.failed)
    return TG_ENOMEM;
  if (s)
    for (size_t i = 0; i < (size_t) win->tw * win->th; i++)
      s[i] = 0.0;
  if (!o->parallel)
    mfd_band_jobs (&j, 0, n_bands);
  else
    rc = o->parallel (o->parallel_ctx, n_bands, 1, mfd_band_jobs, &j);
  for (int b = 0; b < n_bands && rc == 0; b++)
    if (j.failed[b])
      rc = TG_ENOMEM;
  free (j.failed);
  return rc;
}

int
tg__flow_route_dirs (const TgFlowOpts *o, const TgFlowWindow *win, const float *filled,
                     const int32_t *rank, double *acc, TgFlowDirs *d)
{
  return tg__flow_route_dirs_buf (o, win, filled, rank, acc, d, NULL);
}

int
tg__flow_route_dirs_buf (const TgFlowOpts *o, const TgFlowWindow *win, const float *filled,
                         const int32_t *rank, double *acc, TgFlowDirs *d, void *scratch)
{
  int tw = win->tw, th = win->th, ox = win->tx0 - win->wx0, oy = win->ty0 - win->wy0;
  size_t nt = (size_t) tw * (size_t) th;
  int rc = TG_ENOMEM;

  d->borrowed = scratch != NULL;
  d->amt = scratch ? scratch : malloc (sizeof (int64_t) * (nt ? nt : 1));
  d->dir = scratch ? (int8_t *) scratch + 8 * nt : malloc (nt ? nt : 1);
  if (!d->dir || !d->amt)
    goto out;
  /* Where each tile sample's water goes after the MFD steps (or at once):
   * for MFD the shares' pass finds it. */
  if (o->routing == TG__FLOW_MFD)
    {
      if ((rc = mfd_steps (o, win, filled, rank, acc, d->amt, d->dir)) < 0)
        goto out;
    }
  else
    {
      for (int j = 0; j < th; j++)
        for (int i = 0; i < tw; i++)
          {
            int bq;
            receivers (filled, rank, win->ww, win->wh, TG__FLOW_D8, ox + i, oy + j, NULL,
                       &bq);
            d->dir[(size_t) j * tw + i] = (int8_t) bq;
          }
      for (size_t i = 0; i < nt; i++)
        d->amt[i] = TG__FLOW_ONE;
      if (acc)
        for (size_t i = 0; i < nt; i++)
          acc[i] = 0.0;
    }
  rc = tg__flow_cancelled (o) ? TG_ECANCELLED : 0;
out:
  if (rc < 0)
    tg__flow_dirs_free (d);
  return rc;
}

void
tg__flow_dirs_free (TgFlowDirs *d)
{
  if (!d->borrowed)
    {
      free (d->dir);
      free (d->amt);
    }
  d->dir = NULL;
  d->amt = NULL;
}

int
tg__flow_route (const TgFlowOpts *o, const TgFlowWindow *win, const float *filled,
                const int32_t *rank, const int64_t *inflow, double *acc, TgFlowBorder *border)
{
  TgFlowDirs d;
  int rc = tg__flow_route_dirs (o, win, filled, rank, acc, &d);

  return rc < 0 ? rc : tg__flow_route_sums (o, win, &d, inflow, acc, border);
}

/* --- the D8 sums on several threads ------------------------------------ */

typedef struct
{
  const int8_t *dir;
  int32_t *to;
  uint8_t *donors;
  int tw, th;
} SumRows;

/* TO and DONORS of rows [BEGIN, END): a sample's donors are the
 * neighbours whose steepest receiver points back at it. */
static void
sum_rows (void *user, int begin, int end)
{
  const SumRows *r = user;
  int tw = r->tw, th = r->th;

  for (int j = begin; j < end; j++)
    for (int i = 0; i < tw; i++)
      {
        size_t c = (size_t) j * tw + i;
        int q = r->dir[c], x = i + dx[q < 0 ? 0 : q], y = j + dy[q < 0 ? 0 : q], n = 0;
        r->to[c] = q >= 0 && x >= 0 && x < tw && y >= 0 && y < th ? (int32_t) ((size_t) y * tw + x)
                                                                  : -1;
        for (int k = 0; k < 8; k++)
          {
            int nx = i + dx[k], ny = j + dy[k];
            if (nx >= 0 && nx < tw && ny >= 0 && ny < th
                && r->dir[(size_t) ny * tw + nx] == opposite[k])
              n++;
          }
        r->donors[c] = (uint8_t) n;
      }
}

typedef struct
{
  const int64_t *amt;
  double *acc;
  int tw;
} SumAcc;

static void
sum_acc_rows (void *user, int begin, int end)
{
  const SumAcc *a = user;

  for (size_t i = (size_t) begin * a->tw; i < (size_t) end * a->tw; i++)
    a->acc[i] += (double) a->amt[i] * (1.0 / (double) TG__FLOW_ONE);
}

/* Water a band sends to a sample of the next band up or down. */
typedef struct
{
  int32_t to;
  int64_t amt;
} SumMsg;

typedef struct
{
  SumMsg *a;
  size_t n, cap;
} SumMsgs;

/* Rows of a band of the parallel sums, and the rounds after which the
 * rest is summed on one thread (a river that keeps crossing a band edge
 * takes a round a crossing). */
#define SUM_BAND 128
#define SUM_ROUNDS 64

/* The sums over bands of rows, each band's Kahn walk on its own samples,
 * the water that crosses into the next band passed on in rounds: in a
 * round, every band takes what its neighbours sent in the last one and
 * walks on.  Integers, so neither the bands nor the rounds change a bit. */
typedef struct
{
  const int32_t *to;
  int64_t *amt;
  uint8_t *donors;
  int32_t *queue; /* band b's walk in [its first sample, ...) */
  size_t *head, *tail;
  int tw, th, n_bands, round;
  SumMsgs *out;   /* [2][n_bands][2]: by round parity, band, up / down */
  size_t *sent;   /* per band, this round */
  int8_t *failed; /* per band: out of memory */
} SumJob;

#define SUM_OUT(j, parity, b, down) (&(j)->out[((size_t) (parity) * (j)->n_bands + (b)) * 2 + (down)])

static void
sum_band_walk (SumJob *j, int b, int lo_row, int hi_row)
{
  size_t lo = (size_t) lo_row * j->tw, hi = (size_t) hi_row * j->tw;
  size_t head = j->head[b], tail = j->tail[b], sent = 0;
  int32_t *queue = j->queue;

  while (head < tail)
    {
      int32_t c = queue[head++], t = j->to[c];
      if (t < 0)
        continue;
      if ((size_t) t >= lo && (size_t) t < hi)
        {
          j->amt[t] += j->amt[c];
          if (--j->donors[t] == 0)
            queue[tail++] = t;
          continue;
        }
      {
        SumMsgs *m = SUM_OUT (j, j->round & 1, b, (size_t) t >= hi);
        if (m->n == m->cap)
          {
            size_t cap = m->cap ? 2 * m->cap : 256;
            SumMsg *g = realloc (m->a, sizeof (SumMsg) * cap);
            if (!g)
              {
                j->failed[b] = 1;
                break;
              }
            m->a = g;
            m->cap = cap;
          }
        m->a[m->n].to = t;
        m->a[m->n].amt = j->amt[c];
        m->n++;
        sent++;
      }
    }
  j->head[b] = head;
  j->tail[b] = tail;
  j->sent[b] = sent;
}

/* Takes the water the neighbours of band B sent in the last round. */
static void
sum_band_take (SumJob *j, int b)
{
  int last = (j->round - 1) & 1;

  for (int side = 0; side < 2; side++)
    {
      int nb = side == 0 ? b - 1 : b + 1;
      const SumMsgs *m;
      if (nb < 0 || nb >= j->n_bands)
        continue;
      /* What band B - 1 sent down, or band B + 1 sent up. */
      m = SUM_OUT (j, last, nb, side == 0);
      for (size_t k = 0; k < m->n; k++)
        {
          int32_t t = m->a[k].to;
          j->amt[t] += m->a[k].amt;
          if (--j->donors[t] == 0)
            j->queue[j->tail[b]++] = t;
        }
    }
}

static void
sum_band_jobs (void *user, int begin, int end)
{
  SumJob *j = user;

  for (int b = begin; b < end; b++)
    {
      int y0 = b * SUM_BAND, y1 = y0 + SUM_BAND < j->th ? y0 + SUM_BAND : j->th;
      SUM_OUT (j, j->round & 1, b, 0)->n = 0;
      SUM_OUT (j, j->round & 1, b, 1)->n = 0;
      if (j->round == 0)
        {
          size_t lo = (size_t) y0 * j->tw;
          j->head[b] = j->tail[b] = lo;
          for (size_t i = lo; i < (size_t) y1 * j->tw; i++)
            if (j->donors[i] == 0)
              j->queue[j->tail[b]++] = (int32_t) i;
        }
      else
        sum_band_take (j, b);
      sum_band_walk (j, b, y0, y1);
    }
}

/* The D8 sums of AMT along TO over a TW x TH tile on O's threads, with
 * DONORS counted; 0, TG_ENOMEM, or TG_EINVAL on a cycle. */
static int
sums_parallel (const TgFlowOpts *o, const int32_t *to, int64_t *amt, uint8_t *donors,
               int32_t *queue, int tw, int th)
{
  int n_bands = (th + SUM_BAND - 1) / SUM_BAND, rc = 0;
  size_t total = 0;
  SumJob j = { to, amt, donors, queue, calloc ((size_t) n_bands, sizeof (size_t)),
               calloc ((size_t) n_bands, sizeof (size_t)), tw, th, n_bands, 0,
               calloc ((size_t) n_bands * 4, sizeof (SumMsgs)),
               calloc ((size_t) n_bands, sizeof (size_t)), calloc ((size_t) n_bands, 1) };

  if (!j.head || !j.tail || !j.out || !j.sent || !j.failed)
    rc = TG_ENOMEM;
  for (; rc == 0; j.round++)
    {
      size_t sent = 0;
      if (j.round == SUM_ROUNDS)
        {
          /* The rest on this thread, as one band. */
          SumJob one = j;
          size_t h0 = 0, t0 = 0, s0 = 0;
          int8_t f0 = 0;
          one.n_bands = 1;
          one.head = &h0;
          one.tail = &t0;
          one.sent = &s0;
          one.failed = &f0;
          /* Gather every band's pending walk and what was last sent. */
          for (int b = 0; b < n_bands; b++)
            for (size_t k = j.head[b]; k < j.tail[b]; k++)
              queue[t0++] = queue[k];
          for (int b = 0; b < n_bands; b++)
            for (int down = 0; down < 2; down++)
              {
                const SumMsgs *m = SUM_OUT (&j, (j.round - 1) & 1, b, down);
                for (size_t k = 0; k < m->n; k++)
                  {
                    amt[m->a[k].to] += m->a[k].amt;
                    if (--donors[m->a[k].to] == 0)
                      queue[t0++] = m->a[k].to;
                  }
              }
          total = 0;
          for (int b = 0; b < n_bands; b++)
            total += j.head[b] - (size_t) b * SUM_BAND * tw;
          one.round = 0;
          one.out = j.out;
          sum_band_walk (&one, 0, 0, th);
          total += h0;
          rc = f0 ? TG_ENOMEM : 0;
          break;
        }
      rc = o->parallel (o->parallel_ctx, n_bands, 1, sum_band_jobs, &j);
      for (int b = 0; b < n_bands && rc == 0; b++)
        {
          if (j.failed[b])
            rc = TG_ENOMEM;
          sent += j.sent[b];
        }
      if (rc == 0 && sent == 0)
        {
          for (int b = 0; b < n_bands; b++)
            total += j.tail[b] - (size_t) b * SUM_BAND * tw;
          break;
        }
    }
  if (rc == 0 && total != (size_t) tw * th)
    rc = TG_EINVAL; /* a cycle: the ranks or the fill are broken */
  if (j.out)
    for (int k = 0; k < n_bands * 4; k++)
      free (j.out[k].a);
  free (j.head);
  free (j.tail);
  free (j.out);
  free (j.sent);
  free (j.failed);
  return rc;
}

int
tg__flow_route_sums (const TgFlowOpts *o, const TgFlowWindow *win, TgFlowDirs *d,
                     const int64_t *inflow, double *acc, TgFlowBorder *border)
{
  return tg__flow_route_sums_buf (o, win, d, inflow, acc, border, NULL, NULL);
}

int
tg__flow_route_sums_buf (const TgFlowOpts *o, const TgFlowWindow *win, TgFlowDirs *d,
                         const int64_t *inflow, double *acc, TgFlowBorder *border,
                         int32_t *queue_buf, int32_t *to_buf)
{
  int tw = win->tw, th = win->th;
  size_t nt = (size_t) tw * (size_t) th, head = 0, tail = 0;
  int8_t *dir = d->dir;
  int64_t *amt = d->amt;
  uint8_t *donors = NULL;
  int32_t *queue = NULL, *link = NULL, *to = NULL;
  int rc = TG_ENOMEM, nb = tg__flow_border_count (tw, th);

  if (inflow)
    for (int k = 0; k < nb; k++)
      {
        int x, y;
        tg__flow_border_xy (tw, th, k, &x, &y);
        amt[(size_t) y * tw + x] += inflow[k];
      }

  /* The D8 sums over the tile, upstream first (Kahn's order): integers,
   * so their order does not matter, only which water reaches where.
   * Allocated after the MFD steps. */
  rc = TG_ENOMEM;
  donors = malloc (nt ? nt : 1);
  queue = queue_buf ? queue_buf : malloc (sizeof (int32_t) * (nt ? nt : 1));
  to = to_buf ? to_buf : malloc (sizeof (int32_t) * (nt ? nt : 1));
  if (border)
    link = malloc (sizeof (int32_t) * (nt ? nt : 1));
  if (!donors || !queue || !to || (border && !link))
    goto out;
  /* TO: each sample's receiver in the tile (-1: none, or outside), and
   * DONORS the samples that send to each. */
  {
    SumRows sr = { dir, to, donors, tw, th };
    if (run_rows (o, th, tw, sum_rows, &sr) < 0)
      goto out;
  }
  if (o && o->parallel && !border)
    {
      if ((rc = sums_parallel (o, to, amt, donors, queue, tw, th)) < 0)
        goto out;
      rc = TG_ENOMEM;
    }
  else
    {
      for (size_t i = 0; i < nt; i++)
        if (donors[i] == 0)
          queue[tail++] = (int32_t) i;
      while (head < tail)
        {
          int32_t c = queue[head++], j = to[c];
          if (j < 0)
            continue;
          amt[j] += amt[c];
          if (--donors[j] == 0)
            queue[tail++] = j;
        }
      if (tail != nt)
        {
          rc = TG_EINVAL; /* a cycle: the ranks or the fill are broken */
          goto out;
        }
    }
  if (border)
    {
      /* Downstream first: where the water passing each sample leaves. */
      for (size_t k = nt; k-- > 0;)
        {
          int32_t c = queue[k];
          link[c] = to[c] >= 0 ? link[to[c]] : c;
        }
      for (int k = 0; k < nb; k++)
        {
          int x, y, q, lx, ly, rx, ry;
          size_t c;
          tg__flow_border_xy (tw, th, k, &x, &y);
          c = (size_t) y * tw + x;
          lx = (int) (link[c] % tw);
          ly = (int) (link[c] / tw);
          q = dir[link[c]];
          border[k].local = amt[c];
          /* The last sample is on the border (its receiver lies outside)
           * unless the water stops inside: then nothing goes on. */
          if (q >= 0 && (lx == 0 || ly == 0 || lx == tw - 1 || ly == th - 1))
            border[k].link = tg__flow_border_index (tw, th, lx, ly);
          else
            border[k].link = -1;
          border[k].recv = -1;
          q = dir[c];
          rx = x + dx[q < 0 ? 0 : q];
          ry = y + dy[q < 0 ? 0 : q];
          if (q >= 0 && (rx < 0 || rx >= tw || ry < 0 || ry >= th))
            border[k].recv = (int64_t) (win->ty0 + ry) * win->fw + (win->tx0 + rx);
        }
    }
  if (acc)
    {
      SumAcc sa = { amt, acc, tw };
      if (run_rows (o, th, tw, sum_acc_rows, &sa) < 0)
        goto out;
    }
  rc = 0;
out:
  tg__flow_dirs_free (d);
  free (donors);
  if (queue != queue_buf)
    free (queue);
  if (to != to_buf)
    free (to);
  free (link);
  return rc;
}
