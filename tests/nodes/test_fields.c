/* Tests for the field nodes: primitives are exact signed distances at
 * sample points; CSG and the smooth blends match their formulas; a
 * transform moves, turns and scales shapes (rotation keeps distances,
 * uniform scale keeps a distance a distance) and its Lipschitz bound
 * holds; 3D noise stays within its amplitude, varies in y and never beats
 * its Lipschitz bound; grid sampling takes a field's grid path or its
 * points; the terrain field is y - h(x, z) bilinear in world metres;
 * displacement adds; a slice stack written here with tg_png_write reads
 * back trilinearly and meshes watertight; and bad parameters name the
 * place. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tgformats/tgformats.h>
#include <tgraph/tgraph.h>

#include "../../engine/nodes/fields.h"
#include "../../engine/nodes/noise_fbm.h"
#include "tggraph_test.h"
#include "tgtest.h"

static TgGraph *
world (void)
{
  return new_graph (64, 64, 17);
}

/* The field of node ID (a new reference in *V). */
static const TgField *
field_of (TgGraph *g, const char *id, TgValue **v)
{
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);

  *v = pull (e, g, id, &r);
  tg_engine_free (e);
  return *v ? tg_value_field (*v) : NULL;
}

static float
sample (const TgField *f, double x, double y, double z)
{
  float px = (float) x, py = (float) y, pz = (float) z, out;

  f->eval (f, 1, &px, &py, &pz, &out);
  return out;
}

/* A reproducible point in [-S, S]^3. */
static void
point (uint32_t i, double s, double p[3])
{
  for (int k = 0; k < 3; k++)
    p[k] = s * (2.0 * tg_hash_unit (tg_hash2 (77u + (uint32_t) k, (int32_t) i, 5)) - 1.0);
}

/* Largest |f(p) - f(q)| / |p - q| over close pairs: an empirical
 * Lipschitz constant. */
static double
empirical_lipschitz (const TgField *f, double s, double step)
{
  double worst = 0.0;

  for (uint32_t i = 0; i < 20000; i++)
    {
      double p[3], d[3], len = 0.0;

      point (i, s, p);
      point (i + 100000u, 1.0, d);
      for (int k = 0; k < 3; k++)
        len += d[k] * d[k];
      len = sqrt (len);
      for (int k = 0; k < 3; k++)
        d[k] *= step / len;
      worst = fmax (worst, fabs ((double) sample (f, p[0] + d[0], p[1] + d[1], p[2] + d[2])
                                 - (double) sample (f, p[0], p[1], p[2]))
                             / step);
    }
  return worst;
}

static void
test_primitives_are_distances (void)
{
  TgGraph *g = world ();
  int s = add_node (g, "s", "field.sphere"), b = add_node (g, "b", "field.box");
  int c = add_node (g, "c", "field.capsule"), t = add_node (g, "t", "field.torus");
  int p = add_node (g, "p", "field.plane");
  TgValue *vs, *vb, *vc, *vt, *vp;
  const TgField *fs, *fb, *fc, *ft, *fp;

  SET (g, s, "center_m", "1,2,3");
  SET (g, s, "radius_m", "4");
  SET (g, b, "size_m", "4,6,8");
  SET (g, b, "rounding_m", "1");
  SET (g, c, "a_m", "0,0,0");
  SET (g, c, "b_m", "10,0,0");
  SET (g, c, "radius_m", "2");
  SET (g, t, "major_radius_m", "6");
  SET (g, t, "minor_radius_m", "1");
  SET (g, p, "normal", "0,2,0");
  SET (g, p, "offset_m", "3");
  fs = field_of (g, "s", &vs);
  fb = field_of (g, "b", &vb);
  fc = field_of (g, "c", &vc);
  ft = field_of (g, "t", &vt);
  fp = field_of (g, "p", &vp);
  if (fs && fb && fc && ft && fp)
    {
      TG_CHECK_NEAR (sample (fs, 1, 2, 3), -4.0, 1e-6);
      TG_CHECK_NEAR (sample (fs, 1, 2, 10), 3.0, 1e-6);
      TG_CHECK_INT_EQ (fs->bounded, 1);
      TG_CHECK (fs->min[0] <= -3.0f && fs->max[2] >= 7.0f && fs->lipschitz == 1.0f);
      /* Rounded box: faces at 2, 3, 4; a corner region is a sphere of 1. */
      TG_CHECK_NEAR (sample (fb, 5, 0, 0), 3.0, 1e-6);
      TG_CHECK_NEAR (sample (fb, 0, 0, 0), -2.0, 1e-6);
      TG_CHECK_NEAR (sample (fb, 1 + 4, 2 + 5, 0), sqrt (41.0) - 1.0, 1e-5);
      TG_CHECK_NEAR (sample (fb, 2, 3, 4), sqrt (3.0) - 1.0, 1e-5);
      /* Capsule: beside the middle, and beyond an end. */
      TG_CHECK_NEAR (sample (fc, 5, 5, 0), 3.0, 1e-6);
      TG_CHECK_NEAR (sample (fc, -3, 0, 4), 3.0, 1e-6);
      /* Torus flat around y. */
      TG_CHECK_NEAR (sample (ft, 6, 0, 0), -1.0, 1e-6);
      TG_CHECK_NEAR (sample (ft, 0, 3, -6), 2.0, 1e-6);
      TG_CHECK_NEAR (sample (ft, 0, 0, 0), 5.0, 1e-6);
      /* Plane: normal normalised, solid below y = 3. */
      TG_CHECK_NEAR (sample (fp, 7, 1, -9), -2.0, 1e-6);
      TG_CHECK_INT_EQ (fp->bounded, 0);
    }
  tg_value_unref (vs);
  tg_value_unref (vb);
  tg_value_unref (vc);
  tg_value_unref (vt);
  tg_value_unref (vp);
  tg_graph_free (g);
}

/* Two spheres through every CSG op, checked against the formulas in
 * double at sample points. */
