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
 * In chunks (chunk_m > 0, points_chunk.c) the root's children are one
 * node per chunk that holds instances, "chunk_x<cx>_z<cz>" (north-west
 * first), each with one instancing node per prototype found in it,
 * named "chunk_x<cx>_z<cz>_<prototype>" so that names stay unique in
 * importers that flatten them; the chunk's instances of that prototype
 * in list order.  The prototypes' meshes are shared by every chunk.
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
  TgPointsChunks ch = { 0 };
  TgGlbAttribute cone_attrs[3];
  int cone_n = 0, cone_ind = -1;
  int *proto_mesh = NULL, *proto_material = NULL;
  float *t = NULL, *r = NULL, *s = NULL;
  int rc, root, parent = -1;

  /* The format fixes its frame (handedness.h); OPT only chunks. */
  if ((rc = tg__points_check (p, "glb", err)) < 0)
    return rc;
  for (int k = 0; meshes && k < p->n_protos; k++)
    if (meshes[k] && (rc = tg__mesh_check (f, meshes[k], "glb", err)) < 0)
      return rc;
  if ((rc = tg__points_chunks_init (&ch, p, opt, true, "glb", err)) < 0)
    return rc;

  /* Instances grouped by chunk and prototype, each group in list order. */
  proto_mesh = malloc (sizeof (int) * (size_t) (p->n_protos ? p->n_protos : 1));
  proto_material = malloc (sizeof (int) * (size_t) (p->n_protos ? p->n_protos : 1));
  t = malloc (sizeof (float) * 3 * (size_t) (p->n ? p->n : 1));
  r = malloc (sizeof (float) * 4 * (size_t) (p->n ? p->n : 1));
  s = malloc (sizeof (float) * 3 * (size_t) (p->n ? p->n : 1));
  g = tg_glb_new (NULL);
  if (!proto_mesh || !proto_material || !t || !r || !s || !g)
    {
      rc = tg_error_set (err, TG_ENOMEM, NULL, "glb: out of memory");
      goto out;
    }
  for (int k = 0; k < p->n_protos; k++)
    proto_mesh[k] = proto_material[k] = -1;
  for (int64_t j = 0; j < p->n; j++)
    {
      int64_t i = ch.order[j];
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
  rc = 0;
  for (int64_t gi = 0; gi < ch.n_groups; gi++)
    {
      const TgPointsGroup *gr = &ch.groups[gi];
      int k = gr->proto, node, at, ar, as;
      char chunk[48], *name = NULL;

      tg__points_chunk_name (gr->cx, gr->cz, chunk);
      if (!ch.chunked)
        parent = root;
      else if (gi == 0 || gr->cx != gr[-1].cx || gr->cz != gr[-1].cz)
        {
          parent = tg_glb_add_node (g, chunk, -1);
          if (parent < 0 || (rc = tg_glb_node_add_child (g, root, parent)) < 0)
            {
              rc = rc < 0 ? rc : TG_ENOMEM;
              break;
            }
        }
      /* One material and mesh per prototype, made where it first appears. */
      if (proto_mesh[k] < 0)
        {
          float rgba[4] = { 0, 0, 0, 1 };
          tg__points_proto_color (k, rgba);
          proto_material[k] = tg_glb_add_material (g, p->proto_names[k], rgba, 0.0f, 0.8f, false);
          proto_mesh[k] = tg_glb_add_mesh (g, p->proto_names[k]);
          if (proto_material[k] < 0 || proto_mesh[k] < 0)
            {
              rc = TG_ENOMEM;
              break;
            }
          if (meshes && meshes[k])
            rc = add_proto_mesh (g, proto_mesh[k], meshes[k], proto_material[k]);
          else
            {
              /* One cone (built in world coordinates like any mesh) for all. */
              if (cone_n == 0)
                {
                  tg__points_cone_init (&cone);
                  cone_n = tg__glb_add_chunk (g, &cone.chunk, cone_attrs, &cone_ind);
                }
              rc = cone_n < 0 ? cone_n
                              : tg_glb_add_primitive (g, proto_mesh[k], cone_attrs, cone_n,
                                                      cone_ind, proto_material[k],
                                                      TG_GLB_TRIANGLES);
            }
          if (rc < 0)
            break;
        }
      at = tg_glb_add_floats (g, t + 3 * gr->first, gr->count, 3, TG_GLB_TARGET_NONE, false);
      ar = tg_glb_add_floats (g, r + 4 * gr->first, gr->count, 4, TG_GLB_TARGET_NONE, false);
      as = tg_glb_add_floats (g, s + 3 * gr->first, gr->count, 3, TG_GLB_TARGET_NONE, false);
      if (ch.chunked)
        {
          size_t len = strlen (chunk) + strlen (p->proto_names[k]) + 2;
          if (!(name = malloc (len)))
            {
              rc = TG_ENOMEM;
              break;
            }
          snprintf (name, len, "%s_%s", chunk, p->proto_names[k]);
        }
      node = tg_glb_add_node (g, name ? name : p->proto_names[k], proto_mesh[k]);
      free (name);
      name = NULL;
      if (at < 0 || ar < 0 || as < 0 || node < 0
          || (rc = tg_glb_node_set_instancing (g, node, at, ar, as)) < 0
          || (rc = tg_glb_node_add_child (g, parent, node)) < 0)
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
  tg__points_chunks_clear (&ch);
  free (proto_mesh);
  free (proto_material);
  free (t);
  free (r);
  free (s);
  return rc;
}
