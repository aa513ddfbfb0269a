/* The engine's evaluation state, shared by engine.c (which runs an
 * evaluation) and estimate.c (which walks the same jobs in the same order
 * to tell what an evaluation will hold before it starts). */
#ifndef TG_EVAL_H
#define TG_EVAL_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>
#include <time.h>

#include "cache.h"
#include "pool.h"
#include "tgraph/engine.h"
#include "tgraph/hash.h"
#include "tgraph/node.h"

typedef struct
{
  char *path;
  off_t size;
  struct timespec mtime;
  TgImage img;
} LoadedImage;

struct TgEngine
{
  TgPool *pool;
  TgCache *cache;
  pthread_mutex_t lock; /* one evaluation at a time */
  LoadedImage *images;
  int n_images;
};

/* One (node, region) an evaluation needs. */
typedef struct
{
  int node;
  TgRegion region;
  TgHash key;
  int key_rc;   /* 1 when the key is computed, negative when the node is invalid */
  TgValue **outs; /* after evaluation */
  bool done;
  bool failed;
  int consumers;  /* jobs still to read this one's outputs */
  int source;     /* a job of the same node over a larger region, or -1 */
} Job;

typedef struct
{
  TgEngine *e;
  const TgGraph *g;
  const TgEvalHooks *hooks;
  TgEvalReport *report;
  TgError *err;
  Job *jobs;
  int n_jobs, cap_jobs;
  void **params;      /* per node: the filled parameter struct, or NULL */
  /* export mode */
  TgExportList *exports;
  /* tiled builds: the store of earlier stages' results (may be NULL) and,
   * while a tiled scheme's step or reduce runs, the tiling it sees */
  const TgTileStore *store;
  const TgTiling *step_tiling;
  bool raw_tiles; /* a tile job's images go out raw, for stitch to encode */
  bool validated; /* the graph passed tg_graph_validate unchanged since: skip check_node */
  const TgTiling *export_tiling; /* an export of one tile: its window */
  TgRegion export_window;
} Eval;

/* BASE/REL of the graph's folder, or REL when it is absolute.  Caller frees. */
char *tg__resolve_input_path (const TgGraph *g, const char *rel);

/* Opens an evaluation of G (takes the engine's lock); tg__eval_end frees
 * its jobs and parameters and lets the next one run. */
int tg__eval_begin (Eval *ev, TgEngine *e, const TgGraph *g, const TgEvalHooks *hooks,
                    TgEvalReport *report, TgError *err);
void tg__eval_end (Eval *ev);

/* NODE's filled parameter struct, kept for the evaluation (NULL: out of memory). */
void *tg__node_params (Eval *ev, int node);
/* The region NODE's inputs must cover for it to produce OUT. */
TgRegion tg__input_region (Eval *ev, int node, const TgRegion *out);
/* The region NODE computes when asked for OUT (a global node: the whole lattice). */
TgRegion tg__compute_region (const Eval *ev, int node, const TgRegion *out);
/* Whether NODE's results come from a tiled build's earlier stages. */
bool tg__stored (const Eval *ev, int node);
/* The job of NODE over R, or -1. */
int tg__find_job (const Eval *ev, int node, const TgRegion *r);
/* Keys (recursively) NODE over the region it computes for OUT and counts
 * it as a reader of its inputs' jobs; returns the job or a negative TG_E*. */
int tg__job_for (Eval *ev, int node, const TgRegion *out, int depth);
/* Whether export D belongs to the part of a build TILING names (NULL: all). */
bool tg__export_in_part (const TgNodeDesc *d, const TgTiling *tiling);

#endif
