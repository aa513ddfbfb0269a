/* Tests for mesh.isosurface: closed surfaces come out watertight and
 * consistently wound (every edge used once in each direction) with the
 * right Euler characteristic (sphere 2, torus 0) and volume (divergence
 * theorem, within 1%); box minus sphere; random volumes that exercise all
 * 256 cases and every ambiguous face; blocks that join with no duplicate
 * vertex; empty-block skipping that samples far less yet gives the same
 * bytes; corners shared between blocks, each sampled once, same bytes; vertices made in
 * AVX-512 lanes, the scalar loop's bytes; the same bytes on 1 and N threads; flat shading and face
 * normals; and errors that name the parameter. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "../../engine/nodes/fields.h"
#include "tggraph_test.h"
#include "tgmesh_test.h"
#include "tgtest.h"

/* --- mesh checks --------------------------------------------------------------------- */

typedef struct
{
  int64_t v, e, f;
  int64_t bad_edges;   /* undirected edges not used exactly once each way */
  int64_t degenerate;  /* triangles repeating a vertex */
  double volume;
} Topo;

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

static Topo
topo (const TgMeshChunk *c)
{
  Topo t = { 0 };
  int64_t nt = c->n_indices / 3;
  uint64_t *keys = malloc (sizeof (uint64_t) * (size_t) (3 * nt + 1));

  t.v = c->n_vertices;
  t.f = nt;
  for (int64_t i = 0; i < nt; i++)
    {
      const uint32_t *ix = c->indices + 3 * i;
      const float *a = c->positions + 3 * (size_t) ix[0];
      const float *b = c->positions + 3 * (size_t) ix[1];
      const float *d = c->positions + 3 * (size_t) ix[2];

      if (ix[0] == ix[1] || ix[1] == ix[2] || ix[0] == ix[2])
        t.degenerate++;
      for (int k = 0; k < 3; k++)
        {
          uint32_t p = ix[k], q = ix[(k + 1) % 3];
          /* Undirected key, the low bit records the direction. */
          uint64_t lo = p < q ? p : q, hi = p < q ? q : p;
          keys[3 * i + k] = (lo << 33) | (hi << 1) | (p < q);
        }
      t.volume += ((double) a[0] * ((double) b[1] * d[2] - (double) b[2] * d[1])
                   - (double) a[1] * ((double) b[0] * d[2] - (double) b[2] * d[0])
                   + (double) a[2] * ((double) b[0] * d[1] - (double) b[1] * d[0]))
                  / 6.0;
    }
  qsort (keys, (size_t) (3 * nt), sizeof *keys, cmp_u64);
  for (int64_t i = 0; i < 3 * nt;)
    {
      int64_t j = i;
      while (j < 3 * nt && keys[j] >> 1 == keys[i] >> 1)
        j++;
      t.e++;
      /* Exactly two uses, one each way: 0 then 1 after sorting. */
      if (j - i != 2 || (keys[i] & 1) != 0 || (keys[i + 1] & 1) != 1)
        t.bad_edges++;
      i = j;
    }
  free (keys);
  return t;
}

static int
cmp_pos (const void *a, const void *b)
{
  return memcmp (a, b, sizeof (float) * 3);
}

/* Vertices with distinct positions. */
static int64_t
unique_positions (const TgMeshChunk *c)
{
  float *p = malloc (sizeof (float) * 3 * (size_t) (c->n_vertices + 1));
  int64_t n = 0;

  memcpy (p, c->positions, sizeof (float) * 3 * (size_t) c->n_vertices);
  for (int i = 0; i < 3 * c->n_vertices; i++)
    if (p[i] == 0.0f)
      p[i] = 0.0f; /* -0 and +0 are one position */
  qsort (p, (size_t) c->n_vertices, sizeof (float) * 3, cmp_pos);
  for (int i = 0; i < c->n_vertices; i++)
    if (i == 0 || memcmp (p + 3 * i, p + 3 * (i - 1), sizeof (float) * 3) != 0)
      n++;
  free (p);
  return n;
}

static TgHash
mesh_hash (const TgMesh *m)
{
  TgHasher h;

  tg_hasher_init (&h);
  for (int i = 0; i < m->n_chunks; i++)
    {
      const TgMeshChunk *c = &m->chunks[i];
      tg_hasher_u64 (&h, (uint64_t) c->n_vertices);
      tg_hasher_u64 (&h, (uint64_t) c->n_indices);
      tg_hasher_bytes (&h, c->positions, sizeof (float) * 3 * (size_t) c->n_vertices);
      tg_hasher_bytes (&h, c->normals, sizeof (float) * 3 * (size_t) c->n_vertices);
      tg_hasher_bytes (&h, c->indices, sizeof (uint32_t) * (size_t) c->n_indices);
    }
  return tg_hasher_finish (&h);
}

/* A and B are the same bytes, and A's first chunk one closed surface of
 * genus 0; returns whether all of that held. */
static bool
same_closed_mesh (const TgMesh *a, const TgMesh *b)
{
  TgHash ha = mesh_hash (a), hb = mesh_hash (b);
  Topo t = topo (&a->chunks[0]);
  bool same = ha.a == hb.a && ha.b == hb.b;

  TG_CHECK (same);
  TG_CHECK_INT_EQ (t.bad_edges, 0);
  TG_CHECK_INT_EQ (t.v - t.e + t.f, 2);
  return same && t.bad_edges == 0 && t.v - t.e + t.f == 2;
}

/* --- graphs ---------------------------------------------------------------------------- */

static TgGraph *
small_world (void)
{
  return new_graph (64, 64, 17);
}

static void
set_box (TgGraph *g, int iso, double lo, double hi, double cell)
{
  char a[128], b[128], c[64];

  snprintf (a, sizeof a, "%.17g,%.17g,%.17g", lo, lo, lo);
  snprintf (b, sizeof b, "%.17g,%.17g,%.17g", hi, hi, hi);
  snprintf (c, sizeof c, "%.17g", cell);
  SET (g, iso, "min_m", a);
  SET (g, iso, "max_m", b);
  SET (g, iso, "cell_m", c);
}

static TgValue *
pull_mesh (TgGraph *g, int threads)
{
  TgEngine *e = new_engine (threads);
  TgRegion r = world_region (g);
  TgValue *v = pull (e, g, "iso", &r);

  tg_engine_free (e);
  return v;
}

