/* The droplet simulation of erosion.hydraulic, and its tiled scheme.
 *
 * The result is defined by a world-anchored decomposition.  Droplets run
 * in rounds; each round cuts the world into square lattice tiles of side
 * S = 2 * margin + 1, where the margin is more than a droplet can reach
 * from its start (its lifetime plus the brush), shifted by an offset
 * hashed from the round.  The tiles are coloured like a 2x2 checkerboard
 * and each colour is a phase: tiles of one colour have disjoint reaches,
 * so they run in parallel, and inside a tile the droplets run in index
 * order.  A tile's droplets are drawn from the tile itself: how many from
 * an exact share of the round's rain by start area, where from a hash of
 * (seed, round, tile, index).  So one phase changes a cell only through
 * the one tile whose reach holds it, from the state within that reach.
 *
 * That is what makes tiled builds exact.  One phase is one step: the job
 * of build tile J reads the state before the phase over J grown by the
 * reaches of the phase's tiles that touch J (from its neighbours' blobs),
 * runs those tiles (a neighbour runs the ones they share too) and keeps
 * the new state over J.  The whole-world run is the same phases over one
 * window, with the same float operations on the same world coordinates;
 * it runs a tile as soon as the earlier tiles whose reaches meet its own
 * are done, without a barrier between phases (see Sched), which gives
 * the phases' bytes.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/error.h>
#include <tgraph/hash.h>

#include "erosion_hydraulic.h"
#include "erosion_util.h"
#include "pool.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define HYD_HAVE_X86 1
#endif

#define BRUSH_MAX TG__HYDRAULIC_BRUSH_MAX
#define BRUSH_CELLS ((2 * BRUSH_MAX + 1) * (2 * BRUSH_MAX + 1))
/* The fewest droplets side by side that the vector steps pay for
 * (run_lanes_avx512). */
#ifndef LANES_LEAST
#define LANES_LEAST 4
#endif

/* The brush as row spans: row Y (Y = -r..r) covers dx in [x0, x0 + len)
 * and its weights are w[off .. off + len), so applying it is one short
 * contiguous loop per row that the compiler vectorises. */
typedef struct
{
  int n;
  int r;                  /* reach in cells on each side */
  int x0[2 * BRUSH_MAX + 1], len[2 * BRUSH_MAX + 1], off[2 * BRUSH_MAX + 1];
  float w[BRUSH_CELLS];
  /* The same weights with 16 zeros before and after each row: row Y at
   * wp[poff[Y]], for the vector code, which reads whole cache lines. */
  int poff[2 * BRUSH_MAX + 1];
  float wp[BRUSH_CELLS + 32 * (2 * BRUSH_MAX + 1)];
  double sum;             /* the float weights' sum: what a unit amount applies */
  float centre;           /* weight of the centre cell */
} Brush;

static int
brush_reach (float radius)
{
  int r = (int) ceilf (radius) - 1;

  return r > BRUSH_MAX ? BRUSH_MAX : (r < 0 ? 0 : r);
}

static void
brush_init (Brush *b, float radius)
{
  int r = brush_reach (radius);
  double sum = 0.0;

  b->n = 0;
  b->r = r;
  for (int y = -r; y <= r; y++)
    {
      b->x0[y + r] = 0;
      b->len[y + r] = 0;
      b->off[y + r] = b->n;
      for (int x = -r; x <= r; x++)
        {
          double d = sqrt ((double) (x * x + y * y));
          if (d < radius)
            {
              if (b->len[y + r] == 0)
                b->x0[y + r] = x;
              b->len[y + r]++;
              b->w[b->n++] = (float) (radius - d);
              sum += radius - d;
            }
        }
    }
  b->sum = 0.0;
  for (int k = 0; k < b->n; k++)
    {
      b->w[k] = (float) (b->w[k] / sum);
      b->sum += b->w[k];
    }
  b->centre = b->w[b->off[r] - b->x0[r]];
  for (int y = 0, at = 0; y <= 2 * r; y++)
    {
      memset (b->wp + at, 0, sizeof (float) * 16);
      b->poff[y] = at + 16;
      memcpy (b->wp + at + 16, b->w + b->off[y], sizeof (float) * (size_t) b->len[y]);
      memset (b->wp + at + 16 + b->len[y], 0, sizeof (float) * 16);
      at += 32 + b->len[y];
    }
}

/* --- the lattice ---------------------------------------------------------- */

/* What every phase of a run shares. */
typedef struct
{
  const TgHydraulicSetup *s;
  Brush *brush, *dep;  /* erosion, deposition */
  /* With a channel map: the erosion brushes by level (level[0] is BRUSH)
   * and the factors below which each applies (erosion_hydraulic_flow.c). */
  Brush *level[TG__HYDRAULIC_LEVELS], *dlevel[TG__HYDRAULIC_LEVELS];
  float thr[TG__HYDRAULIC_LEVELS];
  int w, h;            /* the world, cells */
  int margin, S;       /* reach of a tile beyond its side; the side */
  int ntx, nty;        /* lattice tiles that cover the world at any offset */
  long long per_round;
  int phases;
  TgHydraulicIsa isa;  /* GENERIC or AVX512: what runs the droplets */
  int lanes;           /* droplets a worker moves side by side, at most */
  bool vector;         /* the CPU runs run_lanes_avx512 */
} Plan;

/* A lattice tile of a phase, with its droplets. */
typedef struct
{
  int x0, x1, y0, y1;  /* where its droplets start: [x0, x1) x [y0, y1) */
  long long count;
  uint32_t seed;
  bool owned;
} LatTile;

/* Cells a droplet moves a step (at least one). */
static inline float
step_cells (const TgHydraulicSetup *s)
{
  return s->step > 1.0f ? s->step : 1.0f;
}

/* The deposit brush for an erosion brush of radius BRUSH: half its width
 * (a setup may say), never less than 1.5 steps (the 3 x 3 cells around
 * the droplet at one cell a step) or DEPOSIT_MIN, nor wider than the
 * erosion's.  Brushes laid a step apart (their centres a cell more or
 * less, rounded) cover the path evenly only when wider than the step: a
 * brush of one step left a row of mounds with pits between (steep
 * terrain at 2 m cells, 4 m steps: pits 0.30 % of the cells; 1.5 steps:
 * 0.11 %).  The node sets DEPOSIT_MIN to 6 m, the 1.5 cells of a 4 m
 * build: at 2 m cells half the 8 m brush is 4 m, and deposits that
 * narrow heaped the valley floors into mounds with pits between them
 * (alpine 2049: pits 0.24 % of the cells; 0.071 % at 6 m). */
static float
deposit_radius_for (const TgHydraulicSetup *s, float brush)
{
  float r = s->deposit_radius > 0.0f ? s->deposit_radius : 0.5f * brush;
  float lo = 1.5f * step_cells (s);

  lo = lo < s->deposit_min ? s->deposit_min : lo;
  r = r > brush ? brush : r;
  return r < lo ? lo : r;
}

static float
deposit_radius (const TgHydraulicSetup *s)
{
  return deposit_radius_for (s, s->brush_radius);
}

/* The reach of the margin: a droplet moves at most STEP cells a step
 * (a unit direction times the step, rounded), and its brushes and its
 * bilinear footprint reach r + 2 more. */
static int
margin_of (const TgHydraulicSetup *s)
{
  int r = brush_reach (s->brush_radius > s->face_radius ? s->brush_radius : s->face_radius);
  int rd = brush_reach (deposit_radius (s));
  int rc = s->discharge_area > 0.0f ? (int) ceilf (s->channel_pull) + 1 : 0;
  /* A step's float rounding adds far less than a cell over a lifetime. */
  int path = s->step > 1.0f ? (int) ceil ((double) s->max_steps * s->step) + 1 : s->max_steps;

  r = r > rd ? r : rd;
  return path + (r > rc ? r : rc) + 3;
}

int
tg__hydraulic_phases (const TgHydraulicSetup *s, int w, int h)
{
  int rounds = s->rounds > 0 ? s->rounds : 1;
  long long per_round;

  if (w < 2 || h < 2 || s->droplets <= 0 || s->max_steps <= 0)
    return 0;
  per_round = (s->droplets + rounds - 1) / rounds;
  /* Rounds past the last droplet are empty. */
  return 4 * (int) ((s->droplets + per_round - 1) / per_round);
}

int
tg__hydraulic_halo (const TgHydraulicSetup *s)
{
  /* A tile whose reach touches J starts up to S + margin before it and
   * reaches margin further (see phase_list). */
  return 4 * margin_of (s) + 1;
}

/* The erosion brushes of the channel levels, when the face brush is wider
 * than the plain one. */
static int
channel_brushes (Plan *pl)
{
  float radius[TG__HYDRAULIC_LEVELS];

  tg__hydraulic_channel_levels (pl->s, radius, pl->thr);
  pl->level[0] = pl->brush;
  pl->dlevel[0] = pl->dep;
  for (int k = 1; k < TG__HYDRAULIC_LEVELS; k++)
    {
      if (radius[k] == pl->s->brush_radius)
        {
          pl->level[k] = pl->brush;
          pl->dlevel[k] = pl->dep;
          continue;
        }
      if (!(pl->level[k] = malloc (sizeof (Brush))) || !(pl->dlevel[k] = malloc (sizeof (Brush))))
        return TG_ENOMEM;
      brush_init (pl->level[k], radius[k]);
      brush_init (pl->dlevel[k], deposit_radius_for (pl->s, radius[k]));
    }
  return 0;
}

static int
plan_init (Plan *pl, const TgHydraulicSetup *s, int w, int h)
{
  int rounds = s->rounds > 0 ? s->rounds : 1;
  int rc;

  memset (pl, 0, sizeof *pl);
  pl->s = s;
  pl->w = w;
  pl->h = h;
  pl->phases = tg__hydraulic_phases (s, w, h);
  if (pl->phases == 0)
    return 0;
  pl->brush = malloc (sizeof (Brush));
  pl->dep = malloc (sizeof (Brush));
  if (!pl->brush || !pl->dep)
    return TG_ENOMEM;
  brush_init (pl->brush, s->brush_radius);
  brush_init (pl->dep, deposit_radius (s));
  if ((rc = channel_brushes (pl)) < 0)
    return rc;
  /* Tiles of one colour are a tile apart, so a side of 2 * margin + 1
   * keeps their reaches disjoint. */
  pl->margin = margin_of (s);
  pl->S = 2 * pl->margin + 1;
  pl->ntx = (w + pl->S - 1) / pl->S + 1;
  pl->nty = (h + pl->S - 1) / pl->S + 1;
  pl->per_round = (s->droplets + rounds - 1) / rounds;
  pl->isa = s->isa;
  if (pl->isa == TG__HYDRAULIC_ISA_BEST)
    pl->isa = tg__erosion_isa ("TG_HYDRAULIC_ISA") == TG__EROSION_ISA_AVX512 ? TG__HYDRAULIC_ISA_AVX512
                                                                             : TG__HYDRAULIC_ISA_GENERIC;
  if (!tg__hydraulic_isa_supported (pl->isa))
    pl->isa = TG__HYDRAULIC_ISA_GENERIC;
  pl->lanes = s->lanes > 0 ? s->lanes : TG__HYDRAULIC_LANES_MAX;
  pl->lanes = pl->lanes < TG__HYDRAULIC_LANES_MAX ? pl->lanes : TG__HYDRAULIC_LANES_MAX;
#ifdef HYD_HAVE_X86
  pl->vector = pl->isa == TG__HYDRAULIC_ISA_AVX512 && pl->lanes > 1
               && __builtin_cpu_supports ("avx512vl") && __builtin_cpu_supports ("avx512dq");
#endif
  return 0;
}

bool
tg__hydraulic_isa_supported (TgHydraulicIsa isa)
{
  switch (isa)
    {
    case TG__HYDRAULIC_ISA_BEST:
    case TG__HYDRAULIC_ISA_GENERIC:
      return true;
#ifdef HYD_HAVE_X86
    case TG__HYDRAULIC_ISA_AVX512:
      return __builtin_cpu_supports ("avx512f");
#endif
    default:
      return false;
    }
}

static void
plan_clear (Plan *pl)
{
  for (int k = 1; k < TG__HYDRAULIC_LEVELS; k++)
    if (pl->level[k] != pl->brush)
      {
        free (pl->level[k]);
        free (pl->dlevel[k]);
      }
  free (pl->brush);
  free (pl->dep);
  pl->brush = NULL;
  pl->dep = NULL;
}

static inline int
clampi (int v, int lo, int hi)
{
  return v < lo ? lo : (v > hi ? hi : v);
}

