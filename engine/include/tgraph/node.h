/* Node descriptors and the context a node's eval function works in.
 *
 * A node type is one TgNodeDesc in one file under engine/nodes/, registered
 * with TG_NODE_REGISTER.  Nothing else keeps a list of node types: the
 * registry collects the descriptors from a linker section.
 *
 * Eval contract: produce every output over tg_eval_region() (for a global
 * node, the whole lattice; an output nothing reads may be left out, see
 * tg_eval_output_wanted()), reading inputs through tg_eval_input() (each
 * carries its own region; for an apron node it covers the output region
 * grown by the apron).  Work in rows on the engine's pool with
 * tg_eval_parallel(), which also checks cancellation and reports progress
 * (a point or area filter hands only a row function to tg_eval_map_rows
 * or tg_eval_map_area_rows).
 * Write only disjoint parts of the output from each chunk, and draw random
 * numbers from tg_hash_* of coordinates, so the bytes do not depend on the
 * thread count or on how the region is tiled.
 */
#ifndef TGRAPH_NODE_H
#define TGRAPH_NODE_H

#include <stdbool.h>
#include <stdio.h>

#include "error.h"
#include "mesh.h"
#include "param.h"
#include "points.h"
#include "region.h"
#include "tiled.h"
#include "value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum
{
  TG_LOCALITY_LOCAL,  /* each sample depends on the same sample of its inputs */
  TG_LOCALITY_APRON,  /* needs `apron` samples of border around the output region */
  TG_LOCALITY_GLOBAL, /* needs the whole map (normalize, flow, hydraulic erosion) */
} TgLocality;

const char *tg_locality_name (TgLocality l);

/* The add-node menu's categories: one fixed list, which `tgraph nodes`,
 * docs/nodes.md and the app's menu and node colours all follow. */
typedef enum
{
  TG_CATEGORY_OTHER, /* a descriptor that names none (tests' nodes); last in the menu */
  TG_CATEGORY_INPUT,
  TG_CATEGORY_GENERATORS,
  TG_CATEGORY_FILTERS,
  TG_CATEGORY_MATH,
  TG_CATEGORY_SELECTORS,
  TG_CATEGORY_EROSION,
  TG_CATEGORY_TEXTURING,
  TG_CATEGORY_SCATTER,
  TG_CATEGORY_FIELDS,
  TG_CATEGORY_MESH,
  TG_CATEGORY_OUTPUT,
  TG_CATEGORY_COUNT
} TgCategory;

/* The category's name as the menu heads it ("Generators"), marked N_():
 * the GUI translates it. */
const char *tg_category_name (TgCategory c);
/* The category at POSITION 0 .. TG_CATEGORY_COUNT - 1 in menu order. */
TgCategory tg_category_at (int position);

typedef struct
{
  const char *name;  /* "height", "mask", "a", "b": named for what they carry */
  TgPortType type;
  const char *label;
  bool optional;     /* inputs only: may stay unlinked */
  const char *help;
} TgPortDesc;

typedef struct TgEvalCtx TgEvalCtx;

typedef enum
{
  TG_NODE_EXPORT = 1 << 0, /* writes files through a registered writer */
  TG_NODE_INPUT = 1 << 1,  /* reads files through a registered reader */
  /* Its image output carries source pixels (tg_value_pixels) that a tile
   * stored by a tiled build would not keep: such a build computes it in
   * the job that reads it. */
  TG_NODE_PIXELS = 1 << 2,
  /* An apron node that reads no input sample beyond the world's edge (it
   * closes, clamps or mirrors the edge itself): its inputs are asked for
   * the grown region cut at the edge, so an apron of any size needs at
   * most the world.  Without it the grown region reaches past the edge
   * and the inputs compute samples there (a blur at the edge averages
   * the noise beyond it). */
  TG_NODE_APRON_IN_WORLD = 1 << 3,
} TgNodeFlags;

typedef struct TgNodeDesc TgNodeDesc;
typedef struct TgMemQuery TgMemQuery;

