/* Evaluation: content keys, the pull through the graph, the eval context
 * nodes see, progress and cancellation, and staged exports.
 *
 * A pull of (node, region) first computes the node's content key from
 * its type, version, parameters, world and region and, recursively, the
 * keys of the inputs it needs.  Keys need no evaluation, so a cached
 * result is found without touching anything upstream.  On a miss the
 * inputs are pulled, the node runs, and its outputs go to the cache. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache.h"
#include "eval.h"
#include "internal.h"
#include "pool.h"
#include "tgraph/engine.h"
#include "tgraph/hash.h"
#include "tgraph/io.h"
#include "tgraph/registry.h"
#include "tgraph/messages.h"

#define DEFAULT_CACHE_BYTES ((size_t) 1 << 30)
#define PROGRESS_INTERVAL_NS 20000000LL /* at most 50 reports a second per node */

struct TgCancel
{
  atomic_bool requested;
};

struct TgEvalCtx
{
  Eval *ev;
  int node;
  const TgNodeDesc *desc;
  const void *params;
  const TgValue **inputs;
  TgRegion region;
  TgValue **outputs;
  uint64_t want; /* the outputs anything reads (bit K: output K) */
  char message[TG_ERROR_MESSAGE_MAX];
  int fail_code;
  atomic_llong last_progress;
  TgMesh **meshes; /* loaded for this eval, freed after it */
  int n_meshes;
};

/* --- small things ---------------------------------------------------------- */

static const char *const state_names[] = {
  "idle", "running", "done", "cached", "failed", "skipped", "cancelled",
};

const char *
tg_node_state_name (TgNodeState s)
{
  return (unsigned) s < sizeof state_names / sizeof state_names[0] ? state_names[s] : "?";
}

TgCancel *
tg_cancel_new (void)
{
  TgCancel *c = malloc (sizeof *c);

  if (c)
    atomic_init (&c->requested, false);
  return c;
}

void
tg_cancel_free (TgCancel *c)
{
  free (c);
}

void
tg_cancel_request (TgCancel *c)
{
  if (c)
    atomic_store (&c->requested, true);
}

void
tg_cancel_reset (TgCancel *c)
{
  if (c)
    atomic_store (&c->requested, false);
}

bool
tg_cancel_is_requested (const TgCancel *c)
{
  return c && atomic_load (&((TgCancel *) c)->requested);
}

static long long
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void
tg_eval_report_clear (TgEvalReport *r)
{
  if (r == NULL)
    return;
  for (int i = 0; i < r->n_nodes && r->message; i++)
    free (r->message[i]);
  for (int i = 0; i < r->n_nodes && r->warning; i++)
    free (r->warning[i]);
  free (r->message);
  free (r->warning);
  free (r->state);
  memset (r, 0, sizeof *r);
}

int
tg_eval_report_first_failure (const TgEvalReport *r)
{
  for (int i = 0; r && i < r->n_nodes; i++)
    if (r->state[i] == TG_NODE_FAILED)
      return i;
  return -1;
}

static void
report_state (Eval *ev, int node, TgNodeState s, double fraction)
{
  if (ev->report && node < ev->report->n_nodes)
    ev->report->state[node] = s;
  if (ev->hooks && ev->hooks->progress)
    ev->hooks->progress (ev->hooks->user, node, s, fraction);
}

static bool
cancelled (const Eval *ev)
{
  return ev->hooks && tg_cancel_is_requested (ev->hooks->cancel);
}

/* --- the engine ------------------------------------------------------------ */

TgEngine *
tg_engine_new (const TgEngineOptions *opts)
{
  TgEngine *e = calloc (1, sizeof *e);
  int threads = opts ? opts->threads : 0;
  size_t budget = opts && opts->no_cache ? 0 : opts && opts->cache_bytes ? opts->cache_bytes : DEFAULT_CACHE_BYTES;

  if (e == NULL)
    return NULL;
  e->pool = tg__pool_new (threads > 0 ? threads : tg__cpu_count ());
  e->cache = tg__cache_new (budget);
  pthread_mutex_init (&e->lock, NULL);
  if (e->pool == NULL || e->cache == NULL)
    {
      tg_engine_free (e);
      return NULL;
    }
  return e;
}

static void
images_clear (TgEngine *e)
{
  for (int i = 0; i < e->n_images; i++)
    {
      free (e->images[i].path);
      tg_image_clear (&e->images[i].img);
    }
  free (e->images);
  e->images = NULL;
  e->n_images = 0;
}

void
tg_engine_free (TgEngine *e)
{
  if (e == NULL)
    return;
  tg__pool_free (e->pool);
  tg__cache_free (e->cache);
  images_clear (e);
  pthread_mutex_destroy (&e->lock);
  free (e);
}

int
tg_engine_threads (const TgEngine *e)
{
  return tg__pool_threads (e->pool);
}

void
tg_engine_clear_cache (TgEngine *e)
{
  pthread_mutex_lock (&e->lock);
  tg__cache_clear (e->cache);
  images_clear (e);
  pthread_mutex_unlock (&e->lock);
}

size_t
tg_engine_cache_bytes (const TgEngine *e)
{
  return tg__cache_bytes (e->cache);
}

/* --- paths ----------------------------------------------------------------- */

/* BASE/REL, or REL when it is absolute.  Caller frees. */
char *
tg__resolve_input_path (const TgGraph *g, const char *rel)
{
  const char *base = tg_graph_base_dir (g);
  size_t n;
  char *out;

  if (rel[0] == '/')
    return strdup (rel);
  n = strlen (base) + strlen (rel) + 2;
  out = malloc (n);
  if (out)
    snprintf (out, n, "%s/%s", base, rel);
  return out;
}

/* --- parameters and keys --------------------------------------------------- */

void *
tg__node_params (Eval *ev, int node)
{
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, node);
  void *p;

  if (ev->params[node])
    return ev->params[node];
  p = calloc (1, d->params_size ? d->params_size : 1);
  if (p == NULL)
    return NULL;
  for (int k = 0; k < d->n_params; k++)
    if (tg_param_value_store (&d->params[k], tg_graph_get_param_at (ev->g, node, k), p) < 0)
      {
        tg_params_struct_clear (d->params, d->n_params, p);
        free (p);
        return NULL;
      }
  ev->params[node] = p;
  return p;
}

/* Checks what evaluating NODE needs (tg_graph_check_node, the same check
 * tg_graph_validate makes of every node).  A pull validates only the part
 * of the graph it touches, so the GUI can preview one branch while
 * another is still being wired; a graph validated since its last edit is
 * not checked again. */
static int
check_node (Eval *ev, int node)
{
  void *p;

  if (ev->validated)
    return 0;
  p = tg__node_params (ev, node);
  if (p == NULL)
    return tg_error_set (ev->err, TG_ENOMEM, NULL, NULL);
  return tg_graph_check_node (ev->g, node, p, ev->err);
}

/* The region input nodes must cover for NODE to produce OUT. */
TgRegion
tg__input_region (Eval *ev, int node, const TgRegion *out)
{
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, node);

  switch (tg_graph_node_locality (ev->g, node))
    {
    case TG_LOCALITY_APRON:
      return tg_node_apron_region (d, tg__node_params (ev, node), out);
    case TG_LOCALITY_GLOBAL:
      return tg_region_full (out);
    case TG_LOCALITY_LOCAL:
    default:
      return *out;
    }
}

/* Whether NODE's results come from a tiled build's earlier stages. */
bool
tg__stored (const Eval *ev, int node)
{
  return ev->store && ev->store->has && ev->store->has (ev->store->user, node);
}

/* The region NODE itself computes when asked for OUT (global nodes always
 * compute the whole lattice; what the store has, it gives over any window). */
TgRegion
tg__compute_region (const Eval *ev, int node, const TgRegion *out)
{
  if (tg_graph_node_locality (ev->g, node) != TG_LOCALITY_GLOBAL || tg__stored (ev, node))
    return *out;
  return tg_region_full (out);
}

int
tg__find_job (const Eval *ev, int node, const TgRegion *r)
{
  for (int i = 0; i < ev->n_jobs; i++)
    if (ev->jobs[i].node == node && tg_region_equal (&ev->jobs[i].region, r))
      return i;
  return -1;
}

