/* Tests for texture.splat, texture.biome, texture.colorize,
 * texture.layer_colors, texture.hillshade and texture.normals: the
 * priority rule's exact weights, weights summing to 1 at every sample of
 * noisy inputs, channel names, the seed's swamp / snow rules, ramp colours
 * at and between stops, layer colours blended by weight, Lambert shading
 * of tilted planes, the normal of a plane in both conventions,
 * thread-count and tile identity, and errors naming the parameter or
 * port.  Splat breakup: 0 is the plain rule to the bit, the border gets
 * longer with the amount but stays inside the mask's soft edge, weights
 * still sum to 1, any threads and windows.  Colour variation: 0 is the
 * flat blend to the bit, brightness and hue move by the amount asked,
 * its scale is in metres. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgformats/tgformats.h>
#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtest.h"

#define DEG (M_PI / 180.0)

static const char *
fmt (double v)
{
  static char buf[8][64];
  static int k;
  char *b = buf[k++ & 7];

  snprintf (b, 64, "%.17g", v);
  return b;
}

static const float *
px (const TgValue *v, int i, int j)
{
  return tg_value_row (v, j) + (size_t) i * (size_t) v->channels;
}

/* Multi-channel version of same_window. */
static int
same_window_ch (const TgValue *full, const TgValue *win)
{
  size_t ch = (size_t) win->channels;

  if (full->channels != win->channels)
    return 0;
  for (int j = 0; j < win->region.height; j++)
    {
      const float *a = tg_value_row (full, win->region.row0 - full->region.row0 + j)
                       + (size_t) (win->region.col0 - full->region.col0) * ch;
      if (memcmp (a, tg_value_row (win, j), sizeof (float) * ch * (size_t) win->region.width))
        return 0;
    }
  return 1;
}

/* Largest |sum of channels - 1| and smallest channel over V. */
static void
weight_stats (const TgValue *v, double *worst_sum, double *min_w)
{
  *worst_sum = 0.0;
  *min_w = 1.0;
  for (uint64_t k = 0; k < tg_region_samples (&v->region); k++)
    {
      double s = 0.0;
      for (int c = 0; c < v->channels; c++)
        {
          float w = v->data[k * (uint64_t) v->channels + (uint64_t) c];
          s += w;
          *min_w = fmin (*min_w, w);
        }
      *worst_sum = fmax (*worst_sum, fabs (s - 1.0));
    }
}

/* --- texture.splat ------------------------------------------------------------------ */

static void
test_splat_priority_weights (void)
{
  static const struct
  {
    const char *layers;
    double base, a, b;
  } cases[] = {
    /* b above a: b = 0.5, a = 0.6 * (1 - 0.5), base the rest. */
    { "name=a|priority=1; name=b|priority=2", 0.2, 0.3, 0.5 },
    /* a above b. */
    { "name=a|priority=3; name=b|priority=2", 0.2, 0.6, 0.2 },
    /* Equal: the later entry is on top. */
    { "name=a|priority=1; name=b|priority=1", 0.2, 0.3, 0.5 },
  };
  TgGraph *g = new_graph (100, 100, 3);
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  int n, s;

  n = add_node (g, "ma", "gen.constant");
  SET (g, n, "value", "0.6");
  n = add_node (g, "mb", "gen.constant");
  SET (g, n, "value", "0.5");
  s = add_node (g, "splat", "texture.splat");
  SET (g, s, "base_name", "dirt");
  add_link (g, "ma", "height", "splat", "mask1");
  add_link (g, "mb", "height", "splat", "mask2");
  for (int c = 0; c < TG_N_ELEMENTS (cases); c++)
    {
      TgValue *v;
      SET (g, s, "layers", cases[c].layers);
      v = pull (e, g, "splat", &r);
      if (!v)
        continue;
      TG_CHECK_INT_EQ (v->type, TG_TYPE_LAYERS);
      TG_CHECK_INT_EQ (v->channels, 3);
      if (v->channels == 3 && v->channel_names)
        {
          TG_CHECK (strcmp (v->channel_names[0], "dirt") == 0);
          TG_CHECK (strcmp (v->channel_names[1], "a") == 0);
          TG_CHECK (strcmp (v->channel_names[2], "b") == 0);
          TG_CHECK_NEAR (px (v, 1, 1)[0], cases[c].base, 1e-6);
          TG_CHECK_NEAR (px (v, 1, 1)[1], cases[c].a, 1e-6);
          TG_CHECK_NEAR (px (v, 1, 1)[2], cases[c].b, 1e-6);
        }
      tg_value_unref (v);
    }
  /* An entry without a linked mask is an empty layer. */
  SET (g, s, "layers", "name=a; name=b; name=moss|priority=9");
  {
    TgValue *v = pull (e, g, "splat", &r);
    if (v)
      {
        TG_CHECK_INT_EQ (v->channels, 4);
        TG_CHECK (strcmp (v->channel_names[3], "moss") == 0);
        TG_CHECK (px (v, 0, 0)[3] == 0.0f);
        TG_CHECK_NEAR (px (v, 0, 0)[0], 0.2, 1e-6);
        tg_value_unref (v);
      }
  }
  tg_engine_free (e);
  tg_graph_free (g);
}

/* Five noisy masks into a splat: the alpine layer set. */
static TgGraph *
splat5_graph (int res)
{
  static const char *names[] = { "rock", "snow", "scree", "river", "moss" };
  TgGraph *g = new_graph (2000, 2000, res);
  int s = add_node (g, "splat", "texture.splat");

  SET (g, s, "layers", "name=rock|priority=2; name=snow|priority=4; name=scree|priority=1; "
                       "name=river|priority=5; name=moss|priority=0");
  for (int k = 0; k < 5; k++)
    {
      char id[16], port[16];
      int n;
      snprintf (id, sizeof id, "n_%s", names[k]);
      snprintf (port, sizeof port, "mask%d", k + 1);
      n = add_node (g, id, "noise.fbm");
      SET (g, n, "seed", fmt (k + 1));
      SET (g, n, "scale_m", "300");
      add_link (g, id, "height", "splat", port);
    }
  return g;
}

