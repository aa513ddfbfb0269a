/* mesh.heightfield: vertex and triangle counts, names and order of the
 * chunks, positions and UVs against the height samples (image
 * convention), normals of a tilted plane, counter-clockwise triangles and
 * outward skirts, bit-identical borders between neighbouring chunks, no
 * open cracks between neighbours at different LOD (coarse borders lie on
 * the fine polyline and the skirts cover every gap), the same bytes for 1
 * and 4 threads, parameter errors, the exported .glb (32-bit indices
 * past 65,535 vertices) through the glTF-Validator, and tiled builds
 * (any tiling, tiles smaller than a chunk) joined to the whole mesh's
 * bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tgformats/tgformats.h>

#include "tggraph_test.h"
#include "tgtiled_test.h"

/* A graph: noise (or a gradient) -> mesh.heightfield "hf". */
static TgGraph *
terrain_graph (int res, double size, bool plane, int chunk_cells, int lods)
{
  TgGraph *g = new_graph (size, size, res);
  char text[32];

  tg_graph_world (g)->height_m = 300.0;
  if (plane)
    {
      add_node (g, "h", "gen.gradient");
      SET (g, 0, "angle_deg", "30");
      SET (g, 0, "from", "0.2");
      SET (g, 0, "to", "0.7");
    }
  else
    {
      add_node (g, "h", "noise.fbm");
      SET (g, 0, "scale_m", "300");
      SET (g, 0, "octaves", "8");
      SET (g, 0, "seed", "5");
    }
  int hf = add_node (g, "hf", "mesh.heightfield");
  snprintf (text, sizeof text, "%d", chunk_cells);
  SET (g, hf, "chunk_cells", text);
  snprintf (text, sizeof text, "%d", lods);
  SET (g, hf, "lods", text);
  add_link (g, "h", "height", "hf", "height");
  return g;
}

static const TgMesh *
mesh_of (const TgValue *v)
{
  return v ? tg_value_mesh (v) : NULL;
}

static const TgMeshChunk *
find_chunk (const TgMesh *m, int cx, int cz, int lod)
{
  char name[64];
  snprintf (name, sizeof name, "chunk_x%d_z%d_lod%d", cx, cz, lod);
  for (int i = 0; i < m->n_chunks; i++)
    if (strcmp (m->chunks[i].name, name) == 0)
      return &m->chunks[i];
  return NULL;
}

/* Lattice samples along one side of a chunk at LOD step S. */
static int
side_count (int n_cells, int s)
{
  return (n_cells + s - 1) / s + 1;
}

static void
test_counts_and_names (void)
{
  TgEngine *e = new_engine (2);
  TgGraph *g = terrain_graph (70, 690, false, 16, 2); /* 69 cells: 5 chunks, the last 5 wide */
  TgRegion r = world_region (g);
  TgValue *v = pull (e, g, "hf", &r);
  const TgMesh *m = mesh_of (v);

  TG_CHECK (m && m->n_chunks == 5 * 5 * 2);
  for (int lod = 0; m && lod < 2; lod++)
    for (int cz = 0; cz < 5; cz++)
      for (int cx = 0; cx < 5; cx++)
        {
          const TgMeshChunk *c = &m->chunks[lod * 25 + cz * 5 + cx];
          char name[64];
          snprintf (name, sizeof name, "chunk_x%d_z%d_lod%d", cx, cz, lod);
          TG_CHECK_MSG (strcmp (c->name, name) == 0, "%s vs %s", c->name, name);
          TG_CHECK_INT_EQ (c->lod, lod);
          int nw = cx < 4 ? 16 : 5, nh = cz < 4 ? 16 : 5, s = 1 << lod;
          int nc = side_count (nw, s), nr = side_count (nh, s);
          /* Skirts on the sides shared with another chunk (LOD > 1 only). */
          int skirt_v = (cz > 0 ? nc : 0) + (cz < 4 ? nc : 0) + (cx > 0 ? nr : 0)
                        + (cx < 4 ? nr : 0);
          int skirt_t = (cz > 0 ? nc - 1 : 0) + (cz < 4 ? nc - 1 : 0) + (cx > 0 ? nr - 1 : 0)
                        + (cx < 4 ? nr - 1 : 0);
          TG_CHECK_INT_EQ (c->n_vertices, nc * nr + skirt_v);
          TG_CHECK_INT_EQ (c->n_indices, 6 * (nc - 1) * (nr - 1) + 6 * skirt_t);
          TG_CHECK (c->uvs != NULL);
        }
  tg_value_unref (v);

  /* One level: no skirts at all. */
  TgGraph *g1 = terrain_graph (65, 640, false, 16, 1);
  r = world_region (g1);
  v = pull (e, g1, "hf", &r);
  m = mesh_of (v);
  TG_CHECK (m && m->n_chunks == 16);
  for (int i = 0; m && i < m->n_chunks; i++)
    {
      TG_CHECK_INT_EQ (m->chunks[i].n_vertices, 17 * 17);
      TG_CHECK_INT_EQ (m->chunks[i].n_indices, 6 * 16 * 16);
    }
  tg_value_unref (v);
  tg_graph_free (g1);
  tg_graph_free (g);
  tg_engine_free (e);
}

