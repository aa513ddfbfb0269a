/* mesh.heightfield: a height turned into grid meshes in chunks, with LOD
 * levels and skirts.
 *
 * Geometry.  Vertex (col, row) of the lattice sits at x = tg_region_x,
 * z = tg_region_z, y = height * world.height_m: metres, world centred on
 * the origin, +Y up, triangles counter-clockwise seen from above.  The
 * normal is the height gradient by central differences in metres
 * (one-sided on the world's edges), taken on the full-resolution map for
 * every LOD, so a vertex has the same normal in every chunk and level.
 * UVs follow the image convention: u = col / (W - 1) (0 west, 1 east),
 * v = row / (H - 1) (0 north, 1 south), i.e. glTF's (v = 0 at the top
 * row of the image); the OBJ and PLY writers flip v for their own
 * convention.
 *
 * Chunks.  The map is cut into chunks of `chunk_cells` cells (the last
 * row and column of chunks take what is left).  Neighbours share their
 * border samples, computed from the same lattice indices, so their border
 * positions and normals are bit-identical.  Chunk (cx, cz) of level L is
 * named "chunk_x<cx>_z<cz>_lod<L>": cx counts from the west, cz from the
 * north (image rows).  Chunks come level by level, north-west first.
 *
 * LOD.  Level L keeps every 2^L-th sample (plus the chunk's last one, for
 * a partial chunk), so a coarser edge is a chord of the finer polyline
 * and chunk corners are shared by every level.  Neighbours at different
 * levels can leave slivers between their edges; instead of stitching
 * (which must know the neighbour's level at run time), every chunk edge
 * shared with another chunk gets a skirt: a strip hanging straight down
 * from the border vertices, facing outwards.  Its depth is the largest
 * vertical gap any pair of levels leaves along that edge (the gap
 * between two levels is largest at the finer level's samples, where it
 * is the coarser chord's distance to the full-resolution height), plus
 * `skirt_m`.  Both chunks of an edge use the same depth, so the skirts
 * cover the gap from either side whatever levels meet.  A one-level mesh
 * needs no skirts and gets none.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

#include "grid_util.h"

typedef struct
{
  int chunk_cells;
  int lods;
  double skirt_m;
} HfParams;

static const TgParamDesc hf_params[] = {
  TG_PARAM_INT (HfParams, chunk_cells, N_("Chunk cells"), 64, 2, 4096,
                N_("Cells along each side of a chunk (64 to 128 are usual); must be divisible "
                   "by 2^(lods - 1)")),
  TG_PARAM_INT (HfParams, lods, N_("LOD levels"), 1, 1, 8,
                N_("Levels of detail; each halves the resolution of the one before")),
  TG_PARAM_FLOAT_UI (HfParams, skirt_m, N_("Skirt margin"), 1.0, 0.0, 10000.0, 0.0, 50.0, "m",
                     N_("Extra depth of the skirts below the largest gap that neighbouring "
                        "levels of detail can leave (only with more than one level)")),
};

static const TgPortDesc hf_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("The terrain to mesh") },
};

static const TgPortDesc hf_outputs[] = {
  { .name = "mesh", .type = TG_TYPE_MESH, .label = N_("Mesh"),
    .help = N_("One chunk per tile and level, named chunk_x<col>_z<row>_lod<level>") },
};

static int
hf_check (const void *params, TgError *err)
{
  const HfParams *p = params;
  int step = 1 << (p->lods - 1);

  if (p->chunk_cells % step != 0)
    return tg_error_set (err, TG_ERANGE, "params.chunk_cells",
                         "chunk_cells %d is not divisible by 2^(lods - 1) = %d", p->chunk_cells,
                         step);
  return 0;
}

typedef struct
{
  const TgValue *in;
  const TgRegion *r;     /* the full lattice */
  const HfParams *p;
  double height_m;
  int ncx, ncz;          /* chunks along X and Z */
  float *depth_h;        /* skirt depth of the edge above chunk row cz: [cz * ncx + cx], cz 1..ncz-1 */
  float *depth_v;        /* of the edge left of chunk column cx: [cz * (ncx + 1) + cx], cx 1..ncx-1 */
  TgMesh *mesh;
  int failed;            /* set by a worker that could not allocate */
} HfJob;

