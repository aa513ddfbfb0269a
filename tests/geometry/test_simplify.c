/* mesh.simplify (libtggeometry, meshoptimizer): the measured vertical
 * error of the simplified surface over every original vertex stays
 * within max_error_m, the chunk outlines and skirts are kept bit for bit
 * (so chunks still meet), the surface has no holes, target_ratio
 * bounds the triangle count, the result does not depend on the thread
 * count, and the .glb of it passes the glTF-Validator.  Prints the
 * triangle reduction on an island terrain. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <tgformats/tgformats.h>

#include "tggraph_test.h"

/* island: fbm x radial shape -> mesh.heightfield "hf" -> mesh.simplify "s". */
static TgGraph *
island_graph (int res, int chunk_cells, int lods, const char *max_error, const char *ratio)
{
  TgGraph *g = new_graph (2048, 2048, res);
  char text[32];

  tg_graph_world (g)->height_m = 400.0;
  int n = add_node (g, "noise", "noise.fbm");
  SET (g, n, "scale_m", "700");
  SET (g, n, "octaves", "9");
  SET (g, n, "seed", "11");
  n = add_node (g, "shape", "gen.shape");
  SET (g, n, "radius_m", "900");
  SET (g, n, "falloff_m", "700");
  n = add_node (g, "land", "math.combine");
  SET (g, n, "op", "multiply");
  n = add_node (g, "hf", "mesh.heightfield");
  snprintf (text, sizeof text, "%d", chunk_cells);
  SET (g, n, "chunk_cells", text);
  snprintf (text, sizeof text, "%d", lods);
  SET (g, n, "lods", text);
  n = add_node (g, "s", "mesh.simplify");
  SET (g, n, "max_error_m", max_error);
  SET (g, n, "target_ratio", ratio);
  add_link (g, "noise", "height", "land", "a");
  add_link (g, "shape", "height", "land", "b");
  add_link (g, "land", "height", "hf", "height");
  add_link (g, "hf", "mesh", "s", "mesh");
  return g;
}

static int64_t
triangles (const TgMesh *m)
{
  int64_t n = 0;
  for (int k = 0; k < m->n_chunks; k++)
    n += m->chunks[k].n_indices / 3;
  return n;
}

/* Height of chunk C's surface at (X, Z): the triangle (seen from above)
 * containing the point, by barycentric weights; NAN when none does.
 * Vertical triangles (skirts) are skipped. */
/* |n.y| of the triangle surface_y found last: vertical error times it is
 * the distance to the triangle's plane. */
static double last_ny;

