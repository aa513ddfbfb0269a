/* A small builder for glTF 2.0 binary containers (.glb), shared by the
 * mesh writer and the instance-list writers.
 *
 * The caller adds binary blocks (buffer views), accessors that describe
 * them, materials, meshes with primitives, and nodes; tg_glb_write then
 * emits the 12-byte header, the JSON chunk (padded with spaces) and the
 * BIN chunk (padded with zeros), every view 4-byte aligned, all in one
 * buffer.  The JSON text comes from our own emitter, so the same calls
 * give the same bytes on every machine.
 *
 * Conventions (glTF 2.0): metres, +Y up, right-handed, counter-clockwise
 * front faces.  Every add function returns the new object's index (>= 0)
 * or a negative TG_E* code; after a failed allocation the builder
 * remembers it and tg_glb_write returns TG_ENOMEM, so callers may check
 * only at the end.  Empty top-level arrays are left out (the spec wants
 * at least one item), and a default scene lists every node that is no
 * other node's child (nor another's level of detail), in the order they
 * were added.
 *
 * Data passed to tg_glb_add_view is BORROWED: it must stay valid until
 * tg_glb_write returns (the writer streams it straight to the file, so a
 * large terrain is not copied).  tg_glb_add_view_copy copies instead.
 *
 * Internal to formats/ (not installed).
 */
#ifndef TG_GLB_BUILDER_H
#define TG_GLB_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include <tgraph/tgraph.h>

/* accessor.componentType */
enum
{
  TG_GLB_BYTE = 5120,
  TG_GLB_UNSIGNED_BYTE = 5121,
  TG_GLB_SHORT = 5122,
  TG_GLB_UNSIGNED_SHORT = 5123,
  TG_GLB_UNSIGNED_INT = 5125,
  TG_GLB_FLOAT = 5126,
};

/* bufferView.target: vertex attributes, indices, or none (instance
 * attributes of EXT_mesh_gpu_instancing, animation data). */
enum
{
  TG_GLB_TARGET_NONE = 0,
  TG_GLB_ARRAY_BUFFER = 34962,
  TG_GLB_ELEMENT_ARRAY_BUFFER = 34963,
};

/* mesh.primitive.mode */
enum
{
  TG_GLB_POINTS = 0,
  TG_GLB_LINES = 1,
  TG_GLB_TRIANGLES = 4,
};

typedef struct TgGlb TgGlb;

/* A new, empty document.  GENERATOR goes to asset.generator; NULL gives
 * "Terrane <version>".  Free with tg_glb_free. */
TgGlb *tg_glb_new (const char *generator);
void tg_glb_free (TgGlb *g);

/* --- binary data and accessors ------------------------------------------- */

/* A buffer view of BYTES bytes at DATA (borrowed until tg_glb_write
 * returns), placed at the next 4-byte boundary of the BIN chunk.  TARGET
 * is one of TG_GLB_ARRAY_BUFFER, TG_GLB_ELEMENT_ARRAY_BUFFER or
 * TG_GLB_TARGET_NONE.  Returns the view index. */
int tg_glb_add_view (TgGlb *g, const void *data, size_t bytes, int target);
/* The same, but DATA is copied now. */
int tg_glb_add_view_copy (TgGlb *g, const void *data, size_t bytes, int target);

/* Writes N_BYTES into DST converted from the same number of units at SRC
 * (a change of frame, say); N_BYTES is a whole number of the view's
 * units. */
typedef void (*TgGlbEncode) (void *dst, const void *src, size_t n_bytes);
/* A view like tg_glb_add_view (DATA borrowed) whose bytes go through
 * ENCODE, in blocks of whole UNITs (1..4096 bytes; BYTES a multiple of
 * it), as the file is written: converted data without a copy of it. */
int tg_glb_add_view_encoded (TgGlb *g, const void *data, size_t bytes, int target, size_t unit,
                             TgGlbEncode encode);
/* The same where a unit of DATA is SRC_UNIT bytes and a unit of the file
 * UNIT bytes (narrower indices, say): BYTES is the size in the file. */
int tg_glb_add_view_converted (TgGlb *g, const void *data, size_t bytes, int target, size_t unit,
                               size_t src_unit, TgGlbEncode encode);

/* A view of BYTES bytes at DATA, which the builder now owns (malloc'd;
 * freed with it, also on failure).  STRIDE, a multiple of 4 up to 252,
 * is written as its byteStride (vertex attributes narrower than their
 * alignment: a uint16 VEC3 in 8 bytes); 0 leaves it out. */
int tg_glb_add_view_owned (TgGlb *g, void *data, size_t bytes, int target, size_t stride);

/* EXT_meshopt_compression: how a view's data was compressed. */
enum
{
  TG_GLB_MESHOPT_ATTRIBUTES = 0, /* meshopt_encodeVertexBuffer, STRIDE % 4 == 0 */
  TG_GLB_MESHOPT_TRIANGLES = 1,  /* meshopt_encodeIndexBuffer, STRIDE 2 or 4 */
};

typedef struct
{
  int mode;
  size_t count;  /* elements (vertices, or indices) */
  size_t stride; /* bytes of one decoded element */
} TgGlbMeshopt;

/* A view of COUNT x STRIDE bytes that the file holds only compressed:
 * COMPRESSED (owned, as above) goes into the BIN chunk, the view itself
 * into a placeholder buffer with no data (buffer 1, marked "fallback"),
 * and EXT_meshopt_compression becomes required, as the extension's spec
 * has it for a file without uncompressed data. */
int tg_glb_add_view_meshopt (TgGlb *g, void *compressed, size_t bytes, int target,
                             const TgGlbMeshopt *meshopt);