static inline float
height_at (const HfJob *job, int col, int row)
{
  return tg__grid_row (job->in, job->r, row)[col];
}

/* Unit normal at lattice sample (COL, ROW) from the full map. */
static void
normal_at (const HfJob *job, int col, int row, float out[3])
{
  const TgRegion *r = job->r;
  int c0 = col > 0 ? col - 1 : col, c1 = col < r->width - 1 ? col + 1 : col;
  int r0 = row > 0 ? row - 1 : row, r1 = row < r->height - 1 ? row + 1 : row;
  double dx = (double) (c1 - c0) * r->cell, dz = (double) (r1 - r0) * r->cell;
  /* Row numbers grow southwards, towards -Z. */
  double gx = dx > 0.0 ? ((double) height_at (job, c1, row) - (double) height_at (job, c0, row))
                           * job->height_m / dx
                       : 0.0;
  double gz = dz > 0.0 ? ((double) height_at (job, col, r0) - (double) height_at (job, col, r1))
                           * job->height_m / dz
                       : 0.0;
  double inv = 1.0 / sqrt (gx * gx + 1.0 + gz * gz);

  out[0] = (float) (-gx * inv);
  out[1] = (float) inv;
  out[2] = (float) (-gz * inv);
}

/* Sample positions of a chunk side starting at sample A with N cells at
 * level step S: A, A + S, ... and A + N.  Returns the count. */
static int
side_samples (int a, int n, int s, int *out)
{
  int k = 0;

  for (int m = 0; m < n; m += s)
    out[k++] = a + m;
  out[k++] = a + n;
  return k;
}

/* Largest vertical gap (metres) between level chords and the full map
 * along the lattice line from (C0, R0), N cells in direction (DC, DR). */
static double
edge_gap (const HfJob *job, int c0, int r0, int dc, int dr, int n)
{
  double worst = 0.0;

  for (int l = 1; l < job->p->lods; l++)
    {
      int s = 1 << l;
      for (int a = 0; a < n; a += s)
        {
          int b = a + s < n ? a + s : n;
          double ha = height_at (job, c0 + dc * a, r0 + dr * a);
          double hb = height_at (job, c0 + dc * b, r0 + dr * b);
          for (int k = a + 1; k < b; k++)
            {
              double t = (double) (k - a) / (double) (b - a);
              double chord = ha + (hb - ha) * t;
              double g = fabs ((double) height_at (job, c0 + dc * k, r0 + dr * k) - chord);
              if (g > worst)
                worst = g;
            }
        }
    }
  return worst * job->height_m;
}

static void
edge_rows (void *user, int begin, int end)
{
  HfJob *job = user;
  int cc = job->p->chunk_cells, wc = job->r->width - 1, hc = job->r->height - 1;

  /* Item k: chunk (cx, cz) computes the edges on its north and west sides. */
  for (int k = begin; k < end; k++)
    {
      int cx = k % job->ncx, cz = k / job->ncx;
      int c0 = cx * cc, r0 = cz * cc;
      int nw = wc - c0 < cc ? wc - c0 : cc, nh = hc - r0 < cc ? hc - r0 : cc;

      if (cz > 0)
        job->depth_h[cz * job->ncx + cx]
          = (float) (edge_gap (job, c0, r0, 1, 0, nw) + job->p->skirt_m);
      if (cx > 0)
        job->depth_v[cz * (job->ncx + 1) + cx]
          = (float) (edge_gap (job, c0, r0, 0, 1, nh) + job->p->skirt_m);
    }
}

static void
put_vertex (const HfJob *job, TgMeshChunk *ch, int v, int col, int row, float drop)
{
  const TgRegion *r = job->r;

  ch->positions[3 * v] = (float) tg_region_x (r, col);
  ch->positions[3 * v + 1]
    = (float) ((double) height_at (job, col, row) * job->height_m) - drop;
  ch->positions[3 * v + 2] = (float) tg_region_z (r, row);
  normal_at (job, col, row, ch->normals + 3 * v);
  ch->uvs[2 * v] = (float) ((double) col / (double) (r->width - 1));
  ch->uvs[2 * v + 1] = (float) ((double) row / (double) (r->height - 1));
}

