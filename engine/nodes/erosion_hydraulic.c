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
 * Determinism and tiled builds: the droplets run in rounds of four phases
 * on a world-anchored lattice of tiles wider than twice a droplet's reach
 * (erosion_hydraulic_sim.c).  Each phase changes every cell from the state
 * within one lattice tile's reach, so the whole-world evaluation and a
 * tiled build (one step per phase, TgTiledScheme below) run the same
 * arithmetic, and nothing depends on the thread count or the tiling.
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
  double ref_area, log_max;
  float *m, *tmp, width;
  int rc;

  if ((rc = tg__check_grid_input (c, fl, "flow", over)) < 0)
    return rc;
  m = malloc (sizeof (float) * (n ? n : 1));
  tmp = malloc (sizeof (float) * (n ? n : 1));
  if (!m || !tmp)
    {
      free (m);
      free (tmp);
      return tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d map", over->width,
                           over->height);
    }
  tg__erosion_area_scale (tg_eval_world (c), over, &ref_area, &log_max);
  /* The area draining through a cell grows with its width where water
   * spreads (a face: the slope's length times the cell), and the average
   * below spreads a line's area over the window too; the factor reads it
   * per 4 m of width, as a 4 m build sees it.  Read per cell, a 2 m build
   * had half the factor (alpine 2049: 25 % less eroded than 1025). */
  width = (float) (REF_STEP_M / over->cell);
  for (int j = 0; j < over->height; j++)
    {
      const float *row = tg__grid_row (fl, over, j);
      float *o = m + (size_t) j * over->width;
      for (int i = 0; i < over->width; i++)
        o[i] = tg__hydraulic_drainage_area (row[i], ref_area, log_max) * width;
    }
  tg__hydraulic_channel_smooth (m, tmp, over->width, over->height, channel_smooth_cells (s));
  free (tmp);
  for (size_t k = 0; k < n; k++)
    m[k] = tg__hydraulic_channel_factor (m[k], p->channel_area_m2, p->channel_exponent,
                                         CHANNEL_FLOOR, CHANNEL_CEIL);
  *map = m;
  return 0;
}

static int
eval_parallel (void *ctx, int n, void (*fn) (void *, int, int), void *user)
{
  return tg_eval_parallel (ctx, n, 1, fn, user);
}