static void
test_csg_matches_formulas (void)
{
  static const char *const ops[] = { "union", "intersection", "subtraction", "smooth_union",
                                     "smooth_intersection", "smooth_subtraction" };
  const double k = 2.5;

  for (int op = 0; op < 6; op++)
    {
      TgGraph *g = world ();
      int a = add_node (g, "a", "field.sphere"), b = add_node (g, "b", "field.sphere");
      int c = add_node (g, "c", "field.csg");
      TgValue *v;
      const TgField *f;

      SET (g, a, "radius_m", "5");
      SET (g, b, "center_m", "4,0,0");
      SET (g, b, "radius_m", "3");
      SET (g, c, "op", ops[op]);
      SET (g, c, "k_m", "2.5");
      add_link (g, "a", "field", "c", "a");
      add_link (g, "b", "field", "c", "b");
      f = field_of (g, "c", &v);
      for (uint32_t i = 0; f && i < 2000; i++)
        {
          double p[3], da, db, want, h;
          point (i, 10.0, p);
          da = sqrt (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) - 5.0;
          db = sqrt ((p[0] - 4) * (p[0] - 4) + p[1] * p[1] + p[2] * p[2]) - 3.0;
          switch (op)
            {
            case 0: want = fmin (da, db); break;
            case 1: want = fmax (da, db); break;
            case 2: want = fmax (da, -db); break;
            case 3:
              h = fmax (k - fabs (da - db), 0.0) / k;
              want = fmin (da, db) - h * h * k / 4.0;
              break;
            case 4:
              h = fmax (k - fabs (da - db), 0.0) / k;
              want = fmax (da, db) + h * h * k / 4.0;
              break;
            default:
              h = fmax (k - fabs (da + db), 0.0) / k;
              want = fmax (da, -db) + h * h * k / 4.0;
              break;
            }
          TG_CHECK_MSG (fabs (sample (f, p[0], p[1], p[2]) - want) < 2e-5, "%s at (%g %g %g): %g vs %g",
                        ops[op], p[0], p[1], p[2], sample (f, p[0], p[1], p[2]), want);
        }
      if (f)
        {
          /* The smooth union fills the seam: below min (a, b) there. */
          if (op == 3)
            TG_CHECK (sample (f, 2.0, 4.2, 0.0) < -0.348f - 0.009f);
          TG_CHECK_NEAR (f->lipschitz, 1.0, 1e-6);
          TG_CHECK_MSG (empirical_lipschitz (f, 10.0, 1e-2) <= f->lipschitz * 1.001,
                        "%s breaks its bound", ops[op]);
          TG_CHECK_INT_EQ (f->bounded, op != 3);
          tg_value_unref (v);
        }
      tg_graph_free (g);
    }
}

static void
test_transform (void)
{
  TgGraph *g = world ();
  int b = add_node (g, "b", "field.box"), t = add_node (g, "t", "field.transform");
  int s = add_node (g, "s", "field.sphere"), u = add_node (g, "u", "field.transform");
  int w = add_node (g, "w", "field.transform");
  TgValue *vb, *vt, *vu, *vw;
  const TgField *fb, *ft, *fu, *fw;

  SET (g, b, "size_m", "2,4,8");
  SET (g, b, "rounding_m", "0.5");
  SET (g, t, "rotate_deg", "0,0,90");
  SET (g, t, "translate_m", "10,0,0");
  SET (g, s, "radius_m", "3");
  SET (g, u, "scale", "2,2,2");
  SET (g, u, "translate_m", "0,5,0");
  SET (g, w, "scale", "1,3,1");
  add_link (g, "b", "field", "t", "field");
  add_link (g, "s", "field", "u", "field");
  add_link (g, "s", "field", "w", "field");
  fb = field_of (g, "b", &vb);
  ft = field_of (g, "t", &vt);
  fu = field_of (g, "u", &vu);
  fw = field_of (g, "w", &vw);
  if (fb && ft && fu && fw)
    {
      double worst = 0.0;

      /* 90 degrees about z takes (x, y) to (-y, x), then x moves by 10:
       * the rotated field at R p + t equals the box's at p. */
      for (uint32_t i = 0; i < 2000; i++)
        {
          double p[3];
          point (i, 8.0, p);
          worst = fmax (worst, fabs ((double) sample (ft, 10.0 - p[1], p[0], p[2])
                                     - (double) sample (fb, p[0], p[1], p[2])));
        }
      TG_CHECK_MSG (worst < 2e-5, "rotation changes distances by %g", worst);
      /* The box's long y side now lies along -x. */
      TG_CHECK_NEAR (sample (ft, 10.0 - 2.0 - 1.0, 0, 0), 1.0, 1e-5);
      TG_CHECK (ft->bounded && ft->min[0] < 8.0f && ft->max[0] > 12.0f && ft->max[1] > 1.0f);
      /* Uniform scale keeps a distance a distance: a sphere of 6 at y = 5. */
      TG_CHECK_NEAR (sample (fu, 0, 5, 0), -6.0, 1e-5);
      TG_CHECK_NEAR (sample (fu, 0, 5, 10), 4.0, 1e-5);
      TG_CHECK_NEAR (sample (fu, 7, 5, 0), 1.0, 1e-5);
      TG_CHECK_NEAR (fu->lipschitz, 1.0, 1e-3);
      TG_CHECK (fu->min[1] < -0.99f && fu->max[1] > 10.99f);
      /* Stretched 3x in y: values scale by the smallest factor, so the
       * bound still holds and the value never exceeds the true distance. */
      TG_CHECK_NEAR (sample (fw, 0, 9, 0), 0.0, 1e-5);
      TG_CHECK_NEAR (sample (fw, 4, 0, 0), 1.0, 1e-5);
      TG_CHECK (sample (fw, 0, 12, 0) <= 3.0f + 1e-5f);
      TG_CHECK_MSG (empirical_lipschitz (fw, 12.0, 1e-2) <= fw->lipschitz * 1.001,
                    "stretched sphere: %g > %g", empirical_lipschitz (fw, 12.0, 1e-2),
                    fw->lipschitz);
    }
  tg_value_unref (vb);
  tg_value_unref (vt);
  tg_value_unref (vu);
  tg_value_unref (vw);
  tg_graph_free (g);
}