static double
surface_y (const TgMeshChunk *c, double x, double z)
{
  for (int64_t t = 0; t < c->n_indices; t += 3)
    {
      const float *a = c->positions + 3 * c->indices[t];
      const float *b = c->positions + 3 * c->indices[t + 1];
      const float *d = c->positions + 3 * c->indices[t + 2];
      double det = ((double) b[0] - a[0]) * ((double) d[2] - a[2])
                   - ((double) d[0] - a[0]) * ((double) b[2] - a[2]);
      if (fabs (det) < 1e-9)
        continue;
      double l1 = ((x - a[0]) * ((double) d[2] - a[2]) - ((double) d[0] - a[0]) * (z - a[2])) / det;
      double l2 = (((double) b[0] - a[0]) * (z - a[2]) - (x - a[0]) * ((double) b[2] - a[2])) / det;
      double l0 = 1.0 - l1 - l2;
      if (l0 >= -1e-7 && l1 >= -1e-7 && l2 >= -1e-7)
        {
          double u[3] = { b[0] - a[0], b[1] - a[1], b[2] - a[2] };
          double w[3] = { d[0] - a[0], d[1] - a[1], d[2] - a[2] };
          double n[3] = { u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
                          u[0] * w[1] - u[1] * w[0] };
          last_ny = fabs (n[1]) / sqrt (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
          return l0 * a[1] + l1 * b[1] + l2 * d[1];
        }
    }
  return NAN;
}

/* Whether chunk C has a vertex with exactly position P. */
static bool
has_vertex (const TgMeshChunk *c, const float *p)
{
  for (int i = 0; i < c->n_vertices; i++)
    if (memcmp (c->positions + 3 * i, p, 12) == 0)
      return true;
  return false;
}

static void
test_error_bound_and_borders (void)
{
  TgEngine *e = new_engine (2);
  TgGraph *g = island_graph (257, 64, 1, "0.5", "0");
  TgRegion r = world_region (g);
  TgValue *full = pull (e, g, "hf", &r);
  TgValue *simp = pull (e, g, "s", &r);
  const TgMesh *a = full ? tg_value_mesh (full) : NULL, *b = simp ? tg_value_mesh (simp) : NULL;
  double worst = 0.0, worst_perp = 0.0;
  int holes = 0, lost_border = 0, wrong_attr = 0;

  if (!a || !b)
    return;
  TG_CHECK_INT_EQ (a->n_chunks, b->n_chunks);
  for (int k = 0; k < a->n_chunks && k < b->n_chunks; k++)
    {
      const TgMeshChunk *ca = &a->chunks[k], *cb = &b->chunks[k];
      TG_CHECK (strcmp (ca->name, cb->name) == 0);
      float lo[2] = { ca->positions[0], ca->positions[2] };
      float hi[2] = { ca->positions[3 * (ca->n_vertices - 1)],
                      ca->positions[3 * (ca->n_vertices - 1) + 2] };
      for (int i = 0; i < ca->n_vertices; i++)
        {
          const float *p = ca->positions + 3 * i;
          double y = surface_y (cb, p[0], p[2]);
          if (isnan (y))
            holes++;
          else
            {
              worst = fmax (worst, fabs (y - p[1]));
              worst_perp = fmax (worst_perp, fabs (y - p[1]) * last_ny);
            }
          /* The outline: every vertex on the chunk's sides survives. */
          if (p[0] == lo[0] || p[0] == hi[0] || p[2] == lo[1] || p[2] == hi[1])
            lost_border += !has_vertex (cb, p);
        }
      /* Survivors keep their normals and UVs. */
      for (int i = 0; i < cb->n_vertices; i++)
        {
          const float *p = cb->positions + 3 * i;
          int col = (int) lround (cb->uvs[2 * i] * 256.0), row = (int) lround (cb->uvs[2 * i + 1] * 256.0);
          wrong_attr += p[0] != (float) tg_region_x (&r, col) || p[2] != (float) tg_region_z (&r, row);
          double len = sqrt ((double) cb->normals[3 * i] * cb->normals[3 * i]
                             + (double) cb->normals[3 * i + 1] * cb->normals[3 * i + 1]
                             + (double) cb->normals[3 * i + 2] * cb->normals[3 * i + 2]);
          wrong_attr += fabs (len - 1.0) > 1e-6;
        }
    }
  fprintf (stderr, "  island 257^2, 4 x 4 chunks: %lld -> %lld triangles at 0.5 m (%.1f%%), "
           "measured max vertical error %.3f m, distance to the surface %.3f m\n",
           (long long) triangles (a), (long long) triangles (b),
           100.0 * (double) triangles (b) / (double) triangles (a), worst, worst_perp);
  TG_CHECK_INT_EQ (holes, 0);
  TG_CHECK_INT_EQ (lost_border, 0);
  TG_CHECK_INT_EQ (wrong_attr, 0);
  TG_CHECK_MSG (worst <= 0.5, "vertical error %.3f m over the 0.5 m bound", worst);
  TG_CHECK (triangles (b) * 2 < triangles (a));
  tg_value_unref (full);
  tg_value_unref (simp);
  tg_graph_free (g);
  tg_engine_free (e);
}

static bool
is_wall (const float *p0, const float *p1, const float *p2)
{
  return (p0[0] == p1[0] && p1[0] == p2[0]) || (p0[2] == p1[2] && p1[2] == p2[2]);
}

/* With LOD skirts: every skirt triangle is still there, same positions in
 * the same order (new vertical slivers on the locked border may appear:
 * they close the surface against the border, they open nothing). */
static void
test_skirts_kept (void)
{
  TgEngine *e = new_engine (2);
  TgGraph *g = island_graph (129, 32, 2, "2", "0");
  TgRegion r = world_region (g);
  TgValue *full = pull (e, g, "hf", &r);
  TgValue *simp = pull (e, g, "s", &r);
  const TgMesh *a = tg_value_mesh (full), *b = tg_value_mesh (simp);
  int walls = 0, missing = 0;

  for (int k = 0; k < a->n_chunks; k++)
    {
      const TgMeshChunk *ca = &a->chunks[k], *cb = &b->chunks[k];
      for (int64_t t = 0; t < ca->n_indices; t += 3)
        {
          const float *p[3];
          for (int q = 0; q < 3; q++)
            p[q] = ca->positions + 3 * ca->indices[t + q];
          if (!is_wall (p[0], p[1], p[2]))
            continue;
          walls++;
          bool found = false;
          for (int64_t u = 0; u < cb->n_indices && !found; u += 3)
            found = memcmp (cb->positions + 3 * cb->indices[u], p[0], 12) == 0
                    && memcmp (cb->positions + 3 * cb->indices[u + 1], p[1], 12) == 0
                    && memcmp (cb->positions + 3 * cb->indices[u + 2], p[2], 12) == 0;
          missing += !found;
        }
    }
  TG_CHECK (walls > 100);
  TG_CHECK_INT_EQ (missing, 0);
  TG_CHECK (triangles (b) < triangles (a) / 2);
  tg_value_unref (full);
  tg_value_unref (simp);
  tg_graph_free (g);
  tg_engine_free (e);
}

static void
test_target_ratio (void)
{
  TgEngine *e = new_engine (2);
  /* The error would allow far more: the ratio stops it at 90%. */
  TgGraph *g = island_graph (129, 128, 1, "1000", "0.9");
  TgRegion r = world_region (g);
  TgValue *full = pull (e, g, "hf", &r);
  TgValue *simp = pull (e, g, "s", &r);
  int64_t na = triangles (tg_value_mesh (full)), nb = triangles (tg_value_mesh (simp));

  TG_CHECK_MSG (nb <= na * 9 / 10 + 1 && nb > na * 8 / 10, "%lld of %lld", (long long) nb,
                (long long) na);
  tg_value_unref (full);
  tg_value_unref (simp);
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
      const uint8_t *p = (const uint8_t *) c->positions;
      for (size_t i = 0; i < 12 * (size_t) c->n_vertices; i++)
        h = (h ^ p[i]) * 1099511628211ull;
      p = (const uint8_t *) c->indices;
      for (size_t i = 0; i < 4 * (size_t) c->n_indices; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    }
  return h;
}

static void
test_threads_and_glb (void)
{
  uint64_t hashes[2];
  char path[512], cmd[1024];
  /* The program's one test folder, removed at exit. */
  const char *dir = tgtest_tmpdir ("tg-simp-");

  TG_CHECK (tg_formats_init () == 0);
  if (!dir)
    return;
  snprintf (path, sizeof path, "%s/simplified.glb", dir);
  for (int t = 0; t < 2; t++)
    {
      TgEngine *e = new_engine (t ? 4 : 1);
      TgGraph *g = island_graph (129, 32, 2, "1", "0");
      TgRegion r = world_region (g);
      TgValue *v = pull (e, g, "s", &r);
      hashes[t] = v ? mesh_hash (tg_value_mesh (v)) : (uint64_t) t;
      if (v && t == 0)
        {
          FILE *f = fopen (path, "wb");
          TgError err = { 0 };
          TG_CHECK (f && tg_io_mesh_writer ("glb") (f, tg_value_mesh (v), NULL, &err) == 0);
          if (f)
            fclose (f);
        }
      tg_value_unref (v);
      tg_graph_free (g);
      tg_engine_free (e);
    }
  TG_CHECK (hashes[0] == hashes[1]);

  snprintf (cmd, sizeof cmd, "bash '%s' '%s'", tgtest_src ("tests/common/gltf_validate.sh"), path);
  int rc = system (cmd);
  rc = WIFEXITED (rc) ? WEXITSTATUS (rc) : 1;
  if (rc == 77)
    fprintf (stderr, "  (npm missing: glTF-Validator not run)\n");
  else
    TG_CHECK_MSG (rc == 0, "glTF-Validator: exit %d", rc);
}

int
main (void)
{
  TG_RUN (test_error_bound_and_borders);
  TG_RUN (test_skirts_kept);
  TG_RUN (test_target_ratio);
  TG_RUN (test_threads_and_glb);
  return tgtest_result ();
}