/* Positions from the height samples; UV = (col, row) / (W-1, H-1). */
static void
test_positions_and_uvs (void)
{
  TgEngine *e = new_engine (2);
  TgGraph *g = terrain_graph (49, 480, false, 16, 2);
  TgRegion r = world_region (g);
  TgValue *h = pull (e, g, "h", &r);
  TgValue *v = pull (e, g, "hf", &r);
  const TgMesh *m = mesh_of (v);
  int bad = 0;

  for (int k = 0; m && k < m->n_chunks; k++)
    {
      const TgMeshChunk *c = &m->chunks[k];
      for (int i = 0; i < c->n_vertices; i++)
        {
          double col = c->uvs[2 * i] * 48.0, row = c->uvs[2 * i + 1] * 48.0;
          int ci = (int) lround (col), ri = (int) lround (row);
          float want_y = (float) ((double) at (h, ci, ri) * 300.0);
          bool skirt = c->positions[3 * i + 1] < want_y;
          bad += fabs (col - ci) > 1e-4 || fabs (row - ri) > 1e-4;
          bad += c->positions[3 * i] != (float) tg_region_x (&r, ci);
          bad += c->positions[3 * i + 2] != (float) tg_region_z (&r, ri);
          bad += !skirt && c->positions[3 * i + 1] != want_y;
        }
    }
  TG_CHECK_INT_EQ (bad, 0);
  /* The first vertex is the north-west corner: u = 0, v = 0, x min, z max. */
  const TgMeshChunk *nw = m ? find_chunk (m, 0, 0, 0) : NULL;
  TG_CHECK (nw && nw->uvs[0] == 0.0f && nw->uvs[1] == 0.0f);
  TG_CHECK (nw && nw->positions[0] == -240.0f && nw->positions[2] == 240.0f);
  /* The last grid vertex of the south-east chunk: u = v = 1, x max, z min. */
  const TgMeshChunk *se = m ? find_chunk (m, 2, 2, 0) : NULL;
  if (se)
    {
      int last = 17 * 17 - 1;
      TG_CHECK (se->uvs[2 * last] == 1.0f && se->uvs[2 * last + 1] == 1.0f);
      TG_CHECK (se->positions[3 * last] == 240.0f && se->positions[3 * last + 2] == -240.0f);
    }
  tg_value_unref (h);
  tg_value_unref (v);
  tg_graph_free (g);
  tg_engine_free (e);
}

static void
face_normal (const float *p, const uint32_t *t, double n[3])
{
  const float *a = p + 3 * t[0], *b = p + 3 * t[1], *c = p + 3 * t[2];
  double u[3] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] };
  double w[3] = { c[0] - a[0], c[1] - a[1], c[2] - a[2] };
  n[0] = u[1] * w[2] - u[2] * w[1];
  n[1] = u[2] * w[0] - u[0] * w[2];
  n[2] = u[0] * w[1] - u[1] * w[0];
  double len = sqrt (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  if (len > 0)
    for (int k = 0; k < 3; k++)
      n[k] /= len;
}

/* A tilted plane: every vertex normal, borders included, is the plane's,
 * and every terrain triangle is counter-clockwise seen from above. */