static void
test_noise_bounds_and_lipschitz (void)
{
  static const char *const bases[] = { "perlin", "simplex", "value", "worley" };
  static const char *const modes[] = { "fbm", "ridged", "billow" };

  for (int b = 0; b < 4; b++)
    for (int m = 0; m < 3; m++)
      {
        TgGraph *g = world ();
        int n = add_node (g, "n", "field.noise");
        TgValue *v, *v2;
        const TgField *f, *f2;

        SET (g, n, "basis", bases[b]);
        SET (g, n, "mode", modes[m]);
        SET (g, n, "amplitude_m", "3");
        SET (g, n, "scale_m", "8");
        SET (g, n, "octaves", "3");
        f = field_of (g, "n", &v);
        f2 = field_of (g, "n", &v2);
        if (f && f2)
          {
            double lo = 1e9, hi = -1e9, emp;
            int differs_y = 0;

            for (uint32_t i = 0; i < 5000; i++)
              {
                double p[3];
                float a;
                point (i, 50.0, p);
                a = sample (f, p[0], p[1], p[2]);
                lo = fmin (lo, a);
                hi = fmax (hi, a);
                differs_y += fabsf (a - sample (f, p[0], p[1] + 2.0, p[2])) > 1e-3f;
                TG_CHECK (a == sample (f2, p[0], p[1], p[2]));
              }
            TG_CHECK_MSG (lo >= -3.0 && hi <= 3.0, "%s/%s: range %g..%g", bases[b], modes[m],
                          lo, hi);
            TG_CHECK_MSG (hi - lo > 1.0, "%s/%s: flat (%g..%g)", bases[b], modes[m], lo, hi);
            TG_CHECK_MSG (differs_y > 4000, "%s/%s: does not vary in y", bases[b], modes[m]);
            emp = empirical_lipschitz (f, 50.0, 1e-3);
            TG_CHECK_MSG (emp <= f->lipschitz, "%s/%s: empirical %g above the bound %g",
                          bases[b], modes[m], emp, f->lipschitz);
            fprintf (stderr, "  %-7s %-6s lipschitz bound %7.3f, largest seen %6.3f\n",
                     bases[b], modes[m], f->lipschitz, emp);
          }
        if (f)
          tg_value_unref (v);
        if (f2)
          tg_value_unref (v2);
        tg_graph_free (g);
      }
}

/* The Perlin and value bounds are tight: one octave reaches more than half
 * of them (64% and 92% at these points; the old perlin bound, 8.5 sqrt 3
 * per lattice unit, was reached to 16%). */
static void
test_noise_lipschitz_tight (void)
{
  for (int b = 0; b < 2; b++)
    {
      TgGraph *g = world ();
      int n = add_node (g, "n", "field.noise");
      TgValue *v;
      const TgField *f;

      SET (g, n, "basis", b == 0 ? "perlin" : "value");
      SET (g, n, "amplitude_m", "1");
      SET (g, n, "scale_m", "1");
      SET (g, n, "octaves", "1");
      f = field_of (g, "n", &v);
      if (f)
        {
          double emp = empirical_lipschitz (f, 50.0, 1e-3);

          TG_CHECK_MSG (emp <= f->lipschitz && emp > 0.5 * f->lipschitz,
                        "%s: largest seen %g, bound %g", b == 0 ? "perlin" : "value", emp,
                        f->lipschitz);
          tg_value_unref (v);
        }
      tg_graph_free (g);
    }
}

/* The batch kernel gives the same bits in every ISA build. */
static void
test_noise_same_bits_every_isa (void)
{
  static float x[5000], y[5000], z[5000], a[5000], b[5000];

  for (int basis = 0; basis < 3; basis += 2)
    for (int mode = 0; mode < 3; mode++)
      {
        TgNoise3Params p = { .basis = basis, .mode = mode, .amplitude_m = 5.0, .scale_m = 7.0,
                             .octaves = 5, .persistence = 0.5, .lacunarity = 2.0 };
        TgNoise3 n;

        tg__noise3_plan (&n, &p, 42u);
        for (int i = 0; i < 5000; i++)
          {
            double q[3];
            point ((uint32_t) i, 3e4, q);
            x[i] = (float) q[0];
            y[i] = (float) q[1];
            z[i] = (float) q[2];
          }
        tg__noise3_eval (&n, 5000, x, y, z, a);
        for (int isa = 0; isa < TG__FBM_ISA_COUNT; isa++)
          if (tg__fbm_isa_supported ((TgFbmIsa) isa))
            {
              n.isa = isa;
              tg__noise3_eval (&n, 5000, x, y, z, b);
              TG_CHECK_MSG (memcmp (a, b, sizeof a) == 0, "basis %d mode %d: %s differs",
                            basis, mode, tg__fbm_isa_name ((TgFbmIsa) isa));
            }
      }
}

/* The grid path gives the point path's bits: Perlin and value in every
 * mode and ISA build, on grids aligned with the lattice (fractions of
 * exactly 0, where signed zeros turn up), off it, far from the origin, of
 * odd sizes, with octaves finer than the grid (which fall back), and with
 * the finest octave 2.5 lattice cells a step (AVX-512 gathers its corners
 * instead of permuting them), and with rows of about 16 and 32 lattice
 * corners (AVX-512 builds their gradients in one register, two, or more). */