static int
add_job (Eval *ev, int node, const TgRegion *r)
{
  int n_outputs = tg_graph_node_desc (ev->g, node)->n_outputs;

  if (ev->n_jobs == ev->cap_jobs)
    {
      int cap = ev->cap_jobs ? ev->cap_jobs * 2 : 32;
      Job *grown = realloc (ev->jobs, sizeof (Job) * (size_t) cap);
      if (grown == NULL)
        return TG_ENOMEM;
      ev->jobs = grown;
      ev->cap_jobs = cap;
    }
  memset (&ev->jobs[ev->n_jobs], 0, sizeof (Job));
  ev->jobs[ev->n_jobs].node = node;
  ev->jobs[ev->n_jobs].region = *r;
  ev->jobs[ev->n_jobs].source = -1;
  ev->jobs[ev->n_jobs].readers = calloc ((size_t) (n_outputs > 0 ? n_outputs : 1), sizeof (int));
  if (ev->jobs[ev->n_jobs].readers == NULL)
    return TG_ENOMEM;
  /* An apron reader and a plain reader of the same node ask for nested
   * regions: the smaller becomes a window of the larger rather than a
   * second run (nodes are pure functions of position). */
  for (int i = 0; i < ev->n_jobs; i++)
    {
      Job *o = &ev->jobs[i], *nj = &ev->jobs[ev->n_jobs];
      if (o->node != node)
        continue;
      if (nj->source < 0 && tg_region_contains (&o->region, r))
        {
          nj->source = i;
          o->consumers++;
          o->windows++;
        }
      else if (!o->done && o->source < 0 && tg_region_contains (r, &o->region))
        {
          o->source = ev->n_jobs;
          nj->consumers++;
          nj->windows++;
        }
    }
  return ev->n_jobs++;
}

/* The identity of input file REL (path, size, modification time, inode),
 * so editing the file invalidates results computed from it. */
static void
hash_file_identity (TgHasher *h, const TgGraph *g, const char *rel)
{
  char *full = rel ? tg__resolve_input_path (g, rel) : NULL;
  struct stat st;

  tg_hasher_str (h, full);
  if (full && stat (full, &st) == 0)
    {
      tg_hasher_u64 (h, (uint64_t) st.st_size);
      tg_hasher_u64 (h, (uint64_t) st.st_mtim.tv_sec);
      tg_hasher_u64 (h, (uint64_t) st.st_mtim.tv_nsec);
      tg_hasher_u64 (h, (uint64_t) st.st_ino);
    }
  else
    tg_hasher_u64 (h, 0xdeadULL);
  free (full);
}

typedef struct
{
  TgHasher *h;
  const TgGraph *g;
} FileHash;

static void
add_input_file (void *user, const char *path)
{
  FileHash *fh = user;
  hash_file_identity (fh->h, fh->g, path);
}

static void
hash_param (TgHasher *h, const Eval *ev, const TgParamValue *v)
{
  tg_hasher_u64 (h, (uint64_t) v->type);
  switch (v->type)
    {
    case TG_PARAM_FLOAT:
      tg_hasher_double (h, v->f);
      break;
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
    case TG_PARAM_BOOL:
    case TG_PARAM_ENUM:
      tg_hasher_u64 (h, (uint64_t) (int64_t) v->i);
      tg_hasher_str (h, v->s);
      break;
    case TG_PARAM_STRING:
    case TG_PARAM_OUTPUT_PATH:
      tg_hasher_str (h, v->s);
      break;
    case TG_PARAM_INPUT_PATH:
      hash_file_identity (h, ev->g, v->s);
      break;
    case TG_PARAM_VEC2:
    case TG_PARAM_VEC3:
    case TG_PARAM_COLOR:
      for (int k = 0; k < 4; k++)
        tg_hasher_double (h, v->v[k]);
      break;
    case TG_PARAM_CURVE:
      tg_hasher_u64 (h, (uint64_t) v->n_points);
      for (int k = 0; k < 2 * v->n_points; k++)
        tg_hasher_double (h, v->xy[k]);
      break;
    case TG_PARAM_LIST:
      tg_hasher_u64 (h, (uint64_t) v->n_items);
      for (int k = 0; k < v->n_items * v->n_item_params; k++)
        hash_param (h, ev, &v->items[k]);
      break;
    case TG_PARAM_TYPE_COUNT:
      break;
    }
}

static void
hash_region (TgHasher *h, const TgRegion *r)
{
  tg_hasher_double (h, r->origin_x);
  tg_hasher_double (h, r->origin_z);
  tg_hasher_double (h, r->cell);
  tg_hasher_u64 (h, (uint64_t) (uint32_t) r->full_w);
  tg_hasher_u64 (h, (uint64_t) (uint32_t) r->full_h);
  tg_hasher_u64 (h, (uint64_t) (uint32_t) r->col0);
  tg_hasher_u64 (h, (uint64_t) (uint32_t) r->row0);
  tg_hasher_u64 (h, (uint64_t) (uint32_t) r->width);
  tg_hasher_u64 (h, (uint64_t) (uint32_t) r->height);
}

/* Computes (recursively) the key of NODE over the region it computes for
 * OUT; returns the job index or a negative error. */
int
tg__job_for (Eval *ev, int node, const TgRegion *out, int depth)
{
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, node);
  TgRegion r = tg__compute_region (ev, node, out), in_r;
  const TgWorld *w = tg_graph_world_const (ev->g);
  TgHasher h;
  int j, rc;

  if (depth > tg_graph_n_nodes (ev->g))
    return tg_error_set (ev->err, TG_ECYCLE, "links", TG_MSG_CYCLE_PLAIN);
  if (depth >= TG_GRAPH_MAX_DEPTH)
    return tg_error_set (ev->err, TG_ERANGE, "links", TG_MSG_CHAIN_TOO_DEEP, TG_GRAPH_MAX_DEPTH);
  j = tg__find_job (ev, node, &r);
  if (j >= 0)
    return ev->jobs[j].key_rc < 0 ? ev->jobs[j].key_rc : j;
  if ((rc = check_node (ev, node)) < 0)
    return rc;
  in_r = tg__input_region (ev, node, &r);
  tg_hasher_init (&h);
  tg_hasher_str (&h, d->type);
  tg_hasher_u64 (&h, (uint64_t) d->version);
  if (tg_graph_node_bypass (ev->g, node))
    tg_hasher_u64 (&h, 0x6279706173736564ULL); /* "bypassed" */
  for (int k = 0; k < d->n_params; k++)
    hash_param (&h, ev, tg_graph_get_param_at (ev->g, node, k));
  if (d->input_files)
    {
      FileHash fh = { &h, ev->g };
      d->input_files (tg__node_params (ev, node), add_input_file, &fh);
    }
  tg_hasher_double (&h, w->size_x);
  tg_hasher_double (&h, w->size_z);
  tg_hasher_double (&h, w->height_m);
  tg_hasher_u64 (&h, w->seed);
  hash_region (&h, &r);
  /* A stored result stands for its whole upstream, which the stage that
   * wrote it keyed; nothing upstream is pulled. */
  for (int k = 0; k < d->n_inputs && !tg__stored (ev, node); k++)
    {
      int l = tg_graph_input_link (ev->g, node, k);
      if (l < 0 || !tg_graph_node_reads_input (ev->g, node, k))
        tg_hasher_u64 (&h, 0x756e6c696e6b6564ULL); /* "unlinked" */
      else
        {
          const TgLink *link = tg_graph_link (ev->g, l);
          int ij = tg__job_for (ev, link->from_node, &in_r, depth + 1);
          if (ij < 0)
            return ij;
          tg_hasher_u64 (&h, ev->jobs[ij].key.a);
          tg_hasher_u64 (&h, ev->jobs[ij].key.b);
          tg_hasher_u64 (&h, (uint64_t) link->from_port);
          ev->jobs[ij].consumers++;
          ev->jobs[ij].readers[link->from_port]++;
        }
    }
  j = add_job (ev, node, &r);
  if (j < 0)
    return tg_error_set (ev->err, TG_ENOMEM, NULL, NULL);
  ev->jobs[j].key = tg_hasher_finish (&h);
  ev->jobs[j].key_rc = 1;
  return j;
}

/* --- the eval context ------------------------------------------------------ */

const void *
tg_eval_params (TgEvalCtx *c)
{
  return c->params;
}

const TgValue *
tg_eval_input (TgEvalCtx *c, int index)
{
  return index >= 0 && index < c->desc->n_inputs ? c->inputs[index] : NULL;
}

const TgRegion *
tg_eval_region (TgEvalCtx *c)
{
  return &c->region;
}

const TgWorld *
tg_eval_world (TgEvalCtx *c)
{
  return tg_graph_world_const (c->ev->g);
}

uint32_t
tg_eval_seed (TgEvalCtx *c, int node_seed)
{
  uint32_t world_seed = tg_graph_world_const (c->ev->g)->seed;
  return tg_mix32 (tg_mix32 (world_seed * 0x9E3779B1U + 0x632BE5ABU) ^ (uint32_t) node_seed);
}

const char *
tg_eval_node_id (TgEvalCtx *c)
{
  return tg_graph_node_id (c->ev->g, c->node);
}

