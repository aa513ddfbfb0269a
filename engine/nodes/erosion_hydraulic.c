/* erosion.hydraulic: rain droplets that run downhill, pick up sediment
 * where they are fast and steep, and drop it where they slow down, carving
 * gullies and laying down fans (particle erosion after Hans Theobald
 * Beyer, 2015, as popularised by Sebastian Lague).
 *
 * Why droplets and not a pipe model: droplets carve sharp dendritic
 * gullies at the resolution of the map in one sweep, need no time-step
 * stability limit, and their cost is the rain asked for, not iterations
 * over the whole grid.  The price is scheduling: droplets race for the
 * same cells, which a fixed partition solves (below).
 *
 * Resolution independence: the parameters are physical.  Rain is droplets
 * per km², lifetime and erosion radius are metres, slopes are metres per
 * metre, and the per-step rates are given for a 4 m step and compounded
 * to the real step (one cell), so a 513 preview and a 2049 build of the
 * same world carve the same valleys.
 *
 * Determinism: droplet k starts where tg_hash of (seed, k) says.  The
 * droplets run in rounds; in each round the map is cut into square tiles
 * wider than twice the farthest a droplet can reach (its lifetime plus the
 * brush), coloured like a 2x2 checkerboard.  The four colours run one
 * after the other; tiles of one colour never touch the same cells, so they
 * run in parallel, and inside a tile droplets run in index order.  The
 * tile grid is shifted each round by a hashed offset so no seam lines
 * stay.  Nothing depends on the thread count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/hash.h>
#include <tgraph/node.h>
#include <tgraph/param.h>

#include "erosion_hydraulic.h"
#include "erosion_util.h"
#include "grid_util.h"

/* The step length the per-step rates are given for. */
#define REF_STEP_M 4.0
#define GRAVITY 9.81
#define BRUSH_MAX 64

/* --- the simulation ------------------------------------------------------ */

typedef struct
{
  int n;
  int r;                  /* reach in cells on each side */
  int dx[(2 * BRUSH_MAX + 1) * (2 * BRUSH_MAX + 1)];
  int dy[(2 * BRUSH_MAX + 1) * (2 * BRUSH_MAX + 1)];
  float w[(2 * BRUSH_MAX + 1) * (2 * BRUSH_MAX + 1)];
  float centre;           /* weight of the centre cell */
} Brush;

static void
brush_init (Brush *b, float radius)
{
  int r = (int) ceilf (radius) - 1;
  double sum = 0.0;

  if (r > BRUSH_MAX)
    r = BRUSH_MAX;
  if (r < 0)
    r = 0;
  b->n = 0;
  b->r = r;
  for (int y = -r; y <= r; y++)
    for (int x = -r; x <= r; x++)
      {
        double d = sqrt ((double) (x * x + y * y));
        if (d < radius)
          {
            b->dx[b->n] = x;
            b->dy[b->n] = y;
            b->w[b->n] = (float) (radius - d);
            sum += radius - d;
            b->n++;
          }
      }
  for (int k = 0; k < b->n; k++)
    b->w[k] = (float) (b->w[k] / sum);
  b->centre = b->w[0];
  for (int k = 0; k < b->n; k++)
    if (b->dx[k] == 0 && b->dy[k] == 0)
      b->centre = b->w[k];
}

typedef struct
{
  const TgHydraulicSetup *s;
  const Brush *brush;
  float *hm, *flow;
  int w, h;
  int S;                     /* tile side, cells */
  int ox, oy, ntx;           /* this round's tile grid */
  long long first;           /* first droplet of the round */
  const long long *order;    /* droplet indices, grouped by tile */
  const int *tile_start;     /* n_tiles + 1 offsets into order */
  const int *phase_tiles;    /* tiles of the phase being run */
  TgHydraulicStats *tile_stats;
} Sim;

static inline void
droplet_start (const TgHydraulicSetup *s, long long k, int w, int h, float *x, float *y)
{
  int32_t lo = (int32_t) (uint32_t) k, hi = (int32_t) (k >> 32);

  *x = tg_hash_unit (tg_hash3 (s->seed, lo, hi, 0x51)) * (float) (w - 1);
  *y = tg_hash_unit (tg_hash3 (s->seed, lo, hi, 0x52)) * (float) (h - 1);
  /* (w - 1) * u rounds up to w - 1 for u close to 1; stay inside. */
  if (*x >= (float) (w - 1))
    *x = nextafterf ((float) (w - 1), 0.0f);
  if (*y >= (float) (h - 1))
    *y = nextafterf ((float) (h - 1), 0.0f);
}

