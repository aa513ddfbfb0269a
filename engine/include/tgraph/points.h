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

TgValue *tg_value_new_points (TgPoints *p);
const TgPoints *tg_value_points (const TgValue *v);

#ifdef __cplusplus
}
#endif
#endif