const TgNodeDesc *
tg_eval_desc (TgEvalCtx *c)
{
  return c->desc;
}

TgValue *
tg_eval_new_output (TgEvalCtx *c, int index, int channels)
{
  TgValue *v;

  if (index < 0 || index >= c->desc->n_outputs)
    return NULL;
  v = tg_value_new_grid (c->desc->outputs[index].type, &c->region, channels);
  if (v)
    tg_eval_set_output (c, index, v);
  return v;
}

TgValue *
tg_eval_output (TgEvalCtx *c, int index)
{
  return index >= 0 && index < c->desc->n_outputs ? c->outputs[index] : NULL;
}

bool
tg_eval_output_wanted (TgEvalCtx *c, int index)
{
  return index >= 64 || (index >= 0 && (c->want >> index) & 1);
}

void
tg_eval_set_output (TgEvalCtx *c, int index, TgValue *v)
{
  if (index < 0 || index >= c->desc->n_outputs)
    {
      tg_value_unref (v);
      return;
    }
  tg_value_unref (c->outputs[index]);
  c->outputs[index] = v;
}

static bool
pool_should_stop (void *user)
{
  TgEvalCtx *c = user;
  return cancelled (c->ev);
}

/* JOB over [0, N) on the engine's threads, GRAIN items a call: 0, or
 * TG_ECANCELLED when the build was cancelled before or during it. */
static int
run_on_pool (TgEvalCtx *c, int n, int grain, const TgPoolJob *job)
{
  if (cancelled (c->ev))
    return TG_ECANCELLED;
  if (!tg__pool_run (c->ev->e->pool, n, grain, job))
    return TG_ECANCELLED;
  return cancelled (c->ev) ? TG_ECANCELLED : 0;
}

/* A part of a node's progress: FROM + SPAN * the part's fraction. */
typedef struct
{
  TgEvalCtx *c;
  double from, span;
} ProgressPart;

static bool
part_should_stop (void *user)
{
  const ProgressPart *p = user;
  return cancelled (p->c->ev);
}

static void
part_progress (void *user, int done, int total)
{
  const ProgressPart *p = user;
  tg_eval_progress (p->c, p->from + p->span * (double) done / (double) total);
}

int
tg_eval_parallel (TgEvalCtx *c, int n, int grain, void (*fn) (void *user, int begin, int end),
                  void *user)
{
  return tg_eval_parallel_part (c, n, grain, fn, user, 0.0, 1.0);
}

int
tg_eval_parallel_part (TgEvalCtx *c, int n, int grain,
                       void (*fn) (void *user, int begin, int end), void *user, double from,
                       double to)
{
  ProgressPart part = { c, from, to - from };
  TgPoolJob job = { fn, user, part_should_stop, part_progress, &part };

  return run_on_pool (c, n, grain, &job);
}

int
tg__eval_parallel_quiet (TgEvalCtx *c, int n, void (*fn) (void *user, int begin, int end),
                         void *user)
{
  TgPoolJob job = { fn, user, pool_should_stop, NULL, c };

  return run_on_pool (c, n, 1, &job);
}

int
tg_eval_threads (TgEvalCtx *c)
{
  return tg__pool_threads (c->ev->e->pool);
}

bool
tg_eval_cancelled (TgEvalCtx *c)
{
  return cancelled (c->ev);
}

void
tg_eval_progress (TgEvalCtx *c, double fraction)
{
  long long t, last;

  if (c->ev->hooks == NULL || c->ev->hooks->progress == NULL)
    return;
  t = now_ns ();
  last = atomic_load_explicit (&c->last_progress, memory_order_relaxed);
  if (fraction < 1.0 && t - last < PROGRESS_INTERVAL_NS)
    return;
  if (!atomic_compare_exchange_strong (&c->last_progress, &last, t))
    return;
  c->ev->hooks->progress (c->ev->hooks->user, c->node, TG_NODE_RUNNING,
                          fraction < 0 ? 0 : fraction > 1 ? 1 : fraction);
}

const TgTiling *
tg_eval_tiling (TgEvalCtx *c)
{
  return c->ev->step_tiling;
}

int
tg_eval_blob_put (TgEvalCtx *c, const char *name, const void *data, size_t size)
{
  const TgTiling *t = c->ev->step_tiling;
  const TgTileStore *st = c->ev->store;
  TgError err = { 0 };
  int rc;

  if (t == NULL || st == NULL || st->blob_put == NULL)
    return tg_eval_fail (c, TG_EINVAL, "blob \"%s\" written outside a tiled build", name);
  rc = st->blob_put (st->user, c->node, t->ix, t->iy, name, data, size, &err);
  return rc < 0 ? tg_eval_fail (c, rc, "%s", err.message[0] ? err.message : tg_strerror (rc)) : 0;
}

int
tg_eval_blob_get (TgEvalCtx *c, int ix, int iy, const char *name, void **data, size_t *size)
{
  const TgTileStore *st = c->ev->store;
  TgError err = { 0 };
  int rc;

  *data = NULL;
  *size = 0;
  if (c->ev->step_tiling == NULL || st == NULL || st->blob_get == NULL)
    return tg_eval_fail (c, TG_EINVAL, "blob \"%s\" read outside a tiled build", name);
  rc = st->blob_get (st->user, c->node, ix, iy, name, data, size, &err);
  return rc < 0 ? tg_eval_fail (c, rc, "%s", err.message[0] ? err.message : tg_strerror (rc)) : 0;
}

int
tg_eval_blob_drop (TgEvalCtx *c, int ix, int iy, const char *name)
{
  const TgTileStore *st = c->ev->store;
  TgError err = { 0 };
  int rc;

  if (c->ev->step_tiling == NULL || st == NULL)
    return tg_eval_fail (c, TG_EINVAL, "blob \"%s\" dropped outside a tiled build", name);
  if (st->blob_drop == NULL)
    return 0;
  rc = st->blob_drop (st->user, c->node, ix, iy, name, &err);
  return rc < 0 ? tg_eval_fail (c, rc, "%s", err.message[0] ? err.message : tg_strerror (rc)) : 0;
}

int
tg_eval_fail (TgEvalCtx *c, int code, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (c->message, sizeof c->message, fmt, ap);
  va_end (ap);
  c->fail_code = code < 0 ? code : TG_EEVAL;
  return c->fail_code;
}

/* --- files ----------------------------------------------------------------- */

int
tg_eval_load_image (TgEvalCtx *c, const char *path, const TgImage **img)
{
  TgEngine *e = c->ev->e;
  char *full;
  struct stat st;
  TgError err = { 0 };
  LoadedImage *grown;
  int rc;

  if (path == NULL || path[0] == '\0')
    return tg_eval_fail (c, TG_EMISSING, TG_MSG_NO_FILE);
  full = tg__resolve_input_path (c->ev->g, path);
  if (full == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  if (stat (full, &st) != 0)
    {
      rc = tg_eval_fail (c, TG_EIO, TG_MSG_CANNOT_READ, path, strerror (errno));
      free (full);
      return rc;
    }
  for (int i = 0; i < e->n_images; i++)
    {
      LoadedImage *li = &e->images[i];
      if (strcmp (li->path, full) == 0)
        {
          if (li->size == st.st_size && li->mtime.tv_sec == st.st_mtim.tv_sec
              && li->mtime.tv_nsec == st.st_mtim.tv_nsec)
            {
              free (full);
              *img = &li->img;
              return 0;
            }
          /* The file changed: drop the old copy. */
          free (li->path);
          tg_image_clear (&li->img);
          e->images[i] = e->images[--e->n_images];
          break;
        }
    }
  grown = realloc (e->images, sizeof (LoadedImage) * (size_t) (e->n_images + 1));
  if (grown == NULL)
    {
      free (full);
      return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
    }
  e->images = grown;
  memset (&e->images[e->n_images], 0, sizeof (LoadedImage));
  rc = tg_io_read_image (full, &e->images[e->n_images].img, &err);
  if (rc < 0)
    {
      free (full);
      return tg_eval_fail (c, rc, TG_MSG_CANNOT_READ, path, err.message);
    }
  e->images[e->n_images].path = full;
  e->images[e->n_images].size = st.st_size;
  e->images[e->n_images].mtime = st.st_mtim;
  *img = &e->images[e->n_images].img;
  e->n_images++;
  return 0;
}

/* Stages the file SHAPE describes (path, format, size, rows; the node
 * and the tile are filled in here) and lets EMIT write it; the file is
 * recorded before it is written so any failure removes it with the rest
 * of the export. */
static int
write_staged (TgEvalCtx *c, const TgExportFile *shape,
              int (*emit) (FILE *f, const void *what, const void *extra, TgError *err),
              const void *what, const void *extra)
{
  Eval *ev = c->ev;
  TgExportFile file = *shape;
  const char *rel_path = shape->path;
  TgError err = { 0 };
  FILE *staged, *f;
  int rc, close_rc;

  if (ev->exports == NULL)
    return tg_eval_fail (c, TG_EINVAL, "files are only written by an export");
  file.node_id = tg_eval_node_id (c);
  if (ev->export_tiling && ev->export_tiling->ix >= 0)
    {
      file.lattice_w = ev->export_window.full_w;
      file.col0 = ev->export_window.col0;
      file.row0 = ev->export_window.row0;
    }
  staged = tg_export_list_stage (ev->exports, &file, &err);
  if (staged == NULL)
    return tg_eval_fail (c, err.code, "%s", err.message);
  /* The writer stops at its next flush once cancel is asked. */
  f = tg__cancel_stream_new_hashed (staged, ev->hooks ? ev->hooks->cancel : NULL, ev->exports,
                                    tg_export_list_n_files (ev->exports) - 1, c);
  if (f == NULL)
    {
      fclose (staged);
      return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OOM_STAGING, rel_path);
    }
  rc = emit (f, what, extra, &err);
  /* A write that failed (a full disk) is told in the system's words,
   * which say more than the writer's; one that failed because cancel was
   * asked is a cancel. */
  close_rc = tg_export_list_close_stream (ev->exports, f, rel_path, &err);
  if ((rc < 0 || close_rc < 0) && cancelled (ev))
    return tg_eval_fail (c, TG_ECANCELLED, TG_MSG_CANCELLED);
  if (close_rc < 0)
    return tg_eval_fail (c, close_rc, "%s", err.message);
  if (rc < 0)
    return tg_eval_fail (c, rc, TG_MSG_WRITING, rel_path, err.message);
  return 0;
}

