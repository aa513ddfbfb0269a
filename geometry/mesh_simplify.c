/* mesh.simplify: fewer triangles within an error bound in metres, with
 * meshoptimizer's edge-collapse simplifier (quadric error metric).
 *
 * This lives in libtggeometry, not in the engine, because the engine is
 * C11 + libm + pthreads only and meshoptimizer is a C++ library (with a
 * C API).  The descriptor registers through the same "tg_nodes" section,
 * so linking the library whole is all it takes.
 *
 * Each chunk is simplified on its own, in parallel.  With `lock_borders`
 * the chunk's outline stays exactly as it was, so neighbouring chunks
 * still share their border vertices bit for bit: triangles lying in one
 * side plane of the chunk's X/Z bounds (the skirts of mesh.heightfield)
 * are kept as they are and left out of the simplification, which makes
 * the terrain's border a topological border that meshoptimizer locks.
 * Collapses only remove vertices, so the survivors keep their positions,
 * normals and UVs unchanged; they are kept in their original order.
 *
 * The error bound.  meshoptimizer's error is a quadric estimate of the
 * distance to the original surface, and on a real terrain it lets the
 * true error run to about twice the target.  So where a chunk is a
 * height surface (every non-vertical triangle faces up, as
 * mesh.heightfield's do) the node measures the true vertical error of
 * the result at every original vertex and, while it is over
 * max_error_m, simplifies again from the original with a target scaled
 * down by the overshoot (at most 8 rounds; the last one allows only
 * exactly coplanar collapses).  Vertical error bounds the distance to
 * the surface too.  Other meshes (iso-surfaces) get meshoptimizer's
 * estimate alone.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <meshoptimizer.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

typedef struct
{
  double max_error_m;
  double target_ratio;
  bool lock_borders;
} SimplifyParams;

static const TgParamDesc simplify_params[] = {
  TG_PARAM_FLOAT (SimplifyParams, max_error_m, .label = N_("Max error"), .def = 0.5, .min = 0.0,
                  .max = 100000.0, .soft_min = 0.0, .soft_max = 20.0, .unit = "m",
                  .help = N_("How far the simplified surface may stray from the original")),
  TG_PARAM_FLOAT (SimplifyParams, target_ratio, .label = N_("Target ratio"), .def = 0.0, .min = 0.0,
                  .max = 1.0,
                  .help = N_("Stop once this fraction of the triangles is left (0: simplify as far "
                             "as the error allows)")),
  TG_PARAM_BOOL (SimplifyParams, lock_borders, .label = N_("Lock borders"), .def = true,
                 .help = N_("Keep every chunk's outline and skirts "
                            "unchanged, so chunks still meet exactly")),
};

static const TgPortDesc simplify_inputs[] = {
  { .name = "mesh", .type = TG_TYPE_MESH, .label = N_("Mesh"), .help = N_("Mesh to simplify") },
};

static const TgPortDesc simplify_outputs[] = {
  { .name = "mesh", .type = TG_TYPE_MESH, .label = N_("Mesh"),
    .help = N_("The same chunks with fewer triangles") },
};

typedef struct
{
  const TgMesh *in;
  TgMesh *out;
  const SimplifyParams *p;
  int failed;
} SimplifyJob;

/* Bit mask of the X/Z bound planes vertex P lies in. */
static inline unsigned
side_mask (const float *p, const float lo[2], const float hi[2])
{
  return (p[0] == lo[0] ? 1u : 0u) | (p[0] == hi[0] ? 2u : 0u) | (p[2] == lo[1] ? 4u : 0u)
         | (p[2] == hi[1] ? 8u : 0u);
}

/* Largest vertical distance (metres) between the original vertices of IN
 * marked in USED and the surface of triangles DST[0..N), when every
 * non-vertical triangle of DST faces up; -1 when one faces down (a fold,
 * or DST is not a height surface at all). */
