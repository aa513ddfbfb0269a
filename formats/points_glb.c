/* The "glb" instance-list writer: glTF 2.0 binary with
 * EXT_mesh_gpu_instancing (Khronos vendor extension).
 *
 * A root node "instances" has one child per prototype that has
 * instances, named after it, showing the prototype's mesh (from a .glb
 * given to export.points) or the marker cone (points-writers.h), its
 * origin at its base, in the prototype's colour.  The child carries the extension's
 * TRANSLATION (VEC3), ROTATION (VEC4 unit quaternions) and SCALE (VEC3)
 * float accessors, one element per instance in the list's order.  The
 * extension is used but not required, so a viewer without it still opens
 * the file (and draws one marker per prototype at the origin).
 *
 * glTF is right-handed: translations, rotations and meshes go out in the
 * file's frame (handedness.h; z = -north, quaternion (-x, -y, z, w),
 * triangles reversed), scales as they are, so the instances are not
 * mirrored relative to the terrain's heightmap or .glb.
 *
 * The container comes from the shared builder (glb-builder.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "glb-builder.h"
#include "handedness.h"
#include "mesh-writers.h"
#include "points-writers.h"

/* Adds the chunks of M (world frame) as primitives of MESH with MATERIAL. */
static int
add_proto_mesh (TgGlb *g, int mesh, const TgMesh *m, int material)
{
  for (int ci = 0; ci < m->n_chunks; ci++)
    {
      const TgMeshChunk *ch = &m->chunks[ci];
      TgGlbAttribute attrs[3];
      int na, ind;
      if (ch->n_vertices < 1 || ch->n_indices < 3)
        continue;
      if ((na = tg__glb_add_chunk (g, ch, attrs, &ind)) < 0)
        return na;
      if (tg_glb_add_primitive (g, mesh, attrs, na, ind, material, TG_GLB_TRIANGLES) < 0)
        return TG_ENOMEM;
    }
  return 0;
}

int
tg__write_points_glb (FILE *f, const TgPoints *p, const TgMesh *const *meshes,
                      const TgPointsWriteOptions *opt, TgError *err)
{
  TgGlb *g = NULL;
  TgPointsCone cone;
  TgGlbAttribute cone_attrs[3];
  int cone_n = 0, cone_ind = -1;
  int64_t *start = NULL, *fill = NULL;
  float *t = NULL, *r = NULL, *s = NULL;
  int rc, root;

  (void) opt; /* the format fixes its frame (handedness.h) */
  if ((rc = tg__points_check (p, "glb", err)) < 0)
    return rc;
  for (int k = 0; meshes && k < p->n_protos; k++)
    if (meshes[k] && (rc = tg__mesh_check (f, meshes[k], "glb", err)) < 0)
      return rc;

  /* Instances grouped by prototype, each group in list order. */
  start = calloc ((size_t) p->n_protos + 1, sizeof (int64_t));
  fill = calloc ((size_t) p->n_protos + 1, sizeof (int64_t));
  t = malloc (sizeof (float) * 3 * (size_t) (p->n ? p->n : 1));
  r = malloc (sizeof (float) * 4 * (size_t) (p->n ? p->n : 1));
  s = malloc (sizeof (float) * 3 * (size_t) (p->n ? p->n : 1));
  g = tg_glb_new (NULL);
  if (!start || !fill || !t || !r || !s || !g)
    {
      rc = tg_error_set (err, TG_ENOMEM, NULL, "glb: out of memory");
      goto out;
    }
  for (int64_t i = 0; i < p->n; i++)
    start[p->proto[i] + 1]++;
  for (int k = 0; k < p->n_protos; k++)
    start[k + 1] += start[k];
  memcpy (fill, start, sizeof (int64_t) * (size_t) p->n_protos);
  for (int64_t i = 0; i < p->n; i++)
    {
      int64_t j = fill[p->proto[i]]++;
      const float *q = p->rotation + 4 * i;
      double len = sqrt ((double) q[0] * q[0] + (double) q[1] * q[1] + (double) q[2] * q[2]
                         + (double) q[3] * q[3]);
      tg__hand_vec3 (t + 3 * j, p->position + 3 * i);
      memcpy (s + 3 * j, p->scale + 3 * i, sizeof (float) * 3);
      /* The extension wants unit quaternions; a zero one means no turn. */
      for (int c = 0; c < 4; c++)
        r[4 * j + c] = len > 0.0 ? (float) ((double) q[c] / len) : (c == 3 ? 1.0f : 0.0f);
      tg__hand_quat (r + 4 * j, r + 4 * j);
    }

  root = tg_glb_add_node (g, "instances", -1);
  for (int k = 0; k < p->n_protos; k++)
    {
      int64_t n = start[k + 1] - start[k];
      float rgba[4] = { 0, 0, 0, 1 };
      int material, mesh, node, at, ar, as;
      if (n == 0)
        continue;
      tg__points_proto_color (k, rgba);
      material = tg_glb_add_material (g, p->proto_names[k], rgba, 0.0f, 0.8f, false);
      mesh = tg_glb_add_mesh (g, p->proto_names[k]);
      if (material < 0 || mesh < 0)
        {
          rc = TG_ENOMEM;
          break;
        }
      if (meshes && meshes[k])
        rc = add_proto_mesh (g, mesh, meshes[k], material);
      else
        {
          /* One cone (built in world coordinates like any mesh) for all. */
          if (cone_n == 0)
            {
              tg__points_cone_init (&cone);
              cone_n = tg__glb_add_chunk (g, &cone.chunk, cone_attrs, &cone_ind);
            }
          rc = cone_n < 0 ? cone_n
                          : tg_glb_add_primitive (g, mesh, cone_attrs, cone_n, cone_ind,
                                                  material, TG_GLB_TRIANGLES);
        }
      if (rc < 0)
        break;
      at = tg_glb_add_floats (g, t + 3 * start[k], n, 3, TG_GLB_TARGET_NONE, false);
      ar = tg_glb_add_floats (g, r + 4 * start[k], n, 4, TG_GLB_TARGET_NONE, false);
      as = tg_glb_add_floats (g, s + 3 * start[k], n, 3, TG_GLB_TARGET_NONE, false);
      node = tg_glb_add_node (g, p->proto_names[k], mesh);
      if (at < 0 || ar < 0 || as < 0 || node < 0
          || (rc = tg_glb_node_set_instancing (g, node, at, ar, as)) < 0
          || (rc = tg_glb_node_add_child (g, root, node)) < 0)
        {
          rc = rc < 0 ? rc : TG_ENOMEM;
          break;
        }
      rc = 0;
    }
  if (rc < 0)
    {
      rc = tg_error_set (err, rc, NULL, "glb: %s while building the document", tg_strerror (rc));
      goto out;
    }
  rc = tg_glb_write (g, f, err);

out:
  tg_glb_free (g);
  free (start);
  free (fill);
  free (t);
  free (r);
  free (s);
  return rc;
}