/* The writers differ only in what they take; these adapt them to emit(). */
static int
emit_image (FILE *f, const void *what, const void *extra, TgError *err)
{
  return (*(const TgImageWriter *) extra) (f, what, err);
}

typedef struct
{
  TgMeshWriter writer;
  const TgMeshWriteOptions *opt;
} MeshEmit;

static int
emit_mesh (FILE *f, const void *what, const void *extra, TgError *err)
{
  const MeshEmit *me = extra;
  return me->writer (f, what, me->opt, err);
}

typedef struct
{
  TgPointsWriter writer;
  const TgMesh *const *proto_meshes;
  const TgPointsWriteOptions *opt;
} PointsEmit;

static int
emit_points (FILE *f, const void *what, const void *extra, TgError *err)
{
  const PointsEmit *pe = extra;
  return pe->writer (f, what, pe->proto_meshes, pe->opt, err);
}

static int
no_writer (TgEvalCtx *c, const char *kind, const char *format)
{
  return tg_eval_fail (c, TG_EFORMAT, "no %s writer for format \"%s\" (formats not initialised?)",
                       kind, format ? format : "");
}

int
tg_eval_write_image (TgEvalCtx *c, const char *rel_path, const char *format, const TgImage *img)
{
  return tg_eval_write_image_named (c, rel_path, format, img, NULL);
}

int
tg_eval_write_image_named (TgEvalCtx *c, const char *rel_path, const char *format,
                           const TgImage *img, const char *const *channel_names)
{
  TgImageWriter w = tg_io_image_writer (format);
  TgExportFile shape = { .path = rel_path, .format = format, .width = img->width,
                         .height = img->height, .south_first = img->south_first,
                         .channel_names = channel_names,
                         .n_channel_names = channel_names ? img->channels : 0 };

  if (w == NULL)
    return no_writer (c, "image", format);
  if (c->ev->raw_tiles)
    {
      /* "height.png.tile": what stitch turns into height.png. */
      char tile_path[PATH_MAX];
      if (snprintf (tile_path, sizeof tile_path, "%s.tile", rel_path) >= (int) sizeof tile_path)
        return tg_eval_fail (c, TG_EPATH, TG_MSG_EXPORT_PATH_TOO_LONG);
      w = tg_tile_image_write;
      shape.path = tile_path;
      return write_staged (c, &shape, emit_image, img, &w);
    }
  return write_staged (c, &shape, emit_image, img, &w);
}

static int
emit_image_rows (FILE *f, const void *what, const void *extra, TgError *err)
{
  return (*(const TgImageRowsWriter *) extra) (f, what, err);
}

int
tg_eval_write_image_rows (TgEvalCtx *c, const char *rel_path, const char *format,
                          const TgImageRows *rows, bool south_first)
{
  return tg_eval_write_image_rows_named (c, rel_path, format, rows, south_first, NULL);
}

int
tg_eval_write_image_rows_named (TgEvalCtx *c, const char *rel_path, const char *format,
                                const TgImageRows *rows, bool south_first,
                                const char *const *channel_names)
{
  TgImageRowsWriter w = tg_io_image_rows_writer (format);
  TgExportFile shape = { .path = rel_path, .format = format, .width = rows->width,
                         .height = rows->height, .south_first = south_first,
                         .channel_names = channel_names,
                         .n_channel_names = channel_names ? rows->channels : 0 };
  TgImage img = { .width = rows->width, .height = rows->height, .channels = rows->channels,
                  .bits = rows->bits, .south_first = south_first };
  TgError err = { 0 };
  int rc;

  if (w && !c->ev->raw_tiles)
    return write_staged (c, &shape, emit_image_rows, rows, &w);
  /* A tile's raw image, or a format without a rows writer: gathered whole. */
  if (rows->whole)
    return tg_eval_write_image_named (c, rel_path, format, rows->whole, channel_names);
  if (!(img.data = malloc (tg_image_bytes (&img) ? tg_image_bytes (&img) : 1)))
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  rc = rows->rows (rows->user, 0, rows->height, img.data, &err);
  if (rc < 0)
    rc = tg_eval_fail (c, rc, TG_MSG_WRITING, rel_path, err.message);
  else
    rc = tg_eval_write_image_named (c, rel_path, format, &img, channel_names);
  free (img.data);
  return rc;
}

int
tg_eval_write_mesh (TgEvalCtx *c, const char *rel_path, const char *format, const TgMesh *m,
                    const TgMeshWriteOptions *opt)
{
  MeshEmit me = { tg_io_mesh_writer (format), opt };

  if (me.writer == NULL)
    return no_writer (c, "mesh", format);
  return write_staged (c, &(TgExportFile) { .path = rel_path, .format = format }, emit_mesh, m,
                       &me);
}

int
tg_eval_write_points (TgEvalCtx *c, const char *rel_path, const char *format, const TgPoints *p,
                      const TgMesh *const *proto_meshes, const TgPointsWriteOptions *opt)
{
  PointsEmit pe = { tg_io_points_writer (format), proto_meshes, opt };

  if (pe.writer == NULL)
    return no_writer (c, "instance list", format);
  return write_staged (c, &(TgExportFile) { .path = rel_path, .format = format }, emit_points, p,
                       &pe);
}

int
tg_eval_load_mesh (TgEvalCtx *c, const char *path, const TgMesh **m)
{
  char ext[16], *full;
  TgMeshReader reader;
  TgMesh *mesh = NULL, **grown;
  TgError err = { 0 };
  int rc;

  if (path == NULL || path[0] == '\0')
    return tg_eval_fail (c, TG_EMISSING, TG_MSG_NO_FILE);
  tg__path_extension (path, ext, sizeof ext);
  reader = tg_io_mesh_reader (ext);
  if (reader == NULL)
    return tg_eval_fail (c, TG_EFORMAT, TG_MSG_NO_MESH_READER, ext, path);
  full = tg__resolve_input_path (c->ev->g, path);
  if (full == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  rc = reader (full, &mesh, &err);
  free (full);
  if (rc < 0)
    return tg_eval_fail (c, rc, TG_MSG_CANNOT_READ, path, err.message);
  grown = realloc (c->meshes, sizeof (TgMesh *) * (size_t) (c->n_meshes + 1));
  if (grown == NULL)
    {
      tg_mesh_free (mesh);
      return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
    }
  c->meshes = grown;
  c->meshes[c->n_meshes++] = mesh;
  *m = mesh;
  return 0;
}

/* --- running nodes --------------------------------------------------------- */

static void
fail_node (Eval *ev, int node, int code, const char *msg)
{
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, node);
  char path[32];

  if (ev->report && ev->report->message && node < ev->report->n_nodes
      && ev->report->message[node] == NULL)
    ev->report->message[node] = strdup (msg);
  report_state (ev, node, code == TG_ECANCELLED ? TG_NODE_CANCELLED : TG_NODE_FAILED, 0);
  snprintf (path, sizeof path, "nodes[%d]", node);
  if (ev->err && ev->err->code == 0)
    tg_error_set (ev->err, code == TG_ECANCELLED ? TG_ECANCELLED : TG_EEVAL, path,
                  TG_MSG_NODE_FAILED, tg_graph_node_id (ev->g, node), d->type, msg);
}