/* How a tiled build computes a global node tile by tile (tiled.h).  The
 * scheme must give exactly the bytes of the node's whole-world eval for
 * any tile counts: usually both run the same world-anchored arithmetic.
 *
 * Step S runs once per tile, all tiles of a step in one stage.  Its
 * context's region is the tile; its inputs, when HALO (S) >= 0, cover the
 * tile grown by that many samples and cut at the world's edge.  It reads
 * blobs of earlier steps (any tile's, or a reduce's) and writes its own
 * tile's.  When HAS_REDUCE (S), one job runs REDUCE (S) after the step's
 * tiles, over the whole world's region, reading their blobs and writing
 * blobs of tile (-1, -1).  The last step sets every output over the tile:
 * a grid over the tile's window, or the tile's share of a mesh or of an
 * instance list, which JOIN puts together (PARTS in tile order, row by
 * row) into exactly the whole-world eval's value. */
typedef struct
{
  int (*n_steps) (const void *params, const TgRegion *full);
  int (*halo) (const void *params, const TgRegion *full, int step);
  int (*tile_step) (TgEvalCtx *c, int step);
  bool (*has_reduce) (const void *params, const TgRegion *full, int step); /* NULL: never */
  int (*reduce) (TgEvalCtx *c, int step);
  /* Outputs that are not grids: a new value from the tiles' shares. */
  TgValue *(*join) (const void *params, const TgRegion *full, const TgTiling *t, int output,
                    TgValue *const *parts, TgError *err);
  /* Optional: an upper bound of the bytes step STEP's tile job (REDUCE
   * false) or its reduce job holds besides its inputs, for FULL cut as T
   * says, so that a plan asks a batch system for enough memory; STEP -1:
   * the joined value of the outputs that are not grids (the mesh or the
   * instance list the whole-world export job reads).  0 or NULL: the
   * plan's own estimate (the outputs over the grown tile; a reduce's
   * blobs a few floats per tile-edge sample; a joined value as big as
   * what it was made from). */
  uint64_t (*work_bytes) (const void *params, const TgRegion *full, const TgTiling *t, int step,
                          bool reduce);
} TgTiledScheme;

struct TgNodeDesc
{
  const char *type;     /* "family.name" */
  TgCategory category;
  const char *label;
  const char *help;
  const TgPortDesc *inputs;
  int n_inputs;
  const TgPortDesc *outputs;
  int n_outputs;
  const TgParamDesc *params;
  int n_params;
  size_t params_size; /* sizeof the parameter struct */
  TgLocality locality;
  /* TG_LOCALITY_APRON: border samples needed at cell size CELL_M (cut
   * at the world's edge with TG_NODE_APRON_IN_WORLD). */
  int (*apron) (const void *params, double cell_m);
  /* Optional checks across parameters (min < max, ...); err->path "params.NAME". */
  int (*check) (const void *params, TgError *err);
  /* Optional checks that depend on which inputs are linked: LINKED[k]
   * for input k.  Run wherever CHECK runs (validation, `tgraph check`,
   * before eval), so a graph eval would refuse is refused up front;
   * err->path "params.NAME" or "inputs.NAME". */
  int (*check_links) (const void *params, const bool *linked, TgError *err);
  int (*eval) (TgEvalCtx *ctx);
  /* TG_LOCALITY_GLOBAL nodes: how a tiled build computes them.  NULL: one
   * job computes the node over the whole world (exact, but its memory
   * grows with the world). */
  const TgTiledScheme *tiled;
  /* Optional: files the node reads beyond its input-path parameters (a
   * numbered slice stack, say).  It calls ADD once per file, relative to
   * the .tgraph folder; each file's identity joins the cache key, so
   * editing any of them recomputes the node. */
  void (*input_files) (const void *params, void (*add) (void *user, const char *path),
                       void *user);
  unsigned flags;
  /* Optional: what evaluating the node holds that its grid outputs do not
   * tell, for the memory estimate made before an evaluation (TgMemQuery
   * below).  NULL: its grid outputs only. */
  void (*memory) (TgMemQuery *q);
  /* Optional: a warning about parameters that work but will not do what
   * they say, such as a feature smaller than two cells at CELL_M, the
   * world's cell at its build resolution (tg_warn_below_cells).  Returns
   * 0, or 1 with WARN filled (path "params.NAME", message); the node runs
   * either way.  The engine's report, `tgraph check` and the app show it. */
  int (*warn) (const void *params, double cell_m, TgError *warn);
  /* Bump when the node's output bytes change for the same parameters; it
   * is part of the cache key and of the golden hashes' meaning. */
  int version;
};