static double
vertical_error (const TgMeshChunk *in, const uint8_t *used, const uint32_t *dst, size_t n)
{
  const float *pos = in->positions;
  int nv = in->n_vertices, g;
  float lo[2], hi[2];
  double cell_x, cell_z, worst = 0.0;
  int *head, *next;

  if (nv < 1)
    return 0.0;
  lo[0] = hi[0] = pos[0];
  lo[1] = hi[1] = pos[2];
  for (int i = 1; i < nv; i++)
    {
      lo[0] = fminf (lo[0], pos[3 * i]);
      hi[0] = fmaxf (hi[0], pos[3 * i]);
      lo[1] = fminf (lo[1], pos[3 * i + 2]);
      hi[1] = fmaxf (hi[1], pos[3 * i + 2]);
    }
  /* Buckets of original vertices over X/Z, about one vertex each. */
  g = (int) sqrt ((double) nv) + 1;
  cell_x = ((double) hi[0] - lo[0]) / g + 1e-9;
  cell_z = ((double) hi[1] - lo[1]) / g + 1e-9;
  head = malloc (sizeof (int) * ((size_t) g * g + (size_t) nv));
  if (!head)
    return -1.0;
  next = head + (size_t) g * g;
  for (int k = 0; k < g * g; k++)
    head[k] = -1;
  for (int i = nv - 1; i >= 0; i--)
    {
      if (!used[i])
        continue;
      int bx = (int) (((double) pos[3 * i] - lo[0]) / cell_x);
      int bz = (int) (((double) pos[3 * i + 2] - lo[1]) / cell_z);
      bx = bx < g ? bx : g - 1;
      bz = bz < g ? bz : g - 1;
      next[i] = head[bz * g + bx];
      head[bz * g + bx] = i;
    }

  for (size_t t = 0; t < n && worst >= 0.0; t += 3)
    {
      const float *a = pos + 3 * dst[t], *b = pos + 3 * dst[t + 1], *c = pos + 3 * dst[t + 2];
      double ux = (double) b[0] - a[0], uz = (double) b[2] - a[2];
      double wx = (double) c[0] - a[0], wz = (double) c[2] - a[2];
      /* (u x w).y, positive for a triangle facing up. */
      double det = uz * wx - ux * wz;
      if (det == 0.0)
        continue; /* vertical: a skirt or a sliver on a locked border */
      if (det < 0.0)
        {
          worst = -1.0;
          break;
        }
      double x0 = fmin (a[0], fmin (b[0], c[0])), x1 = fmax (a[0], fmax (b[0], c[0]));
      double z0 = fmin (a[2], fmin (b[2], c[2])), z1 = fmax (a[2], fmax (b[2], c[2]));
      int bx0 = (int) ((x0 - lo[0]) / cell_x), bx1 = (int) ((x1 - lo[0]) / cell_x);
      int bz0 = (int) ((z0 - lo[1]) / cell_z), bz1 = (int) ((z1 - lo[1]) / cell_z);
      bx1 = bx1 < g ? bx1 : g - 1;
      bz1 = bz1 < g ? bz1 : g - 1;
      for (int bz = bz0; bz <= bz1; bz++)
        for (int bx = bx0; bx <= bx1; bx++)
          for (int i = head[bz * g + bx]; i >= 0; i = next[i])
            {
              double px = (double) pos[3 * i] - a[0], pz = (double) pos[3 * i + 2] - a[2];
              /* Barycentric weights of b and c from the X/Z projection. */
              double l1 = (pz * wx - px * wz) / det, l2 = (uz * px - ux * pz) / det;
              if (l1 < -1e-9 || l2 < -1e-9 || l1 + l2 > 1.0 + 1e-9)
                continue;
              double y = a[1] + l1 * ((double) b[1] - a[1]) + l2 * ((double) c[1] - a[1]);
              double e = fabs (y - pos[3 * i + 1]);
              if (e > worst)
                worst = e;
            }
    }
  free (head);
  return worst;
}