static void
test_plane_normals (void)
{
  TgEngine *e = new_engine (2);
  TgGraph *g = terrain_graph (33, 640, true, 16, 1);
  TgRegion r = world_region (g);
  TgValue *v = pull (e, g, "hf", &r);
  const TgMesh *m = mesh_of (v);
  double worst = 0.0, plane[3] = { 0 };
  int cw = 0;

  /* The plane's normal from a big triangle of its own vertices. */
  if (m)
    {
      const TgMeshChunk *c = find_chunk (m, 0, 0, 0);
      uint32_t tri[3] = { 0, 16, 16 * 17 };
      face_normal (c->positions, tri, plane);
      TG_CHECK (plane[1] > 0.5 && fabs (plane[0]) > 0.01 && fabs (plane[2]) > 0.01);
    }
  for (int k = 0; m && k < m->n_chunks; k++)
    {
      const TgMeshChunk *c = &m->chunks[k];
      for (int i = 0; i < c->n_vertices; i++)
        {
          const float *n = c->normals + 3 * i;
          double len = sqrt ((double) n[0] * n[0] + (double) n[1] * n[1] + (double) n[2] * n[2]);
          TG_CHECK_NEAR (len, 1.0, 1e-6);
          for (int a = 0; a < 3; a++)
            worst = fmax (worst, fabs (n[a] - plane[a]));
        }
      for (int64_t t = 0; t < c->n_indices; t += 3)
        {
          double fn[3];
          face_normal (c->positions, c->indices + t, fn);
          cw += !(fn[1] > 0.0);
        }
    }
  TG_CHECK_MSG (worst < 1e-4, "normal differs from the plane's by %g", worst);
  TG_CHECK_INT_EQ (cw, 0);
  tg_value_unref (v);
  tg_graph_free (g);
  tg_engine_free (e);
}

/* Vertex of chunk C at lattice grid position (I, J) of its own grid (NC
 * columns): the grid vertices come first, row by row. */
static const float *
grid_pos (const TgMeshChunk *c, int nc, int i, int j)
{
  return c->positions + 3 * (j * nc + i);
}

static const float *
grid_nrm (const TgMeshChunk *c, int nc, int i, int j)
{
  return c->normals + 3 * (j * nc + i);
}

/* Neighbours at the same level share their border vertices bit for bit. */
static void
test_borders_identical (void)
{
  TgEngine *e = new_engine (3);
  TgGraph *g = terrain_graph (70, 690, false, 16, 3);
  TgRegion r = world_region (g);
  TgValue *v = pull (e, g, "hf", &r);
  const TgMesh *m = mesh_of (v);
  int compared = 0, differ = 0;

  for (int lod = 0; m && lod < 3; lod++)
    for (int cz = 0; cz < 5; cz++)
      for (int cx = 0; cx < 5; cx++)
        {
          const TgMeshChunk *a = find_chunk (m, cx, cz, lod);
          int s = 1 << lod;
          int nca = side_count (cx < 4 ? 16 : 5, s), nra = side_count (cz < 4 ? 16 : 5, s);
          if (cx < 4)
            {
              const TgMeshChunk *b = find_chunk (m, cx + 1, cz, lod);
              int ncb = side_count (cx + 1 < 4 ? 16 : 5, s);
              for (int j = 0; j < nra; j++, compared++)
                differ += memcmp (grid_pos (a, nca, nca - 1, j), grid_pos (b, ncb, 0, j), 12) != 0
                          || memcmp (grid_nrm (a, nca, nca - 1, j), grid_nrm (b, ncb, 0, j), 12)
                               != 0;
            }
          if (cz < 4)
            {
              const TgMeshChunk *b = find_chunk (m, cx, cz + 1, lod);
              for (int i = 0; i < nca; i++, compared++)
                differ += memcmp (grid_pos (a, nca, i, nra - 1), grid_pos (b, nca, i, 0), 12) != 0
                          || memcmp (grid_nrm (a, nca, i, nra - 1), grid_nrm (b, nca, i, 0), 12)
                               != 0;
            }
        }
  TG_CHECK (compared > 500);
  TG_CHECK_MSG (differ == 0, "%d of %d border vertices differ", differ, compared);
  tg_value_unref (v);
  tg_graph_free (g);
  tg_engine_free (e);
}

/* Skirt depth of chunk C's side through the grid vertex at (X, Z): the
 * drop from that vertex to the skirt vertex below it (0 when none). */
static double
skirt_depth (const TgMeshChunk *c, int n_grid, const float *top)
{
  double best = 0.0;
  for (int i = n_grid; i < c->n_vertices; i++)
    {
      const float *p = c->positions + 3 * i;
      if (p[0] == top[0] && p[2] == top[2] && p[1] < top[1])
        best = fmax (best, (double) top[1] - (double) p[1]);
    }
  return best;
}

