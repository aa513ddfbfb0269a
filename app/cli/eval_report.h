/* `tgraph eval --report`: the HTML build report (eval_report.c). */
#ifndef TGRAPH_CLI_EVAL_REPORT_H
#define TGRAPH_CLI_EVAL_REPORT_H

#include <stdint.h>

#include <tgraph/tgraph.h>

typedef struct
{
  const char *path;         /* the .html file to write */
  const char *graph_file;   /* as given on the command line */
  const char *out_dir;      /* the build's folder, its manifest.json read back */
  const TgGraph *graph;
  TgEngine *engine;         /* the build's engine, its cache holding results */
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
