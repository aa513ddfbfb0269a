/* Benchmark of mesh.isosurface: 256^3 cells of a sphere's signed distance
 * and of a 3D Perlin fBm field, welded, with gradient normals, on one
 * thread and on all of them, through tg_engine_pull.
 *
 * The reference, timed in the same run, is a plain textbook marching
 * cubes (Bourke's loop): the whole 257^3 grid sampled into memory, then
 * every cell classified and every crossed edge of every cell
 * interpolated, three unshared vertices per triangle, no normals.  It uses
 * our case table, so both emit the same triangles.  Printed: cells per
 * second, the share of the time spent sampling the field, and how many
 * blocks the mesher skipped; the phases with and without corners shared
 * between blocks; the node's user and system time and page faults on one
 * thread (a busy machine makes the kernel's share, filling fresh pages of
 * the mesh, the most variable); and the mesher on the sampled 257^3 values themselves
 * (a dense volume with field.slices' view, read in place: what VTK is handed),
 * which must give the same triangles (for the sphere, which stays off the
 * box's faces, the same bytes).  Each figure is the best of a few runs.
 *
 * Run with `meson test --benchmark --suite bench -v` or directly:
 * bench_isosurface [runs [sphere|fbm|both [DIR]]]
 * or bench_isosurface RUNS dense GRID.f32 (the mesher alone on a grid DIR
 * holds, with its mesh hash), or bench_isosurface RUNS grid (the fBm
 * field's grid path alone over the box, in the 64 x 32 x 32 grids the
 * mesher's slabs mostly ask for: CPU per run and a hash of the values;
 * bench_isosurface RUNS grid ISA forces generic, avx2 or avx512).
 * With DIR, the sampled 257^3 grid of each case is written to
 * DIR/sphere.f32 and DIR/fbm.f32 (x fastest, host floats) and a RESULT
 * line gives the node's CPU and wall seconds on one thread, whole job and
 * on the dense values, for
 * tests/bench/peers/peers_isosurface.sh to run VTK on the same values.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include <tgraph/tgraph.h>

#include "fields.h"
#include "mc_tables.h"
#include "noise3.h"
#include "../common/tgclock.h"

#define N 256

/* --- the textbook reference ------------------------------------------------ */

static const int ref_corner[8][3] = { { 0, 0, 0 }, { 1, 0, 0 }, { 0, 1, 0 }, { 1, 1, 0 },
                                      { 0, 0, 1 }, { 1, 0, 1 }, { 0, 1, 1 }, { 1, 1, 1 } };
static const int ref_edge[12][2] = { { 0, 1 }, { 2, 3 }, { 4, 5 }, { 6, 7 }, { 0, 2 }, { 1, 3 },
                                     { 4, 6 }, { 5, 7 }, { 0, 4 }, { 1, 5 }, { 2, 6 }, { 3, 7 } };

typedef struct
{
  double sample_s, mesh_s;
  int64_t triangles;
} RefResult;

