/* erosion.stream_power's solver, apart from the node so that a test can
 * run it on plain arrays and read its volume budget.  Internal to
 * engine/nodes.
 *
 * erosion_stream_power_sim.c   one time step: receivers, stack, pits'
 *                              basins re-routed over their passes, drainage
 *                              area, implicit incision (Braun and Willett
 *                              2013), deposition, diffusion
 * erosion_stream_power.c       the node: parameters, ports, masks
 */
#ifndef TG_NODES_EROSION_STREAM_POWER_H
#define TG_NODES_EROSION_STREAM_POWER_H

#include <stdbool.h>
#include <stdint.h>

typedef struct
{
  double duration_yr;     /* total time */
  double dt_yr;           /* time step (the last one may be shorter) */
  double uplift_m_per_yr; /* rock uplift rate, times the uplift mask */
  double erodibility;     /* K, in m^(1 - 2m) / yr */
  double m, n;            /* exponents of area and slope */
  double diffusivity;     /* hillslope diffusion, m² / yr */
  double deposition;      /* G of the xi-q law (0: detachment-limited) */
  double channel_area;    /* m²: drainage area below which there is no incision */
} TgSpParams;

/* Volumes over the run, in m³ (each summed in one fixed order). */
typedef struct
{
  double eroded;    /* incised by the stream-power law */
  double deposited; /* laid down from the sediment flux (fans, lake fills) */
  double outflux;   /* sediment carried out through the world's edge */
  double uplift;    /* added by uplift */
  double diffused;  /* net volume hillslope diffusion moved into the edge */
  int steps;
  size_t basins_max; /* the most pits' basins (flats joined) one step routed */
} TgSpStats;

typedef struct
{
  /* Optional: runs FN (USER, begin, end) over [0, N) in chunks of GRAIN
   * (each chunk writes its own rows or columns). */
  int (*parallel) (void *ctx, int n, int grain, void (*fn) (void *, int, int), void *user);
  void *ctx;
  /* Optional: polled between steps and inside the serial loops. */
  bool (*cancelled) (void *ctx);
  /* Optional, for a benchmark's breakdown of a step: called by a thread
   * when it ends its part of phase TG_SP_PHASE_* (the work it did since
   * its last call, or since it started, was that phase's). */
  void (*phase) (void *ctx, int phase);
} TgSpOpts;

/* The phases of a step, in order. */
enum
{
  TG_SP_PHASE_RECEIVERS, /* receivers, flats joined */
  TG_SP_PHASE_BASINS,    /* donors, the pits' basins labelled */
  TG_SP_PHASE_PASSES,    /* passes, spanning tree, carving, lakes */
  TG_SP_PHASE_STACK,     /* the stack, the lakes' lists */
  TG_SP_PHASE_AREA,      /* drainage area */
  TG_SP_PHASE_INCISION,  /* implicit incision */
  TG_SP_PHASE_DEPOSITION, /* deposition, lake fills */
  TG_SP_PHASE_DIFFUSION, /* hillslope diffusion */
  TG_SP_PHASES
};

/* Number of time steps P runs. */
int tg__sp_steps (const TgSpParams *p);

/* What a run gives besides the heights; any pointer may be NULL. */
typedef struct
{
  double *area;      /* drainage area of the last step (m²) */
  double *eroded;    /* depth incised over the run (m), summed over the steps */
  double *deposited; /* depth of sediment laid down over the run (m) */
  TgSpStats *stats;  /* the budget */
} TgSpOut;

/* Runs P over a W x H world of cells CELL_M wide.  Z (metres, W * H) is
 * the terrain, replaced by the result; the world's edge is base level
 * (kept as it is, where water and sediment leave).  UPLIFT (0..1, may be
 * NULL for 1 everywhere) scales the uplift rate.  OUT (may be NULL) gets
 * the rest.  0, TG_ENOMEM or TG_ECANCELLED. */
int tg__sp_run (const TgSpOpts *o, const TgSpParams *p, int w, int h, double cell_m, double *z,
                const float *uplift, const TgSpOut *out);

#endif