static inline int
floor_div (int a, int b)
{
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* floor (N * C / A) without overflow, for 0 <= C <= A. */
static long long
share (long long n, long long c, long long a)
{
  return (n / a) * c + (n % a) * c / a;
}

/* The tiles of phase PHASE (of PL) whose reach meets OUT and that have
 * droplets, in row-major order, as a malloc'ed *LIST of *N; OWNED marks
 * those whose centre (clamped to the world) lies in OWN.  NEED, when not
 * NULL, gets the bounding box of OUT and of the listed tiles' reaches. */
static int
phase_list (const Plan *pl, int phase, const TgHydraulicRect *out, const TgHydraulicRect *own,
            LatTile **list, int *n, TgHydraulicRect *need)
{
  const TgHydraulicSetup *s = pl->s;
  int round = phase / 4, colour = phase % 4, S = pl->S, m = pl->margin, w = pl->w, h = pl->h;
  int ox = (int) (tg_hash2 (s->seed ^ 0x7113e5u, round, 1) % (uint32_t) S);
  int oy = (int) (tg_hash2 (s->seed ^ 0x7113e5u, round, 2) % (uint32_t) S);
  long long first = (long long) round * pl->per_round;
  long long rain = s->droplets - first < pl->per_round ? s->droplets - first : pl->per_round;
  long long area = (long long) (w - 1) * (h - 1);
  int tx0, tx1, ty0, ty1, nx0 = out->x0, nx1 = out->x0 + out->w, ny0 = out->y0,
                          ny1 = out->y0 + out->h;
  LatTile *l;
  int k = 0;

  /* Tile TX covers [TX * S - ox, (TX + 1) * S - ox); its reach is that
   * grown by the margin.  The first and last tiles whose reach meets OUT: */
  tx0 = clampi (floor_div (out->x0 + ox - m, S), 0, pl->ntx - 1);
  tx1 = clampi (floor_div (out->x0 + out->w + ox + m - 1, S), 0, pl->ntx - 1);
  ty0 = clampi (floor_div (out->y0 + oy - m, S), 0, pl->nty - 1);
  ty1 = clampi (floor_div (out->y0 + out->h + oy + m - 1, S), 0, pl->nty - 1);
  tx0 += (tx0 ^ colour) & 1;
  ty0 += (ty0 ^ (colour >> 1)) & 1;

  *n = 0;
  *list = NULL;
  if (tx0 > tx1 || ty0 > ty1 || rain <= 0)
    goto done;
  l = malloc (sizeof (LatTile) * (size_t) ((tx1 - tx0) / 2 + 1) * (size_t) ((ty1 - ty0) / 2 + 1));
  if (!l)
    return TG_ENOMEM;
  for (int ty = ty0; ty <= ty1; ty += 2)
    for (int tx = tx0; tx <= tx1; tx += 2)
      {
        LatTile *t = &l[k];
        int cx = clampi (tx * S - ox + m, 0, w - 1), cy = clampi (ty * S - oy + m, 0, h - 1);
        long long c0, c1;
        /* Droplets start in [0, w - 1) x [0, h - 1); the round's rain is
         * shared by start area, tiles in row-major order, so the counts
         * add up to the rain exactly and each needs only its own corner. */
        t->x0 = clampi (tx * S - ox, 0, w - 1);
        t->x1 = clampi ((tx + 1) * S - ox, 0, w - 1);
        t->y0 = clampi (ty * S - oy, 0, h - 1);
        t->y1 = clampi ((ty + 1) * S - oy, 0, h - 1);
        c0 = (long long) t->y0 * (w - 1) + (long long) (t->y1 - t->y0) * t->x0;
        c1 = (long long) t->y0 * (w - 1) + (long long) (t->y1 - t->y0) * t->x1;
        t->count = share (rain, c1, area) - share (rain, c0, area);
        if (t->count <= 0)
          continue;
        t->seed = tg_hash3 (s->seed ^ 0xd3091e7u, round, tx, ty);
        t->owned = cx >= own->x0 && cx < own->x0 + own->w && cy >= own->y0
                   && cy < own->y0 + own->h;
        if (tx * S - ox - m < nx0)
          nx0 = tx * S - ox - m;
        if ((tx + 1) * S - ox + m > nx1)
          nx1 = (tx + 1) * S - ox + m;
        if (ty * S - oy - m < ny0)
          ny0 = ty * S - oy - m;
        if ((ty + 1) * S - oy + m > ny1)
          ny1 = (ty + 1) * S - oy + m;
        k++;
      }
  *list = l;
  *n = k;
done:
  if (need)
    {
      nx0 = nx0 < 0 ? 0 : nx0;
      ny0 = ny0 < 0 ? 0 : ny0;
      nx1 = nx1 > w ? w : nx1;
      ny1 = ny1 > h ? h : ny1;
      *need = (TgHydraulicRect) { nx0, ny0, nx1 - nx0, ny1 - ny0 };
    }
  return 0;
}

/* --- the tiles' schedule ------------------------------------------------ */

/* Which tile a worker (or one of its lanes) takes next, over the tiles
 * of one or more phases.  A tile of phase p may run once the tiles of
 * phase p - 1 whose reaches meet its own are done and all of phases
 * p - 2 and before are: every tile whose reach meets its own and comes
 * before it in phase order has then finished, and none after it has
 * started (those of phase p + 1 whose reaches meet its own wait for it,
 * all of phase p + 2 for all of phase p), so it sees the state that the
 * phases run one after another give it: the same bytes.  Without a
 * barrier per phase the last tiles of a phase run beside the first of
 * the next whose reaches are clear of them. */
typedef struct Sched
{
  pthread_mutex_t lock;
  pthread_cond_t more;     /* a tile became ready, or the last one was taken */
  int phases;
  int *phase;              /* each tile's phase (0 for the first run here) */
  int *rank;               /* its place in its phase, most droplets first */
  int *next0, *next;       /* the tiles of the next phase that wait for tile k:
                            * next[next0[k] .. next0[k + 1]) */
  int *wait;               /* per tile: tiles of the phase before still running */
  int *left;               /* per phase: its tiles not finished */
  const int *at;           /* phase p's tiles: [at[p], at[p + 1]) */
  int done;                /* phases [0, done) have finished */
  int *heap, nheap;        /* the tiles ready to run, by (phase, rank) */
  atomic_int untaken;      /* tiles not handed out yet */
  atomic_int ready;        /* nheap, to look at without the lock */
  atomic_bool stopped;     /* s->cancelled said so: the run is abandoned */
} Sched;

static bool
sched_before (const Sched *sc, int a, int b)
{
  return sc->phase[a] != sc->phase[b] ? sc->phase[a] < sc->phase[b] : sc->rank[a] < sc->rank[b];
}

/* sched_push and sched_pop: with the lock held. */
static void
sched_push (Sched *sc, int k)
{
  int i = sc->nheap++;

  while (i > 0 && sched_before (sc, k, sc->heap[(i - 1) / 2]))
    {
      sc->heap[i] = sc->heap[(i - 1) / 2];
      i = (i - 1) / 2;
    }
  sc->heap[i] = k;
  atomic_store_explicit (&sc->ready, sc->nheap, memory_order_relaxed);
}

static int
sched_pop (Sched *sc)
{
  int top = sc->heap[0], last = sc->heap[--sc->nheap], i = 0;

  for (;;)
    {
      int c = 2 * i + 1;
      if (c >= sc->nheap)
        break;
      if (c + 1 < sc->nheap && sched_before (sc, sc->heap[c + 1], sc->heap[c]))
        c++;
      if (!sched_before (sc, sc->heap[c], last))
        break;
      sc->heap[i] = sc->heap[c];
      i = c;
    }
  if (sc->nheap > 0)
    sc->heap[i] = last;
  atomic_store_explicit (&sc->ready, sc->nheap, memory_order_relaxed);
  return top;
}

/* Phase P's tiles may start once their own waits are over: phases
 * before P - 1 have all finished. */
static bool
sched_open (const Sched *sc, int p)
{
  return sc->done >= p - 1;
}

/* Whether the reaches (start areas grown by M) of tiles A and B meet. */
static bool
reaches_meet (const LatTile *a, const LatTile *b, int m)
{
  return a->x0 - m < b->x1 + m && b->x0 - m < a->x1 + m && a->y0 - m < b->y1 + m
         && b->y0 - m < a->y1 + m;
}

/* The first of TILES [LO, HI) (a phase's list: rows of tiles, top to
 * bottom) whose reach (M) reaches below row Y of the world. */
static int
first_below (const LatTile *tiles, int lo, int hi, int y, int m)
{
  while (lo < hi)
    {
      int mid = lo + (hi - lo) / 2;
      if (tiles[mid].y1 + m > y)
        hi = mid;
      else
        lo = mid + 1;
    }
  return lo;
}

/* Calls FN (SC, K, Q) for each tile K of a phase and Q of the next whose
 * reaches meet (only the rows of the next phase's tiles near K's are
 * looked at). */
static void
each_meeting (Sched *sc, const LatTile *tiles, int m, void (*fn) (Sched *, int, int))
{
  for (int p = 0; p + 1 < sc->phases; p++)
    for (int k = sc->at[p]; k < sc->at[p + 1]; k++)
      for (int q = first_below (tiles, sc->at[p + 1], sc->at[p + 2], tiles[k].y0 - m, m);
           q < sc->at[p + 2] && tiles[q].y0 - m < tiles[k].y1 + m; q++)
        if (reaches_meet (&tiles[k], &tiles[q], m))
          fn (sc, k, q);
}

static void
count_meeting (Sched *sc, int k, int q)
{
  sc->next0[k + 1]++;
  sc->wait[q]++;
}

static void
list_meeting (Sched *sc, int k, int q)
{
  /* NEXT0[k] counts up as tile K's list fills (set back after). */
  sc->next[sc->next0[k]++] = q;
}

typedef struct
{
  long long count;
  int k;
} RankKey;

/* Most droplets first, ties in list order. */
static int
cmp_rank (const void *a, const void *b)
{
  const RankKey *x = a, *y = b;

  return x->count != y->count ? (x->count > y->count ? -1 : 1) : (x->k > y->k) - (x->k < y->k);
}

static void
sched_clear (Sched *sc)
{
  pthread_mutex_destroy (&sc->lock);
  pthread_cond_destroy (&sc->more);
  free (sc->phase);
  free (sc->rank);
  free (sc->next0);
  free (sc->next);
  free (sc->wait);
  free (sc->left);
  free (sc->heap);
}

/* Marks the phases that have finished, and opens (pushes the ready
 * tiles of) the phase after the next of each.  With the lock held. */
static void
sched_advance (Sched *sc)
{
  while (sc->done < sc->phases && sc->left[sc->done] == 0)
    {
      int p = ++sc->done + 1;
      if (p < sc->phases)
        for (int q = sc->at[p]; q < sc->at[p + 1]; q++)
          if (sc->wait[q] == 0)
            sched_push (sc, q);
    }
}

/* The schedule of TILES, PHASES phases of them, phase p's at [AT[p],
 * AT[p + 1]), each reaching MARGIN around its start area.  0 or
 * TG_ENOMEM (sched_clear either way). */
static int
sched_init (Sched *sc, const LatTile *tiles, const int *at, int phases, int margin)
{
  int n = at[phases];
  RankKey *key;

  memset (sc, 0, sizeof *sc);
  pthread_mutex_init (&sc->lock, NULL);
  pthread_cond_init (&sc->more, NULL);
  sc->phases = phases;
  sc->at = at;
  atomic_init (&sc->untaken, n);
  atomic_init (&sc->ready, 0);
  atomic_init (&sc->stopped, false);
  sc->phase = malloc (sizeof (int) * ((size_t) n + 1));
  sc->rank = malloc (sizeof (int) * ((size_t) n + 1));
  sc->next0 = calloc ((size_t) n + 1, sizeof (int));
  sc->wait = calloc ((size_t) n + 1, sizeof (int));
  sc->left = malloc (sizeof (int) * ((size_t) phases + 1));
  sc->heap = malloc (sizeof (int) * ((size_t) n + 1));
  if (!sc->phase || !sc->rank || !sc->next0 || !sc->wait || !sc->left || !sc->heap)
    return TG_ENOMEM;
  if (!(key = malloc (sizeof (RankKey) * ((size_t) n + 1))))
    return TG_ENOMEM;
  /* Each phase's tiles ranked, most droplets first, so that a phase's
   * last tiles are short ones. */
  for (int p = 0; p < phases; p++)
    {
      sc->left[p] = at[p + 1] - at[p];
      for (int k = at[p]; k < at[p + 1]; k++)
        {
          key[k] = (RankKey) { tiles[k].count, k };
          sc->phase[k] = p;
        }
      qsort (key + at[p], (size_t) (at[p + 1] - at[p]), sizeof (RankKey), cmp_rank);
      for (int r = 0; r < at[p + 1] - at[p]; r++)
        sc->rank[key[at[p] + r].k] = r;
    }
  free (key);
  /* Who waits for whom: the tiles of consecutive phases whose reaches
   * meet, counted, then listed. */
  each_meeting (sc, tiles, margin, count_meeting);
  for (int k = 0; k < n; k++)
    sc->next0[k + 1] += sc->next0[k];
  if (!(sc->next = malloc (sizeof (int) * ((size_t) sc->next0[n] + 1))))
    return TG_ENOMEM;
  each_meeting (sc, tiles, margin, list_meeting);
  for (int k = n; k > 0; k--)
    sc->next0[k] = sc->next0[k - 1];
  sc->next0[0] = 0;
  for (int k = 0; k < n; k++)
    if (sc->wait[k] == 0 && sched_open (sc, sc->phase[k]))
      sched_push (sc, k);
  /* Phases without tiles have finished already. */
  sched_advance (sc);
  return 0;
}

/* A tile to run, or -1: none is left (or the run was stopped), or, unless
 * BLOCK, none is ready now. */
static int
sched_take (Sched *sc, bool block)
{
  int k = -1;

  if (!block && atomic_load_explicit (&sc->ready, memory_order_relaxed) == 0)
    return -1;
  pthread_mutex_lock (&sc->lock);
  while (block && sc->nheap == 0 && atomic_load (&sc->untaken) > 0 && !atomic_load (&sc->stopped))
    pthread_cond_wait (&sc->more, &sc->lock);
  if (sc->nheap > 0 && !atomic_load (&sc->stopped))
    {
      k = sched_pop (sc);
      if (atomic_fetch_sub (&sc->untaken, 1) == 1)
        pthread_cond_broadcast (&sc->more);
    }
  pthread_mutex_unlock (&sc->lock);
  return k;
}

/* Tile K has finished: the tiles waiting for it may become ready. */
static void
sched_done (Sched *sc, int k)
{
  int before;

  pthread_mutex_lock (&sc->lock);
  before = sc->nheap;
  sc->left[sc->phase[k]]--;
  for (int i = sc->next0[k]; i < sc->next0[k + 1]; i++)
    {
      int q = sc->next[i];
      if (--sc->wait[q] == 0 && sched_open (sc, sc->phase[q]))
        sched_push (sc, q);
    }
  sched_advance (sc);
  if (sc->nheap > before)
    pthread_cond_broadcast (&sc->more);
  pthread_mutex_unlock (&sc->lock);
}

static void
sched_stop (Sched *sc)
{
  pthread_mutex_lock (&sc->lock);
  atomic_store (&sc->stopped, true);
  pthread_cond_broadcast (&sc->more);
  pthread_mutex_unlock (&sc->lock);
}

/* --- droplets ----------------------------------------------------------- */

typedef struct
{
  const Plan *pl;
  float *hm;                /* a window of the world: cell (x, y) at y * stride + x + off */
  const float *chan;        /* the channel map over the same window, or NULL */
  /* With feedback (s->discharge_area > 0): the flow map covers the same
   * window as HM, and DK turns its water into A / discharge_area. */
  float dk, a0;              /* A0 = 1 / DK: the water of discharge_area */
  int stride;
  ptrdiff_t off;
  TgHydraulicRect hr;       /* the window HM covers */
  /* The water is kept over FR only (a tile job keeps its own tile's):
   * cell (x, y) of it at (y - fr.y0) * fr.w + x - fr.x0. */
  float *flow;
  TgHydraulicRect fr;
  /* The tiles of the phases this run covers, their figures, and the
   * schedule that hands them out. */
  const LatTile *tiles;
  TgHydraulicStats *tile_stats;
  Sched *sched;
  /* With feedback, DK and A0 of each of those phases (the water fallen
   * by the end of its round): a worker sets DK and A0 from them for the
   * tile it runs. */
  const float *dk_of, *a0_of;
  const TgHydraulicSetup *s;
  void *ctx;
  /* A step of L cells; its water at NFLOW points SUB apart; the drop
   * over it in metres per metre per height unit; a fall's least slope. */
  float L, sub, slope_scale, fall_slope;
  int nflow;
  /* Droplets a worker moves side by side (run_lanes_avx512; 1: one at a
   * time). */
  int lanes;
} Sim;

/* brush_apply where the brush may reach past the world's edge. */
static double
brush_apply_edge (const Sim *sim, const Brush *b, int cx, int cy, double amount)
{
  int w = sim->pl->w, h = sim->pl->h, stride = sim->stride, r = b->r;
  float *c = sim->hm + (ptrdiff_t) cy * stride + cx + sim->off;
  double sum = b->sum;
  int xlo = -r, xhi = r + 1, ylo = -r, yhi = r + 1;
  float a;

  /* Near the world's edge the cells outside it drop out and the others
   * share their weight. */
  if (cx - r < 0 || cx + r >= w || cy - r < 0 || cy + r >= h)
    {
      xlo = -cx > -r ? -cx : -r;
      xhi = w - cx < r + 1 ? w - cx : r + 1;
      ylo = -cy > -r ? -cy : -r;
      yhi = h - cy < r + 1 ? h - cy : r + 1;
      sum = 0.0;
      for (int y = ylo; y < yhi; y++)
        {
          int i0 = b->x0[y + r] > xlo ? b->x0[y + r] : xlo;
          int i1 = b->x0[y + r] + b->len[y + r] < xhi ? b->x0[y + r] + b->len[y + r] : xhi;
          for (int i = i0; i < i1; i++)
            sum += b->w[b->off[y + r] + i - b->x0[y + r]];
        }
    }
  a = (float) (amount * (b->sum / sum));
  for (int y = ylo; y < yhi; y++)
    {
      int i0 = b->x0[y + r] > xlo ? b->x0[y + r] : xlo;
      int i1 = b->x0[y + r] + b->len[y + r] < xhi ? b->x0[y + r] + b->len[y + r] : xhi;
      float *restrict row = c + (ptrdiff_t) y * stride;
      const float *restrict wr = b->w + b->off[y + r] - b->x0[y + r];
      for (int i = i0; i < i1; i++)
        row[i] -= a * wr[i];
    }
  /* The weights over the cells used sum to SUM / B->SUM of a unit. */
  return (double) a * sum;
}

#ifdef HYD_HAVE_X86
/* The rows of brush_apply a cache line (16 cells) at a time, from the
 * line the row starts in: the first and last line of a row under a mask,
 * so that cells outside the brush are neither read nor written (they may
 * be another thread's), the lines between whole (the masks cost as much
 * as the arithmetic: perf put 7 % of the droplet loop on building them).
 * Each cell is row - a * w in float, a multiply and a subtract rounded
 * apart as in the plain loop (-ffp-contract=off keeps GCC from fusing
 * them): the same bytes. */
__attribute__ ((target ("avx512f"))) static inline void
brush_line_avx512 (float *q, const float *wq, __m512 va, __mmask16 m)
{
  __m512 v = _mm512_maskz_load_ps (m, q);

  _mm512_mask_store_ps (q, m, _mm512_sub_ps (v, _mm512_mul_ps (va, _mm512_loadu_ps (wq))));
}

__attribute__ ((target ("avx512f"))) static inline void
brush_rows_avx512 (float *c, int stride, const Brush *b, float a)
{
  __m512 va = _mm512_set1_ps (a);

  for (int y = 0; y <= 2 * b->r; y++, c += stride)
    {
      float *row = c + b->x0[y];
      int mis = (int) (((uintptr_t) row & 63) / sizeof (float)), n = mis + b->len[y], i;
      float *q = row - mis;
      const float *wq = b->wp + b->poff[y] - mis;
      unsigned head = 0xffffu << mis;

      if (n <= 16)
        {
          brush_line_avx512 (q, wq, va, (__mmask16) (head & ((1u << n) - 1u)));
          continue;
        }
      brush_line_avx512 (q, wq, va, (__mmask16) head);
      for (i = 16; i + 16 < n; i += 16)
        {
          __m512 v = _mm512_load_ps (q + i);
          _mm512_store_ps (q + i, _mm512_sub_ps (v, _mm512_mul_ps (va, _mm512_loadu_ps (wq + i))));
        }
      brush_line_avx512 (q + i, wq + i, va, (__mmask16) (0xffffu >> (16 - (n - i))));
    }
}
#endif

/* Subtracts AMOUNT x weight from the brush cells around (CX, CY) (a
 * negative AMOUNT deposits); returns the sum of the changes applied.
 * ISA is a constant where the droplet loop is compiled for it. */
static inline __attribute__ ((always_inline)) double
brush_apply (const Sim *sim, const Brush *b, int cx, int cy, double amount, TgHydraulicIsa isa)
{
  int stride = sim->stride, r = b->r;
  float *c = sim->hm + (ptrdiff_t) (cy - r) * stride + cx + sim->off;
  float a = (float) amount;

  if (cx - r < 0 || cx + r >= sim->pl->w || cy - r < 0 || cy + r >= sim->pl->h)
    return brush_apply_edge (sim, b, cx, cy, amount);
#ifdef HYD_HAVE_X86
  if (isa == TG__HYDRAULIC_ISA_AVX512)
    {
      brush_rows_avx512 (c, stride, b, a);
      return (double) a * b->sum;
    }
#endif
  for (int y = 0; y <= 2 * r; y++, c += stride)
    {
      float *restrict row = c + b->x0[y];
      const float *restrict wr = b->w + b->off[y];
      for (int i = 0; i < b->len[y]; i++)
        row[i] -= a * wr[i];
    }
  /* The applied total from the weights' sum, once. */
  return (double) a * b->sum;
}

/* Adds WATER to the four cells around (IX + FX, IY + FY) that lie in the
 * flow window (all four, but near a tile job's edge). */
static inline void
flow_add (const Sim *sim, int ix, int iy, float fx, float fy, float water)
{
  const TgHydraulicRect *r = &sim->fr;
  int x = ix - r->x0, y = iy - r->y0;
  float *q = sim->flow + (ptrdiff_t) y * r->w + x;
  float a[4] = { water * (1.0f - fx) * (1.0f - fy), water * fx * (1.0f - fy),
                 water * (1.0f - fx) * fy, water * fx * fy };

  if (x >= 0 && y >= 0 && x + 1 < r->w && y + 1 < r->h)
    {
      q[0] += a[0];
      q[1] += a[1];
      q[r->w] += a[2];
      q[r->w + 1] += a[3];
      return;
    }
  for (int k = 0; k < 4; k++)
    {
      int cx = x + (k & 1), cy = y + (k >> 1);
      if (cx >= 0 && cy >= 0 && cx < r->w && cy < r->h)
        sim->flow[(ptrdiff_t) cy * r->w + cx] += a[k];
    }
}

/* The channel factor at cell (CX, CY), and in *EB and *DB the erosion
 * and deposit brushes of its level. */
static inline float
channel_at (const Sim *sim, int cx, int cy, const Brush **eb, const Brush **db)
{
  const Plan *pl = sim->pl;
  ptrdiff_t at = (ptrdiff_t) cy * sim->stride + cx + sim->off;
  float f = sim->chan ? sim->chan[at] : 1.0f;
  int k = 0;

  if (sim->dk > 0.0f)
    {
      /* The droplets' own drainage: A / discharge_area, to the exponent,
       * times the channel map's factor, within its range. */
      const TgHydraulicSetup *s = pl->s;
      float a = sim->flow[at] * sim->dk;
      a = s->channel_exponent == 1.0f ? a : powf (a, s->channel_exponent);
      f *= a;
      f = f > s->channel_floor ? (f < s->channel_ceil ? f : s->channel_ceil) : s->channel_floor;
    }

  /* The first level K whose next threshold F is not below.  The
   * thresholds fall with the level (or are all 0), so that is how many
   * F is below: counted without a branch, which the level's changes from
   * step to step mispredicted (perf: 2.3 % of alpine's rain on the
   * loop). */
  for (int j = 1; j < TG__HYDRAULIC_LEVELS; j++)
    k += f < pl->thr[j];
  *eb = pl->level[k];
  *db = pl->dlevel[k];
  return f;
}

/* Bends the downhill gradient (*GX, *GY) at cell AT + (FX, FY) towards
 * where the channel map grows: a droplet on a face drifts into the
 * drainage line beside it and merges with the water there.  The pull is
 * the slope times the change of log f over CHANNEL_PULL cells. */
static inline void
channel_pull (const Sim *sim, ptrdiff_t at, float fx, float fy, float *gx, float *gy)
{
  const float *c = sim->chan + at;
  int stride = sim->stride;
  float c00 = c[0], c10 = c[1], c01 = c[stride], c11 = c[stride + 1];
  float cx = (c10 - c00) * (1.0f - fy) + (c11 - c01) * fy;
  float cy = (c01 - c00) * (1.0f - fx) + (c11 - c10) * fx;
  float cc = (c00 * (1.0f - fx) + c10 * fx) * (1.0f - fy) + (c01 * (1.0f - fx) + c11 * fx) * fy;
  float k = sim->pl->s->channel_pull * sqrtf (*gx * *gx + *gy * *gy) / cc;

  *gx -= k * cx;
  *gy -= k * cy;
}

/* The water at (X, Y), nearest cell, the world's edge clamped. */
static inline float
flow_near (const Sim *sim, float x, float y)
{
  int ix = clampi ((int) (x + 0.5f), 0, sim->pl->w - 1);
  int iy = clampi ((int) (y + 0.5f), 0, sim->pl->h - 1);

  return sim->flow[(ptrdiff_t) iy * sim->stride + ix + sim->off];
}

/* Turns the downhill gradient (*GX, *GY) at (X, Y) toward the side of the
 * path whose water, CHANNEL_PULL cells away, is more: by the share of the
 * difference in the sum, up to as much as the slope (45 degrees).  The
 * sides are those of the droplet's direction so far (DX, DY), a unit
 * vector or none: the two reads then do not wait for the height's, which
 * the droplet's loop would otherwise (+45 % of its time on alpine). */
static inline void
capture_turn (const Sim *sim, float x, float y, float dx, float dy, float *gx, float *gy)
{
  float r = sim->pl->s->channel_pull;
  float a = flow_near (sim, x - r * dy, y + r * dx);
  float b = flow_near (sim, x + r * dy, y - r * dx);
  float g = sqrtf (*gx * *gx + *gy * *gy), t = (a - b) / (a + b + sim->a0);

  *gx += g * t * dy;
  *gy -= g * t * dx;
}

/* Asks the cache for the cells a droplet at (X, Y) will read and change:
 * rows Y - 1 .. Y + 2 of the height (its bilinear square and the brush
 * around it), rows Y, Y + 1 of the channel map and of the water.  A
 * droplet walks into rows that are rarely still cached (a lattice tile
 * spans ~200 rows of the world's stride), and each step's loads sit on
 * the droplet's one chain of dependent work; asked for a few steps ahead
 * they arrive in time (bench_erosion's simulation on 2048 x 2048: -11 %
 * CPU on one thread, medians of 5; alpine 2049: -9 % CPU for the whole
 * eval).  Only a hint: no value changes.  Always inlined: GCC finds a
 * call that only prefetches free of effects and drops it. */
static inline __attribute__ ((always_inline)) void
prefetch_at (const Sim *sim, float x, float y)
{
  const TgHydraulicRect *r = &sim->hr, *f = &sim->fr;
  const float *p, *q;
  int px, py, fx, fy;

  if (r->h < 4)
    return;
  px = clampi ((int) x, r->x0, r->x0 + r->w - 1);
  py = clampi ((int) y - 1, r->y0, r->y0 + r->h - 4);
  p = sim->hm + (ptrdiff_t) py * sim->stride + px + sim->off;
  __builtin_prefetch (p);
  __builtin_prefetch (p + sim->stride);
  __builtin_prefetch (p + 2 * sim->stride);
  __builtin_prefetch (p + 3 * sim->stride);
  if (sim->chan)
    {
      const float *c = sim->chan + (p - sim->hm) + sim->stride;
      __builtin_prefetch (c);
      __builtin_prefetch (c + sim->stride);
    }
  if (!sim->flow)
    return;
  fx = clampi ((int) x, f->x0, f->x0 + f->w - 1) - f->x0;
  fy = clampi ((int) y, f->y0, f->y0 + f->h - 1) - f->y0;
  q = sim->flow + (ptrdiff_t) fy * f->w + fx;
  __builtin_prefetch (q, 1);
  if (fy + 1 < f->h)
    __builtin_prefetch (q + f->w, 1);
}

/* The same for the water flow_near reads at (X, Y) (feedback: the flow
 * map covers HM's window). */
static inline __attribute__ ((always_inline)) void
prefetch_flow_near (const Sim *sim, float x, float y)
{
  const TgHydraulicRect *r = &sim->hr;
  int ix = clampi ((int) (x + 0.5f), r->x0, r->x0 + r->w - 1);
  int iy = clampi ((int) (y + 0.5f), r->y0, r->y0 + r->h - 1);

  __builtin_prefetch (sim->flow + (ptrdiff_t) iy * sim->stride + ix + sim->off);
}

/* The height at (X, Y), bilinear in the window. */
static inline float
height_at (const Sim *sim, float x, float y)
{
  int jx = (int) x, jy = (int) y, stride = sim->stride;
  float gx = x - (float) jx, gy = y - (float) jy;
  const float *q = sim->hm + (ptrdiff_t) jy * stride + jx + sim->off;

  return (q[0] * (1.0f - gx) + q[1] * gx) * (1.0f - gy)
         + (q[stride] * (1.0f - gx) + q[stride + 1] * gx) * gy;
}

/* Whether the first cell of a longer step from (X, Y) along (DX, DY),
 * the height HC there, drops more than FALL_SLOPE: the step's mean slope
 * spreads a cliff the droplet starts on over the step, and the brush then
 * digs the cliff's foot out (test_hydraulic_cliffs_stay_bounded).  At one
 * cell a step this is the step's own test. */
static inline bool
falls_first_cell (const Sim *sim, float x, float y, float dx, float dy, float hc,
                  float fall_slope)
{
  const TgHydraulicSetup *s = sim->pl->s;

  return (hc - height_at (sim, x + dx, y + dy)) * (s->height_scale / s->cell_m) > fall_slope;
}

/* Steps ahead at which a droplet asks for its path (2 to 8 measured the
 * same).  The brush's own cells it does not ask for: the brushes of the
 * steps before have brought in all but a row or column of them, and
 * asking for that front (a prefetch per brush row when moving along x)
 * cost more than it saved (alpine 2049's rain, 300 000 droplets on one
 * thread: 9.81 s CPU with it, 9.24 s without, the best of 3). */
#define PREFETCH_STEPS 4.0f
/* The same for the lanes (run_lanes_avx512), measured apart: two steps
 * ahead took 5 % less CPU than four (bench_erosion's 2048 x 2048, one
 * thread, medians of seven and of five interleaved pairs). */
#define LANES_PREFETCH_STEPS 2.0f

/* The water of a step of L cells from (X, Y) along the unit (DX, DY):
 * the flow map holds water per cell of path, so a longer step leaves
 * WATER at N = ceil (L) points L / N apart, L / N of it at each (one
 * point, all of it, at one cell a step); a step's water at one point
 * would dot the map, and the gullies the feedback reads. */
static inline void
flow_step (const Sim *sim, float x, float y, float dx, float dy, float water, int n, float sub)
{
  float wk = water * sub;

  for (int k = 0; k < n; k++)
    {
      float px = x + (float) k * sub * dx, py = y + (float) k * sub * dy;
      int ix = (int) px, iy = (int) py;
      flow_add (sim, ix, iy, px - (float) ix, py - (float) iy, wk);
    }
}

/* A droplet in flight. */
typedef struct
{
  float x, y, dx, dy, v2, water;
  double sed;
  int step;
  bool left;
} Drop;

/* Droplet J of tile T, at its start. */
static inline __attribute__ ((always_inline)) void
drop_start (const Sim *sim, const LatTile *t, long long j, Drop *d)
{
  int32_t lo = (int32_t) (uint32_t) j, hi = (int32_t) (j >> 32);
  float x, y;

  x = (float) t->x0 + tg_hash_unit (tg_hash3 (t->seed, lo, hi, 0x51)) * (float) (t->x1 - t->x0);
  y = (float) t->y0 + tg_hash_unit (tg_hash3 (t->seed, lo, hi, 0x52)) * (float) (t->y1 - t->y0);
  /* x0 + u * (x1 - x0) rounds up to x1 for u close to 1; stay inside the
   * tile, whose reach is what makes the phases exact. */
  if (x >= (float) t->x1)
    x = nextafterf ((float) t->x1, 0.0f);
  if (y >= (float) t->y1)
    y = nextafterf ((float) t->y1, 0.0f);
  *d = (Drop) { .x = x, .y = y, .v2 = 1.0f, .water = 1.0f };
}

/* One step of droplet D (counted in ST, its tile's figures); false when
 * it stops: a flat spot, or off the world's edge. */
static inline __attribute__ ((always_inline)) bool
drop_step (const Sim *sim, Drop *d, TgHydraulicStats *st, TgHydraulicIsa isa)
{
  const TgHydraulicSetup *s = sim->pl->s;
  float *hm = sim->hm;
  int w = sim->pl->w, h = sim->pl->h, stride = sim->stride;
  /* Steps of L cells: the gradient per step, the drop over it in metres
   * per metre, the water at NFLOW points along it. */
  float L = sim->L, slope_scale = sim->slope_scale, fall_slope = sim->fall_slope;
  float x = d->x, y = d->y, dx = d->dx, dy = d->dy;
  int ix = (int) x, iy = (int) y, cx, cy;
  float fx = x - (float) ix, fy = y - (float) iy;
  ptrdiff_t at = (ptrdiff_t) iy * stride + ix + sim->off;
  float *p = hm + at;
  float h00 = p[0], h10 = p[1], h01 = p[stride], h11 = p[stride + 1];
  float gx = ((h10 - h00) * (1.0f - fy) + (h11 - h01) * fy) * L;
  float gy = ((h01 - h00) * (1.0f - fx) + (h11 - h10) * fx) * L;
  float hc = (h00 * (1.0f - fx) + h10 * fx) * (1.0f - fy) + (h01 * (1.0f - fx) + h11 * fx) * fy;
  float len, nx, ny, hn, dh, cap;
  const Brush *eb = sim->pl->brush, *db = sim->pl->dep;

  if (sim->chan && s->channel_pull > 0.0f)
    channel_pull (sim, at, fx, fy, &gx, &gy);
  if (sim->dk > 0.0f && s->channel_pull > 0.0f)
    capture_turn (sim, x, y, dx, dy, &gx, &gy);
  dx = dx * s->inertia - gx * (1.0f - s->inertia);
  dy = dy * s->inertia - gy * (1.0f - s->inertia);
  len = sqrtf (dx * dx + dy * dy);
  if (!(len > 1e-20f))
    return false; /* a perfectly flat spot: the droplet stays */
  dx /= len;
  dy /= len;
  d->dx = dx;
  d->dy = dy;
  if (sim->flow)
    flow_step (sim, x, y, dx, dy, d->water, sim->nflow, sim->sub);
  nx = x + dx * L;
  ny = y + dy * L;
  {
    float ax = nx + PREFETCH_STEPS * L * dx, ay = ny + PREFETCH_STEPS * L * dy;
    prefetch_at (sim, ax, ay);
    if (sim->dk > 0.0f && s->channel_pull > 0.0f)
      {
        /* The side probes of capture_turn: guessed 4 steps ahead,
         * which misses the row where the path bends, and exactly for
         * the next step, which reads them from (NX, NY) across the
         * direction just taken (its loads waited on memory for a
         * fifth of a step's time without this; perf). */
        float r = s->channel_pull;
        prefetch_flow_near (sim, ax - r * dy, ay + r * dx);
        prefetch_flow_near (sim, ax + r * dy, ay - r * dx);
        prefetch_flow_near (sim, nx - r * dy, ny + r * dx);
        prefetch_flow_near (sim, nx + r * dy, ny - r * dx);
      }
  }
  if (!(nx >= 0.0f && nx < (float) (w - 1) && ny >= 0.0f && ny < (float) (h - 1)))
    {
      st->left += d->sed;
      d->sed = 0.0;
      d->left = true;
      return false;
    }
  hn = height_at (sim, nx, ny);
  dh = hn - hc;
  if (-dh * slope_scale > fall_slope
      || (L > 1.0f && falls_first_cell (sim, x, y, dx, dy, hc, fall_slope)))
    {
      /* Over a cliff: the water falls, carving nothing on the way and
       * keeping its speed (the plunge takes what the drop gives).  The
       * brush would otherwise dig the whole drop out of the cliff
       * foot, and the load dropped further on build a tower the next
       * droplets fall from, each deeper: on steps of a few hundred
       * metres the heights ran away to 1e23. */
      d->water *= s->evaporate;
      d->x = nx;
      d->y = ny;
      d->step++;
      return true;
    }
  cx = (int) (x + 0.5f);
  cy = (int) (y + 0.5f);
  {
    float slope = -dh * slope_scale;
    cap = (slope > s->min_slope ? slope : s->min_slope) * sqrtf (d->v2) * d->water * s->capacity;
  }
  if (sim->chan || sim->dk > 0.0f)
    cap *= channel_at (sim, cx, cy, &eb, &db);
  if (dh > 0.0f || d->sed > cap)
    {
      /* Uphill: fill the dip behind up to the new height if the load
       * allows; downhill: drop a share of the excess.  Both through the
       * deposit brush (half the erosion's width): four-cell deposits
       * left bumps with pits between them, and a full-width one
       * fills gullies as fast as they are cut. */
      double sed = d->sed;
      double amount = dh > 0.0f ? ((double) dh < sed ? (double) dh : sed) : (sed - cap) * s->deposit;
      double applied = -brush_apply (sim, db, cx, cy, -amount, isa);
      d->sed = sed - applied;
      st->deposited += applied;
    }
  else
    {
      /* Never dig the brush centre below where the droplet goes. */
      double want = (cap - d->sed) * s->erode, most = (double) -dh / eb->centre;
      double amount = want < most ? want : most;
      double applied = brush_apply (sim, eb, cx, cy, amount, isa);
      d->sed += applied;
      st->eroded += applied;
    }
  d->v2 = d->v2 * s->friction - dh * s->gravity;
  d->v2 = d->v2 > 0.0f ? d->v2 : 0.0f;
  d->water *= s->evaporate;
  d->x = nx;
  d->y = ny;
  d->step++;
  return true;
}

/* The end of droplet D: one that soaks away inside the map lays its load
 * down where it stops, through the brush, so that the hollow it ends in
 * fills instead of staying a pit. */
static inline __attribute__ ((always_inline)) void
drop_finish (const Sim *sim, Drop *d, TgHydraulicStats *st, TgHydraulicIsa isa)
{
  if (d->sed > 0.0 && !d->left)
    {
      double applied = -brush_apply (sim, sim->pl->dep, (int) (d->x + 0.5f), (int) (d->y + 0.5f),
                                     -d->sed, isa);
      d->sed -= applied;
      st->deposited += applied;
    }
  st->carried += d->sed;
  st->steps += d->step;
  st->droplets_run++;
}

static inline __attribute__ ((always_inline)) void
run_droplet (const Sim *sim, const LatTile *t, long long j, TgHydraulicStats *st,
             TgHydraulicIsa isa)
{
  int max_steps = sim->pl->s->max_steps;
  Drop d;

  drop_start (sim, t, j, &d);
  while (d.step < max_steps && drop_step (sim, &d, st, isa))
    ;
  drop_finish (sim, &d, st, isa);
}

/* Droplets between two looks at the cancel token: heavy rain puts
 * millions in one lattice tile, and a droplet takes up to max_steps. */
#define DROPLETS_PER_POLL 16

static bool
sim_stop (Sim *sim)
{
  if (atomic_load_explicit (&sim->sched->stopped, memory_order_relaxed))
    return true;
  if (sim->s->cancelled == NULL || !sim->s->cancelled (sim->ctx))
    return false;
  sched_stop (sim->sched);
  return true;
}

/* SIM as it runs tile Q: the water fallen by the end of its phase's
 * round (feedback). */
static inline void
sim_tile (Sim *sim, int q)
{
  if (sim->dk_of)
    {
      int p = sim->sched->phase[q];
      sim->dk = sim->dk_of[p];
      sim->a0 = sim->a0_of[p];
    }
}

/* The end of tile Q: its figures ST (kept by the worker while it ran)
 * stored, then the schedule may hand its cells on. */
static inline void
tile_done (const Sim *sim, int q, const TgHydraulicStats *st)
{
  sim->tile_stats[q] = *st;
  sched_done (sim->sched, q);
}

/* One droplet at a time, tiles as the schedule hands them out.  Scalar code
 * gains nothing by moving droplets of several tiles in turn (2 to 8
 * measured 1.0x to 1.6x the CPU, with or without branches): a step is
 * ~700 instructions (callgrind, generic brushes) that already run ~4 a
 * cycle, so a second chain finds no idle issue slots.  The vector lanes
 * (run_lanes_avx512) share those instructions out instead. */
static inline __attribute__ ((always_inline)) void
run_tiles_isa (const Sim *shared, TgHydraulicIsa isa)
{
  Sim sim = *shared;
  int q;

  while ((q = sched_take (sim.sched, true)) >= 0)
    {
      const LatTile *t = &sim.tiles[q];
      /* The tile's figures in the worker's own memory while it runs:
       * summed in the shared array, beside other workers' tiles' in the
       * same cache lines, each step took the line from the other core. */
      TgHydraulicStats st = { 0 };
      sim_tile (&sim, q);
      for (long long j = 0; j < t->count; j++)
        {
          if (j % DROPLETS_PER_POLL == 0 && sim_stop (&sim))
            return;
          run_droplet (&sim, t, j, &st, isa);
        }
      tile_done (&sim, q, &st);
    }
}

/* Lane K's next droplet: the next of its tile, or the first of a tile
 * the schedule has ready (its tile done: its figures ST stored,
 * sched_done), waiting for one with BLOCK; false when none is (or the
 * run is cancelled).  ST is the lane's own, as in run_tiles_isa. */
static inline __attribute__ ((always_inline)) bool
lane_next (Sim *sim, Drop *d, int *q, long long *j, TgHydraulicStats *st, bool block)
{
  if (*q < 0 || ++*j >= sim->tiles[*q].count)
    {
      if (*q >= 0)
        tile_done (sim, *q, st);
      if ((*q = sched_take (sim->sched, block)) < 0)
        return false;
      *j = 0;
      memset (st, 0, sizeof *st);
    }
  if (*j % DROPLETS_PER_POLL == 0 && sim_stop (sim))
    {
      *q = -1;
      return false;
    }
  drop_start (sim, &sim->tiles[*q], *j, d);
  return true;
}

#ifdef HYD_HAVE_X86
#define HYD_AVX512_LANES __attribute__ ((target ("avx512f,avx512vl,avx512dq")))
/* Droplets a vector of lanes holds: sixteen floats in a zmm register. */
#define GROUP_LANES TG__HYDRAULIC_LANES_MAX
_Static_assert (GROUP_LANES == 16, "the lanes are the sixteen floats of a zmm vector");

/* Sixteen droplets, a field per array: a vector of lanes, with each
 * lane's tile Q and droplet J. */
typedef struct
{
  _Alignas (64) double sed[GROUP_LANES];
  _Alignas (64) float x[GROUP_LANES];
  _Alignas (64) float y[GROUP_LANES];
  _Alignas (64) float dx[GROUP_LANES];
  _Alignas (64) float dy[GROUP_LANES];
  _Alignas (64) float v2[GROUP_LANES];
  _Alignas (64) float water[GROUP_LANES];
  _Alignas (64) int step[GROUP_LANES];
  bool left[GROUP_LANES];
  int q[GROUP_LANES];
  long long j[GROUP_LANES];
  TgHydraulicStats st[GROUP_LANES];  /* the figures of each lane's tile so far */
} Lanes;

static inline void
lanes_put (Lanes *l, int k, const Drop *d)
{
  l->x[k] = d->x;
  l->y[k] = d->y;
  l->dx[k] = d->dx;
  l->dy[k] = d->dy;
  l->v2[k] = d->v2;
  l->water[k] = d->water;
  l->sed[k] = d->sed;
  l->step[k] = d->step;
  l->left[k] = d->left;
}

static inline void
lanes_get (const Lanes *l, int k, Drop *d)
{
  *d = (Drop) { .x = l->x[k], .y = l->y[k], .dx = l->dx[k], .dy = l->dy[k], .v2 = l->v2[k],
                .water = l->water[k], .sed = l->sed[k], .step = l->step[k], .left = l->left[k] };
}

/* The cell index iy * stride + ix + off of the lanes in 32 bits: a cell
 * of the window is below 2^31 (lanes_for), and the sums wrap to it. */
HYD_AVX512_LANES static inline __m512i
lanes_at (const Sim *sim, __m512i ix, __m512i iy)
{
  __m512i r = _mm512_mullo_epi32 (iy, _mm512_set1_epi32 (sim->stride));

  return _mm512_add_epi32 (_mm512_add_epi32 (r, ix), _mm512_set1_epi32 ((int32_t) sim->off));
}

/* height_at for the lanes in M (the others read 0): the same float
 * operations in the same order. */
HYD_AVX512_LANES static inline __m512
lanes_height (const Sim *sim, __mmask16 m, __m512 x, __m512 y)
{
  const float *hm = sim->hm;
  int stride = sim->stride;
  __m512i jx = _mm512_cvttps_epi32 (x), jy = _mm512_cvttps_epi32 (y);
  __m512 gx = _mm512_sub_ps (x, _mm512_cvtepi32_ps (jx)), gy = _mm512_sub_ps (y, _mm512_cvtepi32_ps (jy));
  __m512i at = lanes_at (sim, jx, jy);
  __m512 z = _mm512_setzero_ps (), one = _mm512_set1_ps (1.0f);
  __m512 q0 = _mm512_mask_i32gather_ps (z, m, at, hm, 4);
  __m512 q1 = _mm512_mask_i32gather_ps (z, m, at, hm + 1, 4);
  __m512 q2 = _mm512_mask_i32gather_ps (z, m, at, hm + stride, 4);
  __m512 q3 = _mm512_mask_i32gather_ps (z, m, at, hm + stride + 1, 4);
  __m512 ugx = _mm512_sub_ps (one, gx);

  /* (q[0] * (1 - gx) + q[1] * gx) * (1 - gy) + (q[stride] * (1 - gx) + q[stride + 1] * gx) * gy */
  return _mm512_add_ps (
    _mm512_mul_ps (_mm512_add_ps (_mm512_mul_ps (q0, ugx), _mm512_mul_ps (q1, gx)),
                   _mm512_sub_ps (one, gy)),
    _mm512_mul_ps (_mm512_add_ps (_mm512_mul_ps (q2, ugx), _mm512_mul_ps (q3, gx)), gy));
}

/* brush_apply for a lane: rows of up to eight cells as one vector
 * operation each, under a mask (the cells beside the row are neither read
 * nor written: they may be another tile's), a multiply and a subtract
 * rounded apart as in the plain loop, so the same bytes; wider brushes
 * and the world's edge through brush_apply. */
HYD_AVX512_LANES static inline double
lanes_brush (const Sim *sim, const Brush *b, int cx, int cy, double amount)
{
  int stride = sim->stride, r = b->r;
  float a = (float) amount;
  float *c = sim->hm + (ptrdiff_t) (cy - r) * stride + cx + sim->off;

  if (r > 3 || cx - r < 0 || cx + r >= sim->pl->w || cy - r < 0 || cy + r >= sim->pl->h)
    return brush_apply (sim, b, cx, cy, amount, TG__HYDRAULIC_ISA_GENERIC);
  /* Two widths: rows of three in ymm took 1.13x the CPU of xmm (five
   * interleaved pairs, bench_erosion's run). */
  if (r <= 1)
    {
      __m128 va = _mm_set1_ps (a);
      for (int y = 0; y <= 2 * r; y++, c += stride)
        {
          float *row = c + b->x0[y];
          __mmask8 m = (__mmask8) ((1u << b->len[y]) - 1u);
          __m128 v = _mm_maskz_loadu_ps (m, row);
          _mm_mask_storeu_ps (row, m, _mm_sub_ps (v, _mm_mul_ps (va, _mm_maskz_loadu_ps (m, b->w + b->off[y]))));
        }
    }
  else
    {
      __m256 va = _mm256_set1_ps (a);
      for (int y = 0; y <= 2 * r; y++, c += stride)
        {
          float *row = c + b->x0[y];
          __mmask8 m = (__mmask8) ((1u << b->len[y]) - 1u);
          __m256 v = _mm256_maskz_loadu_ps (m, row);
          _mm256_mask_storeu_ps (row, m, _mm256_sub_ps (v, _mm256_mul_ps (va, _mm256_maskz_loadu_ps (m, b->w + b->off[y]))));
        }
    }
  return (double) a * b->sum;
}

/* The lanes and a step's figures between its two parts: FIRST, the
 * vector step up to the amounts, with the water and the new state but
 * the load; SECOND, lane by lane, the brushes and the load, then the
 * droplets that stopped finish and their lanes take the next. */
typedef struct
{
  Lanes ln;
  _Alignas (64) double am[GROUP_LANES];
  _Alignas (64) int cx[GROUP_LANES];
  _Alignas (64) int cy[GROUP_LANES];
  /* The water of the lanes in PEND's last step, not yet added (lanes_flow):
   * the four cells' shares, the first cell's index in the flow map. */
  _Alignas (64) float pa[4][GROUP_LANES];
  _Alignas (64) int pat[GROUP_LANES];
  unsigned live, go, in, lay, dep, dead, pend;
} Group;

/* Adds the water G's lanes in LANES still owe from their last step. */
HYD_AVX512_LANES static inline void
lanes_flow_flush (const Sim *sim, Group *g, unsigned lanes)
{
  int fw = sim->fr.w;

  for (unsigned bits = g->pend & lanes; bits; bits &= bits - 1)
    {
      int k = __builtin_ctz (bits);
      float *q = sim->flow + g->pat[k];
      q[0] += g->pa[0][k];
      q[1] += g->pa[1][k];
      q[fw] += g->pa[2][k];
      q[fw + 1] += g->pa[3][k];
    }
  g->pend &= ~lanes;
}

/* flow_step for the lanes in M: the points, weights and cells as
 * vectors (the same float operations), the four cells' sums lane by
 * lane, through flow_add itself where a point's square leaves the flow
 * window.  At one point a step a lane's four sums wait in G for its
 * next step (or the end of its tile: lanes_flow_flush): added at once,
 * the step took 1.05x the CPU (median of seven interleaved pairs,
 * bench_erosion's 2048 x 2048).  No droplet reads the water here (lanes_for),
 * each lane's sums keep their order, and no other lane's droplets reach
 * its cells, so the map's bytes are the same. */
HYD_AVX512_LANES static inline void
lanes_flow (const Sim *sim, Group *g, __mmask16 m, __m512 x, __m512 y, __m512 dx, __m512 dy,
            __m512 water)
{
  const TgHydraulicRect *r = &sim->fr;
  const __m512 one = _mm512_set1_ps (1.0f);
  __m512 wk = _mm512_mul_ps (water, _mm512_set1_ps (sim->sub));
  _Alignas (64) float fxa[GROUP_LANES], fya[GROUP_LANES], wka[GROUP_LANES];
  _Alignas (64) int ixa[GROUP_LANES], iya[GROUP_LANES];

  lanes_flow_flush (sim, g, ~0u);
  for (int n = 0; n < sim->nflow; n++)
    {
      __m512 ks = _mm512_set1_ps ((float) n * sim->sub);
      __m512 px = _mm512_add_ps (x, _mm512_mul_ps (ks, dx)), py = _mm512_add_ps (y, _mm512_mul_ps (ks, dy));
      __m512i ix = _mm512_cvttps_epi32 (px), iy = _mm512_cvttps_epi32 (py);
      __m512 fx = _mm512_sub_ps (px, _mm512_cvtepi32_ps (ix)), fy = _mm512_sub_ps (py, _mm512_cvtepi32_ps (iy));
      __m512 wx0 = _mm512_mul_ps (wk, _mm512_sub_ps (one, fx)), wx1 = _mm512_mul_ps (wk, fx);
      __m512 uy = _mm512_sub_ps (one, fy);
      __m512i xr = _mm512_sub_epi32 (ix, _mm512_set1_epi32 (r->x0));
      __m512i yr = _mm512_sub_epi32 (iy, _mm512_set1_epi32 (r->y0));
      __mmask16 inside = m & _mm512_cmpge_epi32_mask (xr, _mm512_setzero_si512 ())
                         & _mm512_cmpge_epi32_mask (yr, _mm512_setzero_si512 ())
                         & _mm512_cmplt_epi32_mask (xr, _mm512_set1_epi32 (r->w - 1))
                         & _mm512_cmplt_epi32_mask (yr, _mm512_set1_epi32 (r->h - 1));
      _mm512_store_ps (g->pa[0], _mm512_mul_ps (wx0, uy));
      _mm512_store_ps (g->pa[1], _mm512_mul_ps (wx1, uy));
      _mm512_store_ps (g->pa[2], _mm512_mul_ps (wx0, fy));
      _mm512_store_ps (g->pa[3], _mm512_mul_ps (wx1, fy));
      _mm512_store_si512 (g->pat, _mm512_add_epi32 (_mm512_mullo_epi32 (yr, _mm512_set1_epi32 (r->w)), xr));
      g->pend = inside;
      /* Points after the first (steps of more than one cell) go after
       * it, at once. */
      if (sim->nflow > 1)
        lanes_flow_flush (sim, g, ~0u);
      if (m & ~inside)
        {
          _mm512_store_si512 (ixa, ix);
          _mm512_store_si512 (iya, iy);
          _mm512_store_ps (fxa, fx);
          _mm512_store_ps (fya, fy);
          _mm512_store_ps (wka, wk);
          for (unsigned bits = m & ~inside; bits; bits &= bits - 1)
            {
              int k = __builtin_ctz (bits);
              flow_add (sim, ixa[k], iya[k], fxa[k], fya[k], wka[k]);
            }
        }
    }
}

HYD_AVX512_LANES static inline __m512i
lanes_clamp (__m512i v, int lo, int hi)
{
  return _mm512_min_epi32 (_mm512_max_epi32 (v, _mm512_set1_epi32 (lo)), _mm512_set1_epi32 (hi));
}

/* drop_step's amounts for eight of the lanes, in double: the deposit
 * (negative) where DEP, else the erosion. */
HYD_AVX512_LANES static inline __m512d
lanes_amount (const TgHydraulicSetup *s, const Brush *eb, __m512d sed, __m256 cap, __m256 dh,
              __mmask8 dep)
{
  __m512d capd = _mm512_cvtps_pd (cap), dhd = _mm512_cvtps_pd (dh);
  __m512d fill = _mm512_mask_blend_pd (_mm512_cmp_pd_mask (dhd, sed, _CMP_LT_OQ), sed, dhd);
  __m512d drop = _mm512_mul_pd (_mm512_sub_pd (sed, capd), _mm512_set1_pd ((double) s->deposit));
  __m512d want = _mm512_mul_pd (_mm512_sub_pd (capd, sed), _mm512_set1_pd ((double) s->erode));
  __m512d most = _mm512_div_pd (_mm512_cvtps_pd (_mm256_xor_ps (dh, _mm256_set1_ps (-0.0f))),
                                _mm512_set1_pd ((double) eb->centre));
  __m512d amount = _mm512_mask_blend_pd (_mm512_cmp_pd_mask (want, most, _CMP_LT_OQ), most, want);

  fill = _mm512_mask_blend_pd (_mm256_cmp_ps_mask (dh, _mm256_setzero_ps (), _CMP_GT_OQ), drop, fill);
  return _mm512_mask_blend_pd (dep, amount, _mm512_xor_pd (fill, _mm512_set1_pd (-0.0)));
}


HYD_AVX512_LANES static inline __attribute__ ((always_inline)) void
group_first (const Sim *sim, Group *g)
{
  const TgHydraulicSetup *s = sim->pl->s;
  const Brush *eb = sim->pl->brush;
  Lanes *ln = &g->ln;
  float L = sim->L;
  bool first_cell = L > 1.0f && sim->fall_slope < INFINITY;
  const __m512 one = _mm512_set1_ps (1.0f), zero = _mm512_setzero_ps ();
  const __m512 sign = _mm512_set1_ps (-0.0f), half = _mm512_set1_ps (0.5f);
  const __m512 vL = _mm512_set1_ps (L), inertia = _mm512_set1_ps (s->inertia);
  const __m512 keep = _mm512_set1_ps (1.0f - s->inertia), tiny = _mm512_set1_ps (1e-20f);
  const __m512 slope_scale = _mm512_set1_ps (sim->slope_scale);
  const __m512 fall_slope = _mm512_set1_ps (sim->fall_slope);
  const __m512 min_slope = _mm512_set1_ps (s->min_slope);
  __m512 x = _mm512_load_ps (ln->x), y = _mm512_load_ps (ln->y);
  __m512 dx = _mm512_load_ps (ln->dx), dy = _mm512_load_ps (ln->dy);
  __m512 v2 = _mm512_load_ps (ln->v2), water = _mm512_load_ps (ln->water);
  __m512d sed0 = _mm512_load_pd (ln->sed), sed1 = _mm512_load_pd (ln->sed + 8);
  __m512i ix = _mm512_cvttps_epi32 (x), iy = _mm512_cvttps_epi32 (y), step;
  __m512 fx = _mm512_sub_ps (x, _mm512_cvtepi32_ps (ix));
  __m512 fy = _mm512_sub_ps (y, _mm512_cvtepi32_ps (iy));
  __m512 ufx = _mm512_sub_ps (one, fx), ufy = _mm512_sub_ps (one, fy);
  __m512i at = lanes_at (sim, ix, iy);
  const float *hm = sim->hm;
  int stride = sim->stride;
  __mmask16 m = (__mmask16) g->live, go, in, fall, lay, dep, over;
  __m512 h00 = _mm512_mask_i32gather_ps (zero, m, at, hm, 4);
  __m512 h10 = _mm512_mask_i32gather_ps (zero, m, at, hm + 1, 4);
  __m512 h01 = _mm512_mask_i32gather_ps (zero, m, at, hm + stride, 4);
  __m512 h11 = _mm512_mask_i32gather_ps (zero, m, at, hm + stride + 1, 4);
  __m512 gx, gy, hc, len, nx, ny, hn, dh, slope, cap, mdh, v2n;

  /* drop_step's expressions, operation for operation. */
  gx = _mm512_mul_ps (_mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (h10, h00), ufy),
                                     _mm512_mul_ps (_mm512_sub_ps (h11, h01), fy)),
                      vL);
  gy = _mm512_mul_ps (_mm512_add_ps (_mm512_mul_ps (_mm512_sub_ps (h01, h00), ufx),
                                     _mm512_mul_ps (_mm512_sub_ps (h11, h10), fx)),
                      vL);
  hc = _mm512_add_ps (
    _mm512_mul_ps (_mm512_add_ps (_mm512_mul_ps (h00, ufx), _mm512_mul_ps (h10, fx)), ufy),
    _mm512_mul_ps (_mm512_add_ps (_mm512_mul_ps (h01, ufx), _mm512_mul_ps (h11, fx)), fy));
  dx = _mm512_sub_ps (_mm512_mul_ps (dx, inertia), _mm512_mul_ps (gx, keep));
  dy = _mm512_sub_ps (_mm512_mul_ps (dy, inertia), _mm512_mul_ps (gy, keep));
  len = _mm512_sqrt_ps (_mm512_add_ps (_mm512_mul_ps (dx, dx), _mm512_mul_ps (dy, dy)));
  go = m & _mm512_cmp_ps_mask (len, tiny, _CMP_GT_OQ);
  dx = _mm512_div_ps (dx, len);
  dy = _mm512_div_ps (dy, len);
  nx = _mm512_add_ps (x, _mm512_mul_ps (dx, vL));
  ny = _mm512_add_ps (y, _mm512_mul_ps (dy, vL));
  in = go & _mm512_cmp_ps_mask (nx, zero, _CMP_GE_OQ)
       & _mm512_cmp_ps_mask (nx, _mm512_set1_ps ((float) (sim->pl->w - 1)), _CMP_LT_OQ)
       & _mm512_cmp_ps_mask (ny, zero, _CMP_GE_OQ)
       & _mm512_cmp_ps_mask (ny, _mm512_set1_ps ((float) (sim->pl->h - 1)), _CMP_LT_OQ);
  if (sim->flow)
    lanes_flow (sim, g, go, x, y, dx, dy, water);
  {
    /* prefetch_at for the lanes: the addresses as vectors, taken out lane
     * by lane in registers (6 % less CPU than prefetch_at lane by lane;
     * stored to memory and read back, 1.5x more). */
    const TgHydraulicRect *r = &sim->hr, *f = &sim->fr;
    __m512 ahead = _mm512_set1_ps (LANES_PREFETCH_STEPS * L);
    __m512i jx = _mm512_cvttps_epi32 (_mm512_add_ps (nx, _mm512_mul_ps (ahead, dx)));
    __m512i jy = _mm512_cvttps_epi32 (_mm512_add_ps (ny, _mm512_mul_ps (ahead, dy)));
    __m512i ph = lanes_at (sim, lanes_clamp (jx, r->x0, r->x0 + r->w - 1),
                           lanes_clamp (_mm512_sub_epi32 (jy, _mm512_set1_epi32 (1)), r->y0,
                                        r->y0 + r->h - 4));
    __m512i pf = _mm512_setzero_si512 ();

    if (sim->flow)
      {
        /* The water's rows Y and Y + 1, both in the window. */
        __m512i qx = _mm512_sub_epi32 (lanes_clamp (jx, f->x0, f->x0 + f->w - 1),
                                       _mm512_set1_epi32 (f->x0));
        __m512i qy = _mm512_sub_epi32 (lanes_clamp (jy, f->y0, f->y0 + (f->h > 1 ? f->h - 2 : 0)),
                                       _mm512_set1_epi32 (f->y0));
        pf = _mm512_add_epi32 (_mm512_mullo_epi32 (qy, _mm512_set1_epi32 (f->w)), qx);
      }
    for (unsigned bits = r->h >= 4 ? go : 0; bits; bits &= bits - 1)
      {
        __m512i k = _mm512_set1_epi32 (__builtin_ctz (bits));
        const float *p = hm + _mm_cvtsi128_si32 (_mm512_castsi512_si128 (_mm512_permutexvar_epi32 (k, ph)));
        __builtin_prefetch (p);
        __builtin_prefetch (p + stride);
        __builtin_prefetch (p + 2 * stride);
        __builtin_prefetch (p + 3 * stride);
        if (sim->flow)
          {
            const float *q = sim->flow + _mm_cvtsi128_si32 (_mm512_castsi512_si128 (_mm512_permutexvar_epi32 (k, pf)));
            __builtin_prefetch (q, 1);
            __builtin_prefetch (q + (f->h > 1 ? f->w : 0), 1);
          }
      }
  }
  hn = lanes_height (sim, in, nx, ny);
  dh = _mm512_sub_ps (hn, hc);
  mdh = _mm512_xor_ps (dh, sign);
  slope = _mm512_mul_ps (mdh, slope_scale);
  fall = in & _mm512_cmp_ps_mask (slope, fall_slope, _CMP_GT_OQ);
  if (first_cell && (in & ~fall))
    {
      __mmask16 rest = in & ~fall;
      __m512 hf = lanes_height (sim, rest, _mm512_add_ps (x, dx), _mm512_add_ps (y, dy));
      fall |= rest
              & _mm512_cmp_ps_mask (_mm512_mul_ps (_mm512_sub_ps (hc, hf),
                                                   _mm512_set1_ps (s->height_scale / s->cell_m)),
                                    fall_slope, _CMP_GT_OQ);
    }
  lay = in & ~fall;
  cap = _mm512_mask_blend_ps (_mm512_cmp_ps_mask (slope, min_slope, _CMP_GT_OQ), min_slope, slope);
  cap = _mm512_mul_ps (_mm512_mul_ps (_mm512_mul_ps (cap, _mm512_sqrt_ps (v2)), water),
                       _mm512_set1_ps (s->capacity));
  {
    __m256 cap0 = _mm512_castps512_ps256 (cap), cap1 = _mm512_extractf32x8_ps (cap, 1);
    __m256 dh0 = _mm512_castps512_ps256 (dh), dh1 = _mm512_extractf32x8_ps (dh, 1);
    over = (__mmask16) (_mm512_cmp_pd_mask (sed0, _mm512_cvtps_pd (cap0), _CMP_GT_OQ)
                        | (unsigned) _mm512_cmp_pd_mask (sed1, _mm512_cvtps_pd (cap1), _CMP_GT_OQ) << 8);
    dep = _mm512_cmp_ps_mask (dh, zero, _CMP_GT_OQ) | over;
    _mm512_store_pd (g->am, lanes_amount (s, eb, sed0, cap0, dh0, (__mmask8) dep));
    _mm512_store_pd (g->am + 8, lanes_amount (s, eb, sed1, cap1, dh1, (__mmask8) (dep >> 8)));
  }
  _mm512_store_si512 (g->cx, _mm512_cvttps_epi32 (_mm512_add_ps (x, half)));
  _mm512_store_si512 (g->cy, _mm512_cvttps_epi32 (_mm512_add_ps (y, half)));

  /* The new state but the load: a fall keeps its speed. */
  v2n = _mm512_sub_ps (_mm512_mul_ps (v2, _mm512_set1_ps (s->friction)),
                       _mm512_mul_ps (dh, _mm512_set1_ps (s->gravity)));
  v2n = _mm512_mask_blend_ps (_mm512_cmp_ps_mask (v2n, zero, _CMP_GT_OQ), zero, v2n);
  _mm512_store_ps (ln->v2, _mm512_mask_blend_ps (lay, v2, v2n));
  _mm512_store_ps (ln->water, _mm512_mask_mul_ps (water, in, water, _mm512_set1_ps (s->evaporate)));
  _mm512_store_ps (ln->dx, dx);
  _mm512_store_ps (ln->dy, dy);
  _mm512_store_ps (ln->x, _mm512_mask_blend_ps (in, x, nx));
  _mm512_store_ps (ln->y, _mm512_mask_blend_ps (in, y, ny));
  step = _mm512_load_si512 (ln->step);
  step = _mm512_mask_add_epi32 (step, in, step, _mm512_set1_epi32 (1));
  _mm512_store_si512 (ln->step, step);
  g->go = go;
  g->in = in;
  g->lay = lay;
  g->dep = dep;
  g->dead = m & ~(in & _mm512_cmplt_epi32_mask (step, _mm512_set1_epi32 (s->max_steps)));
}
HYD_AVX512_LANES static inline __attribute__ ((always_inline)) void
group_second (Sim *sim, Group *g)
{
  const Brush *eb = sim->pl->brush, *db = sim->pl->dep;
  Lanes *ln = &g->ln;

  for (unsigned bits = g->go & ~g->in; bits; bits &= bits - 1)
    {
      int k = __builtin_ctz (bits);
      ln->st[k].left += ln->sed[k];
      ln->sed[k] = 0.0;
      ln->left[k] = true;
    }
  /* drop_step's two cases, the erosions first, then the deposits, each
   * a loop with one brush (which lane does which is not predictable; one
   * loop that chose the brush lane by lane missed its branches).  A
   * deposit applies -AMOUNT and takes sed - (-r), which is sed + r. */
  for (unsigned bits = g->lay & ~g->dep; bits; bits &= bits - 1)
    {
      int k = __builtin_ctz (bits);
      double r = lanes_brush (sim, eb, g->cx[k], g->cy[k], g->am[k]);
      ln->sed[k] += r;
      ln->st[k].eroded += r;
    }
  for (unsigned bits = g->lay & g->dep; bits; bits &= bits - 1)
    {
      int k = __builtin_ctz (bits);
      double r = lanes_brush (sim, db, g->cx[k], g->cy[k], g->am[k]);
      ln->sed[k] += r;
      ln->st[k].deposited -= r;
    }
  for (unsigned bits = g->dead; bits; bits &= bits - 1)
    {
      int k = __builtin_ctz (bits);
      Drop d;
      lanes_get (ln, k, &d);
      drop_finish (sim, &d, &ln->st[k], TG__HYDRAULIC_ISA_AVX512);
      /* Its tile's water all in before the schedule hands on its cells. */
      if (ln->j[k] + 1 >= sim->tiles[ln->q[k]].count)
        lanes_flow_flush (sim, g, 1u << k);
      if (lane_next (sim, &d, &ln->q[k], &ln->j[k], &ln->st[k], false))
        lanes_put (ln, k, &d);
      else
        g->live &= ~(1u << k);
    }
}