/* Fine chunk A (level 0) beside coarse chunk B (level L): B's border
 * vertices on the shared side are vertices of A's border (the coarse edge
 * is a chord of the fine polyline), and at every lattice sample the
 * vertical gap between the two polylines is covered by the skirts hanging
 * from the upper one.  East-west neighbours and north-south neighbours. */
static void
test_lod_no_cracks (void)
{
  TgEngine *e = new_engine (2);
  TgGraph *g = terrain_graph (65, 640, false, 16, 3);
  TgRegion r = world_region (g);
  TgValue *v = pull (e, g, "hf", &r);
  const TgMesh *m = mesh_of (v);
  int not_on_polyline = 0, uncovered = 0, samples = 0;
  double worst_gap = 0.0;

  for (int lod = 1; m && lod < 3; lod++)
    for (int cz = 0; cz < 4; cz++)
      for (int cx = 0; cx < 4; cx++)
        for (int dir = 0; dir < 2; dir++)
          for (int swap = 0; swap < 2; swap++)
            {
              /* A (fine) and B (coarse) share the side east of / south of (cx, cz). */
              int bx = dir == 0 ? cx + 1 : cx, bz = dir == 0 ? cz : cz + 1;
              if (bx > 3 || bz > 3)
                continue;
              const TgMeshChunk *a = find_chunk (m, swap ? bx : cx, swap ? bz : cz, 0);
              const TgMeshChunk *b = find_chunk (m, swap ? cx : bx, swap ? cz : bz, lod);
              int s = 1 << lod, ncb = side_count (16, s);
              /* Side samples of A (17) and of B (17 / s + 1), ordered along the side. */
              const float *ap[17], *bp[17];
              int nb = 0;
              for (int k = 0; k < 17; k++)
                {
                  bool a_first = !swap;
                  int ia = dir == 0 ? (a_first ? 16 : 0) : k, ja = dir == 0 ? k : (a_first ? 16 : 0);
                  ap[k] = grid_pos (a, 17, ia, ja);
                }
              for (int k = 0; k < ncb; k++)
                {
                  bool b_first = swap;
                  int ib = dir == 0 ? (b_first ? ncb - 1 : 0) : k;
                  int jb = dir == 0 ? k : (b_first ? ncb - 1 : 0);
                  bp[nb++] = grid_pos (b, ncb, ib, jb);
                }
              for (int k = 0; k < nb; k++)
                not_on_polyline += memcmp (bp[k], ap[k * s], 12) != 0;

              double da = skirt_depth (a, 17 * 17, ap[1]);
              double db = skirt_depth (b, ncb * ncb, bp[1]);
              TG_CHECK (da > 0.0 && db > 0.0);
              for (int k = 0; k < 17; k++, samples++)
                {
                  int k0 = k / s, k1 = k0 + 1 < nb ? k0 + 1 : k0;
                  double t = (double) (k - k0 * s) / (double) s;
                  double yb = bp[k0][1] + (bp[k1][1] - bp[k0][1]) * t;
                  double ya = ap[k][1];
                  double gap = fabs (ya - yb);
                  worst_gap = fmax (worst_gap, gap);
                  /* The upper polyline's skirt must reach the lower one. */
                  if (ya >= yb ? da + 1e-3 < gap : db + 1e-3 < gap)
                    uncovered++;
                }
            }
  TG_CHECK_INT_EQ (not_on_polyline, 0);
  TG_CHECK_MSG (uncovered == 0, "%d of %d samples not covered", uncovered, samples);
  TG_CHECK_MSG (worst_gap > 0.5, "the test terrain should open real gaps (worst %g m)",
                worst_gap);
  fprintf (stderr, "  LOD gaps up to %.2f m, all covered by skirts (%d samples)\n", worst_gap,
           samples);
  tg_value_unref (v);
  tg_graph_free (g);
  tg_engine_free (e);
}

