/* The instance-list writers formats/ registers under the export format
 * names "csv", "json", "glb" and "godot" (see init.c), the .glb mesh
 * reader registered for prototype meshes, and what the writers share:
 * the input check, locale-independent shortest float text, and the
 * marker colour of each prototype.  csv and json write the frame their
 * options name (points_frame.c; by default world coordinates, z = north,
 * Unity's frame); glb and godot the right-handed file frame
 * (z = -north, handedness.h); the reader returns world coordinates.
 * Internal to formats/. */
#ifndef TG_POINTS_WRITERS_H
#define TG_POINTS_WRITERS_H

#include <locale.h>
#include <stdio.h>

#include <tgraph/tgraph.h>

int tg__write_points_csv (FILE *f, const TgPoints *p, const TgMesh *const *meshes,
                          const TgPointsWriteOptions *opt, TgError *err);
int tg__write_points_json (FILE *f, const TgPoints *p, const TgMesh *const *meshes,
                           const TgPointsWriteOptions *opt, TgError *err);
int tg__write_points_glb (FILE *f, const TgPoints *p, const TgMesh *const *meshes,
                          const TgPointsWriteOptions *opt, TgError *err);
int tg__write_points_godot (FILE *f, const TgPoints *p, const TgMesh *const *meshes,
                            const TgPointsWriteOptions *opt, TgError *err);

/* Reads the meshes of a self-contained .glb (triangles; node transforms
 * applied) as one chunk per primitive. */
int tg__read_mesh_glb (const char *path, TgMesh **out, TgError *err);

/* Checks what every writer relies on: finite positions, rotations and
 * scales, and prototype indices in range.  The error names the instance. */
int tg__points_check (const TgPoints *p, const char *format, TgError *err);

/* Switches this thread to the C locale (so printf writes '.'), and back. */
locale_t tg__points_c_locale_push (void);
void tg__points_c_locale_pop (locale_t old);

/* The shortest "%g" text that reads back as V (6 to 9 digits); -0 is
 * written "0".  Call between tg__points_c_locale_push and _pop.  Returns
 * the length; OUT holds 32 bytes. */
int tg__points_format_float (float v, char out[32]);

/* Linear RGB marker colour of prototype K (a fixed, distinct cycle). */
void tg__points_proto_color (int k, float rgb[3]);

/* The marker cone shown for a prototype without a mesh of its own, in
 * every format that draws meshes: 1 m tall, 0.25 m wide at its base, 8
 * flat-shaded sides and a base facing down, in world coordinates like
 * any mesh, with its origin at the centre of its base so that it stands
 * on the ground at the instance's position.  MESH (one chunk) points
 * into the struct: do not copy it. */
#define TG_POINTS_CONE_SEGMENTS 8
#define TG_POINTS_CONE_VERTICES (3 * TG_POINTS_CONE_SEGMENTS + TG_POINTS_CONE_SEGMENTS + 1)
#define TG_POINTS_CONE_INDICES (6 * TG_POINTS_CONE_SEGMENTS)

typedef struct
{
  float pos[3 * TG_POINTS_CONE_VERTICES];
  float nrm[3 * TG_POINTS_CONE_VERTICES];
  uint32_t idx[TG_POINTS_CONE_INDICES];
  TgMeshChunk chunk;
  TgMesh mesh;
} TgPointsCone;

void tg__points_cone_init (TgPointsCone *k);

/* The rotation matrix of quaternion Q (x, y, z, w; normalised first, zero
 * as identity), R[row][col], applying to column vectors. */
void tg__points_rotation (const float q[4], double r[3][3]);

/* The 3 x 4 matrix [R(q) diag(s) | t] of instance I, row by row:
 * m[0..3] = R00 s0, R01 s1, R02 s2, tx; m[4..7] = row 1 with ty; m[8..11]
 * = row 2 with tz (R applies to column vectors, as glTF and Godot do). */
void tg__points_matrix (const TgPoints *p, int64_t i, double m[12]);

/* The frame a csv or json list is written in (points_frame.c): the
 * strings its header or frame object states, and the map from the world. */
typedef struct
{
  TgPointsFrame frame;
  const char *name;       /* "unity", "unreal", "houdini", "blender" */
  const char *handedness; /* "left" or "right" */
  const char *up, *north; /* the axis pointing up and north: "+Y", "-Z", ... */
  const char *units;      /* "m" or "cm" */
  const char *origin;     /* "centre", "south-west corner" or "north-west corner" */
  int axis[3], sign[3], det;
  double unit, offset[3];
} TgPointsFrameInfo;

/* Fills FR from OPT (NULL: the defaults); an unknown frame or origin, or a
 * corner origin without the world's extent, is an error naming FORMAT. */
int tg__points_frame_init (TgPointsFrameInfo *fr, const TgPointsWriteOptions *opt,
                           const char *format, TgError *err);

/* Instance I of P in frame FR: position (in FR's units, from FR's
 * origin), rotation quaternion (x, y, z, w) and scale along the local axes. */
void tg__points_frame_instance (const TgPointsFrameInfo *fr, const TgPoints *p, int64_t i,
                                float pos[3], float rot[4], float scale[3]);

/* Unreal's FRotator (Pitch, Yaw, Roll in degrees) of Q, a quaternion in
 * Unreal's frame (x east, y south, z up), as FMatrix::Rotator derives it. */
void tg__points_unreal_rotator (const float q[4], float pyr[3]);

/* The chunk grid of OPT->chunk_m (points_chunk.c): anchored at the
 * world's north-west corner, chunk (cx, cz) counting from the west and
 * the north, named "chunk_x<cx>_z<cz>".  CHUNK_M 0 is one chunk, (0, 0). */
typedef struct
{
  double chunk_m;         /* 0: one list */
  double west_m, north_m; /* world x of the west edge, z of the north edge */
  int64_t ncx, ncz;       /* chunks along x (east) and z (south) */
} TgPointsChunkGrid;

/* Fills G from OPT (NULL: one list); a negative or non-finite size, or
 * chunks without the world's extent, is an error naming FORMAT. */
int tg__points_chunk_grid_init (TgPointsChunkGrid *g, const TgPointsWriteOptions *opt,
                                const char *format, TgError *err);
/* The chunk holding world position POS (clamped to the world's chunks). */
void tg__points_chunk_of (const TgPointsChunkGrid *g, const float pos[3], int64_t *cx,
                          int64_t *cz);
/* "chunk_x<cx>_z<cz>". */
void tg__points_chunk_name (int64_t cx, int64_t cz, char out[48]);

/* A run of instances in one chunk (and one prototype, when grouped by it). */
typedef struct
{
  int64_t cx, cz;
  int proto;            /* -1 unless grouped by prototype */
  int64_t first, count; /* a range of TgPointsChunks.order */
} TgPointsGroup;

typedef struct
{
  TgPointsChunkGrid grid;
  bool chunked;          /* chunk_m > 0 */
  int64_t *order;        /* the n instance indices, group after group */
  TgPointsGroup *groups; /* the groups that hold instances, chunks north-west first */
  int64_t n_groups;
} TgPointsChunks;

/* Groups P's instances by chunk (and by prototype, BY_PROTO) in the order
 * above, each group in list order.  Clear with tg__points_chunks_clear. */
int tg__points_chunks_init (TgPointsChunks *c, const TgPoints *p, const TgPointsWriteOptions *opt,
                            bool by_proto, const char *format, TgError *err);
void tg__points_chunks_clear (TgPointsChunks *c);

#endif
