/* erosion.stream_power, the solver: landscape evolution by the stream
 * power law, dz/dt = U - K A^m S^n + G Qs / A + D lap z, one time step at
 * a time, each in O(n) (apart from sorting the passes between the pits'
 * basins, a few per basin).
 *
 * A step:
 *  1. Routing, as Braun and Willett (2013) with the depressions of
 *     Cordonnier, Bovy and Braun (2019): every sample drains to its
 *     steepest lower neighbour (D8, rows in parallel); depth-first walks
 *     up the donors from the world's edge and from each pit (a sample
 *     with no lower neighbour) label the pits' basins (roots in
 *     parallel).  The lowest pass between neighbouring basins (bands of
 *     rows in parallel), the minimum spanning tree of the basins over
 *     them (Kruskal) and, down the tree from the edge's
 *     basin, each basin's route re-carved over its pass: the receivers
 *     from the pass down to the pit are reversed, so water crosses the
 *     depression to its pass and every receiver stays a neighbour.  A
 *     basin's spill level is the highest pass on the tree's way to the
 *     edge (what a priority flood fills it to); its samples below it are
 *     a lake, whose outlet is the higher side of the pass that sets the
 *     level.  Then the stack (every sample after its receiver), depth
 *     first from the edge: a forest, a tree a sample of the edge, whose
 *     trees are cut into groups of about the same size (by the samples,
 *     not the threads), each group a run of the stack built in parallel.
 *  2-4 run on each group on its own, groups in parallel, over arrays in
 *  the stack's order (receivers as places in the stack, heights, areas,
 *  lakes: laid out as the stack is built, the heights put back in the
 *  world's order after), so that the walks read memory in order:
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
 *     reaches a lake (a sample below its basin's spill level) goes to the
 *     lake's outlet, which comes after all of it up the stack and fills
 *     the lake from its deepest floor up, flat, before passing the rest
 *     on; lake floors do not incise.  Fans form where
 *     rivers leave steep ground, lakes and closed valleys fill.
 *  5. Hillslope diffusion, implicit (a row sweep then a column sweep, each
 *     a tridiagonal solve: unconditionally stable, no overshoot), rows or
 *     columns in parallel.
 *
 * The world's edge is base level: its samples keep their height, water
 * and sediment leave there.  Every serial loop runs in a fixed order,
 * every parallel one writes its own rows or columns or trees (a tree's
 * samples keep the order they have in one stack of the whole world), so
 * the bytes do not depend on the thread count.  Volumes are summed in
 * fixed orders for the budget a test checks (a group's, then the groups'
 * in order): eroded = deposited + carried out.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/error.h>
#include <tgraph/hash.h>

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
  double *fill;     /* a lake sample's spill level (others: not set) */
  int32_t *rec;     /* receiver (a neighbour); itself on the world's edge */
  int32_t *order;   /* the stack: every sample after its receiver */
  /* Steps 2 to 4 walk the stack, so their arrays are in the stack's order
   * (index K: the sample ORDER[K]), laid out as the stack is built: the
   * walks read memory in order, not all over the world. */
  int32_t *pos;     /* each sample's place in the stack (ORDER's inverse) */
  int32_t *srec;    /* the receiver's place (itself on the world's edge) */
  uint8_t *sdiag;   /* 1 where the receiver is a diagonal neighbour (RDIR's memory) */
  int32_t *slake;   /* LAKE, the outlet's place for a lake sample */
  double *hs;       /* the height: at the step's start, then its end */
  float *supl;      /* UPLIFT (NULL without) */
  double *area;     /* drainage area (m²) */
  double *qs;       /* sediment arriving at each sample in this step (m³); after
                     * step 4 the depth laid down there (a raster scratch in step 1) */
  int32_t *pit;     /* scratch: basins; then every lake's samples */
  uint8_t *dmask;   /* each sample's donors, a bit per neighbour */
  uint8_t *rdir;    /* the neighbour each sample drains to (8: none) */
  ptrdiff_t off[8]; /* the neighbours' offsets */
  const double *bspill;    /* while the lakes are found: each basin's spill level */
  const int32_t *boutlet;  /* and its lake's outlet */
  int32_t *lake;    /* a lake sample's outlet (the pass sample at its level), else -1
                     * (SP_OUTLET: an outlet not under a lake itself) */
  int32_t *lk_beg, *lk_len; /* an outlet's lake: a run of PIT (LK_BEG holds
                             * the pits' basins' sizes before) */
  double *ero, *dep; /* the run's incised and deposited depths (may be NULL) */
  double dt, rdiff; /* this step's dt and D dt / cell² */
  double kl[2];     /* K dt / L^n for the two distances to a receiver */
  double *cp, *den; /* the diffusion's tridiagonal factors (DEN: reciprocals) */
  double *rowsum;   /* each row's sum of heights (the diffusion's budget) */
  size_t basins_max; /* the most pits' basins a step found */
  /* The stack is a forest, a tree a root on the world's edge (the pits'
   * basins joined to it over their passes), each tree's walks independent
   * of the others': the trees are cut into groups (consecutive roots, about
   * SP_GROUP_SAMPLES samples each, however many threads run them), each
   * group a run of the stack that a thread walks alone. */
  int32_t *edge;        /* the roots: the world's edge samples, in the stack's order */
  int32_t nedge;
  int32_t *tsz;         /* each root's tree: its samples this step */
  int32_t *rgroup;      /* each root's group */
  int32_t ngroups, gmax;
  size_t *gbeg;         /* group G is ORDER[GBEG[G] .. GBEG[G + 1]) */
  int32_t *gord;        /* the groups, largest first (the order the threads take them) */
  int32_t *gfirst;      /* group G's first root */
  const int32_t *gpass, *gpass_beg; /* while the stack is built: each group's pits' basins'
                                     * entries (their pass samples), in tree order */
  const int32_t *pits;  /* while the basins are found: the pits, in index order */
  int32_t *scratch_tree, *scratch_bsz; /* and the sea's trees, the basins' sizes */
  int *lrc;             /* and each chunk of roots' 0 or TG_ENOMEM */
  struct SpPassTable *ptab; /* while the passes are found: each band's */
  TgSpStats *gsum;      /* each group's volumes, added up in group order */
  int *grc;             /* each group's 0, TG_ENOMEM or TG_ECANCELLED */
} Sp;

#define SP_OUTLET (-2)

/* About this many samples a group (a fixed figure: the groups, hence the
 * order of every sum, do not depend on the thread count). */
#define SP_GROUP_SAMPLES 16384

static bool
sp_cancelled (const Sp *s)
{
  return s->o && s->o->cancelled && s->o->cancelled (s->o->ctx);
}

/* Tells a benchmark that this thread's work since its last call was
 * phase PHASE (TG_SP_PHASE_*). */
static inline void
sp_mark (const Sp *s, int phase)
{
  if (s->o && s->o->phase)
    s->o->phase (s->o->ctx, phase);
}

static int
sp_parallel (const Sp *s, int n, int grain, void (*fn) (void *, int, int), void *user)
{
  if (s->o && s->o->parallel)
    return s->o->parallel (s->o->ctx, n, grain, fn, user);
  fn (user, 0, n);
  return 0;
}

/* Step 1, receivers, rows [BEGIN, END) in parallel: a sample drains to
 * its steepest lower neighbour (D8, slopes by distance); one on the
 * world's edge, or with no lower neighbour (a pit), to itself. */