static void
test_noise_grid_same_bits (void)
{
  static const struct
  {
    double x0, y0, z0, step, scale;
    int nx, ny, nz, octaves;
  } grids[] = {
    { -16.0, -16.0, -16.0, 1.0, 8.0, 35, 35, 35, 4 },
    { 3.3, -7.1, 0.25, 0.37, 5.0, 9, 17, 33, 5 },
    { 30000.5, -29000.25, 12345.0, 0.5, 7.0, 64, 3, 5, 4 },
    { -1.0, 2.0, -3.0, 0.3, 0.2, 20, 20, 20, 3 }, /* octaves finer than the step */
    { 1.0, 2.0, 3.0, 2.5, 8.0, 20, 5, 5, 4 }, /* 16 samples over > 30 lattice cells */
    { 0.0, 0.0, 0.0, 1.0, 64.0, 1, 1, 1, 4 },
    /* AVX-512 lattice rows of about 16 and 32 corners along x at the
     * finest octave (one lattice cell a metre): on either side of where
     * their gradients and spread take one register, two, or gathers. */
    { -7.3, 1.1, 2.2, 0.22, 8.0, 64, 3, 3, 4 },
    { -7.3, 1.1, 2.2, 0.235, 8.0, 64, 3, 3, 4 },
    { -7.3, 1.1, 2.2, 0.25, 8.0, 64, 3, 3, 4 },
    { 5.9, -3.7, 0.4, 0.47, 8.0, 64, 3, 3, 4 },
    { 5.9, -3.7, 0.4, 0.49, 8.0, 64, 3, 3, 4 },
    { 5.9, -3.7, 0.4, 0.51, 8.0, 64, 3, 3, 4 },
  };
  static float val[64 * 64 * 64], ref[64 * 64 * 64], px[64 * 64 * 64], py[64 * 64 * 64],
    pz[64 * 64 * 64];
  TgFieldScratch w = { 0 };

  for (int gi = 0; gi < TG_N_ELEMENTS (grids); gi++)
    for (int basis = 0; basis < 3; basis += 2)
      for (int mode = 0; mode < 3; mode++)
        {
          TgValue *v;
          TgGraph *g = world ();
          int node = add_node (g, "n", "field.noise");
          float xs[64], ys[64], zs[64];
          TgFieldGrid gr = { xs, ys, zs, grids[gi].nx, grids[gi].ny, grids[gi].nz };
          size_t total = (size_t) gr.nx * gr.ny * gr.nz;
          const TgField *nf;
          char text[64];

          /* The node's field (it carries the grid path). */
          SET (g, node, "basis", basis == 0 ? "perlin" : "value");
          SET (g, node, "mode", mode == 0 ? "fbm" : mode == 1 ? "ridged" : "billow");
          snprintf (text, sizeof text, "%.17g", grids[gi].scale);
          SET (g, node, "scale_m", text);
          snprintf (text, sizeof text, "%d", grids[gi].octaves);
          SET (g, node, "octaves", text);
          nf = field_of (g, "n", &v);
          tg_graph_free (g);
          if (nf == NULL)
            continue;
          for (int i = 0; i < gr.nx; i++)
            xs[i] = (float) (grids[gi].x0 + i * grids[gi].step);
          for (int j = 0; j < gr.ny; j++)
            ys[j] = (float) (grids[gi].y0 + j * grids[gi].step);
          for (int k = 0; k < gr.nz; k++)
            zs[k] = (float) (grids[gi].z0 + k * grids[gi].step);
          for (size_t q = 0; q < total; q++)
            {
              px[q] = xs[q % gr.nx];
              py[q] = ys[q / gr.nx % gr.ny];
              pz[q] = zs[q / ((size_t) gr.nx * gr.ny)];
            }
          tg_field_eval (nf, total, px, py, pz, ref);
          for (int isa = 0; isa < TG__FBM_ISA_COUNT; isa++)
            if (tg__fbm_isa_supported ((TgFbmIsa) isa))
              {
                int bad = 0;

                ((TgNoise3 *) nf->data)->isa = isa;
                memset (val, 0xff, sizeof (float) * total);
                TG_CHECK (tg_field_eval_grid (nf, &gr, val, (size_t) gr.nx,
                                              (size_t) gr.nx * gr.ny, &w) == 0);
                for (size_t q = 0; q < total; q++)
                  bad += memcmp (&val[q], &ref[q], sizeof (float)) != 0;
                TG_CHECK_MSG (bad == 0, "grid %d basis %d mode %d %s: %d of %zu differ", gi,
                              basis, mode, tg__fbm_isa_name ((TgFbmIsa) isa), bad, total);
              }
          tg_value_unref (v);
        }
  tg_field_scratch_clear (&w);
}

/* A field for tg_field_eval_grid's dispatch: its value names the point,
 * and its grid path either declines or fills -1. */
typedef struct
{
  int grid_calls;
  bool decline;
} GridProbe;

static void
probe_eval (const TgField *f, int n, const float *x, const float *y, const float *z, float *out)
{
  (void) f;
  for (int i = 0; i < n; i++)
    out[i] = x[i] + 100.0f * y[i] + 10000.0f * z[i];
}

static int
probe_grid (const TgField *f, const TgFieldGrid *g, float *out, size_t sy, size_t sz,
            TgFieldScratch *scratch)
{
  GridProbe *p = f->data;

  (void) scratch;
  p->grid_calls++;
  if (p->decline)
    return 1;
  for (int k = 0; k < g->nz; k++)
    for (int j = 0; j < g->ny; j++)
      for (int i = 0; i < g->nx; i++)
        out[(size_t) k * sz + (size_t) j * sy + (size_t) i] = -1.0f;
  return 0;
}

/* The grid path is taken when the field has one and it answers; without
 * one, or when it declines, the points are evaluated in batches (here
 * more than one) and land at their strides, the padding untouched. */