static RefResult
reference (const TgField *f, const double lo[3], double cell, float *grid, float *tris)
{
  RefResult r = { 0 };
  int n1 = N + 1;
  uint16_t edge_table[256];
  float xs[N + 1];
  double t0 = tg_wall_s ();
  int64_t nt = 0;

  /* Which edges each case crosses, as Bourke's edgeTable. */
  for (int c = 0; c < 256; c++)
    {
      edge_table[c] = 0;
      for (int e = 0; e < 12; e++)
        if (((c >> ref_edge[e][0]) & 1) != ((c >> ref_edge[e][1]) & 1))
          edge_table[c] |= (uint16_t) (1u << e);
    }
  for (int i = 0; i <= N; i++)
    xs[i] = (float) (lo[0] + i * cell);
  for (int k = 0; k <= N; k++)
    for (int j = 0; j <= N; j++)
      {
        float ys[N + 1], zs[N + 1];
        for (int i = 0; i <= N; i++)
          {
            ys[i] = (float) (lo[1] + j * cell);
            zs[i] = (float) (lo[2] + k * cell);
          }
        f->eval (f, n1, xs, ys, zs, grid + ((size_t) k * n1 + j) * n1);
      }
  r.sample_s = tg_wall_s () - t0;
  t0 = tg_wall_s ();
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++)
        {
          float v[8], p[8][3], vert[12][3];
          int c = 0;

          for (int q = 0; q < 8; q++)
            {
              int x = i + ref_corner[q][0], y = j + ref_corner[q][1], z = k + ref_corner[q][2];
              v[q] = grid[((size_t) z * n1 + y) * n1 + x];
              p[q][0] = (float) (lo[0] + x * cell);
              p[q][1] = (float) (lo[1] + y * cell);
              p[q][2] = (float) (lo[2] + z * cell);
              c |= (v[q] < 0.0f) << q;
            }
          if (edge_table[c] == 0)
            continue;
          for (int e = 0; e < 12; e++)
            if (edge_table[c] & (1u << e))
              {
                int a = ref_edge[e][0], b = ref_edge[e][1];
                float t = (0.0f - v[a]) / (v[b] - v[a]);
                for (int d = 0; d < 3; d++)
                  vert[e][d] = p[a][d] + t * (p[b][d] - p[a][d]);
              }
          for (int t = 0; t < 3 * tg__mc_ntri[c]; t++)
            memcpy (tris + 3 * ((nt * 3 + t) % (1 << 22)), vert[tg__mc_tris[c][t]],
                    sizeof (float) * 3);
          nt += tg__mc_ntri[c];
        }
  r.mesh_s = tg_wall_s () - t0;
  r.triangles = nt;
  return r;
}

/* --- the node ------------------------------------------------------------------- */

typedef struct
{
  double seconds, cpu;
  double user, sys;  /* of the run with the least CPU */
  long faults;       /* minor page faults of that run */
  int64_t triangles, vertices;
  int threads;
} NodeResult;

static double
tv_s (struct timeval t)
{
  return (double) t.tv_sec + 1e-6 * (double) t.tv_usec;
}

static NodeResult
time_node (TgGraph *g, int threads, int runs, TgHash *hash)
{
  TgEngineOptions o = { .threads = threads, .cache_bytes = 0 };
  TgEngine *e = tg_engine_new (&o);
  TgRegion r;
  NodeResult res = { .seconds = 1e30, .cpu = 1e30, .threads = tg_engine_threads (e) };
  int iso = tg_graph_find_node (g, "iso");

  tg_region_for_world (&r, tg_graph_world (g), tg_graph_world (g)->resolution);
  for (int k = 0; k < runs; k++)
    {
      TgValue *v = NULL;
      TgError err = { 0 };
      double t0, t;

      struct timespec c0, c1;
      struct rusage u0, u1;

      tg_engine_clear_cache (e);
      getrusage (RUSAGE_SELF, &u0);
      clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &c0);
      t0 = tg_wall_s ();
      if (tg_engine_pull (e, g, iso, 0, &r, NULL, &v, NULL, &err) != 0)
        {
          fprintf (stderr, "bench_isosurface: %s: %s\n", err.path, err.message);
          exit (1);
        }
      t = tg_wall_s () - t0;
      clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &c1);
      getrusage (RUSAGE_SELF, &u1);
      res.seconds = t < res.seconds ? t : res.seconds;
      {
        double c = (double) (c1.tv_sec - c0.tv_sec) + 1e-9 * (double) (c1.tv_nsec - c0.tv_nsec);
        if (c < res.cpu)
          {
            res.cpu = c;
            res.user = tv_s (u1.ru_utime) - tv_s (u0.ru_utime);
            res.sys = tv_s (u1.ru_stime) - tv_s (u0.ru_stime);
            res.faults = u1.ru_minflt - u0.ru_minflt;
          }
      }
      {
        const TgMeshChunk *c = &tg_value_mesh (v)->chunks[0];
        TgHasher h;

        res.triangles = c->n_indices / 3;
        res.vertices = c->n_vertices;
        tg_hasher_init (&h);
        tg_hasher_bytes (&h, c->positions, sizeof (float) * 3 * (size_t) c->n_vertices);
        tg_hasher_bytes (&h, c->normals, sizeof (float) * 3 * (size_t) c->n_vertices);
        tg_hasher_bytes (&h, c->indices, sizeof (uint32_t) * (size_t) c->n_indices);
        *hash = tg_hasher_finish (&h);
      }
      tg_value_unref (v);
    }
  tg_engine_free (e);
  return res;
}