/* Fills G's idle lanes (of its first CAP) with droplets of ready tiles,
 * with BLOCK waiting for the first when none is ready; whether a lane of
 * G is busy. */
HYD_AVX512_LANES static inline bool
lanes_fill (Sim *sim, Group *g, int cap, bool block)
{
  for (int lane = 0; lane < cap; lane++)
    if (!(g->live >> lane & 1))
      {
        Drop d;
        g->ln.q[lane] = -1;
        if (!lane_next (sim, &d, &g->ln.q[lane], &g->ln.j[lane], &g->ln.st[lane], block))
          break;
        lanes_put (&g->ln, lane, &d);
        g->live |= 1u << lane;
        block = false;
      }
  return g->live != 0;
}

/* run_lanes_isa for the plain droplet (no channel map, no feedback) in
 * AVX-512: up to sixteen droplets side by side, a lane each of a zmm
 * vector, every float and double operation of drop_step the same on each
 * lane (IEEE rounds vector and scalar alike; -ffp-contract=off), the
 * heights read by gathers; the brushes, the water's sums and the figures
 * lane by lane.  (Two groups of eight in ymm vectors taking turns, the
 * brushes of one beside the other's chain, took 1.2x the CPU; two groups
 * of sixteen 1.15x: bench_erosion's 2048 x 2048, one thread.) */