static void
sp_receiver_rows (void *user, int begin, int end)
{
  Sp *s = user;
  int w = s->w, h = s->h;
  ptrdiff_t o0 = s->off[0], o1 = s->off[1], o2 = s->off[2], o3 = s->off[3];
  ptrdiff_t o4 = s->off[4], o5 = s->off[5], o6 = s->off[6], o7 = s->off[7];
  /* Locals: a byte stored may alias anything read through S. */
  const double *z = s->z;
  int32_t *rec = s->rec;
  uint8_t *rdir = s->rdir;
  ptrdiff_t off[8];

  memcpy (off, s->off, sizeof off);

  for (int y = begin; y < end; y++)
    {
      size_t row = (size_t) y * w;
      if (y == 0 || y == h - 1 || w < 3)
        {
          for (int x = 0; x < w; x++)
            {
              rec[row + x] = (int32_t) (row + x);
              rdir[row + x] = 8;
            }
          continue;
        }
      rec[row] = (int32_t) row;
      rdir[row] = 8;
      /* The interior without branches (the steepest is a running maximum,
       * the first of equal slopes kept: the same choice as a loop over Q
       * with "slope > best"). */
      for (int x = 1; x < w - 1; x++)
        {
          size_t k = row + x;
          const double *zp = z + k;
          double zk = zp[0], best = 0.0, sl;
          int qb = 8;
#define SP_TRY(q, o, f)                                                                            \
  sl = (zk - zp[o]) f;                                                                             \
  qb = sl > best ? (q) : qb;                                                                       \
  best = sl > best ? sl : best;
          SP_TRY (0, o0, )
          SP_TRY (1, o1, )
          SP_TRY (2, o2, )
          SP_TRY (3, o3, )
          SP_TRY (4, o4, *M_SQRT1_2)
          SP_TRY (5, o5, *M_SQRT1_2)
          SP_TRY (6, o6, *M_SQRT1_2)
          SP_TRY (7, o7, *M_SQRT1_2)
#undef SP_TRY
          rec[k] = qb < 8 ? (int32_t) ((ptrdiff_t) k + off[qb]) : (int32_t) k;
          rdir[k] = (uint8_t) qb;
        }
      rec[row + w - 1] = (int32_t) (row + w - 1);
      rdir[row + w - 1] = 8;
    }
  sp_mark (s, TG_SP_PHASE_RECEIVERS);
}

/* The donors of every sample from the receivers' directions, rows
 * [BEGIN, END) in parallel: bit Q of DMASK is set when neighbour Q drains
 * to it. */
static void
sp_donor_rows (void *user, int begin, int end)
{
  static const uint8_t opposite[8] = { 1, 0, 3, 2, 7, 6, 5, 4 };
  Sp *s = user;
  int w = s->w, h = s->h;
  /* Locals: a byte stored may alias anything read through S. */
  const uint8_t *rdir = s->rdir;
  uint8_t *dmask = s->dmask;
  ptrdiff_t off[8];

  memcpy (off, s->off, sizeof off);
  for (int y = begin; y < end; y++)
    {
      size_t row = (size_t) y * w;
      bool inner = y > 0 && y < h - 1;
      for (int x = 0; x < w; x++)
        {
          size_t k = row + x;
          unsigned m = 0;
          if (inner && x > 0 && x < w - 1)
            {
              const uint8_t *rp = rdir + k;
              m = (unsigned) (rp[off[0]] == 1) | (unsigned) (rp[off[1]] == 0) << 1
                  | (unsigned) (rp[off[2]] == 3) << 2 | (unsigned) (rp[off[3]] == 2) << 3
                  | (unsigned) (rp[off[4]] == 7) << 4 | (unsigned) (rp[off[5]] == 6) << 5
                  | (unsigned) (rp[off[6]] == 5) << 6 | (unsigned) (rp[off[7]] == 4) << 7;
            }
          else
            for (int q = 0; q < 8; q++)
              {
                int nx = x + sp_dx[q], ny = y + sp_dy[q];
                if (nx >= 0 && ny >= 0 && nx < w && ny < h)
                  m |= (unsigned) (rdir[(ptrdiff_t) k + off[q]] == opposite[q]) << q;
              }
          dmask[k] = (uint8_t) m;
        }
    }
  sp_mark (s, TG_SP_PHASE_BASINS);
}

/* Whether receiver B of A is a diagonal neighbour (they are neighbours). */
static inline bool
sp_diagonal (const Sp *s, int32_t a, int32_t b)
{
  int32_t d = a - b;

  return !(d == 1 || d == -1 || d == s->w || d == -s->w);
}

/* Labels the samples draining to ROOT (ROOT too) basin B in BASIN and,
 * if TREE is not NULL, T there; depth first on *STK (its size *CAP,
 * grown as needed).  Returns their number, or -1 when out of memory. */
static ptrdiff_t
sp_label (const Sp *s, int32_t root, int32_t *basin, int32_t b, int32_t *tree, int32_t t,
          int32_t **stk, size_t *cap)
{
  size_t top = 0, count = 0;

  (*stk)[top++] = root;
  while (top > 0)
    {
      int32_t c = (*stk)[--top];
      unsigned m = s->dmask[c];
      basin[c] = b;
      if (tree)
        tree[c] = t;
      count++;
      if (top + 8 > *cap)
        {
          int32_t *ns = realloc (*stk, sizeof (int32_t) * *cap * 2);
          if (!ns)
            return -1;
          *stk = ns;
          *cap *= 2;
        }
      while (m)
        {
          int q = __builtin_ctz (m);
          m &= m - 1;
          (*stk)[top++] = (int32_t) ((ptrdiff_t) c + s->off[q]);
        }
    }
  return (ptrdiff_t) count;
}

/* Which neighbour of A sample B is. */
static inline int
sp_dir (const Sp *s, int32_t a, int32_t b)
{
  ptrdiff_t d = (ptrdiff_t) b - a;
  int q = 0;

  while (q < 7 && s->off[q] != d)
    q++;
  return q;
}

/* For the final stack: the samples that drain to ROOT within its basin
 * (the donor masks do not cross from a basin to another: a pit's basin,
 * which drains into another over its pass, has its own walk later),
 * appended at TAIL of a group's run of the stack that ends at END, the
 * walk's own stack growing down from there.  ROOT drains to place RPOS
 * (-1: itself), diagonally if RDIAG.  Each sample's place, its
 * receiver's, the diagonal flag and the area it starts step 2 with.
 * Returns the new length, or END + 1 if the run is too short (cannot
 * happen: a group's size is its basins'). */
static size_t
sp_dfs_in (Sp *s, int32_t root, int32_t rpos, int rdiag, size_t tail, size_t end)
{
  /* The walk's stack: samples in ORDER, their receivers' places in SREC,
   * the diagonal flags in SDIAG, each growing down from END. */
  int32_t *order = s->order, *srec = s->srec, *pos = s->pos;
  int32_t *stk = order + end, *spar = srec + end;
  uint8_t *sdiag = s->sdiag, *sdg = sdiag + end;
  const uint8_t *dmask = s->dmask;
  double *area = s->area, ca = s->cell_area;
  ptrdiff_t top = 0, off[8];

  memcpy (off, s->off, sizeof off);
  if (tail >= end)
    return end + 1;
  ++top;
  stk[-top] = root;
  spar[-top] = rpos;
  sdg[-top] = (uint8_t) rdiag;
  while (top > 0)
    {
      int32_t c = stk[-top], r = spar[-top];
      int32_t k = (int32_t) tail++;
      unsigned m = dmask[c];
      sdiag[k] = sdg[-top];
      top--;
      order[k] = c;
      pos[c] = k;
      srec[k] = r < 0 ? k : r;
      area[k] = ca; /* step 2 starts from each sample's own */
      while (m)
        {
          int q = __builtin_ctz (m);
          m &= m - 1;
          if (tail + (size_t) top >= end)
            return end + 1;
          ++top;
          stk[-top] = (int32_t) ((ptrdiff_t) c + off[q]);
          spar[-top] = k;
          sdg[-top] = q >= 4;
        }
    }
  return tail;
}