/* Adds AMOUNT x weight to the brush cells around (CX, CY) (SIGN -1
 * erodes); returns the sum of the changes applied. */
static double
brush_apply (const Sim *sim, int cx, int cy, double amount)
{
  const Brush *b = sim->brush;
  float *hm = sim->hm;
  int w = sim->w;
  double applied = 0.0;

  if (cx - b->r >= 0 && cx + b->r < w && cy - b->r >= 0 && cy + b->r < sim->h)
    {
      float *c = hm + (size_t) cy * w + cx;
      for (int k = 0; k < b->n; k++)
        {
          float d = (float) (amount * b->w[k]);
          c[(ptrdiff_t) b->dy[k] * w + b->dx[k]] -= d;
          applied += d;
        }
      return applied;
    }
  /* Near the edge: the cells outside the map drop out and the others
   * share their weight. */
  {
    double sum = 0.0;
    for (int k = 0; k < b->n; k++)
      {
        int x = cx + b->dx[k], y = cy + b->dy[k];
        if (x >= 0 && x < w && y >= 0 && y < sim->h)
          sum += b->w[k];
      }
    for (int k = 0; k < b->n; k++)
      {
        int x = cx + b->dx[k], y = cy + b->dy[k];
        if (x >= 0 && x < w && y >= 0 && y < sim->h)
          {
            float d = (float) (amount * (b->w[k] / sum));
            hm[(size_t) y * w + x] -= d;
            applied += d;
          }
      }
  }
  return applied;
}

static void
run_droplet (const Sim *sim, long long k, TgHydraulicStats *st)
{
  const TgHydraulicSetup *s = sim->s;
  float *hm = sim->hm, *flow = sim->flow;
  int w = sim->w, h = sim->h;
  float x, y, dx = 0.0f, dy = 0.0f, v2 = 1.0f, water = 1.0f;
  float slope_scale = s->height_scale / s->cell_m;
  double sed = 0.0;
  int step;

  droplet_start (s, k, w, h, &x, &y);
  for (step = 0; step < s->max_steps; step++)
    {
      int ix = (int) x, iy = (int) y;
      float fx = x - (float) ix, fy = y - (float) iy;
      float *p = hm + (size_t) iy * w + ix;
      float h00 = p[0], h10 = p[1], h01 = p[w], h11 = p[w + 1];
      float gx = (h10 - h00) * (1.0f - fy) + (h11 - h01) * fy;
      float gy = (h01 - h00) * (1.0f - fx) + (h11 - h10) * fx;
      float hc = (h00 * (1.0f - fx) + h10 * fx) * (1.0f - fy) + (h01 * (1.0f - fx) + h11 * fx) * fy;
      float len, nx, ny, hn, dh, cap;

      dx = dx * s->inertia - gx * (1.0f - s->inertia);
      dy = dy * s->inertia - gy * (1.0f - s->inertia);
      len = sqrtf (dx * dx + dy * dy);
      if (!(len > 1e-20f))
        break; /* a perfectly flat spot: the droplet stays */
      dx /= len;
      dy /= len;
      if (flow)
        {
          float *q = flow + (size_t) iy * w + ix;
          q[0] += water * (1.0f - fx) * (1.0f - fy);
          q[1] += water * fx * (1.0f - fy);
          q[w] += water * (1.0f - fx) * fy;
          q[w + 1] += water * fx * fy;
        }
      nx = x + dx;
      ny = y + dy;
      if (!(nx >= 0.0f && nx < (float) (w - 1) && ny >= 0.0f && ny < (float) (h - 1)))
        {
          st->left += sed;
          sed = 0.0;
          break;
        }
      {
        int jx = (int) nx, jy = (int) ny;
        float gx2 = nx - (float) jx, gy2 = ny - (float) jy;
        const float *q = hm + (size_t) jy * w + jx;
        hn = (q[0] * (1.0f - gx2) + q[1] * gx2) * (1.0f - gy2)
             + (q[w] * (1.0f - gx2) + q[w + 1] * gx2) * gy2;
      }
      dh = hn - hc;
      {
        float slope = -dh * slope_scale;
        cap = (slope > s->min_slope ? slope : s->min_slope) * sqrtf (v2) * water * s->capacity;
      }
      if (dh > 0.0f || sed > cap)
        {
          /* Uphill: fill the dip behind up to the new height if the load
           * allows; downhill: drop a share of the excess. */
          double amount = dh > 0.0f ? fmin ((double) dh, sed) : (sed - cap) * s->deposit;
          float a00 = (float) (amount * ((1.0f - fx) * (1.0f - fy)));
          float a10 = (float) (amount * (fx * (1.0f - fy)));
          float a01 = (float) (amount * ((1.0f - fx) * fy));
          float a11 = (float) (amount * (fx * fy));
          double applied = ((double) a00 + a10) + ((double) a01 + a11);
          p[0] += a00;
          p[1] += a10;
          p[w] += a01;
          p[w + 1] += a11;
          sed -= applied;
          st->deposited += applied;
        }
      else
        {
          /* Never dig the brush centre below where the droplet goes. */
          double amount = fmin ((cap - sed) * s->erode, (double) -dh / sim->brush->centre);
          double applied = brush_apply (sim, (int) (x + 0.5f), (int) (y + 0.5f), amount);
          sed += applied;
          st->eroded += applied;
        }
      v2 = v2 * s->friction - dh * s->gravity;
      v2 = v2 > 0.0f ? v2 : 0.0f;
      water *= s->evaporate;
      x = nx;
      y = ny;
    }
  st->carried += sed;
  st->steps += step;
  st->droplets_run++;
}