HYD_AVX512_LANES static void
run_lanes_avx512 (Sim *sim, int lanes)
{
  int max_steps = sim->pl->s->max_steps;
  Group g;

  g.live = 0;
  g.pend = 0;
  lanes_fill (sim, &g, lanes, false);
  for (;;)
    {
      int busy = __builtin_popcount (g.live);

      /* Idle lanes take the tiles that have become ready. */
      if (busy < lanes && atomic_load_explicit (&sim->sched->ready, memory_order_relaxed) > 0)
        {
          lanes_fill (sim, &g, lanes, false);
          busy = __builtin_popcount (g.live);
        }
      if (busy == 0)
        {
          /* No lane busy: wait for a tile (those left wait for other
           * workers' tiles), or end. */
          if (!lanes_fill (sim, &g, lanes, true))
            break;
          continue;
        }
      /* No tile left to hand out and fewer lanes busy than pay for a
       * vector step (lanes_for); the lanes' last tiles finish one
       * droplet at a time. */
      if (busy < LANES_LEAST && atomic_load (&sim->sched->untaken) == 0)
        break;
      group_first (sim, &g);
      group_second (sim, &g);
    }
  lanes_flow_flush (sim, &g, ~0u);
  for (unsigned bits = g.live; bits; bits &= bits - 1)
    {
      int lane = __builtin_ctz (bits), q = g.ln.q[lane];
      TgHydraulicStats *st = &g.ln.st[lane];
      Drop d;
      lanes_get (&g.ln, lane, &d);
      while (d.step < max_steps && drop_step (sim, &d, st, TG__HYDRAULIC_ISA_AVX512))
        ;
      drop_finish (sim, &d, st, TG__HYDRAULIC_ISA_AVX512);
      for (long long j = g.ln.j[lane] + 1; j < sim->tiles[q].count; j++)
        {
          if (j % DROPLETS_PER_POLL == 0 && sim_stop (sim))
            return;
          run_droplet (sim, &sim->tiles[q], j, st, TG__HYDRAULIC_ISA_AVX512);
        }
      tile_done (sim, q, st);
    }
}
#endif