/* The rest of steps 2 to 4's arrays for the run [B, E) of the stack just
 * built: each sample's height, uplift and lake (the outlet's place: the
 * outlet is on the way of all the lake's water, placed already; checked,
 * since a stale place would be a wrong sum, not a crash).  The samples
 * are all over the world, so the reads ahead are asked for early.  0, or
 * TG_ENOMEM if a lake's outlet is not placed (cannot happen). */
#define SP_AHEAD 48

static int
sp_gather (Sp *s, size_t b, size_t e)
{
  const int32_t *order = s->order, *pos = s->pos, *lake = s->lake;
  const double *z = s->z;
  double *hs = s->hs;
  int32_t *slake = s->slake;

  for (size_t k = b; k < e; k++)
    {
      int32_t c = order[k], l;
      if (k + SP_AHEAD < e)
        {
          __builtin_prefetch (&z[order[k + SP_AHEAD]]);
          __builtin_prefetch (&lake[order[k + SP_AHEAD]]);
        }
      hs[k] = z[c];
      l = lake[c];
      if (l >= 0)
        {
          int32_t at = pos[l];
          if (!((size_t) at >= b && (size_t) at < k && order[at] == l))
            return TG_ENOMEM;
          l = at;
        }
      slake[k] = l;
    }
  if (s->supl)
    for (size_t k = b; k < e; k++)
      s->supl[k] = s->uplift[order[k]];
  return 0;
}

/* Flats: joins every connected region of pits of exactly the same height
 * (a sea-level clamp, a plateau, a lake filled flat) into one basin, so a
 * flat costs the passes and the spanning tree one basin, not one a
 * sample (O(n log n) and a pass table as big as the world).  The
 * region's pit is its first sample in index order; the others drain to
 * it along a breadth-first tree over the region's neighbours (D8, in the
 * neighbours' order), every receiver a neighbour, so the carve from the
 * pass crosses the flat toward its outlet as for any basin.  Serial, in
 * index order: the same for any thread count.  ORDER is the queue (free
 * until the stack is built).  PITS gets the pits left, in index order;
 * returns their number. */
static int32_t
sp_join_flats (Sp *s, int32_t *pits)
{
  static const uint8_t opposite[8] = { 1, 0, 3, 2, 7, 6, 5, 4 };
  int w = s->w, h = s->h;
  int32_t *queue = s->order, nb = 0;

  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      {
        int32_t seed = y * w + x, qh = 0, qt = 0;
        double zs = s->z[seed];
        if (s->rec[seed] != seed)
          continue;
        pits[nb++] = seed;
        queue[qt++] = seed;
        while (qh < qt)
          {
            int32_t c = queue[qh++];
            int cx = c % w, cy = c / w;
            for (int q = 0; q < 8; q++)
              {
                int nx = cx + sp_dx[q], ny = cy + sp_dy[q];
                int32_t d = (int32_t) ((ptrdiff_t) c + s->off[q]);
                if (nx < 1 || ny < 1 || nx >= w - 1 || ny >= h - 1 || d == seed || s->rec[d] != d
                    || s->z[d] != zs)
                  continue;
                s->rec[d] = c;
                s->rdir[d] = opposite[q];
                queue[qt++] = d;
              }
          }
      }
  return nb;
}

/* The basins, roots [BEGIN, END) of the edge's and then the pits' in
 * parallel: basin 0 (each root's tree labelled in SCRATCH_TREE, its size
 * in TSZ) drains to the world's edge, basin B (1 .. NB, its size in
 * SCRATCH_BSZ[B]) to pit PITS[B - 1] (the pits in index order).  A chunk
 * that runs out of memory says so in GRC[BEGIN / SP_LABEL_GRAIN]. */
#define SP_LABEL_GRAIN 64

static void
sp_basin_roots (void *user, int begin, int end)
{
  Sp *s = user;
  size_t cap = 1024;
  int32_t *stk = malloc (sizeof (int32_t) * cap);
  int rc = stk ? 0 : TG_ENOMEM;

  for (int t = begin; t < end && rc == 0; t++)
    {
      ptrdiff_t c;
      if (t < s->nedge)
        {
          c = sp_label (s, s->edge[t], s->pit, 0, s->scratch_tree, t, &stk, &cap);
          s->tsz[t] = (int32_t) c;
        }
      else
        {
          int32_t b = t - s->nedge + 1;
          c = sp_label (s, s->pits[b - 1], s->pit, b, NULL, 0, &stk, &cap);
          s->scratch_bsz[b] = (int32_t) c;
        }
      if (c < 0)
        rc = TG_ENOMEM;
    }
  if (rc < 0)
    s->lrc[begin / SP_LABEL_GRAIN] = rc; /* (one chunk of all without a parallel hook) */
  free (stk);
  sp_mark (s, TG_SP_PHASE_BASINS);
}

/* Steps 1's basins before the passes: the donors, then every sample's
 * basin (PIT), in parallel.  0, TG_ENOMEM (or a cycle of receivers, which
 * cannot happen) or TG_ECANCELLED. */
static int
sp_basins (Sp *s, int32_t nb)
{
  int32_t nroots = s->nedge + nb, nchunks = (nroots + SP_LABEL_GRAIN - 1) / SP_LABEL_GRAIN;
  size_t total = 0;
  int rc;

  if ((rc = sp_parallel (s, s->h, 16, sp_donor_rows, s)) < 0)
    return rc;
  if (!(s->lrc = calloc ((size_t) nchunks + 1, sizeof (int))))
    return TG_ENOMEM;
  rc = sp_parallel (s, nroots, SP_LABEL_GRAIN, sp_basin_roots, s);
  for (int32_t c = 0; c < nchunks && rc == 0; c++)
    rc = s->lrc[c];
  free (s->lrc);
  s->lrc = NULL;
  if (rc < 0)
    return rc;
  for (int32_t j = 0; j < s->nedge; j++)
    total += (size_t) s->tsz[j];
  for (int32_t b = 1; b <= nb; b++)
    total += (size_t) s->scratch_bsz[b];
  sp_mark (s, TG_SP_PHASE_BASINS);
  return total == s->n ? 0 : TG_ENOMEM;
}

/* The groups of this step's trees: each root's tree is its sea run (TSZ
 * already) and the pits' basins BTREE puts in it (1 .. NB, sizes BSZ);
 * consecutive roots make a group until it holds SP_GROUP_SAMPLES.  Then
 * the groups' order for the threads, largest first. */
static void
sp_groups (Sp *s, const int32_t *btree, const int32_t *bsz, int32_t nb)
{
  size_t acc = 0;
  int32_t g = 0;

  for (int32_t b = 1; b <= nb; b++)
    s->tsz[btree[b]] += bsz[b];
  s->gbeg[0] = 0;
  for (int32_t j = 0; j < s->nedge; j++)
    {
      if (acc == 0)
        s->gfirst[g] = j;
      s->rgroup[j] = g;
      acc += (size_t) s->tsz[j];
      if (acc >= SP_GROUP_SAMPLES || j == s->nedge - 1)
        {
          s->gbeg[g + 1] = s->gbeg[g] + acc;
          acc = 0;
          g++;
        }
    }
  s->gfirst[g] = s->nedge;
  s->ngroups = g;
  /* Largest first (insertion sort: a few hundred groups; ties by index). */
  for (int32_t k = 0; k < g; k++)
    {
      int32_t t = k, x = k;
      size_t sz = s->gbeg[x + 1] - s->gbeg[x];
      while (t > 0 && s->gbeg[s->gord[t - 1] + 1] - s->gbeg[s->gord[t - 1]] < sz)
        {
          s->gord[t] = s->gord[t - 1];
          t--;
        }
      s->gord[t] = x;
    }
}

