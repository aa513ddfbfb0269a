/* noise.fbm: the row kernel equals the scalar reference bit for bit on
 * every ISA build; ranges and normalisation; determinism across threads
 * and tiles with golden hashes; seeds, warp, offsets and metres; the
 * descriptor and bad parameters. */
#include <stdint.h>
#include <time.h>

#include <tgraph/tgraph.h>

#include "tgtest.h"
#include "../../engine/nodes/noise_fbm.h"

static const char *const basis_names[] = { "perlin", "simplex", "value", "worley" };
static const char *const mode_names[] = { "fbm", "ridged", "billow" };
static const char *const ret_names[] = { "f1", "f2", "f2_minus_f1" };

/* FNV-1a over the bytes: independent of the engine's own hasher. */
static uint64_t
fnv1a (const void *data, size_t n)
{
  const unsigned char *p = data;
  uint64_t h = 0xcbf29ce484222325ull;

  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static TgFbmParams
default_params (void)
{
  TgFbmParams p = { 0 };

  p.basis = TG__FBM_PERLIN;
  p.worley_return = TG__FBM_F1;
  p.mode = TG__FBM_MODE_FBM;
  p.scale_m = 1000.0;
  p.octaves = 6;
  p.persistence = 0.5;
  p.lacunarity = 2.0;
  p.warp_scale_m = 2000.0;
  return p;
}

/* The row kernel over R with plan F, every row. */
static float *
kernel_map (const TgFbm *f, const TgRegion *r)
{
  float *m = malloc (sizeof (float) * tg_region_samples (r));

  for (int j = 0; j < r->height; j++)
    tg__fbm_row (f, r, j, 0, r->width, m + (size_t) j * (size_t) r->width);
  return m;
}

/* --- kernel vs reference ------------------------------------------------ */

static int
compare_rows (const TgFbm *f, const TgRegion *r, const char *what)
{
  float *row = malloc (sizeof (float) * (size_t) r->width);
  int bad = 0;

  for (int j = 0; j < r->height; j++)
    {
      tg__fbm_row (f, r, j, 0, r->width, row);
      for (int i = 0; i < r->width; i++)
        {
          float ref = tg__fbm_reference_sample (f, tg_region_x (r, i), tg_region_z (r, j));

          if (memcmp (&ref, &row[i], sizeof ref) != 0)
            {
              if (bad++ < 3)
                fprintf (stderr, "  %s isa %s: sample (%d, %d) ref %.9g kernel %.9g\n", what,
                         tg__fbm_isa_name (f->isa), i, j, ref, row[i]);
            }
        }
    }
  free (row);
  return bad;
}

static void
test_kernel_matches_reference_on_rows (void)
{
  /* Awkward lattices: negative and far origins, odd cell sizes, windows
   * that start before the lattice (aprons) and widths that are not a
   * multiple of the kernel's block. */
  const TgRegion regions[] = {
    { -2048.0, 2048.0, 16.0, 257, 257, 0, 0, 97, 5 },
    { -1e5, 3e4, 0.731, 4000, 4000, -17, 3, 300, 4 },
    { 7.5e6, -2.5e6, 3.3, 9000, 9000, 8000, 100, 131, 3 },
    { -0.5, 0.5, 1.0 / 1024.0, 1025, 1025, 500, 500, 65, 3 },
  };
  int bad = 0, runs = 0;

  for (int basis = 0; basis < 4; basis++)
    for (int ret = 0; ret < (basis == TG__FBM_WORLEY ? 3 : 1); ret++)
      for (int mode = 0; mode < 3; mode++)
        for (int warp = 0; warp < 2; warp++)
          for (int isa = 0; isa < TG__FBM_ISA_COUNT; isa++)
            {
              TgFbmParams p = default_params ();
              TgFbm f;
              char what[96];

              if (!tg__fbm_isa_supported ((TgFbmIsa) isa))
                continue;
              p.basis = basis;
              p.worley_return = ret;
              p.mode = mode;
              p.scale_m = 250.0;
              p.octaves = 8;
              p.persistence = 0.55;
              p.lacunarity = 2.1;
              p.offset_m[0] = 13.5;
              p.offset_m[1] = -40.25;
              p.warp_m = warp ? 300.0 : 0.0;
              p.warp_scale_m = 900.0;
              tg__fbm_plan (&f, &p, 12345u);
              f.isa = (TgFbmIsa) isa;
              snprintf (what, sizeof what, "%s/%s/%s%s", basis_names[basis], ret_names[ret],
                        mode_names[mode], warp ? "/warp" : "");
              for (int k = 0; k < TG_N_ELEMENTS (regions); k++)
                bad += compare_rows (&f, &regions[k], what);
              runs++;
            }
  TG_CHECK_INT_EQ (bad, 0);
  TG_CHECK (runs >= 36); /* at least the generic build of every case */
}

/* Arbitrary points: tiny, negative, lattice-aligned, and so far out (or
 * so fine) that lattice coordinates pass 2^31 cells, where the kernel
 * falls back to the reference's split and cells wrap modulo 2^32. */
static void
test_kernel_matches_reference_on_points (void)
{
  enum { N = 1000 };
  double *x = malloc (sizeof (double) * N), *z = malloc (sizeof (double) * N);
  float *out = malloc (sizeof (float) * N);
  const double scales[] = { 1000.0, 1.0 };
  int bad = 0;

  for (int k = 0; k < N; k++)
    {
      uint32_t h1 = tg_hash2 (7, k, 1), h2 = tg_hash2 (7, k, 2);
      double u = (double) h1 / 4294967296.0 - 0.5, v = (double) h2 / 4294967296.0 - 0.5;
      double mag = k < 250 ? 10.0 : k < 500 ? 1e5 : k < 750 ? 1e7 : 1e9;

      x[k] = u * mag;
      z[k] = v * mag;
    }
  x[0] = 0.0, z[0] = -0.0;
  x[1] = -1000.0, z[1] = 1000.0; /* on the octave-0 lattice */
  x[2] = 1e9, z[2] = -1e9;
  x[3] = -4.5e9, z[3] = 4.5e9;

  for (int s = 0; s < TG_N_ELEMENTS (scales); s++)
    for (int basis = 0; basis < 4; basis++)
      for (int mode = 0; mode < 3; mode++)
        for (int isa = 0; isa < TG__FBM_ISA_COUNT; isa++)
          {
            TgFbmParams p = default_params ();
            TgFbm f;

            if (!tg__fbm_isa_supported ((TgFbmIsa) isa))
              continue;
            p.basis = basis;
            p.worley_return = mode; /* cover the three returns too */
            p.mode = mode;
            p.scale_m = scales[s];
            p.octaves = 16;
            p.lacunarity = 3.7;
            p.persistence = 0.8;
            p.warp_m = mode == 1 ? 50.0 : 0.0;
            tg__fbm_plan (&f, &p, 0xdeadbeefu);
            f.isa = (TgFbmIsa) isa;
            tg__fbm_points (&f, x, z, N, out);
            for (int k = 0; k < N; k++)
              {
                float ref = tg__fbm_reference_sample (&f, x[k], z[k]);

                if (memcmp (&ref, &out[k], sizeof ref) != 0 && bad++ < 5)
                  fprintf (stderr, "  %s/%s scale %g isa %s: (%g, %g) ref %.9g kernel %.9g\n",
                           basis_names[basis], mode_names[mode], scales[s],
                           tg__fbm_isa_name (f.isa), x[k], z[k], ref, out[k]);
              }
          }
  TG_CHECK_INT_EQ (bad, 0);
  free (x);
  free (z);
  free (out);
}

/* The kernel's 4x4 Worley search must find what the reference's 5x5 scan
 * finds.  A plain 3x3 search at this jitter misses the true F2 about once
 * in 10^5 samples, so this needs a million F2 samples to notice. */
static void
test_worley_search_misses_nothing (void)
{
  TgRegion r = { -1000.0, 1000.0, 0.37, 100000, 100000, 0, 0, 2048, 600 };
  int bad = 0;

  for (int ret = TG__FBM_F2; ret <= TG__FBM_F2_MINUS_F1; ret++)
    {
      TgFbmParams p = default_params ();
      TgFbm f;

      p.basis = TG__FBM_WORLEY;
      p.worley_return = ret;
      p.octaves = 1;
      p.scale_m = 1.0;
      tg__fbm_plan (&f, &p, 3u);
      bad += compare_rows (&f, &r, ret_names[ret]);
    }
  TG_CHECK_INT_EQ (bad, 0);
}

/* --- ranges ---------------------------------------------------------------- */

typedef struct
{
  double mean, sd, min, max;
  long n_clamped; /* exactly 0 or 1 */
} Stats;

static Stats
stats_of (const float *m, size_t n)
{
  Stats s = { 0.0, 0.0, 1e9, -1e9, 0 };
  double sum = 0.0, sum2 = 0.0;

  for (size_t k = 0; k < n; k++)
    {
      double v = m[k];

      sum += v;
      sum2 += v * v;
      s.min = v < s.min ? v : s.min;
      s.max = v > s.max ? v : s.max;
      s.n_clamped += m[k] == 0.0f || m[k] == 1.0f;
    }
  s.mean = sum / (double) n;
  s.sd = sqrt (sum2 / (double) n - s.mean * s.mean);
  return s;
}

static void
test_range_and_spread_of_every_basis_and_mode (void)
{
  TgRegion r = { -8192.0, 8192.0, 32.0, 513, 513, 0, 0, 513, 513 };

  for (int basis = 0; basis < 4; basis++)
    for (int mode = 0; mode < 3; mode++)
      {
        TgFbmParams p = default_params ();
        TgFbm f;
        float *m;
        Stats s;

        p.basis = basis;
        p.mode = mode;
        p.octaves = 8;
        tg__fbm_plan (&f, &p, 99u);
        m = kernel_map (&f, &r);
        s = stats_of (m, tg_region_samples (&r));
        fprintf (stderr, "  %-7s %-6s mean %.3f sd %.3f range %.3f..%.3f\n", basis_names[basis],
                 mode_names[mode], s.mean, s.sd, s.min, s.max);
        TG_CHECK_MSG (s.min >= 0.0 && s.max <= 1.0, "%s/%s", basis_names[basis], mode_names[mode]);
        TG_CHECK_MSG (s.n_clamped == 0, "%s/%s: %ld samples at the clamp", basis_names[basis],
                      mode_names[mode], s.n_clamped);
        /* Spread: not flat, not saturated; a good part of 0..1 is used. */
        TG_CHECK_MSG (s.sd > 0.05 && s.sd < 0.3, "%s/%s sd %g", basis_names[basis],
                      mode_names[mode], s.sd);
        TG_CHECK_MSG (s.max - s.min > 0.4, "%s/%s range %g", basis_names[basis],
                      mode_names[mode], s.max - s.min);
        TG_CHECK_MSG (s.mean > 0.15 && s.mean < 0.7, "%s/%s mean %g", basis_names[basis],
                      mode_names[mode], s.mean);
        /* Symmetric bases: fbm is centred on 0.5. */
        if (mode == TG__FBM_MODE_FBM && basis != TG__FBM_WORLEY)
          TG_CHECK_NEAR (s.mean, 0.5, 0.04);
        free (m);
      }
}

/* One octave comes closest to each basis's bound: over millions of lattice
 * cells the values stay inside [-1, 1] without the clamp, and the bound is
 * not loose (the values reach most of it). */
static void
test_normalisation_bounds_hold_over_a_large_map (void)
{
  /* 2049^2 samples, 5 per cell: about 170 000 cells per basis. */
  TgRegion r = { -10240.0, 10240.0, 10.0, 2049, 2049, 0, 0, 2049, 2049 };
  const double reach_min[] = { 0.75, 0.75, 0.9, 0.6 };

  for (int basis = 0; basis < 4; basis++)
    {
      TgFbmParams p = default_params ();
      TgFbm f;
      float *m;
      Stats s;
      double reach;

      p.basis = basis;
      p.octaves = 1;
      p.scale_m = 50.0;
      tg__fbm_plan (&f, &p, 4242u);
      m = kernel_map (&f, &r);
      s = stats_of (m, tg_region_samples (&r));
      /* out = 0.5 + 0.5 n */
      reach = fabs (2.0 * s.max - 1.0) > fabs (2.0 * s.min - 1.0) ? fabs (2.0 * s.max - 1.0)
                                                                   : fabs (2.0 * s.min - 1.0);
      fprintf (stderr, "  %-7s one octave: n in %.4f..%.4f\n", basis_names[basis],
               2.0 * s.min - 1.0, 2.0 * s.max - 1.0);
      TG_CHECK_MSG (s.n_clamped == 0, "%s: %ld clamped", basis_names[basis], s.n_clamped);
      TG_CHECK (s.min > 0.0 && s.max < 1.0);
      TG_CHECK_MSG (reach > reach_min[basis], "%s reaches only %g of its bound",
                    basis_names[basis], reach);
      free (m);
    }

  /* All octaves at full amplitude: the sum bound (not the map) scales it. */
  for (int basis = 0; basis < 4; basis++)
    for (int mode = 0; mode < 3; mode++)
      {
        TgFbmParams p = default_params ();
        TgRegion w = tg_region_window (&r, 0, 0, 2049, 512);
        TgFbm f;
        float *m;
        Stats s;

        p.basis = basis;
        p.mode = mode;
        p.octaves = 12;
        p.persistence = 1.0;
        p.lacunarity = 1.3;
        tg__fbm_plan (&f, &p, 77u);
        m = kernel_map (&f, &w);
        s = stats_of (m, tg_region_samples (&w));
        TG_CHECK_MSG (s.min > 0.0 && s.max < 1.0 && s.n_clamped == 0,
                      "%s/%s: %g..%g, %ld clamped", basis_names[basis], mode_names[mode], s.min,
                      s.max, s.n_clamped);
        free (m);
      }
}

/* Worley's search is exact, so F1 and F2 are continuous: along a fine line
 * the value moves by at most its Lipschitz bound per step, with no seams
 * at cell borders. */
static void
test_worley_has_no_seams (void)
{
  const double step = 0.002; /* metres, with 1 m cells */
  TgRegion r = { -37.3, 21.9, step, 100000, 100000, 0, 0, 30000, 3 };

  for (int ret = 0; ret < 3; ret++)
    {
      TgFbmParams p = default_params ();
      TgFbm f;
      float *m;
      /* |dF1|, |dF2| <= step; F2 - F1 moves at most twice as fast. */
      double lip = (ret == TG__FBM_F1 ? TG__WORLEY_F1_NORM : TG__WORLEY_F2_NORM)
                   * (ret == TG__FBM_F2_MINUS_F1 ? 2.0 : 1.0);
      double worst = 0.0;

      p.basis = TG__FBM_WORLEY;
      p.worley_return = ret;
      p.octaves = 1;
      p.scale_m = 1.0;
      tg__fbm_plan (&f, &p, 5u);
      m = kernel_map (&f, &r);
      for (int j = 0; j < r.height; j++)
        for (int i = 1; i < r.width; i++)
          {
            /* n = 2 out - 1 */
            double d = 2.0 * fabs ((double) m[j * r.width + i] - m[j * r.width + i - 1]);

            worst = d > worst ? d : worst;
          }
      TG_CHECK_MSG (worst <= lip * step * 1.01 + 1e-5, "%s: jump %g > %g", ret_names[ret], worst,
                    lip * step);
      free (m);
    }
}

/* --- through the engine ----------------------------------------------------- */

static int
set_param (TgGraph *g, int node, const char *name, const char *text, TgError *err)
{
  return tg_graph_set_param_text (g, node, name, text, err);
}

/* A graph with one noise.fbm node "n"; ARGS: "name", "value" pairs, NULL-ended. */
static TgGraph *
noise_graph (double size_m, uint32_t world_seed, const char *const *args)
{
  TgGraph *g = tg_graph_new ();
  TgError err = { 0 };

  tg_graph_world (g)->size_x = size_m;
  tg_graph_world (g)->size_z = size_m;
  tg_graph_world (g)->seed = world_seed;
  TG_CHECK_INT_EQ (tg_graph_add_node (g, "n", "noise.fbm", &err), 0);
  for (int k = 0; args && args[k]; k += 2)
    TG_CHECK_MSG (set_param (g, 0, args[k], args[k + 1], &err) == 0, "%s=%s: %s", args[k],
                  args[k + 1], err.message);
  return g;
}

static TgValue *
pull_region (TgEngine *e, const TgGraph *g, const TgRegion *r)
{
  TgValue *v = NULL;
  TgError err = { 0 };
  int rc = tg_engine_pull (e, g, 0, 0, r, NULL, &v, NULL, &err);

  TG_CHECK_MSG (rc == 0 && v != NULL, "%s: %s", err.path, err.message);
  return v;
}

static TgValue *
pull_world (const TgGraph *g, int resolution, int threads)
{
  TgEngineOptions o = { .threads = threads, .cache_bytes = 0 };
  TgEngine *e = tg_engine_new (&o);
  TgRegion r;
  TgValue *v;

  tg_region_for_world (&r, tg_graph_world_const (g), resolution);
  v = pull_region (e, g, &r);
  tg_engine_free (e);
  return v;
}

static uint64_t
value_hash (const TgValue *v)
{
  return v ? fnv1a (v->data, tg_region_samples (&v->region) * sizeof (float)) : 0;
}

static bool
values_equal (const TgValue *a, const TgValue *b)
{
  return a && b && tg_region_equal (&a->region, &b->region)
         && memcmp (a->data, b->data, tg_region_samples (&a->region) * sizeof (float)) == 0;
}

/* Golden outputs: a change here changes every user's terrain, so bump the
 * node's version when it is intended. */
static void
test_threads_give_the_same_bytes_and_golden_hashes (void)
{
  static const char *const a0[] = { NULL };
  static const char *const a1[] = { "basis", "simplex", "mode", "ridged", "warp_m", "400",
                                    "octaves", "9", "seed", "17", NULL };
  static const char *const a2[] = { "basis", "worley", "worley_return", "f2_minus_f1", "mode",
                                    "billow", "scale_m", "700", "offset_m", "120,-35", NULL };
  static const char *const a3[] = { "basis", "value", "persistence", "0.62", "lacunarity",
                                    "2.7", "octaves", "11", NULL };
  const char *const *args[] = { a0, a1, a2, a3 };
  const uint64_t golden[] = {
    0x3340b3be2287d777ull,
    0xceb6065650175965ull,
    0xa2a4f3feff9e3ecbull,
    0x94e387202be59127ull,
  };

  for (int k = 0; k < TG_N_ELEMENTS (args); k++)
    {
      TgGraph *g = noise_graph (4096.0, 1234u, args[k]);
      TgValue *one = pull_world (g, 257, 1);
      TgValue *four = pull_world (g, 257, 4);
      uint64_t h = value_hash (one);

      TG_CHECK_MSG (values_equal (one, four), "case %d: 1 and 4 threads differ", k);
      if (h != golden[k])
        fprintf (stderr, "  case %d: hash 0x%016llxull (golden 0x%016llxull)\n", k,
                 (unsigned long long) h, (unsigned long long) golden[k]);
      TG_CHECK (h == golden[k]);
      tg_value_unref (one);
      tg_value_unref (four);
      tg_graph_free (g);
    }
}

/* Local node: any tiling of the map gives the same bytes as the whole. */
static void
test_tiles_join_into_the_whole_map (void)
{
  static const char *const a0[] = { "octaves", "10", NULL };
  static const char *const a1[] = { "basis", "worley", "worley_return", "f2", "warp_m", "250",
                                    "mode", "ridged", NULL };
  const char *const *args[] = { a0, a1 };

  for (int k = 0; k < TG_N_ELEMENTS (args); k++)
    {
      TgGraph *g = noise_graph (3000.0, 9u, args[k]);
      TgEngineOptions o = { .threads = 2, .cache_bytes = 0 };
      TgEngine *e = tg_engine_new (&o);
      TgRegion whole;
      TgValue *w;
      int cols[] = { 0, 128, 257 }, rows[] = { 0, 100, 257 };

      tg_region_for_world (&whole, tg_graph_world_const (g), 257);
      w = pull_region (e, g, &whole);
      for (int ty = 0; ty < 2; ty++)
        for (int tx = 0; tx < 2; tx++)
          {
            TgRegion t = tg_region_window (&whole, cols[tx], rows[ty], cols[tx + 1] - cols[tx],
                                           rows[ty + 1] - rows[ty]);
            TgValue *tv = pull_region (e, g, &t);
            TgValue *crop = w ? tg_value_crop (w, &t) : NULL;

            TG_CHECK_MSG (values_equal (tv, crop), "case %d tile (%d, %d)", k, tx, ty);
            tg_value_unref (tv);
            tg_value_unref (crop);
          }
      /* A window reaching past the world's edge (an apron) agrees where
       * it overlaps the world. */
      {
        TgRegion a = tg_region_window (&whole, -7, -3, 40, 20);
        TgValue *av = pull_region (e, g, &a);
        int bad = 0;

        for (int j = 3; av && w && j < 20; j++)
          bad += memcmp (tg_value_row (av, j) + 7, tg_value_row (w, j - 3),
                         sizeof (float) * 33) != 0;
        TG_CHECK (av != NULL && bad == 0);
        tg_value_unref (av);
      }
      tg_value_unref (w);
      tg_engine_free (e);
      tg_graph_free (g);
    }
}

static double
mean_abs_diff (const TgValue *a, const TgValue *b)
{
  double s = 0.0;
  size_t n = tg_region_samples (&a->region);

  for (size_t k = 0; k < n; k++)
    s += fabs ((double) a->data[k] - b->data[k]);
  return s / (double) n;
}

static void
test_seeds_change_the_terrain (void)
{
  static const char *const s1[] = { "seed", "1", NULL };
  static const char *const s2[] = { "seed", "2", NULL };
  TgGraph *g1 = noise_graph (4096.0, 0u, s1);
  TgGraph *g2 = noise_graph (4096.0, 0u, s2);
  TgGraph *g3 = noise_graph (4096.0, 77u, s1);
  TgValue *v1 = pull_world (g1, 129, 2);
  TgValue *v2 = pull_world (g2, 129, 2);
  TgValue *v3 = pull_world (g3, 129, 2);
  TgValue *again = pull_world (g1, 129, 2);

  TG_CHECK (values_equal (v1, again));
  /* Uncorrelated maps of sd ~0.09 differ by ~0.1 on average. */
  TG_CHECK_MSG (mean_abs_diff (v1, v2) > 0.04, "node seed: %g", mean_abs_diff (v1, v2));
  TG_CHECK_MSG (mean_abs_diff (v1, v3) > 0.04, "world seed: %g", mean_abs_diff (v1, v3));
  tg_value_unref (v1);
  tg_value_unref (v2);
  tg_value_unref (v3);
  tg_value_unref (again);
  tg_graph_free (g1);
  tg_graph_free (g2);
  tg_graph_free (g3);
}

static void
test_warp_moves_features_and_stays_in_range (void)
{
  static const char *const plain[] = { "basis", "simplex", NULL };
  static const char *const warped[] = { "basis", "simplex", "warp_m", "600", "warp_scale_m",
                                        "1500", NULL };
  TgGraph *g0 = noise_graph (4096.0, 3u, plain);
  TgGraph *g1 = noise_graph (4096.0, 3u, warped);
  TgValue *a = pull_world (g0, 257, 2);
  TgValue *b = pull_world (g1, 257, 2);
  Stats s = stats_of (b->data, tg_region_samples (&b->region));

  TG_CHECK_MSG (mean_abs_diff (a, b) > 0.05, "warp changed little: %g", mean_abs_diff (a, b));
  TG_CHECK (s.min >= 0.0 && s.max <= 1.0 && s.n_clamped == 0);
  TG_CHECK_NEAR (s.mean, 0.5, 0.06);
  tg_value_unref (a);
  tg_value_unref (b);
  tg_graph_free (g0);
  tg_graph_free (g1);
}

/* Parameters are in metres: a 257 and a 1025 build of the same world agree
 * at the same world points; doubling the world and every length gives the
 * same map; an offset of k cells shifts the map by k samples. */
static void
test_lengths_are_in_metres (void)
{
  static const char *const a[] = { "scale_m", "600", "octaves", "7", NULL };
  static const char *const a2[] = { "scale_m", "1200", "octaves", "7", NULL };
  static const char *const shifted[] = { "scale_m", "600", "octaves", "7", "offset_m", "48,-32",
                                         NULL };
  TgGraph *g = noise_graph (4096.0, 5u, a);
  TgGraph *big = noise_graph (8192.0, 5u, a2);
  TgGraph *gs = noise_graph (4096.0, 5u, shifted);
  TgValue *lo = pull_world (g, 257, 2);
  TgValue *hi = pull_world (g, 1025, 2);
  TgValue *dbl = pull_world (big, 257, 2);
  TgValue *sh = pull_world (gs, 257, 2);
  double worst = 0.0;
  int shift_bad = 0;

  /* Sample (i, j) of the 257 map is sample (4i, 4j) of the 1025 map. */
  for (int j = 0; j < 257; j++)
    for (int i = 0; i < 257; i++)
      {
        double d = fabs ((double) lo->data[j * 257 + i] - hi->data[(4 * j) * 1025 + 4 * i]);

        worst = d > worst ? d : worst;
      }
  TG_CHECK_MSG (worst <= 1e-6, "257 vs 1025 differ by %g", worst);
  TG_CHECK (memcmp (lo->data, dbl->data, sizeof (float) * 257 * 257) == 0);
  /* Cells of 16 m: offset (48, -32) m samples 3 columns east and 2 rows
   * south (z falls with the row). */
  for (int j = 0; j < 255; j++)
    for (int i = 0; i < 254; i++)
      shift_bad += memcmp (&sh->data[j * 257 + i], &lo->data[(j + 2) * 257 + i + 3], 4) != 0;
  TG_CHECK_INT_EQ (shift_bad, 0);
  tg_value_unref (lo);
  tg_value_unref (hi);
  tg_value_unref (dbl);
  tg_value_unref (sh);
  tg_graph_free (g);
  tg_graph_free (big);
  tg_graph_free (gs);
}

typedef struct
{
  TgCancel *cancel;
  int calls;
} CancelHook;

static void
cancel_on_progress (void *user, int node, TgNodeState state, double fraction)
{
  CancelHook *c = user;

  c->calls++;
  if (state == TG_NODE_RUNNING && fraction > 0.0)
    tg_cancel_request (c->cancel);
}

static double
now_s (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

/* Chunks are small enough that a cancel is seen long before the end. */
static void
test_cancel_stops_early (void)
{
  static const char *const heavy[] = { "basis", "worley", "octaves", "16", "warp_m", "100",
                                       "scale_m", "200", "lacunarity", "1.5", NULL };
  TgGraph *g = noise_graph (4096.0, 1u, heavy);
  TgEngineOptions o = { .threads = 2, .cache_bytes = 0 };
  TgEngine *e = tg_engine_new (&o);
  CancelHook c = { tg_cancel_new (), 0 };
  TgEvalHooks hooks = { .progress = cancel_on_progress, .user = &c, .cancel = c.cancel };
  TgRegion r;
  TgValue *v = NULL;
  TgError err = { 0 };
  double t0, cancelled, full;
  int rc;

  tg_region_for_world (&r, tg_graph_world_const (g), 2049);
  t0 = now_s ();
  rc = tg_engine_pull (e, g, 0, 0, &r, &hooks, &v, NULL, &err);
  cancelled = now_s () - t0;
  TG_CHECK_INT_EQ (rc, TG_ECANCELLED);
  TG_CHECK (v == NULL);
  tg_cancel_reset (c.cancel);
  hooks.progress = NULL;
  t0 = now_s ();
  rc = tg_engine_pull (e, g, 0, 0, &r, &hooks, &v, NULL, &err);
  full = now_s () - t0;
  TG_CHECK_INT_EQ (rc, 0);
  fprintf (stderr, "  cancelled after %.1f ms, full run %.1f ms\n", cancelled * 1e3, full * 1e3);
  TG_CHECK_MSG (cancelled < 0.25 * full, "cancel took %g s of %g s", cancelled, full);
  tg_value_unref (v);
  tg_cancel_free (c.cancel);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* --- the descriptor and bad input ---------------------------------------- */

static void
test_descriptor (void)
{
  const TgNodeDesc *d = tg_registry_lookup ("noise.fbm");
  const char *names[] = { "basis", "worley_return", "mode", "scale_m", "octaves", "persistence",
                          "lacunarity", "seed", "offset_m", "warp_m", "warp_scale_m" };

  TG_CHECK (d != NULL);
  if (d == NULL)
    return;
  TG_CHECK (d->category == TG_CATEGORY_GENERATORS);
  TG_CHECK_STR_CONTAINS (d->label, "FBM Noise");
  TG_CHECK (d->locality == TG_LOCALITY_LOCAL);
  TG_CHECK_INT_EQ (d->n_inputs, 0);
  TG_CHECK_INT_EQ (d->n_outputs, 1);
  TG_CHECK (strcmp (d->outputs[0].name, "height") == 0 && d->outputs[0].type == TG_TYPE_HEIGHT);
  TG_CHECK_INT_EQ (d->n_params, TG_N_ELEMENTS (names));
  for (int k = 0; k < d->n_params && k < TG_N_ELEMENTS (names); k++)
    TG_CHECK_MSG (strcmp (d->params[k].name, names[k]) == 0, "param %d is %s", k,
                  d->params[k].name);
  TG_CHECK (d->params[3].unit && strcmp (d->params[3].unit, "m") == 0);
  TG_CHECK (d->params[3].min == 1.0 && d->params[3].max == 1e6);
  TG_CHECK (d->params[3].soft_min == 10.0 && d->params[3].soft_max == 20000.0);
  TG_CHECK (d->params[4].def == 6.0 && d->params[4].min == 1.0 && d->params[4].max == 16.0);
  TG_CHECK (d->params[7].type == TG_PARAM_SEED);
  TG_CHECK (d->params[8].type == TG_PARAM_VEC2);
  TG_CHECK (d->params_size == sizeof (TgFbmParams));
}

static void
test_bad_parameters_name_the_place (void)
{
  TgGraph *g = noise_graph (4096.0, 0u, NULL);
  TgError err = { 0 };

  TG_CHECK_INT_EQ (set_param (g, 0, "octaves", "40", &err), TG_ERANGE);
  TG_CHECK_STR_CONTAINS (err.path, "params.octaves");
  tg_error_clear (&err);
  TG_CHECK (set_param (g, 0, "basis", "fractal", &err) < 0);
  TG_CHECK_STR_CONTAINS (err.path, "params.basis");
  tg_error_clear (&err);
  TG_CHECK_INT_EQ (set_param (g, 0, "scale_m", "0.5", &err), TG_ERANGE);
  TG_CHECK_STR_CONTAINS (err.path, "params.scale_m");
  tg_error_clear (&err);
  TG_CHECK_INT_EQ (set_param (g, 0, "lacunarity", "5", &err), TG_ERANGE);
  TG_CHECK_STR_CONTAINS (err.path, "params.lacunarity");
  tg_error_clear (&err);
  TG_CHECK_INT_EQ (set_param (g, 0, "warp_m", "-1", &err), TG_ERANGE);
  TG_CHECK_STR_CONTAINS (err.path, "params.warp_m");
  tg_graph_free (g);
}

int
main (void)
{
  TG_RUN (test_descriptor);
  TG_RUN (test_bad_parameters_name_the_place);
  TG_RUN (test_kernel_matches_reference_on_rows);
  TG_RUN (test_kernel_matches_reference_on_points);
  TG_RUN (test_worley_search_misses_nothing);
  TG_RUN (test_range_and_spread_of_every_basis_and_mode);
  TG_RUN (test_normalisation_bounds_hold_over_a_large_map);
  TG_RUN (test_worley_has_no_seams);
  TG_RUN (test_threads_give_the_same_bytes_and_golden_hashes);
  TG_RUN (test_tiles_join_into_the_whole_map);
  TG_RUN (test_seeds_change_the_terrain);
  TG_RUN (test_warp_moves_features_and_stays_in_range);
  TG_RUN (test_lengths_are_in_metres);
  TG_RUN (test_cancel_stops_early);
  return tgtest_result ();
}
