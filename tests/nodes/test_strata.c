/* Tests for filter.strata and field.strata: flat beds cut a ramp into
 * treads exactly one bed thick; tilted beds cut a flat plain into the
 * number of steps the dip gives; strength 0 and an empty mask leave the
 * height alone; the same bytes on any thread count and window; the field
 * version only removes material, keeps its Lipschitz promise, changes
 * from bed to bed, and still meshes watertight. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtest.h"

#define RES 201
#define HEIGHT_M 100.0

static TgGraph *
ramp_graph (void)
{
  TgGraph *g = new_graph (1000, 1000, RES);

  tg_graph_world (g)->height_m = HEIGHT_M;
  add_node (g, "ramp", "gen.gradient");
  add_node (g, "s", "filter.strata");
  add_link (g, "ramp", "height", "s", "height");
  return g;
}

/* Dip 0, no warp, every bed equally hard, strength 1, sharpness 1: each
 * height drops to the base of its bed. */
static void
test_flat_beds_are_treads (void)
{
  TgGraph *g = ramp_graph ();
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  int s = tg_graph_find_node (g, "s");
  TgValue *in, *out;
  int bad = 0, levels = 0;
  float last = -1.0f;

  SET (g, s, "thickness_m", "10");
  SET (g, s, "dip_deg", "0");
  SET (g, s, "warp_m", "0");
  SET (g, s, "hardness_variation", "0");
  SET (g, s, "strength", "1");
  SET (g, s, "sharpness", "1");
  in = pull (e, g, "ramp", &r);
  out = pull (e, g, "s", &r);
  if (in && out)
    {
      for (int i = 0; i < RES; i++)
        {
          double h = at (in, i, 7) * HEIGHT_M, o = at (out, i, 7) * HEIGHT_M;
          double want = floor (h / 10.0 + 1e-9) * 10.0;
          if (fabs (o - want) > 1e-3)
            bad++;
          if (at (out, i, 7) != last)
            levels++;
          last = at (out, i, 7);
        }
      TG_CHECK_MSG (bad == 0, "%d samples not at the base of their bed", bad);
      /* 0, 10, ..., 100 m: eleven treads across the ramp. */
      TG_CHECK_INT_EQ (levels, 11);
    }
  tg_value_unref (in);
  tg_value_unref (out);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* Beds dipping 10 degrees east across a flat plain: a saw-tooth whose
 * teeth are T / tan (10 deg) metres apart, each jump one bed high. */
static void
test_tilted_beds_cut_a_plain (void)
{
  TgGraph *g = new_graph (1000, 1000, RES);
  TgEngine *e = new_engine (1);
  TgRegion r;
  int s;
  TgValue *out;

  tg_graph_world (g)->height_m = HEIGHT_M;
  r = world_region (g);
  add_node (g, "flat", "gen.constant");
  s = add_node (g, "s", "filter.strata");
  add_link (g, "flat", "height", "s", "height");
  SET (g, s, "thickness_m", "10");
  SET (g, s, "dip_deg", "10");
  SET (g, s, "dip_azimuth_deg", "90");
  SET (g, s, "warp_m", "0");
  SET (g, s, "hardness_variation", "0");
  SET (g, s, "strength", "1");
  SET (g, s, "sharpness", "1");
  out = pull (e, g, "s", &r);
  if (out)
    {
      int jumps = 0, wrong = 0;
      for (int i = 1; i < RES; i++)
        {
          double d = (at (out, i, 3) - at (out, i - 1, 3)) * HEIGHT_M;
          if (d > 5.0)
            {
              jumps++;
              if (fabs (d - 10.0) > 5 * tan (10.0 * M_PI / 180.0) + 1e-3)
                wrong++;
            }
          else if (d > 0.0 || d < -1.0)
            wrong++; /* between jumps the surface falls with the beds */
          /* Along a north-south column nothing changes. */
          if (at (out, i, 3) != at (out, i, 150))
            wrong++;
        }
      /* 1000 m * tan (10 deg) / 10 m = 17.6 beds cross the plain. */
      TG_CHECK_MSG (jumps == 17 || jumps == 18, "%d steps", jumps);
      TG_CHECK_INT_EQ (wrong, 0);
    }
  tg_value_unref (out);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* Strength 0, and a mask of 0, give the input's bytes. */
static void
test_strength_and_mask_off_are_identity (void)
{
  TgGraph *g = ramp_graph ();
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  int s = tg_graph_find_node (g, "s"), sel;
  TgValue *in, *out;

  in = pull (e, g, "ramp", &r);
  SET (g, s, "strength", "0");
  out = pull (e, g, "s", &r);
  if (in && out)
    TG_CHECK (memcmp (in->data, out->data, sizeof (float) * RES * RES) == 0);
  tg_value_unref (out);

  /* A mask selecting the upper half: the lower half keeps its heights,
   * the upper half changes. */
  SET (g, s, "strength", "1");
  sel = add_node (g, "upper", "select.height");
  SET (g, sel, "min_height", "0.5");
  SET (g, sel, "falloff", "0");
  add_link (g, "ramp", "height", "upper", "height");
  add_link (g, "upper", "mask", "s", "mask");
  out = pull (e, g, "s", &r);
  if (in && out)
    {
      int lower_same = 1, upper_changed = 0;
      for (int i = 0; i < RES; i++)
        {
          if (at (in, i, 9) < 0.49f && at (out, i, 9) != at (in, i, 9))
            lower_same = 0;
          if (at (in, i, 9) > 0.51f && at (out, i, 9) != at (in, i, 9))
            upper_changed++;
        }
      TG_CHECK (lower_same);
      TG_CHECK_MSG (upper_changed > RES / 4, "%d samples changed under the mask", upper_changed);
    }
  tg_value_unref (in);
  tg_value_unref (out);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* With the warp and varied hardness on, windows and thread counts see
 * the same bytes as the whole map on one thread. */
static void
test_same_bytes_any_window (void)
{
  TgGraph *g = new_graph (2000, 1500, 257);
  TgEngine *e1 = new_engine (1), *e2 = new_engine (2);
  TgRegion full;
  TgValue *whole;

  tg_graph_world (g)->height_m = 300.0;
  full = world_region (g);
  add_node (g, "n", "noise.fbm");
  add_node (g, "s", "filter.strata");
  add_link (g, "n", "height", "s", "height");
  whole = pull (e1, g, "s", &full);
  for (int k = 0; whole && k < 3; k++)
    {
      static const int win[3][4] = { { 0, 0, 100, 80 }, { 37, 51, 120, 61 }, { 200, 150, 57, 43 } };
      TgRegion r = tg_region_window (&full, win[k][0], win[k][1], win[k][2], win[k][3]);
      TgValue *part = pull (e2, g, "s", &r);
      if (part)
        TG_CHECK_MSG (same_window (whole, part), "window %d differs", k);
      tg_value_unref (part);
    }
  tg_value_unref (whole);
  tg_engine_free (e1);
  tg_engine_free (e2);
  tg_graph_free (g);
}

/* --- field.strata ------------------------------------------------------------ */

static TgGraph *
rock_graph (void)
{
  TgGraph *g = new_graph (100, 100, 65);
  int s;

  add_node (g, "rock", "field.box");
  SET (g, tg_graph_find_node (g, "rock"), "size_m", "40,30,40");
  s = add_node (g, "s", "field.strata");
  add_link (g, "rock", "field", "s", "field");
  SET (g, s, "thickness_m", "3");
  SET (g, s, "depth_m", "1.5");
  SET (g, s, "hardness_variation", "1");
  return g;
}

static void
test_field_recedes_by_bed (void)
{
  TgGraph *g = rock_graph ();
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *rock = pull (e, g, "rock", &r), *beds = pull (e, g, "s", &r);

  if (rock && beds)
    {
      const TgField *a = tg_value_field (rock), *b = tg_value_field (beds);
      enum { N = 4000 };
      static float x[N], y[N], z[N], fa[N], fb[N], x2[N], y2[N], z2[N], fb2[N];
      double lo = 1e30, hi = -1e30, worst = 0.0;
      uint32_t s = 12345;

      /* Points along the box's east wall (x = 20), bottom to top. */
      for (int i = 0; i < N; i++)
        {
          x[i] = 20.0f;
          y[i] = -15.0f + 30.0f * (float) i / (N - 1);
          z[i] = 3.0f;
        }
      tg_field_eval (a, N, x, y, z, fa);
      tg_field_eval (b, N, x, y, z, fb);
      for (int i = 0; i < N; i++)
        {
          double d = (double) fb[i] - (double) fa[i];
          lo = d < lo ? d : lo;
          hi = d > hi ? d : hi;
        }
      /* Only removes material, by up to depth * variation, and the beds
       * differ: some recede by much more than others. */
      TG_CHECK_MSG (lo >= 0.0, "the field shrank by %g", lo);
      TG_CHECK_MSG (hi <= 1.5 + 1e-4, "receded %g m, more than the depth", hi);
      TG_CHECK_MSG (hi - lo > 0.5, "beds recede %g..%g m: no ledges", lo, hi);

      /* The Lipschitz bound holds between random close pairs. */
      for (int i = 0; i < N; i++)
        {
          float d[3];
          for (int k = 0; k < 3; k++)
            {
              s = s * 1664525u + 1013904223u;
              d[k] = ((float) (s >> 8) / 16777216.0f - 0.5f) * 0.2f;
            }
          s = s * 1664525u + 1013904223u;
          x[i] = -25.0f + 50.0f * (float) (s >> 8) / 16777216.0f;
          s = s * 1664525u + 1013904223u;
          y[i] = -18.0f + 36.0f * (float) (s >> 8) / 16777216.0f;
          z[i] = 19.0f;
          x2[i] = x[i] + d[0];
          y2[i] = y[i] + d[1];
          z2[i] = z[i] + d[2];
        }
      tg_field_eval (b, N, x, y, z, fb);
      tg_field_eval (b, N, x2, y2, z2, fb2);
      for (int i = 0; i < N; i++)
        {
          double dist = sqrt ((double) (x2[i] - x[i]) * (x2[i] - x[i])
                              + (double) (y2[i] - y[i]) * (y2[i] - y[i])
                              + (double) (z2[i] - z[i]) * (z2[i] - z[i]));
          double ratio = dist > 1e-4 ? fabs ((double) fb2[i] - fb[i]) / dist : 0.0;
          worst = ratio > worst ? ratio : worst;
        }
      TG_CHECK_MSG (worst <= b->lipschitz * 1.001 + 1e-3, "gradient %g over the bound %g", worst,
                    (double) b->lipschitz);
      TG_CHECK (b->lipschitz > 1.0f);
    }
  tg_value_unref (rock);
  tg_value_unref (beds);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* Edges used by exactly one triangle, after welding by position. */
static int64_t
open_edges (const TgMeshChunk *c)
{
  int64_t n = c->n_indices / 3 * 3, open = 0;
  uint64_t *edges = malloc (sizeof (uint64_t) * (size_t) n);

  for (int64_t t = 0; t < n; t += 3)
    for (int k = 0; k < 3; k++)
      {
        uint32_t a = c->indices[t + k], b = c->indices[t + (k + 1) % 3];
        edges[t + k] = a < b ? (uint64_t) a << 32 | b : (uint64_t) b << 32 | a;
      }
  for (int64_t i = 1; i < n; i++)
    for (int64_t j = i; j > 0 && edges[j - 1] > edges[j]; j--)
      {
        uint64_t tmp = edges[j];
        edges[j] = edges[j - 1];
        edges[j - 1] = tmp;
      }
  for (int64_t i = 0; i < n;)
    {
      int64_t j = i;
      while (j < n && edges[j] == edges[i])
        j++;
      if (j - i != 2)
        open++;
      i = j;
    }
  free (edges);
  return open;
}

static void
test_field_meshes_watertight (void)
{
  TgGraph *g = rock_graph ();
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  int iso = add_node (g, "iso", "mesh.isosurface");
  TgValue *m;

  SET (g, tg_graph_find_node (g, "rock"), "size_m", "16,12,16");
  add_link (g, "s", "field", "iso", "field");
  SET (g, iso, "min_m", "-10,-8,-10");
  SET (g, iso, "max_m", "10,8,10");
  SET (g, iso, "cell_m", "0.5");
  m = pull (e, g, "iso", &r);
  if (m)
    {
      const TgMesh *mesh = tg_value_mesh (m);
      TG_CHECK (mesh->n_chunks >= 1 && mesh->chunks[0].n_indices > 300);
      for (int k = 0; k < mesh->n_chunks; k++)
        TG_CHECK_MSG (open_edges (&mesh->chunks[k]) == 0, "chunk %d has open edges", k);
    }
  tg_value_unref (m);
  tg_engine_free (e);
  tg_graph_free (g);
}

int
main (void)
{
  TG_RUN (test_flat_beds_are_treads);
  TG_RUN (test_tilted_beds_cut_a_plain);
  TG_RUN (test_strength_and_mask_off_are_identity);
  TG_RUN (test_same_bytes_any_window);
  TG_RUN (test_field_recedes_by_bed);
  TG_RUN (test_field_meshes_watertight);
  return tgtest_result ();
}