/* What an apron node D with PARAMS reads of its inputs to compute OUT:
 * OUT grown by its apron, cut at the world's edge for
 * TG_NODE_APRON_IN_WORLD.  The engine, the memory estimate and the tiled
 * plan all ask this. */
TgRegion tg_node_apron_region (const TgNodeDesc *d, const void *params, const TgRegion *out);

#define TG_N_ELEMENTS(a) ((int) (sizeof (a) / sizeof ((a)[0])))

/* A descriptor's ports and parameters, each array with its length:
 *   TG_INPUTS (blur_inputs), TG_OUTPUTS (blur_outputs), TG_PARAMS (BlurParams, blur_params), */
#define TG_INPUTS(PORTS) .inputs = (PORTS), .n_inputs = TG_N_ELEMENTS (PORTS)
#define TG_OUTPUTS(PORTS) .outputs = (PORTS), .n_outputs = TG_N_ELEMENTS (PORTS)
/* PARAMS describes struct S, which the engine fills before eval. */
#define TG_PARAMS(S, PARAMS) \
  .params = (PARAMS), .n_params = TG_N_ELEMENTS (PARAMS), .params_size = sizeof (S)

/* Puts a pointer to DESC in the "tg_nodes" section, where the registry finds it. */
#define TG_NODE_REGISTER(desc)                                                          \
  __attribute__ ((used, section ("tg_nodes"), aligned (sizeof (void *))))               \
  static const TgNodeDesc *const tg__node_ptr_##desc = &(desc)

/* --- the eval context --------------------------------------------------- */

/* The node's parameter struct, filled from the graph. */
const void *tg_eval_params (TgEvalCtx *c);
/* Input INDEX (descriptor order), or NULL when an optional input is unlinked. */
const TgValue *tg_eval_input (TgEvalCtx *c, int index);
/* The region every output must cover. */
const TgRegion *tg_eval_region (TgEvalCtx *c);
const TgWorld *tg_eval_world (TgEvalCtx *c);
/* A 32-bit seed from the world seed and the node's own seed parameter. */
uint32_t tg_eval_seed (TgEvalCtx *c, int node_seed);
/* The node's id, for messages. */
const char *tg_eval_node_id (TgEvalCtx *c);
/* The node's descriptor. */
const TgNodeDesc *tg_eval_desc (TgEvalCtx *c);

/* Allocates output INDEX as a grid over tg_eval_region() with CHANNELS
 * channels (uninitialised) and returns it; the context owns it. */
TgValue *tg_eval_new_output (TgEvalCtx *c, int index, int channels);
/* Hands output INDEX to the context (takes the caller's reference). */
void tg_eval_set_output (TgEvalCtx *c, int index, TgValue *v);
/* Output INDEX as made so far (NULL before), for a node to finish it. */
TgValue *tg_eval_output (TgEvalCtx *c, int index);
/* Whether anything reads output INDEX of this run.  A node may leave an
 * output nobody reads unmade, to save the work it costs (a map only it
 * needs, such as erosion's water); every other output it must make, and
 * each made output has the same bytes either way.  A pull of the node
 * reads the outputs it asks for (tg_engine_pull: one; the app's preview
 * shows output 0), an evaluation of a node downstream those its links
 * take, a tiled scheme's steps every one. */
bool tg_eval_output_wanted (TgEvalCtx *c, int index);

/* Runs FN(USER, begin, end) over [0, N) in chunks of GRAIN items on the
 * engine's threads.  Returns 0, or TG_ECANCELLED once cancel was asked
 * (chunks not yet started are skipped).  Progress advances per chunk. */
