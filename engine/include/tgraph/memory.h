/* Memory: what an evaluation will hold, known before it starts.
 *
 * Each input and each parameter may be in range alone and still ask
 * together for more memory than the machine has; with overcommit the
 * kernel then kills the process without a word.  The estimate walks the
 * jobs an export would run, in the order it would run them, adding what
 * each node holds while it runs (its inputs' windows, its outputs, what
 * its descriptor's `memory` hook declares) to the results still alive
 * then, so a front end can refuse a build that cannot fit, naming the
 * node, before anything is computed or decoded.
 */
#ifndef TGRAPH_MEMORY_H
#define TGRAPH_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "error.h"
#include "graph.h"
#include "region.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct
{
  uint64_t peak;       /* the most held at once, in bytes */
  /* The node running at the peak or, when the estimate was given a
   * limit, the first whose run goes over it; -1 when nothing runs. */
  int node;
  uint64_t node_bytes; /* what is held while NODE runs */
  TgRegion region;     /* what NODE computes */
  TgRegion input;      /* what it reads of its inputs (REGION grown by its apron) */
  uint64_t files;      /* of NODE_BYTES, input files kept decoded */
} TgMemEstimate;

/* Estimates what tg_engine_export (E, G, ..., HOOKS) would hold, running
 * nothing and decoding no file (input images are measured from their
 * headers).  Results in E's cache count as free, results the cache would
 * keep count up to its budget.  LIMIT (0: none) picks the node
 * EST names.  Returns 0, or a negative TG_E* with ERR set when the graph
 * cannot be evaluated at all. */
int tg_engine_estimate (TgEngine *e, const TgGraph *g, const TgEvalHooks *hooks, uint64_t limit,
                        TgMemEstimate *est, TgError *err);

/* `node "talus": needs about 38.2 GiB at 16385² (input 56385² with its
 * apron)`, with the input files decoded when they weigh, into BUF;
 * returns BUF. */
const char *tg_mem_estimate_describe (const TgMemEstimate *est, const TgGraph *g, char *buf,
                                      size_t size);

/* The memory this process may still take: the system's MemAvailable,
 * lowered to what the cgroup's memory.max leaves (a container); 0 when
 * neither can be read. */
uint64_t tg_memory_available (void);

/* "512 B", "1.5 KiB", "20.0 MiB", "38.24 GiB" into BUF; returns BUF. */
const char *tg_format_bytes (uint64_t bytes, char *buf, size_t size);

/* A size as people write it: plain bytes, or a number with K, M, G or T
 * (binary: 1024, 1024², ...; "KiB", "GB" and lower case read the same).
 * Returns 0, or TG_EINVAL with ERR saying what was expected. */
int tg_parse_bytes (const char *text, uint64_t *bytes, TgError *err);

#ifdef __cplusplus
}
#endif
#endif
