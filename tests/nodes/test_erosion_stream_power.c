/* Tests for erosion.stream_power: at steady state under uplift the
 * slope-area relation of the stream power law, S = (U/K)^(1/n) A^(-m/n),
 * holds on the result (measured with the test's own D8 routing and
 * accumulation, for n = 1 and for n = 2 through Newton's method); the
 * volume budget closes (eroded = deposited + carried out, and the change
 * of the terrain = uplift - carried out); a tilted noisy plane grows a
 * branching network (confluences of real channels, a drainage-area
 * distribution with the power-law exponent of natural basins, and
 * Strahler stream numbers with a bifurcation ratio between 3 and 5); the same
 * world at two resolutions keeps its hypsometry (the solver's own cell),
 * which solving on the map's own samples would not; the bytes are the
 * same on 1, 2 and 8 threads, and the solver's are those it gave before
 * its trees were walked in groups. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "erosion_stream_power.h"
#include "tggraph_test.h"
#include "tgtest.h"
#include "../bench/bench_pool.h"

/* A deterministic noise in [0, 1) from an integer. */
static double
noise01 (uint32_t k)
{
  k ^= k >> 16;
  k *= 0x7feb352du;
  k ^= k >> 15;
  k *= 0x846ca68bu;
  k ^= k >> 16;
  return (double) (k >> 8) / 16777216.0;
}

/* --- the test's own routing: steepest descent on the raw surface ---------- */

/* REC gets each sample's steepest lower neighbour (itself when none, or
 * on the world's edge), AREA the cells draining through it (counting
 * itself).  Samples are sorted by height for the sums. */
static const double *sort_z;

static int
by_height_desc (const void *a, const void *b)
{
  double za = sort_z[*(const int *) a], zb = sort_z[*(const int *) b];
  return za < zb ? 1 : za > zb ? -1 : (*(const int *) a - *(const int *) b);
}

static void
d8 (const double *z, int w, int h, int *rec, double *area, double *slope, double cell)
{
  int n = w * h, *idx = malloc (sizeof (int) * (size_t) n);

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        int k = y * w + x, best = k;
        double bs = 0.0;
        if (x > 0 && y > 0 && x < w - 1 && y < h - 1)
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++)
              {
                int q = (y + dy) * w + x + dx;
                double s = (z[k] - z[q]) / (cell * sqrt ((double) (dx * dx + dy * dy)));
                if ((dx || dy) && s > bs)
                  bs = s, best = q;
              }
        rec[k] = best;
        slope[k] = bs;
        area[k] = 1.0;
        idx[k] = k;
      }
  sort_z = z;
  qsort (idx, (size_t) n, sizeof (int), by_height_desc);
  for (int i = 0; i < n; i++)
    if (rec[idx[i]] != idx[i])
      area[rec[idx[i]]] += area[idx[i]];
  free (idx);
}

/* --- steady state: the slope-area law ------------------------------------ */

static void
steady_state_case (double n_exp)
{
  int w = 81, h = 81, n = w * h;
  double cell = 100.0, *z = malloc (sizeof (double) * (size_t) n);
  double *area = malloc (sizeof (double) * (size_t) n), *a2 = malloc (sizeof (double) * (size_t) n);
  double *slope = malloc (sizeof (double) * (size_t) n);
  int *rec = malloc (sizeof (int) * (size_t) n), checked = 0, off = 0;
  TgSpParams p = { .duration_yr = 4e7, .dt_yr = 1e5, .uplift_m_per_yr = 1e-3,
                   .erodibility = 2e-5, .m = 0.45 * n_exp, .n = n_exp, .diffusivity = 0.0,
                   .deposition = 0.0, .channel_area = 0.0 };
  TgSpStats st;
  double worst = 0.0;
  int ties = 0;

  for (int k = 0; k < n; k++)
    z[k] = 5.0 * noise01 ((uint32_t) k + 77u);
  TG_CHECK_INT_EQ (tg__sp_run (NULL, &p, w, h, cell, z, NULL, &(TgSpOut) { .area = area, .stats = &st }), 0);
  d8 (z, w, h, rec, a2, slope, cell);
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      {
        int k = y * w + x;
        double a_m2 = a2[k] * cell * cell;
        double pred = pow (p.uplift_m_per_yr / p.erodibility, 1.0 / p.n)
                      * pow (a_m2, -p.m / p.n);
        double err = fabs (slope[k] / pred - 1.0);
        if (a2[k] < 4.0) /* channels: 4 cells and more */
          continue;
        checked++;
        /* Where two ways down are exactly as steep, the test's routing
         * may pick the other one and count a different area. */
        if (fabs (area[k] - a_m2) > 1e-9 * a_m2)
          {
            ties++;
            continue;
          }
        worst = err > worst ? err : worst;
        off += err > 1e-3;
      }
  printf ("  n=%g: %d channel samples (%d routed differently), worst relative error %.2e, "
          "%d steps\n", n_exp, checked, ties, worst, st.steps);
  TG_CHECK_MSG (checked > 1000, "n=%g: only %d channel samples", n_exp, checked);
  TG_CHECK_MSG (ties * 50 < checked, "n=%g: %d of %d samples routed differently", n_exp, ties,
                checked);
  TG_CHECK_MSG (off == 0, "n=%g: %d of %d channel samples off the slope-area law by > 0.1%% "
                "(worst %.3g)", n_exp, off, checked, worst);
  free (z);
  free (area);
  free (a2);
  free (slope);
  free (rec);
}

