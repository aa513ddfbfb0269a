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
 * Pits and curtains: a droplet lays sediment down through a brush half
 * as wide as the one it erodes with (at least the 3 x 3 cells around it
 * and 6 m in radius), both when it slows and when it fills a dip, and
 * lays its whole load down where it stops.  Deposits in the four cells under the droplet left
 * a speckle of bumps and pits, and sharpened grooves down steep faces;
 * a brush as wide as the erosion's fills the gullies it cuts.
 *
 * Resolution independence: the parameters are physical.  Rain is droplets
 * per km², lifetime and erosion radius are metres, slopes are metres per
 * metre, and a droplet steps 2 m (STEP_M; one cell where cells are
 * coarser) with the per-step rates given for a 4 m step and compounded to
 * the real one, so a 513 preview and a 4097 build of the same world carve
 * the same valleys, and a 1 m build takes half the steps of one-cell
 * steps.  Each step samples the height and its gradient bilinearly where
 * the droplet is and erodes or deposits through brushes at least 1.5
 * steps wide, so brushes a step apart cover the path without dots or
 * pits, and a fall is judged over the step's first cell too.  The
 * drainage input is read per 4 m of contour width (channel_map): the
 * area draining through a cell of a face grows with the cell.
 *
 * Simulation cell: a brush of the same metres covers 4x the cells at
 * half the cell, so a 1 m build cost about twice a 2 m build's droplets.
 * With cell_m, cells finer than it run the droplets on a world-anchored
 * grid of every F-th sample (erosion_hydraulic_coarse.c): the input
 * averaged onto it, the grid's change laid back smoothly over the map's
 * own detail.  Cells already as coarse are untouched.
 *
 * Determinism and tiled builds: the droplets run in rounds of four phases
 * on a world-anchored lattice of tiles wider than twice a droplet's reach
 * (erosion_hydraulic_sim.c).  Each phase changes every cell from the state
 * within one lattice tile's reach, so the whole-world evaluation and a
 * tiled build (one step per phase, TgTiledScheme below) run the same
 * arithmetic, and nothing depends on the thread count or the tiling.
 */
#include <math.h>
#include <stdatomic.h>
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
/* A droplet's step, or one cell where cells are coarser.  4 m was
 * measured too: at 2 m cells it cut the droplets' work by a third
 * (alpine 2049: rain 33.4 -> 21.8 s CPU) and eroded closer to the 4 m
 * build's volume, but it took the drainage-following and gully
 * branching the tests pin at 2 m cells away (tilted plane: erosion on
 * drainage lines 1.14x -> 0.71x their share; confluences with feedback
 * 2.62 -> 1.41 per km), as 4 m cells never had them.  2 m keeps every
 * build of 2 m cells or coarser as it was and halves a 1 m build's steps. */
#define STEP_M 2.0
#define GRAVITY 9.81
/* A step that drops more than this many metres per metre (79 degrees) is
 * a fall, not a slope water erodes: on alpine 1 step in 55 000 at 4 m
 * cells.  At 20 (87 degrees) a curve's 250 m steps still dug the foot of
 * each cliff 270 m below the lowest input. */
#define FALL_SLOPE 5.0
#define BRUSH_MAX TG__HYDRAULIC_BRUSH_MAX
/* The channel factor's range (erosion_hydraulic_flow.c): a face with
 * little upslope area keeps a third of the capacity, a drainage line gets
 * at most twice it (four times cut runaway trenches). */
#define CHANNEL_FLOOR 0.35
#define CHANNEL_CEIL 2.0

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
  double channel_area_m2;
  double channel_exponent;
  double face_radius_m;
  double channel_pull_m;
  double discharge_area_m2;
  double cell_m;
} HydraulicParams;

