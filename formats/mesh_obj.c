/* The "obj" mesh writer (Wavefront OBJ text).
 *
 * One `o` group per chunk with triangles, named after the chunk; `v`,
 * `vn`, `vt` lines and `f v/vt/vn` faces with 1-based indices that run on
 * across chunks, as OBJ numbers vertices file-wide.  Numbers are the
 * shortest text that reads back as the same float, always with a '.'
 * whatever the locale.  OBJ's texture v axis points up (v = 0 is the
 * image's bottom row), so v is written as 1 - v of our image convention:
 * the same image lands the same way as in the .glb.  OBJ tools take the
 * file as right-handed, +Y up (Blender's default import: forward -Z), so
 * positions and normals go out with z = -north and faces reversed
 * (handedness.h), as in the .glb: north is -Z, nothing is mirrored.
 * With up = z the file is right-handed +Z up (x east, y north), the
 * frame of Blender and of Houdini's Z-up scenes.  With the first level
 * only, chunks of lod > 0 are left out: OBJ has no levels of detail, and
 * a reader would show them all on top of one another.  With a material
 * file the OBJ names it (mtllib) and its one material, "terrane", in
 * every group (usemtl); the "mtl" writer here writes that file, naming
 * the colour map beside it (map_Kd).
 */
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "mesh-writers.h"
#include "tgformats-private.h"

/* The shortest of %.6g..%.9g that reads back as V (%.9g always does). */
static int
format_float (char *out, size_t size, float v)
{
  int n = 0;

  for (int prec = 6; prec <= 9; prec++)
    {
      n = snprintf (out, size, "%.*g", prec, (double) v);
      if (strtof (out, NULL) == v)
        break;
    }
  return n;
}

static void
put_floats (FILE *f, const char *tag, const float *v, int n)
{
  char num[32];

  fputs (tag, f);
  for (int i = 0; i < n; i++)
    {
      fputc (' ', f);
      format_float (num, sizeof num, v[i]);
      fputs (num, f);
    }
  fputc ('\n', f);
}

int
tg__write_mesh_obj (FILE *f, const TgMesh *m, const TgMeshWriteOptions *opt, TgError *err)
{
  int rc = tg__mesh_check (f, m, "obj", err);
  locale_t c_locale, old;
  uint64_t base = 1, vt_base = 1; /* OBJ numbers v and vt separately */

  if (rc < 0)
    return rc;
  /* The GUI runs under the user's locale; OBJ wants '.' decimals. */
  c_locale = newlocale (LC_NUMERIC_MASK, "C", (locale_t) 0);
  if (!c_locale)
    return tg_error_set (err, TG_ENOMEM, "", "obj: no C locale");
  old = uselocale (c_locale);

  fprintf (f, "# Terrane %s\n", TG_VERSION_STRING);
  if (opt && opt->material_file)
    fprintf (f, "mtllib %s\n", opt->material_file);
  for (int ci = 0; ci < m->n_chunks && !ferror (f); ci++)
    {
      const TgMeshChunk *c = &m->chunks[ci];

      if (!tg__mesh_chunk_wanted (c, opt))
        continue;
      if (c->name)
        fprintf (f, "o %s\n", c->name);
      else
        fprintf (f, "o chunk_%d\n", ci);
      if (opt && opt->material_file)
        fputs ("usemtl terrane\n", f);
      for (int i = 0; i < c->n_vertices && !tg__write_failed (f, i); i++)
        {
          float v[3];
          tg__mesh_file_vec3 (v, c->positions + 3 * i, opt);
          put_floats (f, "v", v, 3);
        }
      if (c->uvs)
        for (int i = 0; i < c->n_vertices && !tg__write_failed (f, i); i++)
          {
            float uv[2] = { c->uvs[2 * i], 1.0f - c->uvs[2 * i + 1] };
            put_floats (f, "vt", uv, 2);
          }
      for (int i = 0; i < c->n_vertices && !tg__write_failed (f, i); i++)
        {
          float n[3];
          tg__mesh_file_vec3 (n, c->normals + 3 * i, opt);
          put_floats (f, "vn", n, 3);
        }
      for (int64_t t = 0; t < c->n_indices && !tg__write_failed (f, t / 3); t += 3)
        {
          uint32_t tri[3];
          tg__hand_tri (tri, c->indices + t);
          uint64_t a = base + tri[0], b = base + tri[1], d = base + tri[2];
          if (c->uvs)
            {
              uint64_t ta = vt_base + tri[0], tb = vt_base + tri[1], td = vt_base + tri[2];
              fprintf (f, "f %llu/%llu/%llu %llu/%llu/%llu %llu/%llu/%llu\n",
                       (unsigned long long) a, (unsigned long long) ta, (unsigned long long) a,
                       (unsigned long long) b, (unsigned long long) tb, (unsigned long long) b,
                       (unsigned long long) d, (unsigned long long) td, (unsigned long long) d);
            }
          else
            fprintf (f, "f %llu//%llu %llu//%llu %llu//%llu\n", (unsigned long long) a,
                     (unsigned long long) a, (unsigned long long) b, (unsigned long long) b,
                     (unsigned long long) d, (unsigned long long) d);
        }
      base += (uint64_t) c->n_vertices;
      if (c->uvs)
        vt_base += (uint64_t) c->n_vertices;
    }

  uselocale (old);
  freelocale (c_locale);
  if (ferror (f))
    return tg_error_set (err, TG_EIO, "", "obj: write failed");
  return 0;
}

int
tg__write_mesh_mtl (FILE *f, const TgMesh *m, const TgMeshWriteOptions *opt, TgError *err)
{
  (void) m;
  if (!opt || !opt->texture_file)
    return tg_error_set (err, TG_EINVAL, "", "mtl: no texture file to name");
  /* White diffuse times the map, no specular, opaque: the colour map as
   * it is (illum 1: diffuse only). */
  fprintf (f, "# Terrane %s\nnewmtl terrane\nKa 0 0 0\nKd 1 1 1\nKs 0 0 0\nd 1\n"
              "illum 1\nmap_Kd %s\n", TG_VERSION_STRING, opt->texture_file);
  if (ferror (f))
    return tg_error_set (err, TG_EIO, "", "mtl: write failed");
  return 0;
}
