/* What the plan, job and stitch sources share; not installed. */
#ifndef TGFORMATS_PLAN_PRIVATE_H
#define TGFORMATS_PLAN_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "tgformats/plan.h"

#define TG__PLAN_FILE "plan.json"
#define TG__PLAN_GRAPH "graph/graph.tgraph"
#define TG__JOB_MANIFEST "job.json"

/* What plan.json says that jobs and the stitch check against. */
typedef struct
{
  int nx, ny;
  int resolution;
  uint8_t sha[32];     /* of graph/graph.tgraph */
  char sha_hex[65];
  char graph_name[256];
} TgPlanInfo;

int tg__plan_info_read (const char *dir, TgPlanInfo *info, TgError *err);
/* Whether DIR's graph file still has the hash plan.json gives. */
int tg__plan_check_graph (const char *dir, const TgPlanInfo *info, TgError *err);

/* The store over DIR for a job of stage STAGE (nodes completed by the
 * stages before it are read from it). */
typedef struct
{
  TgTileStore store;
  const char *dir;
  const TgGraph *g;
  const TgPlan *plan;
  int stage;
  uint8_t sha[32];
} TgDirStore;

void tg__dir_store_init (TgDirStore *s, const char *dir, const TgGraph *g, const TgPlan *p,
                         const uint8_t sha[32], int stage);

typedef struct
{
  const void *data;
  size_t size;
} TgPart;

/* Writes the PARTS one after another to PATH through a temporary file,
 * fsync and rename; creates PATH's folders. */
int tg__write_parts_atomic (const char *path, const TgPart *parts, int n_parts, TgError *err);
int tg__mkdir_p (const char *path, TgError *err);

/* A tile's share of a mesh or instance list in the store (plan_values.c). */
int tg__store_write_value (const char *path, const uint8_t sha[32], const TgValue *v,
                           TgError *err);
TgValue *tg__store_read_value (const char *path, const uint8_t sha[32], TgPortType type,
                               TgError *err);

#endif