/* How the masks read the eroded map: what the rows of the finish see. */
typedef struct
{
  const float *src, *hm, *flow;  /* input, eroded height, raw flow; WIDTH a row */
  size_t src_stride;
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
      const float *src = job->src + (size_t) j * job->src_stride;
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

/* Sets the four outputs over the context's region from the input SRC
 * (rows SRC_STRIDE apart), the eroded height HM and the raw flow FLOW. */
static int
hydraulic_finish (TgEvalCtx *c, const float *src, size_t src_stride, const float *hm,
                  const float *flow)
{
  const HydraulicParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  HydFinish fin;

  memset (&fin, 0, sizeof fin);
  fin.src = src;
  fin.src_stride = src_stride;
  fin.hm = hm;
  fin.flow = flow;
  fin.to_m = tg_eval_world (c)->height_m;
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
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  return tg_eval_parallel (c, r->height, tg__grain_rows (r->width), hydraulic_finish_rows, &fin);
}

static int
sim_failed (TgEvalCtx *c, int rc)
{
  if (rc == TG_ECANCELLED)
    return rc;
  return tg_eval_fail (c, rc, "%s", tg_strerror (rc));
}

static int
hydraulic_eval (TgEvalCtx *c)
{
  const HydraulicParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  const TgValue *in = tg_eval_input (c, 0), *fl = tg_eval_input (c, 1);
  TgHydraulicSetup s;
  TgHydraulicStats st;
  float *chan = NULL;
  size_t n = (size_t) r->width * (size_t) r->height;
  /* The flow half a page off the height in one block: at the same offset
   * in a page, every flow update of a droplet stalls on the brush's
   * stores to the height beside it (4 KiB aliasing; 16 % of the
   * simulation's time at 2048²). */
  size_t pad = 512 + (1024 - n % 1024) % 1024;
  float *hm, *flow;
  int rc;

  if ((rc = tg__check_grid_input (c, in, "height", r)) < 0)
    return rc;
  hydraulic_setup (&s, p, tg_eval_world (c), r, tg_eval_seed (c, p->seed));
  if (fl && (rc = channel_map (c, &s, fl, r, &chan)) < 0)
    return rc;
  s.channel = chan;
  hm = malloc (sizeof (float) * (2 * n + pad));
  if (!hm)
    {
      free (chan);
      return tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d map", r->width, r->height);
    }
  flow = hm + n + pad;
  memset (flow, 0, sizeof (float) * n);
  for (int j = 0; j < r->height; j++)
    memcpy (hm + (size_t) j * r->width, tg__grid_row (in, r, j),
            sizeof (float) * (size_t) r->width);
  rc = tg__hydraulic_simulate (&s, hm, flow, r->width, r->height, eval_parallel, c, &st);
  if (rc < 0)
    rc = sim_failed (c, rc);
  else
    rc = hydraulic_finish (c, tg__grid_row (in, r, 0), (size_t) in->region.width, hm, flow);
  free (hm);
  free (chan);
  return rc;
}

/* --- the tiled scheme ------------------------------------------------------ */

/* One step per phase; the first reads the terrain around its tile, the
 * others only the blobs of the step before. */

static void
tiled_setup (TgHydraulicSetup *s, const void *params, const TgRegion *full, uint32_t seed)
{
  TgWorld world;

  /* Only the seed and height_m matter beyond the lattice; the counts and
   * reaches that shape the scheme do not depend on either. */
  tg_world_init_default (&world);
  hydraulic_setup (s, params, &world, full, seed);
}

static int
hydraulic_n_steps (const void *params, const TgRegion *full)
{
  TgHydraulicSetup s;
  int phases;

  tiled_setup (&s, params, full, 0);
  phases = tg__hydraulic_phases (&s, full->full_w, full->full_h);
  return phases > 0 ? phases : 1;
}

static int
hydraulic_halo (const void *params, const TgRegion *full, int step)
{
  TgHydraulicSetup s;

  if (step > 0)
    return -1;
  tiled_setup (&s, params, full, 0);
  /* The droplets' reach, and the drainage input's smoothing around it. */
  return tg__hydraulic_phases (&s, full->full_w, full->full_h) > 0
           ? tg__hydraulic_halo (&s) + 2 * channel_smooth_cells (&s)
           : 0;
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
  size_t n = (size_t) r->width * (size_t) r->height;
  float *hm = NULL, *flow = NULL, *src = NULL, *chan = NULL;
  bool last;
  int rc;

  if (!t)
    return tg_eval_fail (c, TG_EINVAL, "a tiled step outside a tiled build");
  if (step == 0)
    {
      if ((rc = tg__check_grid_input (c, in, "height", r)) < 0)
        return rc;
      in_rect = (TgHydraulicRect) { in->region.col0, in->region.row0, in->region.width,
                                    in->region.height };
    }
  hydraulic_setup (&s, p, tg_eval_world (c), r, tg_eval_seed (c, p->seed));
  if (fl && (rc = channel_map (c, &s, fl, &in->region, &chan)) < 0)
    return rc;
  s.channel = chan;
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
    rc = hydraulic_finish (c, src, (size_t) r->width, hm, flow);
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
 * (the droplets' tiles are small beside them). */
static void
hydraulic_memory (TgMemQuery *q)
{
  q->work += 2 * tg_region_samples (q->region) * sizeof (float);
}

static int
hydraulic_warn (const void *params, double cell_m, TgError *warn)
{
  const HydraulicParams *p = params;

  return p->radius_m > 0.0
         && tg_warn_below_cells (warn, "radius_m", "Erosion radius", p->radius_m, cell_m, 1);
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