static const TgParamDesc hydraulic_params[] = {
  TG_PARAM_SEED (HydraulicParams, seed, .label = N_("Seed"), .help = N_("Where the droplets fall")),
  TG_PARAM_FLOAT (HydraulicParams, droplets_per_km2, .label = N_("Rain"), .def = 60000.0,
                  .min = 0.0, .max = 1e8, .soft_min = 0.0, .soft_max = 400000.0, .unit = "1/km²",
                  .help = N_("Droplets per square kilometre of world, the same at any resolution")),
  TG_PARAM_FLOAT (HydraulicParams, lifetime_m, .label = N_("Droplet travel"), .def = 400.0,
                  .min = 1.0, .max = 1e5, .soft_min = 16.0, .soft_max = 2000.0, .unit = "m",
                  .help = N_("How far a droplet runs before it soaks away")),
  TG_PARAM_FLOAT (HydraulicParams, radius_m, .label = N_("Erosion radius"), .def = 8.0, .min = 0.0,
                  .max = 1e4, .soft_min = 0.0, .soft_max = 64.0, .unit = "m",
                  .help = N_("Width of the ground a droplet wears away around its path")),
  TG_PARAM_FLOAT (HydraulicParams, inertia, .label = N_("Inertia"), .def = 0.1, .min = 0.0,
                  .max = 0.99,
                  .help = N_("How much a droplet keeps its direction over 4 m instead of turning "
                             "downhill; higher gives smoother, wider bends")),
  TG_PARAM_FLOAT (HydraulicParams, capacity, .label = N_("Capacity"), .def = 8.0, .min = 0.0,
                  .max = 1e4, .soft_min = 0.0, .soft_max = 50.0,
                  .help = N_("Sediment a droplet can carry, in m³ per "
                             "unit of slope, speed (m/s) and water")),
  TG_PARAM_FLOAT (HydraulicParams, erosion, .label = N_("Erosion rate"), .def = 0.3, .min = 0.0,
                  .max = 1.0,
                  .help = N_("Share of its spare capacity a droplet picks up over 4 m")),
  TG_PARAM_FLOAT (HydraulicParams, deposition, .label = N_("Deposition rate"), .def = 0.3,
                  .min = 0.0, .max = 1.0,
                  .help = N_("Share of its excess load a droplet drops over 4 m")),
  TG_PARAM_FLOAT (HydraulicParams, evaporation, .label = N_("Evaporation"), .def = 0.02, .min = 0.0,
                  .max = 1.0, .help = N_("Share of its water a droplet loses over 4 m")),
  TG_PARAM_FLOAT (HydraulicParams, friction, .label = N_("Friction"), .def = 0.1, .min = 0.0,
                  .max = 1.0,
                  .help = N_("Share of its kinetic energy a droplet "
                             "loses over 4 m; limits its speed")),
  TG_PARAM_FLOAT (HydraulicParams, mask_full_m, .label = N_("Full mask depth"), .def = 4.0,
                  .min = 0.001, .max = 1e4, .soft_min = 0.05, .soft_max = 20.0, .unit = "m",
                  .help = N_("Depth of erosion or deposit that reads "
                             "as 1 in the wear and deposit masks")),
  TG_PARAM_FLOAT (HydraulicParams, channel_area_m2, .label = N_("Channel area"), .def = 1000.0,
                  .min = 1.0, .max = 1e10, .soft_min = 100.0, .soft_max = 200000.0, .unit = "m²",
                  .help = N_("With a drainage input: upslope area at which droplets carry their "
                             "plain capacity; more area carries more, less carries less")),
  TG_PARAM_FLOAT (HydraulicParams, channel_exponent, .label = N_("Channel exponent"), .def = 1.0,
                  .min = 0.0, .max = 2.0,
                  .help = N_("With a drainage input: how fast capacity grows with upslope area "
                             "(0: not at all); it stays within 0.35 and 2 times the plain one")),
  TG_PARAM_FLOAT (HydraulicParams, face_radius_m, .label = N_("Face erosion radius"), .def = 0.0,
                  .min = 0.0, .max = 1e4, .soft_min = 0.0, .soft_max = 128.0, .unit = "m",
                  .help = N_("With a drainage input: erosion radius on faces with little upslope "
                             "area, which smooths grooves across them (0: the erosion radius)")),
  TG_PARAM_FLOAT (HydraulicParams, channel_pull_m, .label = N_("Channel pull"), .def = 32.0,
                  .min = 0.0, .max = 1e4, .soft_min = 0.0, .soft_max = 200.0, .unit = "m",
                  .help = N_("With a drainage input: how readily droplets turn into the drainage "
                             "line beside them and merge there; with gully feedback: how far to "
                             "each side a droplet feels the water of the gullies beside it and "
                             "turns toward them (0: they only follow the slope)")),
  TG_PARAM_FLOAT (HydraulicParams, discharge_area_m2, .label = N_("Gully feedback area"),
                  .def = 0.0, .min = 0.0, .max = 1e10, .soft_min = 0.0, .soft_max = 200000.0,
                  .unit = "m²",
                  .help = N_("Area draining through a gully as wide as the erosion brush, "
                             "measured by the water earlier droplets ran through it, at which "
                             "droplets carry their plain capacity: gullies that "
                             "carry more cut faster and draw the water beside them in, so they "
                             "join into branching networks (0: off)")),
  TG_PARAM_FLOAT (HydraulicParams, cell_m, .label = N_("Simulation cell"), .def = 0.0, .min = 0.0,
                  .max = 10000.0, .soft_min = 0.0, .soft_max = 8.0, .unit = "m",
                  .help = N_("Cell the droplets run on where the map's cells are finer: as many "
                             "whole map cells as fit in it; the change they make is laid "
                             "smoothly over the map's own detail.  A 1 m build at 2 m erodes as "
                             "a 2 m build does, in about half the time (0: the map's own "
                             "cell)")),
};

static const TgPortDesc hydraulic_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Terrain to erode") },
  { .name = "flow", .type = TG_TYPE_MASK, .label = N_("Drainage"), .optional = true,
    .help = N_("erosion.flow of the terrain before erosion: droplets erode more along drainage "
               "lines and less on faces, carving branching gullies instead of parallel grooves") },
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
/* The simulation's context is the eval's (see eval_parallel). */
static bool
eval_cancelled (void *ctx)
{
  return tg_eval_cancelled (ctx);
}

static void
hydraulic_setup (TgHydraulicSetup *s, const HydraulicParams *p, const TgWorld *world,
                 const TgRegion *full, uint32_t seed)
{
  double cell = full->cell, hm = world->height_m > 0 ? world->height_m : 1;
  double step_m = cell > STEP_M ? cell : STEP_M, f = step_m / REF_STEP_M;
  double area_km2 = (double) (full->full_w - 1) * (double) (full->full_h - 1) * cell * cell * 1e-6;
  double steps = ceil (p->lifetime_m / step_m - 1e-9);

  memset (s, 0, sizeof *s);
  s->seed = seed;
  s->cancelled = eval_cancelled;
  s->droplets = (long long) llround (p->droplets_per_km2 * area_km2);
  s->rounds = 16;
  s->max_steps = steps < 1 ? 1 : (steps > 1e6 ? 1000000 : (int) steps);
  s->step = (float) (step_m / cell);
  s->inertia = (float) pow (p->inertia, f);
  /* m³ of sediment -> height units x cells. */
  s->capacity = (float) (p->capacity / (cell * cell * hm));
  s->min_slope = 0.01f;
  s->fall_slope = (float) FALL_SLOPE;
  s->erode = (float) (1.0 - pow (1.0 - p->erosion, f));
  s->deposit = (float) (1.0 - pow (1.0 - p->deposition, f));
  s->evaporate = (float) pow (1.0 - p->evaporation, f);
  s->friction = (float) pow (1.0 - p->friction, f);
  s->gravity = (float) (2.0 * GRAVITY * hm);
  s->height_scale = (float) hm;
  s->cell_m = (float) cell;
  /* At least 1.5 steps (1.5 cells at one cell a step): brushes laid a
   * step apart cover the path (see deposit_radius_for). */
  s->brush_radius = (float) fmax (p->radius_m / cell, 1.5 * s->step);
  if (s->brush_radius > BRUSH_MAX)
    s->brush_radius = BRUSH_MAX;
  /* Deposit brushes of at least 6 m radius, a 4 m build's 1.5 cells
   * (see deposit_radius_for). */
  s->deposit_min = (float) fmin (1.5 * REF_STEP_M / cell, BRUSH_MAX);
  /* The face brush shapes the lattice (its reach), so it comes from the
   * parameters alone, linked input or not; 0 keeps the plain lattice. */
  s->channel_floor = (float) CHANNEL_FLOOR;
  s->channel_pull = (float) (p->channel_pull_m / cell);
  if (p->face_radius_m > 0.0)
    s->face_radius = (float) fmin (fmax (p->face_radius_m / cell, s->brush_radius), BRUSH_MAX);
  /* A gully's water spreads over the brush's width W (metres), W / cell
   * cells: the area draining through it is a cell's water over the rain
   * per cell times cell x W, the same at any resolution. */
  s->discharge_area = (float) (p->discharge_area_m2 / (2.0 * s->brush_radius * cell * cell));
  s->channel_exponent = (float) p->channel_exponent;
  s->channel_ceil = (float) CHANNEL_CEIL;
}

