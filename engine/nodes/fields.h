/* Internal interface of the field nodes and the iso-surface mesher
 * (engine/nodes/field_*.c, mesh_isosurface.c).
 *
 * What more than one file needs: the parameters of the 3D noise
 * (noise3.h) that field.noise and field.displace share, the helpers
 * every field node uses (field_util.c), and the mesher itself, which the
 * node, the tests and the benchmark call.  Nothing outside engine/nodes
 * and their tests should include this.
 */
#ifndef TG_NODES_FIELDS_H
#define TG_NODES_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <tgraph/error.h>
#include <tgraph/field.h>
#include <tgraph/mesh.h>
#include <tgraph/node.h>

#include "noise3.h"

/* --- 3D noise parameters ------------------------------------------------- */

/* The descriptors of the noise parameters (amplitude, basis, ...), for
 * field.noise and field.displace: TG__NOISE3_PARAMS (AMP_DEF) expands to
 * the TgParamDesc entries of TgNoise3Params, which a node's parameter
 * struct is or holds as its first member. */
extern const char *const tg__noise3_basis_choices[];
extern const char *const tg__noise3_worley_choices[];
extern const char *const tg__noise3_mode_choices[];

#define TG__NOISE3_PARAMS(AMP_DEF)                                                             \
  TG_PARAM_ENUM (TgNoise3Params, basis, .label = N_("Basis"), .def_s = "perlin",               \
                 .choices = tg__noise3_basis_choices,                                          \
                 .help = N_("The noise summed in each octave: "                                \
                            "perlin, simplex, value or worley")),                              \
  TG_PARAM_ENUM (TgNoise3Params, worley_return, .label = N_("Cell value"), .def_s = "f1",      \
                 .choices = tg__noise3_worley_choices,                                         \
                 .help = N_("Worley only: distance to the nearest feature point (f1), the "    \
                            "second nearest (f2), or their difference")),                      \
  TG_PARAM_ENUM (TgNoise3Params, mode, .label = N_("Mode"), .def_s = "fbm",                    \
                 .choices = tg__noise3_mode_choices,                                           \
                 .help = N_("How octaves combine: fbm, ridged or billow")),                    \
  TG_PARAM_FLOAT (TgNoise3Params, amplitude_m, .label = N_("Amplitude"), .def = AMP_DEF,       \
                  .min = 0.0, .max = 1e6, .soft_min = 0.0, .soft_max = 500.0, .unit = "m",     \
                  .help = N_("The noise runs from minus this to plus this, in metres")),       \
  TG_PARAM_FLOAT (TgNoise3Params, scale_m, .label = N_("Scale"), .def = 100.0, .min = 0.01,    \
                  .max = 1e6, .soft_min = 1.0, .soft_max = 5000.0, .unit = "m",                \
                  .help = N_("Feature size of the first octave: "                              \
                             "the lattice cell, in metres")),                                  \
  TG_PARAM_INT (TgNoise3Params, octaves, .label = N_("Octaves"), .def = 4, .min = 1,           \
                .max = TG__N3_MAX_OCTAVES, .help = N_("Number of layers of detail summed")),   \
  TG_PARAM_FLOAT (TgNoise3Params, persistence, .label = N_("Persistence"), .def = 0.5,         \
                  .min = 0.0, .max = 1.0,                                                      \
                  .help = N_("Amplitude of each octave relative to the previous one")),        \
  TG_PARAM_FLOAT (TgNoise3Params, lacunarity, .label = N_("Lacunarity"), .def = 2.0,           \
                  .min = 1.0, .max = 4.0,                                                      \
                  .help = N_("Frequency of each octave relative to the previous one")),        \
  TG_PARAM_SEED (TgNoise3Params, seed, .label = N_("Seed"),                                    \
                 .help = N_("Picks another noise; combined with the world seed")),             \
  TG_PARAM_VEC3 (TgNoise3Params, offset_m, .label = N_("Offset"), .def_v = { 0.0, 0.0, 0.0 },  \
                 .unit = "m",                                                                  \
                 .help = N_("Shifts the sampling position through the noise, in metres"))

/* --- composite fields ----------------------------------------------------- */

/* The TgValue of input INDEX as a field (a new reference in *REF, so the
 * composite can keep it); fails the node when it is missing. */