/* The final stack, groups [BEGIN, END) of GORD in parallel: each group's
 * run is its roots' sea runs and then its pits' basins (down the tree of
 * basins), each depth first from its pass within itself; the trees keep
 * the samples' order of a single stack of all the sea and then all the
 * basins, so every sum down or up a tree is made in the same order. */
static void
sp_stack_groups (void *user, int begin, int end)
{
  Sp *s = user;

  for (int t = begin; t < end; t++)
    {
      int32_t g = s->gord[t];
      size_t tail = s->gbeg[g], e = s->gbeg[g + 1];
      for (int32_t j = s->gfirst[g]; j < s->gfirst[g + 1] && tail <= e; j++)
        tail = sp_dfs_in (s, s->edge[j], -1, 0, tail, e);
      /* A pit's basin drains over its pass into its parent's, placed
       * before it (the passes are in the tree's order). */
      for (int32_t k = s->gpass_beg[g]; k < s->gpass_beg[g + 1] && tail <= e; k++)
        {
          int32_t c = s->gpass[k], r = s->rec[c];
          tail = sp_dfs_in (s, c, s->pos[r], sp_diagonal (s, c, r), tail, e);
        }
      s->grc[g] = tail == e ? sp_gather (s, s->gbeg[g], e) : TG_ENOMEM; /* cannot happen */
    }
  sp_mark (s, TG_SP_PHASE_STACK);
}

/* A pass between two basins: the lowest crossing (the higher of two
 * neighbouring samples, one in each) found between them. */
typedef struct
{
  double z;       /* its level */
  int32_t lo, hi; /* the basins, lo < hi */
  int32_t a, b;   /* the samples: A in LO, B in HI */
} SpPass;

static int
sp_pass_cmp (const void *pa, const void *pb)
{
  const SpPass *x = pa, *y = pb;

  if (x->z != y->z)
    return x->z < y->z ? -1 : 1;
  if (x->lo != y->lo)
    return x->lo < y->lo ? -1 : 1;
  return (x->hi > y->hi) - (x->hi < y->hi);
}

/* A pair of basins' slot in a hash table of CAP (a power of 2) slots:
 * the high bits of a Fibonacci hash of both. */
static inline size_t
sp_pair_slot (int32_t lo, int32_t hi, size_t cap)
{
  uint64_t key = ((uint64_t) (uint32_t) lo << 32 | (uint32_t) hi) * 0x9e3779b97f4a7c15u;

  return (size_t) (key >> 32) & (cap - 1);
}

/* The lowest pass of each pair of basins found so far: a hash table of
 * HCAP slots (a power of 2) indexing PASS. */
typedef struct SpPassTable
{
  SpPass *pass;
  int32_t *hslot;
  size_t npass, hcap;
  int32_t last; /* the pair seen last (most often seen again next) */
  int rc;       /* a band's 0 or TG_ENOMEM */
} SpPassTable;

static int
sp_ptab_init (SpPassTable *t, size_t want)
{
  t->hcap = 64;
  while (t->hcap < want)
    t->hcap *= 2;
  t->npass = 0;
  t->last = -1;
  t->hslot = malloc (sizeof (int32_t) * t->hcap);
  t->pass = malloc (sizeof (SpPass) * (t->hcap / 2));
  if (!t->hslot || !t->pass)
    return TG_ENOMEM;
  memset (t->hslot, 0xff, sizeof (int32_t) * t->hcap);
  return 0;
}

static void
sp_ptab_clear (SpPassTable *t)
{
  free (t->hslot);
  free (t->pass);
}

/* Keeps pass P for its pair if the pair has none yet or a higher one.
 * 0 or TG_ENOMEM. */
static int
sp_ptab_add (SpPassTable *t, const SpPass *p)
{
  size_t slot;

  if (t->last >= 0 && t->pass[t->last].lo == p->lo && t->pass[t->last].hi == p->hi)
    {
      if (p->z < t->pass[t->last].z)
        t->pass[t->last] = *p;
      return 0;
    }
  slot = sp_pair_slot (p->lo, p->hi, t->hcap);
  while (t->hslot[slot] >= 0
         && (t->pass[t->hslot[slot]].lo != p->lo || t->pass[t->hslot[slot]].hi != p->hi))
    slot = (slot + 1) & (t->hcap - 1);
  if (t->hslot[slot] >= 0)
    {
      SpPass *e = &t->pass[t->last = t->hslot[slot]];
      if (p->z < e->z)
        *e = *p;
      return 0;
    }
  if (2 * (t->npass + 1) > t->hcap)
    {
      /* Grow the table (and the passes with it). */
      size_t nc = t->hcap * 2;
      int32_t *nh = malloc (sizeof (int32_t) * nc);
      SpPass *np = realloc (t->pass, sizeof (SpPass) * (nc / 2));
      if (np)
        t->pass = np;
      if (!nh || !np)
        {
          free (nh);
          return TG_ENOMEM;
        }
      memset (nh, 0xff, sizeof (int32_t) * nc);
      for (size_t e = 0; e < t->npass; e++)
        {
          size_t sl = sp_pair_slot (t->pass[e].lo, t->pass[e].hi, nc);
          while (nh[sl] >= 0)
            sl = (sl + 1) & (nc - 1);
          nh[sl] = (int32_t) e;
        }
      free (t->hslot);
      t->hslot = nh;
      t->hcap = nc;
      slot = sp_pair_slot (p->lo, p->hi, t->hcap);
      while (t->hslot[slot] >= 0)
        slot = (slot + 1) & (t->hcap - 1);
    }
  t->hslot[slot] = t->last = (int32_t) t->npass;
  t->pass[t->npass++] = *p;
  return 0;
}

/* Rows a band of the passes' scan. */
#define SP_PASS_ROWS 32

/* The lowest pass of each pair of neighbouring basins in bands [BEGIN,
 * END) of SP_PASS_ROWS rows, each into its table: every pair of
 * neighbouring samples looked at once, in index order (to the east and
 * the three below). */
static void
sp_pass_bands (void *user, int begin, int end)
{
  static const int fdx[4] = { 1, -1, 0, 1 }, fdy[4] = { 0, 1, 1, 1 };
  Sp *s = user;
  const int32_t *basin = s->pit;
  int w = s->w, h = s->h;

  for (int t = begin; t < end; t++)
    {
      SpPassTable *tab = &s->ptab[t];
      int y1 = (t + 1) * SP_PASS_ROWS < h ? (t + 1) * SP_PASS_ROWS : h;
      if ((tab->rc = sp_ptab_init (tab, 1024)) < 0)
        continue;
      for (int y = t * SP_PASS_ROWS; y < y1 && tab->rc == 0; y++)
        {
          if ((y & 7) == 0 && sp_cancelled (s))
            {
              tab->rc = TG_ECANCELLED;
              break;
            }
          for (int x = 0; x < w && tab->rc == 0; x++)
            {
              int32_t k = y * w + x, b = basin[k];
              /* Most samples are inside their basin: skip those at once. */
              if (x > 0 && x < w - 1 && y < h - 1 && basin[k + 1] == b && basin[k + w - 1] == b
                  && basin[k + w] == b && basin[k + w + 1] == b)
                continue;
              for (int q = 0; q < 4; q++)
                {
                  int nx = x + fdx[q], ny = y + fdy[q];
                  int32_t m, c;
                  SpPass p;
                  if (nx < 0 || nx >= w || ny >= h)
                    continue;
                  m = ny * w + nx;
                  if ((c = basin[m]) == b)
                    continue;
                  p.z = s->z[k] > s->z[m] ? s->z[k] : s->z[m];
                  p.lo = b < c ? b : c;
                  p.hi = b < c ? c : b;
                  p.a = b < c ? k : m;
                  p.b = b < c ? m : k;
                  if (sp_ptab_add (tab, &p) < 0)
                    tab->rc = TG_ENOMEM;
                }
            }
        }
    }
  sp_mark (s, TG_SP_PHASE_PASSES);
}

