/* erosion.flow's algorithms, apart from the node so that a test can run
 * the whole-world evaluation and every step of the tiled scheme on plain
 * float arrays.  Internal to engine/nodes.
 *
 * erosion_flow_fill.c    Priority-Flood, whole and per tile (labels and
 *                        spill graph), and the spill solve over tile edges
 * erosion_flow_route.c   flat ranks (dense, and sparse for the reduce),
 *                        receivers, the MFD steps, the exact D8 sums, and
 *                        the solve of those sums over tile edges
 * erosion_flow_tiled.c   the steps of the tiled scheme, talking in blobs
 * erosion_flow_flats.c   its reduce of step 2: the ranks of flats over
 *                        tile edges, one tile's flats in memory at a time
 */
#ifndef TG_NODES_EROSION_FLOW_H
#define TG_NODES_EROSION_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <tgraph/tiled.h>

enum
{
  TG__FLOW_MFD,
  TG__FLOW_D8,
};

/* MFD spreads a sample's water this many steps; from there on it follows
 * the steepest way (see tg__flow_route).  Part of the node's definition. */
#define TG__FLOW_MFD_STEPS 16

/* Accumulated water in fixed point: 2^20 units a sample. */
#define TG__FLOW_ONE ((int64_t) 1 << 20)

typedef struct
{
  int routing;
  double exponent;
  /* Optional: runs FN (USER, begin, end) over [0, N) in chunks of GRAIN,
   * as tg_eval_parallel does (each chunk writes its own rows). */
  int (*parallel) (void *ctx, int n, int grain, void (*fn) (void *, int, int), void *user);
  void *parallel_ctx;
  /* Optional: polled (with PARALLEL_CTX) inside the long serial loops;
   * true stops the work, which returns TG_ECANCELLED. */
  bool (*cancelled) (void *ctx);
} TgFlowOpts;

/* Whether O's cancelled hook says stop. */
bool tg__flow_cancelled (const TgFlowOpts *o);

/* Blob access for the tiled scheme: the node passes tg_eval_blob_*, a test
 * its own store.  GET returns TG_EMISSING when there is no such blob. */
typedef struct
{
  void *user;
  int (*put) (void *user, const char *name, const void *data, size_t size);
  int (*get) (void *user, int ix, int iy, const char *name, void **data, size_t *size);
} TgFlowBlobs;

extern const int tg__flow_dx[8], tg__flow_dy[8];

/* --- erosion_flow_fill.c ----------------------------------------------- */

/* Depression-filled heights of a whole W x H world: the flood from its
 * edge.  0, TG_ENOMEM or TG_ECANCELLED (O may be NULL). */
int tg__flow_fill (const TgFlowOpts *o, const float *hm, int w, int h, float *filled);

/* One edge of a tile's spill graph: labels A < B meet at height W. */
typedef struct
{
  int32_t a, b;
  float w;
} TgFlowSpill;

/* The flood of a W x H tile from its own border: each border sample
 * (tg__flow_border_index order) seeds label = its index; LF gets the
 * tile-local fill, LABEL the seed each sample was flooded from and, when
 * EDGES is not NULL, *EDGES (malloc'ed) the spill graph between labels,
 * each pair once with its lowest meeting height.  TG_ECANCELLED when O's
 * cancelled hook says stop. */
int tg__flow_fill_tile (const TgFlowOpts *o, const float *hm, int w, int h, float *lf,
                        int32_t *label, TgFlowSpill **edges, size_t *n_edges);

/* A binary heap of (key, index), smallest first, ties by index. */
typedef struct
{
  float key;
  int32_t idx;
} TgFlowHeapItem;

typedef struct
{
  TgFlowHeapItem *a;
  size_t n, cap;
} TgFlowHeap;

int tg__flow_heap_push (TgFlowHeap *h, float key, int32_t idx); /* grows; 0 or TG_ENOMEM */
TgFlowHeapItem tg__flow_heap_pop (TgFlowHeap *h);