int tg_eval_parallel (TgEvalCtx *c, int n, int grain,
                      void (*fn) (void *user, int begin, int end), void *user);
/* The same for a part of the node's work: progress goes from FROM to TO
 * (fractions of the whole node) as the chunks finish.  For work in
 * pieces, as an export's bands of rows. */
int tg_eval_parallel_part (TgEvalCtx *c, int n, int grain,
                           void (*fn) (void *user, int begin, int end), void *user, double from,
                           double to);
int tg_eval_threads (TgEvalCtx *c);
bool tg_eval_cancelled (TgEvalCtx *c);
/* FRACTION in 0..1 of this node's work (tg_eval_parallel reports its own). */
void tg_eval_progress (TgEvalCtx *c, double fraction);

/* --- point filters --------------------------------------------------------- */

/* Computes row J of a point filter's output over region R: OUT holds the
 * row's R->width samples (channels interleaved), IN[k] the same samples
 * of input k (NULL for an optional input left unlinked).  JOB is what the
 * eval handed to tg_eval_map_rows. */
typedef void (*TgRowFunc) (const void *job, const TgRegion *r, int j, const float *const *in,
                           float *out);

#define TG_MAP_ROWS_MAX_INPUTS 16

/* The body of a point filter's eval, as GEGL's point-filter base has it:
 * checks that each linked input is a one-channel grid covering
 * tg_eval_region() (a required one must be linked), allocates output 0
 * with CHANNELS channels over the region and runs ROW for every row on
 * the engine's threads.  Returns 0, TG_ECANCELLED, or the code the node
 * failed with (the message names the input). */
int tg_eval_map_rows (TgEvalCtx *c, int channels, TgRowFunc row, const void *job);

/* Computes row J of an area filter's output over region R: OUT as for a
 * point filter; IN[k] is input k itself (NULL when unlinked), which
 * covers R grown by the filter's apron, so the row reads the rows and
 * columns around J too. */
typedef void (*TgAreaRowFunc) (const void *job, const TgRegion *r, int j,
                               const TgValue *const *in, float *out);

/* tg_eval_map_rows for an area filter, whose inputs must cover
 * tg_eval_region() grown by APRON samples. */
int tg_eval_map_area_rows (TgEvalCtx *c, int apron, int channels, TgAreaRowFunc row,
                           const void *job);

/* In a tiled scheme's step or reduce: the build's tiling (the job's tile
 * in ix, iy; -1, -1 in a reduce).  NULL in an ordinary evaluation. */
const TgTiling *tg_eval_tiling (TgEvalCtx *c);
/* Writes blob NAME of this node for the job's tile (or the reduce). */
int tg_eval_blob_put (TgEvalCtx *c, const char *name, const void *data, size_t size);
/* Reads blob NAME that tile (IX, IY) (-1, -1: the reduce) of this node
 * wrote in an earlier step; *DATA is malloc'ed, the caller frees it. */
int tg_eval_blob_get (TgEvalCtx *c, int ix, int iy, const char *name, void **data,
                      size_t *size);
/* Removes blob NAME of tile (IX, IY) of this node, once no job of this
 * step or a later one can read it (a rerun of this job included); it
 * frees the plan folder's disk, the build's bytes do not change. */
int tg_eval_blob_drop (TgEvalCtx *c, int ix, int iy, const char *name);

/* Records a warning on the node, which carries on (a message the
 * descriptor's warn hook cannot tell before the node runs).  Call it from
 * eval itself, not from its parallel chunks.  A result taken from the
 * cache later does not repeat it: warn, which needs no evaluation, is the
 * place for what parameters alone tell. */
