/* The droplet simulation behind erosion.hydraulic, on plain float maps,
 * so tests can check its mass balance and its tiled scheme and the
 * benchmark can time it without the engine around it.  Internal to
 * engine/nodes (and tests).
 *
 * The result is defined phase by phase on a world-anchored lattice (see
 * erosion_hydraulic_sim.c): the whole-world run and a tiled build run the
 * same phases, so they give the same bytes.
 */
#ifndef TG_NODES_EROSION_HYDRAULIC_H
#define TG_NODES_EROSION_HYDRAULIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tgraph/tiled.h>

/* Brush radius limit, in cells. */
#define TG__HYDRAULIC_BRUSH_MAX 64
/* Erosion brushes a run with a channel map picks from, the plain one first
 * (erosion_hydraulic_flow.c). */
#define TG__HYDRAULIC_LEVELS 8
/* Droplets a worker moves side by side, at most. */
#define TG__HYDRAULIC_LANES_MAX 16

/* The code that applies the brushes: BEST is the widest the CPU runs
 * (TG_HYDRAULIC_ISA=generic in the environment forces the plain one);
 * tests ask for each to compare them.  All give the same bytes. */
typedef enum
{
  TG__HYDRAULIC_ISA_BEST,
  TG__HYDRAULIC_ISA_GENERIC,
  TG__HYDRAULIC_ISA_AVX512,
} TgHydraulicIsa;

/* Everything in map units: lengths in cells, heights in height units
 * (1.0 = height_m metres); per-step factors already scaled to the step. */
typedef struct
{
  uint32_t seed;
  long long droplets;
  int rounds;            /* droplets run in this many rounds of 4 phases */
  int max_steps;         /* a droplet's lifetime, in steps of STEP cells */
  float step;            /* cells a droplet moves a step, >= 1 (0 reads as 1); the
                          * brushes are at least as wide, so they cover the path */
  float inertia;         /* share of the old direction kept per step */
  float capacity;        /* sediment capacity per unit of slope x speed x water */
  float min_slope;       /* capacity never uses a flatter slope (keeps flats eroding) */
  float fall_slope;      /* a step that drops more (metres per metre) is a fall; 0: none is */
  float erode, deposit;  /* share of the capacity deficit / excess taken per step */
  float evaporate;       /* share of the water kept per step */
  float friction;        /* share of the squared speed kept per step */
  float gravity;         /* squared speed gained per height unit dropped */
  float height_scale;    /* height units -> metres, for speed and slope */
  float cell_m;
  float brush_radius;    /* cells, >= 1 */
  float deposit_radius;  /* cells; 0: half the brush (at least 1.5, at most the brush) */
  float deposit_min;     /* cells: no deposit brush is narrower (0: 1.5 steps) */
  /* The channel map (erosion_hydraulic_flow.c), NULL without one: per
   * cell a factor on the capacity, from the upslope area of the terrain
   * before erosion, over the same window as the height the call reads
   * (the world for tg__hydraulic_simulate; IN_RECT at step 0 of the tiled
   * scheme, which keeps it for the later steps).  Where the factor is
   * below 1 (faces with little upslope area) the erosion brush widens,
   * up to FACE_RADIUS at the factor CHANNEL_FLOOR. */
  const float *channel;
  float channel_floor;   /* the factor's least value, in (0, 1) */
  float face_radius;     /* cells, >= brush_radius */
  /* Cells over which a change of log f pulls a droplet as hard as the
   * slope: how readily it turns into a drainage line (0: not at all).
   * With feedback, also the cells to each side of its path at which a
   * droplet feels the water of the gullies beside it and turns toward the
   * side that carries more, up to 45 degrees off the fall line (0: it
   * does not); tributaries join the gullies this way. */
  float channel_pull;
  /* Feedback from the droplets' own water, against curtains: 0 for
   * none, else the area (cells²) at which a droplet carries its plain
   * capacity.  The water earlier droplets ran through a cell (the flow
   * map, which then lives in the phases like the height), over the rain
   * fallen per cell by the end of the round, is the area A draining
   * through it; the factor (A / DISCHARGE_AREA)^CHANNEL_EXPONENT times the
   * channel map's, within CHANNEL_FLOOR and CHANNEL_CEIL, sets the
   * capacity and the brush as the channel map alone does.  Gullies that
   * carry more water cut faster and draw the water beside them in: they
   * join into networks instead of running side by side. */
  float discharge_area;
  float channel_exponent;
  float channel_ceil;
  /* Polled every few droplets with the parallel runner's CTX (may be
   * NULL): true stops the run, which then returns TG_ECANCELLED. */
  bool (*cancelled) (void *ctx);
  TgHydraulicIsa isa;
  /* Droplets (of different lattice tiles) a worker moves side by side,
   * up to TG__HYDRAULIC_LANES_MAX; 0: the default, 1: one at a time.
   * The same bytes whatever it is. */
  int lanes;
  /* Workers PARALLEL runs at once: a hint for sharing a phase's tiles
   * out (0: the CPUs). */
  int threads;
} TgHydraulicSetup;

