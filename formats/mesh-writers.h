/* The mesh writers formats/ registers under the export format names
 * "glb", "obj" and "ply" (see init.c), and a shared check of a mesh's
 * shape.  Internal to formats/. */
#ifndef TG_MESH_WRITERS_H
#define TG_MESH_WRITERS_H

#include <stdio.h>

#include <tgraph/tgraph.h>

int tg__write_mesh_glb (FILE *f, const TgMesh *m, TgError *err);
int tg__write_mesh_obj (FILE *f, const TgMesh *m, TgError *err);
int tg__write_mesh_ply (FILE *f, const TgMesh *m, TgError *err);

/* Checks what every writer relies on: arrays present, index count a
 * multiple of 3 and every index below the chunk's vertex count.  The
 * error names the chunk ("chunks[2] (chunk_x1_z0_lod0): index 7 ..."). */
int tg__mesh_check (const TgMesh *m, const char *format, TgError *err);

#endif
