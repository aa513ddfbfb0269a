/* Tests that scatter.colormap reads the painted pixels of a distribution
 * map file, as seed 001 maps them (world x, z through the world's box to
 * the image, V flipped, clamped, floored), and not a blend of them: a
 * colour never places outside its pixels, a gradient edge places no
 * other palette entry, each third of a 3-pixel map is covered whole, the
 * instances do not depend on the world's resolution, the blended density
 * of rgb mode is an option that is off by default, and a tiled build
 * gives the whole world's instances. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tgformats/tgformats.h>
#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtest.h"
#include "tgtiled_test.h"

static const char *tmp_dir;
static TgEngine *engine;

static void
write_png8 (const char *name, int w, int h, const uint8_t *rgb)
{
  char path[512];
  TgImage img = { .width = w, .height = h, .channels = 3, .bits = 8, .data = (void *) rgb };
  TgError err = { 0 };
  FILE *f;
  int rc;

  snprintf (path, sizeof path, "%s/%s", tmp_dir, name);
  f = fopen (path, "wb");
  TG_CHECK_MSG (f != NULL, "cannot create %s", path);
  if (!f)
    return;
  rc = tg_png_write (f, &img, &err);
  TG_CHECK_MSG (fclose (f) == 0 && rc == 0, "writing %s: %s", path, err.message);
}

/* A SIZE x SIZE m world at RES samples whose scatter.colormap "sc" reads
 * the file NAME through input.image "map". */
static TgGraph *
file_graph (double size, int res, const char *name)
{
  TgGraph *g = new_graph (size, size, res);

  tg_graph_world (g)->seed = 11;
  tg_graph_set_base_dir (g, tmp_dir);
  SET (g, add_node (g, "map", "input.image"), "path", name);
  add_node (g, "sc", "scatter.colormap");
  add_link (g, "map", "image", "sc", "image");
  return g;
}

static TgValue *
pull_points (TgGraph *g)
{
  TgRegion r = world_region (g);
  TgValue *v = pull (engine, g, "sc", &r);

  TG_CHECK (v != NULL && tg_value_points (v) != NULL);
  return v;
}

/* The pixel of a W x H map over a SIZE m square world under world X, Z,
 * computed here as seed 001 says. */
static int
pixel_of (double x, double z, double size, int w, int h)
{
  int col = (int) floor ((x + 0.5 * size) / size * w);
  int row = (int) floor ((1.0 - (z + 0.5 * size) / size) * h);

  col = col < 0 ? 0 : (col >= w ? w - 1 : col);
  row = row < 0 ? 0 : (row >= h ? h - 1 : row);
  return row * w + col;
}

static int
proto_index (const TgPoints *p, const char *name)
{
  for (int k = 0; k < p->n_protos; k++)
    if (strcmp (p->proto_names[k], name) == 0)
      return k;
  return -1;
}

/* 16 x 16 pixels of red, green, blue and black in a scrambled pattern. */
#define MOSAIC 16
static const uint8_t mosaic_colours[4][3] = { { 255, 0, 0 }, { 0, 255, 0 }, { 0, 0, 255 },
                                              { 0, 0, 0 } };
static const char *const mosaic_protos[4] = { "grass", "tree", "rock", NULL };

static int
mosaic_kind (int i)
{
  return (int) ((i * 2654435761u) >> 7) % 4;
}

static void
write_mosaic (void)
{
  uint8_t rgb[MOSAIC * MOSAIC * 3];

  for (int i = 0; i < MOSAIC * MOSAIC; i++)
    memcpy (rgb + 3 * i, mosaic_colours[mosaic_kind (i)], 3);
  write_png8 ("mosaic.png", MOSAIC, MOSAIC, rgb);
}

static void
test_colour_never_places_outside_its_pixels (void)
{
  TgGraph *g;
  TgValue *v;
  const TgPoints *p;
  int64_t per_kind[4] = { 0 }, wrong = 0;

  write_mosaic ();
  g = file_graph (400.0, 129, "mosaic.png");
  SET (g, tg_graph_find_node (g, "sc"), "cell_m", "1");
  v = pull_points (g);
  p = v ? tg_value_points (v) : NULL;
  for (int64_t i = 0; p && i < p->n; i++)
    {
      int kind = mosaic_kind (pixel_of (p->position[3 * i], p->position[3 * i + 2], 400.0,
                                        MOSAIC, MOSAIC));
      const char *want = mosaic_protos[kind];
      per_kind[kind]++;
      if (!want || p->proto[i] != proto_index (p, want))
        {
          if (wrong++ < 3)
            TG_CHECK_MSG (false, "instance %lld (%s) at x %.3f, z %.3f lies on a %s pixel",
                          (long long) i, p->proto_names[p->proto[i]], p->position[3 * i],
                          p->position[3 * i + 2], want ? want : "black");
        }
    }
  TG_CHECK_MSG (wrong == 0, "%lld of %lld instances outside their colour's pixels",
                (long long) wrong, p ? (long long) p->n : 0LL);
  for (int k = 0; k < 3; k++)
    TG_CHECK_MSG (per_kind[k] > 1000, "only %lld %s instances", (long long) per_kind[k],
                  mosaic_protos[k]);
  tg_value_unref (v);
  tg_graph_free (g);
}