void tg_eval_warn (TgEvalCtx *c, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* For a warn hook: when VALUE_M (parameter NAME, labelled LABEL) is
 * below CELLS cells of CELL_M (a feature's size: 2, so it spans two
 * samples; a radius: 1), fills WARN ("Scale 3 m is smaller than two cells
 * of the world's 4 m grid: ...") and returns 1; else 0. */
int tg_warn_below_cells (TgError *warn, const char *name, const char *label, double value_m,
                         double cell_m, int cells);

/* Records a message on the node and returns CODE (a TG_E* value). */
int tg_eval_fail (TgEvalCtx *c, int code, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* --- files, through what formats/ registered ---------------------------- */

/* An image in memory: rows north first, channels interleaved.  BITS is 8
 * (uint8_t), 16 (uint16_t, host order) or 32 (float).  Tagged so that
 * mesh.h's write options can point at one. */
typedef struct TgImage
{
  int width, height, channels;
  int bits;
  void *data;
  /* Rows run south to north (the data is in that order): what a tiled
   * build's stitch needs to put a tile's rows in place. */
  bool south_first;
} TgImage;

void tg_image_clear (TgImage *img);
size_t tg_image_bytes (const TgImage *img);

/* What evaluating a node over a region holds, asked before anything runs
 * (tg_engine_estimate, engine.h).  The engine fills the fields above
 * OUTPUTS and presets OUTPUTS; a node's `memory` hook adds what only it
 * knows.  Upper bounds, cheap to work out: no input is computed, no file
 * is decoded. */
struct TgMemQuery
{
  const void *params;
  const TgRegion *region; /* what the node computes */
  const TgRegion *input;  /* what it reads of its inputs: REGION, grown by the apron, or
                           * the whole lattice */
  /* Reads the header of image PATH (relative to the .tgraph folder) into
   * INFO (its data NULL) without decoding it: 0 or a negative TG_E*.  An
   * image the engine already holds decoded reads as 0 x 0. */
  int (*image_info) (const TgMemQuery *q, const char *path, TgImage *info);
  void *priv;
  uint64_t linked;        /* bit K: input K (K < 64) is linked and read */
  /* Preset: the grid outputs over REGION (a layers output counted as four
   * maps).  Add outputs that are not grids (meshes, instance lists). */
  uint64_t outputs;
  uint64_t work; /* buffers held only while the node runs */
  uint64_t kept; /* held until the evaluation ends: an input file kept decoded */
};

/* The one float -> integer sample rule of every export and writer: V
 * clamped to 0..1 (NaN -> 0), times FULL (255 or 65535), rounded to
 * nearest in double precision. */
static inline unsigned
tg_quantise (float v, double full)
{
  if (!(v > 0.0f))
    return 0;
  if (v >= 1.0f)
    return (unsigned) full;
  return (unsigned) ((double) v * full + 0.5);
}

/* Reads PATH (relative to the .tgraph folder) with the reader registered
 * for its extension.  The image is cached by path, size and modification
 * time and is borrowed until the eval returns. */
int tg_eval_load_image (TgEvalCtx *c, const char *path, const TgImage **img);

/* Writes IMG to REL_PATH (relative to the output folder) with the writer
 * registered for FORMAT ("png16", "raw16", ...).  The file is staged under
 * a temporary name and appears only when the whole export succeeds. */
int tg_eval_write_image (TgEvalCtx *c, const char *rel_path, const char *format,
                         const TgImage *img);
/* The same, naming what each of IMG's channels holds (IMG->channels
 * names, "" for none) for the build's manifest. */
int tg_eval_write_image_named (TgEvalCtx *c, const char *rel_path, const char *format,
                               const TgImage *img, const char *const *channel_names);

/* The same for meshes and instance lists (see io.h for the writers);
 * OPT may be NULL. */
int tg_eval_write_mesh (TgEvalCtx *c, const char *rel_path, const char *format, const TgMesh *m,
                        const TgMeshWriteOptions *opt);
int tg_eval_write_points (TgEvalCtx *c, const char *rel_path, const char *format,
                          const TgPoints *p, const TgMesh *const *proto_meshes,
                          const TgPointsWriteOptions *opt);
/* Reads a mesh file (relative to the .tgraph folder) with the reader for
 * its extension; the mesh is borrowed until the eval returns. */
int tg_eval_load_mesh (TgEvalCtx *c, const char *path, const TgMesh **m);

#ifdef __cplusplus
}
#endif
#endif