static int32_t
sp_find (int32_t *uf, int32_t a)
{
  while (uf[a] != a)
    {
      uf[a] = uf[uf[a]];
      a = uf[a];
    }
  return a;
}

/* Lakes and spill levels, rows [BEGIN, END) in parallel: a sample below
 * its basin's spill level is under that lake (LAKE: the lake's outlet).
 * LK_LEN is zeroed for the lakes' lists. */
static void
sp_lake_rows (void *user, int begin, int end)
{
  Sp *s = user;

  for (size_t k = (size_t) begin * s->w; k < (size_t) end * s->w; k++)
    {
      int32_t b = s->pit[k];
      s->lk_len[k] = 0;
      double sl = s->bspill[b];
      if (s->z[k] < sl)
        {
          s->lake[k] = s->boutlet[b];
          s->fill[k] = sl;
        }
      else
        s->lake[k] = -1;
    }
  sp_mark (s, TG_SP_PHASE_PASSES);
}

/* Step 1 in full, after Cordonnier, Bovy and Braun (2019): receivers;
 * the pits' basins; the lowest pass between
 * every two neighbouring basins (a few per basin); their minimum
 * spanning tree from the edge's basin (Kruskal, O(B log B) for B
 * basins); each pit's basin
 * re-routed over the pass to its parent by reversing the receivers from
 * the pass down to the pit ("carving" the route: every receiver stays a
 * neighbour, the route across a depression runs through it); the lakes
 * (the samples of a basin below its spill level, the highest pass on
 * the tree's way to the edge: what a priority flood would fill) with
 * their outlets (the higher side of the pass that sets the level); and
 * the stack, a group of trees at a time, each tree's pits' basins after
 * the basins they now drain to.
 * 0, TG_ENOMEM or TG_ECANCELLED. */