/* The floods' queue (erosion.flow's fills): a radix heap (Ahuja,
 * Mehlhorn, Orlin and Tarjan 1990) of (key, index) taken smallest key
 * first, ties by index: the binary heap's order, at a fraction of its
 * cost.  Keys are a float's order as an unsigned integer (see
 * tg__flow_key_f32) and a push must not go below the last key taken,
 * which a Priority-Flood guarantees (it pushes heights above the level it
 * is at).  Bucket b > 0 holds the keys whose highest bit differing from
 * LAST is bit b - 1; bucket 0 the keys equal to LAST, sorted by falling
 * index, so a take only ever sorts out the lowest non-empty bucket, each
 * key moving down at most 32 times.  Items are 8 bytes (32-bit keys): the
 * moves between buckets are most of the queue's time. */
typedef struct
{
  uint32_t key;
  int32_t idx;
} TgFlowQueueItem;

typedef struct
{
  TgFlowQueueItem *a;
  size_t n, cap;
} TgFlowQueueBucket;

typedef struct
{
  TgFlowQueueBucket b[33];
  uint32_t last;
  size_t n;
} TgFlowQueue;

/* A float's order as an unsigned integer's (no NaN). */
static inline uint32_t
tg__flow_key_f32 (float f)
{
  uint32_t u;

  memcpy (&u, &f, sizeof u);
  return (u & 0x80000000u) ? ~u : u | 0x80000000u;
}

/* 0 or TG_ENOMEM.  KEY must not be below the last key taken. */
int tg__flow_queue_push (TgFlowQueue *q, uint32_t key, int32_t idx);
/* The smallest key's item, the smallest index among equal keys (Q must
 * not be empty); -1 when out of memory while sorting a bucket out. */
int32_t tg__flow_queue_pop (TgFlowQueue *q);
/* The index the next take gives when that is known without sorting a
 * bucket out (for a prefetch), else -1. */
static inline int32_t
tg__flow_queue_peek (const TgFlowQueue *q)
{
  return q->b[0].n > 0 ? q->b[0].a[q->b[0].n - 1].idx : -1;
}
/* Empties Q for another flood, keeping its memory. */
void tg__flow_queue_reset (TgFlowQueue *q);
void tg__flow_queue_free (TgFlowQueue *q);

/* Border samples of a W x H tile in raster order. */
int tg__flow_border_count (int w, int h);
int tg__flow_border_index (int w, int h, int x, int y);
void tg__flow_border_xy (int w, int h, int k, int *x, int *y);
/* The tile of NT along N samples that holds sample G. */
int tg__flow_tile_of (int n, int nt, int g);

/* --- erosion_flow_route.c ---------------------------------------------- */

/* X^P for X > 0 and finite, as 2^(P log2 X) with the logarithm and the
 * power of two as polynomials in plain double arithmetic, no libm: the
 * same bits on every machine, libm and vector width (libm's pow may
 * differ between versions).  |P| < 1e12.  Relative error below 2e-13
 * for results in [2^-1021, 2^1023) (it grows with |P log2 X|: below
 * 5e-15 when that is under 24); below that range 0, above it HUGE_VAL.
 * P == 1 gives X exactly. */
double tg__flow_pow (double x, double p);
/* V[i] = tg__flow_pow (V[i], P) for i < N, on the best vector kernel
 * (TG_FLOW_ISA as for the MFD steps): the same bits as one at a time. */
void tg__flow_pow_n (double *v, size_t n, double p);

/* Flat ranks of a whole W x H filled world (-1 off flats). */
int tg__flow_ranks (const TgFlowOpts *o, const float *filled, int w, int h, int32_t *rank);
/* The same with SCRATCH (9 bytes a sample, int32-aligned; NULL: its own)
 * for its work arrays, so that a caller can hand one block from step to
 * step instead of each step mapping fresh pages (which the kernel zeroes:
 * 7.5 % of the CPU at 4097^2 before).  Its contents are left undefined. */