static void
test_sp_steady_state_slope_area (void)
{
  steady_state_case (1.0);
  steady_state_case (2.0);
}

/* --- the budget ------------------------------------------------------------ */

static double *
tilted_noisy_plane (int w, int h, double cell, double tilt, double amp, uint32_t seed)
{
  double *z = malloc (sizeof (double) * (size_t) w * (size_t) h);

  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      z[(size_t) y * w + x] = tilt * cell * (double) (h - 1 - y)
                              + amp * noise01 ((uint32_t) (y * w + x) * 2654435761u + seed);
  return z;
}

static void
test_sp_mass_balance (void)
{
  int w = 97, h = 97, n = w * h;
  double cell = 40.0;
  double *z = tilted_noisy_plane (w, h, cell, 0.08, 20.0, 5);
  double *z0 = malloc (sizeof (double) * (size_t) n);
  float *um = malloc (sizeof (float) * (size_t) n);
  TgSpParams p = { .duration_yr = 3e5, .dt_yr = 1e4, .uplift_m_per_yr = 2e-3,
                   .erodibility = 4e-5, .m = 0.45, .n = 1.0, .diffusivity = 0.0,
                   .deposition = 1.5, .channel_area = 1e4 };
  TgSpStats st;
  double change = 0.0, scale, ero_sum = 0.0, dep_sum = 0.0;
  double *ero = malloc (sizeof (double) * (size_t) n), *dep = malloc (sizeof (double) * (size_t) n);

  memcpy (z0, z, sizeof (double) * (size_t) n);
  for (int k = 0; k < n; k++)
    um[k] = (float) (k % w) / (float) (w - 1); /* uplift rising to the east */
  TG_CHECK_INT_EQ (tg__sp_run (NULL, &p, w, h, cell, z, um,
                               &(TgSpOut) { .eroded = ero, .deposited = dep, .stats = &st }),
                   0);
  for (int k = 0; k < n; k++)
    {
      change += (z[k] - z0[k]) * cell * cell;
      ero_sum += ero[k] * cell * cell;
      dep_sum += dep[k] * cell * cell;
    }
  scale = st.eroded + st.uplift;
  printf ("  eroded %.6g m3, deposited %.6g, out %.6g, uplift %.6g, change %.6g\n", st.eroded,
          st.deposited, st.outflux, st.uplift, change);
  TG_CHECK_MSG (st.eroded > 1e7, "hardly anything eroded: %g m3", st.eroded);
  TG_CHECK_MSG (st.deposited > 0.05 * st.eroded, "deposited only %g of %g m3", st.deposited,
                st.eroded);
  TG_CHECK_MSG (fabs (st.eroded - st.deposited - st.outflux) <= 1e-9 * scale,
                "eroded %.12g != deposited %.12g + out %.12g", st.eroded, st.deposited,
                st.outflux);
  TG_CHECK_MSG (fabs (change - (st.uplift - st.outflux)) <= 1e-9 * scale,
                "terrain changed by %.12g m3, uplift - out = %.12g", change,
                st.uplift - st.outflux);
  /* The per-sample depths the masks show add up to the same volumes. */
  TG_CHECK_MSG (fabs (ero_sum - st.eroded) <= 1e-9 * scale, "%.12g vs %.12g", ero_sum, st.eroded);
  TG_CHECK_MSG (fabs (dep_sum - st.deposited) <= 1e-9 * scale, "%.12g vs %.12g", dep_sum,
                st.deposited);
  free (ero);
  free (dep);
  free (z);
  free (z0);
  free (um);
}

