/* Tests for mesh.isosurface's LOD skirts in thin parts of the solid: a
 * skirt hangs from a chunk's open face edge into the solid, and where the
 * solid is thinner than the skirt is deep it must stop short of the far
 * side.  On a thin slab above a block (the skirt's way crosses the slab,
 * the air gap and comes back into the block), a thin torus and a slab
 * thinner than a cell, for every level: no skirt vertex outside the solid, no way down to a skirt vertex
 * that leaves the solid after entering it, and no skirt triangle crossing
 * the level's surface (in the face plane, the surface is the outline of
 * the solid's section: the open face edges of all the level's chunks).
 * The skirts still close the cracks of a thin torus drawn at mixed
 * levels, and give the same bytes on 1 and 4 threads. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "../../engine/nodes/fields.h"
#include "tggraph_test.h"
#include "tgmesh_test.h"
#include "tgtest.h"

/* A FIELD node ("s", TYPE with P1 = V1 and P2 = V2), turned by ROT. */
static TgValue *
turned_shape (TgEngine *e, const char *type, const char *p1, const char *v1, const char *p2,
              const char *v2, const char *rot)
{
  TgGraph *g = new_graph (64, 64, 17);
  int s = add_node (g, "s", type), t = add_node (g, "t", "field.transform");
  TgRegion reg = world_region (g);
  TgValue *v;

  SET (g, s, p1, v1);
  if (p2)
    SET (g, s, p2, v2);
  SET (g, t, "rotate_deg", rot);
  add_link (g, "s", "field", "t", "field");
  v = pull (e, g, "t", &reg);
  tg_graph_free (g);
  return v;
}

/* A slab 1 m thick with its underside 0.8 m above a block, both tilted:
 * the way down from the slab's top crosses it and the gap into the block. */
static TgGraph *
slab_over_block_graph (void)
{
  TgGraph *g = new_graph (64, 64, 17);
  int top = add_node (g, "top", "field.box"), low = add_node (g, "low", "field.box");
  int u = add_node (g, "u", "field.csg"), t = add_node (g, "t", "field.transform");

  SET (g, top, "size_m", "40,1,40");
  SET (g, top, "center_m", "0,1.3,0");
  SET (g, low, "size_m", "40,10,40");
  SET (g, low, "center_m", "0,-5,0");
  SET (g, u, "op", "union");
  SET (g, t, "rotate_deg", "11,0,7");
  add_link (g, "top", "field", "u", "a");
  add_link (g, "low", "field", "u", "b");
  add_link (g, "u", "field", "t", "field");
  return g;
}

static void
eval_points (const TgField *f, int64_t n, const float *p, float *val)
{
  float *x = malloc (sizeof (float) * 3 * (size_t) (n + 1)), *y = x + n + 1, *z = y + n + 1;

  for (int64_t i = 0; i < n; i++)
    {
      x[i] = p[3 * i];
      y[i] = p[3 * i + 1];
      z[i] = p[3 * i + 2];
    }
  tg_field_eval (f, (size_t) n, x, y, z, val);
  free (x);
}

/* The top of each skirt vertex of C (past BARE's N0 vertices): the
 * surface vertex next to it in a skirt triangle with its normal, bit for
 * bit (a skirt vertex copies its top's normal); -1 when none. */
static int *
skirt_tops (const TgMeshChunk *c, int n0, int64_t first_index)
{
  int nsk = c->n_vertices - n0, *top = malloc (sizeof (int) * (size_t) (nsk + 1));

  for (int i = 0; i < nsk; i++)
    top[i] = -1;
  for (int64_t t = first_index; t < c->n_indices; t += 3)
    for (int p = 0; p < 3; p++)
      for (int r = 0; r < 3; r++)
        {
          uint32_t s = c->indices[t + p], q = c->indices[t + r];

          if ((int) s >= n0 && (int) q < n0 && top[s - (uint32_t) n0] < 0
              && memcmp (c->normals + 3 * (size_t) s, c->normals + 3 * (size_t) q,
                         sizeof (float) * 3) == 0)
            top[s - (uint32_t) n0] = (int) q;
        }
  return top;
}