/* The grid the droplets run on: every F-th sample of the build's lattice
 * from sample 0 (F = 1: the lattice itself), as a whole-world region of
 * cells F times the build's.  Where F does not divide the lattice, the
 * grid reaches a little past the world's edge (clamped input there). */
typedef struct
{
  int f;
  TgRegion full;
} HydGrid;

/* F at most this (and the grid 3 samples a side or more). */
#define SIM_F_MAX 64

static HydGrid
hydraulic_grid (const HydraulicParams *p, const TgRegion *full)
{
  HydGrid g = { 1, *full };
  double q = p->cell_m / full->cell;
  int most = ((full->full_w < full->full_h ? full->full_w : full->full_h) - 1) / 2;
  int f = q >= SIM_F_MAX ? SIM_F_MAX : (q > 1.0 ? (int) floor (q * (1.0 + 1e-9)) : 1);

  f = f < most ? f : most;
  if (!(p->cell_m > 0.0) || f < 2)
    return g;
  g.f = f;
  g.full.cell = full->cell * f;
  g.full.full_w = g.full.width = tg__hydraulic_coarse_n (full->full_w, f);
  g.full.full_h = g.full.height = tg__hydraulic_coarse_n (full->full_h, f);
  g.full.col0 = g.full.row0 = 0;
  return g;
}

/* The grid and the setup on it for a build over FULL; the build's own
 * lattice where the coarser grid would have no droplets to run. */
static void
hydraulic_plan (HydGrid *g, TgHydraulicSetup *s, const HydraulicParams *p, const TgWorld *world,
                const TgRegion *full, uint32_t seed)
{
  *g = hydraulic_grid (p, full);
  hydraulic_setup (s, p, world, &g->full, seed);
  if (g->f > 1 && tg__hydraulic_phases (s, g->full.full_w, g->full.full_h) == 0)
    {
      *g = (HydGrid) { 1, *full };
      hydraulic_setup (s, p, world, full, seed);
    }
}

/* The cells the drainage is averaged over on each side before it sets the
 * channel factor: the widest erosion brush's radius, so that a droplet
 * follows drainage lines as wide as it erodes, not every one-cell
 * thalweg of the input, and the factor changes no faster than the brush
 * can follow. */
static int
channel_smooth_cells (const TgHydraulicSetup *s)
{
  return (int) ceilf (s->face_radius > s->brush_radius ? s->face_radius : s->brush_radius);
}

/* The channel factor over M (W x H), from the area per 4 m of width
 * draining through each cell, in place; 0 or TG_ENOMEM. */
static int
channel_factor (const HydraulicParams *p, const TgHydraulicSetup *s, float *m, int w, int h)
{
  size_t n = (size_t) w * (size_t) h;
  float *tmp = malloc (sizeof (float) * (n ? n : 1));

  if (!tmp)
    return TG_ENOMEM;
  tg__hydraulic_channel_smooth (m, tmp, w, h, channel_smooth_cells (s));
  free (tmp);
  for (size_t k = 0; k < n; k++)
    m[k] = tg__hydraulic_channel_factor (m[k], p->channel_area_m2, p->channel_exponent,
                                         CHANNEL_FLOOR, CHANNEL_CEIL);
  return 0;
}

/* How the channel map reads the drainage mask of a build over OVER.  The
 * area draining through a cell grows with its width where water spreads
 * (a face: the slope's length times the cell), and the average in
 * channel_factor spreads a line's area over the window too; the factor
 * reads it per 4 m of width, as a 4 m build sees it.  Read per cell, a
 * 2 m build had half the factor (alpine 2049: 25 % less eroded than
 * 1025).  Per 4 m of width, a coarser simulation grid averages it. */
static TgHydraulicDecode
channel_decode (TgEvalCtx *c, const TgRegion *over)
{
  TgHydraulicDecode d;

  tg__erosion_area_scale (tg_eval_world (c), over, &d.ref_area, &d.log_max);
  d.scale = REF_STEP_M / over->cell;
  return d;
}

/* The channel map from the drainage input FL over OVER (a window FL
 * holds) into a new *MAP; 0, or the code the node failed with.  Cells
 * within the smoothing of OVER's edge are exact only at the world's edge
 * (the tiled scheme's halo covers the rest). */
static int
channel_map (TgEvalCtx *c, const TgHydraulicSetup *s, const TgValue *fl, const TgRegion *over,
             float **map)
{
  const HydraulicParams *p = tg_eval_params (c);
  size_t n = (size_t) over->width * (size_t) over->height;
  TgHydraulicDecode d = channel_decode (c, over);
  float *m;
  int rc;

  if ((rc = tg__check_grid_input (c, fl, "flow", over)) < 0)
    return rc;
  m = malloc (sizeof (float) * (n ? n : 1));
  if (!m)
    return tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d map", over->width,
                         over->height);
  for (int j = 0; j < over->height; j++)
    {
      const float *row = tg__grid_row (fl, over, j);
      float *o = m + (size_t) j * over->width;
      for (int i = 0; i < over->width; i++)
        o[i] = tg__hydraulic_drainage_area (row[i], d.ref_area, d.log_max) * (float) d.scale;
    }
  if (channel_factor (p, s, m, over->width, over->height) < 0)
    {
      free (m);
      return tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d map", over->width,
                           over->height);
    }
  *map = m;
  return 0;
}