static void
test_sphere_watertight_euler_volume (void)
{
  TgGraph *g = small_world ();
  double r = 10.0, c[3] = { 0.37, -0.21, 0.13 };
  int s = add_node (g, "s", "field.sphere");
  int iso = add_node (g, "iso", "mesh.isosurface");
  TgValue *v;

  SET (g, s, "center_m", "0.37,-0.21,0.13");
  SET (g, s, "radius_m", "10");
  set_box (g, iso, -12.0, 12.0, r / 32.0);
  add_link (g, "s", "field", "iso", "field");
  v = pull_mesh (g, 0);
  if (v)
    {
      const TgMeshChunk *ch = &tg_value_mesh (v)->chunks[0];
      Topo t = topo (ch);
      double want = 4.0 / 3.0 * M_PI * r * r * r;
      double worst = 0.0, worst_n = 1.0;

      TG_CHECK_INT_EQ (tg_value_mesh (v)->n_chunks, 1);
      TG_CHECK (t.f > 10000);
      TG_CHECK_INT_EQ (t.bad_edges, 0);
      TG_CHECK_INT_EQ (t.degenerate, 0);
      TG_CHECK_INT_EQ (t.v - t.e + t.f, 2);
      TG_CHECK_MSG (fabs (t.volume - want) < 0.01 * want, "volume %g, want %g", t.volume, want);
      TG_CHECK_INT_EQ (unique_positions (ch), ch->n_vertices);
      /* On the sphere and with the gradient as normal. */
      for (int i = 0; i < ch->n_vertices; i++)
        {
          const float *p = ch->positions + 3 * i, *n = ch->normals + 3 * i;
          double d[3] = { p[0] - c[0], p[1] - c[1], p[2] - c[2] };
          double len = sqrt (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
          double dot = (d[0] * n[0] + d[1] * n[1] + d[2] * n[2]) / len;

          worst = fmax (worst, fabs (len - r));
          worst_n = fmin (worst_n, dot);
        }
      /* Linear interpolation of a sphere's distance: about h^2 / 8r. */
      TG_CHECK_MSG (worst < 0.02 * r / 32.0, "vertex %g m off the sphere", worst);
      TG_CHECK_MSG (worst_n > 0.999, "normal off the radius: dot %g", worst_n);
      tg_value_unref (v);
    }
  tg_graph_free (g);
}

static void
test_torus_euler_zero (void)
{
  TgGraph *g = small_world ();
  int s = add_node (g, "t", "field.torus");
  int iso = add_node (g, "iso", "mesh.isosurface");
  TgValue *v;

  SET (g, s, "center_m", "0.11,0.05,-0.07");
  SET (g, s, "major_radius_m", "8");
  SET (g, s, "minor_radius_m", "3");
  set_box (g, iso, -12.0, 12.0, 0.2);
  add_link (g, "t", "field", "iso", "field");
  v = pull_mesh (g, 0);
  if (v)
    {
      Topo t = topo (&tg_value_mesh (v)->chunks[0]);
      double want = 2.0 * M_PI * M_PI * 8.0 * 9.0;

      TG_CHECK_INT_EQ (t.bad_edges, 0);
      TG_CHECK_INT_EQ (t.v - t.e + t.f, 0);
      TG_CHECK_MSG (fabs (t.volume - want) < 0.01 * want, "volume %g, want %g", t.volume, want);
      tg_value_unref (v);
    }
  tg_graph_free (g);
}

/* A 16 m box minus a 6 m sphere centred on its top corner: an eighth of
 * the ball is gone. */
static void
test_box_minus_sphere (void)
{
  TgGraph *g = small_world ();
  int b = add_node (g, "b", "field.box");
  int s = add_node (g, "s", "field.sphere");
  int c = add_node (g, "c", "field.csg");
  int iso = add_node (g, "iso", "mesh.isosurface");
  TgValue *v;

  SET (g, b, "center_m", "0.013,0.021,0.017");
  SET (g, b, "size_m", "16,16,16");
  SET (g, s, "center_m", "8.013,8.021,8.017");
  SET (g, s, "radius_m", "6");
  SET (g, c, "op", "subtraction");
  set_box (g, iso, -10.0, 10.0, 0.125);
  add_link (g, "b", "field", "c", "a");
  add_link (g, "s", "field", "c", "b");
  add_link (g, "c", "field", "iso", "field");
  v = pull_mesh (g, 0);
  if (v)
    {
      Topo t = topo (&tg_value_mesh (v)->chunks[0]);
      double want = 16.0 * 16.0 * 16.0 - 4.0 / 3.0 * M_PI * 216.0 / 8.0;

      TG_CHECK_INT_EQ (t.bad_edges, 0);
      TG_CHECK_INT_EQ (t.v - t.e + t.f, 2);
      TG_CHECK_MSG (fabs (t.volume - want) < 0.01 * want, "volume %g, want %g", t.volume, want);
      tg_value_unref (v);
    }
  tg_graph_free (g);
}

/* --- random volumes --------------------------------------------------------------------- */

typedef struct
{
  uint32_t seed;
  float inv_cell, lo, hi, p_inside;
} RandomVol;

/* Random values at the lattice points, positive on the box's shell, so
 * every case and every ambiguous face turns up and the surface closes. */
static void
random_eval (const TgField *f, int n, const float *x, const float *y, const float *z, float *out)
{
  const RandomVol *r = f->data;

  for (int i = 0; i < n; i++)
    {
      int ix = (int) lrintf ((x[i] - r->lo) * r->inv_cell);
      int iy = (int) lrintf ((y[i] - r->lo) * r->inv_cell);
      int iz = (int) lrintf ((z[i] - r->lo) * r->inv_cell);
      int last = (int) lrintf ((r->hi - r->lo) * r->inv_cell);
      float u = tg_hash_unit (tg_hash3 (r->seed, ix, iy, iz));

      if (ix <= 0 || iy <= 0 || iz <= 0 || ix >= last || iy >= last || iz >= last)
        out[i] = 1.0f;
      else
        out[i] = u < r->p_inside ? -0.25f - u : 0.25f + u; /* never on the iso level */
    }
}

static void
test_random_volumes_watertight (void)
{
  int seen[256] = { 0 };
  int n_seen = 0;

  for (int k = 0; k < 12; k++)
    {
      RandomVol rv = { .seed = 1234u + (uint32_t) k, .inv_cell = 1.0f, .lo = 0.0f, .hi = 24.0f,
                       .p_inside = 0.2f + 0.05f * (float) k };
      TgField f = { .eval = random_eval, .data = &rv, .lipschitz = 0.0f };
      TgIsoOptions o = { .min = { 0, 0, 0 }, .max = { 24, 24, 24 }, .cell = 1.0,
                         .normals = TG__ISO_NORMALS_FACES };
      TgMesh *m = NULL;
      TgError err = { 0 };
      int rc = tg__isosurface (&f, &o, NULL, NULL, &m, NULL, &err);

      TG_CHECK_MSG (rc == 0, "%s", err.message);
      if (m)
        {
          Topo t = topo (&m->chunks[0]);
          TG_CHECK_MSG (t.bad_edges == 0, "seed %d: %lld edges not shared by two triangles",
                        k, (long long) t.bad_edges);
          TG_CHECK_INT_EQ (t.degenerate, 0);
          TG_CHECK_MSG (t.volume > 0.0, "volume %g: inside-out", t.volume);
          tg_mesh_free (m);
        }
      /* Which cases the volume held. */
      for (int z = 0; z < 24; z++)
        for (int y = 0; y < 24; y++)
          for (int x = 0; x < 24; x++)
            {
              int cs = 0;
              for (int c = 0; c < 8; c++)
                {
                  float px = (float) (x + (c & 1)), py = (float) (y + (c >> 1 & 1)),
                        pz = (float) (z + (c >> 2 & 1)), v;
                  random_eval (&f, 1, &px, &py, &pz, &v);
                  cs |= (v < 0.0f) << c;
                }
              if (!seen[cs]++)
                n_seen++;
            }
    }
  TG_CHECK_MSG (n_seen == 256, "only %d of 256 cases seen", n_seen);
}

/* --- blocks, skipping, threads ------------------------------------------------------------ */

typedef struct
{
  float c[3], r;
  atomic_llong calls;
} CountSphere;

static void
count_sphere_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                   float *out)
{
  CountSphere *s = f->data;

  atomic_fetch_add (&s->calls, n);
  for (int i = 0; i < n; i++)
    {
      float dx = x[i] - s->c[0], dy = y[i] - s->c[1], dz = z[i] - s->c[2];
      out[i] = sqrtf (dx * dx + dy * dy + dz * dz) - s->r;
    }
}

static void
test_skipping_samples_less_same_bytes (void)
{
  CountSphere cs = { .c = { 3.1f, -2.3f, 1.7f }, .r = 40.0f };
  TgField f = { .eval = count_sphere_eval, .data = &cs, .lipschitz = 1.0f };
  /* Face normals: the field is sampled at the corners only. */
  TgIsoOptions o = { .min = { -64, -64, -64 }, .max = { 64, 64, 64 }, .cell = 1.0,
                     .normals = TG__ISO_NORMALS_FACES };
  TgMesh *a = NULL, *b = NULL;
  TgIsoStats sa, sb;
  TgError err = { 0 };
  long long calls_skip, calls_all;

  atomic_init (&cs.calls, 0);
  TG_CHECK (tg__isosurface (&f, &o, NULL, NULL, &a, &sa, &err) == 0);
  calls_skip = atomic_load (&cs.calls);
  o.no_skip = true;
  atomic_store (&cs.calls, 0);
  TG_CHECK (tg__isosurface (&f, &o, NULL, NULL, &b, &sb, &err) == 0);
  calls_all = atomic_load (&cs.calls);
  TG_CHECK_INT_EQ (sa.blocks, 64);
  TG_CHECK_MSG (sa.blocks_skipped > 0, "no block skipped");
  TG_CHECK_MSG (sa.subblocks_skipped > 1000, "%lld sub-blocks skipped",
                (long long) sa.subblocks_skipped);
  TG_CHECK_INT_EQ (sb.blocks_skipped, 0);
  /* Without skipping every block samples its 33^3 corners. */
  TG_CHECK_INT_EQ (sb.evaluations, 64LL * 33 * 33 * 33);
  TG_CHECK_INT_EQ (calls_all, 64LL * 33 * 33 * 33);
  TG_CHECK_MSG (calls_skip * 3 < calls_all, "skipping sampled %lld of %lld", calls_skip,
                calls_all);
  if (a && b && same_closed_mesh (a, b))
    /* Many blocks meet on this sphere; no crossing is made twice. */
    TG_CHECK_INT_EQ (unique_positions (&a->chunks[0]), a->chunks[0].n_vertices);
  tg_mesh_free (a);
  tg_mesh_free (b);
}

/* With gradient normals a field without a grid path is sampled in runs of
 * rows, around the live sub-blocks and one sample beyond (the normals'
 * differences); the corners of skipped sub-blocks are left as an earlier
 * block wrote them.  The bytes are those of sampling every corner: no
 * marched cell or normal reads a corner that was not sampled, and each
 * sample is taken once. */
static void
test_skipping_gradient_same_bytes (void)
{
  CountSphere cs = { .c = { 3.1f, -2.3f, 1.7f }, .r = 40.0f };
  TgField f = { .eval = count_sphere_eval, .data = &cs, .lipschitz = 1.0f };
  TgIsoOptions o = { .min = { -64, -64, -64 }, .max = { 64, 64, 64 }, .cell = 1.0 };
  TgMesh *a = NULL, *b = NULL;
  TgIsoStats sa, sb;
  TgError err = { 0 };
  long long calls_skip;

  atomic_init (&cs.calls, 0);
  TG_CHECK (tg__isosurface (&f, &o, NULL, NULL, &a, &sa, &err) == 0);
  calls_skip = atomic_load (&cs.calls);
  o.no_skip = true;
  TG_CHECK (tg__isosurface (&f, &o, NULL, NULL, &b, &sb, &err) == 0);
  TG_CHECK_MSG (sa.subblocks_skipped > 1000, "%lld sub-blocks skipped",
                (long long) sa.subblocks_skipped);
  /* The skip tests (each block's centre and its 64 sub-blocks'), then each
   * corner sampled once. */
  TG_CHECK_INT_EQ (calls_skip, sa.evaluations + 64 * (1 + 64));
  TG_CHECK_INT_EQ (sb.evaluations, 64LL * 35 * 35 * 35);
  TG_CHECK_MSG (sa.evaluations * 3 < sb.evaluations, "skipping sampled %lld of %lld",
                (long long) sa.evaluations, (long long) sb.evaluations);
  if (a && b)
    same_closed_mesh (a, b);
  tg_mesh_free (a);
  tg_mesh_free (b);
}

