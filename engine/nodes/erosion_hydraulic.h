/* The droplet simulation behind erosion.hydraulic, on a plain float map,
 * so tests can check its mass balance and the benchmark can time it
 * without the engine around it.  Internal to engine/nodes (and tests).
 */
#ifndef TG_NODES_EROSION_HYDRAULIC_H
#define TG_NODES_EROSION_HYDRAULIC_H

#include <stdint.h>

/* Everything in map units: lengths in cells, heights in height units
 * (1.0 = height_m metres); per-step factors already scaled to the cell. */
typedef struct
{
  uint32_t seed;
  long long droplets;
  int rounds;            /* droplets run in this many rounds of 4 phases */
  int max_steps;         /* a droplet's lifetime, in one-cell steps */
  float inertia;         /* share of the old direction kept per step */
  float capacity;        /* sediment capacity per unit of slope x speed x water */
  float min_slope;       /* capacity never uses a flatter slope (keeps flats eroding) */
  float erode, deposit;  /* share of the capacity deficit / excess taken per step */
  float evaporate;       /* share of the water kept per step */
  float friction;        /* share of the squared speed kept per step */
  float gravity;         /* squared speed gained per height unit dropped */
  float height_scale;    /* height units -> metres, for speed and slope */
  float cell_m;
  float brush_radius;    /* cells, >= 1 */
} TgHydraulicSetup;

typedef struct
{
  /* Sums of the height changes applied, in height units x cells. */
  double eroded, deposited;
  /* Sediment still in droplets when they stopped inside the map, and
   * sediment that left the map with a droplet. */
  double carried, left;
  long long droplets_run, steps;
} TgHydraulicStats;

/* Runs FN (USER, begin, end) over [0, N) in any order on any threads;
 * returns 0, or a negative code to stop (cancellation). */
typedef int (*TgHydraulicParallel) (void *ctx, int n, void (*fn) (void *user, int begin, int end),
                                    void *user);

/* Erodes HEIGHT (W x H, row-major) in place with S.  FLOW (W x H, zeroed
 * by the caller, may be NULL) accumulates the water that passed each
 * cell.  The result does not depend on how PARALLEL spreads the work. */
int tg__hydraulic_simulate (const TgHydraulicSetup *s, float *height, float *flow, int w, int h,
                            TgHydraulicParallel parallel, void *ctx, TgHydraulicStats *stats);

#endif
