/* The image convention shared by the file nodes (heightmap_io.c,
 * image_io.c): how a world position maps onto an image's pixels, and how a
 * 0..1 sample becomes an 8- or 16-bit value.  Internal to engine/nodes.
 *
 * Row 0 is north (world +Z maximum), column 0 is west (world -X minimum),
 * and the corner pixels sit exactly on the world's corners, so pixel x of
 * a W-pixel image lies at world X = -size_x / 2 + x * size_x / (W - 1).
 */
#ifndef TG_NODES_IMAGE_UTIL_H
#define TG_NODES_IMAGE_UTIL_H

#include <math.h>

/* Sample positions closer than this (in pixels) to a pixel centre snap to
 * it, so a map imported at the resolution it was exported at reads its
 * pixels back exactly despite rounding in the world coordinates. */
#define TG__IMAGE_SNAP_PX 1e-6

/* POS_PX is a position in pixels along an axis of N pixels: clamps it to
 * the image (border samples repeat), returns the left/top pixel of the
 * bilinear pair and stores the weight of the next one in *FRAC. */
static inline int
tg__image_axis (double pos_px, int n, double *frac)
{
  double near = floor (pos_px + 0.5);
  int i0;

  if (fabs (pos_px - near) < TG__IMAGE_SNAP_PX)
    pos_px = near;
  if (!(pos_px > 0.0))  /* also NaN */
    pos_px = 0.0;
  if (pos_px > (double) (n - 1))
    pos_px = (double) (n - 1);
  i0 = (int) floor (pos_px);
  if (i0 > n - 2)
    i0 = n > 1 ? n - 2 : 0;
  *frac = n > 1 ? pos_px - (double) i0 : 0.0;
  return i0;
}

/* Pixel position of world X (west to east) and world Z (north to south)
 * on an image of W x H pixels spread over a SIZE_X x SIZE_Z world. */
static inline double
tg__image_px_x (double x, double size_x, int w)
{
  return (x + 0.5 * size_x) / size_x * (double) (w - 1);
}

static inline double
tg__image_px_y (double z, double size_z, int h)
{
  return (0.5 * size_z - z) / size_z * (double) (h - 1);
}

/* Clamps V to 0..1 (NaN -> 0) and rounds V * FULL to nearest. */
static inline unsigned
tg__quantise (float v, double full)
{
  if (!(v > 0.0f))
    return 0;
  if (v >= 1.0f)
    return (unsigned) full;
  return (unsigned) ((double) v * full + 0.5);
}

#endif