static void
test_eval_grid_hook_or_batches (void)
{
  enum { NX = 64, NY = 64, NZ = 3, SY = NX + 2, SZ = SY * (NY + 1) };
  static float out[SZ * NZ];
  float xs[NX], ys[NY], zs[NZ];
  TgFieldGrid g = { xs, ys, zs, NX, NY, NZ };
  TgFieldScratch w = { 0 };
  GridProbe probe = { 0 };
  TgField f = { .eval = probe_eval, .data = &probe };

  for (int i = 0; i < NX; i++)
    xs[i] = (float) i;
  for (int j = 0; j < NY; j++)
    ys[j] = (float) j;
  for (int k = 0; k < NZ; k++)
    zs[k] = (float) k;
  for (int pass = 0; pass < 3; pass++)
    {
      int bad = 0;

      f.eval_grid = pass == 0 ? NULL : probe_grid;
      probe.decline = pass == 1;
      for (size_t q = 0; q < TG_N_ELEMENTS (out); q++)
        out[q] = 7.5f;
      TG_CHECK (tg_field_eval_grid (&f, &g, out, SY, SZ, &w) == 0);
      for (int k = 0; k < NZ; k++)
        for (int j = 0; j <= NY; j++)
          for (int i = 0; i < SY; i++)
            {
              float want = i < NX && j < NY
                             ? (pass == 2 ? -1.0f : (float) i + 100.0f * j + 10000.0f * k)
                             : 7.5f;

              bad += out[k * SZ + j * SY + i] != want;
            }
      TG_CHECK_MSG (bad == 0, "pass %d: %d values wrong", pass, bad);
    }
  TG_CHECK (probe.grid_calls == 2);
  tg_field_scratch_clear (&w);
}

/* y - h(x, z) with h from a west-to-east gradient: bilinear in world
 * metres, row 0 north. */
static void
test_from_height (void)
{
  TgGraph *g = new_graph (100, 100, 11);
  int gr = add_node (g, "g", "gen.gradient");
  int fh = add_node (g, "f", "field.from_height");
  TgValue *v;
  const TgField *f;

  tg_graph_world (g)->height_m = 200.0;
  SET (g, gr, "angle_deg", "0");
  SET (g, gr, "from", "0");
  SET (g, gr, "to", "1");
  SET (g, fh, "offset_m", "5");
  add_link (g, "g", "height", "f", "height");
  f = field_of (g, "f", &v);
  if (f)
    {
      TgEngine *e = new_engine (1);
      TgRegion r = world_region (g);
      TgValue *h = pull (e, g, "g", &r);

      /* At lattice samples the field is y minus the height exactly. */
      for (int j = 0; h && j < 11; j += 5)
        for (int i = 0; i < 11; i += 3)
          TG_CHECK_NEAR (sample (f, tg_region_x (&r, i), 50.0, tg_region_z (&r, j)),
                         50.0 - (at (h, i, j) * 200.0 + 5.0), 1e-4);
      /* Between samples, bilinear. */
      if (h)
        {
          double x = tg_region_x (&r, 3) + 0.25 * r.cell, z = tg_region_z (&r, 4);
          double want = (0.75 * at (h, 3, 4) + 0.25 * at (h, 4, 4)) * 200.0 + 5.0;
          TG_CHECK_NEAR (sample (f, x, 0.0, z), -want, 1e-3);
          /* Beyond the world the border repeats. */
          TG_CHECK_NEAR (sample (f, 500.0, 0.0, 0.0), -(at (h, 10, 5) * 200.0 + 5.0), 1e-3);
          tg_value_unref (h);
        }
      TG_CHECK (f->lipschitz >= 1.0f);
      TG_CHECK_MSG (empirical_lipschitz (f, 60.0, 1e-2) <= f->lipschitz, "%g > %g",
                    empirical_lipschitz (f, 60.0, 1e-2), f->lipschitz);
      tg_engine_free (e);
      tg_value_unref (v);
    }
  tg_graph_free (g);
}

static void
test_displace_adds (void)
{
  TgGraph *g = world ();
  int n = add_node (g, "n", "field.noise");
  int d = add_node (g, "d", "field.displace"), e = add_node (g, "e", "field.displace");
  TgValue *vs, *vn, *vd, *ve;

  add_node (g, "s", "field.sphere");
  const TgField *fs, *fn, *fd, *fe;

  SET (g, n, "amplitude_m", "2");
  SET (g, n, "seed", "9");
  SET (g, d, "amount", "0.5");
  SET (g, e, "amplitude_m", "2");
  SET (g, e, "seed", "9");
  add_link (g, "s", "field", "d", "field");
  add_link (g, "n", "field", "d", "by");
  add_link (g, "s", "field", "e", "field");
  fs = field_of (g, "s", &vs);
  fn = field_of (g, "n", &vn);
  fd = field_of (g, "d", &vd);
  fe = field_of (g, "e", &ve);
  if (fs && fn && fd && fe)
    {
      for (uint32_t i = 0; i < 500; i++)
        {
          double p[3];
          point (i, 20.0, p);
          TG_CHECK (sample (fd, p[0], p[1], p[2])
                    == sample (fs, p[0], p[1], p[2]) + 0.5f * sample (fn, p[0], p[1], p[2]));
          /* The built-in noise is field.noise with the same settings. */
          TG_CHECK (sample (fe, p[0], p[1], p[2])
                    == sample (fs, p[0], p[1], p[2]) + sample (fn, p[0], p[1], p[2]));
        }
      TG_CHECK_NEAR (fd->lipschitz, (1.0 + 0.5 * fn->lipschitz) * 1.0001, 1e-3);
    }
  tg_value_unref (vs);
  tg_value_unref (vn);
  tg_value_unref (vd);
  tg_value_unref (ve);
  tg_graph_free (g);
}

/* --- slices ------------------------------------------------------------------------------- */

static const char *tmp_dir;

#define SW 24
#define SH 20
#define SN 16

/* Grey level of voxel (i, j, k): a ball of radius 7 voxels, soft-edged. */
static uint8_t
ball (int i, int j, int k)
{
  double dx = i - 11.5, dy = k - 7.5, dz = j - 9.5;
  double d = sqrt (dx * dx + dy * dy + dz * dz);
  double v = 0.5 - (d - 7.0) * 0.25;

  return (uint8_t) lrint (255.0 * (v < 0 ? 0 : v > 1 ? 1 : v));
}