/* --- the coarser simulation grid ------------------------------------------- */

static TgHydraulicRect
value_rect (const TgValue *v)
{
  return (TgHydraulicRect) { v->region.col0, v->region.row0, v->region.width, v->region.height };
}

static bool
rect_holds (const TgHydraulicRect *a, const TgHydraulicRect *b)
{
  return b->x0 >= a->x0 && b->y0 >= a->y0 && b->x0 + b->w <= a->x0 + a->w
         && b->y0 + b->h <= a->y0 + a->h;
}

typedef struct
{
  const float *src;
  TgHydraulicRect sr, dr;
  int w, h, f;
  const TgHydraulicDecode *dec;
  float *dst;
  atomic_int failed;
} HydDown;

static void
hydraulic_down_rows (void *user, int begin, int end)
{
  HydDown *job = user;

  if (tg__hydraulic_downsample (job->src, &job->sr, job->w, job->h, job->f, job->dec, job->dst,
                                &job->dr, begin, end)
      < 0)
    atomic_store (&job->failed, 1);
}

/* Input IN (port NAME; decoded with DEC when not NULL) averaged onto the
 * grid's window DR into a new *OUT; 0, or the code the node failed with. */
static int
coarse_input (TgEvalCtx *c, const HydGrid *g, const TgValue *in, const char *name,
              const TgHydraulicDecode *dec, const TgHydraulicRect *dr, float **out)
{
  const TgRegion *r = tg_eval_region (c);
  HydDown job;
  TgHydraulicRect need;
  int rc;

  *out = NULL;
  if (!in || !in->data)
    return tg_eval_fail (c, TG_EMISSING, TG_MSG_INPUT_NO_DATA, name);
  if (in->channels != 1)
    return tg_eval_fail (c, TG_ETYPE, TG_MSG_INPUT_CHANNELS, name, in->channels, 1);
  memset (&job, 0, sizeof job);
  job.src = in->data;
  job.sr = value_rect (in);
  job.dr = *dr;
  job.w = r->full_w;
  job.h = r->full_h;
  job.f = g->f;
  job.dec = dec;
  tg__hydraulic_down_reach (dr, g->f, r->full_w, r->full_h, &need);
  if (!rect_holds (&job.sr, &need))
    return tg_eval_fail (c, TG_EINVAL, TG_MSG_INPUT_NOT_COVERED, name);
  job.dst = *out = malloc (sizeof (float) * (size_t) dr->w * (size_t) dr->h);
  if (!job.dst)
    return tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d grid", dr->w, dr->h);
  atomic_init (&job.failed, 0);
  rc = tg_eval_parallel (c, dr->h, tg__grain_rows_cost (dr->w, 4 * g->f * g->f), hydraulic_down_rows,
                         &job);
  if (rc == 0 && atomic_load (&job.failed))
    rc = tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  if (rc < 0)
    {
      free (*out);
      *out = NULL;
    }
  return rc;
}

/* The channel map over the grid's window DR from the drainage input FL:
 * the area per 4 m of width averaged onto the grid, then smoothed and
 * turned into the factor there as a build of the grid's cells does. */
static int
coarse_channel_map (TgEvalCtx *c, const HydGrid *g, const TgHydraulicSetup *s, const TgValue *fl,
                    const TgHydraulicRect *dr, float **map)
{
  TgHydraulicDecode d = channel_decode (c, tg_eval_region (c));
  int rc = coarse_input (c, g, fl, "flow", &d, dr, map);

  if (rc == 0 && channel_factor (tg_eval_params (c), s, *map, dr->w, dr->h) < 0)
    {
      free (*map);
      *map = NULL;
      rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d grid", dr->w, dr->h);
    }
  return rc;
}

static int
eval_parallel (void *ctx, int n, void (*fn) (void *, int, int), void *user)
{
  return tg_eval_parallel (ctx, n, 1, fn, user);
}

/* The simulation's change on a coarser grid: the height change DZ and
 * the raw flow FLOW over the grid's window CR (F fine cells a cell, a
 * CW x CH grid), what the finish lays over the build's samples. */
typedef struct
{
  const float *dz, *flow;
  TgHydraulicRect cr;
  int f, cw, ch;
  float (*wt)[4];
} HydCoarse;

/* How the masks read the eroded map: what the rows of the finish see. */
typedef struct
{
  const float *src, *hm, *flow;  /* input, eroded height, raw flow; WIDTH a row */
  size_t src_stride;
  const HydCoarse *co;           /* or the height and flow from a coarser grid */
  const TgRegion *r;              /* the outputs' region */
  TgValue *height, *flow_out, *wear, *deposit; /* those anything reads */
  double to_m, mask_full_m;
  double flow_unit, flow_log_max;
  atomic_int failed;
} HydFinish;

