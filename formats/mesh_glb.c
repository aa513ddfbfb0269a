/* The "glb" mesh writer (glTF 2.0 binary) and the mesh checks all mesh
 * writers share.
 *
 * Each chunk with triangles becomes one mesh with one primitive
 * (POSITION with min/max, NORMAL, TEXCOORD_0 when the chunk has UVs,
 * indices as uint16 when the chunk has at most 65535 vertices, so that no
 * index is the restart value 65535, uint32 otherwise) and one node named after the chunk, all sharing one
 * plain material.  Chunks without triangles are left out.  Levels of
 * detail of one tile ("chunk_x1_z2_lod0", "..._lod1", ...) are grouped
 * with MSFT_lod: the scene shows the full-resolution chunks, each naming
 * its coarser levels and the screen coverage at which each takes over
 * (a quarter as much for every halving), so a reader without the
 * extension draws each tile once instead of its levels on top of one
 * another.  glTF is
 * right-handed, so positions and normals go out with z = -north and each
 * triangle's order reversed (handedness.h): north is -Z, the file is not
 * mirrored.  UVs are unchanged: glTF puts v = 0 at the image's top row,
 * as our image convention does.  The views point straight into the mesh
 * and are converted as the file is written: nothing is copied.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "glb-builder.h"
#include "handedness.h"
#include "mesh-writers.h"

static const char *
chunk_label (const TgMeshChunk *c)
{
  return c->name ? c->name : "unnamed";
}

/* Whether the build writing F was cancelled, looked at once every
 * CANCEL_EVERY items of a loop over a mesh (about a millisecond). */
#define CANCEL_EVERY (1 << 20)

static bool
cancelled_at (FILE *f, int64_t i)
{
  return i % CANCEL_EVERY == 0 && tg_io_stream_cancelled (f);
}

static int
cancelled_error (const char *format, TgError *err)
{
  return tg_error_set (err, TG_ECANCELLED, "", "%s: cancelled", format);
}

int
tg__mesh_check (FILE *f, const TgMesh *m, const char *format, TgError *err)
{
  if (!m)
    return tg_error_set (err, TG_EINVAL, "", "%s: no mesh", format);
  for (int ci = 0; ci < m->n_chunks; ci++)
    {
      const TgMeshChunk *c = &m->chunks[ci];
      char where[64];

      if (tg_io_stream_cancelled (f))
        return cancelled_error (format, err);
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
        if (cancelled_at (f, i + 1))
          return cancelled_error (format, err);
        else if (c->indices[i] >= (uint32_t) c->n_vertices)
          return tg_error_set (err, TG_EINVAL, where,
                               "%s: chunk %s: index %lld is %u, past its %d vertices", format,
                               chunk_label (c), (long long) i, c->indices[i], c->n_vertices);
      for (int64_t i = 0; i < 3 * (int64_t) c->n_vertices; i++)
        if (cancelled_at (f, i + 1))
          return cancelled_error (format, err);
        else if (!isfinite (c->positions[i]) || !isfinite (c->normals[i]))
          return tg_error_set (err, TG_EINVAL, where,
                               "%s: chunk %s: vertex %lld has a non-finite position or normal",
                               format, chunk_label (c), (long long) (i / 3));
    }
  return 0;
}

/* COUNT float vec3s of DATA (world) as an accessor in the file's frame;
 * WITH_BOUNDS adds min/max of the converted floats, exactly as stored. */
static int
add_vec3s (TgGlb *g, const float *data, int64_t count, bool with_bounds)
{
  double lo[3], hi[3];
  int view;

  if (with_bounds)
    {
      float flo[3], fhi[3], v[3];

      tg__hand_vec3 (flo, data);
      memcpy (fhi, flo, sizeof fhi);
      for (int64_t i = 1; i < count; i++)
        {
          tg__hand_vec3 (v, data + 3 * i);
          for (int c = 0; c < 3; c++)
            {
              flo[c] = v[c] < flo[c] ? v[c] : flo[c];
              fhi[c] = v[c] > fhi[c] ? v[c] : fhi[c];
            }
        }
      for (int c = 0; c < 3; c++)
        {
          lo[c] = flo[c];
          hi[c] = fhi[c];
        }
    }
  view = tg_glb_add_view_encoded (g, data, (size_t) count * 12, TG_GLB_ARRAY_BUFFER, 12,
                                  tg__hand_vec3s);
  if (view < 0)
    return view;
  return tg_glb_add_accessor (g, view, 0, TG_GLB_FLOAT, "VEC3", count, false,
                              with_bounds ? lo : NULL, with_bounds ? hi : NULL);
}

