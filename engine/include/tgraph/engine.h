/* Evaluating a graph: the engine, its thread pool and its result cache.
 *
 * An engine is long-lived (the GUI keeps one per window): it owns a thread
 * pool and a cache of results keyed by content (node type and version,
 * parameters, input keys, region).  Pulling an output evaluates only what
 * it needs; pulling it again from an unchanged graph computes nothing.
 * One evaluation runs at a time per engine.
 */
#ifndef TGRAPH_ENGINE_H
#define TGRAPH_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "graph.h"
#include "region.h"
#include "tiled.h"
#include "value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TgEngine TgEngine;

typedef struct
{
  int threads;         /* 0: one per core */
  size_t cache_bytes;  /* 0: 1 GiB */
  /* A one-shot build (the CLI): keep no results for a later evaluation,
   * so intermediate maps are freed as soon as their last reader is done. */
  bool no_cache;
} TgEngineOptions;

TgEngine *tg_engine_new (const TgEngineOptions *opts);
void tg_engine_free (TgEngine *e);
int tg_engine_threads (const TgEngine *e);
void tg_engine_clear_cache (TgEngine *e);
size_t tg_engine_cache_bytes (const TgEngine *e);

/* A cancel token; any thread may request, the engine polls it. */
typedef struct TgCancel TgCancel;
TgCancel *tg_cancel_new (void);
void tg_cancel_free (TgCancel *c);
void tg_cancel_request (TgCancel *c);
void tg_cancel_reset (TgCancel *c);
bool tg_cancel_is_requested (const TgCancel *c);

typedef enum
{
  TG_NODE_IDLE,      /* not needed by this evaluation */
  TG_NODE_RUNNING,
  TG_NODE_DONE,      /* computed */
  TG_NODE_CACHED,    /* taken from the cache */
  TG_NODE_FAILED,    /* the report has its message */
  TG_NODE_SKIPPED,   /* an input failed */
  TG_NODE_CANCELLED,
} TgNodeState;

const char *tg_node_state_name (TgNodeState s);

/* Called from worker threads, at most every few milliseconds per node. */
typedef void (*TgProgressFn) (void *user, int node, TgNodeState state, double fraction);

typedef struct
{
  TgProgressFn progress;
  void *user;
  TgCancel *cancel;
  /* Tiled builds (tiled.h); both NULL in an ordinary evaluation.  With a
   * store, nodes it has are read from it rather than computed.  With a
   * tiling, tg_engine_export works on one job's part of the build: for a
   * tile, the grid exports over the tile's window, each image written raw
   * (tg_tile_image_write) for `tgraph stitch` to encode; for the whole-world
   * job (ix = iy = -1), the exports of meshes and points. */
  const TgTileStore *store;
  const TgTiling *tiling;
  /* With a tiling: encode the tile's images with their formats' writers
   * (a look at one tile) rather than writing them raw for stitch. */
  bool encode_tiles;
} TgEvalHooks;

/* What happened to each node of the graph in one evaluation. */
typedef struct
{
  int n_nodes;
  TgNodeState *state;  /* per node */
  char **message;      /* per node: the failure message, or NULL */
  int n_computed;      /* node evaluations run */
  int n_cached;        /* node results taken from the cache */
} TgEvalReport;

void tg_eval_report_clear (TgEvalReport *r);
/* The first failed node, or -1. */
int tg_eval_report_first_failure (const TgEvalReport *r);

/* Evaluates output port OUTPUT of NODE over REGION.  On success *OUT gets
 * a new reference.  A failing node records its message in REPORT (may be
 * NULL) and the call returns TG_EEVAL with err naming the node. */
int tg_engine_pull (TgEngine *e, const TgGraph *g, int node, int output,
                    const TgRegion *region, const TgEvalHooks *hooks, TgValue **out,
                    TgEvalReport *report, TgError *err);

/* Every output of NODE over REGION in one evaluation (OUTS has n_outputs
 * entries, each a new reference on success): a one-shot engine keeps no
 * results, so pulling the outputs one by one would compute NODE again. */
int tg_engine_pull_outputs (TgEngine *e, const TgGraph *g, int node, const TgRegion *region,
                            const TgEvalHooks *hooks, TgValue **outs, TgEvalReport *report,
                            TgError *err);

/* Runs step STEP of global NODE's tiled scheme for the tile HOOKS->tiling
 * names (REDUCE: the step's reduce job; the tiling's ix, iy are then
 * ignored).  Upstream global nodes come from HOOKS->store.  After the last
 * step, OUTS (n_outputs entries) gets new references to the node's outputs
 * over the tile; OUTS may be NULL for other steps. */
int tg_engine_tile_step (TgEngine *e, const TgGraph *g, int node, int step, bool reduce,
                         const TgEvalHooks *hooks, TgValue **outs, TgEvalReport *report,
                         TgError *err);

/* One file an export wrote. */
typedef struct
{
  char *path;      /* relative to the output folder, '/' separated */
  char *tmp_path;  /* staged file while not yet committed, else NULL */
  char *format;    /* "png16", "raw16", ... */
  char *node_id;
  int width, height;
  uint64_t bytes;
  /* A tile's file: its first sample on the lattice of LATTICE_W samples
   * along X (0: the file holds its whole lattice). */
  int lattice_w, col0, row0;
} TgExportFile;

typedef struct TgExportList
{
  char *out_dir;
  TgExportFile *files;
  int n_files;
  char **new_dirs;  /* folders staging created, parents first, relative to
                     * out_dir ("": out_dir itself) */
  int n_new_dirs;
  bool committed;
  int out_fd;       /* out_dir, while out_fd_open: every name below it is
                     * resolved from here without following links */
  bool out_fd_open;
  /* For tests: called by commit before it renames file I, after every
   * destination was checked (to change the folder in between). */
  void (*before_rename) (struct TgExportList *list, int i, void *data);
  void *before_rename_data;
} TgExportList;

/* Evaluates every export node at the world's build resolution and stages
 * its files in OUT_DIR (created if missing) under temporary names.  On any
 * failure nothing is left behind.  On success the caller adds what it
 * wants (a manifest) and calls tg_export_list_commit. */
int tg_engine_export (TgEngine *e, const TgGraph *g, const char *out_dir,
                      const TgEvalHooks *hooks, TgExportList *list, TgEvalReport *report,
                      TgError *err);

/* Renames every staged file to its final name, all or none: every
 * destination is checked before the first rename, and a rename that fails
 * puts back the files replaced so far.  A symbolic link below out_dir, on
 * the way to a file, is refused. */
int tg_export_list_commit (TgExportList *list, TgError *err);
/* Removes staged files that were not committed, and the folders staging
 * created for them, and frees the list. */
void tg_export_list_clear (TgExportList *list);

/* Stages a file the front end writes itself (the manifest): returns an
 * open stream on a temporary file that commit renames to REL_PATH. */
FILE *tg_export_list_stage (TgExportList *list, const char *rel_path, const char *format,
                            TgError *err);
/* Opens staged file I of LIST for reading (the caller closes the
 * descriptor), resolved as commit resolves it; a negative TG_E* if not. */
int tg_export_list_open_staged (TgExportList *list, int i, TgError *err);

#ifdef __cplusplus
}
#endif
#endif
