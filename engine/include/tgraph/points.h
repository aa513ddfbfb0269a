/* The `points` wire type: scatter instances.  Each has a position
 * (metres, +Y up), a rotation (unit quaternion x, y, z, w), a scale and a
 * prototype index into the prototype names.  The order is deterministic:
 * it is part of the output bytes. */
#ifndef TGRAPH_POINTS_H
#define TGRAPH_POINTS_H

#include <stddef.h>
#include <stdint.h>

#include "value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct
{
  int64_t n, cap;
  float *position;   /* 3 * n */
  float *rotation;   /* 4 * n: x, y, z, w */
  float *scale;      /* 3 * n */
  int32_t *proto;    /* n */
  int n_protos;
  char **proto_names; /* n_protos, owned */
} TgPoints;

TgPoints *tg_points_new (void);
void tg_points_free (TgPoints *p);
/* Room for at least N instances in total; 0 or TG_ENOMEM. */
int tg_points_reserve (TgPoints *p, int64_t n);
/* Appends one instance (growing as needed); 0 or TG_ENOMEM. */
int tg_points_push (TgPoints *p, const float pos[3], const float rot[4], const float scale[3],
                    int32_t proto);
/* Adds a prototype name (copied) and returns its index, or TG_ENOMEM. */
int tg_points_add_proto (TgPoints *p, const char *name);
size_t tg_points_bytes (const TgPoints *p);

/* The frame a csv or json instance list is written in (io.h).  Zeroed
 * options are the defaults, the world's own frame: Unity's.  Every frame
 * has x east; they differ in handedness, up axis, north and units:
 *   unity    left-handed,  +Y up, +Z north, metres (the world frame)
 *   unreal   left-handed,  +Z up, +Y south, centimetres, rotations as
 *            Unreal's Pitch, Yaw and Roll in degrees
 *   houdini  right-handed, +Y up, +Z south, metres (glTF's)
 *   blender  right-handed, +Z up, +Y north, metres
 * ORIGIN_CORNER moves the origin from the world's centre to the corner
 * where the file's horizontal coordinates start at 0 (SIZE_X and SIZE_Z,
 * the world's extent in metres, say where that is): the south-west
 * corner for unity and blender (where a Unity terrain starts), the
 * north-west one for unreal (where an Unreal landscape's first
 * heightmap sample lies) and houdini.
 * CHUNK_M > 0 groups the instances by a grid of CHUNK_M metre squares
 * anchored at the world's north-west corner (the heightmap's first
 * sample, where mesh.heightfield's chunks start): chunk (cx, cz) counts
 * cx from the west and cz from the north, and is named
 * "chunk_x<cx>_z<cz>" in every format.  0 writes one list. */
typedef enum
{
  TG_POINTS_FRAME_UNITY = 0,
  TG_POINTS_FRAME_UNREAL,
  TG_POINTS_FRAME_HOUDINI,
  TG_POINTS_FRAME_BLENDER,
} TgPointsFrame;

typedef enum
{
  TG_POINTS_ORIGIN_CENTRE = 0,
  TG_POINTS_ORIGIN_CORNER,
} TgPointsOrigin;

typedef struct
{
  TgPointsFrame frame;
  TgPointsOrigin origin;
  double size_x, size_z; /* metres; used by ORIGIN_CORNER and CHUNK_M */
  double chunk_m;        /* metres; 0: one list */
} TgPointsWriteOptions;

TgValue *tg_value_new_points (TgPoints *p);
const TgPoints *tg_value_points (const TgValue *v);

#ifdef __cplusplus
}
#endif
#endif
