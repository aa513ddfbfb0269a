/* The world's sample lattice and windows of it. */
#include <math.h>
#include <string.h>

#include "tgraph/region.h"
#include "tgraph/tiled.h"

void
tg_world_init_default (TgWorld *w)
{
  w->size_x = 4096.0;
  w->size_z = 4096.0;
  w->height_m = 1000.0;
  w->resolution = 1025;
  w->seed = 0;
}

void
tg_region_for_world (TgRegion *r, const TgWorld *w, int resolution)
{
  int res = resolution > 1 ? resolution : 2;

  memset (r, 0, sizeof *r);
  r->cell = w->size_x / (double) (res - 1);
  r->origin_x = -0.5 * w->size_x;
  r->origin_z = 0.5 * w->size_z;
  r->full_w = res;
  /* Z gets as many cells as fit the same cell size (a square world gets a
   * square map). */
  r->full_h = (int) lround (w->size_z / r->cell) + 1;
  if (r->full_h < 2)
    r->full_h = 2;
  r->width = r->full_w;
  r->height = r->full_h;
}

TgRegion
tg_region_window (const TgRegion *r, int col0, int row0, int width, int height)
{
  TgRegion w = *r;

  w.col0 = col0;
  w.row0 = row0;
  w.width = width;
  w.height = height;
  return w;
}

TgRegion
tg_region_grow (const TgRegion *r, int n)
{
  return tg_region_window (r, r->col0 - n, r->row0 - n, r->width + 2 * n, r->height + 2 * n);
}

TgRegion
tg_region_clip (const TgRegion *r)
{
  int c0 = r->col0 > 0 ? r->col0 : 0, r0 = r->row0 > 0 ? r->row0 : 0;
  int c1 = r->col0 + r->width < r->full_w ? r->col0 + r->width : r->full_w;
  int r1 = r->row0 + r->height < r->full_h ? r->row0 + r->height : r->full_h;

  return tg_region_window (r, c0, r0, c1 > c0 ? c1 - c0 : 0, r1 > r0 ? r1 - r0 : 0);
}

TgRegion
tg_region_full (const TgRegion *r)
{
  return tg_region_window (r, 0, 0, r->full_w, r->full_h);
}

bool
tg_region_equal (const TgRegion *a, const TgRegion *b)
{
  return a->origin_x == b->origin_x && a->origin_z == b->origin_z && a->cell == b->cell
         && a->full_w == b->full_w && a->full_h == b->full_h && a->col0 == b->col0
         && a->row0 == b->row0 && a->width == b->width && a->height == b->height;
}

bool
tg_region_contains (const TgRegion *b, const TgRegion *a)
{
  return a->origin_x == b->origin_x && a->origin_z == b->origin_z && a->cell == b->cell
         && a->col0 >= b->col0 && a->row0 >= b->row0
         && a->col0 + a->width <= b->col0 + b->width
         && a->row0 + a->height <= b->row0 + b->height;
}

TgRegion
tg_tiling_window (const TgTiling *t, const TgRegion *full, int ix, int iy)
{
  int c0 = tg_tile_start (full->full_w, t->nx, ix), c1 = tg_tile_start (full->full_w, t->nx, ix + 1);
  int r0 = tg_tile_start (full->full_h, t->ny, iy), r1 = tg_tile_start (full->full_h, t->ny, iy + 1);

  return tg_region_window (full, c0, r0, c1 - c0, r1 - r0);
}