typedef struct
{
  /* Sums of the height changes applied, in height units x cells. */
  double eroded, deposited;
  /* Sediment still in droplets when they stopped inside the map, and
   * sediment that left the map with a droplet. */
  double carried, left;
  long long droplets_run, steps;
} TgHydraulicStats;

/* Runs FN (USER, begin, end) over [0, N) in any order on any threads;
 * returns 0, or a negative code to stop (cancellation). */
typedef int (*TgHydraulicParallel) (void *ctx, int n, void (*fn) (void *user, int begin, int end),
                                    void *user);

/* Erodes HEIGHT (W x H, row-major) in place with S.  FLOW (W x H, zeroed
 * by the caller, may be NULL) accumulates the water that passed each
 * cell.  The result does not depend on how PARALLEL spreads the work. */
int tg__hydraulic_simulate (const TgHydraulicSetup *s, float *height, float *flow, int w, int h,
                            TgHydraulicParallel parallel, void *ctx, TgHydraulicStats *stats);

/* The distance in floats between the rows of the copies of the maps
 * that tg__hydraulic_simulate runs its droplets on (W x H each for the
 * height, the channel map and the flow, those it has): the least odd
 * multiple of 16 not below W. */
int tg__hydraulic_pitch (int w);

/* Whether this CPU runs ISA (BEST and GENERIC: always). */
bool tg__hydraulic_isa_supported (TgHydraulicIsa isa);

/* The channel brushes (erosion_hydraulic_flow.c): radius of level K
 * (0: the plain brush) and the factor below which a droplet uses level K
 * (THR[0] unused). */
void tg__hydraulic_channel_levels (const TgHydraulicSetup *s, float radius[TG__HYDRAULIC_LEVELS],
                                   float thr[TG__HYDRAULIC_LEVELS]);

/* The area A (m²) that drains through a cell whose drainage mask reads M
 * (erosion.flow's scale: log (1 + A / REF_AREA) / LOG_MAX). */
float tg__hydraulic_drainage_area (float m, double ref_area, double log_max);
/* The channel factor of a cell draining A m²: (A / AREA0)^EXPONENT
 * within FLOOR and CEIL. */
float tg__hydraulic_channel_factor (float a, double area0, double exponent, double floor,
                                    double ceil);

/* Averages MAP (W x H) twice over squares of 2 R + 1 cells (a tent of
 * radius 2 R), cut at its edges, in place; TMP holds W x H floats.  The
 * same bytes for a cell in any window that holds the 4 R + 1 square
 * around it or is cut only where the world is. */
void tg__hydraulic_channel_smooth (float *map, float *tmp, int w, int h, int r);

/* --- the tiled scheme ---------------------------------------------------- */

/* A window [x0, x0 + w) x [y0, y0 + h) of the world's cells. */
typedef struct
{
  int x0, y0, w, h;
} TgHydraulicRect;