static void
run_tiles (void *user, int begin, int end)
{
  const Sim *sim = user;

  for (int q = begin; q < end; q++)
    {
      int t = sim->phase_tiles[q];
      TgHydraulicStats *st = &sim->tile_stats[t];
      for (int k = sim->tile_start[t]; k < sim->tile_start[t + 1]; k++)
        run_droplet (sim, sim->order[k], st);
    }
}

static inline int
tile_of (const Sim *sim, float x, float y)
{
  int tx = ((int) x + sim->ox) / sim->S, ty = ((int) y + sim->oy) / sim->S;
  return ty * sim->ntx + tx;
}

int
tg__hydraulic_simulate (const TgHydraulicSetup *s, float *height, float *flow, int w, int h,
                        TgHydraulicParallel parallel, void *ctx, TgHydraulicStats *stats)
{
  Brush *brush = malloc (sizeof (Brush));
  Sim sim;
  int margin, S, ntx, nty, n_tiles, rc = 0, rounds = s->rounds > 0 ? s->rounds : 1;
  long long per_round;
  int *tile_start = NULL, *phase_tiles = NULL, *fill = NULL;
  long long *order = NULL;
  TgHydraulicStats *tile_stats = NULL;

  memset (stats, 0, sizeof *stats);
  if (!brush)
    return -1;
  if (w < 2 || h < 2 || s->droplets <= 0 || s->max_steps <= 0)
    {
      free (brush);
      return 0;
    }
  brush_init (brush, s->brush_radius);

  /* A droplet moves at most one cell a step; its brush and its bilinear
   * footprint reach r + 2 more.  Tiles of one colour are a tile apart, so
   * a side of 2 * margin + 1 keeps their reaches disjoint. */
  margin = s->max_steps + brush->r + 3;
  S = 2 * margin + 1;
  ntx = (w + S - 1) / S + 1;
  nty = (h + S - 1) / S + 1;
  n_tiles = ntx * nty;
  per_round = (s->droplets + rounds - 1) / rounds;

  tile_start = malloc (sizeof (int) * (size_t) (n_tiles + 1));
  fill = malloc (sizeof (int) * (size_t) n_tiles);
  phase_tiles = malloc (sizeof (int) * (size_t) n_tiles);
  tile_stats = calloc ((size_t) n_tiles, sizeof (TgHydraulicStats));
  order = malloc (sizeof (long long) * (size_t) (per_round > 0 ? per_round : 1));
  if (!tile_start || !fill || !phase_tiles || !tile_stats || !order)
    {
      rc = -1;
      goto out;
    }

  memset (&sim, 0, sizeof sim);
  sim.s = s;
  sim.brush = brush;
  sim.hm = height;
  sim.flow = flow;
  sim.w = w;
  sim.h = h;
  sim.S = S;
  sim.ntx = ntx;
  sim.order = order;
  sim.tile_start = tile_start;
  sim.phase_tiles = phase_tiles;
  sim.tile_stats = tile_stats;

  for (int round = 0; round < rounds && rc == 0; round++)
    {
      long long first = (long long) round * per_round;
      long long last = first + per_round < s->droplets ? first + per_round : s->droplets;

      if (first >= last)
        break;
      sim.ox = (int) (tg_hash2 (s->seed ^ 0x7113e5u, round, 1) % (uint32_t) S);
      sim.oy = (int) (tg_hash2 (s->seed ^ 0x7113e5u, round, 2) % (uint32_t) S);
      sim.first = first;

      /* Counting sort of the round's droplets by start tile, keeping index
       * order inside a tile. */
      memset (tile_start, 0, sizeof (int) * (size_t) (n_tiles + 1));
      for (long long k = first; k < last; k++)
        {
          float x, y;
          droplet_start (s, k, w, h, &x, &y);
          tile_start[tile_of (&sim, x, y) + 1]++;
        }
      for (int t = 0; t < n_tiles; t++)
        tile_start[t + 1] += tile_start[t];
      memcpy (fill, tile_start, sizeof (int) * (size_t) n_tiles);
      for (long long k = first; k < last; k++)
        {
          float x, y;
          droplet_start (s, k, w, h, &x, &y);
          order[fill[tile_of (&sim, x, y)]++] = k;
        }

      for (int colour = 0; colour < 4 && rc == 0; colour++)
        {
          int n = 0;
          for (int ty = colour >> 1; ty < nty; ty += 2)
            for (int tx = colour & 1; tx < ntx; tx += 2)
              if (tile_start[ty * ntx + tx + 1] > tile_start[ty * ntx + tx])
                phase_tiles[n++] = ty * ntx + tx;
          if (n > 0)
            rc = parallel (ctx, n, run_tiles, &sim);
        }
    }

  /* Reduce in tile order. */
  for (int t = 0; t < n_tiles; t++)
    {
      stats->eroded += tile_stats[t].eroded;
      stats->deposited += tile_stats[t].deposited;
      stats->carried += tile_stats[t].carried;
      stats->left += tile_stats[t].left;
      stats->droplets_run += tile_stats[t].droplets_run;
      stats->steps += tile_stats[t].steps;
    }
out:
  free (brush);
  free (tile_start);
  free (fill);
  free (phase_tiles);
  free (tile_stats);
  free (order);
  return rc;
}

