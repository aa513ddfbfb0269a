/* What the scatter nodes (scatter.colormap, scatter.mask) and the points
 * operators (points.filter) share: the candidate record, the terrain
 * under an instance (the height and slope of the exported mesh's
 * triangle there) and the bilinear sample of a map, the transform and
 * filter parameters declared once, the minimum-spacing pass on a spatial grid and its world-anchored block
 * order, the instance order and the tiled builds' join, and the smooth
 * value noise that displaces candidates.  Internal to engine/nodes.
 */
#ifndef TG_NODES_SCATTER_COMMON_H
#define TG_NODES_SCATTER_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include <tgraph/hash.h>
#include <tgraph/node.h>
#include <tgraph/param.h>
#include <tgraph/points.h>
#include <tgraph/region.h>

/* One candidate instance while a scatter node works; positions are
 * already rounded to the float the output stores, so every test (spacing,
 * height, slope) sees the numbers a reader of the output sees. */
typedef struct
{
  float x, y, z; /* metres */
  float yaw;     /* radians, counter-clockwise about +Y seen from above */
  float scale;
  int32_t proto;
  uint32_t prio;  /* order within a spacing block (0: by seq alone) */
  uint64_t seq;   /* the candidate's world-anchored number: unique, fixes ties */
} TgScatterCand;

/* A growable array of candidates (one per worker band). */
typedef struct
{
  TgScatterCand *c;
  int64_t n, cap;
  bool oom;
} TgScatterBuf;

void tg__scatter_buf_push (TgScatterBuf *b, const TgScatterCand *c);
void tg__scatter_buf_clear (TgScatterBuf *b);

/* The transform and filter fields every scatter node has, in this order,
 * and their descriptors (so they are declared once for all nodes). */
#define TG__SCATTER_XFORM_FIELDS                                                              \
  double min_yaw_deg, max_yaw_deg;                                                            \
  double min_scale, max_scale;                                                                \
  bool snap;                                                                                  \
  double min_height_m, max_height_m;                                                          \
  double max_slope_deg

#define TG__SCATTER_XFORM_PARAMS(S)                                                            \
  TG_PARAM_FLOAT (S, min_yaw_deg, .label = N_("Yaw from"), .def = 0.0, .min = -3600.0,         \
                  .max = 3600.0, .soft_min = 0.0, .soft_max = 360.0, .unit = "deg",            \
                  .help = N_("Smallest random rotation about the vertical axis "               \
                             "(counter-clockwise seen from above)")),                          \
  TG_PARAM_FLOAT (S, max_yaw_deg, .label = N_("Yaw to"), .def = 360.0, .min = -3600.0,         \
                  .max = 3600.0, .soft_min = 0.0, .soft_max = 360.0, .unit = "deg",            \
                  .help = N_("Largest random rotation about the vertical axis")),              \
  TG_PARAM_FLOAT (S, min_scale, .label = N_("Scale from"), .def = 0.8, .min = 0.0,             \
                  .max = 1000.0, .soft_min = 0.1, .soft_max = 4.0,                             \
                  .help = N_("Smallest uniform scale of an instance")),                        \
  TG_PARAM_FLOAT (S, max_scale, .label = N_("Scale to"), .def = 1.2, .min = 0.0,               \
                  .max = 1000.0, .soft_min = 0.1, .soft_max = 4.0,                             \
                  .help = N_("Largest uniform scale of an instance")),                         \
  TG_PARAM_BOOL (S, snap, .label = N_("Snap to terrain"), .def = true,                         \
                 .help = N_("Set each instance's height to the terrain under it, on the "      \
                            "triangle mesh.heightfield exports there (needs the height "       \
                            "input; without it instances sit at 0 m)")),                       \
  TG_PARAM_FLOAT (S, min_height_m, .label = N_("Lowest terrain"), .def = -100000.0,            \
                  .min = -100000.0, .max = 100000.0, .soft_min = 0.0, .soft_max = 2000.0,      \
                  .unit = "m", .help = N_("No instance where the terrain is lower")),          \
  TG_PARAM_FLOAT (S, max_height_m, .label = N_("Highest terrain"), .def = 100000.0,            \
                  .min = -100000.0, .max = 100000.0, .soft_min = 0.0, .soft_max = 2000.0,      \
                  .unit = "m", .help = N_("No instance where the terrain is higher")),         \
  TG_PARAM_FLOAT (S, max_slope_deg, .label = N_("Steepest slope"), .def = 90.0, .min = 0.0,    \
                  .max = 90.0, .unit = "deg",                                                  \
                  .help = N_("No instance where the terrain is steeper (90: no limit)"))