/* Adds warning MSG to NODE's in the report (one a line, each once). */
static void
add_warning (Eval *ev, int node, const char *msg)
{
  char **slot, *grown;
  size_t n;

  if (ev->report == NULL || ev->report->warning == NULL || node >= ev->report->n_nodes)
    return;
  slot = &ev->report->warning[node];
  if (*slot && strstr (*slot, msg))
    return;
  n = (*slot ? strlen (*slot) + 1 : 0) + strlen (msg) + 1;
  if ((grown = realloc (*slot, n)) == NULL)
    return;
  if (*slot == NULL)
    grown[0] = '\0';
  else
    strcat (grown, "\n");
  strcat (grown, msg);
  *slot = grown;
}

/* The warning NODE's parameters give, once per evaluation, whether the
 * node runs or its result comes from the cache.  Never inlined: pull_job
 * recurses once per link of a chain (up to TG_GRAPH_MAX_DEPTH deep), and
 * this TgError would otherwise sit in each of its frames. */
__attribute__ ((noinline)) static void
note_warning (Eval *ev, int node)
{
  TgError w;

  if (ev->report && ev->report->warning && node < ev->report->n_nodes
      && ev->report->warning[node] == NULL && tg_graph_node_warning (ev->g, node, &w))
    add_warning (ev, node, w.message);
}

void
tg_eval_warn (TgEvalCtx *c, const char *fmt, ...)
{
  char msg[TG_ERROR_MESSAGE_MAX];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  add_warning (c->ev, c->node, msg);
}

/* Marks nodes downstream of a failure as skipped (for the report). */
static void
skip_node (Eval *ev, int node)
{
  if (ev->report && node < ev->report->n_nodes && ev->report->state[node] == TG_NODE_IDLE)
    report_state (ev, node, TG_NODE_SKIPPED, 0);
}

/* A bypassed node's eval: its main input becomes its first output, and
 * its other outputs are zero grids (validation made sure there is such an
 * input and that it is linked). */
static int
eval_bypass (TgEvalCtx *c)
{
  const TgNodeDesc *d = c->desc;
  int k = tg_node_desc_bypass_input (d);
  const TgValue *in = k >= 0 ? c->inputs[k] : NULL;

  if (in == NULL)
    return tg_eval_fail (c, TG_EEVAL, TG_MSG_BYPASSED_NO_INPUT);
  tg_eval_set_output (c, 0, tg_value_ref ((TgValue *) in));
  for (int q = 1; q < d->n_outputs; q++)
    {
      TgPortType t = d->outputs[q].type;
      TgValue *v;
      if (t != TG_TYPE_HEIGHT && t != TG_TYPE_MASK && t != TG_TYPE_IMAGE)
        return tg_eval_fail (c, TG_EEVAL, TG_MSG_BYPASSED_NO_VALUE, d->outputs[q].name);
      v = tg_eval_new_output (c, q, t == TG_TYPE_IMAGE ? 4 : 1);
      if (v == NULL)
        return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
      memset (v->data, 0, (size_t) v->region.width * (size_t) v->region.height
                            * (size_t) v->channels * sizeof (float));
    }
  return 0;
}

/* A tiled scheme's step or reduce to run instead of the node's eval. */
typedef struct
{
  int step;
  bool reduce;
  bool last;  /* the step whose outputs are the node's */
} SchemeStep;

/* Runs NODE's eval over REGION with INPUTS; fills OUTS (n_outputs refs),
 * those in WANT at least (tg_eval_output_wanted).  With STEP, runs that
 * part of the node's tiled scheme instead, every output wanted; only the
 * last step must produce outputs. */
static int
run_node_step (Eval *ev, int node, const TgRegion *region, const TgValue **inputs,
               TgValue **outs, uint64_t want, const SchemeStep *step)
{
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, node);
  TgEvalCtx ctx;
  int rc;

  memset (&ctx, 0, sizeof ctx);
  ctx.ev = ev;
  ctx.node = node;
  ctx.desc = d;
  ctx.params = tg__node_params (ev, node);
  ctx.inputs = inputs;
  ctx.region = *region;
  ctx.outputs = outs;
  ctx.want = step ? ~UINT64_C (0) : want;
  atomic_init (&ctx.last_progress, 0);
  report_state (ev, node, TG_NODE_RUNNING, 0);
  /* A global node (erosion, flow) builds up large work buffers of its
   * own, and a node without outputs (an export) its file's rows and
   * encoder, and neither takes a pooled grid: the pooled grids (value.c)
   * are not kept beside them. */
  if (d->locality == TG_LOCALITY_GLOBAL || d->n_outputs == 0)
    tg__value_pool_trim ();
  if (step == NULL && tg_graph_node_bypass (ev->g, node))
    rc = eval_bypass (&ctx);
  else if (step == NULL)
    rc = d->eval (&ctx);
  else if (step->reduce)
    rc = d->tiled->reduce (&ctx, step->step);
  else
    rc = d->tiled->tile_step (&ctx, step->step);
  /* Buffers freed before this node ran and not taken by it (value.c). */
  tg__value_pool_trim ();
  for (int k = 0; k < ctx.n_meshes; k++)
    tg_mesh_free (ctx.meshes[k]);
  free (ctx.meshes);
  if (rc == 0 && cancelled (ev))
    rc = TG_ECANCELLED;
  if (rc == 0 && (step == NULL || step->last))
    for (int k = 0; k < d->n_outputs; k++)
      if (outs[k] == NULL && tg_eval_output_wanted (&ctx, k))
        {
          rc = tg_eval_fail (&ctx, TG_EEVAL, TG_MSG_PRODUCED_NO_OUTPUT, d->outputs[k].name);
          break;
        }
  if (rc < 0)
    {
      const char *msg = ctx.message[0] ? ctx.message : tg_strerror (rc);
      fail_node (ev, node, rc, rc == TG_ECANCELLED ? "cancelled" : msg);
      for (int k = 0; k < d->n_outputs; k++)
        {
          tg_value_unref (outs[k]);
          outs[k] = NULL;
        }
      return rc;
    }
  if (ev->report)
    ev->report->n_computed++;
  report_state (ev, node, TG_NODE_DONE, 1.0);
  return 0;
}

static int
run_node (Eval *ev, int node, const TgRegion *region, const TgValue **inputs, TgValue **outs,
          uint64_t want)
{
  return run_node_step (ev, node, region, inputs, outs, want, NULL);
}

/* --- reads and releases (eval.h) -------------------------------------------- */

/* An evaluation's hold on results no read still needs is let go at once,
 * so a long chain at build resolution does not keep every intermediate
 * map alive (the cache keeps what its budget allows). */
static void
drop_outputs (Eval *ev, int ij, int port)
{
  Job *in = &ev->jobs[ij];
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, in->node);

  if (in->outs == NULL)
    return;
  if (port >= 0)
    {
      tg_value_unref (in->outs[port]);
      in->outs[port] = NULL;
      return;
    }
  for (int q = 0; q < d->n_outputs; q++)
    tg_value_unref (in->outs[q]);
  free (in->outs);
  in->outs = NULL;
}

bool
tg__job_port_needed (const Eval *ev, int job, int port)
{
  const Job *in = &ev->jobs[job];

  if (in->readers[port] > 0 || (port < 64 && (in->also >> port) & 1))
    return true;
  if (in->windows == 0)
    return false;
  /* A window still to be cut needs what its readers need; one asked for
   * by no link (the evaluation's own result) needs everything. */
  for (int i = 0; i < ev->n_jobs; i++)
    {
      const Job *w = &ev->jobs[i];
      if (w->source != job || w->abandoned || w->done)
        continue;
      if (w->consumers == 0 ? port >= 64 || (tg__job_want (ev, i) >> port) & 1
                            : tg__job_port_needed (ev, i, port))
        return true;
    }
  return false;
}

uint64_t
tg__job_want (const Eval *ev, int job)
{
  const Job *in = &ev->jobs[job];
  int n = tg_graph_node_desc (ev->g, in->node)->n_outputs;
  uint64_t want;

  /* A job no read was counted on is the evaluation's own result: what
   * the pull asked for. */
  if (in->consumers == 0)
    return job == ev->root ? ev->root_want | in->also : ~UINT64_C (0);
  want = in->also;
  for (int q = 0; q < n && q < 64; q++)
    if (tg__job_port_needed (ev, job, q))
      want |= UINT64_C (1) << q;
  return want;
}