int
tg__glb_add_chunk (TgGlb *g, const TgMeshChunk *c, TgGlbAttribute attrs[3], int *indices)
{
  int n = 0, view;
  bool short16;

  if (c->n_vertices < 1 || c->n_indices < 3)
    return TG_EINVAL;
  attrs[n++] = (TgGlbAttribute) { "POSITION", add_vec3s (g, c->positions, c->n_vertices, true) };
  attrs[n++] = (TgGlbAttribute) { "NORMAL", add_vec3s (g, c->normals, c->n_vertices, false) };
  if (c->uvs)
    attrs[n++] = (TgGlbAttribute) {
      "TEXCOORD_0", tg_glb_add_floats (g, c->uvs, c->n_vertices, 2, TG_GLB_ARRAY_BUFFER, false)
    };
  /* Half the index bytes for the chunks that fit in 16 bits. */
  short16 = c->n_vertices <= TG_GLB_MAX_SHORT_VERTICES;
  view = short16 ? tg_glb_add_view_converted (g, c->indices, (size_t) c->n_indices * 2,
                                              TG_GLB_ELEMENT_ARRAY_BUFFER, 6, 12, tg__hand_tris16)
                 : tg_glb_add_view_encoded (g, c->indices, (size_t) c->n_indices * 4,
                                            TG_GLB_ELEMENT_ARRAY_BUFFER, 12, tg__hand_tris);
  *indices = view < 0 ? view
                      : tg_glb_add_accessor (g, view, 0,
                                             short16 ? TG_GLB_UNSIGNED_SHORT : TG_GLB_UNSIGNED_INT,
                                             "SCALAR", c->n_indices, false, NULL, NULL);
  for (int a = 0; a < n; a++)
    if (attrs[a].accessor < 0)
      return attrs[a].accessor;
  return *indices < 0 ? *indices : n;
}

/* The length of NAME without a trailing "_lod<digits>": chunks with the
 * same stem are levels of detail of one tile. */
static size_t
lod_stem_len (const char *name)
{
  size_t n = strlen (name), d = n;

  while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
    d--;
  if (d < n && d >= 4 && strncmp (name + d - 4, "_lod", 4) == 0)
    return d - 4;
  return n;
}

/* Groups each full-resolution chunk that has a node with its coarser
 * levels (one per level, the first chunk found, by increasing lod).
 * NODE_OF gives each chunk's node or -1.  Looks at all chunks for each
 * (16M pairs for 4096 chunks): TG_ECANCELLED once the build writing F is
 * cancelled. */