int tg__flow_ranks_buf (const TgFlowOpts *o, const float *filled, int w, int h, int32_t *rank,
                        void *scratch);

/* The same ranks for a set of flat samples given as a list: world index,
 * level and flags (1: next to a drain of its level, 2: next to higher
 * ground), in any order, of a FW-wide world.  RANK gets each one's rank. */
enum
{
  TG__FLAT_DRAIN = 1,
  TG__FLAT_HIGH = 2,
};
int tg__flow_ranks_sparse (const int64_t *gidx, const float *level, const uint8_t *flags,
                           size_t n, int fw, int32_t *rank);

/* A window of the world: WW x WH samples from (WX0, WY0) of an FW x FH
 * world, and within it the tile (TX0, TY0, TW, TH) whose results count.
 * The window must reach tg__flow_reach () samples past the tile (or the
 * world's edge). */
typedef struct
{
  int fw, fh;
  int wx0, wy0, ww, wh;
  int tx0, ty0, tw, th;
} TgFlowWindow;

int tg__flow_reach (const TgFlowOpts *o);

/* One tile border sample's part in the solve of the D8 sums over tile
 * edges: the water the tile itself sends through it, the world index of
 * its receiver when that lies outside the tile (-1 otherwise or when the
 * water leaves the world), and the border index of the sample where the
 * water passing it leaves the tile (-1: it leaves the world inside). */
typedef struct
{
  int64_t local;
  int64_t recv;
  int32_t link;
} TgFlowBorder;

/* Routes the water of window WIN (FILLED and RANK over it) and sums it
 * over the tile: ACC (tw x th, may be NULL) gets the area in samples
 * draining through each tile sample, INFLOW (per tile border sample, may
 * be NULL) is water arriving from outside the tile, and BORDER (may be
 * NULL) gets each border sample's record. */
int tg__flow_route (const TgFlowOpts *o, const TgFlowWindow *win, const float *filled,
                    const int32_t *rank, const int64_t *inflow, double *acc,
                    TgFlowBorder *border);

/* tg__flow_route in two parts, so that a caller can free FILLED and RANK
 * in between: the first gives each tile sample's D8 receiver after the
 * MFD steps and the water it holds then (and ACC, when not NULL, the
 * water of the MFD steps); the second sums it as tg__flow_route does (on
 * O's threads when there is no BORDER) and frees D (as does a failure of
 * the first). */
typedef struct
{
  int8_t *dir;
  int64_t *amt;
  bool borrowed; /* the caller's scratch: tg__flow_dirs_free leaves it */
} TgFlowDirs;

int tg__flow_route_dirs (const TgFlowOpts *o, const TgFlowWindow *win, const float *filled,
                         const int32_t *rank, double *acc, TgFlowDirs *d);
int tg__flow_route_sums (const TgFlowOpts *o, const TgFlowWindow *win, TgFlowDirs *d,
                         const int64_t *inflow, double *acc, TgFlowBorder *border);
/* The same with the caller's memory (NULL: their own): SCRATCH (9 bytes a
 * tile sample, 8-aligned) holds D's arrays, QUEUE and TO (4 bytes a tile
 * sample each) the sums' walk; the caller frees them after the sums. */
int tg__flow_route_dirs_buf (const TgFlowOpts *o, const TgFlowWindow *win, const float *filled,
                             const int32_t *rank, double *acc, TgFlowDirs *d, void *scratch);
int tg__flow_route_sums_buf (const TgFlowOpts *o, const TgFlowWindow *win, TgFlowDirs *d,
                             const int64_t *inflow, double *acc, TgFlowBorder *border,
                             int32_t *queue, int32_t *to);
void tg__flow_dirs_free (TgFlowDirs *d);