/* --- corners shared between blocks --------------------------------------------------------- */

/* A field with a grid path is sampled a wave at a time into a slab, each
 * corner once: the bytes are those of blocks sampling their own corners,
 * with skipping or without, gradient or face normals, flat shading,
 * chunks and levels, a wave a layer of blocks or a row (a layer too wide
 * for the slab); and on 1 and 3 threads. */
static void
volume_eval (const TgField *f, int n, const float *x, const float *y, const float *z, float *out)
{
  tg__volume_eval (f->data, n, x, y, z, out);
}

static int
volume_grid (const TgField *f, const TgFieldGrid *g, float *out, size_t sy, size_t sz,
             TgFieldScratch *scratch)
{
  (void) scratch;
  return tg__volume_grid (f->data, g, out, sy, sz);
}

static void
test_shared_corners_same_bytes (void)
{
  static const struct
  {
    double lo[3], hi[3], cell, iso;
    int normals, shading, chunk_cells, lods;
    bool no_skip;
    long long evals; /* with no_skip: each corner and its border once */
  } cases[] = {
    { { 0, 0, 0 }, { 70, 50, 30 }, 1.0, 0.0, 0, 0, 0, 1, true, 73LL * 53 * 33 },
    { { -40, -40, -40 }, { 40, 40, 40 }, 1.0, 0.0, 0, 0, 0, 1, true, 83LL * 83 * 83 },
    { { -10, -10, -10 }, { 10, 10, 10 }, 0.25, 3.5, 0, 0, 0, 1, false, 0 },
    { { -10, -10, -10 }, { 10, 10, 10 }, 0.25, -3.0, TG__ISO_NORMALS_FACES, 0, 0, 1, false, 0 },
    { { -30, -31, -29 }, { 37, 33, 35 }, 0.5, 1.0, 0, TG__ISO_FLAT, 0, 1, false, 0 },
    { { -30, -31, -29 }, { 37, 33, 35 }, 0.5, 1.0, 0, 0, 32, 2, false, 0 },
    /* 353^2 x 35 points pass the slab's 4 Mi: a wave is a row. */
    { { 0, 0, 0 }, { 350, 350, 10 }, 1.0, 0.0, 0, 0, 0, 1, true, 353LL * (10 * 35 + 33) * 13 },
    { { 0, 0, 0 }, { 87.5, 87.5, 2.5 }, 0.25, 3.5, 0, 0, 0, 1, false, 0 },
    /* A layer one block high is a row too, and the next layer takes its
     * top corners: each corner once. */
    { { 0, 0, 0 }, { 350, 10, 350 }, 1.0, 0.0, 0, 0, 0, 1, true, 353LL * 13 * 353 },
  };
  TgGraph *g = small_world ();
  int n = add_node (g, "n", "field.noise"), iso = add_node (g, "iso", "mesh.isosurface");
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgValue *v, *v1, *v3;

  SET (g, n, "amplitude_m", "10");
  SET (g, n, "scale_m", "16");
  SET (g, n, "octaves", "3");
  v = pull (e, g, "n", &r);
  tg_engine_free (e);
  if (v == NULL)
    {
      tg_graph_free (g);
      return;
    }
  TG_CHECK (tg_value_field (v)->eval_grid != NULL);
  for (int i = 0; i < TG_N_ELEMENTS (cases); i++)
    {
      TgIsoOptions o = { .cell = cases[i].cell, .iso = cases[i].iso,
                         .normals = cases[i].normals, .shading = cases[i].shading,
                         .chunk_cells = cases[i].chunk_cells, .lods = cases[i].lods,
                         .no_skip = cases[i].no_skip };
      TgMesh *a = NULL, *b = NULL;
      TgIsoStats sa, sb;
      TgError err = { 0 };

      memcpy (o.min, cases[i].lo, sizeof o.min);
      memcpy (o.max, cases[i].hi, sizeof o.max);
      TG_CHECK (tg__isosurface (tg_value_field (v), &o, NULL, NULL, &a, &sa, &err) == 0);
      o.no_share = true;
      TG_CHECK (tg__isosurface (tg_value_field (v), &o, NULL, NULL, &b, &sb, &err) == 0);
      if (a && b)
        {
          TgHash ha = mesh_hash (a), hb = mesh_hash (b);
          int64_t idx = 0;

          for (int k = 0; k < a->n_chunks; k++)
            idx += a->chunks[k].n_indices;
          TG_CHECK_MSG (idx > 1000, "case %d: %lld indices", i, (long long) idx);
          TG_CHECK_MSG (ha.a == hb.a && ha.b == hb.b, "case %d: shared corners change the mesh",
                        i);
          TG_CHECK_MSG (sa.evaluations < sb.evaluations, "case %d: %lld samples shared, %lld not",
                        i, (long long) sa.evaluations, (long long) sb.evaluations);
          if (cases[i].evals)
            TG_CHECK_INT_EQ (sa.evaluations, cases[i].evals);
        }
      tg_mesh_free (a);
      tg_mesh_free (b);
    }
  tg_value_unref (v);

  /* A sampled ball as a dense volume (field.slices' grid path): most
   * blocks and sub-blocks skip, on the voxels and between them. */
  {
    enum { NV = 100 };
    float *vox = malloc (sizeof (float) * NV * NV * NV);
    TgVolume vol = { .v = vox, .st = { 1, NV, NV * NV }, .n = { NV, NV, NV },
                     .inv = { 1, 1, 1 } };
    TgField f = { .eval = volume_eval, .eval_grid = volume_grid, .data = &vol };

    for (int k = 0; k < NV; k++)
      for (int j = 0; j < NV; j++)
        for (int i = 0; i < NV; i++)
          vox[(k * NV + j) * NV + i] = -(float) (sqrt ((i - 51.3) * (i - 51.3) + (j - 48.8) * (j - 48.8)
                                                       + (k - 50.1) * (k - 50.1)) - 30.0);
    f.lipschitz = (float) (tg__volume_scan (&vol, false) * 1.001 + 1e-6);
    for (int pass = 0; pass < 2; pass++)
      {
        TgIsoOptions o = { .min = { 0, 0, 0 }, .max = { 99, 99, 99 }, .cell = pass ? 0.7 : 1.0 };
        TgMesh *a = NULL, *b = NULL;
        TgIsoStats sa, sb;
        TgError err = { 0 };

        TG_CHECK (tg__isosurface (&f, &o, NULL, NULL, &a, &sa, &err) == 0);
        o.no_share = true;
        TG_CHECK (tg__isosurface (&f, &o, NULL, NULL, &b, &sb, &err) == 0);
        if (a && b)
          {
            TgHash ha = mesh_hash (a), hb = mesh_hash (b);
            Topo t = topo (&a->chunks[0]);

            TG_CHECK_MSG (ha.a == hb.a && ha.b == hb.b, "volume pass %d: shared corners change "
                          "the mesh", pass);
            TG_CHECK_INT_EQ (t.bad_edges, 0);
            TG_CHECK_INT_EQ (t.v - t.e + t.f, 2);
            TG_CHECK_MSG (sa.blocks_skipped > 0 && sa.subblocks_skipped > sa.blocks * 16,
                          "volume pass %d: %lld blocks, %lld skipped, %lld sub-blocks", pass,
                          (long long) sa.blocks, (long long) sa.blocks_skipped,
                          (long long) sa.subblocks_skipped);
            /* A wave samples the slab only when that takes fewer samples. */
            TG_CHECK_MSG (sa.evaluations <= sb.evaluations, "volume pass %d: %lld samples "
                          "shared, %lld not", pass, (long long) sa.evaluations,
                          (long long) sb.evaluations);
            printf ("volume pass %d: %lld samples shared, %lld not\n", pass,
                    (long long) sa.evaluations, (long long) sb.evaluations);
          }
        tg_mesh_free (a);
        tg_mesh_free (b);
      }
    free (vox);
  }

  add_link (g, "n", "field", "iso", "field");
  SET (g, iso, "min_m", "-70,-40,-50");
  SET (g, iso, "max_m", "60,45,55");
  SET (g, iso, "cell_m", "0.75");
  SET (g, iso, "iso", "2.5");
  v1 = pull_mesh (g, 1);
  v3 = pull_mesh (g, 3);
  if (v1 && v3)
    {
      TgHash h1 = mesh_hash (tg_value_mesh (v1)), h3 = mesh_hash (tg_value_mesh (v3));

      TG_CHECK_MSG (h1.a == h3.a && h1.b == h3.b, "1 and 3 threads differ");
    }
  if (v1)
    tg_value_unref (v1);
  if (v3)
    tg_value_unref (v3);
  tg_graph_free (g);
}