/* --- a branching network --------------------------------------------------- */

typedef struct
{
  int confluences; /* samples where two channels of >= 20 cells meet */
  double beta;     /* -slope of log P(A >= a) against log a, 5..100 cells */
  int streams[16]; /* Strahler streams of each order (1..15) among channels */
  int max_order;
  double bifurcation; /* geometric mean of N(k) / N(k+1), N(k+1) >= 5 */
} Network;

static const double *sort_area;

static int
by_area (const void *a, const void *b)
{
  double x = sort_area[*(const int *) a], y = sort_area[*(const int *) b];
  return x < y ? -1 : x > y ? 1 : (*(const int *) a - *(const int *) b);
}

/* Strahler orders of the channels (samples with AREA >= MIN cells) routed
 * by REC: a source is order 1, two tributaries of the highest order
 * meeting raise it by one.  Area grows downstream, so samples in order of
 * area come after everything that drains into them.  Fills the stream
 * counts (a stream ends where the order changes or the channel leaves). */
static void
strahler (const int *rec, const double *area, int n, double min, Network *net)
{
  int *idx = malloc (sizeof (int) * (size_t) n), *order = calloc ((size_t) n, sizeof (int));
  int *maxo = calloc ((size_t) n, sizeof (int)), *cnt = calloc ((size_t) n, sizeof (int));
  double logsum = 0.0;
  int pairs = 0;

  for (int k = 0; k < n; k++)
    idx[k] = k;
  sort_area = area;
  qsort (idx, (size_t) n, sizeof (int), by_area);
  for (int i = 0; i < n; i++)
    {
      int k = idx[i], r = rec[k];
      if (area[k] < min)
        continue;
      order[k] = maxo[k] == 0 ? 1 : (cnt[k] >= 2 ? maxo[k] + 1 : maxo[k]);
      if (order[k] > 15)
        order[k] = 15;
      if (r != k && area[r] >= min)
        {
          if (order[k] > maxo[r])
            maxo[r] = order[k], cnt[r] = 1;
          else if (order[k] == maxo[r])
            cnt[r]++;
        }
    }
  for (int k = 0; k < n; k++)
    if (order[k] > 0
        && (rec[k] == k || area[rec[k]] < min || order[rec[k]] != order[k]))
      {
        net->streams[order[k]]++;
        if (order[k] > net->max_order)
          net->max_order = order[k];
      }
  /* Orders whose higher neighbour has at least 5 streams: on a small map
   * the top orders are cut short by its edge, where water leaves. */
  for (int o = 1; o < net->max_order; o++)
    if (net->streams[o + 1] >= 5)
      {
        logsum += log ((double) net->streams[o] / net->streams[o + 1]);
        pairs++;
      }
  net->bifurcation = pairs ? exp (logsum / pairs) : 0.0;
  free (idx);
  free (order);
  free (maxo);
  free (cnt);
}

static Network
network_of (const double *z, int w, int h, double cell)
{
  int n = w * h, *rec = malloc (sizeof (int) * (size_t) n), *big = calloc ((size_t) n, sizeof (int));
  double *area = malloc (sizeof (double) * (size_t) n), *slope = malloc (sizeof (double) * (size_t) n);
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int pts = 0;
  Network net = { 0 };

  d8 (z, w, h, rec, area, slope, cell);
  for (int k = 0; k < n; k++)
    if (rec[k] != k && area[k] >= 20.0)
      big[rec[k]]++;
  for (int k = 0; k < n; k++)
    net.confluences += big[k] >= 2;
  for (double a = 5.0; a <= 100.0; a *= 1.5)
    {
      int c = 0;
      for (int k = 0; k < n; k++)
        c += area[k] >= a;
      if (c > 0)
        {
          double x = log (a), y = log ((double) c / n);
          sx += x, sy += y, sxx += x * x, sxy += x * y, pts++;
        }
    }
  net.beta = -(pts * sxy - sx * sy) / (pts * sxx - sx * sx);
  strahler (rec, area, n, 20.0, &net);
  free (rec);
  free (big);
  free (area);
  free (slope);
  return net;
}