/* Skirt triangles face away from their chunk. */
static void
test_skirts_face_out (void)
{
  TgEngine *e = new_engine (2);
  TgGraph *g = terrain_graph (65, 640, false, 16, 2);
  TgRegion r = world_region (g);
  TgValue *v = pull (e, g, "hf", &r);
  const TgMesh *m = mesh_of (v);
  int skirt_tris = 0, inward = 0;

  for (int k = 0; m && k < m->n_chunks; k++)
    {
      const TgMeshChunk *c = &m->chunks[k];
      double cxm = 0, czm = 0;
      for (int i = 0; i < c->n_vertices; i++)
        {
          cxm += c->positions[3 * i] / c->n_vertices;
          czm += c->positions[3 * i + 2] / c->n_vertices;
        }
      for (int64_t t = 0; t < c->n_indices; t += 3)
        {
          double fn[3];
          face_normal (c->positions, c->indices + t, fn);
          if (fabs (fn[1]) > 1e-6)
            continue;
          const float *p = c->positions + 3 * c->indices[t];
          skirt_tris++;
          inward += fn[0] * (p[0] - cxm) + fn[2] * (p[2] - czm) <= 0.0;
        }
    }
  TG_CHECK (skirt_tris > 100);
  TG_CHECK_INT_EQ (inward, 0);
  tg_value_unref (v);
  tg_graph_free (g);
  tg_engine_free (e);
}

static uint64_t
mesh_hash (const TgMesh *m)
{
  uint64_t h = 1469598103934665603ull;
  for (int k = 0; k < m->n_chunks; k++)
    {
      const TgMeshChunk *c = &m->chunks[k];
      const uint8_t *parts[4] = { (const uint8_t *) c->positions, (const uint8_t *) c->normals,
                                  (const uint8_t *) c->uvs, (const uint8_t *) c->indices };
      size_t sizes[4] = { 12 * (size_t) c->n_vertices, 12 * (size_t) c->n_vertices,
                          8 * (size_t) c->n_vertices, 4 * (size_t) c->n_indices };
      for (int p = 0; p < 4; p++)
        for (size_t i = 0; i < sizes[p]; i++)
          h = (h ^ parts[p][i]) * 1099511628211ull;
    }
  return h;
}

static void
test_threads (void)
{
  uint64_t hashes[2];
  int threads[2] = { 1, 4 };

  for (int t = 0; t < 2; t++)
    {
      TgEngine *e = new_engine (threads[t]);
      TgGraph *g = terrain_graph (130, 1290, false, 32, 3);
      TgRegion r = world_region (g);
      TgValue *v = pull (e, g, "hf", &r);
      hashes[t] = v ? mesh_hash (mesh_of (v)) : (uint64_t) t;
      tg_value_unref (v);
      tg_graph_free (g);
      tg_engine_free (e);
    }
  TG_CHECK (hashes[0] == hashes[1]);
}

static void
test_errors (void)
{
  TgEngine *e = new_engine (1);
  TgGraph *g = terrain_graph (33, 320, false, 30, 3);
  TgRegion r = world_region (g);
  TgError err = { 0 };
  TgValue *v = pull_err (e, g, "hf", &r, &err);

  TG_CHECK (v == NULL);
  TG_CHECK_STR_CONTAINS (err.path, "params.chunk_cells");
  TG_CHECK_STR_CONTAINS (err.message, "chunk_cells 30 is not divisible by 2^(lods - 1) = 4");
  tg_value_unref (v);
  tg_graph_free (g);
  tg_engine_free (e);
}

/* What the user gets: .glb files of a chunked LOD mesh with skirts and
 * of one chunk past 65,535 vertices (uint32 indices needed), written by
 * export.mesh's writer and checked by the Khronos validator. */
/* Whether two meshes have the same chunks, names and arrays, in order. */
static bool
meshes_equal (const TgMesh *a, const TgMesh *b)
{
  if (a->n_chunks != b->n_chunks)
    return false;
  for (int i = 0; i < a->n_chunks; i++)
    {
      const TgMeshChunk *x = &a->chunks[i], *y = &b->chunks[i];
      size_t nv = (size_t) x->n_vertices;
      if (strcmp (x->name, y->name) != 0 || x->lod != y->lod || x->n_vertices != y->n_vertices
          || x->n_indices != y->n_indices || !x->uvs != !y->uvs
          || memcmp (x->positions, y->positions, sizeof (float) * 3 * nv) != 0
          || memcmp (x->normals, y->normals, sizeof (float) * 3 * nv) != 0
          || (x->uvs && memcmp (x->uvs, y->uvs, sizeof (float) * 2 * nv) != 0)
          || memcmp (x->indices, y->indices, sizeof (uint32_t) * (size_t) x->n_indices) != 0)
        return false;
    }
  return true;
}