typedef struct
{
  int64_t vertices, outside;  /* skirt vertices; of them outside the solid */
  int64_t ways, ways_leave;   /* ways down; of them leaving the solid after entering */
  int64_t in_plane, crossing; /* skirt triangles in a face plane; of them crossing the outline */
} Defects;

/* Skirt vertices outside F's solid (value above 0) and ways down that
 * leave it (a sample above TOL after one below -TOL, 32 along the way). */
static void
count_field_defects (const TgField *f, const TgMeshChunk *c, const TgMeshChunk *b, double tol,
                     Defects *d)
{
  int n0 = b->n_vertices, nsk = c->n_vertices - n0;
  int *top = skirt_tops (c, n0, b->n_indices);
  float *p = malloc (sizeof (float) * 3 * (size_t) (33 * nsk + 1));
  float *val = malloc (sizeof (float) * (size_t) (33 * nsk + 1));

  for (int i = 0; i < nsk; i++)
    for (int j = 0; j <= 32; j++)
      for (int k = 0; k < 3; k++)
        {
          /* Sample 32 is the skirt vertex itself. */
          float s = c->positions[3 * (size_t) (n0 + i) + (size_t) k];
          float q = top[i] >= 0 ? c->positions[3 * (size_t) top[i] + (size_t) k] : s;

          p[3 * (33 * i + j) + k] = j == 32 ? s : (float) (q + (s - (double) q) * j / 32.0);
        }
  eval_points (f, 33 * (int64_t) nsk, p, val);
  for (int i = 0; i < nsk; i++)
    {
      bool was_in = false, leaves = false;

      TG_CHECK_MSG (top[i] >= 0, "%s: skirt vertex %d has no top", c->name, n0 + i);
      d->vertices++;
      d->outside += !(val[33 * i + 32] < 0.0f);
      for (int j = 1; j <= 32; j++)
        {
          was_in |= val[33 * i + j] < -tol;
          leaves |= was_in && val[33 * i + j] > tol;
        }
      d->ways++;
      d->ways_leave += leaves;
    }
  free (top);
  free (p);
  free (val);
}

/* --- the outline of the section in a chunk face plane ------------------------------- */

typedef struct
{
  int plane; /* axis * 100000 + 50000 + face index */
  float a[3], b[3];
} Outline;

static int
cmp_outline (const void *x, const void *y)
{
  int a = ((const Outline *) x)->plane, b = ((const Outline *) y)->plane;

  return (a > b) - (a < b);
}

/* The chunk face plane (of SPAN metres) holding both P and Q, or -1. */
static int
face_plane (const float *p, const float *q, double span, int *axis)
{
  for (int k = 0; k < 3; k++)
    if (p[k] == q[k])
      {
        double g = p[k] / span;

        if (fabs (g - floor (g + 0.5)) < 1e-6)
          {
            *axis = k;
            return k * 100000 + 50000 + (int) floor (g + 0.5);
          }
      }
  return -1;
}

