/* Tiled world builds: the plan, its jobs and the stitch.
 *
 * A plan cuts the world into NX x NY tiles and orders the work in stages;
 * every job of a stage is independent of the others, and a stage needs
 * only the stages before it.  Each global grid node is built first: step
 * by step through its tiled scheme (a stage of tile jobs per step, a
 * one-job stage per reduce) or, lacking one, by one job over the whole
 * world.  Its outputs go to the plan folder tile by tile, and so do the
 * grids a scheme reads around its tiles (a store stage before its first
 * step, so no step job computes them over a grown window).  The last
 * stage writes the exports: one job per tile for the grids (raw .tile
 * images), one job for the meshes and instance lists.  `tgraph stitch` then checks
 * every job's manifest and writes the whole world's files and manifest,
 * the same bytes as `tgraph eval` of the whole world.
 *
 * The plan folder:
 *   plan.json             graph hash, world, tiles and windows, stages, jobs
 *   graph/graph.tgraph    the graph with the plan's overrides, and its inputs
 *   stages/NN.txt         one command a line, the jobs of stage NN
 *   run-parallel.sh       the stages in order on GNU parallel
 *   submit-slurm.sh       one job array per stage, chained with afterok
 *   run-job.sh            runs one line of a stage file (Slurm's tasks)
 *   store/                global nodes' tiles and their schemes' blobs
 *   tiles/IX_IY/, whole/  the export jobs' files and their job.json
 *   logs/                 the drivers' logs
 */
#ifndef TGFORMATS_PLAN_H
#define TGFORMATS_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include <tgraph/tgraph.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum
{
  TG_STAGE_STEP,   /* a step of a global node's tiled scheme, one job per tile */
  TG_STAGE_REDUCE, /* the reduce after a step, one job */
  TG_STAGE_NODE,   /* a global node without a scheme, one whole-world job */
  TG_STAGE_EXPORT, /* the exports: one job per tile (grids), then one for meshes and points */
  TG_STAGE_STORE,  /* a local or apron node's grids kept per tile, one job per tile */
} TgStageKind;

typedef struct
{
  TgStageKind kind;
  int node;    /* STEP, REDUCE, NODE, STORE */
  int step;    /* STEP, REDUCE */
  int n_jobs;
  bool tiles;  /* EXPORT: jobs 0 .. nx*ny-1 are tiles */
  bool whole;  /* EXPORT: the last job is the whole-world one */
} TgStage;

typedef struct
{
  int nx, ny;
  TgRegion full;     /* the whole world at the build resolution */
  int n_stages;
  TgStage *stages;
  int *stored_after; /* per node: the stage that completes its stored outputs, or -1 */
} TgPlan;

/* Plans G (validated, at its world's resolution) in NX x NY tiles.
 * Refuses counts below 1, above TG_TILES_MAX or above the samples. */
int tg_plan_make (const TgGraph *g, int nx, int ny, TgPlan *p, TgError *err);
void tg_plan_clear (TgPlan *p);

/* The tile of job J of stage S, or -1, -1 for a one-job stage or the
 * export stage's whole-world job. */
void tg_plan_job_tile (const TgPlan *p, int s, int j, int *ix, int *iy);

/* An estimate of job J of stage S's peak memory in bytes: the grids it
 * computes over its tile, aprons and halos, and the engine's working set. */
uint64_t tg_plan_job_memory (const TgPlan *p, const TgGraph *g, int s, int j);

typedef struct
{
  const char *graph_name; /* the .tgraph file's name, for the manifest */
  const char *tgraph;     /* the tgraph executable the jobs run */
  int threads;            /* --threads for every job, 0: all cores */
  const char *partition, *time, *mem; /* Slurm defaults, may be NULL */
} TgPlanWriteOptions;

/* Writes the plan folder DIR for G (whose input files are copied in).
 * A DIR that holds another graph's or another tiling's plan is refused
 * with nothing written; the same plan again keeps the jobs' results. */
int tg_plan_write (const TgGraph *g, const TgPlan *p, const char *dir,
                   const TgPlanWriteOptions *o, TgError *err);

/* Runs the job of stage STAGE for tile (IX, IY) (-1, -1: the stage's
 * one job, or the export stage's whole-world job) of the plan in DIR,
 * whose graph G was loaded from DIR/graph/graph.tgraph; NX, NY must be
 * the plan's tiles.  Results appear only when the job succeeds. */
int tg_plan_run_job (TgEngine *e, const TgGraph *g, const char *dir, int nx, int ny, int stage,
                     int ix, int iy, const TgEvalHooks *hooks, TgEvalReport *report,
                     TgError *err);

/* Per-tile files instead of whole images, for engines that import a
 * tiled landscape: tiles of SIZE samples sharing their border samples.
 *   unreal: World Partition naming, NAME_x0_y0.png (x east, y south),
 *           sizes Unreal recommends (127, 253, 505, 1009, 2017, 4033, 8129);
 *   unity:  a terrain grid, NAME_x0_z0 (z north), 2^n + 1 samples, and
 *           heightmaps as RAW16 south first (what Unity's RAW import reads). */
typedef enum
{
  TG_TILE_FILES_NONE,
  TG_TILE_FILES_UNREAL,
  TG_TILE_FILES_UNITY,
} TgTileFiles;

typedef struct
{
  TgTileFiles tile_files;
  int tile_size; /* samples a side; 0: the largest allowed that tiles the world */
} TgStitchOptions;

/* Checks every export job's manifest in DIR and writes the whole world's
 * files and manifest.json into OUT_DIR, all or nothing.  PROGRESS, when
 * set, is called with the files done so far.  OPTS may be NULL.  On
 * success *LIST (LIST may be NULL) is a new list of the committed files,
 * to free with tg_export_list_free. */
int tg_stitch (const char *dir, const char *out_dir, const TgStitchOptions *opts,
               const TgCancel *cancel, void (*progress) (void *user, int done, int total),
               void *user, TgExportList **list, TgError *err);

#ifdef __cplusplus
}
#endif
#endif