/* The droplet loops compiled once per ISA, the brushes' code a constant
 * in each. */
static void
run_tiles_generic (const Sim *sim)
{
  run_tiles_isa (sim, TG__HYDRAULIC_ISA_GENERIC);
}

#ifdef HYD_HAVE_X86
__attribute__ ((target ("avx512f"))) static void
run_tiles_avx512 (const Sim *sim)
{
  if (sim->lanes > 1)
    {
      Sim own = *sim;
      run_lanes_avx512 (&own, own.lanes);
    }
  else
    run_tiles_isa (sim, TG__HYDRAULIC_ISA_AVX512);
}
#endif

/* A worker: each item of PARALLEL takes tiles from the schedule until
 * none is left (an item that finds none ends at once). */
static void
run_tiles (void *user, int begin, int end)
{
  const Sim *sim = user;

  (void) begin;
  (void) end;
#ifdef HYD_HAVE_X86
  if (sim->pl->isa == TG__HYDRAULIC_ISA_AVX512)
    {
      run_tiles_avx512 (sim);
      return;
    }
#endif
  run_tiles_generic (sim);
}

/* Droplets a worker moves side by side, its phases having N tiles each
 * (on average): the vector code runs the plain droplet (no channel map,
 * no feedback) on CPUs with AVX-512 (F, VL and DQ), with up to PL->lanes
 * lanes, but no more than leave each worker as many tiles; with fewer than
 * LANES_LEAST it is one droplet at a time (2048 x 2048 at 4 m, one
 * thread, CPU a droplet step: one at a time 57-58 ns; 2 lanes 82-84, 3
 * lanes 63-65, 4 lanes 48-50, 8 lanes 37-38, 16 lanes 26-27). */