/* --- a dense volume read in place --------------------------------------------------------- */

static int
volume_view (const TgField *f, const TgFieldGrid *g, TgFieldView *view)
{
  return tg__volume_view (f->data, g, view);
}

/* Three threads taking GRAIN-sized chunks of [0, N) as they come (a
 * TgIsoParallel, as the engine's pool runs them). */
typedef struct
{
  atomic_int next;
  int n, grain;
  void (*fn) (void *, int, int);
  void *user;
} Par3;

static void *
par3_worker (void *arg)
{
  Par3 *p = arg;

  for (int b; (b = atomic_fetch_add (&p->next, p->grain)) < p->n;)
    p->fn (p->user, b, b + p->grain < p->n ? b + p->grain : p->n);
  return NULL;
}

static int
par3 (void *ctx, int n, int grain, void (*fn) (void *, int, int), void *user)
{
  Par3 p = { .n = n, .grain = grain, .fn = fn, .user = user };
  pthread_t t[3];

  (void) ctx;
  atomic_init (&p.next, 0);
  for (int i = 0; i < 3; i++)
    pthread_create (&t[i], NULL, par3_worker, &p);
  for (int i = 0; i < 3; i++)
    pthread_join (t[i], NULL);
  return 0;
}

/* A field with a view (a dense volume, as field.slices: slices up y, rows
 * running down z, a level of 0.45) is marched where its voxels lie, no
 * corner sampled: the bytes of blocks copying their corners (no_share),
 * in vector and scalar vertices alike, for a box on the voxels' hull
 * (blocks whose border lies outside), a box past them on every side
 * (corners outside, at the level), one inside them, other levels and
 * normals, flat shading, chunks, on one thread and on three; off the
 * voxels there is no view. */
static void
test_volume_view_same_bytes (void)
{
  enum { NX = 70, NY = 45, NZ = 50 };
  static const struct
  {
    double lo[3], hi[3], cell, iso;
    int normals, shading, chunk_cells, lods;
    bool view;
  } cases[] = {
    { { 10, -4, 50 }, { 44.5, 18, 74.5 }, 0.5, 0.0, 0, 0, 0, 1, true },
    { { 8, -6, 48 }, { 47, 20.5, 77 }, 0.5, 0.0, 0, 0, 0, 1, true },
    { { 14, 0, 55 }, { 40, 15, 70 }, 0.5, 0.0, 0, 0, 0, 1, true },
    { { 10, -4, 50 }, { 44.5, 18, 74.5 }, 0.5, -0.1, TG__ISO_NORMALS_FACES, 0, 0, 1, true },
    { { 10, -4, 50 }, { 44.5, 18, 74.5 }, 0.5, 0.15, 0, TG__ISO_FLAT, 0, 1, true },
    { { 10, -4, 50 }, { 44.5, 18, 74.5 }, 0.5, 0.0, 0, 0, 16, 2, false },
    { { 10, -4, 50 }, { 44.5, 18, 74.5 }, 0.25, 0.0, 0, 0, 0, 1, false },
  };
  float *vox = malloc (sizeof (float) * NX * NY * NZ);
  TgVolume vol = { .v = vox + (NZ - 1) * NX, .st = { 1, NX * NZ, -NX }, .n = { NX, NY, NZ },
                   .org = { 10, -4, 50 }, .inv = { 2, 2, 2 }, .level = 0.45f };
  TgField f = { .eval = volume_eval, .eval_grid = volume_grid, .grid_cheap = true,
                .view = volume_view, .data = &vol };

  if (vox == NULL)
    return;
  /* A wavy ball's solidness, 0 .. 1. */
  for (int k = 0; k < NZ; k++)
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++)
        {
          double x = 10 + 0.5 * i, y = -4 + 0.5 * j, z = 50 + 0.5 * k;
          double r = sqrt ((x - 27) * (x - 27) + (y - 7) * (y - 7) + (z - 62) * (z - 62));
          double d = 0.5 + 0.12 * (14.0 - r) + 0.15 * sin (0.9 * x) * cos (0.7 * y);

          vox[(NZ - 1 - k) * NX + j * NX * NZ + i] = (float) (d < 0 ? 0 : d > 1 ? 1 : d);
        }
  f.lipschitz = (float) (tg__volume_scan (&vol, true) * 1.001 + 1e-6);
  for (int i = 0; i < TG_N_ELEMENTS (cases); i++)
    {
      TgIsoOptions o = { .cell = cases[i].cell, .iso = cases[i].iso,
                         .normals = cases[i].normals, .shading = cases[i].shading,
                         .chunk_cells = cases[i].chunk_cells, .lods = cases[i].lods };
      TgMesh *a = NULL, *b = NULL, *c = NULL, *d = NULL;
      TgIsoStats sa, sb;
      TgError err = { 0 };

      memcpy (o.min, cases[i].lo, sizeof o.min);
      memcpy (o.max, cases[i].hi, sizeof o.max);
      TG_CHECK (tg__isosurface (&f, &o, NULL, NULL, &a, &sa, &err) == 0);
      TG_CHECK (tg__isosurface (&f, &o, par3, NULL, &d, NULL, &err) == 0);
      setenv ("TG_ISO_ISA", "generic", 1);
      TG_CHECK (tg__isosurface (&f, &o, NULL, NULL, &c, NULL, &err) == 0);
      unsetenv ("TG_ISO_ISA");
      o.no_share = true;
      TG_CHECK (tg__isosurface (&f, &o, NULL, NULL, &b, &sb, &err) == 0);
      if (a && b && c && d)
        {
          TgHash ha = mesh_hash (a), hb = mesh_hash (b), hc = mesh_hash (c), hd = mesh_hash (d);
          int64_t idx = 0;

          for (int k = 0; k < a->n_chunks; k++)
            idx += a->chunks[k].n_indices;
          TG_CHECK_MSG (idx > 3000, "case %d: %lld indices", i, (long long) idx);
          TG_CHECK_MSG (ha.a == hb.a && ha.b == hb.b, "case %d: the view changes the mesh", i);
          TG_CHECK_MSG (ha.a == hc.a && ha.b == hc.b, "case %d: vector and scalar vertices "
                        "differ", i);
          TG_CHECK_MSG (ha.a == hd.a && ha.b == hd.b, "case %d: 1 and 3 threads differ", i);
          TG_CHECK_MSG (sb.evaluations > 0, "case %d: no_share sampled nothing", i);
          if (cases[i].view)
            TG_CHECK_MSG (sa.evaluations == 0, "case %d: %lld corners sampled, not read in place",
                          i, (long long) sa.evaluations);
          else
            TG_CHECK_MSG (sa.evaluations > 0, "case %d: off the voxels nothing sampled", i);
        }
      tg_mesh_free (a);
      tg_mesh_free (b);
      tg_mesh_free (c);
      tg_mesh_free (d);
    }
  free (vox);
}

/* --- the vector vertices ------------------------------------------------------------------ */

/* A field whose normals come out in every way block_vertices can make
 * them: a wavy ball (ordinary), a comb along x where, on a lattice of
 * half metres, each corner's neighbours are equal (a zero gradient, left
 * for the faces), and a
 * slope so steep that the central differences overflow (inf - inf: no
 * finite length, left zero too). */
static void
odd_normals_eval (const TgField *f, int n, const float *x, const float *y, const float *z,
                  float *out)
{
  (void) f;
  for (int i = 0; i < n; i++)
    {
      float r = sqrtf (x[i] * x[i] + y[i] * y[i] + z[i] * z[i]);

      if (x[i] < -6.0f) /* corners at half metres alternate */
        out[i] = ((int) floorf (2.0f * x[i]) & 1) ? 1.0f : -1.0f;
      else if (x[i] > 6.0f)
        out[i] = (z[i] - 0.37f) * 3.0e38f;
      else
        out[i] = 9.5f - r + 0.8f * sinf (1.3f * y[i]) * cosf (0.9f * z[i]);
    }
}

/* The vertices made sixteen at a time in AVX-512 lanes (where the CPU
 * has it) are the scalar loop's bytes (TG_ISO_ISA=generic): gradient,
 * face and flat normals, a level with chunks, a noise field through the
 * shared slab, and odd_normals_eval's zero and overflowing gradients. */
