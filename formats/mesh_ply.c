/* The "ply" mesh writer (binary little-endian PLY 1.0).
 *
 * PLY holds one vertex list, so the chunks with triangles are
 * concatenated (a `comment chunk NAME first_vertex n_vertices first_face
 * n_faces` line per chunk keeps their boundaries) with their indices
 * offset.  Vertex properties: x y z nx ny nz, and s t when every chunk
 * has UVs (t = 1 - v, as PLY readers take t upwards like OBJ); faces are
 * `list uchar uint vertex_indices`.  Bytes are written little-endian on
 * any host.  PLY tools take the file as right-handed, +Y up, so positions
 * and normals go out with z = -north and faces reversed (handedness.h),
 * as in the .glb: north is -Z, nothing is mirrored.  With up = z the
 * file is right-handed +Z up (x east, y north), which Blender's PLY
 * importer (no axis option) shows standing up; with the first level only,
 * chunks of lod > 0 are left out, as in the OBJ writer.  A colour map
 * beside the file is named in a `comment TextureFile NAME` line, as
 * MeshLab writes and reads it.
 */
#include <stdlib.h>
#include <string.h>

#include "mesh-writers.h"
#include "tgformats-private.h"

#define PLY_BLOCK 4096

static void
put_le32 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) v;
  p[1] = (uint8_t) (v >> 8);
  p[2] = (uint8_t) (v >> 16);
  p[3] = (uint8_t) (v >> 24);
}

static void
put_f32 (uint8_t *p, float v)
{
  uint32_t u;
  memcpy (&u, &v, 4);
  put_le32 (p, u);
}

int
tg__write_mesh_ply (FILE *f, const TgMesh *m, const TgMeshWriteOptions *opt, TgError *err)
{
  int rc = tg__mesh_check (f, m, "ply", err);
  uint64_t n_vertices = 0, n_faces = 0;
  bool uvs = true, any = false;
  uint8_t *buf;

  if (rc < 0)
    return rc;
  for (int ci = 0; ci < m->n_chunks; ci++)
    if (tg__mesh_chunk_wanted (&m->chunks[ci], opt))
      {
        n_vertices += (uint64_t) m->chunks[ci].n_vertices;
        n_faces += (uint64_t) m->chunks[ci].n_indices / 3;
        uvs = uvs && m->chunks[ci].uvs;
        any = true;
      }
  uvs = uvs && any;
  if (n_vertices > UINT32_MAX)
    return tg_error_set (err, TG_ERANGE, "", "ply: %llu vertices exceed 32-bit indices",
                         (unsigned long long) n_vertices);

  fprintf (f, "ply\nformat binary_little_endian 1.0\ncomment Terrane %s\n", TG_VERSION_STRING);
  /* MeshLab's convention for a texture beside the file. */
  if (opt && opt->texture_file)
    fprintf (f, "comment TextureFile %s\n", opt->texture_file);
  {
    uint64_t v0 = 0, f0 = 0;
    for (int ci = 0; ci < m->n_chunks; ci++)
      {
        const TgMeshChunk *c = &m->chunks[ci];
        if (!tg__mesh_chunk_wanted (c, opt))
          continue;
        if (c->name && !strpbrk (c->name, " \r\n"))
          fprintf (f, "comment chunk %s", c->name);
        else
          fprintf (f, "comment chunk chunk_%d", ci);
        fprintf (f, " %llu %d %llu %lld\n", (unsigned long long) v0, c->n_vertices,
                 (unsigned long long) f0, (long long) (c->n_indices / 3));
        v0 += (uint64_t) c->n_vertices;
        f0 += (uint64_t) c->n_indices / 3;
      }
  }
  fprintf (f, "element vertex %llu\n", (unsigned long long) n_vertices);
  fputs ("property float x\nproperty float y\nproperty float z\n"
         "property float nx\nproperty float ny\nproperty float nz\n", f);
  if (uvs)
    fputs ("property float s\nproperty float t\n", f);
  fprintf (f, "element face %llu\n", (unsigned long long) n_faces);
  fputs ("property list uchar uint vertex_indices\nend_header\n", f);

  int stride = uvs ? 32 : 24;
  if (!(buf = malloc ((size_t) PLY_BLOCK * 32)))
    return tg_error_set (err, TG_ENOMEM, "", "ply: out of memory");

  /* Vertices of every chunk, then faces of every chunk (PLY's order). */
  for (int ci = 0; ci < m->n_chunks; ci++)
    {
      const TgMeshChunk *c = &m->chunks[ci];
      if (!tg__mesh_chunk_wanted (c, opt))
        continue;
      for (int i0 = 0; i0 < c->n_vertices && !ferror (f); i0 += PLY_BLOCK)
        {
          int n = c->n_vertices - i0 < PLY_BLOCK ? c->n_vertices - i0 : PLY_BLOCK;
          for (int k = 0; k < n; k++)
            {
              uint8_t *p = buf + (size_t) k * stride;
              int i = i0 + k;
              float pos[3], nrm[3];
              tg__mesh_file_vec3 (pos, c->positions + 3 * i, opt);
              tg__mesh_file_vec3 (nrm, c->normals + 3 * i, opt);
              for (int a = 0; a < 3; a++)
                {
                  put_f32 (p + 4 * a, pos[a]);
                  put_f32 (p + 12 + 4 * a, nrm[a]);
                }
              if (uvs)
                {
                  put_f32 (p + 24, c->uvs[2 * i]);
                  put_f32 (p + 28, 1.0f - c->uvs[2 * i + 1]);
                }
            }
          fwrite (buf, (size_t) stride, (size_t) n, f);
        }
    }
  uint32_t base = 0;
  for (int ci = 0; ci < m->n_chunks; ci++)
    {
      const TgMeshChunk *c = &m->chunks[ci];
      int64_t n_tri = c->n_indices / 3;
      if (!tg__mesh_chunk_wanted (c, opt))
        continue;
      for (int64_t t0 = 0; t0 < n_tri && !ferror (f); t0 += PLY_BLOCK)
        {
          int64_t n = n_tri - t0 < PLY_BLOCK ? n_tri - t0 : PLY_BLOCK;
          for (int64_t k = 0; k < n; k++)
            {
              uint8_t *p = buf + k * 13;
              uint32_t tri[3];
              tg__hand_tri (tri, c->indices + 3 * (t0 + k));
              p[0] = 3;
              for (int a = 0; a < 3; a++)
                put_le32 (p + 1 + 4 * a, base + tri[a]);
            }
          fwrite (buf, 13, (size_t) n, f);
        }
      base += (uint32_t) c->n_vertices;
    }
  free (buf);
  if (ferror (f))
    return tg_error_set (err, TG_EIO, "", "ply: write failed");
  return 0;
}