/* --- the node ---------------------------------------------------------- */

typedef struct
{
  int seed;
  double droplets_per_km2;
  double lifetime_m;
  double radius_m;
  double inertia;
  double capacity;
  double erosion;
  double deposition;
  double evaporation;
  double friction;
  double mask_full_m;
} HydraulicParams;

static const TgParamDesc hydraulic_params[] = {
  TG_PARAM_SEED (HydraulicParams, seed, N_("Seed"), N_("Where the droplets fall")),
  TG_PARAM_FLOAT_UI (HydraulicParams, droplets_per_km2, N_("Rain"), 60000.0, 0.0, 1e8, 0.0,
                     400000.0, "1/km²",
                     N_("Droplets per square kilometre of world, the same at any resolution")),
  TG_PARAM_FLOAT_UI (HydraulicParams, lifetime_m, N_("Droplet travel"), 400.0, 1.0, 1e5, 16.0,
                     2000.0, "m", N_("How far a droplet runs before it soaks away")),
  TG_PARAM_FLOAT_UI (HydraulicParams, radius_m, N_("Erosion radius"), 8.0, 0.0, 1e4, 0.0, 64.0,
                     "m", N_("Width of the ground a droplet wears away around its path")),
  TG_PARAM_FLOAT (HydraulicParams, inertia, N_("Inertia"), 0.1, 0.0, 0.99, NULL,
                  N_("How much a droplet keeps its direction over 4 m instead of turning "
                     "downhill; higher gives smoother, wider bends")),
  TG_PARAM_FLOAT_UI (HydraulicParams, capacity, N_("Capacity"), 8.0, 0.0, 1e4, 0.0, 50.0, NULL,
                     N_("Sediment a droplet can carry, in m³ per unit of slope, speed (m/s) and "
                        "water")),
  TG_PARAM_FLOAT (HydraulicParams, erosion, N_("Erosion rate"), 0.3, 0.0, 1.0, NULL,
                  N_("Share of its spare capacity a droplet picks up over 4 m")),
  TG_PARAM_FLOAT (HydraulicParams, deposition, N_("Deposition rate"), 0.3, 0.0, 1.0, NULL,
                  N_("Share of its excess load a droplet drops over 4 m")),
  TG_PARAM_FLOAT (HydraulicParams, evaporation, N_("Evaporation"), 0.02, 0.0, 1.0, NULL,
                  N_("Share of its water a droplet loses over 4 m")),
  TG_PARAM_FLOAT (HydraulicParams, friction, N_("Friction"), 0.1, 0.0, 1.0, NULL,
                  N_("Share of its kinetic energy a droplet loses over 4 m; limits its speed")),
  TG_PARAM_FLOAT_UI (HydraulicParams, mask_full_m, N_("Full mask depth"), 4.0, 0.001, 1e4, 0.05,
                     20.0, "m",
                     N_("Depth of erosion or deposit that reads as 1 in the wear and deposit "
                        "masks")),
};