static void
test_gradient_edge_places_no_other_entry (void)
{
  /* Bright red fading to black: every pixel is red within the tolerance
   * (>= 232) or black, none near the dark red #800000. */
  static const uint8_t ramp[8] = { 255, 255, 255, 248, 240, 232, 0, 0 };
  enum { W = 64 };
  uint8_t rgb[W * W * 3] = { 0 };
  TgGraph *g;
  TgValue *v;
  const TgPoints *p;
  int dark, bright;
  int64_t n_dark = 0, n_bright = 0;

  for (int y = 0; y < W; y++)
    for (int x = 0; x < W; x++)
      rgb[(y * W + x) * 3] = x < 24 ? 255 : (x < 32 ? ramp[x - 24] : 0);
  write_png8 ("ramp.png", W, W, rgb);
  g = file_graph (400.0, 129, "ramp.png");
  SET (g, tg_graph_find_node (g, "sc"), "palette",
       "name=grass|color=#ff0000; name=bush|color=#800000");
  SET (g, tg_graph_find_node (g, "sc"), "cell_m", "0.5");
  v = pull_points (g);
  p = v ? tg_value_points (v) : NULL;
  dark = p ? proto_index (p, "bush") : -1;
  bright = p ? proto_index (p, "grass") : -1;
  for (int64_t i = 0; p && i < p->n; i++)
    {
      n_dark += p->proto[i] == dark;
      n_bright += p->proto[i] == bright;
    }
  TG_CHECK_MSG (n_dark == 0, "%lld dark red instances along a bright red edge",
                (long long) n_dark);
  /* 30 of 64 columns red: about 47 % of 640,000 cells. */
  TG_CHECK_MSG (n_bright > 280000 && n_bright < 320000, "%lld bright red instances",
                (long long) n_bright);
  tg_value_unref (v);
  tg_graph_free (g);
}

static void
test_three_pixel_map_covers_each_third (void)
{
  static const uint8_t rgb[9] = { 255, 0, 0, 0, 255, 0, 0, 0, 255 };
  static const char *const names[3] = { "grass", "tree", "rock" };
  double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };
  TgGraph *g;
  TgValue *v;
  const TgPoints *p;

  write_png8 ("rgb3.png", 3, 1, rgb);
  g = file_graph (400.0, 129, "rgb3.png");
  v = pull_points (g);
  p = v ? tg_value_points (v) : NULL;
  for (int k = 0; p && k < 3; k++)
    {
      int proto = proto_index (p, names[k]);
      double edge_w = -200.0 + k * 400.0 / 3.0, edge_e = -200.0 + (k + 1) * 400.0 / 3.0;
      for (int64_t i = 0; i < p->n; i++)
        if (p->proto[i] == proto)
          {
            lo[k] = fmin (lo[k], p->position[3 * i]);
            hi[k] = fmax (hi[k], p->position[3 * i]);
          }
      /* Inside its third and over all of it (2 m cells: within 4 m of each edge). */
      TG_CHECK_MSG (lo[k] >= edge_w && hi[k] <= edge_e && lo[k] < edge_w + 4.0
                    && hi[k] > edge_e - 4.0,
                    "%s spans x %.2f .. %.2f; its pixel covers %.2f .. %.2f", names[k], lo[k],
                    hi[k], edge_w, edge_e);
    }
  tg_value_unref (v);
  tg_graph_free (g);
}

static int
cmp_instance (const void *a, const void *b)
{
  return memcmp (a, b, sizeof (float) * 9);
}

/* P's instances as sortable rows: position, yaw quaternion, scale, proto
 * (nine floats, compared as bytes), sorted. */
static float *
sorted_instances (const TgPoints *p)
{
  float *rows = malloc (sizeof (float) * 9 * (size_t) (p->n ? p->n : 1));

  for (int64_t i = 0; rows && i < p->n; i++)
    {
      float *r = rows + 9 * i;
      memcpy (r, p->position + 3 * i, sizeof (float) * 3);
      memcpy (r + 3, p->rotation + 4 * i, sizeof (float) * 4);
      r[7] = p->scale[3 * i];
      r[8] = (float) p->proto[i];
    }
  if (rows)
    qsort (rows, (size_t) p->n, sizeof (float) * 9, cmp_instance);
  return rows;
}