void
tg__job_drop_unread (Eval *ev, int job)
{
  const Job *in = &ev->jobs[job];
  int n = tg_graph_node_desc (ev->g, in->node)->n_outputs;

  /* A job no read was counted on is the evaluation's own result. */
  if (in->consumers == 0 || !in->done || in->abandoned)
    return;
  for (int q = 0; q < n; q++)
    if (!tg__job_port_needed (ev, job, q))
      ev->drop (ev, job, q);
}

void
tg__release_inputs (Eval *ev, int node, const TgRegion *in_r)
{
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, node);

  for (int k = 0; k < d->n_inputs; k++)
    {
      int l = tg_graph_input_link (ev->g, node, k), ij;
      if (l < 0 || !tg_graph_node_reads_input (ev->g, node, k))
        continue;
      const TgLink *link = tg_graph_link (ev->g, l);
      TgRegion r = tg__compute_region (ev, link->from_node, in_r);
      ij = tg__find_job (ev, link->from_node, &r);
      if (ij >= 0)
        tg__job_release (ev, ij, link->from_port);
    }
}

void
tg__job_release_reads (Eval *ev, int job)
{
  Job *in = &ev->jobs[job];
  TgRegion in_r;

  /* A stored job keyed no inputs. */
  if (in->reads_released || tg__stored (ev, in->node))
    return;
  in->reads_released = true;
  in_r = tg__input_region (ev, in->node, &in->region);
  tg__release_inputs (ev, in->node, &in_r);
}

void
tg__jobs_keyed (Eval *ev)
{
  for (int j = 0; j < ev->n_jobs; j++)
    if (ev->jobs[j].source >= 0)
      tg__job_release_reads (ev, j);
}

/* Every reader of JOB was done before it ran: it never will, and the
 * reads it counted on others are released. */
static void
job_abandon (Eval *ev, int job)
{
  Job *in = &ev->jobs[job];

  in->abandoned = true;
  in->done = true;
  if (in->source >= 0)
    tg__job_release (ev, in->source, -1);
  tg__job_release_reads (ev, job);
}

void
tg__job_release (Eval *ev, int job, int port)
{
  Job *in = &ev->jobs[job];

  if (in->consumers <= 0)
    return;
  in->consumers--;
  if (port < 0)
    in->windows -= in->windows > 0;
  else
    in->readers[port] -= in->readers[port] > 0;
  if (in->consumers == 0)
    {
      if (!in->done)
        job_abandon (ev, job);
      else
        ev->drop (ev, job, -1);
      return;
    }
  /* What a read through a window not cut yet let go sits in the job the
   * window is read from (tg__read_job). */
  for (int s = job; s >= 0; s = ev->jobs[s].source)
    if (ev->jobs[s].done)
      {
        tg__job_drop_unread (ev, s);
        break;
      }
}

int
tg__read_job (const Eval *ev, int job)
{
  int j = job;

  while (ev->jobs[j].source >= 0 && !ev->jobs[j].done && !tg__stored (ev, ev->jobs[j].node)
         && !tg__cache_has (ev->e->cache, ev->jobs[j].key))
    j = ev->jobs[j].source;
  return j;
}

static int pull_job (Eval *ev, int j);

/* Job J's window of its source job's outputs. */
static int
pull_window (Eval *ev, int j, TgValue **outs)
{
  int src = ev->jobs[j].source, rc;
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, ev->jobs[j].node);

  /* Cut from the job the window is read from, not through a chain of
   * windows each a copy. */
  int from = tg__read_job (ev, src);
  uint64_t need = tg__job_want (ev, j);

  /* This window, being cut, no longer counts among the windows FROM's
   * run must serve (tg__job_port_needed): what it needs is said here. */
  ev->jobs[from].also |= need;
  rc = pull_job (ev, from);
  for (int k = 0; rc == 0 && k < d->n_outputs; k++)
    if (k >= 64 || (need >> k) & 1)
      {
        if (ev->jobs[from].outs[k] == NULL)
          rc = tg_error_set (ev->err, TG_EEVAL, tg_graph_node_id (ev->g, ev->jobs[j].node),
                             "internal: output \"%s\" was not made", d->outputs[k].name);
        else if ((outs[k] = tg_value_crop (ev->jobs[from].outs[k], &ev->jobs[j].region)) == NULL)
          rc = tg_error_set (ev->err, TG_ENOMEM, NULL, NULL);
      }
  /* Cut: what only this window needed goes with the release below. */
  ev->jobs[from].also = 0;
  tg__job_release (ev, src, -1);
  /* The window's own inputs were counted when it was keyed; it reads none. */
  tg__job_release_reads (ev, j);
  if (rc < 0)
    {
      for (int k = 0; k < d->n_outputs; k++)
        {
          tg_value_unref (outs[k]);
          outs[k] = NULL;
        }
      return rc;
    }
  /* A window cut without the outputs nobody reads is no result to keep. */
  bool whole = true;
  for (int k = 0; k < d->n_outputs; k++)
    whole = whole && outs[k] != NULL;
  if (whole)
    tg__cache_put (ev->e->cache, ev->jobs[j].key, d->n_outputs, outs);
  ev->jobs[j].outs = outs;
  ev->jobs[j].failed = false;
  return 0;
}

/* Pulls NODE's inputs over IN_R into *INPUTS (borrowed or, where a
 * window had to be cut, held in *OWNED); free with free_inputs. */
static int
pull_inputs (Eval *ev, int node, const TgRegion *in_r, const TgValue ***inputs,
             TgValue ***owned)
{
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, node);
  size_t n = (size_t) (d->n_inputs ? d->n_inputs : 1);
  int rc = 0;

  *inputs = calloc (n, sizeof (TgValue *));
  *owned = calloc (n, sizeof (TgValue *));
  if (*inputs == NULL || *owned == NULL)
    return tg_error_set (ev->err, TG_ENOMEM, NULL, NULL);
  for (int k = 0; k < d->n_inputs && rc == 0; k++)
    {
      int l = tg_graph_input_link (ev->g, node, k);
      const TgLink *link;
      int ij;
      if (l < 0 || !tg_graph_node_reads_input (ev->g, node, k))
        continue;
      link = tg_graph_link (ev->g, l);
      ij = tg__job_for (ev, link->from_node, in_r, 0);
      if (ij < 0)
        {
          rc = ij;
          break;
        }
      /* The window of a larger result is cut below, for this run only. */
      ij = tg__read_job (ev, ij);
      rc = pull_job (ev, ij);
      if (rc == 0 && ev->jobs[ij].outs[link->from_port] == NULL)
        {
          /* Dropped by a count gone wrong: computed again rather than
           * read as unlinked. */
          const TgNodeDesc *fd = tg_graph_node_desc (ev->g, ev->jobs[ij].node);
          for (int q = 0; q < fd->n_outputs; q++)
            tg_value_unref (ev->jobs[ij].outs[q]);
          free (ev->jobs[ij].outs);
          ev->jobs[ij].outs = NULL;
          rc = pull_job (ev, ij);
        }
      if (rc < 0)
        break;
      (*inputs)[k] = ev->jobs[ij].outs[link->from_port];
    }
  /* Upstream global nodes computed the whole lattice; give this node
   * exactly the window it asked for (clamped at the world's edge). */
  for (int k = 0; k < d->n_inputs && rc == 0; k++)
    if ((*inputs)[k] && tg_port_type_is_grid ((*inputs)[k]->type)
        && !tg_region_equal (&(*inputs)[k]->region, in_r))
      {
        (*owned)[k] = tg__value_window_clamped ((*inputs)[k], in_r);
        if ((*owned)[k] == NULL)
          rc = tg_error_set (ev->err, TG_ENOMEM, NULL, NULL);
        (*inputs)[k] = (*owned)[k];
      }
  return rc;
}

/* JOB: the job NODE ran as, or -1 (a tiled scheme's step). */
static void
free_inputs (Eval *ev, int node, int job, const TgRegion *in_r, const TgValue **inputs,
             TgValue **owned)
{
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, node);

  for (int k = 0; owned && k < d->n_inputs; k++)
    tg_value_unref (owned[k]);
  free (owned);
  free (inputs);
  if (job >= 0)
    tg__job_release_reads (ev, job);
  else
    tg__release_inputs (ev, node, in_r);
}

/* Hands job J's results to the front end's hook, if it has one. */
static void
tell_result (Eval *ev, int j)
{
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, ev->jobs[j].node);

  if (ev->hooks && ev->hooks->result && ev->jobs[j].outs)
    ev->hooks->result (ev->hooks->user, ev->jobs[j].node, &ev->jobs[j].region, ev->jobs[j].outs,
                       d->n_outputs);
}