static void
test_vector_vertices_same_bytes (void)
{
  static const struct
  {
    int field; /* 0: odd_normals_eval, 1: field.noise */
    double lo, hi, cell, iso;
    int normals, shading, chunk_cells, lods;
  } cases[] = {
    { 0, -12.0, 12.0, 0.5, 0.0, 0, 0, 0, 1 },
    { 0, -12.0, 12.0, 0.37, 0.25, 0, 0, 0, 1 },
    { 0, -12.0, 12.0, 0.5, 0.0, TG__ISO_NORMALS_FACES, 0, 0, 1 },
    { 0, -12.0, 12.0, 0.5, 0.0, 0, TG__ISO_FLAT, 0, 1 },
    { 0, -12.0, 12.0, 0.5, 0.0, 0, 0, 16, 2 },
    { 1, -30.0, 37.0, 0.5, 1.0, 0, 0, 0, 1 },
  };
  TgGraph *g = small_world ();
  int n = add_node (g, "n", "field.noise");
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgValue *noise;
  TgField odd = { .eval = odd_normals_eval, .lipschitz = 0.0f };

  SET (g, n, "amplitude_m", "10");
  SET (g, n, "scale_m", "16");
  SET (g, n, "octaves", "3");
  noise = pull (e, g, "n", &r);
  tg_engine_free (e);
  for (int i = 0; i < TG_N_ELEMENTS (cases) && noise; i++)
    {
      TgIsoOptions o = { .min = { cases[i].lo, cases[i].lo, cases[i].lo },
                         .max = { cases[i].hi, cases[i].hi, cases[i].hi },
                         .cell = cases[i].cell, .iso = cases[i].iso,
                         .normals = cases[i].normals, .shading = cases[i].shading,
                         .chunk_cells = cases[i].chunk_cells, .lods = cases[i].lods };
      const TgField *f = cases[i].field ? tg_value_field (noise) : &odd;
      TgMesh *a = NULL, *b = NULL;
      TgError err = { 0 };

      unsetenv ("TG_ISO_ISA");
      TG_CHECK (tg__isosurface (f, &o, NULL, NULL, &a, NULL, &err) == 0);
      setenv ("TG_ISO_ISA", "generic", 1);
      TG_CHECK (tg__isosurface (f, &o, NULL, NULL, &b, NULL, &err) == 0);
      unsetenv ("TG_ISO_ISA");
      if (a && b)
        {
          TgHash ha = mesh_hash (a), hb = mesh_hash (b);
          int64_t nv = 0, zero = 0;

          for (int k = 0; k < a->n_chunks; k++)
            nv += a->chunks[k].n_vertices;
          /* The odd field's gradient normals: some zero ones were filled
           * from the faces (none is left zero). */
          for (int k = 0; k < a->n_chunks; k++)
            for (int64_t q = 0; q < a->chunks[k].n_vertices; q++)
              zero += a->chunks[k].normals[3 * q] == 0.0f && a->chunks[k].normals[3 * q + 1] == 0.0f
                      && a->chunks[k].normals[3 * q + 2] == 0.0f;
          TG_CHECK_MSG (nv > 2000, "case %d: %lld vertices", i, (long long) nv);
          TG_CHECK_INT_EQ (zero, 0);
          TG_CHECK_MSG (ha.a == hb.a && ha.b == hb.b, "case %d: vector and scalar vertices differ",
                        i);
        }
      tg_mesh_free (a);
      tg_mesh_free (b);
    }
  if (noise)
    tg_value_unref (noise);
  tg_graph_free (g);
}

/* --- welding across blocks, by table or by hash ------------------------------------------- */

/* A ball across the faces of the first 2^3 blocks (32 cells), in a box of
 * 64^2 x 72 cells and in one of 520^2 x 72 whose lattice planes are too
 * large for the stitcher's face tables (it hashes the edges instead):
 * the blocks around the ball come in the same order, so the two meshes
 * are the same bytes, and closed. */
static void
ball_eval (const TgField *f, int n, const float *x, const float *y, const float *z, float *out)
{
  (void) f;
  for (int i = 0; i < n; i++)
    {
      double dx = x[i] - 32.3, dy = y[i] - 31.7, dz = z[i] - 32.2;

      out[i] = (float) (sqrt (dx * dx + dy * dy + dz * dz) - 20.0);
    }
}

static void
test_face_tables_and_hash_weld_alike (void)
{
  TgField f = { .eval = ball_eval, .lipschitz = 1.0f };
  TgHash h[2];
  int64_t nv[2] = { 0, 0 };

  for (int wide = 0; wide < 2; wide++)
    {
      double side = wide ? 520.0 : 64.0;
      TgIsoOptions o = { .min = { 0, 0, 0 }, .max = { side, side, 72 }, .cell = 1.0 };
      TgMesh *m = NULL;
      TgError err = { 0 };
      int rc = tg__isosurface (&f, &o, NULL, NULL, &m, NULL, &err);

      TG_CHECK_MSG (rc == 0, "%s", err.message);
      if (m == NULL)
        return;
      {
        Topo t = topo (&m->chunks[0]);

        TG_CHECK_MSG (t.bad_edges == 0, "box %g: %lld edges not shared by two triangles", side,
                      (long long) t.bad_edges);
        TG_CHECK_INT_EQ (t.v - t.e + t.f, 2);
        TG_CHECK_INT_EQ (unique_positions (&m->chunks[0]), t.v);
      }
      nv[wide] = m->chunks[0].n_vertices;
      h[wide] = mesh_hash (m);
      tg_mesh_free (m);
    }
  TG_CHECK_MSG (nv[0] > 1000, "only %lld vertices", (long long) nv[0]);
  TG_CHECK_MSG (h[0].a == h[1].a && h[0].b == h[1].b,
                "the wide box gave other bytes (%lld vs %lld vertices)", (long long) nv[1],
                (long long) nv[0]);
}

/* --- gradient normals across block borders -------------------------------------------------- */

/* Every vertex of A (position and normal) is in B, bit for bit. */
static int64_t
vertices_missing (const TgMeshChunk *a, const TgMeshChunk *b)
{
  float *sb = malloc (sizeof (float) * 6 * (size_t) b->n_vertices);
  int64_t missing = 0;

  for (int i = 0; i < b->n_vertices; i++)
    {
      memcpy (sb + 6 * i, b->positions + 3 * i, sizeof (float) * 3);
      memcpy (sb + 6 * i + 3, b->normals + 3 * i, sizeof (float) * 3);
    }
  qsort (sb, (size_t) b->n_vertices, sizeof (float) * 6, cmp_pos);
  for (int i = 0; i < a->n_vertices; i++)
    {
      float key[6];
      const float *hit;

      memcpy (key, a->positions + 3 * i, sizeof (float) * 3);
      memcpy (key + 3, a->normals + 3 * i, sizeof (float) * 3);
      hit = bsearch (key, sb, (size_t) b->n_vertices, sizeof (float) * 6, cmp_pos);
      missing += hit == NULL || memcmp (hit + 3, key + 3, sizeof (float) * 3) != 0;
    }
  free (sb);
  return missing;
}

/* The same lattice meshed with the box starting 16 cells lower, so every
 * block border falls elsewhere: each vertex keeps its position and its
 * gradient normal exactly (the normals come from the sampled corners and
 * their one-sample border, the same values whichever block holds them).
 * Once through the noise's grid path, once through plain batches. */