static const TgPortDesc hydraulic_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Terrain to erode") },
};

static const TgPortDesc hydraulic_outputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Eroded terrain") },
  { .name = "flow", .type = TG_TYPE_MASK, .label = N_("Flow"),
    .help = N_("Where the water ran, on a log scale: gullies and rivers") },
  { .name = "wear", .type = TG_TYPE_MASK, .label = N_("Wear"),
    .help = N_("Depth the water carved away, over the full mask depth") },
  { .name = "deposit", .type = TG_TYPE_MASK, .label = N_("Deposit"),
    .help = N_("Depth of sediment laid down, over the full mask depth") },
};

/* The setup for a map with cells of CELL metres (shared with tests). */
static void
hydraulic_setup (TgHydraulicSetup *s, const HydraulicParams *p, const TgWorld *world,
                 const TgRegion *full, uint32_t seed)
{
  double cell = full->cell, f = cell / REF_STEP_M, hm = world->height_m > 0 ? world->height_m : 1;
  double area_km2 = (double) (full->full_w - 1) * (double) (full->full_h - 1) * cell * cell * 1e-6;
  double steps = ceil (p->lifetime_m / cell - 1e-9);

  memset (s, 0, sizeof *s);
  s->seed = seed;
  s->droplets = (long long) llround (p->droplets_per_km2 * area_km2);
  s->rounds = 16;
  s->max_steps = steps < 1 ? 1 : (steps > 1e6 ? 1000000 : (int) steps);
  s->inertia = (float) pow (p->inertia, f);
  /* m³ of sediment -> height units x cells. */
  s->capacity = (float) (p->capacity / (cell * cell * hm));
  s->min_slope = 0.01f;
  s->erode = (float) (1.0 - pow (1.0 - p->erosion, f));
  s->deposit = (float) (1.0 - pow (1.0 - p->deposition, f));
  s->evaporate = (float) pow (1.0 - p->evaporation, f);
  s->friction = (float) pow (1.0 - p->friction, f);
  s->gravity = (float) (2.0 * GRAVITY * hm);
  s->height_scale = (float) hm;
  s->cell_m = (float) cell;
  s->brush_radius = (float) fmax (p->radius_m / cell, 1.5);
  if (s->brush_radius > BRUSH_MAX)
    s->brush_radius = BRUSH_MAX;
}

static int
eval_parallel (void *ctx, int n, void (*fn) (void *, int, int), void *user)
{
  return tg_eval_parallel (ctx, n, 1, fn, user);
}

typedef struct
{
  const TgValue *in;
  const float *hm, *flow;
  TgValue *height, *flow_out, *wear, *deposit;
  double to_m, mask_full_m;
  double flow_unit, flow_log_max;
} HydFinish;

