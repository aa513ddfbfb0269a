/* The world and the sample lattice that every 2D result lives on.
 *
 * Image convention, the same for every import and export in the project:
 * row 0 is the north edge (world +Z maximum) and column 0 the west edge
 * (world -X minimum).  The world is centred on the origin, +Y is up, and
 * samples sit on the world's edges (a 1025-sample map has 1024 cells), as
 * Unity and Unreal heightmaps do.
 *
 * A region is a window of a lattice.  Sample (i, j) of a region is at
 *   x = origin_x + (col0 + i) * cell,   z = origin_z - (row0 + j) * cell
 * computed from integers, so a tile of a map sees bit-identical
 * coordinates to the same window of the whole map.
 */
#ifndef TGRAPH_REGION_H
#define TGRAPH_REGION_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TG_RESOLUTION_MIN 2
#define TG_RESOLUTION_MAX 16385

typedef struct
{
  double size_x, size_z; /* metres */
  double height_m;       /* metres that height 1.0 stands for */
  int resolution;        /* samples along X of a build */
  uint32_t seed;
} TgWorld;

typedef struct
{
  double origin_x, origin_z; /* world position of lattice sample (0, 0): the NW corner */
  double cell;               /* metres between samples */
  int full_w, full_h;        /* lattice samples that cover the whole world */
  int col0, row0;            /* first sample of this window; may be < 0 (apron) */
  int width, height;         /* samples in this window */
} TgRegion;

void tg_world_init_default (TgWorld *w);

/* The whole world sampled with RESOLUTION samples along X. */
void tg_region_for_world (TgRegion *r, const TgWorld *w, int resolution);

/* A window [col0, col0 + width) x [row0, row0 + height) of R's lattice. */
TgRegion tg_region_window (const TgRegion *r, int col0, int row0, int width, int height);

/* R grown by N samples on every side (same lattice). */
TgRegion tg_region_grow (const TgRegion *r, int n);

/* R cut at the edges of its lattice (empty when it lies outside). */
TgRegion tg_region_clip (const TgRegion *r);

/* The whole lattice R belongs to. */
TgRegion tg_region_full (const TgRegion *r);

bool tg_region_equal (const TgRegion *a, const TgRegion *b);

/* True when A lies entirely inside B (same lattice). */
bool tg_region_contains (const TgRegion *b, const TgRegion *a);

static inline double
tg_region_x (const TgRegion *r, int i)
{
  return r->origin_x + (double) (r->col0 + i) * r->cell;
}

static inline double
tg_region_z (const TgRegion *r, int j)
{
  return r->origin_z - (double) (r->row0 + j) * r->cell;
}

static inline uint64_t
tg_region_samples (const TgRegion *r)
{
  return (uint64_t) r->width * (uint64_t) r->height;
}

#ifdef __cplusplus
}
#endif
#endif
