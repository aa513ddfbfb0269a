/* The `mesh` wire type: indexed triangles in metres in the world frame
 * (x east, y up, z north: Unity's left-handed frame, the one the image
 * convention implies), counter-clockwise front faces seen from outside,
 * float3 positions and normals, float2 UVs, uint32 indices.  Writers of
 * right-handed formats (glTF, OBJ, PLY) store z = -north and reverse the
 * winding, so files are not mirrored against the heightmaps.  A mesh is one
 * or more chunks (terrain tiles, LOD levels); exporters write one node per
 * chunk. */
#ifndef TGRAPH_MESH_H
#define TGRAPH_MESH_H

#include <stddef.h>
#include <stdint.h>

#include "value.h"

struct TgImage; /* node.h */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct
{
  char *name;          /* "chunk_3_2_lod0"; owned */
  int lod;             /* 0 = full resolution */
  int n_vertices;
  float *positions;    /* 3 * n_vertices */
  float *normals;      /* 3 * n_vertices, unit length */
  float *uvs;          /* 2 * n_vertices, or NULL */
  int64_t n_indices;   /* 3 * triangles */
  uint32_t *indices;
} TgMeshChunk;

typedef struct
{
  int n_chunks;
  TgMeshChunk *chunks;
} TgMesh;

/* A mesh with N_CHUNKS empty chunks.  Caller frees with tg_mesh_free. */
TgMesh *tg_mesh_new (int n_chunks);
void tg_mesh_free (TgMesh *m);
/* Allocates the arrays of chunk C (uninitialised); WITH_UVS adds uvs.
 * Returns 0 or TG_ENOMEM. */
int tg_mesh_chunk_alloc (TgMeshChunk *c, int n_vertices, int64_t n_indices, int with_uvs);
int tg_mesh_chunk_set_name (TgMeshChunk *c, const char *name);
size_t tg_mesh_bytes (const TgMesh *m);

/* How a mesh writer lays out its file (io.h).  Zeroed options are the
 * defaults: +Y up, every level of detail. */
typedef enum
{
  TG_MESH_UP_Y = 0, /* right-handed, +Y up, north -Z (glTF; OBJ/PLY tools' default) */
  TG_MESH_UP_Z = 1, /* right-handed, +Z up, north +Y (Blender, Houdini's Z-up) */
} TgMeshUp;

/* How a .glb stores its vertices: floats; KHR_mesh_quantization
 * (positions uint16 on one grid for the whole mesh, with the nodes'
 * scale and translation, normals int8, UVs uint16); or that quantized
 * data compressed with EXT_meshopt_compression. */
typedef enum
{
  TG_MESH_COMPRESS_NONE = 0,
  TG_MESH_COMPRESS_QUANTIZE = 1,
  TG_MESH_COMPRESS_MESHOPT = 2,
} TgMeshCompress;

typedef struct
{
  TgMeshUp up;          /* OBJ and PLY; glTF is always +Y up */
  int first_lod_only;   /* every format: only the chunks of lod 0 */
  TgMeshCompress compress; /* glb */
  /* The colour map over the whole world (rows north first, borrowed), or
   * NULL: glb embeds it as a PNG and the material's baseColorTexture;
   * the "mtl" writer names TEXTURE_FILE instead. */
  const struct TgImage *texture;
  /* File names beside the mesh file, or NULL: the OBJ's material library
   * (mtllib/usemtl), the texture a .mtl (map_Kd) or a PLY
   * (comment TextureFile) names. */
  const char *material_file;
  const char *texture_file;
} TgMeshWriteOptions;

/* A value owning M (TG_TYPE_MESH); NULL on allocation failure (M is freed). */
TgValue *tg_value_new_mesh (TgMesh *m);
/* The mesh of a TG_TYPE_MESH value (borrowed). */
const TgMesh *tg_value_mesh (const TgValue *v);

#ifdef __cplusplus
}
#endif
#endif
