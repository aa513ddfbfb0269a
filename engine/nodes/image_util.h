/* The image convention shared by the file nodes (heightmap_io.c,
 * image_io.c): loading and checking an input image, how a world position
 * maps onto its pixels, and how a 0..1 sample becomes an 8- or 16-bit
 * value.  Internal to engine/nodes.
 *
 * Row 0 is north (world +Z maximum), column 0 is west (world -X minimum),
 * and the corner pixels sit exactly on the world's corners, so pixel x of
 * a W-pixel image lies at world X = -size_x / 2 + x * size_x / (W - 1).
 */
#ifndef TG_NODES_IMAGE_UTIL_H
#define TG_NODES_IMAGE_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/node.h>

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

/* The two image rows around world Z (row 0 is north, +Z maximum): returns
 * the upper one, stores the lower one (the same on a one-row image) in
 * *Y1 and its weight in *FRAC. */
static inline int
tg__image_rows (const TgImage *img, double z, double size_z, int *y1, double *frac)
{
  int y0 = tg__image_axis (tg__image_px_y (z, size_z, img->height), img->height, frac);

  *y1 = img->height > 1 ? y0 + 1 : y0;
  return y0;
}

/* Loads the image named by a file node's PATH parameter into *IMG (owned
 * by the context) and checks that it can be sampled: 1 to 4 channels of
 * 8, 16 or 32 bits, over a world with an extent.  WHAT names the file in
 * the messages ("heightmap" or "image"; each message is a whole format, so
 * the app can translate it). */
static inline int
tg__image_load_checked (TgEvalCtx *c, const char *path, const char *what, const TgImage **img)
{
  const TgWorld *world = tg_eval_world (c);
  const TgImage *im;
  const bool hm = strcmp (what, "heightmap") == 0;
  int rc;

  if (!path || !path[0])
    return tg_eval_fail (c, TG_EMISSING, "params.path: %s",
                         hm ? TG_MSG_NO_HEIGHTMAP_FILE : TG_MSG_NO_IMAGE_FILE);
  /* On failure the loader has already recorded a message naming the
   * path and the reason. */
  rc = tg_eval_load_image (c, path, img);
  if (rc < 0)
    return rc;
  im = *img;
  if (!im)
    return tg_eval_fail (c, TG_EIO, TG_MSG_CANNOT_READ_PLAIN, path);
  if (im->width < 1 || im->height < 1 || im->channels < 1 || im->channels > 4 || !im->data)
    return tg_eval_fail (c, TG_EFORMAT, hm ? TG_MSG_HEIGHTMAP_EMPTY : TG_MSG_IMAGE_EMPTY, path,
                         im->channels);
  if (im->bits != 8 && im->bits != 16 && im->bits != 32)
    return tg_eval_fail (c, TG_EFORMAT, hm ? TG_MSG_HEIGHTMAP_BITS : TG_MSG_IMAGE_BITS, path,
                         im->bits);
  if (!(world->size_x > 0.0) || !(world->size_z > 0.0))
    return tg_eval_fail (c, TG_EINVAL, TG_MSG_WORLD_NO_EXTENT);
  return 0;
}

/* The memory hook of a file node reading PATH: the image the engine
 * keeps decoded (its size from the file's header) and the column table. */
static inline void
tg__image_memory (TgMemQuery *q, const char *path)
{
  TgImage info;

  if (q->image_info (q, path, &info) == 0)
    q->kept += (uint64_t) info.width * (uint64_t) info.height * (uint64_t) info.channels
               * (uint64_t) (info.bits / 8);
  q->work += (sizeof (double) + sizeof (int)) * (uint64_t) q->region->width;
}

/* The bilinear pair of every column of the eval region on an image W
 * pixels wide: column I reads pixel (*COL_X0)[I] and the next, with
 * weight (*COL_FX)[I] on the next.  Computed once per node rather than
 * per row.  One block holds both arrays (the doubles first, so both stay
 * aligned): the caller frees *COL_FX. */
static inline int
tg__image_columns (TgEvalCtx *c, int w, double **col_fx, int **col_x0)
{
  const TgRegion *region = tg_eval_region (c);
  double size_x = tg_eval_world (c)->size_x;
  double *fx;
  int *x0;

  fx = malloc ((sizeof (double) + sizeof (int)) * (size_t) (region->width > 0 ? region->width : 1));
  if (!fx)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  x0 = (int *) (void *) (fx + region->width);
  for (int i = 0; i < region->width; i++)
    x0[i] = tg__image_axis (tg__image_px_x (tg_region_x (region, i), size_x, w), w, &fx[i]);
  *col_fx = fx;
  *col_x0 = x0;
  return 0;
}

/* The export nodes' `compression`: how hard zlib works on a PNG (the
 * pixels are the same either way; other formats ignore it).  formats/
 * registers the small writers as "png8.small" and "png16.small". */
enum
{
  TG__PNG_FAST,
  TG__PNG_SMALL,
};

static const char *const tg__png_compressions[] = { "fast", "small", NULL };

#define TG__PARAM_PNG_COMPRESSION(T)                                                             \
  TG_PARAM_ENUM (T, compression, .label = N_("PNG compression"), .def_s = "fast",               \
                 .choices = tg__png_compressions,                                               \
                 .help = N_("fast: zlib level 2 and the Up filter, several times faster "      \
                            "to write; small: zlib level 9, four filter choices tried and "   \
                            "the smallest file kept, a few percent smaller. The pixels are "  \
                            "the same; formats other than PNG ignore it"))

/* The writer for FORMAT ("png8", "png16", ...) at COMPRESSION. */
static inline const char *
tg__png_writer (const char *format, int compression)
{
  if (compression != TG__PNG_SMALL)
    return format;
  if (strcmp (format, "png8") == 0)
    return "png8.small";
  if (strcmp (format, "png16") == 0)
    return "png16.small";
  return format;
}

#endif
