/* Tests for erosion.hydraulic's droplets side by side: a worker that
 * moves the droplets of several lattice tiles of a phase at once (the
 * AVX-512 lanes of erosion_hydraulic_sim.c, sixteen to a vector) gives
 * the bytes of one droplet at a time, in the height, the water and every
 * figure, on maps with many tiles a phase, whatever the lanes and the
 * order the parallel runner picks: droplets stop at different steps (the
 * lifetime, a flat, the world's edge), lanes take the next tile's
 * droplets and fall idle when none is left.  On a CPU without AVX-512
 * both runs take the one-at-a-time path and the test says so. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/tgraph.h>

#include "../../engine/nodes/erosion_hydraulic.h"
#include "tggraph_test.h"
#include "tgtest.h"

static int
run_forward (void *ctx, int n, void (*fn) (void *, int, int), void *user)
{
  for (int k = 0; k < n; k++)
    fn (user, k, k + 1);
  return 0;
}

static int
run_backward (void *ctx, int n, void (*fn) (void *, int, int), void *user)
{
  for (int k = n; k-- > 0;)
    fn (user, k, k + 1);
  return 0;
}

/* A 2 km world, 500 m high, of RES samples: fbm. */
static TgValue *
terrain (int res, TgRegion *r)
{
  TgGraph *g = new_graph (2048, 2048, res);
  TgEngine *e = new_engine (1);
  TgValue *v;
  int b;

  tg_graph_world (g)->height_m = 500;
  tg_graph_world (g)->seed = 5;
  b = add_node (g, "base", "noise.fbm");
  SET (g, b, "scale_m", "700");
  SET (g, b, "octaves", "6");
  *r = world_region (g);
  v = pull (e, g, "base", r);
  tg_engine_free (e);
  tg_graph_free (g);
  return v;
}

/* Short lives, so the lattice tiles are small: 12 steps make a margin of
 * 16 cells, tiles of 33, 81 of them over 257 x 257, about 20 a phase. */
static void
setup_short (TgHydraulicSetup *s)
{
  memset (s, 0, sizeof *s);
  s->seed = 31;
  s->droplets = 40000;
  s->rounds = 3;
  s->max_steps = 12;
  s->inertia = 0.1f;
  s->capacity = 0.004f;
  s->min_slope = 0.01f;
  s->erode = 0.3f;
  s->deposit = 0.3f;
  s->evaporate = 0.98f;
  s->friction = 0.9f;
  s->gravity = 2.0f * 9.81f * 500.0f;
  s->height_scale = 500.0f;
  s->cell_m = 8.0f;
  s->brush_radius = 2.0f;
  s->isa = TG__HYDRAULIC_ISA_AVX512;
  s->threads = 1;
}

typedef struct
{
  float *h, *f;
  TgHydraulicStats st;
} Run;

static void
run_sim (const TgHydraulicSetup *s, const TgValue *base, const TgRegion *r,
         TgHydraulicParallel parallel, Run *out)
{
  size_t n = (size_t) r->width * r->height;

  out->h = malloc (sizeof (float) * n);
  out->f = calloc (n, sizeof (float));
  memcpy (out->h, base->data, sizeof (float) * n);
  TG_CHECK_INT_EQ (tg__hydraulic_simulate (s, out->h, out->f, r->width, r->height, parallel, NULL,
                                           &out->st),
                   0);
}

static bool
same_stats (const TgHydraulicStats *a, const TgHydraulicStats *b)
{
  return a->eroded == b->eroded && a->deposited == b->deposited && a->carried == b->carried
         && a->left == b->left && a->droplets_run == b->droplets_run && a->steps == b->steps;
}

/* Setup S with 1 lane against LANES lanes run forward and backward. */
static void
check_lanes_agree (const char *what, const TgHydraulicSetup *s, const TgValue *base,
                   const TgRegion *reg, int lanes)
{
  size_t n = (size_t) reg->width * reg->height, changed = 0;
  TgHydraulicSetup one = *s, many = *s;
  Run r[3];

  one.lanes = 1;
  many.lanes = lanes;
  run_sim (&one, base, reg, run_forward, &r[0]);
  run_sim (&many, base, reg, run_forward, &r[1]);
  run_sim (&many, base, reg, run_backward, &r[2]);
  for (size_t k = 0; k < n; k++)
    changed += r[0].h[k] != base->data[k];
  /* The runs do the work meant: most cells change, droplets stop before
   * their lifetime (flats, falls) and at the world's edge. */
  TG_CHECK_MSG (changed > n / 2, "%s: only %zu of %zu cells changed", what, changed, n);
  TG_CHECK_MSG (r[0].st.droplets_run == s->droplets, "%s: %lld droplets", what,
                r[0].st.droplets_run);
  TG_CHECK_MSG (r[0].st.steps < (long long) s->droplets * s->max_steps, "%s: no droplet stopped early",
                what);
  TG_CHECK_MSG (r[0].st.left > 0.0, "%s: no droplet left the world", what);
  for (int k = 1; k < 3; k++)
    {
      TG_CHECK_MSG (memcmp (r[0].h, r[k].h, sizeof (float) * n) == 0,
                    "%s: height differs with %d lanes (%s)", what, lanes, k == 1 ? "forward" : "backward");
      TG_CHECK_MSG (memcmp (r[0].f, r[k].f, sizeof (float) * n) == 0,
                    "%s: water differs with %d lanes (%s)", what, lanes, k == 1 ? "forward" : "backward");
      TG_CHECK_MSG (same_stats (&r[0].st, &r[k].st), "%s: figures differ with %d lanes: eroded %.17g vs %.17g",
                    what, lanes, r[0].st.eroded, r[k].st.eroded);
    }
  for (int k = 0; k < 3; k++)
    {
      free (r[k].h);
      free (r[k].f);
    }
}

static void
test_hydraulic_lanes_agree (void)
{
  TgRegion reg;
  TgValue *base = terrain (257, &reg);
  TgHydraulicSetup s;

  if (!tg__hydraulic_isa_supported (TG__HYDRAULIC_ISA_AVX512))
    fprintf (stderr, "  no AVX-512 on this CPU: both runs take one droplet at a time\n");
  if (!base)
    {
      TG_CHECK (0);
      return;
    }
  /* One-cell steps, a 3 x 3 brush: 16 lanes, a full vector, 12 (four
   * lanes idle throughout), and 20, more than the most. */
  setup_short (&s);
  check_lanes_agree ("plain", &s, base, &reg, 16);
  check_lanes_agree ("plain", &s, base, &reg, 12);
  check_lanes_agree ("plain", &s, base, &reg, 20);
  /* Steps of two cells (two points of water a step, the fall test's
   * first cell), falls steeper than 0.4 m per m, brushes with rows of 13
   * cells and deposits of 7. */
  setup_short (&s);
  s.step = 2.0f;
  s.max_steps = 6;
  s.fall_slope = 0.4f;
  s.brush_radius = 6.5f;
  s.deposit_radius = 3.5f;
  check_lanes_agree ("long steps", &s, base, &reg, 16);
  tg_value_unref (base);
}

int
main (void)
{
  TG_RUN (test_hydraulic_lanes_agree);
  return tgtest_result ();
}
