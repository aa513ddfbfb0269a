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
 *
 * Tiled builds.  A chunk reads its own samples and one more around them
 * (the normals), and its skirts only its own edges, so a tile builds the
 * chunks whose first sample it holds from its height grown by a chunk and
 * one sample; the join puts them in the whole mesh's order.  The eval is
 * the same code over the whole lattice, so both give the same bytes.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  TG_PARAM_INT (HfParams, chunk_cells, .label = N_("Chunk cells"), .def = 64, .min = 2, .max = 4096,
                .help = N_("Cells along each side of a chunk (64 to 128 are usual); must be "
                           "divisible by 2^(lods - 1)")),
  TG_PARAM_INT (HfParams, lods, .label = N_("LOD levels"), .def = 1, .min = 1, .max = 8,
                .help = N_("Levels of detail; each halves the resolution of the one before")),
  TG_PARAM_FLOAT (HfParams, skirt_m, .label = N_("Skirt margin"), .def = 1.0, .min = 0.0,
                  .max = 10000.0, .soft_min = 0.0, .soft_max = 50.0, .unit = "m",
                  .help = N_("Extra depth of the skirts below the largest gap that neighbouring "
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
    return tg_error_set (err, TG_ERANGE, "params.chunk_cells", TG_MSG_CHUNK_NOT_DIVISIBLE,
                         p->chunk_cells, step);
  return 0;
}

typedef struct
{
  const TgValue *in;
  const TgRegion *r;     /* the full lattice */
  const HfParams *p;
  double height_m;
  int ncx, ncz;          /* chunks along X and Z over the world */
  int ax, az, nrx, nrz;  /* the chunks built: [ax, ax + nrx) x [az, az + nrz) */
  /* Skirt depth of the edge above chunk (cx, cz): [(cz - az) * nrx + cx - ax],
   * cz az..az+nrz; of the edge left of it: [(cz - az) * (nrx + 1) + cx - ax],
   * cx ax..ax+nrx.  Edges on the world's border stay 0. */
  float *depth_h;
  float *depth_v;
  TgMesh *mesh;
  int failed;            /* set by a worker that could not allocate */
} HfJob;

static inline float
depth_h_at (const HfJob *job, int cx, int cz)
{
  return job->depth_h[(cz - job->az) * job->nrx + cx - job->ax];
}

static inline float
depth_v_at (const HfJob *job, int cx, int cz)
{
  return job->depth_v[(cz - job->az) * (job->nrx + 1) + cx - job->ax];
}

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

  /* Item k: chunk (cx, cz) of the built ones and one more row and column
   * computes the edges on its north and west sides. */
  for (int k = begin; k < end; k++)
    {
      int cx = job->ax + k % (job->nrx + 1), cz = job->az + k / (job->nrx + 1);
      int c0 = cx * cc, r0 = cz * cc;
      int nw = wc - c0 < cc ? wc - c0 : cc, nh = hc - r0 < cc ? hc - r0 : cc;

      if (cz > 0 && cz < job->ncz && cx < job->ax + job->nrx)
        job->depth_h[(cz - job->az) * job->nrx + cx - job->ax]
          = (float) (edge_gap (job, c0, r0, 1, 0, nw) + job->p->skirt_m);
      if (cx > 0 && cx < job->ncx && cz < job->az + job->nrz)
        job->depth_v[(cz - job->az) * (job->nrx + 1) + cx - job->ax]
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
  int per_level = job->nrx * job->nrz;
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
      int lod = k / per_level;
      int cx = job->ax + (k % per_level) % job->nrx, cz = job->az + (k % per_level) / job->nrx;
      int c0 = cx * cc, r0 = cz * cc, s = 1 << lod;
      int nw = wc - c0 < cc ? wc - c0 : cc, nh = hc - r0 < cc ? hc - r0 : cc;
      int nc = side_samples (c0, nw, s, cols), nr = side_samples (r0, nh, s, rows);
      /* Skirt depths of the four sides (0: no skirt), clockwise from north. */
      float depth[4] = {
        cz > 0 ? depth_h_at (job, cx, cz) : 0.0f,
        cx < job->ncx - 1 ? depth_v_at (job, cx + 1, cz) : 0.0f,
        cz < job->ncz - 1 ? depth_h_at (job, cx, cz + 1) : 0.0f,
        cx > 0 ? depth_v_at (job, cx, cz) : 0.0f,
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

/* First chunk along an axis whose first sample is at or after S. */
static int
first_chunk_at (int s, int cc)
{
  return (s + cc - 1) / cc;
}

/* The chunks whose first sample the evaluation's region holds: all of
 * them in an eval (the region is the world), a tile's in a tiled step. */
static int
hf_eval (TgEvalCtx *c)
{
  const HfParams *p = tg_eval_params (c);
  const TgRegion *region = tg_eval_region (c);
  TgRegion full = tg_region_full (region), need;
  const TgRegion *r = &full;
  HfJob job = { 0 };
  TgValue *out;
  int rc, n_chunks, cc = p->chunk_cells, bx, bz;

  job.in = tg_eval_input (c, 0);
  if ((rc = tg__check_grid_input (c, job.in, "height", region)) < 0)
    return rc;
  if (r->width < 2 || r->height < 2)
    return tg_eval_fail (c, TG_ERANGE, TG_MSG_MESH_TOO_SMALL, r->width, r->height);
  job.r = r;
  job.p = p;
  job.height_m = tg_eval_world (c)->height_m;
  job.ncx = (r->width - 1 + cc - 1) / cc;
  job.ncz = (r->height - 1 + cc - 1) / cc;
  if ((int64_t) (cc + 1) * (cc + 1) + 4 * (cc + 1) > INT32_MAX / 2)
    return tg_eval_fail (c, TG_ERANGE, "params.chunk_cells: %s", TG_MSG_CHUNKS_TOO_LARGE);
  if ((int64_t) job.ncx * job.ncz * p->lods > 1000000)
    return tg_eval_fail (c, TG_ERANGE,
                         "params.chunk_cells: %d x %d chunks x %d levels is too many; use larger "
                         "chunks",
                         job.ncx, job.ncz, p->lods);
  job.ax = first_chunk_at (region->col0, cc);
  job.az = first_chunk_at (region->row0, cc);
  bx = first_chunk_at (region->col0 + region->width, cc);
  bz = first_chunk_at (region->row0 + region->height, cc);
  job.nrx = (bx < job.ncx ? bx : job.ncx) - job.ax;
  job.nrz = (bz < job.ncz ? bz : job.ncz) - job.az;
  if (job.nrx < 0 || job.nrz < 0)
    job.nrx = job.nrz = 0;
  n_chunks = job.nrx * job.nrz * p->lods;
  /* The samples those chunks and their normals read. */
  if (n_chunks > 0)
    {
      int c0 = job.ax * cc > 0 ? job.ax * cc - 1 : 0, r0 = job.az * cc > 0 ? job.az * cc - 1 : 0;
      int c1 = (job.ax + job.nrx) * cc + 2, r1 = (job.az + job.nrz) * cc + 2;
      c1 = c1 < r->width ? c1 : r->width;
      r1 = r1 < r->height ? r1 : r->height;
      need = tg_region_window (r, c0, r0, c1 - c0, r1 - r0);
      if (!tg_region_contains (&job.in->region, &need))
        return tg_eval_fail (c, TG_EINVAL, "input 'height' does not cover the chunks' samples");
    }

  job.depth_h = calloc ((size_t) (job.nrz + 1) * (size_t) job.nrx
                        + (size_t) job.nrz * (size_t) (job.nrx + 1) + 1, sizeof (float));
  job.mesh = tg_mesh_new (n_chunks);
  if (!job.depth_h || !job.mesh)
    {
      free (job.depth_h);
      tg_mesh_free (job.mesh);
      return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
    }
  job.depth_v = job.depth_h + (size_t) (job.nrz + 1) * (size_t) job.nrx;

  rc = 0;
  if (p->lods > 1 && n_chunks > 0)
    rc = tg_eval_parallel (c, (job.nrx + 1) * (job.nrz + 1), 1, edge_rows, &job);
  if (rc == 0 && n_chunks > 0)
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
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  tg_eval_set_output (c, 0, out);
  return 0;
}

/* --- tiled builds ------------------------------------------------------------------ */

static int
hf_n_steps (const void *params, const TgRegion *full)
{
  (void) params;
  (void) full;
  return 1;
}

static int
hf_halo (const void *params, const TgRegion *full, int step)
{
  const HfParams *p = params;

  (void) full;
  (void) step;
  /* A chunk starting on the tile's last sample reaches a chunk past it,
   * and its normals one sample more. */
  return p->chunk_cells + 1;
}

static int
hf_tile_step (TgEvalCtx *c, int step)
{
  (void) step;
  return hf_eval (c);
}

/* Tile along an axis of N samples cut in NT that holds sample S. */
static int
tile_of (int n, int nt, int s)
{
  int i = (int) (((int64_t) s * nt) / n);

  while (i + 1 < nt && tg_tile_start (n, nt, i + 1) <= s)
    i++;
  while (i > 0 && tg_tile_start (n, nt, i) > s)
    i--;
  return i;
}

static int
chunk_copy (TgMeshChunk *dst, const TgMeshChunk *src)
{
  if (tg_mesh_chunk_set_name (dst, src->name) < 0
      || tg_mesh_chunk_alloc (dst, src->n_vertices, src->n_indices, src->uvs != NULL) < 0)
    return TG_ENOMEM;
  dst->lod = src->lod;
  memcpy (dst->positions, src->positions, sizeof (float) * 3 * (size_t) src->n_vertices);
  memcpy (dst->normals, src->normals, sizeof (float) * 3 * (size_t) src->n_vertices);
  if (src->uvs)
    memcpy (dst->uvs, src->uvs, sizeof (float) * 2 * (size_t) src->n_vertices);
  memcpy (dst->indices, src->indices, sizeof (uint32_t) * (size_t) src->n_indices);
  return 0;
}

/* The whole mesh's order is level, chunk row, chunk column; each tile
 * holds its chunks in that order, so a cursor per tile is enough. */
static TgValue *
hf_join (const void *params, const TgRegion *full, const TgTiling *t, int output,
         TgValue *const *parts, TgError *err)
{
  const HfParams *p = params;
  int cc = p->chunk_cells;
  int ncx = (full->full_w - 1 + cc - 1) / cc, ncz = (full->full_h - 1 + cc - 1) / cc;
  int n_parts = t->nx * t->ny, k = 0;
  int *at = calloc ((size_t) n_parts, sizeof (int));
  TgMesh *m = tg_mesh_new (ncx * ncz * p->lods);
  TgValue *v;

  (void) output;
  if (!at || !m)
    goto oom;
  for (int lod = 0; lod < p->lods; lod++)
    for (int cz = 0; cz < ncz; cz++)
      for (int cx = 0; cx < ncx; cx++)
        {
          int q = tile_of (full->full_h, t->ny, cz * cc) * t->nx
                  + tile_of (full->full_w, t->nx, cx * cc);
          const TgMesh *pm = parts[q] ? tg_value_mesh (parts[q]) : NULL;
          char name[64];
          snprintf (name, sizeof name, "chunk_x%d_z%d_lod%d", cx, cz, lod);
          if (!pm || at[q] >= pm->n_chunks || !pm->chunks[at[q]].name
              || strcmp (pm->chunks[at[q]].name, name) != 0)
            {
              free (at);
              tg_mesh_free (m);
              tg_error_set (err, TG_EINVAL, NULL, "tile %d's share of the mesh lacks %s", q,
                            name);
              return NULL;
            }
          if (chunk_copy (&m->chunks[k++], &pm->chunks[at[q]++]) < 0)
            goto oom;
        }
  for (int q = 0; q < n_parts; q++)
    if (at[q] != tg_value_mesh (parts[q])->n_chunks)
      {
        free (at);
        tg_mesh_free (m);
        tg_error_set (err, TG_EINVAL, NULL, "tile %d's share of the mesh has chunks of other "
                      "tiles", q);
        return NULL;
      }
  free (at);
  v = tg_value_new_mesh (m);
  if (!v)
    tg_error_set (err, TG_ENOMEM, NULL, TG_MSG_OUT_OF_MEMORY);
  return v;

oom:
  free (at);
  tg_mesh_free (m);
  tg_error_set (err, TG_ENOMEM, NULL, "out of memory joining the mesh");
  return NULL;
}

/* Bytes of the chunks over CELLS cells: per level, chunks of (cells + 1)²
 * vertices and a skirt of 4 x cells (position, normal, uv: 32 bytes
 * each) and two triangles a cell and a skirt edge (12 bytes each). */
static double
hf_mesh_bytes (const HfParams *p, double cells)
{
  double b = 0.0;

  for (int l = 0; l < p->lods; l++)
    {
      double cc = (double) (p->chunk_cells >> l > 0 ? p->chunk_cells >> l : 1);
      double chunks = ceil ((cells / (double) (1u << (2 * l)) + 1.0) / (cc * cc)) + 1.0;
      b += chunks * (((cc + 1.0) * (cc + 1.0) + 4.0 * cc) * 32.0 + (2.0 * cc * cc + 8.0 * cc) * 12.0);
    }
  return b;
}

/* A tile job holds the chunks that start in its tile (reaching a chunk
 * past it) and their serialised copy; the export job the whole mesh. */
static uint64_t
hf_work_bytes (const void *params, const TgRegion *full, const TgTiling *t, int step,
               bool reduce)
{
  const HfParams *p = params;
  double tw = ceil ((double) full->full_w / t->nx) + p->chunk_cells;
  double th = ceil ((double) full->full_h / t->ny) + p->chunk_cells;

  if (reduce)
    return 0;
  if (step == -1)
    return (uint64_t) hf_mesh_bytes (p, (double) (full->full_w - 1) * (double) (full->full_h - 1));
  return (uint64_t) (2.0 * hf_mesh_bytes (p, tw * th));
}

static const TgTiledScheme hf_tiled = {
  .n_steps = hf_n_steps,
  .halo = hf_halo,
  .tile_step = hf_tile_step,
  .join = hf_join,
  .work_bytes = hf_work_bytes,
};

static const TgNodeDesc mesh_heightfield_desc = {
  .type = "mesh.heightfield",
  .category = TG_CATEGORY_MESH,
  .label = N_("Heightfield mesh"),
  .help = N_("Turns a height into grid meshes in chunks, with levels of detail and skirts that "
             "hide the cracks between neighbours at different levels"),
  TG_INPUTS (hf_inputs),
  TG_OUTPUTS (hf_outputs),
  TG_PARAMS (HfParams, hf_params),
  .locality = TG_LOCALITY_GLOBAL,
  .check = hf_check,
  .eval = hf_eval,
  .tiled = &hf_tiled,
  .version = 1,
};
TG_NODE_REGISTER (mesh_heightfield_desc);
