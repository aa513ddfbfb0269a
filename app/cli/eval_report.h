/* `tgraph eval --report`: the HTML build report (eval_report.c). */
#ifndef TGRAPH_CLI_EVAL_REPORT_H
#define TGRAPH_CLI_EVAL_REPORT_H

#include <stdint.h>

#include <tgraph/tgraph.h>

#include "picture.h"

/* What the report shows of a node's result, taken as the build gets it
 * (tg__cli_report_note, from the engine's result hook): a one-shot
 * build keeps no results to be pulled again afterwards. */
typedef struct
{
  bool seen;
  TgPicture thumb;  /* of its first output; empty when it has none */
  uint64_t bytes;   /* of all its outputs over the world */
  char what[128];
} TgCliNodeResult;

/* Notes into R node NODE's N outputs OUTS over REGION (the engine's
 * result hook), seen over the world's region WORLD; the first result
 * that covers the world counts. */
void tg__cli_report_note (TgCliNodeResult *r, const TgRegion *world, const TgRegion *region,
                          TgValue *const *outs, int n);
void tg__cli_report_results_free (TgCliNodeResult *r, int n);

typedef struct
{
  const char *path;         /* the .html file to write */
  const char *graph_file;   /* as given on the command line */
  const char *out_dir;      /* the build's folder, its manifest.json read back */
  const TgGraph *graph;
  const TgCliNodeResult *results; /* per node, noted during the build */
  const TgEvalReport *report;
  const double *t_start, *t_end; /* per node, seconds; t_end 0 when it did not finish */
  double seconds;
  int threads;
  uint64_t estimate_peak;   /* tg_engine_estimate's, bytes */
  int estimate_node;        /* the node running at that peak, or -1 */
} TgCliReportInput;

/* Writes the report atomically; 0 or a negative TG_E* with ERR set. */
int tg__cli_eval_report_write (const TgCliReportInput *in, TgError *err);

#endif