static void
write_slices (void)
{
  uint8_t px[SW * SH];

  for (int k = 0; k < SN; k++)
    {
      char path[256];
      TgImage img = { .width = SW, .height = SH, .channels = 1, .bits = 8, .data = px };
      TgError err = { 0 };
      FILE *f;

      for (int j = 0; j < SH; j++)
        for (int i = 0; i < SW; i++)
          px[j * SW + i] = ball (i, j, k);
      snprintf (path, sizeof path, "%s/ct_%03d.png", tmp_dir, 8 + k);
      f = fopen (path, "wb");
      TG_CHECK (f != NULL);
      if (f)
        {
          TG_CHECK (tg_png_write (f, &img, &err) == 0);
          fclose (f);
        }
    }
}

static void
test_slices_trilinear_and_mesh (void)
{
  TgGraph *g = world ();
  int s = add_node (g, "s", "field.slices"), iso = add_node (g, "iso", "mesh.isosurface");
  TgValue *v, *mv;
  const TgField *f;

  tg_graph_set_base_dir (g, tmp_dir);
  write_slices ();
  SET (g, s, "path", "ct_008.png");
  SET (g, s, "count", "16");
  SET (g, s, "spacing_m", "2");
  SET (g, s, "pixel_m", "0.5");
  SET (g, s, "min_m", "100,-4,50");
  SET (g, s, "threshold", "0.5");
  SET (g, iso, "min_m", "99,-7,49");
  SET (g, iso, "max_m", "113,29,61");
  SET (g, iso, "cell_m", "0.25");
  add_link (g, "s", "field", "iso", "field");
  f = field_of (g, "s", &v);
  if (f)
    {
      /* Voxel (i, j, k) with j a row from the north sits at
       * x = 100 + 0.5 i, y = -4 + 2 k, z = 50 + 0.5 (SH - 1 - j). */
      TG_CHECK_NEAR (sample (f, 100 + 0.5 * 11, -4 + 2 * 7, 50 + 0.5 * (SH - 1 - 9)),
                     0.5 - ball (11, 9, 7) / 255.0, 1e-6);
      /* Halfway in all three axes: the mean of the 8 voxels. */
      {
        double want = 0.0;
        for (int c = 0; c < 8; c++)
          want += ball (5 + (c & 1), 9 + (c >> 1 & 1), 3 + (c >> 2 & 1)) / 255.0 / 8.0;
        TG_CHECK_NEAR (sample (f, 100 + 0.5 * 5.5, -4 + 2 * 3.5, 50 + 0.5 * (SH - 1 - 9.5)),
                       0.5 - want, 1e-6);
      }
      /* Trilinear weights 0.25 / 0.5 / 0.75 along x / y / z. */
      {
        double tx = 0.25, ty = 0.5, tz = 0.75, want = 0.0;
        for (int c = 0; c < 8; c++)
          {
            int a = c & 1, b = c >> 1 & 1, d = c >> 2 & 1;
            double w = (a ? tx : 1 - tx) * (d ? ty : 1 - ty) * (b ? tz : 1 - tz);
            /* z grows south to north: row j + b is tz further south. */
            want += w * ball (13 + a, 6 - b, 4 + d) / 255.0;
          }
        TG_CHECK_NEAR (sample (f, 100 + 0.5 * 13.25, -4 + 2 * 4.5, 50 + 0.5 * (SH - 1 - 6 + 0.75)),
                       0.5 - want, 1e-6);
      }
      /* Outside the stack: empty. */
      TG_CHECK_NEAR (sample (f, 0, 0, 0), 0.5, 1e-6);
      TG_CHECK (f->bounded);
      tg_value_unref (v);
    }
  {
    TgEngine *e = new_engine (2);
    TgRegion r = world_region (g);

    mv = pull (e, g, "iso", &r);
    if (mv)
      {
        const TgMeshChunk *c = &tg_value_mesh (mv)->chunks[0];
        double cx = 0, cy = 0, cz = 0;

        TG_CHECK (c->n_indices > 1000);
        for (int i = 0; i < c->n_vertices; i++)
          {
            cx += c->positions[3 * i] / c->n_vertices;
            cy += c->positions[3 * i + 1] / c->n_vertices;
            cz += c->positions[3 * i + 2] / c->n_vertices;
          }
        /* The ball's centre: voxel (11.5, 9.5, 7.5). */
        TG_CHECK_NEAR (cx, 100 + 0.5 * 11.5, 0.05);
        TG_CHECK_NEAR (cy, -4 + 2 * 7.5, 0.2);
        TG_CHECK_NEAR (cz, 50 + 0.5 * (SH - 1 - 9.5), 0.05);
        tg_value_unref (mv);
      }
    tg_engine_free (e);
  }
  tg_graph_free (g);
}

/* The axes XS, YS, ZS of a grid of NX x NY x NZ points from X0 a STEP
 * apart. */
static void
grid_axes (float *xs, float *ys, float *zs, const double x0[3], const double step[3], int nx,
           int ny, int nz)
{
  for (int i = 0; i < nx; i++)
    xs[i] = (float) (x0[0] + i * step[0]);
  for (int j = 0; j < ny; j++)
    ys[j] = (float) (x0[1] + j * step[1]);
  for (int k = 0; k < nz; k++)
    zs[k] = (float) (x0[2] + k * step[2]);
}

/* Grid sampling of a dense volume gives the point path's bits: on the
 * voxels (read straight), off them, across the border and far outside;
 * and with signed zeros, infinities and NaNs among the voxels, at levels
 * of +0 and -0. */
