/* Tests for erosion.river on a V-shaped valley tilted south, where all
 * water gathers on the centre line: the channel's wetted width follows
 * w = width_m (A / 1 km²)^b of the drainage area decoded from the flow
 * mask, its centre is carved by depth_m (A / 1 km²)^f, both grow
 * downstream, the banks reach bank_m past the water on either side, the
 * river's and the banks' shares of the map hold across resolutions, a
 * source area nothing reaches leaves the height alone, and windows and
 * thread counts give the same bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtest.h"

#define SX 1000.0
#define SZ 2000.0
#define HEIGHT_M 200.0

/* A valley 1 km across and 2 km long: walls rising 100 m either side of
 * x = 0, the floor falling 100 m to the south. */
static TgGraph *
valley (int res)
{
  TgGraph *g = new_graph (SX, SZ, res);
  int n;

  tg_graph_world (g)->height_m = HEIGHT_M;
  add_node (g, "across", "gen.gradient");
  add_node (g, "half", "gen.constant");
  n = add_node (g, "v", "math.combine");
  SET (g, n, "op", "difference"); /* |x / 1 km|: a sharp V */
  add_link (g, "across", "height", "v", "a");
  add_link (g, "half", "height", "v", "b");
  n = add_node (g, "along", "gen.gradient");
  SET (g, n, "angle_deg", "90");
  SET (g, n, "to", "0.5");
  n = add_node (g, "ground", "math.combine");
  SET (g, n, "clamp", "false");
  add_link (g, "v", "height", "ground", "a");
  add_link (g, "along", "height", "ground", "b");
  /* D8: the water of a row meets in one sample, whose area is the
   * channel's (MFD would share it among neighbours). */
  n = add_node (g, "flow", "erosion.flow");
  SET (g, n, "routing", "d8");
  add_link (g, "ground", "height", "flow", "height");
  n = add_node (g, "river", "erosion.river");
  SET (g, n, "min_area_km2", "0.05");
  SET (g, n, "width_m", "10");
  SET (g, n, "depth_m", "2");
  add_link (g, "ground", "height", "river", "height");
  add_link (g, "flow", "flow", "river", "flow");
  return g;
}

/* Output K of node ID over R. */
static TgValue *
pull_k (TgEngine *e, TgGraph *g, const char *id, int k, const TgRegion *r)
{
  TgValue *v = NULL;
  TgError err = { 0 };
  int rc = tg_engine_pull (e, g, tg_graph_find_node (g, id), k, r, NULL, &v, NULL, &err);

  TG_CHECK_MSG (rc == 0, "pull %s.%d: %s: %s", id, k, err.path, err.message);
  return rc == 0 ? v : NULL;
}

/* erosion.flow's mask back to m² (its scale: log1p (A / ref) over
 * log1p (W / ref), ref the cell of a 1025-sample map). */
static double
area_of (float m)
{
  double ref = (SX / 1024.0) * (SX / 1024.0);
  return ref * expm1 ((double) m * log1p (SX * SZ / ref));
}

static double
river_share (const TgValue *river)
{
  double sum = 0.0;
  size_t n = (size_t) river->region.width * river->region.height;

  for (size_t i = 0; i < n; i++)
    sum += river->data[i];
  return sum / (double) n;
}