/* Job J's outputs from the tiled build's store. */
static int
pull_stored (Eval *ev, int j, TgValue **outs)
{
  int node = ev->jobs[j].node;
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, node);
  TgError err = { 0 };

  report_state (ev, node, TG_NODE_RUNNING, 0);
  for (int k = 0; k < d->n_outputs; k++)
    {
      outs[k] = ev->store->get (ev->store->user, node, k, &ev->jobs[j].region, &err);
      if (outs[k] == NULL)
        {
          for (int q = 0; q < k; q++)
            tg_value_unref (outs[q]);
          free (outs);
          fail_node (ev, node, err.code ? err.code : TG_EIO,
                     err.message[0] ? err.message : "missing from the tiled build's store");
          return err.code ? err.code : TG_EIO;
        }
    }
  report_state (ev, node, TG_NODE_CACHED, 1.0);
  ev->jobs[j].outs = outs;
  ev->jobs[j].failed = false;
  tell_result (ev, j);
  if (ev->jobs[j].source >= 0)
    tg__job_release (ev, ev->jobs[j].source, -1);
  tg__job_drop_unread (ev, j);
  return 0;
}

/* Pulls job J: from this evaluation, the cache, or by running the node. */
static int
pull_job (Eval *ev, int j)
{
  int node = ev->jobs[j].node;
  const TgNodeDesc *d = tg_graph_node_desc (ev->g, node);
  TgRegion region = ev->jobs[j].region, in_r;
  const TgValue **inputs = NULL;
  TgValue **outs, **owned = NULL;
  uint64_t want;
  int rc = 0;

  /* A job released early and needed again is fetched again. */
  if (ev->jobs[j].done && (ev->jobs[j].outs || ev->jobs[j].failed))
    return ev->jobs[j].outs ? 0 : TG_EEVAL;
  ev->jobs[j].done = true;
  ev->jobs[j].failed = true; /* until it succeeds */
  note_warning (ev, node);
  outs = calloc ((size_t) (d->n_outputs ? d->n_outputs : 1), sizeof (TgValue *));
  if (outs == NULL)
    return tg_error_set (ev->err, TG_ENOMEM, NULL, NULL);
  if (cancelled (ev))
    {
      free (outs);
      fail_node (ev, node, TG_ECANCELLED, "cancelled");
      return TG_ECANCELLED;
    }
  want = tg__job_want (ev, j);
  if (!(d->flags & TG_NODE_EXPORT)
      && tg__cache_get (ev->e->cache, ev->jobs[j].key, d->n_outputs, want, outs))
    {
      if (ev->report)
        ev->report->n_cached++;
      report_state (ev, node, TG_NODE_CACHED, 1.0);
      ev->jobs[j].outs = outs;
      ev->jobs[j].failed = false;
      tell_result (ev, j);
      if (ev->jobs[j].source >= 0)
        tg__job_release (ev, ev->jobs[j].source, -1);
      /* Its inputs were counted when it was keyed; it reads none. */
      tg__job_release_reads (ev, j);
      tg__job_drop_unread (ev, j);
      return 0;
    }
  if (tg__stored (ev, node))
    return pull_stored (ev, j, outs);
  if (ev->jobs[j].source >= 0 && (rc = pull_window (ev, j, outs)) == 0)
    return 0;
  if (rc < 0)
    {
      free (outs);
      skip_node (ev, node);
      return rc;
    }
  in_r = tg__input_region (ev, node, &region);
  rc = pull_inputs (ev, node, &in_r, &inputs, &owned);
  if (rc == 0)
    rc = run_node (ev, node, &region, inputs, outs, want);
  else
    skip_node (ev, node);
  free_inputs (ev, node, j, &in_r, inputs, owned);
  if (rc < 0)
    {
      free (outs);
      return rc;
    }
  if (!(d->flags & TG_NODE_EXPORT))
    tg__cache_put (ev->e->cache, ev->jobs[j].key, d->n_outputs, outs);
  ev->jobs[j].outs = outs;
  ev->jobs[j].failed = false;
  tell_result (ev, j);
  tg__job_drop_unread (ev, j);
  return 0;
}

/* --- evaluations ----------------------------------------------------------- */

int
tg__eval_begin (Eval *ev, TgEngine *e, const TgGraph *g, const TgEvalHooks *hooks,
            TgEvalReport *report, TgError *err)
{
  int n = tg_graph_n_nodes (g);

  memset (ev, 0, sizeof *ev);
  ev->root = -1;
  ev->e = e;
  ev->g = g;
  ev->hooks = hooks;
  ev->report = report;
  ev->err = err;
  ev->store = hooks ? hooks->store : NULL;
  ev->drop = drop_outputs;
  ev->validated = tg_graph_is_validated (g);
  tg_error_clear (err);
  ev->params = calloc ((size_t) (n ? n : 1), sizeof (void *));
  if (ev->params == NULL)
    return tg_error_set (err, TG_ENOMEM, NULL, NULL);
  if (report)
    {
      memset (report, 0, sizeof *report);
      report->state = calloc ((size_t) (n ? n : 1), sizeof (TgNodeState));
      report->message = calloc ((size_t) (n ? n : 1), sizeof (char *));
      report->warning = calloc ((size_t) (n ? n : 1), sizeof (char *));
      if (report->state == NULL || report->message == NULL || report->warning == NULL)
        {
          free (ev->params);
          tg_eval_report_clear (report);
          return tg_error_set (err, TG_ENOMEM, NULL, NULL);
        }
      report->n_nodes = n;
    }
  pthread_mutex_lock (&e->lock);
  tg__value_pool_open ();
  return 0;
}

void
tg__eval_end (Eval *ev)
{
  for (int i = 0; i < ev->n_jobs; i++)
    if (ev->jobs[i].outs)
      {
        const TgNodeDesc *d = tg_graph_node_desc (ev->g, ev->jobs[i].node);
        for (int k = 0; k < d->n_outputs; k++)
          tg_value_unref (ev->jobs[i].outs[k]);
        free (ev->jobs[i].outs);
      }
  for (int i = 0; i < ev->n_jobs; i++)
    free (ev->jobs[i].readers);
  free (ev->jobs);
  tg__value_pool_close ();
  for (int i = 0; i < tg_graph_n_nodes (ev->g); i++)
    if (ev->params[i])
      {
        const TgNodeDesc *d = tg_graph_node_desc (ev->g, i);
        tg_params_struct_clear (d->params, d->n_params, ev->params[i]);
        free (ev->params[i]);
      }
  free (ev->params);
  pthread_mutex_unlock (&ev->e->lock);
}

/* Turns a failure into the call's result: a cancel wins over everything. */
static int
eval_result (Eval *ev, int rc)
{
  if (rc < 0 && cancelled (ev))
    {
      tg_error_set (ev->err, TG_ECANCELLED, NULL, TG_MSG_CANCELLED);
      return TG_ECANCELLED;
    }
  if (rc < 0 && ev->err && ev->err->code == 0)
    tg_error_set (ev->err, rc, NULL, "%s", tg_strerror (rc));
  return rc;
}

/* Outputs [K0, K1) of NODE over REGION into OUTS[0 .. K1 - K0). */
static int
pull_range (TgEngine *e, const TgGraph *g, int node, int k0, int k1, const TgRegion *region,
            const TgEvalHooks *hooks, TgValue **outs, TgEvalReport *report, TgError *err)
{
  Eval ev;
  int j, rc;

  for (int k = k0; k < k1; k++)
    outs[k - k0] = NULL;
  if (region->width <= 0 || region->height <= 0 || !(region->cell > 0))
    return tg_error_set (err, TG_EINVAL, NULL, "empty region");
  if ((rc = tg_world_check (tg_graph_world_const (g), err)) < 0)
    return rc;
  if ((rc = tg__eval_begin (&ev, e, g, hooks, report, err)) < 0)
    return rc;
  j = tg__job_for (&ev, node, region, 0);
  if (j >= 0)
    tg__jobs_keyed (&ev);
  /* Only the outputs asked for (a preview of a node's height does not
   * make its other maps); the cache keeps what was made. */
  ev.root = j;
  ev.root_want = 0;
  for (int k = k0; k < k1 && k < 64; k++)
    ev.root_want |= UINT64_C (1) << k;
  rc = j < 0 ? j : pull_job (&ev, j);
  for (int k = k0; rc == 0 && k < k1; k++)
    {
      TgValue *v = ev.jobs[j].outs[k], **o = &outs[k - k0];
      if (tg_port_type_is_grid (v->type) && !tg_region_equal (&v->region, region))
        *o = tg__value_window_clamped (v, region);
      else
        *o = tg_value_ref (v);
      if (*o == NULL)
        rc = tg_error_set (err, TG_ENOMEM, NULL, NULL);
    }
  for (int k = k0; rc < 0 && k < k1; k++)
    {
      tg_value_unref (outs[k - k0]);
      outs[k - k0] = NULL;
    }
  rc = eval_result (&ev, rc);
  tg__eval_end (&ev);
  return rc;
}