/* An accessor of COUNT elements of TYPE ("SCALAR", "VEC2", "VEC3",
 * "VEC4", "MAT4") made of COMPONENT_TYPE, tightly packed in VIEW from
 * BYTE_OFFSET.  MIN and MAX (one value per component) may be NULL; they
 * are written as given, so pass the exact values of the data (glTF
 * requires them on POSITION; the validator compares them bit for bit). */
int tg_glb_add_accessor (TgGlb *g, int view, size_t byte_offset, int component_type,
                         const char *type, int64_t count, bool normalized, const double *min,
                         const double *max);

/* Conveniences: one view + one accessor over COUNT float vectors of
 * N_COMPONENTS (1..4; 16 gives MAT4) at DATA (borrowed).  WITH_BOUNDS
 * computes min/max from the data.  TARGET as for tg_glb_add_view. */
int tg_glb_add_floats (TgGlb *g, const float *data, int64_t count, int n_components, int target,
                       bool with_bounds);
/* Triangle (or line) indices as UNSIGNED_INT scalars, target
 * ELEMENT_ARRAY_BUFFER; DATA borrowed. */
int tg_glb_add_indices (TgGlb *g, const uint32_t *data, int64_t count);

/* --- materials, meshes, nodes --------------------------------------------- */

/* A metallic-roughness material; BASE_COLOR is linear RGBA (NULL: white). */
int tg_glb_add_material (TgGlb *g, const char *name, const float base_color[4], float metallic,
                         float roughness, bool double_sided);

/* An image stored in VIEW (TARGET_NONE) of MIME_TYPE ("image/png"). */
int tg_glb_add_image (TgGlb *g, int view, const char *mime_type);
/* A sampler: filters (9728 nearest, 9729 linear, 9987 linear mipmap
 * linear) and wraps (33071 clamp to edge, 10497 repeat). */
int tg_glb_add_sampler (TgGlb *g, int mag_filter, int min_filter, int wrap_s, int wrap_t);
/* A texture of IMAGE through SAMPLER (-1: the reader's default). */
int tg_glb_add_texture (TgGlb *g, int sampler, int image);
/* MATERIAL's base colour is TEXTURE (through TEXCOORD_0) times its
 * factor. */
int tg_glb_material_set_base_color_texture (TgGlb *g, int material, int texture);

/* A mesh with no primitives yet; NAME may be NULL. */
int tg_glb_add_mesh (TgGlb *g, const char *name);

typedef struct
{
  const char *name; /* "POSITION", "NORMAL", "TEXCOORD_0", "COLOR_0", "_CUSTOM" */
  int accessor;
} TgGlbAttribute;

/* Adds a primitive to MESH.  INDICES and MATERIAL may be -1 (none); MODE
 * is TG_GLB_TRIANGLES for ordinary geometry.  Returns the primitive's
 * index within the mesh. */
int tg_glb_add_primitive (TgGlb *g, int mesh, const TgGlbAttribute *attributes, int n_attributes,
                          int indices, int material, int mode);

/* A node showing MESH (-1: none); NAME may be NULL. */
int tg_glb_add_node (TgGlb *g, const char *name, int mesh);
/* Translation, rotation (unit quaternion x, y, z, w) and scale of NODE;
 * any may be NULL (left out: identity).  These and material factors are
 * written as the shortest decimals that read back as the same floats. */
int tg_glb_node_set_trs (TgGlb *g, int node, const float translation[3], const float rotation[4],
                         const float scale[3]);
/* Makes CHILD a child of PARENT (and so no longer a root of the scene). */
int tg_glb_node_add_child (TgGlb *g, int parent, int child);

/* --- extensions -------------------------------------------------------------- */

/* Lists NAME in extensionsUsed (and extensionsRequired when REQUIRED);
 * idempotent.  Returns 0. */
int tg_glb_use_extension (TgGlb *g, const char *name, bool required);
/* Sets node.extensions[NAME] = VALUE (ownership of VALUE passes to the
 * builder, also on failure) and marks NAME as used (not required). */
int tg_glb_node_add_extension (TgGlb *g, int node, const char *name, json_object *value);
/* MSFT_lod on NODE: LODS[0..N_LODS) are its lower levels of detail, from
 * the finest, and COVERAGE[0..N_LODS] the screen coverage (0..1) down to
 * which each level, NODE's first, is shown (the node's
 * extras.MSFT_screencoverage).  The LOD nodes leave the scene: a reader
 * that does not know the extension shows NODE alone.  They must be roots
 * with no LODs of their own.  Marks MSFT_lod as used (not required). */
int tg_glb_node_set_lods (TgGlb *g, int node, const int *lods, int n_lods, const float *coverage);
/* EXT_mesh_gpu_instancing on NODE (which must show a mesh): accessors of
 * per-instance TRANSLATION (float VEC3), ROTATION (float VEC4, unit
 * quaternions) and SCALE (float VEC3), each -1 to leave it out, with the
 * same count.  Their views should have TG_GLB_TARGET_NONE. */
int tg_glb_node_set_instancing (TgGlb *g, int node, int translation, int rotation, int scale);

/* The JSON object of an entry, for anything the functions above do not
 * cover (extras, other extensions).  Borrowed; NULL for a bad index.
 * KIND is "nodes", "meshes", "materials", "accessors" or "bufferViews". */
json_object *tg_glb_object (TgGlb *g, const char *kind, int index);

/* --- output ------------------------------------------------------------------- */

/* Writes the document to F (not closed).  Fails with TG_ENOMEM after any
 * failed allocation, TG_ERANGE when the file would exceed glTF's 4 GiB,
 * TG_EIO on a write error. */
int tg_glb_write (TgGlb *g, FILE *f, TgError *err);

#endif