int tg__field_input (TgEvalCtx *c, int index, const char *name, TgValue **ref);

/* Wraps F (malloc'd, owning its data) in a value and sets it as output 0. */
int tg__field_output (TgEvalCtx *c, TgField *f);

/* A new TgField with EVAL and DATA (freed with FREE_DATA when the field
 * goes); NULL on allocation failure (DATA is freed then). */
TgField *tg__field_new (TgFieldEvalFn eval, void *data, void (*free_data) (void *));

/* --- dense volumes --------------------------------------------------------- */

/* A dense volume as a field: LEVEL minus the trilinear interpolation of
 * its voxels, 0 outside (field.slices; the benchmark's dense grids).
 * Voxel (i, j, k), i along x, j along y, k along z, is V[i ST[0] +
 * j ST[1] + k ST[2]] (strides may be negative); its centre lies at
 * ORG + (i, j, k) / INV metres.  The interpolation runs along x, then z,
 * then y; coordinates are clamped to two voxels beyond the volume. */
typedef struct
{
  const float *v;
  ptrdiff_t st[3];
  int n[3];
  float org[3], inv[3];
  float level;
  bool finite; /* every voxel is finite: lets a voxel-aligned grid copy */
} TgVolume;

void tg__volume_eval (const TgVolume *vol, int n, const float *x, const float *y, const float *z,
                      float *out);
/* The grid path of tg__volume_eval, its bits: each axis split once per
 * grid line, and a grid on the voxel centres read straight. */
int tg__volume_grid (const TgVolume *vol, const TgFieldGrid *g, float *out, size_t sy, size_t sz);
/* The voxels of VOL as a view of grid G (TgFieldView): 0 when G's
 * points are consecutive voxel centres along each axis and the grid path
 * would copy them (finite voxels, a level that is not -0, x stride 1),
 * else 1. */
int tg__volume_view (const TgVolume *vol, const TgFieldGrid *g, TgFieldView *view);
/* Sets VOL->finite and returns a Lipschitz bound of the field in its
 * units per metre (infinite when a voxel is not finite): over the cells
 * between voxels and, with BORDER, those reaching into the zeros outside.
 * Without BORDER it holds only inside the voxels' hull. */
double tg__volume_scan (TgVolume *vol, bool border);

/* --- the mesher ------------------------------------------------------------ */

enum
{
  TG__ISO_NORMALS_GRADIENT,
  TG__ISO_NORMALS_FACES,
};

enum
{
  TG__ISO_SMOOTH,
  TG__ISO_FLAT,
};

/* At most this many cells in all (2^33) and per axis. */
#define TG__ISO_MAX_CELLS 8589934592.0
#define TG__ISO_MAX_AXIS_CELLS 1048576

typedef struct
{
  double min[3], max[3]; /* metres */
  double cell;           /* metres */
  double iso;
  int normals, shading;  /* TG__ISO_* */
  int chunk_cells;       /* 0 = one mesh; else cells along a chunk's side (TG__ISO_MIN/MAX_CHUNK) */
  int lods;              /* levels of detail, 1 .. TG__ISO_MAX_LODS (0 = 1) */
  bool no_skip;          /* tests: evaluate every block */
  bool no_skirts;        /* tests: levels of detail without their skirts */
  bool no_share;         /* tests: each block samples all its corners itself */
} TgIsoOptions;

#define TG__ISO_MIN_CHUNK 16
#define TG__ISO_MAX_CHUNK 64
#define TG__ISO_MAX_LODS 3
#define TG__ISO_MAX_CHUNKS 1000000

/* The chunk lattice of a chunked surface: chunk (i, j, k) holds the cells
 * whose lower corner is the world's cell_m lattice point G with
 * floor (G / cells) = (i, j, k) along each axis. */
typedef struct
{
  int cells;
  int64_t off[3];  /* world lattice index of the box's lattice point 0 */
  int64_t n[3];    /* the box's cells per axis (the finest level) */
  int64_t c0[3];   /* the first chunk's index per axis */
  int nc[3];       /* chunks per axis */
} TgIsoLattice;