/* Chunks with a partial last row and column, three levels and skirts,
 * built in tiles from 1 x 1 to tiles smaller than a chunk, join to the
 * whole mesh bit for bit. */
static void
test_tiled_equals_whole (void)
{
  static const int tilings[][2] = { { 1, 1 }, { 2, 2 }, { 3, 2 }, { 4, 4 },
                                    { 7, 5 }, { 1, 9 }, { 23, 3 } };
  static const int shapes[][2] = { { 16, 3 }, { 8, 1 } };
  TgEngine *e = new_engine (2);

  for (int s = 0; s < 2; s++)
    {
      TgGraph *g = terrain_graph (70, 690, false, shapes[s][0], shapes[s][1]);
      TgRegion r = world_region (g);
      TgValue *whole = pull (e, g, "hf", &r);
      for (int k = 0; whole && k < (int) (sizeof tilings / sizeof tilings[0]); k++)
        {
          TgValue *tiled = NULL;
          TgError err = { 0 };
          int rc = tgtest_tiled_pull (e, g, tg_graph_find_node (g, "hf"), 0, tilings[k][0],
                                      tilings[k][1], &tiled, NULL, &err);
          TG_CHECK_MSG (rc == 0, "%dx%d: %s", tilings[k][0], tilings[k][1], err.message);
          if (rc == 0)
            TG_CHECK_MSG (meshes_equal (mesh_of (whole), mesh_of (tiled)),
                          "chunks %d, %d levels, %dx%d tiles: the mesh differs (%d chunks, "
                          "whole %d)", shapes[s][0], shapes[s][1], tilings[k][0],
                          tilings[k][1], mesh_of (tiled)->n_chunks, mesh_of (whole)->n_chunks);
          tg_value_unref (tiled);
        }
      tg_value_unref (whole);
      tg_graph_free (g);
    }
  tg_engine_free (e);
}

static void
test_glb_validates (void)
{
  char dir[] = "/tmp/tg-hf-XXXXXX";
  char cmd[1024], p1[256], p2[256];
  TgEngine *e = new_engine (2);

  TG_CHECK (tg_formats_init () == 0);
  if (!mkdtemp (dir))
    return;
  snprintf (p1, sizeof p1, "%s/lods.glb", dir);
  snprintf (p2, sizeof p2, "%s/big.glb", dir);
  const char *paths[2] = { p1, p2 };
  for (int k = 0; k < 2; k++)
    {
      TgGraph *g = k == 0 ? terrain_graph (97, 960, false, 32, 3)
                          : terrain_graph (257, 2560, false, 256, 1);
      TgRegion r = world_region (g);
      TgValue *v = pull (e, g, "hf", &r);
      const TgMesh *m = mesh_of (v);
      if (k == 1)
        TG_CHECK (m && m->chunks[0].n_vertices == 66049);
      FILE *f = fopen (paths[k], "wb");
      TgError err = { 0 };
      TG_CHECK (m && f && tg_io_mesh_writer ("glb") (f, m, NULL, &err) == 0);
      if (f)
        fclose (f);
      tg_value_unref (v);
      tg_graph_free (g);
    }
  snprintf (cmd, sizeof cmd, "bash '%s' '%s' '%s'", tgtest_src ("tests/common/gltf_validate.sh"),
            p1, p2);
  int rc = system (cmd);
  rc = WIFEXITED (rc) ? WEXITSTATUS (rc) : 1;
  if (rc == 77)
    fprintf (stderr, "  (npm missing: glTF-Validator not run)\n");
  else
    TG_CHECK_MSG (rc == 0, "glTF-Validator: exit %d", rc);
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system (cmd) != 0)
    fprintf (stderr, "could not remove %s\n", dir);
  tg_engine_free (e);
}

int
main (void)
{
  TG_RUN (test_counts_and_names);
  TG_RUN (test_positions_and_uvs);
  TG_RUN (test_plane_normals);
  TG_RUN (test_borders_identical);
  TG_RUN (test_lod_no_cracks);
  TG_RUN (test_skirts_face_out);
  TG_RUN (test_threads);
  TG_RUN (test_errors);
  TG_RUN (test_tiled_equals_whole);
  TG_RUN (test_glb_validates);
  return tgtest_result ();
}