static void
check_volume_grid (const TgField *f, const TgVolume *vol, const double x0[3],
                   const double step[3], int nx, int ny, int nz, const char *what)
{
  static float val[64 * 64 * 64], ref[64 * 64 * 64], px[64 * 64 * 64], py[64 * 64 * 64],
    pz[64 * 64 * 64];
  float xs[64], ys[64], zs[64];
  TgFieldGrid gr = { xs, ys, zs, nx, ny, nz };
  size_t total = (size_t) nx * ny * nz;
  TgFieldScratch w = { 0 };
  int bad = 0;

  grid_axes (xs, ys, zs, x0, step, nx, ny, nz);
  for (size_t q = 0; q < total; q++)
    {
      px[q] = xs[q % nx];
      py[q] = ys[q / nx % ny];
      pz[q] = zs[q / ((size_t) nx * ny)];
    }
  if (f)
    {
      tg_field_eval (f, total, px, py, pz, ref);
      memset (val, 0xff, sizeof (float) * total);
      TG_CHECK (tg_field_eval_grid (f, &gr, val, (size_t) nx, (size_t) nx * ny, &w) == 0);
    }
  else
    {
      tg__volume_eval (vol, (int) total, px, py, pz, ref);
      memset (val, 0xff, sizeof (float) * total);
      TG_CHECK (tg__volume_grid (vol, &gr, val, (size_t) nx, (size_t) nx * ny) == 0);
    }
  for (size_t q = 0; q < total; q++)
    bad += memcmp (&val[q], &ref[q], sizeof (float)) != 0;
  TG_CHECK_MSG (bad == 0, "%s: %d of %zu samples differ", what, bad, total);
  tg_field_scratch_clear (&w);
}

/* A volume's view of a grid on its voxels (tg__volume_view) gives the
 * point path's bits: level minus the stored voxel, level minus 0 outside,
 * near and far; no view off the voxels, at a level of -0 or with a voxel
 * that is not finite. */
static void
check_volume_view (const TgVolume *vol, const double x0[3], const double step[3], int nx, int ny,
                   int nz, bool expect, const char *what)
{
  float xs[64], ys[64], zs[64];
  TgFieldGrid gr = { xs, ys, zs, nx, ny, nz };
  TgFieldView w;
  int bad = 0, rc;

  grid_axes (xs, ys, zs, x0, step, nx, ny, nz);
  rc = tg__volume_view (vol, &gr, &w);
  TG_CHECK_MSG ((rc == 0) == expect, "%s: view %d", what, rc);
  if (rc != 0)
    return;
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++)
        {
          bool stored = i >= w.lo[0] && i < w.hi[0] && j >= w.lo[1] && j < w.hi[1]
                        && k >= w.lo[2] && k < w.hi[2];
          float ref, got = w.level - (stored ? w.v[w.at + i + j * w.sy + k * w.sz] : 0.0f);

          tg__volume_eval (vol, 1, &xs[i], &ys[j], &zs[k], &ref);
          bad += memcmp (&got, &ref, sizeof (float)) != 0;
        }
  TG_CHECK_MSG (bad == 0, "%s: %d of %d view values differ", what, bad, nx * ny * nz);
}

/* A volume's Lipschitz bound is per cell: a linear ramp of 0.3 and 0.4
 * per voxel along x and y gets exactly 0.5 per voxel, a sampled distance
 * less than its per-axis steps would give, and random pairs never beat
 * it. */
static void
test_volume_lipschitz (void)
{
  enum { NX = 9, NY = 7, NZ = 5 };
  static float vox[NX * NY * NZ];
  TgVolume vol = { .v = vox, .st = { 1, NX, NX * NY }, .n = { NX, NY, NZ },
                   .org = { 1, 2, 3 }, .inv = { 2, 2, 2 } };
  double l, worst = 0.0;

  for (int k = 0; k < NZ; k++)
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++)
        vox[(k * NY + j) * NX + i] = 0.3f * i + 0.4f * j;
  /* Voxels half a metre apart: 1 per metre. */
  l = tg__volume_scan (&vol, false);
  TG_CHECK_NEAR (l, 1.0, 1e-4);
  /* A sphere's distance: the largest cell bound, not the per-axis steps'
   * norm (about sqrt 3 for a distance). */
  for (int k = 0; k < NZ; k++)
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++)
        vox[(k * NY + j) * NX + i]
          = (float) sqrt ((i - 4.2) * (i - 4.2) + (j - 3.1) * (j - 3.1) + (k - 2.3) * (k - 2.3));
  l = tg__volume_scan (&vol, false);
  for (uint32_t q = 0; q < 20000; q++)
    {
      double p[3], d[3];
      float a[3], b[3], fa, fb;

      point (q, 1.0, p);
      point (q + 50000u, 1.0, d);
      for (int k = 0; k < 3; k++)
        {
          a[k] = (float) (vol.org[k] + (0.5 + 0.5 * p[k]) * 0.5 * (vol.n[k] - 1));
          b[k] = (float) (a[k] + 0.05 * d[k]);
          b[k] = fminf (fmaxf (b[k], vol.org[k]), vol.org[k] + 0.5f * (vol.n[k] - 1));
        }
      tg__volume_eval (&vol, 1, &a[0], &a[1], &a[2], &fa);
      tg__volume_eval (&vol, 1, &b[0], &b[1], &b[2], &fb);
      {
        double len = sqrt ((double) (a[0] - b[0]) * (a[0] - b[0])
                           + (double) (a[1] - b[1]) * (a[1] - b[1])
                           + (double) (a[2] - b[2]) * (a[2] - b[2]));
        if (len > 1e-4)
          worst = fmax (worst, fabs ((double) fa - fb) / len);
      }
    }
  TG_CHECK_MSG (worst <= l * 1.0001, "empirical %g beats the bound %g", worst, l);
  /* Per-axis maximum steps would give 2 sqrt 3 per metre (1 per voxel
   * along each axis somewhere); the cells give 3.0, from those at the
   * centre, where the distance bends most. */
  TG_CHECK_MSG (l < 0.9 * 2.0 * sqrt (3.0) && l > worst, "bound %g, empirical %g", l, worst);
}