static void
test_instances_do_not_depend_on_resolution (void)
{
  TgValue *v[2] = { NULL, NULL };
  static const int res[2] = { 129, 2049 };

  write_mosaic ();
  for (int k = 0; k < 2; k++)
    {
      TgGraph *g = file_graph (400.0, res[k], "mosaic.png");
      int sc = tg_graph_find_node (g, "sc");
      SET (g, sc, "min_spacing_m", "2.5");
      SET (g, sc, "warp_m", "3");
      /* Flat ground, snapped to. */
      SET (g, add_node (g, "flat", "gen.constant"), "value", "0.25");
      add_link (g, "flat", "height", "sc", "height");
      v[k] = pull_points (g);
      tg_graph_free (g);
    }
  if (v[0] && v[1])
    {
      const TgPoints *a = tg_value_points (v[0]), *b = tg_value_points (v[1]);
      float *ra = sorted_instances (a), *rb = sorted_instances (b);
      int64_t differ = 0;
      TG_CHECK_MSG (a->n == b->n, "%lld instances at 129 samples, %lld at 2049",
                    (long long) a->n, (long long) b->n);
      for (int64_t i = 0; ra && rb && a->n == b->n && i < a->n; i++)
        differ += memcmp (ra + 9 * i, rb + 9 * i, sizeof (float) * 9) != 0;
      TG_CHECK_MSG (differ == 0, "%lld of %lld instances differ", (long long) differ,
                    (long long) a->n);
      TG_CHECK_MSG (a->n > 5000, "only %lld instances", (long long) a->n);
      free (ra);
      free (rb);
    }
  tg_value_unref (v[0]);
  tg_value_unref (v[1]);
}

/* rgb mode on a 2 x 1 map: the west pixel dense, the east one empty. */
static int64_t
count_east (bool smooth, int64_t *beyond_centre)
{
  static const uint8_t rgb[6] = { 255, 255, 0, 255, 0, 0 };
  TgGraph *g;
  TgValue *v;
  const TgPoints *p;
  int sc;
  int64_t n = 0;

  write_png8 ("half.png", 2, 1, rgb);
  g = file_graph (400.0, 129, "half.png");
  sc = tg_graph_find_node (g, "sc");
  SET (g, sc, "channel_mode", "rgb");
  SET (g, sc, "palette", "name=grass|color=#ff0000");
  if (smooth)
    SET (g, sc, "smooth_density", "true");
  v = pull_points (g);
  p = v ? tg_value_points (v) : NULL;
  *beyond_centre = 0;
  for (int64_t i = 0; p && i < p->n; i++)
    {
      n += p->position[3 * i] > 0.0f;
      *beyond_centre += p->position[3 * i] > 100.0f;
    }
  tg_value_unref (v);
  tg_graph_free (g);
  return n;
}

static void
test_smooth_density_is_an_option (void)
{
  int64_t beyond, east = count_east (false, &beyond);

  TG_CHECK_MSG (east == 0, "%lld instances on the empty pixel by default", (long long) east);
  east = count_east (true, &beyond);
  /* Density falls from 1/2 at x = 0 to 0 at the east pixel's centre:
   * about a quarter of that strip's 10,000 cells. */
  TG_CHECK_MSG (east > 2200 && east < 2800, "%lld instances between the pixel centres",
                (long long) east);
  TG_CHECK_MSG (beyond == 0, "%lld instances past the east pixel's centre", (long long) beyond);
}

static void
test_file_map_tiled_equals_whole (void)
{
  static const int tilings[][2] = { { 2, 2 }, { 3, 2 }, { 7, 5 } };
  TgGraph *g;
  TgValue *whole;

  write_mosaic ();
  g = file_graph (400.0, 129, "mosaic.png");
  SET (g, tg_graph_find_node (g, "sc"), "min_spacing_m", "3");
  whole = pull_points (g);
  for (int k = 0; whole && k < (int) (sizeof tilings / sizeof tilings[0]); k++)
    {
      TgValue *tiled = NULL;
      TgError err = { 0 };
      int rc = tgtest_tiled_pull (engine, g, tg_graph_find_node (g, "sc"), 0, tilings[k][0],
                                  tilings[k][1], &tiled, NULL, &err);
      TG_CHECK_MSG (rc == 0, "%dx%d: %s", tilings[k][0], tilings[k][1], err.message);
      if (rc == 0)
        {
          const TgPoints *a = tg_value_points (whole), *b = tg_value_points (tiled);
          TG_CHECK_MSG (a->n == b->n
                          && memcmp (a->position, b->position, sizeof (float) * 3 * a->n) == 0
                          && memcmp (a->proto, b->proto, sizeof (int32_t) * a->n) == 0,
                        "%dx%d tiles: %lld instances, whole %lld, or other bytes",
                        tilings[k][0], tilings[k][1], (long long) b->n, (long long) a->n);
        }
      tg_value_unref (tiled);
    }
  tg_value_unref (whole);
  tg_graph_free (g);
}

int
main (void)
{
  tmp_dir = tgtest_tmpdir ("tg_scatpx_");
  if (!tmp_dir || tg_formats_init () != 0)
    return 1;
  engine = new_engine (4);
  TG_RUN (test_colour_never_places_outside_its_pixels);
  TG_RUN (test_gradient_edge_places_no_other_entry);
  TG_RUN (test_three_pixel_map_covers_each_third);
  TG_RUN (test_instances_do_not_depend_on_resolution);
  TG_RUN (test_smooth_density_is_an_option);
  TG_RUN (test_file_map_tiled_equals_whole);
  tg_engine_free (engine);
  return tgtest_result ();
}