static int
lanes_for (const Plan *pl, const Sim *sim, int n)
{
  int threads = pl->s->threads > 0 ? pl->s->threads : tg__cpu_count ();
  int lanes = n / threads;

  if (!pl->vector || sim->chan || sim->dk_of)
    return 1;
  /* The lanes index the maps in 32 bits (lanes_at). */
  if ((long long) sim->hr.h * sim->stride >= INT32_MAX
      || (sim->flow && (long long) sim->fr.h * sim->fr.w >= INT32_MAX))
    return 1;
  lanes = lanes < pl->lanes ? lanes : pl->lanes;
  return lanes < LANES_LEAST ? 1 : lanes;
}

static void
stats_add (TgHydraulicStats *a, const TgHydraulicStats *b)
{
  a->eroded += b->eroded;
  a->deposited += b->deposited;
  a->carried += b->carried;
  a->left += b->left;
  a->droplets_run += b->droplets_run;
  a->steps += b->steps;
}

/* Runs the tiles of NP phases, the first of them phase PHASE0: TILES,
 * phase PHASE0 + p's at [AT[p], AT[p + 1]), on the state HM over BUF,
 * which holds their reaches (with the channel map CHAN over BUF, or
 * NULL), and FLOW over FR; adds the owned tiles' figures to OWNED, phase
 * by phase in list order, so that the sums do not depend on the threads.
 * A whole-world run hands all its phases to one schedule (sched_init:
 * no barrier between them); a tile job runs one phase a step.
 *
 * With the droplet counts as the tiles' costs, alpine 2049's 353 tiles
 * in 64 phases took 0.519 of one thread's time on 2 threads with a
 * barrier per phase, and take 0.500 this way; the lattice itself caps a
 * run at 0.279 (its longest chain of dependent tiles), 3.6x at any
 * thread count.  bench_erosion's 2048 x 2048 run (1881 tiles in 64
 * phases) allows 23.95 tiles at once on average by the same count, so
 * two workers' 30 lanes run part empty (9.7 busy each, measured) under
 * any schedule: waiting only for the tiles met in the phases before, not
 * for whole phases, and taking the tiles with the longest chain after
 * them first, both measured, filled no more lanes.  Only smaller lattice
 * tiles, that is new bytes, would go further. */