static int
sp_route (Sp *s)
{
  size_t n = s->n;
  int32_t nb = 0;
  int32_t *gpass = NULL, *gpass_beg = NULL;
  int32_t *touch = NULL, *uf = NULL, *root = NULL, *tadj = NULL, *toff = NULL, *tq = NULL;
  int32_t *bpar = NULL, *bin = NULL, *bout = NULL, *outlet = NULL;
  double *spill = NULL;
  SpPass *pass = NULL;
  size_t npass = 0;
  int rc;

  if ((rc = sp_parallel (s, s->h, 16, sp_receiver_rows, s)) < 0)
    return rc;
  if (sp_cancelled (s))
    return TG_ECANCELLED;
  nb = sp_join_flats (s, (int32_t *) s->qs);
  sp_mark (s, TG_SP_PHASE_RECEIVERS);
  /* QS (free until step 3) holds the pits, LAKE (free until the lakes
   * are found) labels the sea's samples with their trees, LK_BEG (free
   * until the lakes are listed) gets the pits' basins' sizes. */
  s->pits = (int32_t *) s->qs;
  s->scratch_tree = s->lake;
  s->scratch_bsz = s->lk_beg;
  if ((rc = sp_basins (s, nb)) < 0)
    return rc;
  if ((size_t) nb > s->basins_max)
    s->basins_max = (size_t) nb;
  if (nb == 0)
    {
      gpass_beg = calloc ((size_t) s->gmax + 2, sizeof (int32_t));
      if (!gpass_beg)
        return TG_ENOMEM;
      sp_groups (s, NULL, NULL, 0);
      memset (s->lake, 0xff, sizeof (int32_t) * n);
      memset (s->lk_len, 0, sizeof (int32_t) * n);
      goto stack;
    }
  /* Basins 0 .. NB; the edge's is 0. */
  rc = TG_ENOMEM;
  touch = malloc (sizeof (int32_t) * ((size_t) nb + 1));
  uf = malloc (sizeof (int32_t) * ((size_t) nb + 1));
  root = malloc (sizeof (int32_t) * ((size_t) nb + 1));
  toff = calloc ((size_t) nb + 2, sizeof (int32_t));
  tadj = malloc (sizeof (int32_t) * 2 * ((size_t) nb + 1));
  tq = malloc (sizeof (int32_t) * ((size_t) nb + 1));
  bpar = malloc (sizeof (int32_t) * ((size_t) nb + 1));
  bin = malloc (sizeof (int32_t) * ((size_t) nb + 1));
  bout = malloc (sizeof (int32_t) * ((size_t) nb + 1));
  outlet = malloc (sizeof (int32_t) * ((size_t) nb + 1));
  spill = malloc (sizeof (double) * ((size_t) nb + 1));
  if (!touch || !uf || !root || !toff || !tadj || !tq || !bpar || !bin || !bout || !outlet
      || !spill)
    goto out;
  /* The lowest pass between every two neighbouring basins: bands of
   * rows in parallel, each with a table of its own, then the bands'
   * tables in band order (a later band's pass replaces an earlier one's
   * only when lower: the first lowest in index order, as one scan finds). */
  for (int32_t b = 1; b <= nb; b++)
    root[b] = s->pits[b - 1];
  {
    int nband = (s->h + SP_PASS_ROWS - 1) / SP_PASS_ROWS;
    SpPassTable all = { 0 };
    if (!(s->ptab = calloc ((size_t) nband, sizeof (SpPassTable))))
      goto out;
    rc = sp_parallel (s, nband, 1, sp_pass_bands, s);
    for (int t = 0; t < nband && rc == 0; t++)
      rc = s->ptab[t].rc;
    if (rc == 0 && sp_ptab_init (&all, 8 * ((size_t) nb + 1)) < 0)
      rc = TG_ENOMEM;
    for (int t = 0; t < nband && rc == 0; t++)
      for (size_t e = 0; e < s->ptab[t].npass && rc == 0; e++)
        if (sp_ptab_add (&all, &s->ptab[t].pass[e]) < 0)
          rc = TG_ENOMEM;
    for (int t = 0; t < nband; t++)
      sp_ptab_clear (&s->ptab[t]);
    free (s->ptab);
    s->ptab = NULL;
    free (all.hslot);
    pass = all.pass;
    npass = all.npass;
    if (rc < 0)
      goto out;
    rc = TG_ENOMEM;
  }
  /* Kruskal: the minimum spanning tree of the basins over their passes. */
  qsort (pass, npass, sizeof (SpPass), sp_pass_cmp);
  for (int32_t b = 0; b <= nb; b++)
    uf[b] = b;
  {
    size_t nt = 0;
    for (size_t e = 0; e < npass && nt < (size_t) nb; e++)
      {
        int32_t ra = sp_find (uf, pass[e].lo), rb = sp_find (uf, pass[e].hi);
        if (ra == rb)
          continue;
        uf[ra > rb ? ra : rb] = ra < rb ? ra : rb;
        pass[nt++] = pass[e]; /* the tree's edges, in place */
      }
    npass = nt;
  }
  /* The tree from the edge's basin: each basin's parent, pass, spill
   * level and lake outlet. */
  for (size_t e = 0; e < npass; e++)
    {
      toff[pass[e].lo + 1]++;
      toff[pass[e].hi + 1]++;
    }
  for (int32_t b = 0; b <= nb; b++)
    toff[b + 1] += toff[b];
  memcpy (touch, toff, sizeof (int32_t) * ((size_t) nb + 1));
  for (size_t e = 0; e < npass; e++)
    {
      tadj[touch[pass[e].lo]++] = (int32_t) e;
      tadj[touch[pass[e].hi]++] = (int32_t) e;
    }
  for (int32_t b = 0; b <= nb; b++)
    bpar[b] = -1;
  bpar[0] = 0;
  spill[0] = -INFINITY;
  outlet[0] = -1;
  {
    int32_t qh = 0, qt = 0;
    tq[qt++] = 0;
    while (qh < qt)
      {
        int32_t p = tq[qh++];
        for (int32_t j = toff[p]; j < toff[p + 1]; j++)
          {
            const SpPass *e = &pass[tadj[j]];
            int32_t c = e->lo == p ? e->hi : e->lo;
            if (bpar[c] >= 0)
              continue;
            bpar[c] = p;
            bin[c] = e->lo == c ? e->a : e->b;
            bout[c] = e->lo == c ? e->b : e->a;
            if (e->z > spill[p])
              {
                /* A lake of its own, spilling over the pass's higher side. */
                spill[c] = e->z;
                outlet[c] = s->z[bin[c]] >= s->z[bout[c]] ? bin[c] : bout[c];
              }
            else
              {
                /* Under its parent's lake. */
                spill[c] = spill[p];
                outlet[c] = outlet[p];
              }
            tq[qt++] = c;
          }
      }
    if (qt != nb + 1)
      goto out; /* cannot happen: the grid's basins are connected */
  }
  /* Each basin's tree (UF, free since Kruskal), down the tree of basins:
   * its parent's, or the sea sample's its pass leads to; the groups; and
   * each group's basins, in the tree's order. */
  for (int32_t t = 1; t <= nb; t++)
    {
      int32_t c = tq[t], p = bpar[c];
      uf[c] = p == 0 ? s->scratch_tree[bout[c]] : uf[p];
    }
  sp_groups (s, uf, s->scratch_bsz, nb);
  gpass = malloc (sizeof (int32_t) * (size_t) nb);
  gpass_beg = calloc ((size_t) s->ngroups + 2, sizeof (int32_t));
  if (!gpass || !gpass_beg)
    goto out;
  for (int32_t t = 1; t <= nb; t++)
    gpass_beg[s->rgroup[uf[tq[t]]] + 2]++;
  for (int32_t g = 0; g < s->ngroups; g++)
    gpass_beg[g + 2] += gpass_beg[g + 1];
  for (int32_t t = 1; t <= nb; t++)
    {
      int32_t c = tq[t];
      gpass[gpass_beg[s->rgroup[uf[c]] + 1]++] = bin[c];
    }
  /* Carve: reverse the receivers from each basin's pass down to its pit,
   * and let the pass drain over to the other side (the donor masks
   * follow, within the basin: the stack walks a basin from its pass
   * after the basin it drains to, so no mask crosses between basins). */
  for (int32_t b = 1; b <= nb; b++)
    {
      int32_t prev = bout[b], c = bin[b];
      for (;;)
        {
          int32_t next = s->rec[c];
          if (next != c)
            s->dmask[next] &= (uint8_t) ~(1u << sp_dir (s, next, c));
          if (c != bin[b])
            s->dmask[prev] |= (uint8_t) (1u << sp_dir (s, prev, c));
          s->rec[c] = prev;
          if (c == root[b])
            break;
          prev = c;
          c = next;
        }
    }
  s->bspill = spill;
  s->boutlet = outlet;
  if ((rc = sp_parallel (s, s->h, 64, sp_lake_rows, s)) < 0)
    goto out;
  /* The final stack, a group at a time. */
stack:
  sp_mark (s, TG_SP_PHASE_PASSES);
  s->gpass = gpass;
  s->gpass_beg = gpass_beg;
  if ((rc = sp_parallel (s, s->ngroups, 1, sp_stack_groups, s)) < 0)
    goto out;
  for (int32_t g = 0; g < s->ngroups; g++)
    if (s->grc[g] < 0)
      {
        rc = s->grc[g]; /* cannot happen: every basin drains to its pass */
        goto out;
      }
  /* Each lake's samples, a run of PIT at its outlet, in index order. */
  {
    int32_t off = 0;
    for (size_t k = 0; k < n; k++)
      if (s->lake[k] >= 0)
        s->lk_len[s->lake[k]]++;
    for (int32_t b = 1; b <= nb; b++)
      {
        int32_t o = outlet[b];
        if (o >= 0 && s->lk_len[o] > 0 && (bpar[b] == 0 || outlet[bpar[b]] != o))
          {
            s->lk_beg[o] = off;
            off += s->lk_len[o];
            s->lk_len[o] = 0;
          }
      }
    for (size_t k = 0; k < n; k++)
      {
        int32_t o = s->lake[k];
        if (o >= 0)
          s->pit[s->lk_beg[o] + s->lk_len[o]++] = (int32_t) k;
      }
    for (int32_t b = 1; b <= nb; b++)
      if (outlet[b] >= 0 && s->lk_len[outlet[b]] > 0 && s->lake[outlet[b]] == -1)
        s->lake[outlet[b]] = s->slake[s->pos[outlet[b]]] = SP_OUTLET;
  }
  sp_mark (s, TG_SP_PHASE_STACK);
  rc = 0;
out:
  free (gpass);
  free (gpass_beg);
  s->gpass = s->gpass_beg = NULL;
  free (touch);
  free (uf);
  free (root);
  free (toff);
  free (tadj);
  free (tq);
  free (bpar);
  free (bin);
  free (bout);
  free (outlet);
  free (spill);
  free (pass);
  s->bspill = NULL;
  s->boutlet = NULL;
  return rc;
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
          int32_t at = s->pos[i];
          s->hs[at] += t;
          s->qs[at] += t;
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
      s->hs[s->pos[f->idx]] += t;
      s->qs[s->pos[f->idx]] += t;
      used += t * a;
    }
  free (d);
  st->deposited += used;
  return used;
}

/* Steps 2 to 4 on one group's run of the stack [B, E) (its trees touch
 * nothing of the others'), its volumes summed into ST, the new heights
 * (and deposits) put back in the world's order.  0, TG_ENOMEM or
 * TG_ECANCELLED. */