/* The blobs of a tiled build as one tile job sees them: GET reads NAME of
 * tile (IX, IY) (malloc'ed, the caller frees), PUT writes NAME of the
 * job's own tile, DROP (may be NULL) removes one of the job's own tile.
 * All return 0 or a negative TG_E* code. */
typedef struct
{
  void *user;
  int (*get) (void *user, int ix, int iy, const char *name, void **data, size_t *size);
  int (*put) (void *user, const char *name, const void *data, size_t size);
  int (*drop) (void *user, const char *name);
} TgHydraulicBlobs;

typedef struct
{
  /* The droplets of the lattice tiles this job owns (each lattice tile is
   * owned by the build tile holding its centre, clamped to the world), so
   * the counts summed over all jobs are the whole run's. */
  TgHydraulicStats owned;
  long long droplets_computed; /* including the ones run again by neighbours */
  size_t work_bytes;           /* the most this step held at once */
} TgHydraulicStepInfo;

/* Phases of a W x H world, one step of the tiled scheme each (0: nothing
 * to erode; the scheme still has one step, which copies). */
int tg__hydraulic_phases (const TgHydraulicSetup *s, int w, int h);
/* Samples of input the first step needs around its tile. */
int tg__hydraulic_halo (const TgHydraulicSetup *s);

/* Step STEP of the tiled scheme for tile (T->ix, T->iy) of a W x H world.
 * Step 0 reads INPUT over IN_RECT (the tile grown by tg__hydraulic_halo,
 * cut at the world's edge); later steps read the blobs of the step before
 * from the tiles around.  Every step but the last writes its tile's blobs;
 * the last fills HEIGHT, FLOW and SRC (the input terrain) over the tile,
 * row-major.  INFO may be NULL. */
int tg__hydraulic_tile_step (const TgHydraulicSetup *s, int w, int h, const TgTiling *t, int step,
                             const float *input, const TgHydraulicRect *in_rect,
                             const TgHydraulicBlobs *io, float *height, float *flow, float *src,
                             TgHydraulicParallel parallel, void *ctx, TgHydraulicStepInfo *info);

/* --- a simulation grid coarser than the build's (erosion_hydraulic_coarse.c) */

/* Samples along an axis of N of the grid F samples apart from sample 0
 * (one more past the world's edge where F does not divide N - 1). */
int tg__hydraulic_coarse_n (int n, int f);

/* What the downsample reads a drainage mask as: its area per 4 m of
 * contour width (tg__hydraulic_drainage_area times SCALE). */
typedef struct
{
  double ref_area, log_max, scale;
} TgHydraulicDecode;

/* The samples of a W x H world the downsample of the grid's window DR
 * reads (F fine cells a grid cell), clamped to the world. */
void tg__hydraulic_down_reach (const TgHydraulicRect *dr, int f, int w, int h,
                               TgHydraulicRect *need);
/* Rows [BEGIN, END) of DR (grid samples, rows DR->w apart in DST) from
 * SRC over SR, which holds their reach: each a tent of radius F over the
 * fine samples, the world's edge clamped, decoded first with DEC (may be
 * NULL).  0 or TG_ENOMEM. */
int tg__hydraulic_downsample (const float *src, const TgHydraulicRect *sr, int w, int h, int f,
                              const TgHydraulicDecode *dec, float *dst, const TgHydraulicRect *dr,
                              int begin, int end);

/* The upsample's weights at the F phases of a grid cell. */
void tg__hydraulic_up_weights (int f, float (*wt)[4]);
/* The grid samples (a CW x CH grid) the upsample of fine window FR
 * reads, clamped to the grid. */
void tg__hydraulic_up_reach (const TgHydraulicRect *fr, int f, int cw, int ch,
                             TgHydraulicRect *need);
/* Fine samples I0 .. I0 + N - 1 of fine row J into OUT: the cubic
 * B-spline of C (over CR, which holds their reach) with the weights WT;
 * TMP holds CR->w floats. */
void tg__hydraulic_upsample_row (const float *c, const TgHydraulicRect *cr, int cw, int ch, int f,
                                 const float (*wt)[4], int j, int i0, int n, float *tmp,
                                 float *out);

#endif