static void
test_slices_grid_same_bits (void)
{
  TgGraph *g = world ();
  int s = add_node (g, "s", "field.slices");
  TgValue *v;
  const TgField *f;

  tg_graph_set_base_dir (g, tmp_dir);
  write_slices ();
  SET (g, s, "path", "ct_008.png");
  SET (g, s, "count", "16");
  SET (g, s, "spacing_m", "2");
  SET (g, s, "pixel_m", "0.5");
  SET (g, s, "min_m", "100,-4,50");
  f = field_of (g, "s", &v);
  tg_graph_free (g);
  TG_CHECK (f != NULL);
  if (f == NULL)
    return;
  TG_CHECK_MSG (f->eval_grid != NULL, "field.slices has no grid path");
  /* On the voxels, three beyond the stack on every side. */
  check_volume_grid (f, NULL, (double[]){ 98.5, -10, 48.5 }, (double[]){ 0.5, 2, 0.5 }, 30, 22,
                     26, "on the voxels");
  check_volume_grid (f, NULL, (double[]){ 101, 0, 52 }, (double[]){ 0.5, 2, 0.5 }, 5, 7, 9,
                     "on the voxels, inside");
  check_volume_grid (f, NULL, (double[]){ 99.9, -5.3, 49.1 }, (double[]){ 0.37, 0.61, 0.29 },
                     40, 64, 45, "off the voxels");
  check_volume_grid (f, NULL, (double[]){ 101, -4, 50 }, (double[]){ 1, 4, 1 }, 12, 8, 10,
                     "every other voxel");
  check_volume_grid (f, NULL, (double[]){ -1e6, 5e5, 3e7 }, (double[]){ 0.5, 2, 0.5 }, 4, 4, 4,
                     "far outside");
  tg_value_unref (v);

  {
    float vox[3 * 4 * 5];
    TgVolume vol = { .v = vox, .st = { 1, 3, 12 }, .n = { 3, 4, 5 },
                     .org = { -1, 0, 2 }, .inv = { 1, 1, 1 } };

    for (int q = 0; q < 3 * 4 * 5; q++)
      vox[q] = (float) (q % 7) - 3.0f;
    vox[4] = -0.0f;
    vox[9] = 0.0f;
    vox[17] = -0.0f;
    for (int pass = 0; pass < 4; pass++)
      {
        char what[64];

        if (pass == 2)
          vox[30] = INFINITY;
        if (pass == 3)
          vox[31] = NAN;
        vol.level = pass & 1 ? -0.0f : 0.0f;
        TG_CHECK (isfinite (tg__volume_scan (&vol, true)) == (pass < 2));
        TG_CHECK (vol.finite == (pass < 2));
        snprintf (what, sizeof what, "signed zeros, pass %d, on", pass);
        check_volume_grid (NULL, &vol, (double[]){ -3, -2, 0 }, (double[]){ 1, 1, 1 }, 7, 8, 9,
                           what);
        snprintf (what, sizeof what, "signed zeros, pass %d, off", pass);
        check_volume_grid (NULL, &vol, (double[]){ -2.5, -1.25, 1.5 },
                           (double[]){ 0.5, 0.75, 0.25 }, 9, 10, 30, what);
        snprintf (what, sizeof what, "view, pass %d, on", pass);
        check_volume_view (&vol, (double[]){ -3, -2, 0 }, (double[]){ 1, 1, 1 }, 7, 8, 9,
                           pass == 0, what);
        snprintf (what, sizeof what, "view, pass %d, far", pass);
        check_volume_view (&vol, (double[]){ -9, -7, -6 }, (double[]){ 1, 1, 1 }, 20, 21, 22,
                           pass == 0, what);
        snprintf (what, sizeof what, "view, pass %d, off", pass);
        check_volume_view (&vol, (double[]){ -2.5, -1.25, 1.5 }, (double[]){ 0.5, 0.75, 0.25 },
                           9, 10, 30, false, what);
        snprintf (what, sizeof what, "view, pass %d, every other voxel", pass);
        check_volume_view (&vol, (double[]){ -1, 0, 2 }, (double[]){ 2, 1, 1 }, 3, 4, 5, false,
                           what);
      }
  }
}

static void
expect_fail (TgGraph *g, const char *id, const char *needle)
{
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgError err = { 0 };
  TgValue *v = pull_err (e, g, id, &r, &err);
  char buf[1024];

  TG_CHECK (v == NULL);
  if (v)
    tg_value_unref (v);
  tg_error_format (&err, buf, sizeof buf);
  TG_CHECK_STR_CONTAINS (buf, needle);
  tg_engine_free (e);
}

static void
test_errors_name_the_place (void)
{
  TgGraph *g = world ();
  int b = add_node (g, "b", "field.box"), t = add_node (g, "t", "field.transform");
  int s = add_node (g, "s", "field.slices"), p = add_node (g, "p", "field.plane");

  tg_graph_set_base_dir (g, tmp_dir);
  add_link (g, "b", "field", "t", "field");
  SET (g, b, "size_m", "2,4,8");
  SET (g, b, "rounding_m", "1.5");
  expect_fail (g, "b", "params.rounding_m");
  SET (g, b, "rounding_m", "0");
  SET (g, t, "scale", "1,0,1");
  expect_fail (g, "t", "params.scale");
  SET (g, p, "normal", "0,0,0");
  expect_fail (g, "p", "params.normal");
  SET (g, s, "path", "missing_000.png");
  expect_fail (g, "s", "missing_000.png");
  write_slices ();
  SET (g, s, "path", "ct_008.png");
  SET (g, s, "count", "40");
  expect_fail (g, "s", "ct_024.png");
  tg_graph_free (g);
}

int
main (void)
{
  tg_formats_init ();
  tmp_dir = tgtest_tmpdir ("tg_fields_");
  if (!tmp_dir)
    return 1;
  TG_RUN (test_primitives_are_distances);
  TG_RUN (test_csg_matches_formulas);
  TG_RUN (test_transform);
  TG_RUN (test_noise_bounds_and_lipschitz);
  TG_RUN (test_noise_lipschitz_tight);
  TG_RUN (test_noise_same_bits_every_isa);
  TG_RUN (test_noise_grid_same_bits);
  TG_RUN (test_eval_grid_hook_or_batches);
  TG_RUN (test_from_height);
  TG_RUN (test_displace_adds);
  TG_RUN (test_slices_trilinear_and_mesh);
  TG_RUN (test_slices_grid_same_bits);
  TG_RUN (test_volume_lipschitz);
  TG_RUN (test_errors_name_the_place);
  return tgtest_result ();
}