/* Checks that the transform ranges are in order; err->path "params.NAME". */
int tg__scatter_xform_check (double min_yaw_deg, double max_yaw_deg, double min_scale,
                             double max_scale, double min_height_m, double max_height_m,
                             TgError *err);

/* A one-channel grid read at world positions: a terrain (HEIGHT_M
 * metres for 1.0) or a map (HEIGHT_M = 1). */
typedef struct
{
  const TgValue *height; /* one-channel grid, or NULL: flat ground at 0 m */
  double height_m;       /* metres for height 1.0 */
} TgTerrain;

/* The bilinear surface through the samples at (X, Z) and the tangent of
 * its slope: for maps (density, masks).  Positions outside the grid are
 * clamped to its edge.  The position in samples is taken from the
 * lattice's origin, not the window's, so a window of the map gives the
 * bits of the whole map wherever the 2 x 2 samples around (X, Z) are
 * inside it. */
void tg__terrain_sample (const TgTerrain *t, double x, double z, double *y_m, double *slope_tan);

/* The terrain's surface as mesh.heightfield exports it, at (X, Z): the
 * height in metres of the full-resolution (LOD0) triangle of the world
 * lattice under the point, from the float vertex heights the mesh
 * stores, and the tangent of that triangle's slope.  Coarser levels of
 * detail are not followed: they are chords of LOD0 an engine swaps in at
 * a distance.  Clamping and windows as tg__terrain_sample. */
void tg__terrain_surface (const TgTerrain *t, double x, double z, double *y_m,
                          double *slope_tan);

/* The height and slope filter plus snapping, set up once per eval. */
typedef struct
{
  TgTerrain terrain;
  bool snap;
  double min_height_m, max_height_m;
  double max_slope_tan; /* +inf: no limit */
  bool need_sample;     /* some filter or the snap reads the terrain */
} TgScatterFilter;

void tg__scatter_filter_init (TgScatterFilter *f, const TgValue *height, double height_m,
                              bool snap, double min_height_m, double max_height_m,
                              double max_slope_deg);

/* Applies the filter to C (x, z set): sets c->y (terrain height when
 * snapping, else 0) and returns false when C is filtered out. */
static inline bool
tg__scatter_filter (const TgScatterFilter *f, TgScatterCand *c)
{
  double y = 0.0, tan_s = 0.0;

  if (f->need_sample)
    {
      tg__terrain_surface (&f->terrain, c->x, c->z, &y, &tan_s);
      if (y < f->min_height_m || y > f->max_height_m || tan_s > f->max_slope_tan)
        return false;
    }
  c->y = f->snap ? (float) y : 0.0f;
  return true;
}

/* Keeps, in order, the candidates that lie at least SPACING metres from
 * every candidate kept before them (of any prototype, or of their own
 * when PER_PROTO).  A grid of SPACING-sized cells over the box [X0, X0 +
 * SX] x [Z0, Z0 + SZ] holds what was kept, so the pass is linear in N.
 * Compacts C in place and returns the new count, or TG_ENOMEM. */
int64_t tg__scatter_spacing (TgScatterCand *c, int64_t n, double spacing, bool per_proto,
                             int n_protos, double x0, double z0, double sx, double sz);