static void
test_width_and_depth_follow_the_area (void)
{
  TgGraph *g = valley (201); /* 5 m cells; column 100 is x = 0 */
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *ground = pull (e, g, "ground", &r), *flow = pull (e, g, "flow", &r);
  TgValue *carved = pull_k (e, g, "river", 0, &r), *wet = pull_k (e, g, "river", 1, &r);
  double last_width = 0.0;
  int checked = 0;

  if (ground && flow && carved && wet)
    {
      /* From 1/4 of the way down to 7/8: the channel is well started.  C:
       * the sample of the row the most area drains through. */
      for (int j = r.height / 4; j < r.height * 7 / 8; j += 40)
        {
          int c = 0;
          for (int i = 1; i < r.width; i++)
            if (at (flow, i, j) > at (flow, c, j))
              c = i;
          double area = area_of (at (flow, c, j));
          double ratio = sqrt (area / 1e6);
          double want_w = 10.0 * ratio, want_d = 2.0 * pow (ratio, 0.4 / 0.5);
          double width = 0.0, depth = (at (ground, c, j) - at (carved, c, j)) * HEIGHT_M;
          for (int i = 0; i < r.width; i++)
            width += at (wet, i, j) * r.cell;
          TG_CHECK_MSG (fabs (width - want_w) <= r.cell, "row %d: %.1f m wide, want %.1f m (A %.3f km²)",
                        j, width, want_w, area * 1e-6);
          TG_CHECK_MSG (depth >= want_d * 0.999 && depth <= want_d * 1.1,
                        "row %d: carved %.3f m, want %.3f m", j, depth, want_d);
          TG_CHECK_MSG (width >= last_width - 1e-6, "row %d: narrower downstream", j);
          last_width = width;
          checked++;
        }
      TG_CHECK (checked >= 3);
      /* Far from the channel nothing moves. */
      TG_CHECK (at (carved, 10, r.height / 2) == at (ground, 10, r.height / 2));
      TG_CHECK (at (wet, 10, r.height / 2) == 0.0f);
    }
  tg_value_unref (ground);
  tg_value_unref (flow);
  tg_value_unref (carved);
  tg_value_unref (wet);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* The bank mask: 1 under the water, 0 from bank_m (8 m) past its edge,
 * and across a row it covers the water's width plus one bank_m (half of
 * each side's smoothstep, which falls symmetrically). */
static void
test_banks_border_the_water (void)
{
  TgGraph *g = valley (401); /* 2.5 m cells; column 200 is x = 0 */
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *wet = pull_k (e, g, "river", 1, &r), *bank = pull_k (e, g, "river", 2, &r);
  int checked = 0;

  if (wet && bank)
    {
      for (int j = r.height / 4; j < r.height * 7 / 8; j += 80)
        {
          double width = 0.0, banks = 0.0, edge = 0.0;
          for (int i = 0; i < r.width; i++)
            {
              width += at (wet, i, j) * r.cell;
              banks += at (bank, i, j) * r.cell;
              if (at (wet, i, j) >= 0.5f)
                TG_CHECK_MSG (at (bank, i, j) == 1.0f, "row %d col %d: water with bank %g", j, i,
                              at (bank, i, j));
              if (at (bank, i, j) > 0.0f && fabs ((i - 200) * r.cell) > edge)
                edge = fabs ((i - 200) * r.cell);
            }
          TG_CHECK_MSG (fabs (banks - (width + 8.0)) <= 0.25 * r.cell,
                        "row %d: banks cover %.1f m, the water %.1f m (want water + 8 m)", j, banks,
                        width);
          TG_CHECK_MSG (edge < 0.5 * width + 8.0 + r.cell,
                        "row %d: bank %.1f m from the centre, water %.1f m wide", j, edge, width);
          checked++;
        }
      TG_CHECK (checked >= 3);
      TG_CHECK (at (bank, 10, r.height / 2) == 0.0f);
    }
  tg_value_unref (wet);
  tg_value_unref (bank);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* The river's and the banks' shares of the map at 2.5 m cells are within
 * 15 % of those at 5 m cells. */
static void
test_share_holds_across_resolutions (void)
{
  double share[2][2];
  const int res[2] = { 201, 401 };

  for (int k = 0; k < 2; k++)
    {
      TgGraph *g = valley (res[k]);
      TgEngine *e = new_engine (2);
      TgRegion r = world_region (g);
      for (int o = 0; o < 2; o++)
        {
          TgValue *m = pull_k (e, g, "river", 1 + o, &r);
          share[o][k] = m ? river_share (m) : 0.0;
          tg_value_unref (m);
        }
      tg_engine_free (e);
      tg_graph_free (g);
    }
  for (int o = 0; o < 2; o++)
    {
      const char *what = o ? "banks" : "river";
      TG_CHECK_MSG (share[o][0] > 0.001, "%s share %g: none", what, share[o][0]);
      TG_CHECK_MSG (fabs (share[o][1] / share[o][0] - 1.0) < 0.15,
                    "%s share %.5f at 201, %.5f at 401", what, share[o][0], share[o][1]);
    }
  TG_CHECK_MSG (share[1][0] > share[0][0], "banks %.5f, river %.5f", share[1][0], share[0][0]);
}

static void
test_no_source_is_identity (void)
{
  TgGraph *g = valley (101);
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgValue *ground, *carved, *wet;

  SET (g, tg_graph_find_node (g, "river"), "min_area_km2", "100");
  ground = pull (e, g, "ground", &r);
  carved = pull_k (e, g, "river", 0, &r);
  wet = pull_k (e, g, "river", 1, &r);
  if (ground && carved && wet)
    {
      TG_CHECK (memcmp (ground->data, carved->data, sizeof (float) * 101 * (size_t) r.height) == 0);
      TG_CHECK (river_share (wet) == 0.0);
    }
  tg_value_unref (ground);
  tg_value_unref (carved);
  tg_value_unref (wet);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_same_bytes_any_window (void)
{
  TgGraph *g = valley (201);
  TgEngine *e1 = new_engine (1), *e2 = new_engine (2);
  TgRegion full = world_region (g);
  TgValue *whole[3] = { pull_k (e1, g, "river", 0, &full), pull_k (e1, g, "river", 1, &full),
                        pull_k (e1, g, "river", 2, &full) };
  static const int win[3][4] = { { 90, 100, 30, 50 }, { 0, 0, 120, 90 }, { 95, 300, 11, 101 } };

  for (int k = 0; whole[0] && whole[1] && whole[2] && k < 3; k++)
    {
      TgRegion r = tg_region_window (&full, win[k][0], win[k][1], win[k][2], win[k][3]);
      for (int o = 0; o < 3; o++)
        {
          TgValue *part = pull_k (e2, g, "river", o, &r);
          if (part)
            TG_CHECK_MSG (same_window (whole[o], part), "window %d output %d differs", k, o);
          tg_value_unref (part);
        }
    }
  for (int o = 0; o < 3; o++)
    tg_value_unref (whole[o]);
  tg_engine_free (e1);
  tg_engine_free (e2);
  tg_graph_free (g);
}

static void
test_width_over_maximum_is_refused (void)
{
  TgGraph *g = valley (101);
  TgError err = { 0 };
  int n = tg_graph_find_node (g, "river");

  SET (g, n, "max_width_m", "5");
  TG_CHECK (tg_graph_validate (g, &err) != 0);
  TG_CHECK_MSG (strstr (err.path, "params.width_m") != NULL, "path %s: %s", err.path, err.message);
  tg_graph_free (g);
}

int
main (void)
{
  TG_RUN (test_width_and_depth_follow_the_area);
  TG_RUN (test_banks_border_the_water);
  TG_RUN (test_share_holds_across_resolutions);
  TG_RUN (test_no_source_is_identity);
  TG_RUN (test_same_bytes_any_window);
  TG_RUN (test_width_over_maximum_is_refused);
  return tgtest_result ();
}