static void
set (TgGraph *g, const char *id, const char *name, const char *text)
{
  TgError err = { 0 };

  if (tg_graph_set_param_text (g, tg_graph_find_node (g, id), name, text, &err) != 0)
    {
      fprintf (stderr, "bench_isosurface: %s.%s: %s\n", id, name, err.message);
      exit (1);
    }
}

/* --- the same dense values, as a volume ------------------------------------- */

static void
dense_eval (const TgField *f, int n, const float *x, const float *y, const float *z, float *out)
{
  tg__volume_eval (f->data, n, x, y, z, out);
}

static int
dense_grid (const TgField *f, const TgFieldGrid *g, float *out, size_t sy, size_t sz,
            TgFieldScratch *scratch)
{
  (void) scratch;
  return tg__volume_grid (f->data, g, out, sy, sz);
}

static int
dense_view (const TgField *f, const TgFieldGrid *g, TgFieldView *view)
{
  return tg__volume_view (f->data, g, view);
}

typedef struct
{
  double seconds, cpu;
  TgIsoStats st;
  int64_t triangles;
  TgHash hash;
} DenseResult;

/* mesh.isosurface's mesher on the dense grid GRID (257^3, x fastest, the
 * values VTK is handed), through field.slices' volume path (its view, read
 * in place): a volume of the negated values at level 0 is the grid itself
 * on the lattice. */
static DenseResult
time_dense (const float *grid, const TgIsoOptions *io, int runs)
{
  size_t n1 = N + 1, n = n1 * n1 * n1;
  float *neg = malloc (sizeof (float) * n);
  TgVolume vol = { .v = neg, .st = { 1, (ptrdiff_t) n1, (ptrdiff_t) (n1 * n1) },
                   .n = { N + 1, N + 1, N + 1 }, .org = { -128.0f, -128.0f, -128.0f },
                   .inv = { 1.0f, 1.0f, 1.0f }, .level = 0.0f };
  TgField f = { .eval = dense_eval, .eval_grid = dense_grid, .grid_cheap = true,
                .view = dense_view, .data = &vol };
  DenseResult r = { .seconds = 1e30, .cpu = 1e30 };

  if (neg == NULL)
    exit (1);
  for (size_t q = 0; q < n; q++)
    neg[q] = -grid[q];
  /* Once, as field.slices does when it loads, not timed; the bound holds
   * inside the voxels' hull, which is the box. */
  f.lipschitz = (float) (tg__volume_scan (&vol, false) * 1.001 + 1e-6);
  for (int k = 0; k < runs; k++)
    {
      TgMesh *m = NULL;
      TgError err = { 0 };
      TgIsoStats st;
      double t0 = tg_wall_s (), c0 = tg_cpu_s (), t, c;

      if (tg__isosurface (&f, io, NULL, NULL, &m, &st, &err) != 0)
        {
          fprintf (stderr, "bench_isosurface: dense: %s\n", err.message);
          exit (1);
        }
      c = tg_cpu_s () - c0;
      t = tg_wall_s () - t0;
      if (c < r.cpu)
        {
          const TgMeshChunk *ch = &m->chunks[0];
          TgHasher h;

          r.cpu = c;
          r.seconds = t;
          r.st = st;
          r.triangles = ch->n_indices / 3;
          tg_hasher_init (&h);
          tg_hasher_bytes (&h, ch->positions, sizeof (float) * 3 * (size_t) ch->n_vertices);
          tg_hasher_bytes (&h, ch->normals, sizeof (float) * 3 * (size_t) ch->n_vertices);
          tg_hasher_bytes (&h, ch->indices, sizeof (uint32_t) * (size_t) ch->n_indices);
          r.hash = tg_hasher_finish (&h);
        }
      tg_mesh_free (m);
    }
  free (neg);
  return r;
}