static void
test_sp_dendritic_network (void)
{
  int w = 161, h = 161;
  double cell = 25.0, *z = tilted_noisy_plane (w, h, cell, 0.05, 4.0, 9);
  TgSpParams p = { .duration_yr = 1e6, .dt_yr = 2e4, .uplift_m_per_yr = 1e-3,
                   .erodibility = 3e-5, .m = 0.45, .n = 1.0, .diffusivity = 0.005,
                   .deposition = 0.5, .channel_area = 5e3 };
  Network before = network_of (z, w, h, cell), after;

  TG_CHECK_INT_EQ (tg__sp_run (NULL, &p, w, h, cell, z, NULL, NULL), 0);
  after = network_of (z, w, h, cell);
  printf ("  confluences %d -> %d, area exponent %.3f -> %.3f, Strahler orders %d -> %d, "
          "bifurcation ratio %.2f -> %.2f (streams of order 1..:", before.confluences,
          after.confluences, before.beta, after.beta, before.max_order, after.max_order,
          before.bifurcation, after.bifurcation);
  for (int o = 1; o <= after.max_order; o++)
    printf (" %d", after.streams[o]);
  printf (")\n");
  /* Natural basins: P(A >= a) ~ a^-beta with beta about 0.43 (Rodriguez-
   * Iturbe and Rinaldo), D8 model networks 0.4 to 0.6; parallel rills on
   * a plane fall off far faster. */
  TG_CHECK_MSG (after.beta > 0.35 && after.beta < 0.6, "area exponent %.3f", after.beta);
  TG_CHECK_MSG (fabs (before.beta - 0.45) > 0.15, "the plane already looked dendritic (%.3f)",
                before.beta);
  TG_CHECK_MSG (after.confluences >= 2 * before.confluences + 20, "confluences %d -> %d",
                before.confluences, after.confluences);
  /* Horton's law of stream numbers: natural basins have bifurcation
   * ratios of 3 to 5 (Strahler 1957); rills on a plane do not branch. */
  TG_CHECK_MSG (after.bifurcation >= 3.0 && after.bifurcation <= 5.0,
                "bifurcation ratio %.2f", after.bifurcation);
  TG_CHECK_MSG (after.max_order > before.max_order, "Strahler orders %d -> %d",
                before.max_order, after.max_order);
  free (z);
}

/* --- through the engine: resolutions and threads --------------------------- */

/* A 6 km world, 900 m high: fbm into erosion.stream_power ("sp"). */
static TgGraph *
sp_graph (int res)
{
  TgGraph *g = new_graph (6000, 6000, res);
  int b, s;

  tg_graph_world (g)->height_m = 900;
  tg_graph_world (g)->seed = 3;
  b = add_node (g, "base", "noise.fbm");
  SET (g, b, "scale_m", "3000");
  SET (g, b, "octaves", "6");
  s = add_node (g, "sp", "erosion.stream_power");
  SET (g, s, "duration_yr", "400000");
  SET (g, s, "dt_yr", "20000");
  SET (g, s, "erodibility", "4e-5");
  SET (g, s, "cell_m", "30");
  add_link (g, "base", "height", "sp", "height");
  return g;
}

static double
hypsometric_integral (const TgValue *v)
{
  double lo = INFINITY, hi = -INFINITY, sum = 0.0;
  uint64_t n = tg_region_samples (&v->region);

  for (uint64_t k = 0; k < n; k++)
    {
      lo = v->data[k] < lo ? v->data[k] : lo;
      hi = v->data[k] > hi ? v->data[k] : hi;
      sum += v->data[k];
    }
  return (sum / (double) n - lo) / (hi - lo);
}