static int
group_lods (FILE *f, TgGlb *g, const TgMesh *m, const int *node_of)
{
  size_t *stem;
  int *lods, *lod_of, rc = 0;
  float *coverage;

  if (m->n_chunks < 2)
    return 0;
  stem = malloc (sizeof (size_t) * (size_t) m->n_chunks);
  lods = malloc (sizeof (int) * (size_t) m->n_chunks);
  lod_of = malloc (sizeof (int) * (size_t) m->n_chunks);
  coverage = malloc (sizeof (float) * ((size_t) m->n_chunks + 1));
  if (!stem || !lods || !lod_of || !coverage)
    rc = TG_ENOMEM;
  for (int ci = 0; rc == 0 && ci < m->n_chunks; ci++)
    stem[ci] = m->chunks[ci].name ? lod_stem_len (m->chunks[ci].name) : 0;
  for (int ci = 0; rc == 0 && ci < m->n_chunks; ci++)
    {
      const TgMeshChunk *c = &m->chunks[ci];
      int n = 0;

      if (tg_io_stream_cancelled (f))
        {
          rc = TG_ECANCELLED;
          break;
        }
      if (c->lod != 0 || node_of[ci] < 0 || !c->name)
        continue;
      /* The coarser chunks of this stem, kept sorted by lod (stable:
       * of two of one level, the first found comes first). */
      for (int cj = 0; cj < m->n_chunks; cj++)
        {
          const TgMeshChunk *d = &m->chunks[cj];
          int k;
          if (node_of[cj] < 0 || d->lod <= 0 || !d->name || stem[cj] != stem[ci]
              || strncmp (d->name, c->name, stem[ci]) != 0)
            continue;
          for (k = n; k > 0 && lod_of[k - 1] > d->lod; k--)
            {
              lods[k] = lods[k - 1];
              lod_of[k] = lod_of[k - 1];
            }
          lods[k] = node_of[cj];
          lod_of[k] = d->lod;
          n++;
        }
      /* One node per level. */
      {
        int kept = 0;
        for (int k = 0; k < n; k++)
          if (kept == 0 || lod_of[k] != lod_of[kept - 1])
            {
              lods[kept] = lods[k];
              lod_of[kept] = lod_of[k];
              kept++;
            }
        n = kept;
      }
      if (n == 0)
        continue;
      for (int k = 0; k <= n; k++)
        coverage[k] = 0.25f / (float) (1 << (2 * (k < 12 ? k : 12)));
      rc = tg_glb_node_set_lods (g, node_of[ci], lods, n, coverage);
    }
  free (stem);
  free (lods);
  free (lod_of);
  free (coverage);
  return rc;
}

int
tg__write_mesh_glb (FILE *f, const TgMesh *m, const TgMeshWriteOptions *opt, TgError *err)
{
  static const float grey[4] = { 0.8f, 0.8f, 0.8f, 1.0f };
  int rc = tg__mesh_check (f, m, "glb", err);
  TgGlb *g;
  int material = -1, *node_of;

  /* glTF is +Y up by definition, and MSFT_lod keeps the levels apart. */
  (void) opt;
  if (rc < 0)
    return rc;
  g = tg_glb_new (NULL);
  node_of = malloc (sizeof (int) * (size_t) (m->n_chunks > 0 ? m->n_chunks : 1));
  if (!g || !node_of)
    {
      tg_glb_free (g);
      free (node_of);
      return tg_error_set (err, TG_ENOMEM, "", "glb: out of memory");
    }

  for (int ci = 0; ci < m->n_chunks; ci++)
    {
      const TgMeshChunk *c = &m->chunks[ci];
      TgGlbAttribute attrs[3];
      int n_attrs = 0, mesh, indices;
      char name[32];

      node_of[ci] = -1;
      if (c->n_indices == 0)
        continue;
      /* Each chunk's bounds are taken before the first byte is written. */
      if (tg_io_stream_cancelled (f))
        {
          tg_glb_free (g);
          free (node_of);
          return cancelled_error ("glb", err);
        }
      if (material < 0)
        material = tg_glb_add_material (g, "terrane", grey, 0.0f, 1.0f, false);
      if (!c->name)
        snprintf (name, sizeof name, "chunk_%d", ci);

      n_attrs = tg__glb_add_chunk (g, c, attrs, &indices);
      mesh = tg_glb_add_mesh (g, c->name ? c->name : name);
      rc = n_attrs < 0 ? n_attrs
                       : tg_glb_add_primitive (g, mesh, attrs, n_attrs, indices, material,
                                               TG_GLB_TRIANGLES);
      if (rc >= 0)
        rc = node_of[ci] = tg_glb_add_node (g, c->name ? c->name : name, mesh);
      if (rc < 0)
        {
          tg_glb_free (g);
          free (node_of);
          return tg_error_set (err, rc, "", "glb: could not add chunk %s: %s", chunk_label (c),
                               tg_strerror (rc));
        }
    }

  rc = group_lods (f, g, m, node_of);
  free (node_of);
  if (rc == TG_ECANCELLED)
    {
      tg_glb_free (g);
      return cancelled_error ("glb", err);
    }
  if (rc < 0)
    {
      tg_glb_free (g);
      return tg_error_set (err, rc, "", "glb: could not group levels of detail: %s",
                           tg_strerror (rc));
    }
  rc = tg_glb_write (g, f, err);
  tg_glb_free (g);
  return rc;
}