static int
run_case (const char *title, TgGraph *g, const char *field_id, int runs, const char *dump)
{
  const double lo[3] = { -128.0, -128.0, -128.0 };
  double cells = (double) N * N * N;
  TgEngine *e = tg_engine_new (&(TgEngineOptions){ .threads = 1 });
  TgRegion r;
  TgValue *fv = NULL;
  TgError err = { 0 };
  float *grid = malloc (sizeof (float) * (size_t) (N + 1) * (N + 1) * (N + 1));
  float *tris = malloc (sizeof (float) * 3 * (1 << 22));
  RefResult ref = { 1e30, 1e30, 0 };
  NodeResult one, all;
  DenseResult dense;
  TgHash h1, hn;
  TgIsoStats st, st_own;
  TgIsoOptions io = { .min = { -128, -128, -128 }, .max = { 128, 128, 128 }, .cell = 1.0 };
  TgMesh *m = NULL;
  double ref_s, t0, eval_s = 1e30;

  tg_region_for_world (&r, tg_graph_world (g), tg_graph_world (g)->resolution);
  if (tg_engine_pull (e, g, tg_graph_find_node (g, field_id), 0, &r, NULL, &fv, NULL, &err))
    {
      fprintf (stderr, "bench_isosurface: %s\n", err.message);
      return 1;
    }
  for (int k = 0; k < runs; k++)
    {
      RefResult q = reference (tg_value_field (fv), lo, 1.0, grid, tris);
      if (q.sample_s + q.mesh_s < ref.sample_s + ref.mesh_s)
        ref = q;
    }
  ref_s = ref.sample_s + ref.mesh_s;
  /* The share of the field: the same number of samples as the mesher
   * took, alone, through the field's eval (the point path). */
  for (int k = 0; k < runs; k++)
    {
      TgIsoStats q;

      tg__isosurface (tg_value_field (fv), &io, NULL, NULL, &m, &q, &err);
      tg_mesh_free (m);
      if (k == 0 || q.seconds_eval + q.seconds_mesh + q.seconds_stitch
                      < st.seconds_eval + st.seconds_mesh + st.seconds_stitch)
        st = q;
    }
  /* The same without corners shared between blocks (each block samples
   * its 35^3 padded corners itself), for the phases' difference. */
  for (int k = 0; k < runs; k++)
    {
      TgIsoStats q;
      TgIsoOptions ns = io;

      ns.no_share = true;
      tg__isosurface (tg_value_field (fv), &ns, NULL, NULL, &m, &q, &err);
      tg_mesh_free (m);
      if (k == 0 || q.seconds_eval + q.seconds_mesh + q.seconds_stitch
                      < st_own.seconds_eval + st_own.seconds_mesh + st_own.seconds_stitch)
        st_own = q;
    }
  for (int k = 0; k < runs; k++)
    {
      const TgField *f = tg_value_field (fv);
      float xs[N + 1], ys[N + 1], zs[N + 1], out[N + 1];
      int64_t left = st.evaluations;

      t0 = tg_wall_s ();
      for (int row = 0; left > 0; row++)
        {
          int n = left < N + 1 ? (int) left : N + 1;
          for (int i = 0; i < n; i++)
            {
              xs[i] = (float) (lo[0] + i);
              ys[i] = (float) (lo[1] + row % (N + 1));
              zs[i] = (float) (lo[2] + row / (N + 1));
            }
          f->eval (f, n, xs, ys, zs, out);
          left -= n;
        }
      t0 = tg_wall_s () - t0;
      eval_s = t0 < eval_s ? t0 : eval_s;
    }
  one = time_node (g, 1, runs, &h1);
  all = time_node (g, 0, runs, &hn);
  dense = time_dense (grid, &io, runs);
  if (dump)
    {
      /* The grid the reference sampled: z, y, x with x fastest. */
      FILE *f = fopen (dump, "wb");
      size_t n = (size_t) (N + 1) * (N + 1) * (N + 1);
      if (!f || fwrite (grid, sizeof (float), n, f) != n || fclose (f) != 0)
        {
          fprintf (stderr, "bench_isosurface: cannot write %s\n", dump);
          return 1;
        }
      printf ("RESULT %s node_cpu %.6f triangles %lld dense_cpu %.6f node_wall %.6f "
              "dense_wall %.6f\n", field_id, one.cpu, (long long) one.triangles, dense.cpu,
              one.seconds, dense.seconds);
    }

  printf ("\n%s: %d^3 cells, %lld triangles welded to %lld vertices\n", title, N,
          (long long) one.triangles, (long long) one.vertices);
  printf ("  blocks skipped %lld of %lld, sub-blocks skipped %lld; field samples %.1f M "
          "(%.0f%% of the corners), %.0f ms of them one by one\n",
          (long long) st.blocks_skipped, (long long) st.blocks, (long long) st.subblocks_skipped,
          st.evaluations * 1e-6, 100.0 * st.evaluations / pow (N + 1, 3), eval_s * 1e3);
  printf ("  phases on one thread: sampling %.1f ms (grid path %s), marching with normals "
          "%.1f ms, stitching and finishing %.1f ms\n",
          st.seconds_eval * 1e3, tg_value_field (fv)->eval_grid ? "yes" : "no",
          st.seconds_mesh * 1e3, st.seconds_stitch * 1e3);
  printf ("  without shared corners: %.1f M samples, sampling %.1f ms, marching %.1f ms, "
          "stitching %.1f ms\n", st_own.evaluations * 1e-6, st_own.seconds_eval * 1e3,
          st_own.seconds_mesh * 1e3, st_own.seconds_stitch * 1e3);
  printf ("  %-40s %7s %9s %12s %9s\n", "", "threads", "ms", "M cells/s", "vs ref");
  printf ("  %-40s %7d %9.1f %12.1f %8.2fx\n", "reference: textbook MC (sample + mesh)", 1,
          ref_s * 1e3, cells / ref_s * 1e-6, 1.0);
  printf ("  %-40s %7d %9.1f %12.1f\n", "  of which sampling the grid", 1, ref.sample_s * 1e3,
          cells / ref.sample_s * 1e-6);
  printf ("  %-40s %7d %9.1f %12.1f\n", "  of which marching the cells", 1, ref.mesh_s * 1e3,
          cells / ref.mesh_s * 1e-6);
  printf ("  %-40s %7d %9.1f %12.1f %8.2fx  (CPU %.1f ms)\n", "mesh.isosurface (welded, normals)",
          one.threads, one.seconds * 1e3, cells / one.seconds * 1e-6, ref_s / one.seconds,
          one.cpu * 1e3);
  printf ("  %-40s %7s %9s %12s  user %.1f ms, system %.1f ms, %ld page faults\n", "", "", "",
          "", one.user * 1e3, one.sys * 1e3, one.faults);
  printf ("  %-40s %7d %9.1f %12.1f %8.2fx\n", "mesh.isosurface (welded, normals)", all.threads,
          all.seconds * 1e3, cells / all.seconds * 1e-6, ref_s / all.seconds);
  printf ("  %-40s %7d %9.1f %12.1f %8.2fx  (CPU %.1f ms: copy %.1f, march %.1f, stitch %.1f)\n",
          "mesh.isosurface on the dense values", 1, dense.seconds * 1e3, cells / dense.seconds * 1e-6,
          ref_s / dense.seconds, dense.cpu * 1e3, dense.st.seconds_eval * 1e3,
          dense.st.seconds_mesh * 1e3, dense.st.seconds_stitch * 1e3);
  printf ("  reference triangles %lld (same table, unshared vertices); mesh hash %016llx%016llx\n",
          (long long) ref.triangles, (unsigned long long) h1.a, (unsigned long long) h1.b);
  tg_value_unref (fv);
  tg_engine_free (e);
  free (grid);
  free (tris);
  if (h1.a != hn.a || h1.b != hn.b)
    {
      printf ("  FAIL: 1 and %d threads gave different meshes\n", all.threads);
      return 1;
    }
  if (dense.triangles != one.triangles)
    {
      printf ("  FAIL: the dense values made %lld triangles, the field %lld\n",
              (long long) dense.triangles, (long long) one.triangles);
      return 1;
    }
  /* Off the box's faces (where the volume ends and the field does not),
   * the values are the same, so are the bytes. */
  if (strcmp (field_id, "s") == 0 && (dense.hash.a != h1.a || dense.hash.b != h1.b))
    {
      printf ("  FAIL: the sphere's dense values gave other bytes than its field\n");
      return 1;
    }
  if (ref.triangles != one.triangles)
    {
      printf ("  FAIL: the reference made %lld triangles, the node %lld\n",
              (long long) ref.triangles, (long long) one.triangles);
      return 1;
    }
  return 0;
}