static void
hydraulic_finish_rows (void *user, int begin, int end)
{
  HydFinish *job = user;
  const TgRegion *r = job->r;
  const HydCoarse *co = job->co;
  float *buf = NULL;

  if (co && !(buf = malloc (sizeof (float) * (2 * (size_t) r->width + (size_t) co->cr.w))))
    {
      atomic_store (&job->failed, 1);
      return;
    }
  for (int j = begin; j < end; j++)
    {
      const float *src = job->src + (size_t) j * job->src_stride;
      const float *e, *fl;
      float *ho = job->height ? tg_value_row (job->height, j) : NULL;
      float *fo = job->flow_out ? tg_value_row (job->flow_out, j) : NULL;
      float *wo = job->wear ? tg_value_row (job->wear, j) : NULL;
      float *dpo = job->deposit ? tg_value_row (job->deposit, j) : NULL;
      if (co)
        {
          /* The input plus the change, and the water, from the grid. */
          float *eb = buf, *fb = buf + r->width, *tmp = fb + r->width;
          int y = r->row0 + j;
          tg__hydraulic_upsample_row (co->dz, &co->cr, co->cw, co->ch, co->f,
                                      (const float (*)[4]) co->wt, y, r->col0, r->width, tmp, eb);
          for (int i = 0; i < r->width; i++)
            eb[i] += src[i];
          if (fo)
            {
              tg__hydraulic_upsample_row (co->flow, &co->cr, co->cw, co->ch, co->f,
                                          (const float (*)[4]) co->wt, y, r->col0, r->width, tmp,
                                          fb);
              for (int i = 0; i < r->width; i++)
                fb[i] = fb[i] > 0.0f ? fb[i] : 0.0f;
            }
          e = eb;
          fl = fb;
        }
      else
        {
          e = job->hm + (size_t) j * r->width;
          fl = job->flow ? job->flow + (size_t) j * r->width : NULL;
        }
      if (ho)
        memcpy (ho, e, sizeof (float) * (size_t) r->width);
      for (int i = 0; (wo || dpo) && i < r->width; i++)
        {
          double d = ((double) e[i] - (double) src[i]) * job->to_m;
          if (wo)
            wo[i] = tg__erosion_mask_linear (-d, job->mask_full_m);
          if (dpo)
            dpo[i] = tg__erosion_mask_linear (d, job->mask_full_m);
        }
      for (int i = 0; fo && i < r->width; i++)
        fo[i] = tg__erosion_mask_linear (log1p ((double) fl[i] * job->flow_unit),
                                         job->flow_log_max);
    }
  free (buf);
}

/* Sets the four outputs over the context's region from the input SRC
 * (rows SRC_STRIDE apart), the eroded height HM and the raw flow FLOW,
 * or from the change on a coarser grid CO: those anything reads (the
 * flow only then, and FLOW may be NULL without it). */
static int
hydraulic_finish (TgEvalCtx *c, const float *src, size_t src_stride, const float *hm,
                  const float *flow, const HydCoarse *co)
{
  const HydraulicParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  HydFinish fin;
  int rc;

  memset (&fin, 0, sizeof fin);
  fin.r = r;
  fin.src = src;
  fin.src_stride = src_stride;
  fin.hm = hm;
  fin.flow = flow;
  fin.co = co;
  atomic_init (&fin.failed, 0);
  fin.to_m = tg_eval_world (c)->height_m;
  fin.mask_full_m = p->mask_full_m;
  /* Water through a cell per droplet per m² of world, times the cell
   * width: roughly the length of slope above that drains through it (m),
   * the same at any resolution.  Over 4 m units on a log scale, full at
   * 64 droplet travels.  The water of a coarser grid is per its cell of
   * path, its width the grid's cell. */
  {
    double dens = p->droplets_per_km2 * 1e-6;
    double cell = co ? r->cell * co->f : r->cell;
    fin.flow_unit = dens > 0 ? 1.0 / (dens * cell * REF_STEP_M) : 0.0;
    fin.flow_log_max = log1p (64.0 * p->lifetime_m / REF_STEP_M);
  }
  for (int k = 0; k < 4; k++)
    {
      TgValue **out[4] = { &fin.height, &fin.flow_out, &fin.wear, &fin.deposit };
      if (tg_eval_output_wanted (c, k) && !(*out[k] = tg_eval_new_output (c, k, 1)))
        return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
    }
  rc = tg_eval_parallel (c, r->height, tg__grain_rows (r->width), hydraulic_finish_rows, &fin);
  if (rc == 0 && atomic_load (&fin.failed))
    rc = tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  return rc;
}

static int
sim_failed (TgEvalCtx *c, int rc)
{
  if (rc == TG_ECANCELLED)
    return rc;
  return tg_eval_fail (c, rc, "%s", tg_strerror (rc));
}

/* The pad that puts the flow half a page off the height in one block:
 * at the same offset in a page, every flow update of a droplet stalls on
 * the brush's stores to the height beside it (4 KiB aliasing; 16 % of
 * the simulation's time at 2048²). */
static size_t
flow_pad (size_t n)
{
  return 512 + (1024 - n % 1024) % 1024;
}

/* The whole world on the coarser grid G with the setup S. */
static int
hydraulic_eval_coarse (TgEvalCtx *c, const HydGrid *g, TgHydraulicSetup *s)
{
  const TgRegion *r = tg_eval_region (c);
  const TgValue *in = tg_eval_input (c, 0), *fl = tg_eval_input (c, 1);
  int cw = g->full.full_w, ch = g->full.full_h;
  size_t n = (size_t) cw * (size_t) ch, pad = flow_pad (n);
  TgHydraulicRect cr = { 0, 0, cw, ch };
  float *cin = NULL, *chan = NULL, *hm = NULL, *flow, (*wt)[4] = NULL;
  TgHydraulicStats st;
  HydCoarse co;
  /* The water map only for the flow output: the droplets' sums into it
   * are ~40 % of a droplet step's time (bench_erosion). */
  bool water = tg_eval_output_wanted (c, 1);
  int rc;

  if ((rc = tg__check_grid_input (c, in, "height", r)) < 0)
    return rc;
  if ((rc = coarse_input (c, g, in, "height", NULL, &cr, &cin)) < 0)
    return rc;
  if (fl && (rc = coarse_channel_map (c, g, s, fl, &cr, &chan)) < 0)
    goto out;
  s->channel = chan;
  hm = malloc (sizeof (float) * (water ? 2 * n + pad : n));
  wt = malloc (sizeof *wt * (size_t) g->f);
  if (!hm || !wt)
    {
      rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d grid", cw, ch);
      goto out;
    }
  flow = water ? hm + n + pad : NULL;
  if (flow)
    memset (flow, 0, sizeof (float) * n);
  memcpy (hm, cin, sizeof (float) * n);
  rc = tg__hydraulic_simulate (s, hm, flow, cw, ch, eval_parallel, c, &st);
  if (rc < 0)
    {
      rc = sim_failed (c, rc);
      goto out;
    }
  for (size_t k = 0; k < n; k++)
    cin[k] = hm[k] - cin[k];
  tg__hydraulic_up_weights (g->f, wt);
  co = (HydCoarse) { cin, flow, cr, g->f, cw, ch, wt };
  rc = hydraulic_finish (c, tg__grid_row (in, r, 0), (size_t) in->region.width, NULL, NULL, &co);
out:
  free (cin);
  free (chan);
  free (hm);
  free (wt);
  return rc;
}