static int
simplify_chunk (const SimplifyParams *p, const TgMeshChunk *in, TgMeshChunk *out)
{
  size_t ni = (size_t) in->n_indices, nv = (size_t) in->n_vertices;
  uint32_t *keep = NULL, *work = NULL, *dst = NULL;
  int32_t *remap = NULL;
  size_t n_keep = 0, n_work = 0, n_dst = 0;
  int rc = TG_ENOMEM;

  out->lod = in->lod;
  if (tg_mesh_chunk_set_name (out, in->name) < 0)
    return TG_ENOMEM;
  keep = malloc (sizeof (uint32_t) * (ni ? ni : 1));
  work = malloc (sizeof (uint32_t) * (ni ? ni : 1));
  dst = malloc (sizeof (uint32_t) * (ni ? ni : 1));
  remap = malloc (sizeof (int32_t) * (nv ? nv : 1));
  if (!keep || !work || !dst || !remap)
    goto done;

  if (p->lock_borders && nv > 0)
    {
      float lo[2] = { in->positions[0], in->positions[2] }, hi[2] = { lo[0], lo[1] };
      for (size_t i = 1; i < nv; i++)
        {
          lo[0] = fminf (lo[0], in->positions[3 * i]);
          hi[0] = fmaxf (hi[0], in->positions[3 * i]);
          lo[1] = fminf (lo[1], in->positions[3 * i + 2]);
          hi[1] = fmaxf (hi[1], in->positions[3 * i + 2]);
        }
      for (size_t t = 0; t < ni; t += 3)
        {
          const uint32_t *tri = in->indices + t;
          unsigned m = side_mask (in->positions + 3 * tri[0], lo, hi)
                       & side_mask (in->positions + 3 * tri[1], lo, hi)
                       & side_mask (in->positions + 3 * tri[2], lo, hi);
          uint32_t *to = m ? keep + n_keep : work + n_work;
          memcpy (to, tri, 3 * sizeof (uint32_t));
          if (m)
            n_keep += 3;
          else
            n_work += 3;
        }
    }
  else
    {
      memcpy (work, in->indices, ni * sizeof (uint32_t));
      n_work = ni;
    }

  if (n_work > 0)
    {
      float scale = meshopt_simplifyScale (in->positions, nv, 3 * sizeof (float));
      double goal = p->max_error_m;
      size_t target = 0;
      if (p->target_ratio > 0.0)
        target = (size_t) ((double) (n_work / 3) * p->target_ratio) * 3;
      /* Measure at the vertices being simplified (not at skirt bottoms,
       * which hang below the surface on purpose). */
      uint8_t *used = (uint8_t *) remap;
      memset (used, 0, nv);
      for (size_t k = 0; k < n_work; k++)
        used[work[k]] = 1;
      bool height_surface = vertical_error (in, used, work, n_work) >= 0.0;
      for (int round = 0; round < 8; round++)
        {
          float rel = scale > 0.0f && round < 7 ? (float) (goal / scale) : 0.0f;
          n_dst = meshopt_simplify (dst, work, n_work, in->positions, nv, 3 * sizeof (float),
                                    target, rel, p->lock_borders ? meshopt_SimplifyLockBorder : 0,
                                    NULL);
          if (!height_surface)
            break; /* the estimate is all we have */
          double err = vertical_error (in, used, dst, n_dst);
          if (err >= 0.0 && err <= p->max_error_m)
            break;
          /* Aim below the bound by the overshoot, with a margin; a fold
           * (err < 0) halves the target. */
          goal *= err < 0.0 ? 0.5 : 0.9 * p->max_error_m / err;
        }
    }
  memcpy (dst + n_dst, keep, n_keep * sizeof (uint32_t));
  n_dst += n_keep;

  /* Keep the vertices still used, in their original order. */
  for (size_t i = 0; i < nv; i++)
    remap[i] = -1;
  for (size_t k = 0; k < n_dst; k++)
    remap[dst[k]] = 0;
  int n_used = 0;
  for (size_t i = 0; i < nv; i++)
    if (remap[i] == 0)
      remap[i] = n_used++;
  if (tg_mesh_chunk_alloc (out, n_used, (int64_t) n_dst, in->uvs != NULL) < 0)
    goto done;
  for (size_t i = 0; i < nv; i++)
    if (remap[i] >= 0)
      {
        int j = remap[i];
        memcpy (out->positions + 3 * j, in->positions + 3 * i, 3 * sizeof (float));
        memcpy (out->normals + 3 * j, in->normals + 3 * i, 3 * sizeof (float));
        if (in->uvs)
          memcpy (out->uvs + 2 * j, in->uvs + 2 * i, 2 * sizeof (float));
      }
  for (size_t k = 0; k < n_dst; k++)
    out->indices[k] = (uint32_t) remap[dst[k]];
  rc = 0;

done:
  free (keep);
  free (work);
  free (dst);
  free (remap);
  return rc;
}

