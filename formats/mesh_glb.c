/* The "glb" mesh writer (glTF 2.0 binary) and the mesh checks all mesh
 * writers share.
 *
 * Each chunk with triangles becomes one mesh with one primitive
 * (POSITION with min/max, NORMAL, TEXCOORD_0 when the chunk has UVs,
 * uint32 indices) and one node named after the chunk, all sharing one
 * plain material.  Chunks without triangles are left out.  Our mesh
 * conventions are glTF's (metres, +Y up, counter-clockwise front faces,
 * UV v = 0 at the image's top row), so the data goes out unchanged and
 * the views point straight into the mesh: nothing is copied.
 */
#include <math.h>
#include <stdlib.h>

#include "glb-builder.h"
#include "mesh-writers.h"

static const char *
chunk_label (const TgMeshChunk *c)
{
  return c->name ? c->name : "unnamed";
}

int
tg__mesh_check (const TgMesh *m, const char *format, TgError *err)
{
  if (!m)
    return tg_error_set (err, TG_EINVAL, "", "%s: no mesh", format);
  for (int ci = 0; ci < m->n_chunks; ci++)
    {
      const TgMeshChunk *c = &m->chunks[ci];
      char where[64];

      snprintf (where, sizeof where, "chunks[%d]", ci);
      if (c->n_vertices < 0 || c->n_indices < 0 || c->n_indices % 3 != 0)
        return tg_error_set (err, TG_EINVAL, where,
                             "%s: chunk %s has %lld indices, not a whole number of triangles",
                             format, chunk_label (c), (long long) c->n_indices);
      if (c->n_indices == 0)
        continue;
      if (!c->positions || !c->normals || !c->indices)
        return tg_error_set (err, TG_EINVAL, where, "%s: chunk %s lacks positions or normals",
                             format, chunk_label (c));
      for (int64_t i = 0; i < c->n_indices; i++)
        if (c->indices[i] >= (uint32_t) c->n_vertices)
          return tg_error_set (err, TG_EINVAL, where,
                               "%s: chunk %s: index %lld is %u, past its %d vertices", format,
                               chunk_label (c), (long long) i, c->indices[i], c->n_vertices);
      for (int64_t i = 0; i < 3 * (int64_t) c->n_vertices; i++)
        if (!isfinite (c->positions[i]) || !isfinite (c->normals[i]))
          return tg_error_set (err, TG_EINVAL, where,
                               "%s: chunk %s: vertex %lld has a non-finite position or normal",
                               format, chunk_label (c), (long long) (i / 3));
    }
  return 0;
}

int
tg__write_mesh_glb (FILE *f, const TgMesh *m, TgError *err)
{
  static const float grey[4] = { 0.8f, 0.8f, 0.8f, 1.0f };
  int rc = tg__mesh_check (m, "glb", err);
  TgGlb *g;
  int material = -1;

  if (rc < 0)
    return rc;
  if (!(g = tg_glb_new (NULL)))
    return tg_error_set (err, TG_ENOMEM, "", "glb: out of memory");

  for (int ci = 0; ci < m->n_chunks; ci++)
    {
      const TgMeshChunk *c = &m->chunks[ci];
      TgGlbAttribute attrs[3];
      int n_attrs = 0, mesh, indices;
      char name[32];

      if (c->n_indices == 0)
        continue;
      if (material < 0)
        material = tg_glb_add_material (g, "terrane", grey, 0.0f, 1.0f, false);
      if (!c->name)
        snprintf (name, sizeof name, "chunk_%d", ci);

      attrs[n_attrs++] = (TgGlbAttribute) {
        "POSITION", tg_glb_add_floats (g, c->positions, c->n_vertices, 3, TG_GLB_ARRAY_BUFFER, true)
      };
      attrs[n_attrs++] = (TgGlbAttribute) {
        "NORMAL", tg_glb_add_floats (g, c->normals, c->n_vertices, 3, TG_GLB_ARRAY_BUFFER, false)
      };
      if (c->uvs)
        attrs[n_attrs++] = (TgGlbAttribute) {
          "TEXCOORD_0", tg_glb_add_floats (g, c->uvs, c->n_vertices, 2, TG_GLB_ARRAY_BUFFER, false)
        };
      indices = tg_glb_add_indices (g, c->indices, c->n_indices);
      mesh = tg_glb_add_mesh (g, c->name ? c->name : name);
      rc = tg_glb_add_primitive (g, mesh, attrs, n_attrs, indices, material, TG_GLB_TRIANGLES);
      if (rc >= 0)
        rc = tg_glb_add_node (g, c->name ? c->name : name, mesh);
      if (rc < 0)
        {
          tg_glb_free (g);
          return tg_error_set (err, rc, "", "glb: could not add chunk %s: %s", chunk_label (c),
                               tg_strerror (rc));
        }
    }

  rc = tg_glb_write (g, f, err);
  tg_glb_free (g);
  return rc;
}