static int
hydraulic_eval (TgEvalCtx *c)
{
  const HydraulicParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  const TgValue *in = tg_eval_input (c, 0), *fl = tg_eval_input (c, 1);
  TgHydraulicSetup s;
  TgHydraulicStats st;
  HydGrid g;
  float *chan = NULL;
  size_t n = (size_t) r->width * (size_t) r->height, pad = flow_pad (n);
  float *hm, *flow;
  bool water = tg_eval_output_wanted (c, 1); /* as in hydraulic_eval_coarse */
  int rc;

  hydraulic_plan (&g, &s, p, tg_eval_world (c), r, tg_eval_seed (c, p->seed));
  if (g.f > 1)
    return hydraulic_eval_coarse (c, &g, &s);
  if ((rc = tg__check_grid_input (c, in, "height", r)) < 0)
    return rc;
  if (fl && (rc = channel_map (c, &s, fl, r, &chan)) < 0)
    return rc;
  s.channel = chan;
  s.threads = tg_eval_threads (c);
  hm = malloc (sizeof (float) * (water ? 2 * n + pad : n));
  if (!hm)
    {
      free (chan);
      return tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d map", r->width, r->height);
    }
  flow = water ? hm + n + pad : NULL;
  if (flow)
    memset (flow, 0, sizeof (float) * n);
  for (int j = 0; j < r->height; j++)
    memcpy (hm + (size_t) j * r->width, tg__grid_row (in, r, j),
            sizeof (float) * (size_t) r->width);
  rc = tg__hydraulic_simulate (&s, hm, flow, r->width, r->height, eval_parallel, c, &st);
  if (rc < 0)
    rc = sim_failed (c, rc);
  else
    rc = hydraulic_finish (c, tg__grid_row (in, r, 0), (size_t) in->region.width, hm, flow,
                           NULL);
  free (hm);
  free (chan);
  return rc;
}

/* --- the tiled scheme ------------------------------------------------------ */

/* One step per phase; the first reads the terrain around its tile, the
 * others only the blobs of the step before. */

static void
tiled_setup (HydGrid *g, TgHydraulicSetup *s, const void *params, const TgRegion *full,
             uint32_t seed)
{
  TgWorld world;

  /* Only the seed and height_m matter beyond the lattice; the counts and
   * reaches that shape the scheme do not depend on either. */
  tg_world_init_default (&world);
  hydraulic_plan (g, s, params, &world, full, seed);
}

/* The phases on grid G: one step each; on a coarser grid one more, which
 * lays the change over the tile. */
static int
hydraulic_n_steps (const void *params, const TgRegion *full)
{
  TgHydraulicSetup s;
  HydGrid g;
  int phases;

  tiled_setup (&g, &s, params, full, 0);
  phases = tg__hydraulic_phases (&s, g.full.full_w, g.full.full_h);
  return phases > 0 ? phases + (g.f > 1) : 1;
}

/* Samples of the grid around a tile its first step reads: the droplets'
 * reach, and the drainage input's smoothing around it. */
static int
grid_halo (const TgHydraulicSetup *s)
{
  return tg__hydraulic_halo (s) + 2 * channel_smooth_cells (s);
}

static int
hydraulic_halo (const void *params, const TgRegion *full, int step)
{
  TgHydraulicSetup s;
  HydGrid g;

  if (step > 0)
    return -1;
  tiled_setup (&g, &s, params, full, 0);
  if (tg__hydraulic_phases (&s, g.full.full_w, g.full.full_h) == 0)
    return 0;
  /* On a coarser grid, the fine samples under that and the average's
   * reach: a grid tile starts up to F samples before F times its first
   * sample's (see tile_step_coarse). */
  return g.f > 1 ? g.f * (grid_halo (&s) + 3) : grid_halo (&s);
}

/* The blobs through the context; a failure has its message on the node
 * already, which FAILED keeps from being overwritten. */
typedef struct
{
  TgEvalCtx *c;
  bool failed;
} BlobIo;

static int
blob_get (void *user, int ix, int iy, const char *name, void **data, size_t *size)
{
  BlobIo *b = user;
  int rc = tg_eval_blob_get (b->c, ix, iy, name, data, size);

  b->failed = b->failed || rc < 0;
  return rc;
}

static int
blob_put (void *user, const char *name, const void *data, size_t size)
{
  BlobIo *b = user;
  int rc = tg_eval_blob_put (b->c, name, data, size);

  b->failed = b->failed || rc < 0;
  return rc;
}

static int
blob_drop (void *user, const char *name)
{
  BlobIo *b = user;
  const TgTiling *t = tg_eval_tiling (b->c);
  int rc = tg_eval_blob_drop (b->c, t->ix, t->iy, name);

  b->failed = b->failed || rc < 0;
  return rc;
}

/* Tile (IX, IY) of T over a W x H grid (tiled.h's rule). */
static TgHydraulicRect
grid_tile (const TgTiling *t, int w, int h, int ix, int iy)
{
  int x0 = tg_tile_start (w, t->nx, ix), y0 = tg_tile_start (h, t->ny, iy);

  return (TgHydraulicRect) { x0, y0, tg_tile_start (w, t->nx, ix + 1) - x0,
                             tg_tile_start (h, t->ny, iy + 1) - y0 };
}

/* Blob NAME of every tile of T over a W x H grid that meets NEED, into
 * BUF over NEED. */