static void
test_sp_resolution_and_threads (void)
{
  int res[2] = { 129, 257 };
  double hi[2] = { 0 }, hi_in[2] = { 0 };

  for (int k = 0; k < 2; k++)
    {
      TgGraph *g = sp_graph (res[k]);
      TgEngine *e1 = new_engine (1), *e2 = new_engine (2), *e8 = new_engine (8);
      TgRegion r = world_region (g);
      TgValue *in = pull (e1, g, "base", &r), *a = pull (e1, g, "sp", &r);
      TgValue *b = pull (e2, g, "sp", &r), *c = pull (e8, g, "sp", &r);

      if (in && a && b && c)
        {
          hi[k] = hypsometric_integral (a);
          hi_in[k] = hypsometric_integral (in);
          TG_CHECK_MSG (memcmp (a->data, b->data, sizeof (float) * tg_region_samples (&r)) == 0,
                        "%d: 1 and 2 threads differ", res[k]);
          TG_CHECK_MSG (memcmp (a->data, c->data, sizeof (float) * tg_region_samples (&r)) == 0,
                        "%d: 1 and 8 threads differ", res[k]);
        }
      /* The other outputs, on 1, 2 and 8 threads. */
      for (int port = 1; port < 4; port++)
        {
          TgValue *x = NULL, *y = NULL, *z = NULL;
          TgError err = { 0 };
          int n = tg_graph_find_node (g, "sp");
          TG_CHECK (tg_engine_pull (e1, g, n, port, &r, NULL, &x, NULL, &err) == 0);
          TG_CHECK (tg_engine_pull (e2, g, n, port, &r, NULL, &y, NULL, &err) == 0);
          TG_CHECK (tg_engine_pull (e8, g, n, port, &r, NULL, &z, NULL, &err) == 0);
          if (x && y && z)
            TG_CHECK_MSG (memcmp (x->data, y->data, sizeof (float) * tg_region_samples (&r)) == 0
                            && memcmp (x->data, z->data, sizeof (float) * tg_region_samples (&r)) == 0,
                          "%d: output %d differs between 1, 2 and 8 threads", res[k], port);
          for (TgValue **v = (TgValue *[]) { x, y, z, NULL }; *v; v++)
            tg_value_unref (*v);
        }
      for (TgValue **v = (TgValue *[]) { in, a, b, c, NULL }; *v; v++)
        tg_value_unref (*v);
      tg_engine_free (e1);
      tg_engine_free (e2);
      tg_engine_free (e8);
      tg_graph_free (g);
    }
  printf ("  hypsometric integral %.4f -> %.4f (129), %.4f -> %.4f (257)\n", hi_in[0], hi[0],
          hi_in[1], hi[1]);
  TG_CHECK_MSG (fabs (hi[0] - hi_in[0]) > 0.02, "the terrain hardly changed");
  TG_CHECK_MSG (fabs (hi[0] - hi[1]) < 0.01, "hypsometric integral %.4f (129) vs %.4f (257)",
                hi[0], hi[1]);
}

/* On the map's own samples (cell_m 0) a river is one map cell wide, so a
 * coarser map cuts more volume: the solver's own cell is what keeps the
 * two resolutions alike above. */
static void
test_sp_own_samples_depend_on_resolution (void)
{
  double hi[2] = { 0 };
  int res[2] = { 129, 257 };

  for (int k = 0; k < 2; k++)
    {
      TgGraph *g = sp_graph (res[k]);
      TgEngine *e = new_engine (2);
      TgRegion r = world_region (g);
      TgValue *v;
      SET (g, tg_graph_find_node (g, "sp"), "cell_m", "0");
      v = pull (e, g, "sp", &r);
      if (v)
        {
          hi[k] = hypsometric_integral (v);
          tg_value_unref (v);
        }
      tg_engine_free (e);
      tg_graph_free (g);
    }
  printf ("  own samples: hypsometric integral %.4f (129), %.4f (257)\n", hi[0], hi[1]);
  TG_CHECK_MSG (fabs (hi[0] - hi[1]) > 0.01, "%.4f vs %.4f", hi[0], hi[1]);
}

/* Mean |second difference| of the change OUT - IN across the solver's
 * lattice lines (every F-th column and row) over that between them: 1
 * when the change laid back on the map shows no solver grid. */
static double
lattice_crease_ratio (const TgValue *in, const TgValue *out, int f)
{
  int w = in->region.width, h = in->region.height;
  double sum[2] = { 0.0, 0.0 };
  long n[2] = { 0, 0 };

  for (int j = 1; j < h - 1; j++)
    for (int i = 1; i < w - 1; i++)
      {
        size_t k = (size_t) j * w + i;
        double c = (double) out->data[k] - in->data[k];
        double dx = (double) out->data[k - 1] - in->data[k - 1] - 2.0 * c
                    + ((double) out->data[k + 1] - in->data[k + 1]);
        double dy = (double) out->data[k - w] - in->data[k - w] - 2.0 * c
                    + ((double) out->data[k + w] - in->data[k + w]);
        sum[i % f != 0] += fabs (dx), n[i % f != 0]++;
        sum[j % f != 0] += fabs (dy), n[j % f != 0]++;
      }
  return sum[1] > 0.0 && n[0] > 0 ? (sum[0] / n[0]) / (sum[1] / n[1]) : 0.0;
}