static int
sp_fluvial_run (Sp *s, size_t b, size_t e, TgSpStats *st)
{
  const TgSpParams *p = s->p;
  const int32_t *order = s->order, *srec = s->srec, *slake = s->slake;
  const uint8_t *sdiag = s->sdiag;
  double a = s->cell_area, g = p->deposition, *area = s->area, *hs = s->hs, *qs = s->qs;
  double u0 = p->uplift_m_per_yr * s->dt;
  /* ST's sums in registers (the stores could alias ST: a chain through
   * memory), the same additions in the same order. */
  double s_up = st->uplift, s_ero = st->eroded, s_dep, s_out = st->outflux;

  /* Step 2, up the stack (AREA starts at A, set as the stack was built). */
  for (size_t k = e; k-- > b;)
    {
      int32_t r = srec[k];
      if ((size_t) r != k)
        area[r] += area[k];
    }
  sp_mark (s, TG_SP_PHASE_AREA);
  if (sp_cancelled (s))
    return TG_ECANCELLED;
  /* Step 3, down the stack: a receiver's new height comes first.  F =
   * K dt A^m / L^n, none under water or above the channel head (F = 0
   * leaves the uplifted height).  QS becomes the volume incised here, the
   * sediment each sample starts step 4 with. */
  for (size_t k = b; k < e; k++)
    {
      int32_t r = srec[k];
      double ex = 0.0, u;
      if ((k & 0xfff) == 0 && sp_cancelled (s))
        return TG_ECANCELLED;
      if ((size_t) r == k)
        {
          qs[k] = 0.0; /* (HS keeps the height) */
          continue;
        }
      u = s->supl ? u0 * (double) s->supl[k] : u0;
      hs[k] += u;
      s_up += u * a;
      if (slake[k] < 0 && !(area[k] < p->channel_area))
        {
          double f = s->kl[sdiag[k]] * pow (area[k], p->m);
          if (f > 0.0)
            {
              double h0 = hs[k];
              hs[k] = sp_incise (h0, hs[r], f, p->n);
              ex = h0 - hs[k];
              ex = ex > 0.0 ? ex : 0.0;
              s_ero += ex * a;
              if (s->ero)
                s->ero[order[k]] += ex;
            }
        }
      qs[k] = ex * a;
    }
  st->uplift = s_up;
  st->eroded = s_ero;
  sp_mark (s, TG_SP_PHASE_INCISION);
  s_dep = st->deposited;
  /* Step 4, up the stack: a sample's sediment is complete once its donors
   * are done.  What reaches a lake sample goes to its outlet, which fills
   * the lake before passing the rest on (the lake and its outlet are in
   * the outlet's tree).  A sample done, its QS is free: it takes the depth
   * laid down there (by the lake's fill for a lake sample). */
  for (size_t k = e; k-- > b;)
    {
      int32_t r = srec[k], l = slake[k];
      double qin = qs[k], d;
      if ((k & 0xfff) == 0 && sp_cancelled (s))
        return TG_ECANCELLED;
      if (l >= 0)
        {
          qs[l] += qin;
          qs[k] = 0.0;
          continue;
        }
      if (l == SP_OUTLET)
        {
          double used;
          st->deposited = s_dep;
          used = sp_fill_lake (s, order[k], qin, st);
          s_dep = st->deposited;
          if (used < 0.0)
            return TG_ENOMEM;
          qin -= used;
        }
      if ((size_t) r == k)
        {
          s_out += qin;
          qs[k] = 0.0;
          continue;
        }
      /* The depth laid down per m³ arriving (xi-q). */
      d = qin * (g > 0.0 ? g / (area[k] + g * a) : 0.0);
      hs[k] += d;
      qs[r] += qin - d * a;
      qs[k] = d;
      s_dep += d * a;
    }
  st->deposited = s_dep;
  st->outflux = s_out;
  /* The heights (and the deposits) back in the world's order. */
  for (size_t k = b; k < e; k++)
    {
      if (k + SP_AHEAD < e)
        __builtin_prefetch (&s->zn[order[k + SP_AHEAD]], 1);
      s->zn[order[k]] = hs[k];
    }
  if (s->dep)
    for (size_t k = b; k < e; k++)
      s->dep[order[k]] += qs[k];
  sp_mark (s, TG_SP_PHASE_DEPOSITION);
  return 0;
}

/* Steps 2 to 4, groups [BEGIN, END) of GORD in parallel. */
static void
sp_fluvial_groups (void *user, int begin, int end)
{
  Sp *s = user;

  for (int t = begin; t < end; t++)
    {
      int32_t g = s->gord[t];
      memset (&s->gsum[g], 0, sizeof s->gsum[g]);
      s->grc[g] = sp_fluvial_run (s, s->gbeg[g], s->gbeg[g + 1], &s->gsum[g]);
    }
}

/* Steps 2 to 4, every group, their volumes added up in group order.  0,
 * TG_ENOMEM or TG_ECANCELLED. */
__attribute__ ((noinline)) static int
sp_fluvial (Sp *s, TgSpStats *st)
{
  const TgSpParams *p = s->p;
  double kdt = p->erodibility * s->dt;
  int rc;

  s->kl[0] = kdt / pow (s->cell, p->n);
  s->kl[1] = kdt / pow (s->cell * M_SQRT2, p->n);
  if ((rc = sp_parallel (s, s->ngroups, 1, sp_fluvial_groups, s)) < 0)
    return rc;
  for (int32_t g = 0; g < s->ngroups; g++)
    {
      if (s->grc[g] < 0)
        return s->grc[g];
      st->uplift += s->gsum[g].uplift;
      st->eroded += s->gsum[g].eroded;
      st->deposited += s->gsum[g].deposited;
      st->outflux += s->gsum[g].outflux;
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

  s->den[1] = 1.0 / b;
  s->cp[1] = -r / b;
  for (int k = 2; k < len - 1; k++)
    {
      double den = b + r * s->cp[k - 1];
      s->den[k] = 1.0 / den;
      s->cp[k] = -r / den;
    }
}

/* Rows [BEGIN, END) of the interior, each solved along x in place, up to
 * SP_ROWS_AT_ONCE rows side by side (each row's solve is a chain of
 * dependent operations: several rows' chains overlap in the CPU; every
 * row's operations are the same, in the same order). */
#define SP_ROWS_AT_ONCE 4

static void
sp_diffuse_rows (void *user, int begin, int end)
{
  Sp *s = user;
  int w = s->w;
  double r = s->rdiff;
  const double *den = s->den, *cp = s->cp;

  for (int y0 = begin + 1; y0 < end + 1; y0 += SP_ROWS_AT_ONCE)
    {
      int nr = end + 1 - y0 < SP_ROWS_AT_ONCE ? end + 1 - y0 : SP_ROWS_AT_ONCE;
      double *u[SP_ROWS_AT_ONCE];
      for (int j = 0; j < nr; j++)
        u[j] = s->zn + (size_t) (y0 + j) * w;
      /* Forward: u[k - 1] holds the edge value (k = 1) or the previous
       * eliminated right-hand side; the last one also takes the edge. */
      if (nr == SP_ROWS_AT_ONCE)
        {
          double *u0 = u[0], *u1 = u[1], *u2 = u[2], *u3 = u[3];
          for (int k = 1; k < w - 2; k++)
            {
              u0[k] = (u0[k] + r * u0[k - 1]) * den[k];
              u1[k] = (u1[k] + r * u1[k - 1]) * den[k];
              u2[k] = (u2[k] + r * u2[k - 1]) * den[k];
              u3[k] = (u3[k] + r * u3[k - 1]) * den[k];
            }
        }
      else
        for (int j = 0; j < nr; j++)
          for (int k = 1; k < w - 2; k++)
            u[j][k] = (u[j][k] + r * u[j][k - 1]) * den[k];
      for (int j = 0; j < nr; j++)
        if (w - 2 >= 1)
          {
            int k = w - 2;
            double d = u[j][k] + r * u[j][k - 1];
            d += r * u[j][w - 1];
            u[j][k] = d * den[k];
          }
      if (nr == SP_ROWS_AT_ONCE)
        {
          double *u0 = u[0], *u1 = u[1], *u2 = u[2], *u3 = u[3];
          for (int k = w - 3; k >= 1; k--)
            {
              u0[k] -= cp[k] * u0[k + 1];
              u1[k] -= cp[k] * u1[k + 1];
              u2[k] -= cp[k] * u2[k + 1];
              u3[k] -= cp[k] * u3[k + 1];
            }
        }
      else
        for (int j = 0; j < nr; j++)
          for (int k = w - 3; k >= 1; k--)
            u[j][k] -= cp[k] * u[j][k + 1];
    }
  sp_mark (s, TG_SP_PHASE_DIFFUSION);
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
          u[x] = d * s->den[y];
        }
    }
  for (int y = h - 3; y >= 1; y--)
    {
      double *u = z + (size_t) y * w, *dn = u + w;
      for (int x = x0; x < x1; x++)
        u[x] -= s->cp[y] * dn[x];
    }
  sp_mark (s, TG_SP_PHASE_DIFFUSION);
}