static void
chunk_build (void *user, int begin, int end)
{
  HfJob *job = user;
  const HfParams *p = job->p;
  int cc = p->chunk_cells, wc = job->r->width - 1, hc = job->r->height - 1;
  int per_level = job->ncx * job->ncz;
  int *cols = malloc (sizeof (int) * (size_t) (2 * cc + 4));
  int *rows = cols ? cols + cc + 2 : NULL;

  if (!cols)
    {
      job->failed = 1;
      return;
    }
  for (int k = begin; k < end; k++)
    {
      TgMeshChunk *ch = &job->mesh->chunks[k];
      int lod = k / per_level, cx = (k % per_level) % job->ncx, cz = (k % per_level) / job->ncx;
      int c0 = cx * cc, r0 = cz * cc, s = 1 << lod;
      int nw = wc - c0 < cc ? wc - c0 : cc, nh = hc - r0 < cc ? hc - r0 : cc;
      int nc = side_samples (c0, nw, s, cols), nr = side_samples (r0, nh, s, rows);
      /* Skirt depths of the four sides (0: no skirt), clockwise from north. */
      float depth[4] = {
        cz > 0 ? job->depth_h[cz * job->ncx + cx] : 0.0f,
        cx < job->ncx - 1 ? job->depth_v[cz * (job->ncx + 1) + cx + 1] : 0.0f,
        cz < job->ncz - 1 ? job->depth_h[(cz + 1) * job->ncx + cx] : 0.0f,
        cx > 0 ? job->depth_v[cz * (job->ncx + 1) + cx] : 0.0f,
      };
      int side_n[4] = { nc, nr, nc, nr };
      int nv = nc * nr, n_skirt_v = 0;
      int64_t ni = (int64_t) 6 * (nc - 1) * (nr - 1);
      char name[64];

      if (p->lods > 1)
        for (int e = 0; e < 4; e++)
          if (depth[e] > 0.0f)
            {
              n_skirt_v += side_n[e];
              ni += (int64_t) 6 * (side_n[e] - 1);
            }
      snprintf (name, sizeof name, "chunk_x%d_z%d_lod%d", cx, cz, lod);
      ch->lod = lod;
      if (tg_mesh_chunk_set_name (ch, name) < 0
          || tg_mesh_chunk_alloc (ch, nv + n_skirt_v, ni, 1) < 0)
        {
          job->failed = 1;
          continue;
        }

      for (int j = 0; j < nr; j++)
        for (int i = 0; i < nc; i++)
          put_vertex (job, ch, j * nc + i, cols[i], rows[j], 0.0f);

      uint32_t *idx = ch->indices;
      for (int j = 0; j + 1 < nr; j++)
        for (int i = 0; i + 1 < nc; i++)
          {
            uint32_t a = (uint32_t) (j * nc + i), b = a + 1;
            uint32_t c = a + (uint32_t) nc, d = c + 1;
            /* a b / c d with rows running south: (a, b, c) faces +Y. */
            *idx++ = a, *idx++ = b, *idx++ = c;
            *idx++ = b, *idx++ = d, *idx++ = c;
          }

      if (p->lods > 1)
        {
          int v = nv;
          for (int e = 0; e < 4; e++)
            {
              if (!(depth[e] > 0.0f))
                continue;
              /* Walk the side clockwise seen from above (north side west to
               * east, ...), so the chunk is on the right; then (top_i,
               * bottom_i, top_i+1) faces outwards. */
              int n = side_n[e];
              for (int m = 0; m < n; m++)
                {
                  int i, j;
                  switch (e)
                    {
                    case 0: i = m, j = 0; break;
                    case 1: i = nc - 1, j = m; break;
                    case 2: i = nc - 1 - m, j = nr - 1; break;
                    default: i = 0, j = nr - 1 - m; break;
                    }
                  put_vertex (job, ch, v + m, cols[i], rows[j], depth[e]);
                  if (m + 1 < n)
                    {
                      int i2, j2;
                      switch (e)
                        {
                        case 0: i2 = m + 1, j2 = 0; break;
                        case 1: i2 = nc - 1, j2 = m + 1; break;
                        case 2: i2 = nc - 2 - m, j2 = nr - 1; break;
                        default: i2 = 0, j2 = nr - 2 - m; break;
                        }
                      uint32_t t0 = (uint32_t) (j * nc + i), t1 = (uint32_t) (j2 * nc + i2);
                      uint32_t b0 = (uint32_t) (v + m), b1 = b0 + 1;
                      *idx++ = t0, *idx++ = b0, *idx++ = t1;
                      *idx++ = t1, *idx++ = b0, *idx++ = b1;
                    }
                }
              v += n;
            }
        }
    }
  free (cols);
}

