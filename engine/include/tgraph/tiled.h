/* Tiled builds: a world cut into NX x NY tiles, built by independent jobs
 * in stages, with exactly the bytes of the whole-world evaluation.
 *
 * Local and apron nodes compute any window exactly, so a tile job pulls
 * them over its tile as usual.  A global node either has a tiled scheme
 * (TgTiledScheme below: per-tile steps, each optionally followed by one
 * reduce job, talking through named blobs that the front end keeps in the
 * plan folder) or is computed by one job over the whole world.  Either
 * way its grid outputs go to the plan folder tile by tile, and later
 * stages read them back through a TgTileStore instead of computing them.
 *
 * Tiles do not overlap: tile IX of NX along a lattice of N samples covers
 * [tg_tile_start (N, NX, IX), tg_tile_start (N, NX, IX + 1)).
 */
#ifndef TGRAPH_TILED_H
#define TGRAPH_TILED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "region.h"
#include "value.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_TILES_MAX 1024 /* tiles along one axis */

/* First sample of tile I of NT along N samples (I == NT gives N). */
static inline int
tg_tile_start (int n, int nt, int i)
{
  return (int) (((int64_t) n * i) / nt);
}

/* How a build is tiled, and which tile a job works on. */
typedef struct
{
  int nx, ny;  /* tiles along x (columns) and z (rows) */
  int ix, iy;  /* this job's tile; -1, -1 for a reduce job or a whole-world job */
} TgTiling;

/* The window of the full lattice FULL that tile (IX, IY) of T covers. */
TgRegion tg_tiling_window (const TgTiling *t, const TgRegion *full, int ix, int iy);

/* What the front end keeps for a tiled build (see formats/tiled.c). */
typedef struct
{
  void *user;
  /* Whether NODE's outputs were written by an earlier stage. */
  bool (*has) (void *user, int node);
  /* A new grid with NODE's output OUTPUT over REGION, exactly as the
   * whole-world result windowed with its edges clamped would be. */
  TgValue *(*get) (void *user, int node, int output, const TgRegion *region, TgError *err);
  /* Blobs of a tiled scheme: NAME written by tile (IX, IY) of NODE, or by
   * its reduce job when IX = IY = -1. */
  int (*blob_put) (void *user, int node, int ix, int iy, const char *name, const void *data,
                   size_t size, TgError *err);
  /* *DATA is malloc'ed (caller frees); TG_EMISSING when there is no such blob. */
  int (*blob_get) (void *user, int node, int ix, int iy, const char *name, void **data,
                   size_t *size, TgError *err);
  /* Removes NAME of tile (IX, IY) of NODE, which no later job reads; 0
   * when there is no such blob.  May be NULL: keeping a blob is never
   * wrong, only costly on disk. */
  int (*blob_drop) (void *user, int node, int ix, int iy, const char *name, TgError *err);
} TgTileStore;

#ifdef __cplusplus
}
#endif
#endif