/* The solver's change on a map 4 times finer than its cell (30 m cells,
 * 7.5 m samples) shows no creases on the solver's lattice lines: the
 * bilinear version measured 57000 here (its change is straight between
 * the lines), the B-spline 1.12 (a river one solver cell wide curves
 * most over its own lattice line). */
static void
test_sp_no_solver_grid (void)
{
  TgGraph *g = sp_graph (801);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *in = pull (e, g, "base", &r), *out = pull (e, g, "sp", &r);
  double ratio = in && out ? lattice_crease_ratio (in, out, 4) : 0.0;

  printf ("  801 samples, 30 m solver cells: change's curvature on the lattice lines %.3f x "
          "between them\n", ratio);
  TG_CHECK_MSG (ratio > 0.85 && ratio < 1.25, "lattice crease ratio %.3f", ratio);
  tg_value_unref (in);
  tg_value_unref (out);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* Too many steps are refused, naming the parameter. */
static void
test_sp_check (void)
{
  TgGraph *g = sp_graph (33);
  TgError err = { 0 };

  SET (g, tg_graph_find_node (g, "sp"), "duration_yr", "1e9");
  SET (g, tg_graph_find_node (g, "sp"), "dt_yr", "1");
  TG_CHECK (tg_graph_validate (g, &err) < 0);
  TG_CHECK_STR_CONTAINS (err.path, "dt_yr");
  tg_graph_free (g);
}

/* --- flats: one basin, drained across to their outlet ---------------------- */

/* On exactly flat ground every sample has no lower neighbour; the step
 * joins such a region into one basin (one pass, one tree edge) instead of
 * one a sample, which made a step O(n log n) and its pass table as big as
 * the world. */
static void
test_sp_flats_one_basin (void)
{
  int w = 65, h = 49, n = w * h, half = w / 2;
  double cell = 10.0, *z = malloc (sizeof (double) * (size_t) n);
  double *area = malloc (sizeof (double) * (size_t) n), into = 0.0;
  TgSpParams p = { .duration_yr = 100.0, .dt_yr = 100.0, .uplift_m_per_yr = 0.0,
                   .erodibility = 1e-6, .m = 0.45, .n = 1.0, .diffusivity = 0.0,
                   .deposition = 0.0, .channel_area = 0.0 };
  TgSpStats st = { 0 };

  /* A constant world: its interior is one basin. */
  for (int k = 0; k < n; k++)
    z[k] = 100.0;
  TG_CHECK_INT_EQ (tg__sp_run (NULL, &p, w, h, cell, z, NULL, &(TgSpOut) { .stats = &st }), 0);
  printf ("  constant %dx%d: %zu basin(s)\n", w, h, st.basins_max);
  TG_CHECK_MSG (st.basins_max == 1, "constant world: %zu basins, want 1", st.basins_max);

  /* A plateau (x < HALF, walled in by a higher edge on three sides) next
   * to a slope down to the east edge: one basin, and all of the
   * plateau's water crosses it to the slope. */
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        int k = y * w + x;
        z[k] = x >= half ? 100.0 - (x - half + 1) : 100.0;
        if (x == 0 || y == 0 || y == h - 1)
          z[k] = x >= half && x < w - 1 ? z[k] + 50.0 : 150.0;
      }
  TG_CHECK_INT_EQ (tg__sp_run (NULL, &p, w, h, cell, z, NULL, &(TgSpOut) { .area = area, .stats = &st }), 0);
  for (int y = 1; y < h - 1; y++)
    into += area[y * w + half];
  printf ("  plateau %dx%d: %zu basin(s), %.0f m2 of %.0f m2 reach the slope's first column\n", w, h,
          st.basins_max, into, (double) half * (h - 2) * cell * cell);
  TG_CHECK_MSG (st.basins_max == 1, "plateau: %zu basins, want 1", st.basins_max);
  TG_CHECK_MSG (into == (double) half * (h - 2) * cell * cell,
                "plateau: %.0f m2 of the %.0f m2 of the plateau and the slope's first column reach it", into,
                (double) half * (h - 2) * cell * cell);
  free (z);
  free (area);
}

/* --- the solver's bytes, at any thread count ------------------------------ */