static void
test_splat_sums_to_one_everywhere (void)
{
  TgGraph *g = splat5_graph (257);
  TgEngine *e1 = new_engine (1), *e3 = new_engine (3);
  TgRegion r = world_region (g), win = tg_region_window (&r, 17, 190, 100, 50);
  TgValue *a = pull (e1, g, "splat", &r), *b = pull (e3, g, "splat", &r), *w;
  double worst, min_w;

  if (a)
    {
      weight_stats (a, &worst, &min_w);
      TG_CHECK_INT_EQ (a->channels, 6);
      TG_CHECK_MSG (worst < 1e-6, "weights sum off 1 by %g", worst);
      TG_CHECK (min_w >= 0.0);
    }
  if (a && b)
    TG_CHECK (memcmp (a->data, b->data, sizeof (float) * 6 * tg_region_samples (&r)) == 0);
  w = pull (e3, g, "splat", &win);
  if (a && w)
    TG_CHECK (same_window_ch (a, w));
  if (a)
    tg_value_unref (a);
  if (b)
    tg_value_unref (b);
  if (w)
    tg_value_unref (w);
  tg_engine_free (e1);
  tg_engine_free (e3);
  tg_graph_free (g);
}

static void
test_splat_errors (void)
{
  TgGraph *g = splat5_graph (17);
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgError err = { 0 };
  int s = tg_graph_find_node (g, "splat");

  /* mask5 linked, but only four entries. */
  SET (g, s, "layers", "name=a; name=b; name=c; name=d");
  TG_CHECK (pull_err (e, g, "splat", &r, &err) == NULL);
  TG_CHECK_STR_CONTAINS (err.message, "mask5");
  TG_CHECK_STR_CONTAINS (err.node_id, "splat");
  /* Validation says so, at the list, before anything is computed. */
  memset (&err, 0, sizeof err);
  TG_CHECK_INT_EQ (tg_graph_validate (g, &err), TG_EINVAL);
  TG_CHECK_STR_CONTAINS (err.path, "params.layers");
  TG_CHECK_STR_CONTAINS (err.message, "input 'mask5' is linked but params.layers has 4 entries");
  /* Duplicate and unusable names name the entry. */
  TG_CHECK (set_param (g, s, "layers", "name=a; name=b; name=c; name=d; name=a") == 0);
  memset (&err, 0, sizeof err);
  TG_CHECK (tg_graph_validate (g, &err) < 0);
  TG_CHECK_STR_CONTAINS (err.path, "params.layers[4].name");
  TG_CHECK_STR_CONTAINS (err.message, "layers[0]");
  SET (g, s, "layers", "name=a; name=b; name=c; name=d; name=grass");
  memset (&err, 0, sizeof err);
  TG_CHECK (tg_graph_validate (g, &err) < 0);
  TG_CHECK_STR_CONTAINS (err.message, "base layer");
  SET (g, s, "layers", "name=a; name=b; name=c; name=d; name=../x");
  memset (&err, 0, sizeof err);
  TG_CHECK (pull_err (e, g, "splat", &r, &err) == NULL);
  TG_CHECK_STR_CONTAINS (err.path, "params.layers[4].name");
  TG_CHECK (set_param (g, s, "layers", "a;b;c;d;e;f;g;h;i") < 0);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_layer_colors (void)
{
  /* Weights base 0.2, a 0.3, b 0.5 (see above) coloured red, green, blue. */
  TgGraph *g = new_graph (100, 100, 3);
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgError err = { 0 };
  TgValue *v;
  int n, s, lc;

  n = add_node (g, "ma", "gen.constant");
  SET (g, n, "value", "0.6");
  n = add_node (g, "mb", "gen.constant");
  SET (g, n, "value", "0.5");
  s = add_node (g, "splat", "texture.splat");
  SET (g, s, "base_name", "dirt");
  SET (g, s, "layers", "name=a|priority=1; name=b|priority=2");
  add_link (g, "ma", "height", "splat", "mask1");
  add_link (g, "mb", "height", "splat", "mask2");
  lc = add_node (g, "col", "texture.layer_colors");
  SET (g, lc, "colors", "name=b|color=#0000ff; name=dirt|color=#ff000080; name=a|color=#00ff00");
  add_link (g, "splat", "layers", "col", "layers");
  v = pull (e, g, "col", &r);
  if (v)
    {
      TG_CHECK_INT_EQ (v->channels, 4);
      TG_CHECK_NEAR (px (v, 1, 1)[0], 0.2, 1e-6);
      TG_CHECK_NEAR (px (v, 1, 1)[1], 0.3, 1e-6);
      TG_CHECK_NEAR (px (v, 1, 1)[2], 0.5, 1e-6);
      TG_CHECK_NEAR (px (v, 1, 1)[3], 0.2 * 128 / 255.0 + 0.8, 1e-6);
      tg_value_unref (v);
    }
  /* A layer without a colour fails with its name. */
  SET (g, lc, "colors", "name=b|color=#0000ff; name=dirt|color=#ff0000");
  TG_CHECK (pull_err (e, g, "col", &r, &err) == NULL);
  TG_CHECK_STR_CONTAINS (err.message, "no colour for layer \"a\"");
  tg_engine_free (e);
  tg_graph_free (g);
}

/* --- splat breakup ------------------------------------------------------------------ */

/* The plain layering rule, as texture.splat computes it in float, over
 * the masks of splat5_graph pulled one by one (priority order: river,
 * snow, rock, scree, moss = entries 3, 1, 0, 2, 4). */
static int
splat_matches_plain_rule (TgEngine *e, TgGraph *g, const TgValue *v)
{
  static const char *ids[] = { "n_rock", "n_snow", "n_scree", "n_river", "n_moss" };
  static const int order[] = { 3, 1, 0, 2, 4 };
  TgValue *m[5];
  int ok = 1;

  for (int k = 0; k < 5; k++)
    m[k] = pull (e, g, ids[k], &v->region);
  for (uint64_t s = 0; s < tg_region_samples (&v->region) && ok; s++)
    {
      const float *w = v->data + s * 6;
      float cover = 1.0f;
      for (int o = 0; o < 5 && m[order[o]]; o++)
        {
          int k = order[o];
          float x = m[k]->data[s], mv = x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f;
          float wk = mv * cover;
          ok &= memcmp (&w[1 + k], &wk, sizeof wk) == 0;
          cover -= wk;
        }
      ok &= memcmp (&w[0], &cover, sizeof cover) == 0;
    }
  for (int k = 0; k < 5; k++)
    if (m[k])
      tg_value_unref (m[k]);
  return ok;
}

static void
test_splat_breakup_zero_is_plain (void)
{
  TgGraph *g = splat5_graph (129);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  int s = tg_graph_find_node (g, "splat");
  TgValue *v;

  /* Any scale: with breakup 0 nothing of the noise is read. */
  SET (g, s, "layers",
       "name=rock|priority=2|breakup=0|breakup_scale_m=7; name=snow|priority=4|breakup=0; "
       "name=scree|priority=1|breakup_scale_m=900; name=river|priority=5; name=moss|priority=0");
  v = pull (e, g, "splat", &r);
  if (v)
    {
      TG_CHECK_MSG (splat_matches_plain_rule (e, g, v), "breakup 0 is not the plain rule");
      tg_value_unref (v);
    }
  /* And a layer with breakup is not. */
  SET (g, s, "layers",
       "name=rock|priority=2|breakup=0.5; name=snow|priority=4; name=scree|priority=1; "
       "name=river|priority=5; name=moss|priority=0");
  v = pull (e, g, "splat", &r);
  if (v)
    {
      TG_CHECK (!splat_matches_plain_rule (e, g, v));
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_splat_breakup_sums_threads_windows (void)
{
  /* 600 samples a row: more than one block of the row kernel, and
   * windows whose blocks start elsewhere than the whole map's. */
  TgGraph *g = splat5_graph (600);
  TgEngine *e1 = new_engine (1), *e3 = new_engine (3);
  TgRegion r = world_region (g);
  int s = tg_graph_find_node (g, "splat");
  TgValue *a, *b;
  double worst, min_w;

  SET (g, s, "layers",
       "name=rock|priority=2|breakup=1|breakup_scale_m=45; "
       "name=snow|priority=4|breakup=0.7|breakup_scale_m=120; "
       "name=scree|priority=1|breakup=0.3|breakup_scale_m=9; name=river|priority=5; "
       "name=moss|priority=0|breakup=0.5");
  a = pull (e1, g, "splat", &r);
  b = pull (e3, g, "splat", &r);
  if (a)
    {
      weight_stats (a, &worst, &min_w);
      TG_CHECK_MSG (worst < 1e-6, "weights sum off 1 by %g", worst);
      TG_CHECK (min_w >= 0.0);
    }
  if (a && b)
    TG_CHECK (memcmp (a->data, b->data, sizeof (float) * 6 * tg_region_samples (&r)) == 0);
  for (int k = 0; k < 3 && a; k++)
    {
      static const int win[3][4] = { { 17, 190, 100, 50 }, { 3, 0, 597, 7 },
                                     { 300, 411, 291, 33 } };
      TgRegion wr = tg_region_window (&r, win[k][0], win[k][1], win[k][2], win[k][3]);
      TgValue *w = pull (e3, g, "splat", &wr);
      if (w)
        {
          TG_CHECK_MSG (same_window_ch (a, w), "window %d differs", k);
          tg_value_unref (w);
        }
    }
  if (a)
    tg_value_unref (a);
  if (b)
    tg_value_unref (b);
  tg_engine_free (e1);
  tg_engine_free (e3);
  tg_graph_free (g);
}

typedef struct
{
  long border;   /* neighbouring pairs on either side of weight 0.5 */
  long moved;    /* samples on the other side of 0.5 than the mask */
  long changed_outside; /* samples where the mask is 0 or 1 and the weight is not */
  long band;     /* samples inside the mask's soft edge */
} BorderStats;

/* Layer 1 of V against the mask M it was painted from. */
static BorderStats
border_stats (const TgValue *v, const TgValue *m)
{
  const TgRegion *r = &v->region;
  BorderStats st = { 0 };

  for (int j = 0; j < r->height; j++)
    for (int i = 0; i < r->width; i++)
      {
        float w = px (v, i, j)[1], x = at (m, i, j);
        bool in = w >= 0.5f;
        if (i + 1 < r->width)
          st.border += in != (px (v, i + 1, j)[1] >= 0.5f);
        if (j + 1 < r->height)
          st.border += in != (px (v, i, j + 1)[1] >= 0.5f);
        st.moved += in != (x >= 0.5f);
        if (x <= 0.0f || x >= 1.0f)
          st.changed_outside += w != (x <= 0.0f ? 0.0f : 1.0f);
        else
          st.band++;
      }
  return st;
}

static void
test_splat_breakup_moves_the_border (void)
{
  static const double amounts[] = { 0.0, 0.3, 1.0 };
  /* A straight soft edge 400 m wide across a 4 km world at 5 m. */
  TgGraph *g = new_graph (4000, 4000, 801);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *m;
  long border[3] = { 0 };
  int n, s;

  add_node (g, "ramp", "gen.gradient");
  n = add_node (g, "edge", "select.height");
  SET (g, n, "min_height", "0.5");
  SET (g, n, "falloff", "0.1");
  add_link (g, "ramp", "height", "edge", "height");
  s = add_node (g, "splat", "texture.splat");
  add_link (g, "edge", "mask", "splat", "mask1");
  m = pull (e, g, "edge", &r);
  for (int a = 0; a < 3 && m; a++)
    {
      char layers[128];
      TgValue *v;
      BorderStats st;
      snprintf (layers, sizeof layers, "name=scree|breakup=%s|breakup_scale_m=150",
                fmt (amounts[a]));
      SET (g, s, "layers", layers);
      v = pull (e, g, "splat", &r);
      if (!v)
        continue;
      st = border_stats (v, m);
      border[a] = st.border;
      printf ("  breakup %.1f: border %ld pairs (straight: 801), %ld of %ld samples of the soft "
              "edge changed side\n", amounts[a], st.border, st.moved, st.band);
      /* Outside the soft edge the layer is what the mask says, exactly:
       * no islands in the open, no holes inside. */
      TG_CHECK_INT_EQ (st.changed_outside, 0);
      TG_CHECK (st.band > 801 * 60);
      if (a == 0)
        {
          TG_CHECK_INT_EQ (st.moved, 0);
          TG_CHECK (st.border >= 801 && st.border <= 801 + 10);
        }
      else if (a == 2)
        {
          /* The border wanders: a fifth of the soft edge changed side
           * (23 % when written) and the line is several times longer
           * than straight (6.3 times). */
          TG_CHECK_MSG (st.moved > st.band / 5, "only %ld of %ld moved", st.moved, st.band);
          TG_CHECK_MSG (st.border > 3 * 801, "border %ld pairs", st.border);
        }
      tg_value_unref (v);
    }
  TG_CHECK (border[0] < border[1] && border[1] < border[2]);
  if (m)
    tg_value_unref (m);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_splat_breakup_warns_below_two_cells (void)
{
  TgGraph *g = splat5_graph (129); /* 2000 m over 128 cells: 15.6 m */
  TgError warn = { 0 };
  int s = tg_graph_find_node (g, "splat");

  SET (g, s, "layers", "name=rock|breakup_scale_m=10; name=snow; name=scree; name=river; "
                       "name=moss");
  TG_CHECK_INT_EQ (tg_graph_node_warning (g, s, &warn), 0);
  SET (g, s, "layers", "name=rock; name=snow|breakup=0.5|breakup_scale_m=10; name=scree; "
                       "name=river; name=moss");
  TG_CHECK_INT_EQ (tg_graph_node_warning (g, s, &warn), 1);
  TG_CHECK_STR_CONTAINS (warn.path, "params.layers[1].breakup_scale_m");
  TG_CHECK_STR_CONTAINS (warn.message, "Breakup scale 10 m is smaller than two cells");
  tg_graph_free (g);
}

/* --- colour variation ------------------------------------------------------------- */

/* One layer everywhere (a splat with nothing linked: all base), coloured
 * with COLORS. */
static TgGraph *
one_layer_graph (double size_m, int res, const char *colors)
{
  TgGraph *g = new_graph (size_m, size_m, res);
  int s = add_node (g, "splat", "texture.splat"), c;

  SET (g, s, "base_name", "grass");
  SET (g, s, "layers", "");
  c = add_node (g, "col", "texture.layer_colors");
  SET (g, c, "colors", colors);
  add_link (g, "splat", "layers", "col", "layers");
  return g;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static void
test_layer_colors_variation_zero_is_flat (void)
{
  TgGraph *g = splat5_graph (129);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *w, *v;
  int c = add_node (g, "col", "texture.layer_colors");

  /* Every layer but moss has a colour with variation 0 or none given. */
  SET (g, c, "colors",
       "name=grass|color=#597a33|variation=0|variation_scale_m=3; name=rock|color=#78736b; "
       "name=snow|color=#eef0f5|variation=0; name=scree|color=#998c8080; "
       "name=river|color=#334d66; name=moss|color=#4d804d|variation_scale_m=500");
  add_link (g, "splat", "layers", "col", "layers");
  w = pull (e, g, "splat", &r);
  v = pull (e, g, "col", &r);
  if (w && v)
    {
      static const char *hex[6] = { "597a33ff", "78736bff", "eef0f5ff", "998c8080", "334d66ff",
                                    "4d804dff" };
      float col[6][4];
      int ok = 1;
      for (int k = 0; k < 6; k++)
        for (int q = 0; q < 4; q++)
          {
            unsigned x;
            sscanf (hex[k] + 2 * q, "%2x", &x);
            col[k][q] = (float) (x / 255.0);
          }
      for (uint64_t s = 0; s < tg_region_samples (&r) && ok; s++)
        {
          float acc[4] = { 0, 0, 0, 0 };
          for (int k = 0; k < 6; k++)
            for (int q = 0; q < 4; q++)
              acc[q] += w->data[s * 6 + (uint64_t) k] * col[k][q];
          ok &= memcmp (acc, v->data + s * 4, sizeof acc) == 0;
        }
      TG_CHECK_MSG (ok, "variation 0 is not the flat blend");
    }
  if (w)
    tg_value_unref (w);
  if (v)
    tg_value_unref (v);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_layer_colors_variation_amount (void)
{
  /* #5a7a34: r 0.353, g 0.478, b 0.204; mean 0.345. */
  static const double c0[3] = { 0x5a / 255.0, 0x7a / 255.0, 0x34 / 255.0 };
  static const double amounts[] = { 0.1, 0.3 };
  double mean0 = (c0[0] + c0[1] + c0[2]) / 3.0;

  for (int a = 0; a < 2; a++)
    {
      char colors[128];
      TgGraph *g;
      TgEngine *e1 = new_engine (1), *e3 = new_engine (3);
      TgRegion r;
      TgValue *v, *v3;
      snprintf (colors, sizeof colors, "name=grass|color=#5a7a34|variation=%s|variation_scale_m=80",
                fmt (amounts[a]));
      g = one_layer_graph (8000, 401, colors); /* 20 m cells, 100 features across */
      r = world_region (g);
      v = pull (e1, g, "col", &r);
      v3 = pull (e3, g, "col", &r);
      if (v && v3)
        TG_CHECK (memcmp (v->data, v3->data, sizeof (float) * 4 * tg_region_samples (&r)) == 0);
      if (v)
        {
          uint64_t n = tg_region_samples (&r);
          double *bright = malloc (sizeof (double) * n), *hue = malloc (sizeof (double) * n);
          double max_b = 0.0, max_h = 0.0, sum_b = 0.0, sum_bb = 0.0, sd;
          uint64_t clamped = 0;
          int alpha_ok = 1;
          for (uint64_t s = 0; s < n; s++)
            {
              const float *p = v->data + s * 4;
              double m = ((double) p[0] + p[1] + p[2]) / 3.0, dot = 0.0, n0 = 0.0, n1 = 0.0;
              /* Brightness: the mean of RGB against the flat colour's;
               * hue: the angle of the chroma vector (RGB - mean). */
              bright[s] = m / mean0 - 1.0;
              for (int q = 0; q < 3; q++)
                {
                  double x0 = c0[q] - mean0, x1 = p[q] - m;
                  dot += x0 * x1;
                  n0 += x0 * x0;
                  n1 += x1 * x1;
                }
              hue[s] = acos (fmin (1.0, dot / sqrt (n0 * n1))) / DEG;
              max_b = fmax (max_b, fabs (bright[s]));
              max_h = fmax (max_h, hue[s]);
              sum_b += bright[s];
              sum_bb += bright[s] * bright[s];
              clamped += fabs (bright[s]) > amounts[a] * 0.9999;
              alpha_ok &= p[3] == 1.0f;
            }
          qsort (bright, n, sizeof (double), cmp_double);
          qsort (hue, n, sizeof (double), cmp_double);
          sd = sqrt (sum_bb / (double) n - (sum_b / (double) n) * (sum_b / (double) n));
          printf ("  variation %.1f: brightness %+.3f .. %+.3f (5th / 95th %%: %+.3f %+.3f, mean "
                  "%+.4f, sd %.3f, %.1f %% at the limit), hue up to %.2f deg (95th %%: %.2f)\n",
                  amounts[a], bright[0], bright[n - 1], bright[n / 20], bright[n - n / 20],
                  sum_b / (double) n, sd, 100.0 * (double) clamped / (double) n, max_h,
                  hue[n - n / 20]);
          /* Brightness reaches -+amount at the 1st / 99th percentiles
           * (within a tenth of it; the noise is at its limit on 2.7 % of
           * this world) and never passes it; the hue turns up to 45
           * degrees times the amount. */
          TG_CHECK_NEAR (bright[n / 100], -amounts[a], 0.1 * amounts[a]);
          TG_CHECK_NEAR (bright[n - n / 100], amounts[a], 0.1 * amounts[a]);
          TG_CHECK (max_b <= amounts[a] + 1e-5);
          TG_CHECK (fabs (sum_b / (double) n) < 0.1 * amounts[a]);
          /* 0.185 * 2.5 (TEX_NOISE_GAIN) of it as a standard deviation. */
          TG_CHECK_NEAR (sd, 0.46 * amounts[a], 0.05 * amounts[a]);
          TG_CHECK (max_h <= 45.0 * amounts[a] + 0.01);
          TG_CHECK_NEAR (hue[n - n / 100], 45.0 * amounts[a], 4.5 * amounts[a]);
          TG_CHECK (alpha_ok);
          free (bright);
          free (hue);
          /* A tile is the window of the whole. */
          {
            TgRegion wr = tg_region_window (&r, 33, 101, 190, 27);
            TgValue *w = pull (e3, g, "col", &wr);
            if (w)
              {
                TG_CHECK (same_window_ch (v, w));
                tg_value_unref (w);
              }
          }
        }
      if (v)
        tg_value_unref (v);
      if (v3)
        tg_value_unref (v3);
      tg_engine_free (e1);
      tg_engine_free (e3);
      tg_graph_free (g);
    }
}

/* The scale is in metres: a world twice the size with twice the scale,
 * at the same resolution, is the same picture. */
static void
test_layer_colors_variation_scale_in_metres (void)
{
  TgGraph *g1 = one_layer_graph (2000, 257, "name=grass|color=#5a7a34|variation=0.4|"
                                            "variation_scale_m=50");
  TgGraph *g2 = one_layer_graph (4000, 257, "name=grass|color=#5a7a34|variation=0.4|"
                                            "variation_scale_m=100");
  TgGraph *g3 = one_layer_graph (4000, 257, "name=grass|color=#5a7a34|variation=0.4|"
                                            "variation_scale_m=50");
  TgEngine *e = new_engine (2);
  TgRegion r1 = world_region (g1), r2 = world_region (g2), r3 = world_region (g3);
  TgValue *a = pull (e, g1, "col", &r1), *b = pull (e, g2, "col", &r2), *c = pull (e, g3, "col", &r3);
  size_t bytes = sizeof (float) * 4 * tg_region_samples (&r1);

  if (a && b && c)
    {
      TG_CHECK (memcmp (a->data, b->data, bytes) == 0);
      TG_CHECK (memcmp (a->data, c->data, bytes) != 0);
    }
  if (a)
    tg_value_unref (a);
  if (b)
    tg_value_unref (b);
  if (c)
    tg_value_unref (c);
  tg_engine_free (e);
  tg_graph_free (g1);
  tg_graph_free (g2);
  tg_graph_free (g3);
}

/* --- texture.biome -------------------------------------------------------------------- */

/* The seed's example: swamp = low and wet, snow = high and cold (the
 * node's default rules), on constant inputs. */
static void
test_biome_swamp_and_snow (void)
{
  static const struct
  {
    double height, moisture;
    int heat_linked;
    double heat;
    const char *want; /* layer with all the weight, or NULL */
  } cases[] = {
    { 0.1, 0.9, 0, 0, "swamp" },
    { 0.1, 0.3, 0, 0, "grassland" },      /* low but dry */
    { 0.9, 0.5, 0, 0, "snow" },            /* unlinked heat = 1 - height = 0.1 */
    { 0.9, 0.5, 1, 0.8, "grassland" },     /* high but hot */
    { 0.45, 0.1, 1, 0.9, "desert" },
    { 0.45, 0.5, 0, 0, "grassland" },
  };
  static const double colors[4][3] = {
    { 0.36, 0.5, 0.22 },                            /* grassland (default) */
    { 0x4b / 255.0, 0x5a / 255.0, 0x36 / 255.0 },   /* swamp */
    { 0xee / 255.0, 0xf2 / 255.0, 0xf6 / 255.0 },   /* snow */
    { 0xd2 / 255.0, 0xbc / 255.0, 0x84 / 255.0 },   /* desert */
  };

  for (int c = 0; c < TG_N_ELEMENTS (cases); c++)
    {
      TgGraph *g = new_graph (100, 100, 3);
      TgEngine *e = new_engine (1);
      TgRegion r = world_region (g);
      TgValue *l, *img;
      int n;

      n = add_node (g, "h", "gen.constant");
      SET (g, n, "value", fmt (cases[c].height));
      n = add_node (g, "m", "gen.constant");
      SET (g, n, "value", fmt (cases[c].moisture));
      n = add_node (g, "t", "gen.constant");
      SET (g, n, "value", fmt (cases[c].heat));
      add_node (g, "biome", "texture.biome");
      add_link (g, "h", "height", "biome", "height");
      add_link (g, "m", "height", "biome", "moisture");
      if (cases[c].heat_linked)
        add_link (g, "t", "height", "biome", "heat");
      l = pull_port (e, g, "biome", 0, &r);
      img = pull_port (e, g, "biome", 1, &r);
      if (l && img)
        {
          TG_CHECK_INT_EQ (l->channels, 4);
          TG_CHECK_INT_EQ (img->channels, 4);
          TG_CHECK_INT_EQ (img->type, TG_TYPE_IMAGE);
          for (int k = 0; k < 4; k++)
            if (strcmp (l->channel_names[k], cases[c].want) == 0)
              {
                TG_CHECK_MSG (px (l, 1, 1)[k] == 1.0f, "case %d: %s weight %g", c,
                              cases[c].want, px (l, 1, 1)[k]);
                for (int q = 0; q < 3; q++)
                  TG_CHECK_NEAR (px (img, 1, 1)[q], colors[k][q], 1e-6);
                TG_CHECK (px (img, 1, 1)[3] == 1.0f);
              }
        }
      if (l)
        tg_value_unref (l);
      if (img)
        tg_value_unref (img);
      tg_engine_free (e);
      tg_graph_free (g);
    }
}

static void
test_biome_blend_and_sum (void)
{
  TgGraph *g = new_graph (2000, 2000, 129);
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *l, *img;
  int n;

  n = add_node (g, "h", "noise.fbm");
  SET (g, n, "scale_m", "700");
  n = add_node (g, "m", "noise.fbm");
  SET (g, n, "seed", "2");
  n = add_node (g, "t", "noise.fbm");
  SET (g, n, "seed", "3");
  n = add_node (g, "biome", "texture.biome");
  SET (g, n, "rules", "name=swamp|max_height=0.4|min_moisture=0.5|blend=0.1; "
                      "name=snow|min_height=0.55|max_heat=0.5|blend=0.1; "
                      "name=forest|color=#204010|min_moisture=0.45");
  add_link (g, "h", "height", "biome", "height");
  add_link (g, "m", "height", "biome", "moisture");
  add_link (g, "t", "height", "biome", "heat");
  l = pull_port (e, g, "biome", 0, &r);
  img = pull_port (e, g, "biome", 1, &r);
  if (l && img)
    {
      double worst, min_w;
      int blended = 0, bad_color = 0;
      weight_stats (l, &worst, &min_w);
      TG_CHECK_MSG (worst < 1e-6, "weights sum off 1 by %g", worst);
      TG_CHECK (min_w >= 0.0);
      /* Soft edges exist, and the colour is the weighted sum of colours
       * (swamp and snow grey 0.5, forest, the default). */
      for (uint64_t k = 0; k < tg_region_samples (&r); k++)
        {
          const float *w = l->data + 4 * k, *c = img->data + 4 * k;
          double want_g = w[0] * 0.5 + w[1] * 0.5 + w[2] * 0.5 + w[3] * (0x40 / 255.0);
          blended += w[1] > 0.05f && w[1] < 0.95f;
          bad_color += fabs (c[1] - want_g) > 1e-5;
        }
      TG_CHECK (blended > 50);
      TG_CHECK_INT_EQ (bad_color, 0);
    }
  if (l)
    tg_value_unref (l);
  if (img)
    tg_value_unref (img);

  /* Errors name the rule and the field. */
  {
    TgError err = { 0 };
    SET (g, n, "rules", "name=a; name=b|min_heat=0.7|max_heat=0.2");
    TG_CHECK (tg_graph_validate (g, &err) < 0);
    TG_CHECK_STR_CONTAINS (err.path, "params.rules[1].max_heat");
    TG_CHECK_STR_CONTAINS (err.message, "below min_heat");
    TG_CHECK (set_param (g, n, "rules", "name=a|min_height=2") < 0);
  }
  tg_engine_free (e);
  tg_graph_free (g);
}

/* --- texture.colorize ----------------------------------------------------------------- */

static void
test_colorize_ramp (void)
{
  /* 9 samples: the ramp is i / 8. */
  TgGraph *g = new_graph (800, 100, 9);
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgValue *v;
  int n;

  add_node (g, "ramp", "gen.gradient");
  n = add_node (g, "col", "texture.colorize");
  add_link (g, "ramp", "height", "col", "height");
  /* Black to white, with a hard red band from 0.5 to 0.75 and alpha
   * fading in. */
  SET (g, n, "stops", "position=0|color=#00000000; position=0.5|color=#808080ff; "
                      "position=0.5|color=#ff0000ff; position=0.75|color=#ff0000ff; "
                      "position=1|color=#ffffffff");
  v = pull (e, g, "col", &r);
  if (v)
    {
      TG_CHECK_INT_EQ (v->channels, 4);
      TG_CHECK (px (v, 0, 0)[0] == 0.0f && px (v, 0, 0)[3] == 0.0f);
      /* 0.25: halfway to grey 128/255, alpha half. */
      TG_CHECK_NEAR (px (v, 2, 0)[0], 0.5 * 128 / 255.0, 1e-6);
      TG_CHECK_NEAR (px (v, 2, 0)[3], 0.5, 1e-6);
      /* At 0.5 exactly the later stop wins: red. */
      TG_CHECK (px (v, 4, 0)[0] == 1.0f && px (v, 4, 0)[1] == 0.0f);
      TG_CHECK (px (v, 5, 0)[0] == 1.0f && px (v, 5, 0)[1] == 0.0f);
      TG_CHECK_NEAR (px (v, 7, 0)[1], 0.5, 1e-6);
      TG_CHECK (px (v, 8, 0)[1] == 1.0f);
      tg_value_unref (v);
    }
  /* The input range: 0.25 .. 0.75 spans the ramp; outside it is flat. */
  SET (g, n, "stops", "position=0|color=#000000; position=1|color=#ffffff");
  SET (g, n, "min_input", "0.25");
  SET (g, n, "max_input", "0.75");
  v = pull (e, g, "col", &r);
  if (v)
    {
      TG_CHECK (px (v, 1, 0)[0] == 0.0f);
      TG_CHECK (px (v, 2, 0)[0] == 0.0f);
      TG_CHECK (px (v, 4, 0)[0] == 0.5f);
      TG_CHECK (px (v, 6, 0)[0] == 1.0f);
      TG_CHECK (px (v, 8, 0)[2] == 1.0f);
      TG_CHECK (px (v, 8, 0)[3] == 1.0f);
      tg_value_unref (v);
    }
  /* A shade input multiplies RGB, not alpha. */
  n = add_node (g, "half", "gen.constant");
  add_link (g, "half", "height", "col", "shade");
  v = pull (e, g, "col", &r);
  if (v)
    {
      TG_CHECK (px (v, 8, 0)[0] == 0.5f && px (v, 8, 0)[3] == 1.0f);
      tg_value_unref (v);
    }
  /* Stops out of order: the error names the stop. */
  {
    TgError err = { 0 };
    SET (g, tg_graph_find_node (g, "col"), "stops", "position=0.5; position=0.2");
    TG_CHECK (tg_graph_validate (g, &err) < 0);
    TG_CHECK_STR_CONTAINS (err.path, "params.stops[1].position");
    TG_CHECK (set_param (g, tg_graph_find_node (g, "col"), "stops", "") < 0);
  }
  tg_engine_free (e);
  tg_graph_free (g);
}

/* --- texture.hillshade and texture.normals -------------------------------------------- */

/* A plane rising towards ANGLE (gen.gradient: ccw from east) at SLOPE. */
static TgGraph *
plane_graph (double angle, double slope_deg)
{
  TgGraph *g = new_graph (1000, 1000, 33);
  int n = add_node (g, "plane", "gen.gradient");

  SET (g, n, "angle_deg", fmt (angle));
  tg_graph_world (g)->height_m = 1000 * tan (slope_deg * DEG);
  if (slope_deg == 0.0)
    {
      tg_graph_world (g)->height_m = 100;
      SET (g, n, "from", "0.5");
      SET (g, n, "to", "0.5");
    }
  return g;
}

static double
interior_max_err (const TgValue *v, int c, double want)
{
  double worst = 0.0;

  for (int j = 2; j < v->region.height - 2; j++)
    for (int i = 2; i < v->region.width - 2; i++)
      worst = fmax (worst, fabs (px (v, i, j)[c] - want));
  return worst;
}

static void
test_hillshade_planes (void)
{
  static const struct
  {
    double rise, slope, az, el, ambient, want;
  } cases[] = {
    { 0.0, 0.0, 315.0, 45.0, 0.0, 0.70710678 },   /* flat: sin (elevation) */
    { 0.0, 20.0, 270.0, 30.0, 0.0, 0.76604444 },  /* faces west, sun in the west: sin 50 */
    { 0.0, 20.0, 90.0, 30.0, 0.0, 0.17364818 },   /* sun behind it: sin 10 */
    { 0.0, 50.0, 90.0, 30.0, 0.0, 0.0 },          /* in its own shadow */
    { 90.0, 30.0, 180.0, 60.0, 0.0, 1.0 },        /* faces south, sun south at 60 */
    { 0.0, 50.0, 90.0, 30.0, 0.3, 0.3 },          /* in its shadow, lit by the sky */
    { 0.0, 20.0, 90.0, 30.0, 0.3, 0.42155373 },   /* 0.3 + 0.7 sin 10 */
    { 90.0, 30.0, 180.0, 60.0, 0.3, 1.0 },        /* full sun stays 1 */
  };

  for (int c = 0; c < TG_N_ELEMENTS (cases); c++)
    {
      TgGraph *g = plane_graph (cases[c].rise, cases[c].slope);
      TgEngine *e = new_engine (2);
      TgRegion r = world_region (g);
      TgValue *v;
      int n = add_node (g, "hs", "texture.hillshade");

      SET (g, n, "azimuth_deg", fmt (cases[c].az));
      SET (g, n, "elevation_deg", fmt (cases[c].el));
      SET (g, n, "ambient", fmt (cases[c].ambient));
      add_link (g, "plane", "height", "hs", "height");
      v = pull (e, g, "hs", &r);
      if (v)
        {
          double err = interior_max_err (v, 0, cases[c].want);
          TG_CHECK_MSG (err < 2e-5, "case %d: off by %g", c, err);
          tg_value_unref (v);
        }
      tg_engine_free (e);
      tg_graph_free (g);
    }
}

static void
test_normals_planes (void)
{
  double s30 = sin (30 * DEG), c30 = cos (30 * DEG);
  static const char *conv[] = { "opengl", "directx" };

  for (int k = 0; k < 2; k++)
    {
      /* Rising east 30 degrees: the normal leans west. */
      TgGraph *g = plane_graph (0.0, 30.0);
      TgEngine *e = new_engine (2);
      TgRegion r = world_region (g);
      TgValue *v;
      int n = add_node (g, "nm", "texture.normals"), p;

      SET (g, n, "convention", conv[k]);
      add_link (g, "plane", "height", "nm", "height");
      v = pull (e, g, "nm", &r);
      if (v)
        {
          TG_CHECK (interior_max_err (v, 0, 0.5 - 0.5 * s30) < 1e-6);
          TG_CHECK (interior_max_err (v, 1, 0.5) < 1e-6);
          TG_CHECK (interior_max_err (v, 2, 0.5 + 0.5 * c30) < 1e-6);
          TG_CHECK (interior_max_err (v, 3, 1.0) == 0.0);
          tg_value_unref (v);
        }
      /* Rising north: the normal leans south, which is green down in
       * OpenGL (+Y = north) and green up in DirectX. */
      p = tg_graph_find_node (g, "plane");
      SET (g, p, "angle_deg", "90");
      v = pull (e, g, "nm", &r);
      if (v)
        {
          double want = k == 0 ? 0.5 - 0.5 * s30 : 0.5 + 0.5 * s30;
          TG_CHECK_MSG (interior_max_err (v, 1, want) < 1e-6, "%s green %g", conv[k],
                        px (v, 5, 5)[1]);
          TG_CHECK (interior_max_err (v, 0, 0.5) < 1e-6);
          tg_value_unref (v);
        }
      tg_engine_free (e);
      tg_graph_free (g);
    }
}

static void
test_shading_threads_and_tiles (void)
{
  static const char *types[] = { "texture.hillshade", "texture.normals", "texture.colorize" };

  for (int t = 0; t < 3; t++)
    {
      TgGraph *g = new_graph (3000, 2000, 181);
      TgEngine *e1 = new_engine (1), *e3 = new_engine (3);
      TgRegion r = world_region (g);
      TgValue *a, *b;
      int n = add_node (g, "noise", "noise.fbm");

      SET (g, n, "scale_m", "600");
      add_node (g, "f", types[t]);
      add_link (g, "noise", "height", "f", "height");
      a = pull (e1, g, "f", &r);
      b = pull (e3, g, "f", &r);
      if (a && b)
        TG_CHECK (memcmp (a->data, b->data,
                          sizeof (float) * (size_t) a->channels * tg_region_samples (&r)) == 0);
      for (int k = 0; k < 2 && a; k++)
        {
          TgRegion win = k == 0 ? tg_region_window (&r, 0, 0, 33, 47)
                                : tg_region_window (&r, 120, 80, 61, 41);
          TgValue *w = pull (e3, g, "f", &win);
          if (w)
            {
              TG_CHECK_MSG (same_window_ch (a, w), "%s: tile %d differs", types[t], k);
              tg_value_unref (w);
            }
        }
      if (a)
        {
          int out = 0;
          for (uint64_t k = 0; k < (uint64_t) a->channels * tg_region_samples (&r); k++)
            out += !(a->data[k] >= 0.0f && a->data[k] <= 1.0f);
          TG_CHECK_INT_EQ (out, 0);
          tg_value_unref (a);
        }
      if (b)
        tg_value_unref (b);
      tg_engine_free (e1);
      tg_engine_free (e3);
      tg_graph_free (g);
    }
}

int
main (void)
{
  if (tg_formats_init () != 0)
    return 1;
  TG_RUN (test_splat_priority_weights);
  TG_RUN (test_splat_sums_to_one_everywhere);
  TG_RUN (test_splat_errors);
  TG_RUN (test_layer_colors);
  TG_RUN (test_splat_breakup_zero_is_plain);
  TG_RUN (test_splat_breakup_sums_threads_windows);
  TG_RUN (test_splat_breakup_moves_the_border);
  TG_RUN (test_splat_breakup_warns_below_two_cells);
  TG_RUN (test_layer_colors_variation_zero_is_flat);
  TG_RUN (test_layer_colors_variation_amount);
  TG_RUN (test_layer_colors_variation_scale_in_metres);
  TG_RUN (test_biome_swamp_and_snow);
  TG_RUN (test_biome_blend_and_sum);
  TG_RUN (test_colorize_ramp);
  TG_RUN (test_hillshade_planes);
  TG_RUN (test_normals_planes);
  TG_RUN (test_shading_threads_and_tiles);
  return tgtest_result ();
}