static inline int64_t
tg__floor_div (int64_t a, int64_t b)
{
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The chunk (an index into L's chunks, x fastest) of the cell with lower
 * corner GC on a level whose lattice point g is the box's point ORG + g STEP. */
static inline uint32_t
tg__iso_chunk_of (const TgIsoLattice *l, const int64_t org[3], int step, const int64_t gc[3])
{
  int64_t id[3];

  for (int k = 0; k < 3; k++)
    id[k] = tg__floor_div (org[k] + gc[k] * step + l->off[k], l->cells) - l->c0[k];
  return (uint32_t) ((id[2] * l->nc[1] + id[1]) * l->nc[0] + id[0]);
}

/* Runs FN (USER, begin, end) over [0, N) in chunks of GRAIN; 0 or a
 * negative TG_E* (cancelled).  NULL: serially on the calling thread. */
typedef int (*TgIsoParallel) (void *ctx, int n, int grain, void (*fn) (void *, int, int),
                              void *user);

/* One welded level of the surface; TAG gives each triangle's chunk. */
typedef struct
{
  const float *pos, *nrm;
  const uint32_t *idx, *tag;
  int64_t nv, nt;
} TgIsoLevel;

typedef struct
{
  TgMeshChunk *items;
  int n, cap;
} TgIsoChunks;

/* mesh_isosurface_chunks.c: appends to OUT the chunks of level LEVEL of
 * the surface LV (LAT NULL: the whole level as one chunk), named by
 * chunk and level, each welded with its own vertices, leaving out those
 * without triangles; level 0 marks the chunks it writes in HAVE and
 * coarser levels write only those.  SKIRT_M > 0 hangs skirts at most
 * that deep on every chunk face inside the box, kept inside FIELD's solid
 * and the level's section of it (tg__iso_skirts_plan).  The chunks are made in parallel through PAR (NULL: serially), each into
 * its own place in OUT.  0, TG_ENOMEM or what PAR returned (cancelled). */
int tg__iso_split (const TgIsoLevel *lv, const TgIsoLattice *lat, const TgIsoOptions *o, int level,
                   double skirt_m, const TgField *field, TgIsoParallel par, void *par_ctx,
                   uint8_t *have, TgIsoChunks *out);
void tg__iso_chunks_clear (TgIsoChunks *list);
/* mesh_isosurface_skirts.c.  The skirts' depth for O's levels: twice the
 * coarsest cell. */
double tg__iso_skirt_m (const TgIsoOptions *o);

/* The skirts of one level LV, DEPTH deep, kept inside FIELD's solid and
 * the level's section of it, planned for all its chunks at once; *OUT is
 * freed with tg__iso_skirts_free.  0 or TG_ENOMEM. */
typedef struct TgIsoSkirts TgIsoSkirts;
int tg__iso_skirts_plan (const TgIsoLevel *lv, const TgIsoLattice *lat, const TgIsoOptions *o,
                         double depth, const TgField *field, TgIsoSkirts **out);
void tg__iso_skirts_free (TgIsoSkirts *plan);
/* Appends to C (chunk CID of LAT) the skirts PLAN hangs from its open
 * edges on its inner faces; GLOBAL[i] is the level's index of C's vertex
 * i.  0 or TG_ENOMEM. */
int tg__iso_skirts_add (const TgIsoSkirts *plan, const TgIsoLattice *lat, const TgIsoOptions *o,
                        const int64_t cid[3], const uint32_t *global, TgMeshChunk *c);

typedef struct
{
  int64_t evaluations;    /* field samples taken: corners and, for gradient normals,
                             their neighbours */
  int64_t blocks, blocks_skipped;
  int64_t subblocks_skipped;
  /* CPU seconds summed over threads: sampling the field (with the skip
   * tests), marching the cells (with the gradient normals); then, on the
   * calling thread, stitching and the final normals. */
  double seconds_eval, seconds_mesh, seconds_stitch;
} TgIsoStats;

/* Checks O; ERR->path names the parameter ("params.cell_m"). */
int tg__isosurface_check (const TgIsoOptions *o, TgError *err);

/* The iso-surface f = O->iso of F inside O's box, as one chunk.  *OUT is
 * a new mesh (caller frees).  STATS may be NULL. */
int tg__isosurface (const TgField *f, const TgIsoOptions *o, TgIsoParallel par, void *par_ctx,
                    TgMesh **out, TgIsoStats *stats, TgError *err);

#endif