static void
simplify_chunks (void *user, int begin, int end)
{
  SimplifyJob *job = user;

  for (int k = begin; k < end; k++)
    if (simplify_chunk (job->p, &job->in->chunks[k], &job->out->chunks[k]) < 0)
      job->failed = 1;
}

static int
simplify_eval (TgEvalCtx *c)
{
  const SimplifyParams *p = tg_eval_params (c);
  const TgValue *in = tg_eval_input (c, 0);
  SimplifyJob job = { 0 };
  TgValue *out;
  int rc;

  job.in = in ? tg_value_mesh (in) : NULL;
  job.p = p;
  if (!job.in)
    return tg_eval_fail (c, TG_EMISSING, "input 'mesh' has no mesh");
  for (int k = 0; k < job.in->n_chunks; k++)
    {
      const TgMeshChunk *ch = &job.in->chunks[k];
      if (ch->n_indices % 3 != 0 || (ch->n_indices > 0 && (!ch->positions || !ch->normals)))
        return tg_eval_fail (c, TG_EINVAL, "chunk %d (%s) is not a triangle mesh", k,
                             ch->name ? ch->name : "unnamed");
      for (int64_t i = 0; i < ch->n_indices; i++)
        if (ch->indices[i] >= (uint32_t) ch->n_vertices)
          return tg_eval_fail (c, TG_EINVAL, "chunk %d (%s): index %lld is past its %d vertices",
                               k, ch->name ? ch->name : "unnamed", (long long) i, ch->n_vertices);
    }
  if (!(job.out = tg_mesh_new (job.in->n_chunks)))
    return tg_eval_fail (c, TG_ENOMEM, "out of memory");
  rc = tg_eval_parallel (c, job.in->n_chunks, 1, simplify_chunks, &job);
  if (rc == 0 && job.failed)
    rc = tg_eval_fail (c, TG_ENOMEM, "out of memory");
  if (rc < 0)
    {
      tg_mesh_free (job.out);
      return rc;
    }
  if (!(out = tg_value_new_mesh (job.out)))
    return tg_eval_fail (c, TG_ENOMEM, "out of memory");
  tg_eval_set_output (c, 0, out);
  return 0;
}

static const TgNodeDesc mesh_simplify_desc = {
  .type = "mesh.simplify",
  .category = TG_CATEGORY_MESH,
  .label = N_("Simplify mesh"),
  .help = N_("Removes triangles where the surface is flat enough, within an error in metres; "
             "chunk borders stay where they are"),
  TG_INPUTS (simplify_inputs),
  TG_OUTPUTS (simplify_outputs),
  TG_PARAMS (SimplifyParams, simplify_params),
  .locality = TG_LOCALITY_GLOBAL,
  .eval = simplify_eval,
  .version = 1,
};
TG_NODE_REGISTER (mesh_simplify_desc);