static int
run_phases (const Plan *pl, int phase0, int np, const LatTile *tiles, const int *at, float *hm,
            const float *chan, const TgHydraulicRect *buf, float *flow, const TgHydraulicRect *fr,
            TgHydraulicParallel parallel, void *ctx, TgHydraulicStats *owned, long long *computed)
{
  int n = at[np], threads, rc;
  Sim sim = { 0 };
  Sched sc;
  TgHydraulicStats *ts;
  float *dk = NULL;

  if (n == 0)
    return 0;
  ts = calloc ((size_t) n, sizeof (TgHydraulicStats));
  if (!ts)
    return TG_ENOMEM;
  if (pl->s->discharge_area > 0.0f)
    {
      if (!(dk = malloc (sizeof (float) * 2 * (size_t) np)))
        {
          free (ts);
          return TG_ENOMEM;
        }
      for (int p = 0; p < np; p++)
        {
          /* Rain fallen per cell by the end of the phase's round: a
           * cell's water over it is the area (cells²) that drains
           * through the cell. */
          long long fallen = (long long) ((phase0 + p) / 4 + 1) * pl->per_round;
          double per_cell = (double) (fallen < pl->s->droplets ? fallen : pl->s->droplets)
                            / ((double) (pl->w - 1) * (double) (pl->h - 1));
          dk[p] = (float) (1.0 / (per_cell * (double) pl->s->discharge_area));
          dk[np + p] = (float) (per_cell * (double) pl->s->discharge_area);
        }
    }
  if ((rc = sched_init (&sc, tiles, at, np, pl->margin)) < 0)
    goto out;
  sim.pl = pl;
  sim.hm = hm;
  sim.chan = chan;
  sim.dk_of = dk;
  sim.a0_of = dk ? dk + np : NULL;
  sim.flow = flow;
  sim.fr = *fr;
  sim.stride = buf->w;
  sim.hr = *buf;
  sim.off = -((ptrdiff_t) buf->y0 * buf->w + buf->x0);
  sim.tiles = tiles;
  sim.tile_stats = ts;
  sim.sched = &sc;
  sim.s = pl->s;
  sim.ctx = ctx;
  sim.L = step_cells (pl->s);
  sim.nflow = (int) ceilf (sim.L);
  sim.sub = sim.L / (float) sim.nflow;
  sim.slope_scale = pl->s->height_scale / (pl->s->cell_m * sim.L);
  sim.fall_slope = pl->s->fall_slope > 0.0f ? pl->s->fall_slope : INFINITY;
  sim.lanes = lanes_for (pl, &sim, (n + np - 1) / np);
  threads = pl->s->threads > 0 ? pl->s->threads : tg__cpu_count ();
  rc = parallel (ctx, threads < n ? threads : n, run_tiles, &sim);
  if (rc == 0 && atomic_load (&sc.stopped))
    rc = TG_ECANCELLED;
  for (int k = 0; k < n && rc == 0; k++)
    {
      if (tiles[k].owned)
        stats_add (owned, &ts[k]);
      *computed += ts[k].droplets_run;
    }
out:
  sched_clear (&sc);
  free (dk);
  free (ts);
  return rc;
}

int
tg__hydraulic_pitch (int w)
{
  return 16 * (((w + 15) / 16) | 1);
}

/* SRC (W x H, rows W apart) into a new map with rows PITCH apart (the
 * cells past W zero); NULL when out of memory. */
static float *
pitched_copy (const float *src, int w, int h, int pitch)
{
  float *dst = calloc ((size_t) pitch * (size_t) h, sizeof (float));

  if (dst && src)
    for (int y = 0; y < h; y++)
      memcpy (dst + (size_t) y * pitch, src + (size_t) y * w, sizeof (float) * (size_t) w);
  return dst;
}

static void
pitched_back (float *dst, const float *src, int w, int h, int pitch)
{
  for (int y = 0; y < h; y++)
    memcpy (dst + (size_t) y * w, src + (size_t) y * pitch, sizeof (float) * (size_t) w);
}