static int
gather_grid (const TgHydraulicBlobs *io, const TgTiling *t, int w, int h, const char *name,
             const TgHydraulicRect *need, float *buf)
{
  int rc = 0;

  for (int iy = 0; iy < t->ny && rc == 0; iy++)
    for (int ix = 0; ix < t->nx && rc == 0; ix++)
      {
        TgHydraulicRect b = grid_tile (t, w, h, ix, iy);
        int x0 = b.x0 > need->x0 ? b.x0 : need->x0, y0 = b.y0 > need->y0 ? b.y0 : need->y0;
        int x1 = b.x0 + b.w < need->x0 + need->w ? b.x0 + b.w : need->x0 + need->w;
        int y1 = b.y0 + b.h < need->y0 + need->h ? b.y0 + b.h : need->y0 + need->h;
        void *d = NULL;
        size_t size = 0;
        if (x1 <= x0 || y1 <= y0)
          continue;
        if ((rc = io->get (io->user, ix, iy, name, &d, &size)) < 0)
          break;
        if (size != sizeof (float) * (size_t) b.w * (size_t) b.h)
          rc = TG_EPARSE;
        else
          for (int y = y0; y < y1; y++)
            memcpy (buf + (size_t) (y - need->y0) * need->w + (x0 - need->x0),
                    (const float *) d + (size_t) (y - b.y0) * b.w + (x0 - b.x0),
                    sizeof (float) * (size_t) (x1 - x0));
        free (d);
      }
  return rc;
}

/* The tiled scheme on a coarser grid G (setup S): the grid cut into the
 * build's tile counts, tile (IX, IY) of it run by the job of the build's
 * tile (IX, IY).  Step 0 keeps the tile's input (blob "src") and averages
 * the input around it onto the grid; the grid's phases run as on the
 * build's own lattice, the last keeping the grid tile's change and water
 * ("dz", "dq"); one more step lays them over the tile. */
static int
tile_step_coarse (TgEvalCtx *c, int step, const HydGrid *g, TgHydraulicSetup *s)
{
  const TgRegion *r = tg_eval_region (c);
  const TgTiling *t = tg_eval_tiling (c);
  int cw = g->full.full_w, ch = g->full.full_h;
  int phases = tg__hydraulic_phases (s, cw, ch);
  TgHydraulicRect J = grid_tile (t, cw, ch, t->ix, t->iy), in_rect = { 0 };
  TgHydraulicRect fr = { r->col0, r->row0, r->width, r->height };
  size_t n = (size_t) r->width * (size_t) r->height, jn = (size_t) J.w * (size_t) J.h;
  BlobIo bio = { c, false };
  TgHydraulicBlobs io = { &bio, blob_get, blob_put, blob_drop };
  float *cin = NULL, *chan = NULL, *hm = NULL, *flow = NULL, *src = NULL, (*wt)[4] = NULL;
  int rc = 0;

  if (cw < t->nx || ch < t->ny)
    return tg_eval_fail (c, TG_ERANGE,
                         "params.cell_m: the %d x %d simulation grid is too small for %d x %d "
                         "tiles",
                         cw, ch, t->nx, t->ny);
  if (step == 0)
    {
      const TgValue *in = tg_eval_input (c, 0), *fl = tg_eval_input (c, 1);
      int halo = grid_halo (s);
      int x0 = J.x0 - halo < 0 ? 0 : J.x0 - halo, y0 = J.y0 - halo < 0 ? 0 : J.y0 - halo;
      int x1 = J.x0 + J.w + halo > cw ? cw : J.x0 + J.w + halo;
      int y1 = J.y0 + J.h + halo > ch ? ch : J.y0 + J.h + halo;
      if ((rc = tg__check_grid_input (c, in, "height", r)) < 0)
        return rc;
      /* The tile's own input, for the last step. */
      if (!(src = malloc (sizeof (float) * (n ? n : 1))))
        return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
      for (int j = 0; j < r->height; j++)
        memcpy (src + (size_t) j * r->width, tg__grid_row (in, r, j),
                sizeof (float) * (size_t) r->width);
      rc = io.put (io.user, "src", src, sizeof (float) * n);
      free (src);
      src = NULL;
      if (rc < 0)
        return rc;
      in_rect = (TgHydraulicRect) { x0, y0, x1 - x0, y1 - y0 };
      if ((rc = coarse_input (c, g, in, "height", NULL, &in_rect, &cin)) < 0)
        return rc;
      if (fl && (rc = coarse_channel_map (c, g, s, fl, &in_rect, &chan)) < 0)
        goto out;
      s->channel = chan;
    }
  if (step < phases)
    {
      bool last = step == phases - 1;
      if (last)
        {
          hm = malloc (sizeof (float) * jn);
          flow = malloc (sizeof (float) * jn);
          src = malloc (sizeof (float) * jn);
          if (!hm || !flow || !src)
            {
              rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d grid tile", J.w, J.h);
              goto out;
            }
        }
      rc = tg__hydraulic_tile_step (s, cw, ch, t, step, cin, &in_rect, &io, hm, flow, src,
                                    eval_parallel, c, NULL);
      if (rc < 0)
        {
          if (!bio.failed)
            rc = sim_failed (c, rc);
          goto out;
        }
      if (last)
        {
          for (size_t k = 0; k < jn; k++)
            hm[k] -= src[k];
          if ((rc = io.put (io.user, "dz", hm, sizeof (float) * jn)) == 0)
            rc = io.put (io.user, "dq", flow, sizeof (float) * jn);
        }
      goto out;
    }
  {
    TgHydraulicRect need;
    void *d = NULL;
    size_t size = 0;
    HydCoarse co;
    tg__hydraulic_up_reach (&fr, g->f, cw, ch, &need);
    hm = malloc (sizeof (float) * (size_t) need.w * (size_t) need.h);
    flow = malloc (sizeof (float) * (size_t) need.w * (size_t) need.h);
    wt = malloc (sizeof *wt * (size_t) g->f);
    if (!hm || !flow || !wt)
      {
        rc = tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
        goto out;
      }
    if ((rc = gather_grid (&io, t, cw, ch, "dz", &need, hm)) < 0
        || (rc = gather_grid (&io, t, cw, ch, "dq", &need, flow)) < 0
        || (rc = io.get (io.user, t->ix, t->iy, "src", &d, &size)) < 0)
      goto fail;
    src = d;
    if (size != sizeof (float) * n)
      {
        rc = TG_EPARSE;
        goto fail;
      }
    tg__hydraulic_up_weights (g->f, wt);
    co = (HydCoarse) { hm, flow, need, g->f, cw, ch, wt };
    rc = hydraulic_finish (c, src, (size_t) r->width, NULL, NULL, &co);
    goto out;
  }
fail:
  if (!bio.failed)
    rc = sim_failed (c, rc);
out:
  free (cin);
  free (chan);
  free (hm);
  free (flow);
  free (src);
  free (wt);
  return rc;
}