static int
hf_eval (TgEvalCtx *c)
{
  const HfParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  HfJob job = { 0 };
  TgValue *out;
  int rc, n_chunks, cc = p->chunk_cells;

  job.in = tg_eval_input (c, 0);
  if ((rc = tg__check_grid_input (c, job.in, "height", r)) < 0)
    return rc;
  if (r->width < 2 || r->height < 2)
    return tg_eval_fail (c, TG_ERANGE, "a mesh needs at least 2 x 2 samples, got %d x %d",
                         r->width, r->height);
  job.r = r;
  job.p = p;
  job.height_m = tg_eval_world (c)->height_m;
  job.ncx = (r->width - 1 + cc - 1) / cc;
  job.ncz = (r->height - 1 + cc - 1) / cc;
  if ((int64_t) (cc + 1) * (cc + 1) + 4 * (cc + 1) > INT32_MAX / 2)
    return tg_eval_fail (c, TG_ERANGE, "params.chunk_cells: chunks too large");
  if ((int64_t) job.ncx * job.ncz * p->lods > 1000000)
    return tg_eval_fail (c, TG_ERANGE,
                         "params.chunk_cells: %d x %d chunks x %d levels is too many; use larger "
                         "chunks",
                         job.ncx, job.ncz, p->lods);
  n_chunks = job.ncx * job.ncz * p->lods;

  job.depth_h = calloc ((size_t) (job.ncz + 1) * (size_t) job.ncx
                        + (size_t) job.ncz * (size_t) (job.ncx + 1), sizeof (float));
  job.mesh = tg_mesh_new (n_chunks);
  if (!job.depth_h || !job.mesh)
    {
      free (job.depth_h);
      tg_mesh_free (job.mesh);
      return tg_eval_fail (c, TG_ENOMEM, "out of memory");
    }
  job.depth_v = job.depth_h + (size_t) (job.ncz + 1) * (size_t) job.ncx;

  rc = 0;
  if (p->lods > 1)
    rc = tg_eval_parallel (c, job.ncx * job.ncz, 1, edge_rows, &job);
  if (rc == 0)
    rc = tg_eval_parallel (c, n_chunks, 1, chunk_build, &job);
  free (job.depth_h);
  if (rc == 0 && job.failed)
    rc = tg_eval_fail (c, TG_ENOMEM, "out of memory building %d chunks", n_chunks);
  if (rc < 0)
    {
      tg_mesh_free (job.mesh);
      return rc;
    }
  out = tg_value_new_mesh (job.mesh);
  if (!out)
    return tg_eval_fail (c, TG_ENOMEM, "out of memory");
  tg_eval_set_output (c, 0, out);
  return 0;
}

static const TgNodeDesc mesh_heightfield_desc = {
  .type = "mesh.heightfield",
  .category = "Mesh",
  .label = N_("Heightfield mesh"),
  .help = N_("Turns a height into grid meshes in chunks, with levels of detail and skirts that "
             "hide the cracks between neighbours at different levels"),
  .inputs = hf_inputs,
  .n_inputs = TG_N_ELEMENTS (hf_inputs),
  .outputs = hf_outputs,
  .n_outputs = TG_N_ELEMENTS (hf_outputs),
  .params = hf_params,
  .n_params = TG_N_ELEMENTS (hf_params),
  .params_size = sizeof (HfParams),
  .locality = TG_LOCALITY_GLOBAL,
  .check = hf_check,
  .eval = hf_eval,
  .version = 1,
};
TG_NODE_REGISTER (mesh_heightfield_desc);
