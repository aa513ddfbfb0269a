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
  int consumers;  /* reads still to come of this one's outputs: links and windows */
  int *readers;   /* per output port: the links still to read it */
  int windows;    /* windows of this job whose reads are still to come */
  bool abandoned; /* every reader was done before it ran: it never runs */
  bool reads_released; /* the reads it counted on its inputs are released */
  int source;     /* a job of the same node over a larger region, or -1 */
  uint64_t also;  /* outputs a window being cut from it needs besides */
} Job;

typedef struct Eval Eval;

struct Eval
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
  /* The job a pull asked for and the outputs it asked of it (bit K:
   * output K); -1: every job no read was counted on wants all its
   * outputs (exports, the memory estimate). */
  int root;
  uint64_t root_want;
  bool validated; /* the graph passed tg_graph_validate unchanged since: skip check_node */
  const TgTiling *export_tiling; /* an export of one tile: its window */
  TgRegion export_window;
  /* Lets go of output PORT of job JOB (-1: all of them), which no read
   * still to come needs: engine.c drops its reference, the memory
   * estimate takes the bytes off what is alive. */
  void (*drop) (Eval *ev, int job, int port);
  void *drop_user;
};

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
/* The bookkeeping of reads (engine.c), shared by the evaluation and the
 * memory estimate so that both let results go at the same moments.
 *
 * Keying counts every read to come: each link into a job's reader, and
 * each window a smaller job of the same node will cut from it.  A read
 * done is released (PORT: the output a link read, -1: a window); an
 * output no read still needs is dropped (EV->drop) as soon as its job
 * has run, the whole job once its last read is done, and a job all of
 * whose readers are done before it ran never runs: it releases its own
 * reads in turn. */
void tg__job_release (Eval *ev, int job, int port);
/* The outputs JOB's run must make (bit K: output K): those a read still
 * to come needs; for the job a pull asked for, the outputs it asked for;
 * every one for another job no read was counted on (an export's). */
uint64_t tg__job_want (const Eval *ev, int job);
/* Drops the outputs of JOB (which has run) that no read still needs. */
void tg__job_drop_unread (Eval *ev, int job);
/* Whether output PORT of JOB is still to be read, directly or through a
 * window not cut yet. */
bool tg__job_port_needed (const Eval *ev, int job, int port);
/* Releases the reads NODE's job over input region IN_R counted on its inputs. */
void tg__release_inputs (Eval *ev, int node, const TgRegion *in_r);
/* Releases, once, the reads JOB counted on its inputs. */
void tg__job_release_reads (Eval *ev, int job);
/* Called once every job is keyed, before any runs: a window (a job with
 * a source) is cut, found in the cache or read from a store, never
 * computed, so the reads it counted on its inputs are released at once. */
void tg__jobs_keyed (Eval *ev);
/* The job a read of JOB pulls: JOB, or, when JOB is a window not cut yet
 * (nor cached, nor stored), the job it is a window of, so that the reader
 * cuts its own copy of the window for the time it runs and no copy is
 * held between readers. */
int tg__read_job (const Eval *ev, int job);

/* Whether export D belongs to the part of a build TILING names (NULL: all). */
bool tg__export_in_part (const TgNodeDesc *d, const TgTiling *tiling);

#endif