/* --- world-anchored spacing and order (exact tiled builds) --------------

   The spacing pass runs in world-anchored blocks of B = max (SPACING,
   BLOCK_MIN_M) metres (and a millionth), in four phases by the parity of the block's
   column and row: (even, even), (odd, even), (even, odd), (odd, odd).
   Within a block the candidates go by (prio, seq); each is kept when no
   candidate kept before it, in its block or in an earlier phase's block,
   lies closer than SPACING.  Blocks of one phase are more than B apart, so
   the result is the same as running the blocks of a phase independently,
   and a block's result depends on blocks at most 3 away (phase 3 reads
   phase 2 neighbours, which read phase 1, which read phase 0).  So a tile
   gets every instance it owns exactly from the candidates within
   tg__scatter_ring_m () of it. */

/* Metres around an area whose candidates decide its instances exactly. */
double tg__scatter_ring_m (double spacing, double block_min_m);

/* The spacing pass above over C, given in seq order; compacts the kept
 * ones, in seq order, and returns their count, or TG_ENOMEM, or
 * TG_ECANCELLED when CTX (may be NULL) was cancelled between its sorts. */
int64_t tg__scatter_space_blocks (TgEvalCtx *ctx, TgScatterCand *c, int64_t n, double spacing,
                                  double block_min_m, bool per_proto, int n_protos,
                                  double west, double north);

/* The sample of FULL (the world's lattice) that owns position (X, Z): the
 * one at or north-west of it, clamped to the lattice. */
void tg__scatter_owner (const TgRegion *full, double x, double z, int *col, int *row);

/* Compacts C to the candidates owned by window WIN of FULL; returns the count. */
int64_t tg__scatter_keep_owned (TgScatterCand *c, int64_t n, const TgRegion *full,
                                const TgRegion *win);

/* Puts C (given in seq order) in the instance order: by owning sample,
 * north rows first, then west first, then seq.  0 or TG_ENOMEM. */
int tg__scatter_order (TgScatterCand *c, int64_t n, const TgRegion *full);

/* The samples of halo a step needs to see the terrain and the maps under
 * every candidate within RING_M of its tile. */
int tg__scatter_halo (const TgRegion *full, double ring_m);

/* Tiled builds: the whole-world instance list from the tiles' shares
 * (PARTS in tile order, row by row), each in the instance order above
 * and holding the instances its tile's samples own.  New value, or NULL
 * with ERR set. */
TgValue *tg__scatter_join (const TgRegion *full, const TgTiling *t, TgValue *const *parts,
                           TgError *err);

/* Appends the candidates to P as instances (rotation about +Y by yaw,
 * uniform scale).  0 or TG_ENOMEM. */
int tg__scatter_emit (TgPoints *p, const TgScatterCand *c, int64_t n);

/* Smooth value noise in [-1, 1] with unit feature size: hashed lattice
 * values blended with the quintic fade, so it is C2 and has no grid
 * artefacts large enough to show in a displacement. */
double tg__scatter_value_noise (uint32_t seed, double x, double z);

/* Uniform in [LO, HI) from hash H. */
static inline double
tg__scatter_lerp_hash (double lo, double hi, uint32_t h)
{
  return lo + (hi - lo) * (double) tg_hash_unit (h);
}

/* An upper bound of the bytes of the instances a scatter over FULL can
 * keep: at most one per candidate cell of CELL_M metres (0: no such
 * grid), and no more than the densest packing of discs SPACING_M apart
 * (2 / (sqrt 3 s²) per m², 0: no spacing); for the plan of a tiled build. */
static inline uint64_t
tg__scatter_joined_bytes (const TgRegion *full, double cell_m, double spacing_m)
{
  double w = (double) (full->full_w - 1) * full->cell, h = (double) (full->full_h - 1) * full->cell;
  double n = 1e300;

  if (cell_m > 0.0)
    n = (w / cell_m + 2.0) * (h / cell_m + 2.0);
  if (spacing_m > 0.0)
    {
      double packed = 1.1548 * (w + 2.0 * spacing_m) * (h + 2.0 * spacing_m) / (spacing_m * spacing_m);
      n = packed < n ? packed : n;
    }
  /* Position, rotation, scale and prototype of each. */
  return n < 1e300 ? (uint64_t) (n * (double) (10 * sizeof (float) + sizeof (int32_t))) : 0;
}

#endif
