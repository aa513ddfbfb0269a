/* The mesh writers formats/ registers under the export format names
 * "glb", "obj" and "ply" (see init.c), a shared check of a mesh's shape,
 * and the chunk data of a .glb in the file's frame (also used for the
 * prototype meshes of instance lists).  Internal to formats/. */
#ifndef TG_MESH_WRITERS_H
#define TG_MESH_WRITERS_H

#include <stdio.h>

#include <tgraph/tgraph.h>

#include "glb-builder.h"

int tg__write_mesh_glb (FILE *f, const TgMesh *m, TgError *err);
int tg__write_mesh_obj (FILE *f, const TgMesh *m, TgError *err);
int tg__write_mesh_ply (FILE *f, const TgMesh *m, TgError *err);

/* Checks what every writer relies on: arrays present, index count a
 * multiple of 3 and every index below the chunk's vertex count.  The
 * error names the chunk ("chunks[2] (chunk_x1_z0_lod0): index 7 ...").
 * Stops with TG_ECANCELLED once the build writing F is cancelled. */
int tg__mesh_check (FILE *f, const TgMesh *m, const char *format, TgError *err);

/* Adds the data of chunk C (world frame, checked; borrowed until
 * tg_glb_write) to G in the file's right-handed frame (handedness.h),
 * converted as the file is written: POSITION with its bounds, NORMAL, and
 * TEXCOORD_0 when C has UVs into ATTRS (returns how many, or a negative
 * TG_E* code), the reversed triangles' accessor into *INDICES. */
int tg__glb_add_chunk (TgGlb *g, const TgMeshChunk *c, TgGlbAttribute attrs[3], int *indices);

#endif