static int
hydraulic_tile_step (TgEvalCtx *c, int step)
{
  const HydraulicParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  const TgTiling *t = tg_eval_tiling (c);
  const TgValue *in = step == 0 ? tg_eval_input (c, 0) : NULL;
  const TgValue *fl = step == 0 ? tg_eval_input (c, 1) : NULL;
  BlobIo bio = { c, false };
  TgHydraulicBlobs io = { &bio, blob_get, blob_put, blob_drop };
  TgHydraulicRect in_rect = { 0 };
  TgHydraulicSetup s;
  HydGrid g;
  size_t n = (size_t) r->width * (size_t) r->height;
  float *hm = NULL, *flow = NULL, *src = NULL, *chan = NULL;
  bool last;
  int rc;

  if (!t)
    return tg_eval_fail (c, TG_EINVAL, "a tiled step outside a tiled build");
  hydraulic_plan (&g, &s, p, tg_eval_world (c), r, tg_eval_seed (c, p->seed));
  if (g.f > 1)
    return tile_step_coarse (c, step, &g, &s);
  if (step == 0)
    {
      if ((rc = tg__check_grid_input (c, in, "height", r)) < 0)
        return rc;
      in_rect = value_rect (in);
    }
  if (fl && (rc = channel_map (c, &s, fl, &in->region, &chan)) < 0)
    return rc;
  s.channel = chan;
  s.threads = tg_eval_threads (c);
  last = step == hydraulic_n_steps (p, r) - 1;
  if (last)
    {
      hm = malloc (sizeof (float) * n);
      flow = malloc (sizeof (float) * n);
      src = malloc (sizeof (float) * n);
      if (!hm || !flow || !src)
        {
          rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d tile", r->width,
                             r->height);
          goto out;
        }
    }
  rc = tg__hydraulic_tile_step (&s, r->full_w, r->full_h, t, step, in ? in->data : NULL,
                                &in_rect, &io, hm, flow, src, eval_parallel, c, NULL);
  if (rc < 0 && !bio.failed)
    rc = sim_failed (c, rc);
  else if (last)
    rc = hydraulic_finish (c, src, (size_t) r->width, hm, flow, NULL);
out:
  free (hm);
  free (flow);
  free (src);
  free (chan);
  return rc;
}

static const TgTiledScheme hydraulic_tiled = {
  .n_steps = hydraulic_n_steps,
  .halo = hydraulic_halo,
  .tile_step = hydraulic_tile_step,
};

/* The eroded heights and the water's flow, a float each over the world
 * (the droplets' tiles are small beside them); on a coarser grid, over
 * the grid, with its input, channel map and the map's smoothing.  The
 * simulation runs on copies of the height, the channel map and the flow
 * with padded rows (tg__hydraulic_pitch). */
static void
hydraulic_memory (TgMemQuery *q)
{
  TgHydraulicSetup s;
  HydGrid g;
  int w, h;

  tiled_setup (&g, &s, q->params, q->region, 0);
  w = g.f > 1 ? g.full.full_w : q->region->width;
  h = g.f > 1 ? g.full.full_h : q->region->height;
  if (g.f > 1)
    q->work += 5 * (uint64_t) w * (uint64_t) h * sizeof (float);
  else
    q->work += 2 * tg_region_samples (q->region) * sizeof (float);
  q->work += 3 * (uint64_t) tg__hydraulic_pitch (w) * (uint64_t) h * sizeof (float);
}

static int
hydraulic_warn (const void *params, double cell_m, TgError *warn)
{
  const HydraulicParams *p = params;
  TgRegion full = { .cell = cell_m, .full_w = 4097, .full_h = 4097 };
  HydGrid g = hydraulic_grid (p, &full);
  char r[32], sc[32];

  if (p->radius_m > 0.0
      && tg_warn_below_cells (warn, "radius_m", "Erosion radius", p->radius_m, cell_m, 1))
    return 1;
  /* Brushes of under two grid cells lose the gullies to the grid. */
  if (g.f > 1 && p->radius_m < 2.0 * g.full.cell)
    {
      tg_format_double (p->radius_m, r);
      tg_format_double (g.full.cell, sc);
      tg_error_set (warn, TG_ERANGE, "params.cell_m",
                    "Simulation cell %s m is more than half the erosion radius %s m: the gullies "
                    "are lost on the coarser grid (a cell of half the radius or less keeps them)",
                    sc, r);
      return 1;
    }
  return 0;
}

static const TgNodeDesc hydraulic_desc = {
  .type = "erosion.hydraulic",
  .category = TG_CATEGORY_EROSION,
  .label = N_("Hydraulic erosion"),
  .help = N_("Rain droplets run downhill, carving gullies where they are fast and laying "
             "sediment fans where they slow down"),
  TG_INPUTS (hydraulic_inputs),
  TG_OUTPUTS (hydraulic_outputs),
  TG_PARAMS (HydraulicParams, hydraulic_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = hydraulic_eval,
  .warn = hydraulic_warn,
  .memory = hydraulic_memory,
  .tiled = &hydraulic_tiled,
  /* 2: droplets drawn per lattice tile (tiled builds); 3: sediment laid
   * through a brush half the erosion's width, and a droplet that stops
   * lays its load down; 4: gully feedback (discharge_area_m2); 5: falls;
   * 6: droplets step 2 m, not one cell, where cells are finer; 7: the
   * drainage read per 4 m of width, deposit brushes of 6 m radius or more
   * (both change only builds whose cells are not 4 m) */
  .version = 7,
};
TG_NODE_REGISTER (hydraulic_desc);