/* Each interior row's sum of heights into ROWSUM, rows [BEGIN, END) of
 * the interior in parallel. */
static void
sp_row_sums (void *user, int begin, int end)
{
  Sp *s = user;
  int y = begin + 1, w = s->w;

  /* Four rows side by side (each row's sum in its own order). */
  for (; y + 3 < end + 1; y += 4)
    {
      const double *u0 = s->zn + (size_t) y * w, *u1 = u0 + w, *u2 = u1 + w, *u3 = u2 + w;
      double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
      for (int x = 1; x < w - 1; x++)
        {
          s0 += u0[x];
          s1 += u1[x];
          s2 += u2[x];
          s3 += u3[x];
        }
      s->rowsum[y] = s0;
      s->rowsum[y + 1] = s1;
      s->rowsum[y + 2] = s2;
      s->rowsum[y + 3] = s3;
    }
  for (; y < end + 1; y++)
    {
      const double *u = s->zn + (size_t) y * w;
      double sum = 0.0;
      for (int x = 1; x < w - 1; x++)
        sum += u[x];
      s->rowsum[y] = sum;
    }
}

/* The interior's volume in height units: the rows' sums, in row order.
 * 0 or TG_ECANCELLED. */
static int
sp_interior_sum (Sp *s, double *sum)
{
  int rc;

  if ((rc = sp_parallel (s, s->h - 2, 64, sp_row_sums, s)) < 0)
    return rc;
  *sum = 0.0;
  for (int y = 1; y < s->h - 1; y++)
    *sum += s->rowsum[y];
  return 0;
}

static int
sp_diffuse (Sp *s, TgSpStats *st)
{
  double before, after;
  int rc;

  if (!(s->p->diffusivity > 0.0) || s->w < 3 || s->h < 3)
    return 0;
  if ((rc = sp_interior_sum (s, &before)) < 0)
    return rc;
  s->rdiff = s->p->diffusivity * s->dt / s->cell_area;
  sp_diffusion_factors (s, s->w);
  if ((rc = sp_parallel (s, s->h - 2, 16, sp_diffuse_rows, s)) < 0)
    return rc;
  sp_diffusion_factors (s, s->h);
  if ((rc = sp_parallel (s, s->w - 2, 64, sp_diffuse_cols, s)) < 0)
    return rc;
  if ((rc = sp_interior_sum (s, &after)) < 0)
    return rc;
  st->diffused += (before - after) * s->cell_area;
  sp_mark (s, TG_SP_PHASE_DIFFUSION);
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
  free (s->pos);
  free (s->srec);
  free (s->slake);
  free (s->hs);
  free (s->supl);
  free (s->pit);
  free (s->lake);
  free (s->lk_beg);
  free (s->lk_len);
  free (s->dmask);
  free (s->rdir);
  free (s->cp);
  free (s->den);
  free (s->rowsum);
  free (s->edge);
  free (s->tsz);
  free (s->rgroup);
  free (s->gbeg);
  free (s->gord);
  free (s->gfirst);
  free (s->gsum);
  free (s->grc);
}

int
tg__sp_run (const TgSpOpts *o, const TgSpParams *p, int w, int h, double cell_m, double *z,
            const float *uplift, const TgSpOut *out)
{
  Sp s = { 0 };
  TgSpStats st = { 0 };
  int steps = tg__sp_steps (p), rc = 0, len = w > h ? w : h;
  size_t gmax;
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
  s.pos = malloc (sizeof (int32_t) * s.n);
  s.srec = malloc (sizeof (int32_t) * s.n);
  s.slake = malloc (sizeof (int32_t) * s.n);
  s.hs = malloc (sizeof (double) * s.n);
  s.supl = uplift ? malloc (sizeof (float) * s.n) : NULL;
  s.pit = malloc (sizeof (int32_t) * s.n);
  s.lake = malloc (sizeof (int32_t) * s.n);
  s.lk_beg = malloc (sizeof (int32_t) * s.n);
  s.lk_len = malloc (sizeof (int32_t) * s.n);
  s.dmask = malloc (s.n);
  s.rdir = malloc (s.n);
  s.sdiag = s.rdir; /* (RDIR is done with once the basins are labelled) */
  for (int q = 0; q < 8; q++)
    s.off[q] = sp_dy[q] * (ptrdiff_t) w + sp_dx[q];
  s.cp = malloc (sizeof (double) * (size_t) (len + 1));
  s.den = malloc (sizeof (double) * (size_t) (len + 1));
  s.rowsum = malloc (sizeof (double) * (size_t) (h + 1));
  /* The roots in the stack's order: the top row, the left and right
   * samples of the rows between, the bottom row. */
  s.edge = malloc (sizeof (int32_t) * (2 * (size_t) w + 2 * (size_t) h));
  if (s.edge)
    {
      for (int x = 0; x < w; x++)
        s.edge[s.nedge++] = x;
      for (int y = 1; y < h - 1; y++)
        {
          s.edge[s.nedge++] = y * w;
          if (w > 1)
            s.edge[s.nedge++] = y * w + w - 1;
        }
      if (h > 1)
        for (int x = 0; x < w; x++)
          s.edge[s.nedge++] = (h - 1) * w + x;
    }
  gmax = s.n / SP_GROUP_SAMPLES + 1;
  gmax = gmax < (size_t) s.nedge ? gmax : (size_t) s.nedge;
  s.gmax = (int32_t) gmax;
  s.tsz = malloc (sizeof (int32_t) * (2 * (size_t) w + 2 * (size_t) h));
  s.rgroup = malloc (sizeof (int32_t) * (2 * (size_t) w + 2 * (size_t) h));
  s.gbeg = malloc (sizeof (size_t) * (gmax + 1));
  s.gord = malloc (sizeof (int32_t) * (gmax + 1));
  s.gfirst = malloc (sizeof (int32_t) * (gmax + 1));
  s.gsum = malloc (sizeof (TgSpStats) * (gmax + 1));
  s.grc = malloc (sizeof (int) * (gmax + 1));
  if (!own || !s.fill || !s.area || !s.qs || !s.rec || !s.order || !s.pos || !s.srec || !s.slake
      || !s.hs || (uplift && !s.supl) || !s.pit || !s.lake || !s.lk_beg
      || !s.lk_len || !s.dmask || !s.rdir || !s.cp || !s.den || !s.rowsum || !s.edge || !s.tsz || !s.rgroup || !s.gbeg
      || !s.gord || !s.gfirst || !s.gsum || !s.grc)
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
      else
        rc = sp_route (&s);
      if (rc < 0)
        break;
      if ((rc = sp_fluvial (&s, &st)) < 0)
        break;
      if ((rc = sp_diffuse (&s, &st)) < 0)
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
  if (rc == 0 && out && out->area && st.steps > 0)
    for (size_t k = 0; k < s.n; k++)
      out->area[s.order[k]] = s.area[k]; /* (in the stack's order) */
  st.basins_max = s.basins_max;
  if (out && out->stats)
    *out->stats = st;
  sp_clear (&s);
  return rc;
}