static double
orient (const double *a, const double *b, const double *c)
{
  return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

static void
flat (const float *p, int axis, double *o)
{
  o[0] = p[(axis + 1) % 3];
  o[1] = p[(axis + 2) % 3];
}

/* Segment PQ passes through the inside of triangle T (not only touching). */
static bool
segment_enters (const double *p, const double *q, double t[3][2])
{
  double o = orient (t[0], t[1], t[2]);

  if (fabs (o) < 1e-12)
    return false;
  for (int s = 0; s < 2; s++)
    {
      const double *x = s ? q : p;

      if (orient (t[1], t[2], x) / o > 1e-4 && orient (t[2], t[0], x) / o > 1e-4
          && orient (t[0], t[1], x) / o > 1e-4)
        return true;
    }
  for (int e = 0; e < 3; e++)
    {
      const double *u = t[e], *v = t[(e + 1) % 3];
      double d1 = orient (u, v, p), d2 = orient (u, v, q), d3 = orient (p, q, u),
             d4 = orient (p, q, v);

      if (((d1 > 1e-9 && d2 < -1e-9) || (d1 < -1e-9 && d2 > 1e-9))
          && ((d3 > 1e-9 && d4 < -1e-9) || (d3 < -1e-9 && d4 > 1e-9)))
        return true;
    }
  return false;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

  return (x > y) - (x < y);
}

/* Skirt triangles of level LOD lying in a chunk face plane, and those an
 * outline edge of that plane (one not ending at the triangle's tops)
 * passes through. */
static void
count_crossings (const TgMesh *m, const TgMesh *bare, double span, int lod, Defects *d)
{
  Outline *o = NULL;
  int64_t n = 0, cap = 0;

  for (int i = 0; i < bare->n_chunks; i++)
    {
      const TgMeshChunk *c = &bare->chunks[i];
      int64_t ni = c->n_indices;
      uint64_t *keys = malloc (sizeof (uint64_t) * (size_t) (ni + 1));

      if (c->lod != lod)
        {
          free (keys);
          continue;
        }
      for (int64_t t = 0; t < ni; t++)
        {
          uint32_t a = c->indices[t], b = c->indices[t - t % 3 + (t % 3 + 1) % 3];

          keys[t] = (uint64_t) (a < b ? a : b) << 32 | (a < b ? b : a);
        }
      qsort (keys, (size_t) ni, sizeof *keys, cmp_u64);
      for (int64_t t = 0; t < ni; t++)
        {
          const float *p = c->positions + 3 * (size_t) (keys[t] >> 32);
          const float *q = c->positions + 3 * (size_t) (keys[t] & 0xffffffffu);
          int axis, plane;

          if ((t > 0 && keys[t - 1] == keys[t]) || (t + 1 < ni && keys[t + 1] == keys[t])
              || (plane = face_plane (p, q, span, &axis)) < 0)
            continue;
          if (n == cap)
            o = realloc (o, sizeof *o * (size_t) (cap = cap ? 2 * cap : 1024));
          o[n].plane = plane;
          memcpy (o[n].a, p, sizeof o[n].a);
          memcpy (o[n].b, q, sizeof o[n].b);
          n++;
        }
      free (keys);
    }
  if (n > 0)
    qsort (o, (size_t) n, sizeof *o, cmp_outline);
  for (int i = 0; i < m->n_chunks; i++)
    {
      const TgMeshChunk *c = &m->chunks[i], *b = &bare->chunks[i];
      int n0 = b->n_vertices, *top;

      if (c->lod != lod)
        continue;
      top = skirt_tops (c, n0, b->n_indices);
      for (int64_t t = b->n_indices; t < c->n_indices; t += 3)
        {
          const uint32_t *ix = c->indices + t;
          const float *tops[3];
          double tri[3][2];
          int nt = 0, axis = 0, plane, lo = 0, hi = (int) n;
          bool in_plane = true, hit = false;

          for (int p = 0; p < 3; p++)
            {
              int v = (int) ix[p] < n0 ? (int) ix[p] : top[ix[p] - (uint32_t) n0];

              if (v >= 0)
                tops[nt++] = c->positions + 3 * (size_t) v;
            }
          if (nt < 2 || (plane = face_plane (tops[0], tops[1], span, &axis)) < 0)
            continue;
          for (int p = 0; p < 3; p++)
            {
              in_plane &= c->positions[3 * (size_t) ix[p] + (size_t) axis] == tops[0][axis];
              flat (c->positions + 3 * (size_t) ix[p], axis, tri[p]);
            }
          if (!in_plane)
            continue;
          d->in_plane++;
          while (lo < hi)
            {
              int mid = (lo + hi) / 2;

              if (o[mid].plane < plane)
                lo = mid + 1;
              else
                hi = mid;
            }
          for (int s = lo; s < n && o[s].plane == plane && !hit; s++)
            {
              double pa[2], pb[2];
              bool touches = false;

              for (int q = 0; q < nt; q++)
                touches |= memcmp (o[s].a, tops[q], sizeof o[s].a) == 0
                           || memcmp (o[s].b, tops[q], sizeof o[s].b) == 0;
              if (touches)
                continue;
              flat (o[s].a, axis, pa);
              flat (o[s].b, axis, pb);
              hit = segment_enters (pa, pb, tri);
            }
          d->crossing += hit;
        }
      free (top);
    }
  free (o);
}

/* Meshes F with skirts and without, and counts the defects level by level. */
static void
check_thin (const char *what, const TgField *f, int lods)
{
  TgIsoOptions o = { .min = { -16, -16, -16 }, .max = { 16, 16, 16 }, .cell = 0.5,
                     .chunk_cells = 16, .lods = lods };
  TgMesh *m = NULL, *bare = NULL;
  TgError err = { 0 };

  TG_CHECK (tg__isosurface (f, &o, NULL, NULL, &m, NULL, &err) == 0);
  o.no_skirts = true;
  TG_CHECK (tg__isosurface (f, &o, NULL, NULL, &bare, NULL, &err) == 0);
  if (m && bare)
    {
      TG_CHECK_INT_EQ (m->n_chunks, bare->n_chunks);
      for (int lod = 0; lod < lods; lod++)
        {
          Defects d = { 0 };

          for (int i = 0; i < m->n_chunks; i++)
            if (m->chunks[i].lod == lod)
              {
                const TgMeshChunk *c = &m->chunks[i], *b = &bare->chunks[i];

                /* Skirts come after the chunk's own surface, unchanged. */
                TG_CHECK (c->n_vertices >= b->n_vertices && c->n_indices >= b->n_indices);
                TG_CHECK (memcmp (c->positions, b->positions,
                                  sizeof (float) * 3 * (size_t) b->n_vertices) == 0);
                TG_CHECK (memcmp (c->indices, b->indices,
                                  sizeof (uint32_t) * (size_t) b->n_indices) == 0);
                count_field_defects (f, c, b, 0.01 * o.cell, &d);
              }
          count_crossings (m, bare, o.cell * o.chunk_cells, lod, &d);
          printf ("%s, lods %d, level %d: %lld of %lld skirt vertices outside the solid, "
                  "%lld of %lld ways leave it, %lld of %lld skirt triangles cross the "
                  "surface\n",
                  what, lods, lod, (long long) d.outside, (long long) d.vertices,
                  (long long) d.ways_leave, (long long) d.ways, (long long) d.crossing,
                  (long long) d.in_plane);
          TG_CHECK_MSG (d.vertices > 100 && d.in_plane > 100, "%s level %d: too few skirts",
                        what, lod);
          TG_CHECK_INT_EQ (d.outside, 0);
          TG_CHECK_INT_EQ (d.ways_leave, 0);
          TG_CHECK_INT_EQ (d.crossing, 0);
        }
    }
  tg_mesh_free (m);
  tg_mesh_free (bare);
}

static void
test_skirts_stay_inside_slab_over_block (void)
{
  TgEngine *e = new_engine (1);
  TgGraph *g = slab_over_block_graph ();
  TgRegion reg = world_region (g);
  TgValue *v = pull (e, g, "t", &reg);

  if (v)
    {
      check_thin ("slab over block", tg_value_field (v), 2);
      check_thin ("slab over block", tg_value_field (v), 3);
      tg_value_unref (v);
    }
  tg_graph_free (g);
  tg_engine_free (e);
}

static void
test_skirts_stay_inside_thin_torus_and_slab (void)
{
  TgEngine *e = new_engine (1);
  TgValue *torus = turned_shape (e, "field.torus", "major_radius_m", "11", "minor_radius_m",
                                 "0.7", "60,0,25");
  TgValue *slab = turned_shape (e, "field.box", "size_m", "40,0.3,40", NULL, NULL, "17,0,23");

  if (torus)
    check_thin ("torus, tube 1.4 m", tg_value_field (torus), 2);
  if (slab)
    check_thin ("slab 0.3 m", tg_value_field (slab), 3);
  if (torus)
    tg_value_unref (torus);
  if (slab)
    tg_value_unref (slab);
  tg_engine_free (e);
}

/* Rays that leave F's solid through no triangle of M's chunks, each drawn
 * at level 0 or 1 by a checkerboard (PATTERN flips it): from 0.3 m inside
 * each seventh vertex on a chunk face, outwards in three directions. */
static int64_t
rays_escaping (const TgField *f, const TgMesh *m, double span, int pattern, int64_t *n_rays)
{
  const TgMeshChunk **use = malloc (sizeof *use * (size_t) (m->n_chunks + 1));
  int n_use = 0;
  int64_t escaped = 0;
  uint32_t seed = 5;

  *n_rays = 0;
  for (int i = 0; i < m->n_chunks; i++)
    {
      int cx, cy, cz, lod;

      if (sscanf (m->chunks[i].name, "iso_x%d_y%d_z%d_lod%d", &cx, &cy, &cz, &lod) == 4
          && lod == (((cx + cy + cz) & 1) ^ pattern))
        use[n_use++] = &m->chunks[i];
    }
  for (int u = 0; u < n_use; u++)
    for (int v = 0; v < use[u]->n_vertices; v += 7)
      {
        const float *p = use[u]->positions + 3 * v, *n = use[u]->normals + 3 * v;
        float o[3], val;
        bool on_face = false;

        for (int k = 0; k < 3; k++)
          {
            double g = p[k] / span;

            on_face |= fabs (g - floor (g + 0.5)) < 1e-6;
            o[k] = p[k] - 0.3f * n[k];
          }
        if (!on_face)
          continue;
        f->eval (f, 1, o, o + 1, o + 2, &val);
        if (!(val < -0.05f))
          continue;
        for (int r = 0; r < 3; r++)
          {
            double od[3] = { o[0], o[1], o[2] }, d[3];
            bool hit = false;

            for (int k = 0; k < 3; k++)
              d[k] = n[k] + 0.8 * (tg_hash_unit (tg_hash3 (seed++, (uint32_t) v, r, k)) - 0.5);
            for (int w = 0; w < n_use && !hit; w++)
              for (int64_t t = 0; t < use[w]->n_indices && !hit; t += 3)
                hit = tgtest_ray_hits (od, d, use[w]->positions + 3 * (size_t) use[w]->indices[t],
                                       use[w]->positions + 3 * (size_t) use[w]->indices[t + 1],
                                       use[w]->positions + 3 * (size_t) use[w]->indices[t + 2]);
            escaped += !hit;
            ++*n_rays;
          }
      }
  free (use);
  return escaped;
}

/* The skirts cut short in thin parts still close the cracks there: on a
 * torus with a 2.4 m tube (cell 0.5, lods 2, skirts 2 m deep) no ray from
 * inside gets out between chunks drawn at levels 0 and 1, whichever way
 * round; without skirts some do. */
static void
test_skirts_close_cracks_in_thin_torus (void)
{
  TgEngine *e = new_engine (1);
  TgValue *torus = turned_shape (e, "field.torus", "major_radius_m", "11", "minor_radius_m",
                                 "1.2", "60,0,25");
  TgIsoOptions o = { .min = { -16, -16, -16 }, .max = { 16, 16, 16 }, .cell = 0.5,
                     .chunk_cells = 16, .lods = 2 };
  TgMesh *m = NULL, *bare = NULL;
  TgError err = { 0 };

  if (torus)
    {
      TG_CHECK (tg__isosurface (tg_value_field (torus), &o, NULL, NULL, &m, NULL, &err) == 0);
      o.no_skirts = true;
      TG_CHECK (tg__isosurface (tg_value_field (torus), &o, NULL, NULL, &bare, NULL, &err) == 0);
    }
  for (int pattern = 0; m && bare && pattern < 2; pattern++)
    {
      int64_t n, n_bare, out = rays_escaping (tg_value_field (torus), m, 8.0, pattern, &n);
      int64_t out_bare = rays_escaping (tg_value_field (torus), bare, 8.0, pattern, &n_bare);

      printf ("thin torus, pattern %d: %lld of %lld rays escape with skirts, %lld of %lld "
              "without\n",
              pattern, (long long) out, (long long) n, (long long) out_bare, (long long) n_bare);
      TG_CHECK (n > 200);
      TG_CHECK_INT_EQ (out, 0);
      TG_CHECK_MSG (out_bare > 0, "pattern %d: no crack to close without skirts", pattern);
    }
  tg_mesh_free (m);
  tg_mesh_free (bare);
  if (torus)
    tg_value_unref (torus);
  tg_engine_free (e);
}

/* The skirts are planned for a whole level at once: the same bytes on 1
 * and 4 threads where they are cut short. */
static void
test_skirts_threads_same_bytes (void)
{
  TgGraph *g = slab_over_block_graph ();
  int iso = add_node (g, "iso", "mesh.isosurface");
  TgValue *v[2] = { NULL, NULL };

  add_link (g, "t", "field", "iso", "field");
  SET (g, iso, "min_m", "-16,-16,-16");
  SET (g, iso, "max_m", "16,16,16");
  SET (g, iso, "cell_m", "0.5");
  SET (g, iso, "chunk_cells", "16");
  SET (g, iso, "lods", "3");
  for (int k = 0; k < 2; k++)
    {
      TgEngine *e = new_engine (k ? 4 : 1);
      TgRegion r = world_region (g);

      v[k] = pull (e, g, "iso", &r);
      tg_engine_free (e);
    }
  if (v[0] && v[1])
    {
      const TgMesh *a = tg_value_mesh (v[0]), *b = tg_value_mesh (v[1]);

      TG_CHECK_INT_EQ (a->n_chunks, b->n_chunks);
      for (int i = 0; i < a->n_chunks && i < b->n_chunks; i++)
        {
          const TgMeshChunk *x = &a->chunks[i], *y = &b->chunks[i];

          TG_CHECK_INT_EQ (x->n_vertices, y->n_vertices);
          TG_CHECK_INT_EQ (x->n_indices, y->n_indices);
          if (x->n_vertices == y->n_vertices && x->n_indices == y->n_indices)
            {
              TG_CHECK (memcmp (x->positions, y->positions,
                                sizeof (float) * 3 * (size_t) x->n_vertices) == 0);
              TG_CHECK (memcmp (x->normals, y->normals,
                                sizeof (float) * 3 * (size_t) x->n_vertices) == 0);
              TG_CHECK (memcmp (x->indices, y->indices,
                                sizeof (uint32_t) * (size_t) x->n_indices) == 0);
            }
        }
    }
  for (int k = 0; k < 2; k++)
    if (v[k])
      tg_value_unref (v[k]);
  tg_graph_free (g);
}

int
main (void)
{
  TG_RUN (test_skirts_stay_inside_slab_over_block);
  TG_RUN (test_skirts_stay_inside_thin_torus_and_slab);
  TG_RUN (test_skirts_close_cracks_in_thin_torus);
  TG_RUN (test_skirts_threads_same_bytes);
  return tgtest_result ();
}