int
tg__hydraulic_simulate (const TgHydraulicSetup *s, float *height, float *flow, int w, int h,
                        TgHydraulicParallel parallel, void *ctx, TgHydraulicStats *stats)
{
  TgHydraulicRect world = { 0, 0, w, h }, win;
  long long computed = 0;
  float *ph = NULL, *pc = NULL, *pf = NULL;
  LatTile *all = NULL;
  int *at = NULL;
  Plan pl;
  int rc, pitch = tg__hydraulic_pitch (w);
  bool need_flow;

  memset (stats, 0, sizeof *stats);
  if ((rc = plan_init (&pl, s, w, h)) < 0 || pl.phases == 0)
    goto out;
  /* The droplets run on copies whose rows are PITCH apart: rows a multiple
   * of 4 KiB apart or nearly so (2048 or 2049 cells) put a brush's rows
   * in the same few sets of the L1 cache, which holds 8 lines a set
   * (alpine 2049's rain: -9 % CPU with the pitch).  The window is the
   * copies' whole width; no droplet, brush or water reaches the cells
   * past W.  Feedback reads the water: it needs a flow map even if the
   * caller wants none. */
  win = (TgHydraulicRect) { 0, 0, pitch, h };
  need_flow = flow || s->discharge_area > 0.0f;
  ph = pitched_copy (height, w, h, pitch);
  if (s->channel)
    pc = pitched_copy (s->channel, w, h, pitch);
  if (need_flow)
    pf = pitched_copy (flow, w, h, pitch);
  if (!ph || (s->channel && !pc) || (need_flow && !pf))
    {
      rc = TG_ENOMEM;
      goto out;
    }
  if (!(at = malloc (sizeof (int) * ((size_t) pl.phases + 1))))
    {
      rc = TG_ENOMEM;
      goto out;
    }
  /* All phases' tiles, phase by phase, for one schedule. */
  at[0] = 0;
  for (int phase = 0; phase < pl.phases && rc == 0; phase++)
    {
      LatTile *list, *grown;
      int n;
      if ((rc = phase_list (&pl, phase, &world, &world, &list, &n, NULL)) < 0)
        break;
      if (n > 0 && !(grown = realloc (all, sizeof (LatTile) * ((size_t) at[phase] + n))))
        rc = TG_ENOMEM;
      else if (n > 0)
        {
          all = grown;
          memcpy (all + at[phase], list, sizeof (LatTile) * (size_t) n);
        }
      at[phase + 1] = at[phase] + n;
      free (list);
    }
  if (rc == 0)
    rc = run_phases (&pl, 0, pl.phases, all, at, ph, pc, &win, pf, &win, parallel, ctx, stats,
                     &computed);
  if (rc == 0)
    {
      pitched_back (height, ph, w, h, pitch);
      if (flow)
        pitched_back (flow, pf, w, h, pitch);
    }
out:
  free (all);
  free (at);
  free (ph);
  free (pc);
  free (pf);
  plan_clear (&pl);
  return rc;
}

/* --- the tiled scheme ---------------------------------------------------- */

static void
copy_rect (float *dst, const TgHydraulicRect *dr, const float *src, const TgHydraulicRect *sr,
           const TgHydraulicRect *what)
{
  for (int y = what->y0; y < what->y0 + what->h; y++)
    memcpy (dst + (size_t) (y - dr->y0) * dr->w + (what->x0 - dr->x0),
            src + (size_t) (y - sr->y0) * sr->w + (what->x0 - sr->x0),
            sizeof (float) * (size_t) what->w);
}

static bool
rect_meet (const TgHydraulicRect *a, const TgHydraulicRect *b, TgHydraulicRect *out)
{
  int x0 = a->x0 > b->x0 ? a->x0 : b->x0, y0 = a->y0 > b->y0 ? a->y0 : b->y0;
  int x1 = a->x0 + a->w < b->x0 + b->w ? a->x0 + a->w : b->x0 + b->w;
  int y1 = a->y0 + a->h < b->y0 + b->h ? a->y0 + a->h : b->y0 + b->h;

  *out = (TgHydraulicRect) { x0, y0, x1 - x0, y1 - y0 };
  return x1 > x0 && y1 > y0;
}

static TgHydraulicRect
tile_rect (const TgTiling *t, int w, int h, int ix, int iy)
{
  int x0 = tg_tile_start (w, t->nx, ix), y0 = tg_tile_start (h, t->ny, iy);

  return (TgHydraulicRect) { x0, y0, tg_tile_start (w, t->nx, ix + 1) - x0,
                             tg_tile_start (h, t->ny, iy + 1) - y0 };
}

/* Reads blob NAME of tile (IX, IY), which must hold R's floats. */
static int
get_grid (const TgHydraulicBlobs *io, int ix, int iy, const char *name,
          const TgHydraulicRect *r, float **data)
{
  void *d = NULL;
  size_t size = 0;
  int rc = io->get (io->user, ix, iy, name, &d, &size);

  if (rc < 0)
    return rc;
  if (size != sizeof (float) * (size_t) r->w * (size_t) r->h)
    {
      free (d);
      return TG_EPARSE;
    }
  *data = d;
  return 0;
}

/* Gathers blob NAME of the tiles T cuts a W x H world into over NEED
 * into BUF (over NEED), one blob at a time; raises INFO->work_bytes to
 * HELD and the largest blob. */
static int
gather (const TgHydraulicBlobs *io, const TgTiling *t, int w, int h, const char *name,
        const TgHydraulicRect *need, float *buf, size_t held, TgHydraulicStepInfo *info)
{
  int rc = 0;

  for (int iy = 0; iy < t->ny && rc == 0; iy++)
    for (int ix = 0; ix < t->nx && rc == 0; ix++)
      {
        TgHydraulicRect r = tile_rect (t, w, h, ix, iy), part;
        float *d;
        if (!rect_meet (&r, need, &part))
          continue;
        if ((rc = get_grid (io, ix, iy, name, &r, &d)) < 0)
          break;
        if (held + sizeof (float) * (size_t) r.w * r.h > info->work_bytes)
          info->work_bytes = held + sizeof (float) * (size_t) r.w * r.h;
        copy_rect (buf, need, d, &r, &part);
        free (d);
      }
  return rc;
}

/* The channel map of step STEP over NEED into a new *CB, or *CB NULL
 * without one.  Step 0 cuts it from S->channel (over IN_RECT) and keeps
 * the tile's share as blob "c" (empty without a map) for the later
 * steps, which gather it from the tiles around. */
static int
channel_step (const TgHydraulicSetup *s, int w, int h, const TgTiling *t, int step,
              const TgHydraulicRect *in_rect, const TgHydraulicRect *J,
              const TgHydraulicRect *need, const TgHydraulicBlobs *io, float **cb,
              size_t *held, TgHydraulicStepInfo *info)
{
  size_t jn = (size_t) J->w * (size_t) J->h, nn = (size_t) need->w * (size_t) need->h;
  float *own = NULL;
  int rc;

  *cb = NULL;
  if (step == 0)
    {
      if (!s->channel)
        return io->put (io->user, "c", "", 0);
      if (!(own = malloc (sizeof (float) * jn)))
        return TG_ENOMEM;
      copy_rect (own, J, s->channel, in_rect, J);
      rc = io->put (io->user, "c", own, sizeof (float) * jn);
      free (own);
      if (rc < 0)
        return rc;
    }
  else
    {
      void *d = NULL;
      size_t size = 0;
      if ((rc = io->get (io->user, t->ix, t->iy, "c", &d, &size)) < 0)
        return rc;
      free (d);
      if (size == 0)
        return 0;
      if (size != sizeof (float) * jn)
        return TG_EPARSE;
    }
  if (!(*cb = malloc (sizeof (float) * nn)))
    return TG_ENOMEM;
  *held += sizeof (float) * nn;
  if (info->work_bytes < *held)
    info->work_bytes = *held;
  if (step == 0)
    copy_rect (*cb, need, s->channel, in_rect, need);
  else
    rc = gather (io, t, w, h, "c", need, *cb, *held, info);
  return rc;
}

int
tg__hydraulic_tile_step (const TgHydraulicSetup *s, int w, int h, const TgTiling *t, int step,
                         const float *input, const TgHydraulicRect *in_rect,
                         const TgHydraulicBlobs *io, float *height, float *flow, float *src,
                         TgHydraulicParallel parallel, void *ctx, TgHydraulicStepInfo *info)
{
  TgHydraulicStepInfo dummy;
  TgHydraulicRect J = tile_rect (t, w, h, t->ix, t->iy), need, part;
  LatTile *list = NULL;
  float *hb = NULL, *fb = NULL, *tmp = NULL, *cb = NULL;
  size_t jn = (size_t) J.w * (size_t) J.h, nn, held;
  bool feed = s->discharge_area > 0.0f;
  TgHydraulicRect fr;
  char name[32];
  Plan pl;
  int n = 0, rc, last;

  if (!info)
    info = &dummy;
  memset (info, 0, sizeof *info);
  if ((rc = plan_init (&pl, s, w, h)) < 0)
    return rc;
  last = pl.phases > 0 ? pl.phases - 1 : 0;
  if (step < 0 || step > last || (step == 0 && !input) || J.w <= 0 || J.h <= 0)
    {
      rc = TG_EINVAL;
      goto out;
    }
  if (pl.phases == 0)
    {
      /* Nothing to erode: the terrain comes through. */
      if (!rect_meet (in_rect, &J, &part) || part.w != J.w || part.h != J.h)
        {
          rc = TG_EINVAL;
          goto out;
        }
      copy_rect (height, &J, input, in_rect, &J);
      copy_rect (src, &J, input, in_rect, &J);
      memset (flow, 0, sizeof (float) * jn);
      goto out;
    }

  if ((rc = phase_list (&pl, step, &J, &J, &list, &n, &need)) < 0)
    goto out;
  nn = (size_t) need.w * (size_t) need.h;
  /* The water over J only, as without feedback no droplet reads it; with
   * feedback over NEED like the height. */
  fr = feed ? need : J;
  hb = malloc (sizeof (float) * nn);
  fb = calloc (feed ? nn : jn, sizeof (float));
  tmp = malloc (sizeof (float) * jn);
  held = sizeof (float) * (nn + (feed ? nn : jn) + jn) + sizeof (LatTile) * (size_t) n;
  info->work_bytes = held;
  if (!hb || !fb || !tmp)
    {
      rc = TG_ENOMEM;
      goto out;
    }

  if (step == 0)
    {
      if (!rect_meet (in_rect, &need, &part) || part.w != need.w || part.h != need.h)
        {
          rc = TG_EINVAL;
          goto out;
        }
      copy_rect (hb, &need, input, in_rect, &need);
      /* The terrain over the tile, for the masks at the end. */
      copy_rect (tmp, &J, input, in_rect, &J);
      if ((rc = io->put (io->user, "in", tmp, sizeof (float) * jn)) < 0)
        goto out;
    }
  else
    {
      /* The state two steps back is garbage: only the jobs of step - 1
       * read it, and they are done before this step's stage starts.  A
       * rerun of this job reads step - 1's, which the next step drops. */
      for (int q = 0; step >= 2 && io->drop && q < 2 && rc == 0; q++)
        {
          snprintf (name, sizeof name, "%c%d", q ? 'f' : 'h', step - 2);
          rc = io->drop (io->user, name);
        }
      if (rc < 0)
        goto out;
      /* The state after the step before: the height over NEED from the
       * tiles it covers, one blob at a time; the flow too with feedback,
       * else only over J. */
      snprintf (name, sizeof name, "h%d", step - 1);
      if ((rc = gather (io, t, w, h, name, &need, hb, held, info)) < 0)
        goto out;
      snprintf (name, sizeof name, "f%d", step - 1);
      if (feed)
        rc = gather (io, t, w, h, name, &need, fb, held, info);
      else
        {
          free (fb);
          fb = NULL;
          rc = get_grid (io, t->ix, t->iy, name, &J, &fb);
        }
      if (rc < 0)
        goto out;
    }

  if ((rc = channel_step (s, w, h, t, step, in_rect, &J, &need, io, &cb, &held, info)) < 0)
    goto out;
  {
    int at[2] = { 0, n };
    rc = run_phases (&pl, step, 1, list, at, hb, cb, &need, fb, &fr, parallel, ctx, &info->owned,
                     &info->droplets_computed);
  }
  if (rc < 0)
    goto out;

  if (step < last)
    {
      snprintf (name, sizeof name, "h%d", step);
      copy_rect (tmp, &J, hb, &need, &J);
      if ((rc = io->put (io->user, name, tmp, sizeof (float) * jn)) < 0)
        goto out;
      snprintf (name, sizeof name, "f%d", step);
      if (feed)
        copy_rect (tmp, &J, fb, &need, &J);
      rc = io->put (io->user, name, feed ? tmp : fb, sizeof (float) * jn);
    }
  else
    {
      copy_rect (height, &J, hb, &need, &J);
      copy_rect (flow, &J, fb, &fr, &J);
      if (step == 0)
        memcpy (src, tmp, sizeof (float) * jn);
      else
        {
          float *d;
          if ((rc = get_grid (io, t->ix, t->iy, "in", &J, &d)) < 0)
            goto out;
          memcpy (src, d, sizeof (float) * jn);
          free (d);
        }
    }
out:
  free (list);
  free (hb);
  free (fb);
  free (tmp);
  free (cb);
  plan_clear (&pl);
  return rc;
}
