/* What flows on a wire: the port types and the values that carry them.
 *
 * Grid values (height, mask, image, layers) are float rows over a region;
 * channels are interleaved (image: RGBA).  Values are reference counted and
 * immutable once a node has returned them, so the cache and several
 * consumers can share one without copies.
 */
#ifndef TGRAPH_VALUE_H
#define TGRAPH_VALUE_H

#include <stdbool.h>
#include <stddef.h>

#include "region.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum
{
  TG_TYPE_HEIGHT, /* 1 channel; 1.0 = world.height_m metres */
  TG_TYPE_MASK,   /* 1 channel in 0..1 */
  TG_TYPE_IMAGE,  /* 4 channels RGBA, raw values (no gamma) */
  TG_TYPE_LAYERS, /* N named channels (splat / weight maps) */
  TG_TYPE_FIELD,  /* implicit 3D scalar field */
  TG_TYPE_MESH,   /* indexed triangles */
  TG_TYPE_POINTS, /* scatter instances */
  TG_TYPE_COUNT
} TgPortType;

const char *tg_port_type_name (TgPortType t);   /* "height", "mask", ... */
int tg_port_type_from_name (const char *name);  /* -1 when unknown */

/* Whether an output of type FROM may feed an input of type TO.  Height and
 * mask are both single-channel float grids and connect either way, as in
 * World Machine and Gaea. */
bool tg_port_type_compatible (TgPortType from, TgPortType to);

static inline bool
tg_port_type_is_grid (TgPortType t)
{
  return t <= TG_TYPE_LAYERS;
}

typedef struct TgValue TgValue;

/* The public part of a value, always made by the engine (tg_value_new_*):
 * its reference count and the payload of a mesh, points or field value
 * are private (read those through tg_value_mesh, tg_value_points and
 * tg_value_field). */
struct TgValue
{
  TgPortType type;
  /* grids */
  TgRegion region;
  int channels;
  float *data;            /* region.width * region.height * channels */
  char **channel_names;   /* TG_TYPE_LAYERS: one name per channel */
};

/* A new grid with uninitialised data (caller owns one reference). */
TgValue *tg_value_new_grid (TgPortType type, const TgRegion *region, int channels);

TgValue *tg_value_ref (TgValue *v);
void tg_value_unref (TgValue *v);

/* Bytes held, for memory budgets. */
size_t tg_value_bytes (const TgValue *v);

static inline float *
tg_value_row (const TgValue *v, int row)
{
  return v->data + (size_t) row * (size_t) v->region.width * (size_t) v->channels;
}

/* A new grid holding the window WIN of V (which must contain it). */
TgValue *tg_value_crop (const TgValue *v, const TgRegion *win);

/* Sets channel names of a layers value (copies the strings). */
int tg_value_set_channel_name (TgValue *v, int channel, const char *name);

/* The pixels an image was made from, at their own resolution (a file's
 * pixels): WIDTH x HEIGHT RGBA in raw 0..1 units, row 0 north, column 0
 * west, each pixel an equal area of the world's box rather than a sample
 * on the world's edges as the grid's.  The grid is the same picture
 * resampled onto the world's lattice; a node that means the painted
 * pixels themselves (scatter.colormap) reads these instead, so what it
 * sees does not depend on the world's resolution. */
typedef struct
{
  int width, height;
  const float *rgba; /* width * height * 4, row-major */
} TgPixels;

/* V's source pixels, or NULL when it has none (a grid computed on the
 * lattice).  Crops and windows of V share them. */
const TgPixels *tg_value_pixels (const TgValue *v);

/* Gives grid V the source pixels RGBA (WIDTH x HEIGHT x 4 floats from
 * malloc, which V then owns, freed also on failure).  0 or TG_ENOMEM. */
int tg_value_attach_pixels (TgValue *v, int width, int height, float *rgba);

#ifdef __cplusplus
}
#endif
#endif