/* The phase hook (a benchmark's breakdown): calls counted by phase, from
 * any thread. */
typedef struct
{
  int threads;
  int calls[TG_SP_PHASES];
} PhaseCount;

static int
phase_parallel (void *ctx, int n, int grain, void (*fn) (void *, int, int), void *user)
{
  return bench_pool_parallel (&((PhaseCount *) ctx)->threads, n, grain, fn, user);
}

static void
phase_count (void *ctx, int phase)
{
  __atomic_fetch_add (&((PhaseCount *) ctx)->calls[phase], 1, __ATOMIC_RELAXED);
}

/* A 385 x 385 world of hills, pits and lakes (many groups of trees, a few
 * thousand basins), three steps with uplift, deposition and diffusion on
 * 1, 2 and 8 threads: the heights and areas hash to what the solver gave
 * when it walked one stack of the whole world, serially (commit 5bbead6);
 * and the budget closes the same on each.  The last run also reports its
 * phases to a hook: each phase of each step at least once. */
static void
test_sp_bytes_any_threads (void)
{
  enum { W = 385, H = 385, N = W * H };
  double *z0 = malloc (sizeof (double) * N), *z = malloc (sizeof (double) * N);
  double *area = malloc (sizeof (double) * N);
  TgSpParams p = { .duration_yr = 30000.0, .dt_yr = 10000.0, .uplift_m_per_yr = 0.0005,
                   .erodibility = 2e-5, .m = 0.45, .n = 1.0, .diffusivity = 0.01,
                   .deposition = 1.0, .channel_area = 10000.0 };
  int counts[3] = { 1, 2, 8 };
  PhaseCount pc = { .threads = 8 }; /* the third run's */

  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      z0[y * W + x] = 300.0 + 120.0 * sin (x * 0.045) * cos (y * 0.037) + 60.0 * sin ((x + 2 * y) * 0.011)
                      + 8.0 * noise01 ((uint32_t) (y * W + x) + 991u);
  for (int c = 0; c < 3; c++)
    {
      TgSpStats st = { 0 };
      TgSpOpts o = { bench_pool_parallel, &counts[c], NULL, NULL };
      if (c == 2)
        o = (TgSpOpts) { phase_parallel, &pc, NULL, phase_count };
      uint64_t hz, ha;
      memcpy (z, z0, sizeof (double) * N);
      TG_CHECK_INT_EQ (tg__sp_run (&o, &p, W, H, 6.0, z, NULL, &(TgSpOut) { .area = area, .stats = &st }), 0);
      hz = bench_fnv (z, sizeof (double) * N);
      ha = bench_fnv (area, sizeof (double) * N);
      printf ("  %d thread(s): z fnv %016llx, area fnv %016llx, %zu basins, eroded %.6g m3 = deposited %.6g + out %.6g\n",
              counts[c], (unsigned long long) hz, (unsigned long long) ha, st.basins_max, st.eroded,
              st.deposited, st.outflux);
      TG_CHECK_MSG (hz == 0xb0a203b8d50a6867ull, "%d threads: z fnv %016llx", counts[c], (unsigned long long) hz);
      TG_CHECK_MSG (ha == 0x22113d94d91c29e1ull, "%d threads: area fnv %016llx", counts[c], (unsigned long long) ha);
      TG_CHECK_MSG (st.basins_max > 100, "only %zu basins", st.basins_max);
      TG_CHECK_MSG (fabs (st.eroded - st.deposited - st.outflux) <= 1e-9 * st.eroded,
                    "budget: eroded %.9g, deposited %.9g, out %.9g", st.eroded, st.deposited, st.outflux);
    }
  for (int k = 0; k < TG_SP_PHASES; k++)
    TG_CHECK_MSG (pc.calls[k] >= 3, "phase %d reported %d times in 3 steps", k, pc.calls[k]);
  free (z0);
  free (z);
  free (area);
}

int
main (void)
{
  TG_RUN (test_sp_steady_state_slope_area);
  TG_RUN (test_sp_mass_balance);
  TG_RUN (test_sp_dendritic_network);
  TG_RUN (test_sp_resolution_and_threads);
  TG_RUN (test_sp_own_samples_depend_on_resolution);
  TG_RUN (test_sp_no_solver_grid);
  TG_RUN (test_sp_check);
  TG_RUN (test_sp_flats_one_basin);
  TG_RUN (test_sp_bytes_any_threads);
  return tgtest_result ();
}
