/* The mesh writers formats/ registers under the export format names
 * "glb", "obj" and "ply" (see init.c), a shared check of a mesh's shape,
 * and the chunk data of a .glb in the file's frame (also used for the
 * prototype meshes of instance lists).  Internal to formats/. */
#ifndef TG_MESH_WRITERS_H
#define TG_MESH_WRITERS_H

#include <stdio.h>

#include <tgraph/tgraph.h>

#include "glb-builder.h"
#include "handedness.h"

int tg__write_mesh_glb (FILE *f, const TgMesh *m, const TgMeshWriteOptions *opt, TgError *err);
int tg__write_mesh_obj (FILE *f, const TgMesh *m, const TgMeshWriteOptions *opt, TgError *err);
int tg__write_mesh_ply (FILE *f, const TgMesh *m, const TgMeshWriteOptions *opt, TgError *err);
/* The material library an OBJ names ("mtl"): one material whose map_Kd
 * is OPT->texture_file; M is not read. */
int tg__write_mesh_mtl (FILE *f, const TgMesh *m, const TgMeshWriteOptions *opt, TgError *err);

/* Whether a mesh writer (glb, OBJ, PLY: one rule) writes chunk C under
 * OPT (may be NULL): it has triangles, and is of lod 0 when OPT asks for
 * the first level. */
static inline bool
tg__mesh_chunk_wanted (const TgMeshChunk *c, const TgMeshWriteOptions *opt)
{
  return c->n_indices > 0 && !(opt && opt->first_lod_only && c->lod != 0);
}

/* A point or a normal of the world in the frame OPT (may be NULL) asks
 * of an OBJ or PLY file; triangles are reversed (tg__hand_tri) in both. */
static inline void
tg__mesh_file_vec3 (float out[3], const float in[3], const TgMeshWriteOptions *opt)
{
  if (opt && opt->up == TG_MESH_UP_Z)
    tg__hand_vec3_zup (out, in);
  else
    tg__hand_vec3 (out, in);
}

/* Checks what every writer relies on: arrays present, index count a
 * multiple of 3 and every index below the chunk's vertex count.  The
 * error names the chunk ("chunks[2] (chunk_x1_z0_lod0): index 7 ...").
 * Stops with TG_ECANCELLED once the build writing F is cancelled. */
int tg__mesh_check (FILE *f, const TgMesh *m, const char *format, TgError *err);

/* The most vertices a chunk may have for uint16 indices: 65535 itself is
 * glTF's primitive restart value, never an index. */
#define TG_GLB_MAX_SHORT_VERTICES 65535

/* Adds the data of chunk C (world frame, checked; borrowed until
 * tg_glb_write) to G in the file's right-handed frame (handedness.h),
 * converted as the file is written: POSITION with its bounds, NORMAL, and
 * TEXCOORD_0 when C has UVs into ATTRS (returns how many, or a negative
 * TG_E* code), the reversed triangles' accessor into *INDICES (uint16
 * when C has at most TG_GLB_MAX_SHORT_VERTICES vertices, else uint32). */
int tg__glb_add_chunk (TgGlb *g, const TgMeshChunk *c, TgGlbAttribute attrs[3], int *indices);

#endif