int
tg_engine_pull (TgEngine *e, const TgGraph *g, int node, int output, const TgRegion *region,
                const TgEvalHooks *hooks, TgValue **out, TgEvalReport *report, TgError *err)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);

  *out = NULL;
  if (d == NULL || output < 0 || output >= d->n_outputs)
    return tg_error_set (err, TG_EINVAL, NULL, "no output %d on node %d", output, node);
  return pull_range (e, g, node, output, output + 1, region, hooks, out, report, err);
}

int
tg_engine_pull_outputs (TgEngine *e, const TgGraph *g, int node, const TgRegion *region,
                        const TgEvalHooks *hooks, TgValue **outs, TgEvalReport *report,
                        TgError *err)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);

  if (d == NULL)
    return tg_error_set (err, TG_EINVAL, NULL, "no node %d", node);
  return pull_range (e, g, node, 0, d->n_outputs, region, hooks, outs, report, err);
}

int
tg_engine_tile_step (TgEngine *e, const TgGraph *g, int node, int step, bool reduce,
                     const TgEvalHooks *hooks, TgValue **outs, TgEvalReport *report, TgError *err)
{
  const TgNodeDesc *d = tg_graph_node_desc (g, node);
  const TgTiling *t = hooks ? hooks->tiling : NULL;
  TgTiling reduce_tiling;
  TgRegion full, region, in_r;
  const TgValue **inputs = NULL;
  TgValue **owned = NULL, **res = NULL;
  SchemeStep st;
  const void *params;
  Eval ev;
  int rc, n_steps, halo = -1;

  if (d == NULL || d->tiled == NULL)
    return tg_error_set (err, TG_EINVAL, NULL, "node %d has no tiled scheme", node);
  if (t == NULL || t->nx < 1 || t->ny < 1
      || (!reduce && (t->ix < 0 || t->ix >= t->nx || t->iy < 0 || t->iy >= t->ny)))
    return tg_error_set (err, TG_EINVAL, NULL, "a tiled step needs a tile of its tiling");
  if ((rc = tg_world_check (tg_graph_world_const (g), err)) < 0)
    return rc;
  tg_region_for_world (&full, tg_graph_world_const (g), tg_graph_world_const (g)->resolution);
  if ((rc = tg__eval_begin (&ev, e, g, hooks, report, err)) < 0)
    return rc;
  if ((rc = check_node (&ev, node)) < 0 || (params = tg__node_params (&ev, node)) == NULL)
    {
      rc = rc < 0 ? rc : tg_error_set (err, TG_ENOMEM, NULL, NULL);
      goto out;
    }
  n_steps = d->tiled->n_steps (params, &full);
  if (step < 0 || step >= n_steps
      || (reduce && !(d->tiled->has_reduce && d->tiled->has_reduce (params, &full, step))))
    {
      rc = tg_error_set (err, TG_EINVAL, NULL, "node \"%s\" has no %s %d",
                         tg_graph_node_id (g, node), reduce ? "reduce after step" : "step", step);
      goto out;
    }
  if (reduce)
    {
      reduce_tiling = (TgTiling) { t->nx, t->ny, -1, -1 };
      t = &reduce_tiling;
      region = full;
    }
  else
    {
      region = tg_tiling_window (t, &full, t->ix, t->iy);
      halo = d->tiled->halo (params, &full, step);
    }
  /* The step's inputs: the tile and its halo, cut at the world's edge. */
  if (halo >= 0)
    {
      TgRegion g2 = tg_region_grow (&region, halo);
      int c0 = g2.col0 > 0 ? g2.col0 : 0, r0 = g2.row0 > 0 ? g2.row0 : 0;
      int c1 = g2.col0 + g2.width < full.full_w ? g2.col0 + g2.width : full.full_w;
      int r1 = g2.row0 + g2.height < full.full_h ? g2.row0 + g2.height : full.full_h;
      in_r = tg_region_window (&full, c0, r0, c1 - c0, r1 - r0);
      rc = pull_inputs (&ev, node, &in_r, &inputs, &owned);
    }
  else
    {
      in_r = region;
      inputs = calloc ((size_t) (d->n_inputs ? d->n_inputs : 1), sizeof (TgValue *));
      rc = inputs ? 0 : tg_error_set (err, TG_ENOMEM, NULL, NULL);
    }
  if (rc == 0)
    {
      res = calloc ((size_t) (d->n_outputs ? d->n_outputs : 1), sizeof (TgValue *));
      if (res == NULL)
        rc = tg_error_set (err, TG_ENOMEM, NULL, NULL);
    }
  if (rc == 0)
    {
      st = (SchemeStep) { step, reduce, !reduce && step == n_steps - 1 };
      ev.step_tiling = t;
      rc = run_node_step (&ev, node, &region, inputs, res, ~UINT64_C (0), &st);
      ev.step_tiling = NULL;
    }
  if (halo >= 0)
    free_inputs (&ev, node, -1, &in_r, inputs, owned);
  else
    free (inputs);
  for (int k = 0; res && k < d->n_outputs; k++)
    {
      if (rc == 0 && outs)
        outs[k] = res[k];
      else
        tg_value_unref (res[k]);
    }
  free (res);
out:
  rc = eval_result (&ev, rc);
  tg__eval_end (&ev);
  return rc;
}

/* Whether export D belongs to this part of a build: every export in a
 * whole build; in a tiled one, grids in the tile jobs (they cut any
 * window) and meshes and points in the whole-world job. */
bool
tg__export_in_part (const TgNodeDesc *d, const TgTiling *tiling)
{
  if (!(d->flags & TG_NODE_EXPORT))
    return false;
  if (tiling == NULL)
    return true;
  return (d->locality == TG_LOCALITY_GLOBAL) == (tiling->ix < 0);
}

int
tg_engine_export (TgEngine *e, const TgGraph *g, const char *out_dir, const TgEvalHooks *hooks,
                  TgExportList **out, TgEvalReport *report, TgError *err)
{
  TgRegion region;
  const TgTiling *tiling;
  TgExportList *list;
  TgError local;
  Eval ev;
  int rc, first_rc = 0;

  *out = NULL;
  if (err == NULL)
    err = &local;
  if ((rc = tg_graph_validate (g, err)) < 0)
    return rc;
  if ((list = tg_export_list_new (out_dir, err)) == NULL)
    return err->code;
  tg_region_for_world (&region, tg_graph_world_const (g), tg_graph_world_const (g)->resolution);
  tiling = hooks ? hooks->tiling : NULL;
  if (tiling && tiling->ix >= 0)
    region = tg_tiling_window (tiling, &region, tiling->ix, tiling->iy);
  if ((rc = tg__eval_begin (&ev, e, g, hooks, report, err)) < 0)
    {
      tg_export_list_free (list);
      return rc;
    }
  ev.exports = list;
  ev.raw_tiles = tiling && tiling->ix >= 0 && !hooks->encode_tiles;
  ev.export_tiling = tiling;
  ev.export_window = region;
  /* Key every export first, so each shared upstream result knows all its
   * readers before any is released.  Every export runs even after one
   * fails, so the report names every broken branch; nothing is committed
   * unless all succeed. */
  {
    int n = tg_graph_n_nodes (g), *jobs = malloc (sizeof (int) * (size_t) (n ? n : 1));
    if (jobs == NULL)
      first_rc = tg_error_set (err, TG_ENOMEM, NULL, NULL);
    for (int i = 0; jobs && i < n; i++)
      {
        jobs[i] = -1;
        if (tg__export_in_part (tg_graph_node_desc (g, i), tiling))
          {
            jobs[i] = tg__job_for (&ev, i, &region, 0);
            if (jobs[i] < 0 && first_rc == 0)
              first_rc = jobs[i];
          }
      }
    bool keyed = first_rc == 0;
    if (keyed)
      tg__jobs_keyed (&ev);
    for (int i = 0; jobs && keyed && i < n; i++)
      {
        if (jobs[i] < 0)
          continue;
        if (cancelled (&ev))
          {
            first_rc = TG_ECANCELLED;
            break;
          }
        rc = pull_job (&ev, jobs[i]);
        if (rc < 0 && first_rc == 0)
          first_rc = rc;
      }
    free (jobs);
  }
  rc = eval_result (&ev, first_rc);
  tg__eval_end (&ev);
  if (rc < 0)
    tg_export_list_free (list);
  else
    *out = list;
  return rc;
}