static void
test_normals_independent_of_blocks (void)
{
  TgGraph *g = small_world ();
  int n = add_node (g, "n", "field.noise");
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgValue *v;

  SET (g, n, "amplitude_m", "10");
  SET (g, n, "scale_m", "16");
  SET (g, n, "octaves", "3");
  v = pull (e, g, "n", &r);
  if (v)
    {
      CountSphere cs = { .c = { 3.1f, -2.3f, 1.7f }, .r = 30.0f };
      TgField sphere = { .eval = count_sphere_eval, .data = &cs, .lipschitz = 1.0f };
      const TgField *fields[2] = { tg_value_field (v), &sphere };

      atomic_init (&cs.calls, 0);
      TG_CHECK (fields[0]->eval_grid != NULL && fields[1]->eval_grid == NULL);
      for (int k = 0; k < 2; k++)
        {
          TgIsoOptions oa = { .min = { -40, -40, -40 }, .max = { 40, 40, 40 }, .cell = 1.0 };
          TgIsoOptions ob = { .min = { -56, -56, -56 }, .max = { 40, 40, 40 }, .cell = 1.0 };
          TgMesh *ma = NULL, *mb = NULL;
          TgError err = { 0 };

          TG_CHECK (tg__isosurface (fields[k], &oa, NULL, NULL, &ma, NULL, &err) == 0);
          TG_CHECK (tg__isosurface (fields[k], &ob, NULL, NULL, &mb, NULL, &err) == 0);
          if (ma && mb)
            {
              int64_t miss = vertices_missing (&ma->chunks[0], &mb->chunks[0]);

              TG_CHECK (ma->chunks[0].n_vertices > 5000);
              TG_CHECK_MSG (miss == 0, "field %d: %lld of %d vertices moved or turned", k,
                            (long long) miss, ma->chunks[0].n_vertices);
            }
          tg_mesh_free (ma);
          tg_mesh_free (mb);
        }
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

/* A rough rock over more blocks than one wave holds, on 1 and 3 threads. */
static void
test_threads_same_bytes (void)
{
  TgGraph *g = small_world ();
  int s = add_node (g, "s", "field.sphere");
  int d = add_node (g, "d", "field.displace");
  int iso = add_node (g, "iso", "mesh.isosurface");
  TgValue *v1, *v3;

  SET (g, s, "radius_m", "50");
  SET (g, d, "amplitude_m", "6");
  SET (g, d, "scale_m", "20");
  set_box (g, iso, -62.0, 62.0, 0.75);
  add_link (g, "s", "field", "d", "field");
  add_link (g, "d", "field", "iso", "field");
  v1 = pull_mesh (g, 1);
  v3 = pull_mesh (g, 3);
  if (v1 && v3)
    {
      TgHash h1 = mesh_hash (tg_value_mesh (v1)), h3 = mesh_hash (tg_value_mesh (v3));
      Topo t = topo (&tg_value_mesh (v1)->chunks[0]);

      TG_CHECK (h1.a == h3.a && h1.b == h3.b);
      TG_CHECK_INT_EQ (t.bad_edges, 0);
      TG_CHECK_INT_EQ (unique_positions (&tg_value_mesh (v1)->chunks[0]),
                       tg_value_mesh (v1)->chunks[0].n_vertices);
    }
  if (v1)
    tg_value_unref (v1);
  if (v3)
    tg_value_unref (v3);
  tg_graph_free (g);
}

static void
test_flat_and_face_normals (void)
{
  TgGraph *g = small_world ();
  int s = add_node (g, "s", "field.sphere");
  int iso = add_node (g, "iso", "mesh.isosurface");
  TgValue *smooth, *flat, *faces;

  SET (g, s, "radius_m", "5");
  set_box (g, iso, -6.0, 6.0, 0.5);
  add_link (g, "s", "field", "iso", "field");
  smooth = pull_mesh (g, 0);
  SET (g, iso, "shading", "flat");
  flat = pull_mesh (g, 0);
  SET (g, iso, "shading", "smooth");
  SET (g, iso, "normals", "faces");
  faces = pull_mesh (g, 0);
  if (smooth && flat && faces)
    {
      const TgMeshChunk *a = &tg_value_mesh (smooth)->chunks[0];
      const TgMeshChunk *b = &tg_value_mesh (flat)->chunks[0];
      const TgMeshChunk *c = &tg_value_mesh (faces)->chunks[0];
      double worst = 1.0;

      TG_CHECK_INT_EQ (b->n_indices, a->n_indices);
      TG_CHECK_INT_EQ (b->n_vertices, a->n_indices);
      for (int64_t t = 0; t < b->n_indices / 3; t++)
        TG_CHECK (memcmp (b->normals + 9 * t, b->normals + 9 * t + 3, 12) == 0
                  && memcmp (b->normals + 9 * t, b->normals + 9 * t + 6, 12) == 0);
      /* Face-averaged normals agree with the gradient. */
      TG_CHECK_INT_EQ (c->n_vertices, a->n_vertices);
      for (int i = 0; i < a->n_vertices; i++)
        worst = fmin (worst, a->normals[3 * i] * c->normals[3 * i]
                               + a->normals[3 * i + 1] * c->normals[3 * i + 1]
                               + a->normals[3 * i + 2] * c->normals[3 * i + 2]);
      TG_CHECK_MSG (worst > 0.95, "face and gradient normals differ: dot %g", worst);
    }
  if (smooth)
    tg_value_unref (smooth);
  if (flat)
    tg_value_unref (flat);
  if (faces)
    tg_value_unref (faces);
  tg_graph_free (g);
}

/* --- errors ---------------------------------------------------------------------------------- */

static void
expect_error (TgGraph *g, const char *needle_path, const char *needle_msg)
{
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgError err = { 0 };
  TgValue *v = pull_err (e, g, "iso", &r, &err);
  char buf[1024];

  TG_CHECK (v == NULL);
  if (v)
    tg_value_unref (v);
  tg_error_format (&err, buf, sizeof buf);
  TG_CHECK_STR_CONTAINS (buf, needle_path);
  TG_CHECK_STR_CONTAINS (buf, needle_msg);
  tg_engine_free (e);
}

static void
test_bad_parameters_named (void)
{
  TgGraph *g = small_world ();
  int iso = add_node (g, "iso", "mesh.isosurface");
  TgError err = { 0 };
  TgIsoOptions o = { .min = { 0, 0, 0 }, .max = { 1, 1, 1 }, .cell = 0.0 };

  add_node (g, "s", "field.sphere");
  add_link (g, "s", "field", "iso", "field");
  SET (g, iso, "min_m", "0,5,0");
  SET (g, iso, "max_m", "1,5,1");
  expect_error (g, "params.max_m", "along y");
  SET (g, iso, "max_m", "1,6,1");
  SET (g, iso, "cell_m", "0");
  expect_error (g, "params.cell_m", "above 0");
  SET (g, iso, "min_m", "-1000,-1000,-1000");
  SET (g, iso, "max_m", "1000,1000,1000");
  SET (g, iso, "cell_m", "0.01");
  expect_error (g, "params.cell_m", "cells");
  TG_CHECK (tg__isosurface_check (&o, &err) == TG_ERANGE);
  TG_CHECK_STR_CONTAINS (err.path, "params.cell_m");
  tg_graph_free (g);
}

/* An empty box gives an empty mesh, not an error. */
static void
test_empty_box (void)
{
  CountSphere cs = { .c = { 100, 100, 100 }, .r = 1.0f };
  TgField f = { .eval = count_sphere_eval, .data = &cs, .lipschitz = 1.0f };
  TgIsoOptions o = { .min = { -10, -10, -10 }, .max = { 10, 10, 10 }, .cell = 0.5 };
  TgMesh *m = NULL;
  TgError err = { 0 };

  atomic_init (&cs.calls, 0);
  TG_CHECK (tg__isosurface (&f, &o, NULL, NULL, &m, NULL, &err) == 0);
  if (m)
    {
      TG_CHECK_INT_EQ (m->chunks[0].n_vertices, 0);
      TG_CHECK_INT_EQ (m->chunks[0].n_indices, 0);
    }
  /* One centre per block and per sub-block, nothing else. */
  TG_CHECK_MSG (atomic_load (&cs.calls) <= 8 * 65, "%lld samples", atomic_load (&cs.calls));
  tg_mesh_free (m);
}

/* --- chunks and levels of detail ---------------------------------------------------------- */

/* A rough ball (a sphere of R m displaced by noise of AMP m) as a field
 * value; the caller unrefs it. */
static TgValue *
rough_ball (TgEngine *e, double r, double amp, double scale)
{
  TgGraph *g = small_world ();
  int s = add_node (g, "s", "field.sphere");
  int d = add_node (g, "d", "field.displace");
  TgRegion reg = world_region (g);
  char buf[64];
  TgValue *v;

  snprintf (buf, sizeof buf, "%.17g", r);
  SET (g, s, "radius_m", buf);
  snprintf (buf, sizeof buf, "%.17g", amp);
  SET (g, d, "amplitude_m", buf);
  snprintf (buf, sizeof buf, "%.17g", scale);
  SET (g, d, "scale_m", buf);
  add_link (g, "s", "field", "d", "field");
  v = pull (e, g, "d", &reg);
  tg_graph_free (g);
  return v;
}

/* All chunks of M at level LOD in one chunk, vertices merged by position
 * (-0 and +0 as one); *NORMAL_CLASHES counts vertices whose normal differs
 * from the first one at that position. */
static TgMeshChunk
merge_by_position (const TgMesh *m, int lod, int64_t *normal_clashes)
{
  TgMeshChunk out = { 0 };
  int64_t nv = 0, ni = 0;
  float *all;
  int nu = 0;

  *normal_clashes = 0;
  for (int i = 0; i < m->n_chunks; i++)
    if (m->chunks[i].lod == lod)
      {
        nv += m->chunks[i].n_vertices;
        ni += m->chunks[i].n_indices;
      }
  all = malloc (sizeof (float) * 6 * (size_t) (nv + 1));
  out.indices = malloc (sizeof (uint32_t) * (size_t) (ni + 1));
  nv = 0;
  for (int i = 0; i < m->n_chunks; i++)
    if (m->chunks[i].lod == lod)
      for (int v = 0; v < m->chunks[i].n_vertices; v++, nv++)
        {
          for (int k = 0; k < 3; k++)
            all[6 * nv + k] = m->chunks[i].positions[3 * v + k] + 0.0f;
          memcpy (all + 6 * nv + 3, m->chunks[i].normals + 3 * v, sizeof (float) * 3);
        }
  qsort (all, (size_t) nv, sizeof (float) * 6, cmp_pos);
  out.positions = malloc (sizeof (float) * 3 * (size_t) (nv + 1));
  out.normals = malloc (sizeof (float) * 3 * (size_t) (nv + 1));
  for (int64_t v = 0; v < nv; v++)
    if (v == 0 || memcmp (all + 6 * v, all + 6 * (v - 1), sizeof (float) * 3) != 0)
      {
        memcpy (out.positions + 3 * nu, all + 6 * v, sizeof (float) * 3);
        memcpy (out.normals + 3 * nu, all + 6 * v + 3, sizeof (float) * 3);
        nu++;
      }
    else if (memcmp (all + 6 * v + 3, out.normals + 3 * (nu - 1), sizeof (float) * 3) != 0)
      ++*normal_clashes;
  out.n_vertices = nu;
  for (int i = 0; i < m->n_chunks; i++)
    if (m->chunks[i].lod == lod)
      for (int64_t t = 0; t < m->chunks[i].n_indices; t++)
        {
          float key[3];
          const float *hit;

          for (int k = 0; k < 3; k++)
            key[k] = m->chunks[i].positions[3 * (size_t) m->chunks[i].indices[t] + k] + 0.0f;
          hit = bsearch (key, out.positions, (size_t) nu, sizeof (float) * 3, cmp_pos);
          out.indices[out.n_indices++] = (uint32_t) ((hit - out.positions) / 3);
        }
  free (all);
  return out;
}

static void
chunk_clear (TgMeshChunk *c)
{
  free (c->positions);
  free (c->normals);
  free (c->indices);
}

/* The rough ball in 16-cell chunks, the box on the cell lattice but not
 * on the chunk lattice:
 * each chunk is welded, holds only its own lattice cells (named by their
 * world-anchored index), and the chunks merged by position are the whole
 * mesh: the same vertices with the same normals, and watertight (each
 * edge used once each way, Euler characteristic 2).  For gradient and
 * face normals. */
static void
test_chunks_weld_into_the_whole (void)
{
  TgEngine *e = new_engine (1);
  TgValue *ball = rough_ball (e, 20.0, 3.0, 10.0);

  for (int normals = 0; ball && normals < 2; normals++)
    {
      TgIsoOptions o = { .min = { -26.5, -25, -27 }, .max = { 26, 27.5, 26 }, .cell = 0.5,
                         .normals = normals };
      TgMesh *whole = NULL, *ch = NULL;
      TgError err = { 0 };

      TG_CHECK (tg__isosurface (tg_value_field (ball), &o, NULL, NULL, &whole, NULL, &err) == 0);
      o.chunk_cells = 16;
      TG_CHECK (tg__isosurface (tg_value_field (ball), &o, NULL, NULL, &ch, NULL, &err) == 0);
      if (whole && ch)
        {
          int64_t clashes, tris = 0;
          TgMeshChunk merged = merge_by_position (ch, 0, &clashes);
          Topo t = topo (&merged), tw = topo (&whole->chunks[0]);

          TG_CHECK_MSG (ch->n_chunks > 40, "%d chunks", ch->n_chunks);
          for (int i = 0; i < ch->n_chunks; i++)
            {
              const TgMeshChunk *c = &ch->chunks[i];
              int cx, cy, cz, lod, used = 0;
              double lo[3], hi[3];

              TG_CHECK_MSG (sscanf (c->name, "iso_x%d_y%d_z%d_lod%d%n", &cx, &cy, &cz, &lod,
                                    &used) == 4 && c->name[used] == '\0' && lod == 0
                              && c->lod == 0,
                            "chunk %d named %s", i, c->name);
              TG_CHECK (c->n_indices > 0);
              TG_CHECK_INT_EQ (unique_positions (c), c->n_vertices);
              tris += c->n_indices / 3;
              /* World-anchored: chunk x covers [16 x, 16 (x + 1)) cells of 0.5 m. */
              lo[0] = 8.0 * cx, lo[1] = 8.0 * cy, lo[2] = 8.0 * cz;
              for (int k = 0; k < 3; k++)
                hi[k] = lo[k] + 8.0;
              for (int v = 0; v < c->n_vertices; v++)
                for (int k = 0; k < 3; k++)
                  TG_CHECK_MSG (c->positions[3 * v + k] >= lo[k] - 1e-4
                                  && c->positions[3 * v + k] <= hi[k] + 1e-4,
                                "%s: vertex %d at %g along axis %d", c->name, v,
                                c->positions[3 * v + k], k);
            }
          TG_CHECK_INT_EQ (tris, tw.f);
          TG_CHECK_INT_EQ (clashes, 0);
          TG_CHECK_INT_EQ (t.bad_edges, 0);
          TG_CHECK_INT_EQ (t.degenerate, 0);
          TG_CHECK_INT_EQ (t.v - t.e + t.f, 2);
          TG_CHECK_INT_EQ (merged.n_vertices, whole->chunks[0].n_vertices);
          TG_CHECK_INT_EQ (vertices_missing (&merged, &whole->chunks[0]), 0);
          TG_CHECK_INT_EQ (vertices_missing (&whole->chunks[0], &merged), 0);
          chunk_clear (&merged);
        }
      tg_mesh_free (whole);
      tg_mesh_free (ch);
    }
  if (ball)
    tg_value_unref (ball);
  tg_engine_free (e);
}

/* Only chunks the surface crosses are written: a small ball inside one
 * chunk gives that chunk (and its coarser levels), one on a chunk corner
 * the eight around it, an empty box none. */
static void
test_chunks_empty_left_out (void)
{
  static const struct
  {
    float c;
    int chunks;
    const char *first;
  } cases[] = {
    { 10.0f, 1, "iso_x0_y0_z0_lod0" },
    { 16.0f, 8, "iso_x0_y0_z0_lod0" },
    { 100.0f, 0, NULL },
  };

  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
    for (int lods = 1; lods <= 2; lods++)
      {
        CountSphere cs = { .c = { cases[k].c, cases[k].c, cases[k].c }, .r = 3.0f };
        TgField f = { .eval = count_sphere_eval, .data = &cs, .lipschitz = 1.0f };
        TgIsoOptions o = { .min = { -40, -40, -40 }, .max = { 40, 40, 40 }, .cell = 1.0,
                           .chunk_cells = 16, .lods = lods };
        TgMesh *m = NULL;
        TgError err = { 0 };

        atomic_init (&cs.calls, 0);
        TG_CHECK (tg__isosurface (&f, &o, NULL, NULL, &m, NULL, &err) == 0);
        if (m == NULL)
          continue;
        TG_CHECK_INT_EQ (m->n_chunks, cases[k].chunks * lods);
        for (int i = 0; i < m->n_chunks; i++)
          TG_CHECK (m->chunks[i].n_indices > 0 && m->chunks[i].lod == i / cases[k].chunks);
        if (cases[k].first && m->n_chunks > 0)
          TG_CHECK_STR_CONTAINS (m->chunks[0].name, cases[k].first);
        tg_mesh_free (m);
      }
}

/* Levels without chunks: the whole surface once per level, coarser ones
 * named after it, with no skirt (there is no neighbour). */
static void
test_levels_of_one_mesh (void)
{
  CountSphere cs = { .c = { 0.3f, 0.2f, 0.1f }, .r = 10.0f };
  TgField f = { .eval = count_sphere_eval, .data = &cs, .lipschitz = 1.0f };
  TgIsoOptions o = { .min = { -12, -12, -12 }, .max = { 12, 12, 12 }, .cell = 0.5, .lods = 3 };
  TgMesh *m = NULL;
  TgError err = { 0 };
  static const char *const names[] = { "isosurface", "isosurface_lod1", "isosurface_lod2" };

  atomic_init (&cs.calls, 0);
  TG_CHECK (tg__isosurface (&f, &o, NULL, NULL, &m, NULL, &err) == 0);
  if (m)
    {
      TG_CHECK_INT_EQ (m->n_chunks, 3);
      for (int i = 0; i < m->n_chunks && i < 3; i++)
        {
          Topo t = topo (&m->chunks[i]);

          TG_CHECK_STR_CONTAINS (m->chunks[i].name, names[i]);
          TG_CHECK_INT_EQ (strlen (m->chunks[i].name), strlen (names[i]));
          TG_CHECK_INT_EQ (m->chunks[i].lod, i);
          TG_CHECK_INT_EQ (t.bad_edges, 0);
          TG_CHECK_INT_EQ (t.v - t.e + t.f, 2);
          if (i > 0)
            TG_CHECK (t.f * 3 < m->chunks[i - 1].n_indices / 3);
        }
    }
  tg_mesh_free (m);
}

/* Chunks and three levels through the node, on 1 and 3 threads. */
static void
test_chunks_threads_same_bytes (void)
{
  TgGraph *g = small_world ();
  int s = add_node (g, "s", "field.sphere");
  int d = add_node (g, "d", "field.displace");
  int iso = add_node (g, "iso", "mesh.isosurface");
  TgValue *v1, *v3;

  SET (g, s, "radius_m", "50");
  SET (g, d, "amplitude_m", "6");
  SET (g, d, "scale_m", "20");
  set_box (g, iso, -62.0, 62.0, 0.75);
  SET (g, iso, "chunk_cells", "32");
  SET (g, iso, "lods", "3");
  add_link (g, "s", "field", "d", "field");
  add_link (g, "d", "field", "iso", "field");
  v1 = pull_mesh (g, 1);
  v3 = pull_mesh (g, 3);
  if (v1 && v3)
    {
      const TgMesh *m = tg_value_mesh (v1);
      TgHash h1 = mesh_hash (m), h3 = mesh_hash (tg_value_mesh (v3));
      int per_level[3] = { 0 };

      TG_CHECK (h1.a == h3.a && h1.b == h3.b);
      for (int i = 0; i < m->n_chunks; i++)
        {
          TG_CHECK (m->chunks[i].lod >= 0 && m->chunks[i].lod < 3);
          per_level[m->chunks[i].lod]++;
          TG_CHECK_MSG (i == 0 || m->chunks[i].lod >= m->chunks[i - 1].lod,
                        "levels out of order at %d", i);
        }
      TG_CHECK (per_level[0] > 20);
      TG_CHECK_INT_EQ (per_level[1], per_level[0]);
      TG_CHECK_INT_EQ (per_level[2], per_level[0]);
    }
  if (v1)
    tg_value_unref (v1);
  if (v3)
    tg_value_unref (v3);
  tg_graph_free (g);
}

/* Rays from the ball's centre that leave through no triangle of M's
 * chunks drawn at the level LEVEL_OF gives each chunk stem: towards
 * every vertex lying in an inner chunk face, and towards points around
 * it, and in random directions. */
static int64_t
rays_escaping (const TgMesh *m, const int *level_of, int *n_rays)
{
  const TgMeshChunk **use = malloc (sizeof *use * (size_t) (m->n_chunks + 1));
  int n_use = 0;
  int64_t escaped = 0;
  uint32_t seed = 7;

  *n_rays = 0;
  for (int i = 0; i < m->n_chunks; i++)
    if (m->chunks[i].lod == level_of[i])
      use[n_use++] = &m->chunks[i];
  for (int u = 0; u < n_use; u++)
    for (int v = 0; v < use[u]->n_vertices; v++)
      {
        const float *p = use[u]->positions + 3 * v;
        bool on_face = false;

        for (int k = 0; k < 3; k++)
          on_face |= p[k] != 0.0f && fmod ((double) p[k], 8.0) == 0.0 && fabs (p[k]) < 16.0f;
        /* Every third such vertex, each with four rays near it. */
        if (!on_face || v % 3 != 0)
          continue;
        for (int r = 0; r < 4; r++)
          {
            double o[3] = { 0, 0, 0 }, d[3];
            bool hit = false;

            for (int k = 0; k < 3; k++)
              d[k] = p[k]
                     + (r == 0 ? 0.0 : 0.4 * (tg_hash_unit (tg_hash3 (seed++, v, r, k)) - 0.5));
            for (int w = 0; w < n_use && !hit; w++)
              for (int64_t t = 0; t < use[w]->n_indices && !hit; t += 3)
                hit = tgtest_ray_hits (o, d, use[w]->positions + 3 * (size_t) use[w]->indices[t],
                                       use[w]->positions + 3 * (size_t) use[w]->indices[t + 1],
                                       use[w]->positions + 3 * (size_t) use[w]->indices[t + 2]);
            escaped += !hit;
            ++*n_rays;
          }
      }
  free (use);
  return escaped;
}

/* Neighbouring chunks drawn at different levels leave no crack: with the
 * skirts, every ray from inside the rough ball leaves through a
 * triangle, whichever levels the chunks show (lod 0 next to 1, 0 next to
 * 2, a random mix); without them some rays get out.  Each level of a
 * chunk also keeps that chunk's name and has fewer triangles; skirts are
 * added after a chunk's surface, which they leave unchanged, and their
 * bottoms lie inside the solid. */
static void
test_lod_skirts_close_cracks (void)
{
  TgEngine *e = new_engine (1);
  TgValue *ball = rough_ball (e, 12.0, 2.0, 8.0);
  TgIsoOptions o = { .min = { -16, -16, -16 }, .max = { 16, 16, 16 }, .cell = 0.5,
                     .chunk_cells = 16, .lods = 3 };
  TgMesh *m = NULL, *bare = NULL;
  TgError err = { 0 };

  if (ball)
    {
      TG_CHECK (tg__isosurface (tg_value_field (ball), &o, NULL, NULL, &m, NULL, &err) == 0);
      o.no_skirts = true;
      TG_CHECK (tg__isosurface (tg_value_field (ball), &o, NULL, NULL, &bare, NULL, &err) == 0);
    }
  if (m && bare)
    {
      int *level_of = malloc (sizeof (int) * (size_t) m->n_chunks);
      int64_t tris[3] = { 0 };
      int per = m->n_chunks / 3;

      TG_CHECK_INT_EQ (m->n_chunks, bare->n_chunks);
      TG_CHECK_INT_EQ (m->n_chunks % 3, 0);
      for (int i = 0; i < m->n_chunks; i++)
        {
          TG_CHECK_INT_EQ (m->chunks[i].lod, i / per);
          TG_CHECK_MSG (strncmp (m->chunks[i].name, m->chunks[i % per].name,
                                 strlen (m->chunks[i].name) - 1) == 0,
                        "%s is not a level of %s", m->chunks[i].name, m->chunks[i % per].name);
          tris[i / per] += bare->chunks[i].n_indices / 3;
          /* The skirts come after the chunk's own surface, which they leave
           * as it was, and hang inside the solid. */
          {
            const TgMeshChunk *c = &m->chunks[i], *b = &bare->chunks[i];
            int n_skirt = c->n_vertices - b->n_vertices;
            float *val = malloc (sizeof (float) * (size_t) (n_skirt + 1));
            float *sx = malloc (sizeof (float) * (size_t) (n_skirt + 1));
            float *sy = malloc (sizeof (float) * (size_t) (n_skirt + 1));
            float *sz = malloc (sizeof (float) * (size_t) (n_skirt + 1));
            int outside = 0;

            TG_CHECK (n_skirt >= 0 && c->n_indices >= b->n_indices);
            TG_CHECK (memcmp (c->positions, b->positions,
                              sizeof (float) * 3 * (size_t) b->n_vertices) == 0);
            TG_CHECK (memcmp (c->indices, b->indices,
                              sizeof (uint32_t) * (size_t) b->n_indices) == 0);
            for (int v = 0; v < n_skirt; v++)
              {
                sx[v] = c->positions[3 * (b->n_vertices + v)];
                sy[v] = c->positions[3 * (b->n_vertices + v) + 1];
                sz[v] = c->positions[3 * (b->n_vertices + v) + 2];
              }
            for (int v0 = 0; v0 < n_skirt; v0 += TG_FIELD_BATCH_MAX)
              tg_value_field (ball)->eval (tg_value_field (ball),
                                           n_skirt - v0 < TG_FIELD_BATCH_MAX ? n_skirt - v0
                                                                             : TG_FIELD_BATCH_MAX,
                                           sx + v0, sy + v0, sz + v0, val + v0);
            for (int v = 0; v < n_skirt; v++)
              outside += !(val[v] < 0.0f);
            TG_CHECK_MSG (outside == 0, "%s: %d of %d skirt vertices outside the solid",
                          c->name, outside, n_skirt);
            free (val);
            free (sx);
            free (sy);
            free (sz);
          }
        }
      TG_CHECK_MSG (tris[1] * 2 < tris[0] && tris[2] * 2 < tris[1],
                    "triangles per level %lld %lld %lld", (long long) tris[0],
                    (long long) tris[1], (long long) tris[2]);
      for (int pattern = 0; pattern < 3; pattern++)
        {
          int n_rays, n_bare;
          int64_t out, out_bare;

          for (int i = 0; i < m->n_chunks; i++)
            {
              int cx, cy, cz, lod;

              sscanf (m->chunks[i].name, "iso_x%d_y%d_z%d_lod%d", &cx, &cy, &cz, &lod);
              if (pattern < 2)
                level_of[i] = (cx + cy + cz) & 1 ? pattern + 1 : 0;
              else
                level_of[i] = (int) (tg_hash3 (99, cx, cy, cz) % 3);
            }
          out = rays_escaping (m, level_of, &n_rays);
          out_bare = rays_escaping (bare, level_of, &n_bare);
          printf ("pattern %d: %lld of %d rays escape with skirts, %lld of %d without\n",
                  pattern, (long long) out, n_rays, (long long) out_bare, n_bare);
          TG_CHECK (n_rays > 500);
          TG_CHECK_MSG (out == 0, "pattern %d: %lld of %d rays escape", pattern, (long long) out,
                        n_rays);
          TG_CHECK_MSG (out_bare > 0, "pattern %d: no crack to close without skirts", pattern);
        }
      free (level_of);
    }
  tg_mesh_free (m);
  tg_mesh_free (bare);
  if (ball)
    tg_value_unref (ball);
  tg_engine_free (e);
}

static void
test_chunk_parameters_named (void)
{
  TgGraph *g = small_world ();
  int iso = add_node (g, "iso", "mesh.isosurface");

  add_node (g, "s", "field.sphere");
  add_link (g, "s", "field", "iso", "field");
  SET (g, iso, "chunk_cells", "8");
  expect_error (g, "params.chunk_cells", "16..64");
  SET (g, iso, "chunk_cells", "18");
  SET (g, iso, "lods", "3");
  expect_error (g, "params.chunk_cells", "divisible by 2^(lods - 1) = 4");
  tg_graph_free (g);
}

int
main (void)
{
  TG_RUN (test_sphere_watertight_euler_volume);
  TG_RUN (test_torus_euler_zero);
  TG_RUN (test_box_minus_sphere);
  TG_RUN (test_random_volumes_watertight);
  TG_RUN (test_skipping_samples_less_same_bytes);
  TG_RUN (test_skipping_gradient_same_bytes);
  TG_RUN (test_threads_same_bytes);
  TG_RUN (test_shared_corners_same_bytes);
  TG_RUN (test_vector_vertices_same_bytes);
  TG_RUN (test_volume_view_same_bytes);
  TG_RUN (test_face_tables_and_hash_weld_alike);
  TG_RUN (test_normals_independent_of_blocks);
  TG_RUN (test_flat_and_face_normals);
  TG_RUN (test_bad_parameters_named);
  TG_RUN (test_empty_box);
  TG_RUN (test_chunks_weld_into_the_whole);
  TG_RUN (test_chunks_empty_left_out);
  TG_RUN (test_levels_of_one_mesh);
  TG_RUN (test_chunks_threads_same_bytes);
  TG_RUN (test_lod_skirts_close_cracks);
  TG_RUN (test_chunk_parameters_named);
  return tgtest_result ();
}
