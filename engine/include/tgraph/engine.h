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
#include <stdio.h>

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
  /* Optional: each node's result as the evaluation gets it (computed, or
   * from the cache or the store), on the thread that called the engine,
   * before any of it is let go: the node's N outputs over REGION, which
   * holds every window its readers asked for (more than the world for a
   * node read with an apron).  For what a one-shot build keeps of its
   * results (the CLI's report: thumbnails), as it keeps none. */
  void (*result) (void *user, int node, const TgRegion *region, TgValue *const *outs, int n);
} TgEvalHooks;

/* What happened to each node of the graph in one evaluation. */
typedef struct
{
  int n_nodes;
  TgNodeState *state;  /* per node */
  char **message;      /* per node: the failure message, or NULL */
  /* Per node: its warnings, one a line, or NULL.  A warning does not stop
   * the node (tg_graph_node_warning, tg_eval_warn). */
  char **warning;
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

/* One file of a build. */
typedef struct
{
  const char *path;    /* relative to the output folder, '/' separated */
  const char *format;  /* "png16", "raw16", ... */
  const char *node_id; /* the export node that wrote it; "" for the front end's own */
  int width, height;
  bool south_first;    /* an image whose first row is the south edge */
  /* What each channel of an image holds when that has a name (export.splat:
   * its layers; "" for a channel that holds none); NULL otherwise. */
  const char *const *channel_names;
  int n_channel_names;
  uint64_t bytes;      /* set by tg_export_list_commit */
  /* A tile's file: its first sample on the lattice of LATTICE_W samples
   * along X (0: the file holds its whole lattice). */
  int lattice_w, col0, row0;
} TgExportFile;

/* The files of a build, staged in an output folder under temporary names
 * until tg_export_list_commit gives them their names, all at once. */
typedef struct TgExportList TgExportList;

/* Evaluates every export node at the world's build resolution and stages
 * its files in OUT_DIR (created if missing) under temporary names.  On
 * success *OUT is a new list (free with tg_export_list_free): the caller
 * adds what it wants (a manifest) and calls tg_export_list_commit.  On
 * any failure *OUT is NULL and nothing is left behind. */
int tg_engine_export (TgEngine *e, const TgGraph *g, const char *out_dir,
                      const TgEvalHooks *hooks, TgExportList **out, TgEvalReport *report,
                      TgError *err);

/* A new, empty list staging into OUT_DIR, which is created if missing
 * (and removed again if nothing is committed).  NULL with ERR set on
 * failure.  Free with tg_export_list_free. */
TgExportList *tg_export_list_new (const char *out_dir, TgError *err);
/* Removes the staged files that were not committed, and the folders
 * staging created for them, and frees LIST (may be NULL). */
void tg_export_list_free (TgExportList *list);

int tg_export_list_n_files (const TgExportList *list);
/* File I (0 <= I < n_files), borrowed from LIST until it stages another. */
const TgExportFile *tg_export_list_file (const TgExportList *list, int i);

/* Stages FILE->path (relative to the output folder, which it may not
 * leave), described by FILE (its bytes are ignored; its format and node
 * may be NULL): returns an open
 * stream on a temporary file beside its final name (close it with
 * tg_export_list_close_stream), or NULL with ERR set. */
FILE *tg_export_list_stage (TgExportList *list, const TgExportFile *file, TgError *err);
/* Closes F, the stream staged for REL_PATH, after the caller wrote it: 0
 * if every write and the close succeeded, else TG_EIO with ERR naming the
 * file and the system's reason ("cannot write "OUT/h.png": No space left
 * on device").  F is closed either way. */
int tg_export_list_close_stream (TgExportList *list, FILE *f, const char *rel_path, TgError *err);
/* Opens staged file I of LIST for reading (the caller closes the
 * descriptor), resolved as commit resolves it; a negative TG_E* if not. */
int tg_export_list_open_staged (TgExportList *list, int i, TgError *err);
/* Writes staged file I of LIST to the disk in pieces, looking at CANCEL
 * (may be NULL) between them: TG_ECANCELLED once it is asked.  Commit
 * syncs every file before its first rename; synced here, that takes no
 * time a cancel would have to wait for. */
int tg_export_list_sync (TgExportList *list, int i, const TgCancel *cancel, TgError *err);

/* The digest of staged file I and its size, when the registered stream
 * digest (io.h) saw every byte as it was written: true, else false (no
 * digest registered, a writer that seeked, a file staged without the
 * engine's stream). */
bool tg_export_list_digest (const TgExportList *list, int i, uint8_t digest[32],
                            uint64_t *bytes);

/* Renames every staged file to its final name, all or none: every
 * destination is checked before the first rename, and a rename that fails
 * puts back the files replaced so far.  A symbolic link below the output
 * folder, on the way to a file, is refused. */
int tg_export_list_commit (TgExportList *list, TgError *err);

#ifdef __cplusplus
}
#endif
#endif