/* --- erosion_flow_tiled.c ---------------------------------------------- */

/* tg__flow_fill's bytes, on O's threads (bands of rows flooded in
 * parallel as tiles of the tiled scheme, then its reduce); the one flood
 * when O has no parallel hook or the world is small. */
int tg__flow_fill_parallel (const TgFlowOpts *o, const float *hm, int w, int h, float *filled);
/* The same with the caller's LABEL array (4 bytes a sample; NULL: its
 * own), left undefined. */
int tg__flow_fill_parallel_buf (const TgFlowOpts *o, const float *hm, int w, int h,
                                float *filled, int32_t *label);

/* Area draining through every sample of a whole W x H world HM (finite
 * values), in samples.  0 or TG_ENOMEM. */
int tg__flow_whole (const TgFlowOpts *o, const float *hm, int w, int h, double *acc);
/* The same, holding less at once: frees HM once it is filled, and *ACC
 * gets the area (malloc'ed, made once the flats are ranked; NULL after a
 * failure). */
int tg__flow_whole_take (const TgFlowOpts *o, float *hm, int w, int h, double **acc);

#define TG__FLOW_N_STEPS 5
bool tg__flow_has_reduce (int step);
/* Step STEP of tile T->ix, T->iy of an FW x FH world; HM is the input over
 * the tile (finite values).  The last step fills ACC over the tile. */
int tg__flow_tile_step (const TgFlowOpts *o, const TgTiling *t, int fw, int fh, const float *hm,
                        int step, const TgFlowBlobs *io, double *acc);
/* The reduce after step STEP.  *WORK_BYTES (may be NULL) gets the most
 * the reduce of step 2 held at once (0 for the others, which hold
 * border-sized arrays). */
int tg__flow_reduce (const TgFlowOpts *o, const TgTiling *t, int fw, int fh, int step,
                     const TgFlowBlobs *io, size_t *work_bytes);

/* For erosion_flow_flats.c: a tile's rectangle in the world. */
typedef struct
{
  int x0, y0, w, h;
} TgFlowRect;

TgFlowRect tg__flow_tile_rect (const TgTiling *t, int fw, int fh, int ix, int iy);

/* Every tile's border samples as nodes of one graph: OFF[t] (malloc'ed,
 * the caller frees it) is the first node of tile t = iy * nx + ix. */
typedef struct
{
  const TgTiling *t;
  int fw, fh;
  int64_t *off;
} TgFlowNodes;

int tg__flow_nodes_init (TgFlowNodes *nd, const TgTiling *t, int fw, int fh);
/* The node of border sample (GX, GY) of its tile; *TILE gets the tile. */
int64_t tg__flow_node_of (const TgFlowNodes *nd, int gx, int gy, int *tile);
/* World position of node U of tile T. */
void tg__flow_node_xy (const TgFlowNodes *nd, int t, int64_t u, int *gx, int *gy);

/* A tile's list of the flat samples of step 2 that belong to flats
 * touching its border, in world index order: *N samples, *G their world
 * indices, then N levels (float) and N flags (TG__FLAT_*), all in *BLOB. */
int tg__flow_get_flats (const TgFlowBlobs *io, int ix, int iy, void **blob, int64_t *n,
                        const int64_t **g);
int tg__flow_put_reduce_blob (const TgFlowBlobs *io, const char *what, int ix, int iy,
                              const void *data, size_t size);

/* --- erosion_flow_flats.c ---------------------------------------------- */

/* The reduce of step 2: "rank.IX.IY", the ranks of every tile's list. */
int tg__flow_reduce_flats (const TgTiling *t, int fw, int fh, const TgFlowBlobs *io,
                           size_t *work_bytes);
/* A flat sample's rank from its distances (0: none) to the way out and
 * from higher ground, and its flat's largest distance from higher ground. */
int32_t tg__flow_flat_rank (int32_t low, int32_t high, int32_t largest);

#endif