static void
hydraulic_finish_rows (void *user, int begin, int end)
{
  const HydFinish *job = user;
  const TgRegion *r = &job->height->region;

  for (int j = begin; j < end; j++)
    {
      const float *src = tg__grid_row (job->in, r, j);
      const float *e = job->hm + (size_t) j * r->width;
      const float *fl = job->flow + (size_t) j * r->width;
      float *ho = tg_value_row (job->height, j), *fo = tg_value_row (job->flow_out, j);
      float *wo = tg_value_row (job->wear, j), *dpo = tg_value_row (job->deposit, j);
      memcpy (ho, e, sizeof (float) * (size_t) r->width);
      for (int i = 0; i < r->width; i++)
        {
          double d = ((double) e[i] - (double) src[i]) * job->to_m;
          wo[i] = tg__erosion_mask_linear (-d, job->mask_full_m);
          dpo[i] = tg__erosion_mask_linear (d, job->mask_full_m);
          fo[i] = tg__erosion_mask_linear (log1p ((double) fl[i] * job->flow_unit),
                                           job->flow_log_max);
        }
    }
}

static int
hydraulic_eval (TgEvalCtx *c)
{
  const HydraulicParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  const TgValue *in = tg_eval_input (c, 0);
  const TgWorld *world = tg_eval_world (c);
  TgHydraulicSetup s;
  TgHydraulicStats st;
  HydFinish fin;
  size_t n = (size_t) r->width * (size_t) r->height;
  float *hm, *flow;
  int rc;

  if ((rc = tg__check_grid_input (c, in, "height", r)) < 0)
    return rc;
  hydraulic_setup (&s, p, world, r, tg_eval_seed (c, p->seed));
  hm = malloc (sizeof (float) * n);
  flow = calloc (n, sizeof (float));
  if (!hm || !flow)
    {
      free (hm);
      free (flow);
      return tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d map", r->width,
                           r->height);
    }
  for (int j = 0; j < r->height; j++)
    memcpy (hm + (size_t) j * r->width, tg__grid_row (in, r, j),
            sizeof (float) * (size_t) r->width);
  rc = tg__hydraulic_simulate (&s, hm, flow, r->width, r->height, eval_parallel, c, &st);
  if (rc < 0)
    {
      free (hm);
      free (flow);
      return rc == TG_ECANCELLED ? rc : tg_eval_fail (c, TG_ENOMEM, "out of memory");
    }

  memset (&fin, 0, sizeof fin);
  fin.in = in;
  fin.hm = hm;
  fin.flow = flow;
  fin.to_m = world->height_m;
  fin.mask_full_m = p->mask_full_m;
  /* Water through a cell per droplet per m² of world, times the cell
   * width: roughly the length of slope above that drains through it (m),
   * the same at any resolution.  Over 4 m units on a log scale, full at
   * 64 droplet travels. */
  {
    double dens = p->droplets_per_km2 * 1e-6;
    fin.flow_unit = dens > 0 ? 1.0 / (dens * r->cell * REF_STEP_M) : 0.0;
    fin.flow_log_max = log1p (64.0 * p->lifetime_m / REF_STEP_M);
  }
  fin.height = tg_eval_new_output (c, 0, 1);
  fin.flow_out = tg_eval_new_output (c, 1, 1);
  fin.wear = tg_eval_new_output (c, 2, 1);
  fin.deposit = tg_eval_new_output (c, 3, 1);
  if (!fin.height || !fin.flow_out || !fin.wear || !fin.deposit)
    rc = tg_eval_fail (c, TG_ENOMEM, "out of memory");
  else
    rc = tg_eval_parallel (c, r->height, tg__grain_rows (r->width), hydraulic_finish_rows, &fin);
  free (hm);
  free (flow);
  return rc;
}

static const TgNodeDesc hydraulic_desc = {
  .type = "erosion.hydraulic",
  .category = "Erosion",
  .label = N_("Hydraulic erosion"),
  .help = N_("Rain droplets run downhill, carving gullies where they are fast and laying "
             "sediment fans where they slow down"),
  .inputs = hydraulic_inputs,
  .n_inputs = TG_N_ELEMENTS (hydraulic_inputs),
  .outputs = hydraulic_outputs,
  .n_outputs = TG_N_ELEMENTS (hydraulic_outputs),
  .params = hydraulic_params,
  .n_params = TG_N_ELEMENTS (hydraulic_params),
  .params_size = sizeof (HydraulicParams),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = hydraulic_eval,
  .version = 1,
};
TG_NODE_REGISTER (hydraulic_desc);