/* `bench_isosurface RUNS dense GRID.f32`: only the mesher on a grid the
 * DIR form wrote, best of RUNS, with its mesh hash (to profile the dense
 * path alone, and to compare its bytes before and after a change). */
static int
dense_only (const char *path, int runs)
{
  size_t n = (size_t) (N + 1) * (N + 1) * (N + 1);
  float *grid = malloc (sizeof (float) * n);
  FILE *f = path ? fopen (path, "rb") : NULL;
  TgIsoOptions io = { .min = { -128, -128, -128 }, .max = { 128, 128, 128 }, .cell = 1.0 };
  DenseResult d;

  if (grid == NULL || f == NULL || fread (grid, sizeof (float), n, f) != n)
    {
      fprintf (stderr, "bench_isosurface: cannot read %s\n", path ? path : "(no grid)");
      return 1;
    }
  fclose (f);
  d = time_dense (grid, &io, runs);
  printf ("dense %s: CPU %.1f ms (copy %.1f, march %.1f, stitch %.1f), wall %.1f ms, "
          "%lld triangles, mesh hash %016llx%016llx\n",
          path, d.cpu * 1e3, d.st.seconds_eval * 1e3, d.st.seconds_mesh * 1e3,
          d.st.seconds_stitch * 1e3, d.seconds * 1e3, (long long) d.triangles,
          (unsigned long long) d.hash.a, (unsigned long long) d.hash.b);
  free (grid);
  return 0;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

/* `bench_isosurface RUNS grid`: field F's grid path alone, the 257^3
 * corners of the box as the mesher's slabs take them: a layer of 32
 * lattice planes (and the last plane) at a time in 64 x 32 x 32 grids
 * (one point thick at the box's far faces) into one slab that each layer
 * reuses.  Prints the CPU and wall time of every run, sorted, and the
 * hash of the values (an extra run, not timed). */
static int
grid_only (const TgField *f, int runs)
{
  size_t n1 = N + 1, sxy = n1 * n1;
  float *slab = malloc (sizeof (float) * sxy * 32);
  float cs[N + 1];
  double *cpu = calloc ((size_t) runs + 1, sizeof (double));
  double *wall = calloc ((size_t) runs + 1, sizeof (double));
  TgFieldScratch w = { 0 };
  TgHasher hh;
  TgHash h;

  if (slab == NULL || cpu == NULL || wall == NULL)
    return 1;
  for (int i = 0; i <= N; i++)
    cs[i] = (float) (-128 + i);
  tg_hasher_init (&hh);
  for (int r = 0; r <= runs; r++)
    {
      double c0 = tg_cpu_s (), t0 = tg_wall_s ();

      for (int z0 = 0; z0 <= N; z0 += 32)
        {
          int nz = z0 == N ? 1 : 32;

          for (int y0 = 0; y0 <= N; y0 += 32)
            for (int x0 = 0; x0 <= N; x0 += 64)
              {
                TgFieldGrid g = { cs + x0, cs + y0, cs + z0, x0 == N ? 1 : 64,
                                  y0 == N ? 1 : 32, nz };

                if (tg_field_eval_grid (f, &g, slab + (size_t) x0 + (size_t) y0 * n1, n1, sxy,
                                        &w) < 0)
                  return 1;
              }
          if (r == runs)
            tg_hasher_bytes (&hh, slab, sizeof (float) * sxy * (size_t) nz);
        }
      cpu[r] = tg_cpu_s () - c0;
      wall[r] = tg_wall_s () - t0;
    }
  h = tg_hasher_finish (&hh);
  qsort (cpu, (size_t) runs, sizeof (double), cmp_double);
  qsort (wall, (size_t) runs, sizeof (double), cmp_double);
  printf ("grid path, 257^3 fBm samples: CPU ms");
  for (int r = 0; r < runs; r++)
    printf (" %.1f", cpu[r] * 1e3);
  printf (" (median %.1f), wall ms", cpu[runs / 2] * 1e3);
  for (int r = 0; r < runs; r++)
    printf (" %.1f", wall[r] * 1e3);
  printf ("; values hash %016llx%016llx\n", (unsigned long long) h.a, (unsigned long long) h.b);
  tg_field_scratch_clear (&w);
  free (slab);
  free (cpu);
  free (wall);
  return 0;
}

int
main (int argc, char **argv)
{
  int runs = argc > 1 ? atoi (argv[1]) : 3;
  const char *only = argc > 2 ? argv[2] : "";
  const char *dir = argc > 3 ? argv[3] : NULL;
  char sphere_path[4096], fbm_path[4096];
  int rc = 0;
  TgError err = { 0 };
  TgGraph *g;

  if (runs < 1)
    runs = 1;
  if (strcmp (only, "dense") == 0)
    return dense_only (dir, runs);
  if (dir)
    {
      snprintf (sphere_path, sizeof sphere_path, "%s/sphere.f32", dir);
      snprintf (fbm_path, sizeof fbm_path, "%s/fbm.f32", dir);
    }
  printf ("bench_isosurface: best of %d runs; goal (VTK Flying Edges, one thread): "
          "~460 M cells/s sphere, 90-110 M cells/s fBm\n", runs);

  g = tg_graph_new ();
  tg_graph_add_node (g, "s", "field.sphere", &err);
  tg_graph_add_node (g, "iso", "mesh.isosurface", &err);
  tg_graph_add_link (g, "s", "field", "iso", "field", &err);
  set (g, "s", "center_m", "0.3,-0.2,0.1");
  set (g, "s", "radius_m", "100");
  set (g, "iso", "min_m", "-128,-128,-128");
  set (g, "iso", "max_m", "128,128,128");
  set (g, "iso", "cell_m", "1");
  if (strcmp (only, "fbm") != 0 && strcmp (only, "grid") != 0)
    rc |= run_case ("sphere (signed distance)", g, "s", runs, dir ? sphere_path : NULL);
  tg_graph_free (g);

  g = tg_graph_new ();
  tg_graph_add_node (g, "n", "field.noise", &err);
  tg_graph_add_node (g, "iso", "mesh.isosurface", &err);
  tg_graph_add_link (g, "n", "field", "iso", "field", &err);
  set (g, "n", "amplitude_m", "10");
  set (g, "n", "scale_m", "64");
  set (g, "n", "octaves", "4");
  set (g, "iso", "min_m", "-128,-128,-128");
  set (g, "iso", "max_m", "128,128,128");
  set (g, "iso", "cell_m", "1");
  if (strcmp (only, "grid") == 0)
    {
      TgEngine *e = tg_engine_new (&(TgEngineOptions){ .threads = 1 });
      TgRegion r;
      TgValue *fv = NULL;

      tg_region_for_world (&r, tg_graph_world (g), tg_graph_world (g)->resolution);
      if (tg_engine_pull (e, g, tg_graph_find_node (g, "n"), 0, &r, NULL, &fv, NULL, &err))
        {
          fprintf (stderr, "bench_isosurface: %s\n", err.message);
          return 1;
        }
      const TgField *f = tg_value_field (fv);
      TgNoise3 *plan = f->data;

      for (int isa = 0; dir && isa < TG__FBM_ISA_COUNT; isa++)
        if (strcmp (dir, tg__fbm_isa_name ((TgFbmIsa) isa)) == 0)
          {
            if (!tg__fbm_isa_supported ((TgFbmIsa) isa))
              {
                fprintf (stderr, "bench_isosurface: %s: not on this machine\n", dir);
                return 1;
              }
            plan->isa = (TgFbmIsa) isa;
          }
      printf ("%s: ", tg__fbm_isa_name (plan->isa));
      rc = grid_only (f, runs);
      tg_value_unref (fv);
      tg_engine_free (e);
    }
  else if (strcmp (only, "sphere") != 0)
    rc |= run_case ("3D Perlin fBm, 4 octaves", g, "n", runs, dir ? fbm_path : NULL);
  tg_graph_free (g);
  return rc;
}
