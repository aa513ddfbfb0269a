/* Tests for input.heightmap and export.heightmap: the image convention
 * (north-west pixel on the world's north-west corner), exact corner and
 * pixel values, bilinear resampling, border clamping, 8/16-bit and colour
 * input, the height range, exact bytes of raw16 / png16 / png8 exports,
 * the south-first row flip, float exports in metres (r32 units, exr) and
 * errors naming the node and the path. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tgformats/tgformats.h>
#include <tgraph/tgraph.h>

#include "tggraph_test.h"
#include "tgtest.h"

/* --- files ---------------------------------------------------------------------- */

static const char *tmp_dir;

static const char *
tmp_path (const char *name)
{
  static char buf[4][512];
  static int k;
  char *b = buf[k++ & 3];

  snprintf (b, sizeof buf[0], "%s/%s", tmp_dir, name);
  return b;
}

static int
write_png (const char *path, int w, int h, int channels, int bits, const void *data)
{
  TgImage img = { .width = w, .height = h, .channels = channels, .bits = bits,
                  .data = (void *) data };
  TgError err = { 0 };
  FILE *f = fopen (path, "wb");
  int rc;

  if (!f)
    return TG_EIO;
  rc = tg_png_write (f, &img, &err);
  if (fclose (f) != 0 && rc == 0)
    rc = TG_EIO;
  TG_CHECK_MSG (rc == 0, "writing %s: %s", path, err.message);
  return rc;
}

/* The whole file; caller frees.  NULL when it does not exist. */
static unsigned char *
read_all (const char *path, size_t *len)
{
  FILE *f = fopen (path, "rb");
  unsigned char *buf;
  long n;

  if (!f)
    return NULL;
  fseek (f, 0, SEEK_END);
  n = ftell (f);
  fseek (f, 0, SEEK_SET);
  buf = malloc ((size_t) n + 1);
  *len = fread (buf, 1, (size_t) n, f);
  fclose (f);
  return buf;
}

/* A 5 x 3 16-bit image, row 0 north.  Corners are distinctive. */
static const uint16_t img5x3[15] = {
  1000,  2000,  3000,  4000,  65535, /* north: NW = 1000, NE = 65535 */
  0,     10000, 20000, 30000, 40000,
  50000, 12345, 54321, 111,   7,     /* south: SW = 50000, SE = 7 */
};

static float
u16 (unsigned v)
{
  return (float) (v / 65535.0);
}

/* A graph over an 800 x 400 m world with an input.heightmap "hm" reading
 * NAME from the temp folder. */
static TgGraph *
input_graph (const char *name, int res)
{
  TgGraph *g = new_graph (800, 400, res);
  int n;

  tg_graph_set_base_dir (g, tmp_dir);
  n = add_node (g, "hm", "input.heightmap");
  SET (g, n, "path", name);
  return g;
}

/* --- input.heightmap ------------------------------------------------------------ */

static void
test_input_corners_and_pixels (void)
{
  TgGraph *g;
  TgEngine *e = new_engine (2);
  TgRegion r;
  TgValue *v;

  write_png (tmp_path ("five.png"), 5, 3, 1, 16, img5x3);
  /* 9 x 5 samples, 100 m apart: sample (2i, 2j) lies on pixel (i, j). */
  g = input_graph ("five.png", 9);
  r = world_region (g);
  TG_CHECK_INT_EQ (r.width, 9);
  TG_CHECK_INT_EQ (r.height, 5);
  /* The north-west sample is at world (-X max, +Z max). */
  TG_CHECK (tg_region_x (&r, 0) == -400.0);
  TG_CHECK (tg_region_z (&r, 0) == 200.0);
  v = pull (e, g, "hm", &r);
  if (v)
    {
      int bad = 0;
      TG_CHECK (at (v, 0, 0) == u16 (1000));  /* NW */
      TG_CHECK (at (v, 8, 0) == u16 (65535)); /* NE */
      TG_CHECK (at (v, 8, 0) == 1.0f);
      TG_CHECK (at (v, 0, 4) == u16 (50000)); /* SW */
      TG_CHECK (at (v, 8, 4) == u16 (7));     /* SE */
      for (int j = 0; j < 3; j++)
        for (int i = 0; i < 5; i++)
          bad += at (v, 2 * i, 2 * j) != u16 (img5x3[j * 5 + i]);
      TG_CHECK_INT_EQ (bad, 0);
      /* Between pixels: bilinear. */
      TG_CHECK_NEAR (at (v, 1, 0), 1500 / 65535.0, 1e-7);
      TG_CHECK_NEAR (at (v, 0, 1), 500 / 65535.0, 1e-7);
      TG_CHECK_NEAR (at (v, 1, 1), (1000 + 2000 + 0 + 10000) / 4 / 65535.0, 1e-7);
      TG_CHECK_NEAR (at (v, 7, 3), (30000 + 40000 + 111 + 7) / 4.0 / 65535.0, 1e-7);
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_input_resampled_and_clamped (void)
{
  TgGraph *g = input_graph ("five.png", 17); /* 50 m samples: 4 per pixel */
  TgEngine *e = new_engine (3);
  TgRegion r = world_region (g), out;
  TgValue *v, *w;

  v = pull (e, g, "hm", &r);
  if (v)
    {
      TG_CHECK_INT_EQ (r.height, 9);
      TG_CHECK (at (v, 16, 0) == 1.0f);
      TG_CHECK (at (v, 4, 4) == u16 (10000));
      TG_CHECK (at (v, 12, 8) == u16 (111));
      /* A quarter of the way from 2000 to 3000. */
      TG_CHECK_NEAR (at (v, 5, 0), 2250 / 65535.0, 1e-7);
    }
  /* A window reaching 3 samples past the north-west corner (as an apron
   * would): samples outside the world repeat the border pixels. */
  out = tg_region_window (&r, -3, -3, 6, 6);
  w = pull (e, g, "hm", &out);
  if (w && v)
    {
      TG_CHECK (at (w, 0, 0) == u16 (1000));
      TG_CHECK (at (w, 2, 0) == u16 (1000));
      TG_CHECK (at (w, 3, 0) == u16 (1000));
      TG_CHECK (at (w, 5, 0) == at (v, 2, 0)); /* north edge, clamped in Z */
      TG_CHECK (at (w, 0, 5) == at (v, 0, 2)); /* west edge, clamped in X */
      TG_CHECK (at (w, 5, 5) == at (v, 2, 2));
    }
  if (v)
    tg_value_unref (v);
  if (w)
    tg_value_unref (w);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_input_8bit_colour_and_range (void)
{
  static const uint8_t grey8[4] = { 0, 51, 204, 255 };
  /* RGB: a grey pixel, pure red, pure green, white. */
  static const uint8_t rgb8[12] = { 100, 100, 100, 255, 0, 0, 0, 255, 0, 255, 255, 255 };
  TgEngine *e = new_engine (1);
  TgGraph *g;
  TgRegion r;
  TgValue *v;
  int n;

  write_png (tmp_path ("grey8.png"), 2, 2, 1, 8, grey8);
  write_png (tmp_path ("rgb8.png"), 2, 2, 3, 8, rgb8);

  /* 2 x 2 pixels over an 800 x 400 world sampled 3 x 2: corners only
   * plus the middle column. */
  g = input_graph ("grey8.png", 3);
  r = world_region (g);
  TG_CHECK_INT_EQ (r.height, 2);
  v = pull (e, g, "hm", &r);
  if (v)
    {
      TG_CHECK (at (v, 0, 0) == 0.0f);
      TG_CHECK (at (v, 2, 0) == (float) (51 / 255.0));
      TG_CHECK (at (v, 0, 1) == (float) (204 / 255.0));
      TG_CHECK (at (v, 2, 1) == 1.0f);
      TG_CHECK_NEAR (at (v, 1, 0), 25.5 / 255.0, 1e-7);
      tg_value_unref (v);
    }
  /* The height range: black -> 0.2, white -> 0.6. */
  n = tg_graph_find_node (g, "hm");
  SET (g, n, "min_height", "0.2");
  SET (g, n, "max_height", "0.6");
  v = pull (e, g, "hm", &r);
  if (v)
    {
      TG_CHECK_NEAR (at (v, 0, 0), 0.2, 1e-7);
      TG_CHECK_NEAR (at (v, 2, 1), 0.6, 1e-7);
      TG_CHECK_NEAR (at (v, 2, 0), 0.2 + 0.4 * 0.2, 1e-7);
      tg_value_unref (v);
    }
  tg_graph_free (g);

  /* Colour is read as Rec. 709 luminance; grey pixels keep their value. */
  g = input_graph ("rgb8.png", 3);
  v = pull (e, g, "hm", &r);
  if (v)
    {
      TG_CHECK (at (v, 0, 0) == (float) (100 / 255.0));
      TG_CHECK_NEAR (at (v, 2, 0), 0.2126, 1e-7);
      TG_CHECK_NEAR (at (v, 0, 1), 0.7152, 1e-7);
      TG_CHECK (at (v, 2, 1) == 1.0f);
      tg_value_unref (v);
    }
  tg_graph_free (g);
  tg_engine_free (e);
}

static void
test_input_missing_file_names_node_and_path (void)
{
  TgGraph *g = input_graph ("missing.png", 9);
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgError err = { 0 };
  TgEvalReport report = { 0 };
  TgValue *v = NULL;
  int rc;

  rc = tg_engine_pull (e, g, 0, 0, &r, NULL, &v, &report, &err);
  TG_CHECK (rc < 0);
  TG_CHECK (v == NULL);
  TG_CHECK_STR_CONTAINS (err.path, "nodes[0]");
  TG_CHECK_STR_CONTAINS (err.message, "\"hm\"");
  TG_CHECK_STR_CONTAINS (err.message, "input.heightmap");
  TG_CHECK_STR_CONTAINS (err.message, "missing.png");
  TG_CHECK_INT_EQ (tg_eval_report_first_failure (&report), 0);
  if (report.message && report.n_nodes > 0)
    TG_CHECK_STR_CONTAINS (report.message[0], "missing.png");
  tg_eval_report_clear (&report);
  if (v)
    tg_value_unref (v);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* --- export.heightmap --------------------------------------------------------------- */

/* Runs every export of G into OUT_DIR and commits.  Returns 0 or the error. */
static int
export_all (TgGraph *g, const char *out_dir, TgError *err)
{
  TgEngine *e = new_engine (2);
  TgExportList *list;
  int rc = tg_engine_export (e, g, out_dir, NULL, &list, NULL, err);

  if (rc == 0)
    rc = tg_export_list_commit (list, err);
  tg_export_list_free (list);
  tg_engine_free (e);
  return rc;
}

static void
test_export_round_trip_bytes (void)
{
  uint16_t src[45];
  TgGraph *g;
  TgError err = { 0 };
  unsigned char *raw;
  size_t len = 0;
  int n, rc;
  TgImage back = { 0 };

  /* 9 x 5 distinct values over the full 16-bit range. */
  for (int k = 0; k < 45; k++)
    src[k] = (uint16_t) (k * 1489 + (k & 1) * 7);
  src[44] = 65535;
  write_png (tmp_path ("nine.png"), 9, 5, 1, 16, src);

  /* At the same resolution the import is exact and the export gives the
   * pixels back. */
  g = input_graph ("nine.png", 9);
  n = add_node (g, "raw", "export.heightmap");
  SET (g, n, "path", "out/h.r16");
  SET (g, n, "format", "raw16");
  n = add_node (g, "raw_s", "export.heightmap");
  SET (g, n, "path", "out/h_south.r16");
  SET (g, n, "format", "raw16");
  SET (g, n, "rows", "south_first");
  n = add_node (g, "png", "export.heightmap"); /* defaults: height.png, png16 */
  n = add_node (g, "png8", "export.heightmap");
  SET (g, n, "path", "h8.png");
  SET (g, n, "format", "png8");
  add_link (g, "hm", "height", "raw", "height");
  add_link (g, "hm", "height", "raw_s", "height");
  add_link (g, "hm", "height", "png", "height");
  add_link (g, "hm", "height", "png8", "height");
  rc = export_all (g, tmp_path ("build1"), &err);
  TG_CHECK_MSG (rc == 0, "%s: %s", err.path, err.message);

  /* raw16: little-endian, north row first. */
  raw = read_all (tmp_path ("build1/out/h.r16"), &len);
  TG_CHECK (raw != NULL);
  if (raw)
    {
      int bad = 0;
      TG_CHECK_INT_EQ (len, 90);
      for (int k = 0; k < 45 && len == 90; k++)
        bad += raw[2 * k] != (src[k] & 0xff) || raw[2 * k + 1] != (src[k] >> 8);
      TG_CHECK_INT_EQ (bad, 0);
      /* The last sample (SE) is 65535 = ff ff; the first is 0. */
      TG_CHECK (raw[88] == 0xff && raw[89] == 0xff);
      TG_CHECK (raw[0] == 0 && raw[1] == 0);
      free (raw);
    }
  /* south_first: the same rows in reverse order. */
  raw = read_all (tmp_path ("build1/out/h_south.r16"), &len);
  TG_CHECK (raw != NULL);
  if (raw)
    {
      int bad = 0;
      TG_CHECK_INT_EQ (len, 90);
      for (int j = 0; j < 5 && len == 90; j++)
        for (int i = 0; i < 9; i++)
          {
            unsigned s = src[(4 - j) * 9 + i];
            bad += raw[2 * (j * 9 + i)] != (s & 0xff) || raw[2 * (j * 9 + i) + 1] != (s >> 8);
          }
      TG_CHECK_INT_EQ (bad, 0);
      free (raw);
    }
  /* png16 read back: the same samples. */
  rc = tg_png_read (tmp_path ("build1/height.png"), &back, &err);
  TG_CHECK_MSG (rc == 0, "%s", err.message);
  if (rc == 0)
    {
      TG_CHECK_INT_EQ (back.width, 9);
      TG_CHECK_INT_EQ (back.height, 5);
      TG_CHECK_INT_EQ (back.channels, 1);
      TG_CHECK_INT_EQ (back.bits, 16);
      if (back.bits == 16 && back.width == 9 && back.height == 5)
        TG_CHECK (memcmp (back.data, src, sizeof src) == 0);
      tg_image_clear (&back);
    }
  /* png8: rounded to nearest of 255 levels. */
  rc = tg_png_read (tmp_path ("build1/h8.png"), &back, &err);
  TG_CHECK_MSG (rc == 0, "%s", err.message);
  if (rc == 0)
    {
      TG_CHECK_INT_EQ (back.bits, 8);
      if (back.bits == 8 && back.width == 9 && back.height == 5)
        {
          const uint8_t *p = back.data;
          int bad = 0;
          for (int k = 0; k < 45; k++)
            bad += p[k] != (uint8_t) floor (src[k] * 255.0 / 65535.0 + 0.5);
          TG_CHECK_INT_EQ (bad, 0);
          TG_CHECK_INT_EQ (p[44], 255);
        }
      tg_image_clear (&back);
    }
  tg_graph_free (g);
}

/* r32 normalized keeps the engine's heights, r32 metres and exr carry
 * them times world.height_m, unclamped; the exr staged by the engine
 * (through its cancellable stream, which the writer seeks) is the file
 * tg_exr_write makes of those metres. */
static void
test_export_float_units (void)
{
  uint16_t src[45];
  TgGraph *g;
  TgError err = { 0 };
  unsigned char *norm, *metres, *exr, *want;
  size_t n_norm = 0, n_metres = 0, n_exr = 0, n_want = 0;
  int n, rc;

  for (int k = 0; k < 45; k++)
    src[k] = (uint16_t) (k * 1489 + 3);
  write_png (tmp_path ("units.png"), 9, 5, 1, 16, src);
  g = input_graph ("units.png", 9);
  tg_graph_world (g)->height_m = 737.5;
  n = add_node (g, "norm", "export.heightmap");
  SET (g, n, "path", "n.r32");
  SET (g, n, "format", "r32");
  n = add_node (g, "metres", "export.heightmap");
  SET (g, n, "path", "m.r32");
  SET (g, n, "format", "r32");
  SET (g, n, "units", "metres");
  n = add_node (g, "exr", "export.heightmap");
  SET (g, n, "path", "h.exr");
  SET (g, n, "format", "exr");
  add_link (g, "hm", "height", "norm", "height");
  add_link (g, "hm", "height", "metres", "height");
  add_link (g, "hm", "height", "exr", "height");
  rc = export_all (g, tmp_path ("units"), &err);
  TG_CHECK_MSG (rc == 0, "%s: %s", err.path, err.message);

  norm = read_all (tmp_path ("units/n.r32"), &n_norm);
  metres = read_all (tmp_path ("units/m.r32"), &n_metres);
  exr = read_all (tmp_path ("units/h.exr"), &n_exr);
  TG_CHECK_INT_EQ (n_norm, 45 * 4);
  TG_CHECK_INT_EQ (n_metres, 45 * 4);
  if (norm && metres && n_norm == 180 && n_metres == 180)
    {
      int bad = 0;
      for (int k = 0; k < 45; k++)
        {
          float a, b;
          memcpy (&a, norm + 4 * k, 4);
          memcpy (&b, metres + 4 * k, 4);
          bad += a != u16 (src[k]) || b != a * 737.5f;
        }
      TG_CHECK_INT_EQ (bad, 0);
    }
  if (metres && n_metres == 180)
    {
      TgImage img = { .width = 9, .height = 5, .channels = 1, .bits = 32, .data = metres };
      FILE *f = fopen (tmp_path ("want.exr"), "wb");
      TG_CHECK_INT_EQ (tg_exr_write (f, &img, &err), 0);
      fclose (f);
      want = read_all (tmp_path ("want.exr"), &n_want);
      TG_CHECK (exr && n_exr > 0 && n_exr == n_want && memcmp (exr, want, n_exr) == 0);
      free (want);
    }
  free (norm);
  free (metres);
  free (exr);
  tg_graph_free (g);
}

static void
test_every_16bit_value_round_trips (void)
{
  /* 256 x 256 pixels holding each 16-bit value once, imported at the same
   * resolution and exported as raw16: the same 131072 bytes come out. */
  uint16_t *src = malloc (sizeof (uint16_t) * 65536);
  TgGraph *g;
  TgError err = { 0 };
  unsigned char *raw;
  size_t len = 0;
  int n, rc;

  for (int k = 0; k < 65536; k++)
    src[k] = (uint16_t) ((k * 40503u) & 0xffff); /* a permutation, so rows are not ramps */
  write_png (tmp_path ("all.png"), 256, 256, 1, 16, src);
  g = new_graph (255, 255, 256);
  tg_graph_set_base_dir (g, tmp_dir);
  n = add_node (g, "hm", "input.heightmap");
  SET (g, n, "path", "all.png");
  n = add_node (g, "x", "export.heightmap");
  SET (g, n, "path", "all.r16");
  SET (g, n, "format", "raw16");
  add_link (g, "hm", "height", "x", "height");
  rc = export_all (g, tmp_path ("build4"), &err);
  TG_CHECK_MSG (rc == 0, "%s: %s", err.path, err.message);
  raw = read_all (tmp_path ("build4/all.r16"), &len);
  TG_CHECK (raw && len == 131072);
  if (raw && len == 131072)
    {
      int bad = 0;
      for (int k = 0; k < 65536; k++)
        bad += (raw[2 * k] | raw[2 * k + 1] << 8) != src[k];
      TG_CHECK_INT_EQ (bad, 0);
    }
  free (raw);
  free (src);
  tg_graph_free (g);
}

static void
test_export_quantises_and_clamps (void)
{
  /* An 800 m world with 9 samples: the ramp is i / 8. */
  static const uint16_t want[9] = { 0, 8192, 16384, 24576, 32768, 40959, 49151, 57343, 65535 };
  TgGraph *g = new_graph (800, 400, 9);
  TgError err = { 0 };
  unsigned char *raw;
  size_t len = 0;
  int n, rc;

  add_node (g, "ramp", "gen.gradient");
  n = add_node (g, "big", "math.combine"); /* ramp + ramp, unclamped: 0..2 */
  SET (g, n, "clamp", "false");
  n = add_node (g, "neg", "filter.invert"); /* 0.25 - ramp: 0.25 .. -0.75 */
  SET (g, n, "pivot", "0.125");
  add_link (g, "ramp", "height", "big", "a");
  add_link (g, "ramp", "height", "big", "b");
  add_link (g, "ramp", "height", "neg", "height");
  n = add_node (g, "x_ramp", "export.heightmap");
  SET (g, n, "path", "ramp.r16");
  SET (g, n, "format", "raw16");
  n = add_node (g, "x_big", "export.heightmap");
  SET (g, n, "path", "big.r16");
  SET (g, n, "format", "raw16");
  n = add_node (g, "x_neg", "export.heightmap");
  SET (g, n, "path", "neg.r16");
  SET (g, n, "format", "raw16");
  add_link (g, "ramp", "height", "x_ramp", "height");
  add_link (g, "big", "height", "x_big", "height");
  add_link (g, "neg", "height", "x_neg", "height");
  rc = export_all (g, tmp_path ("build2"), &err);
  TG_CHECK_MSG (rc == 0, "%s: %s", err.path, err.message);

  raw = read_all (tmp_path ("build2/ramp.r16"), &len);
  TG_CHECK (raw && len == 90);
  if (raw && len == 90)
    {
      int bad = 0;
      for (int j = 0; j < 5; j++)
        for (int i = 0; i < 9; i++)
          bad += (raw[2 * (j * 9 + i)] | raw[2 * (j * 9 + i) + 1] << 8) != want[i];
      TG_CHECK_INT_EQ (bad, 0);
    }
  free (raw);
  raw = read_all (tmp_path ("build2/big.r16"), &len);
  TG_CHECK (raw && len == 90);
  if (raw && len == 90)
    {
      /* 2 * 3/8 = 0.75 -> 49151; from 4/8 up it saturates at 65535. */
      TG_CHECK_INT_EQ (raw[6] | raw[7] << 8, 49151);
      TG_CHECK_INT_EQ (raw[8] | raw[9] << 8, 65535);
      TG_CHECK_INT_EQ (raw[16] | raw[17] << 8, 65535);
    }
  free (raw);
  raw = read_all (tmp_path ("build2/neg.r16"), &len);
  TG_CHECK (raw && len == 90);
  if (raw && len == 90)
    {
      /* 0.25 - i/8: 0.25 -> 16384, 0.125 -> 8192, 0 -> 0, below 0 -> 0. */
      TG_CHECK_INT_EQ (raw[0] | raw[1] << 8, 16384);
      TG_CHECK_INT_EQ (raw[2] | raw[3] << 8, 8192);
      TG_CHECK_INT_EQ (raw[4] | raw[5] << 8, 0);
      TG_CHECK_INT_EQ (raw[16] | raw[17] << 8, 0);
    }
  free (raw);
  tg_graph_free (g);
}

/* A spy in front of the r32 rows writer: how export.heightmap hands over
 * its rows. */
typedef struct
{
  const TgImageRows *inner;
  int calls, rows, max_band, whole;
} RowsSpy;

static RowsSpy spy;
static TgImageRowsWriter r32_rows_writer;

static int
spy_rows (void *user, int y, int n, void *dst, TgError *err)
{
  const TgImageRows *in = user;

  spy.rows += n;
  spy.max_band = n > spy.max_band ? n : spy.max_band;
  return in->rows (in->user, y, n, dst, err);
}

static int
spy_r32_writer (FILE *f, const TgImageRows *src, TgError *err)
{
  TgImageRows mine = *src;

  spy.calls++;
  spy.whole += src->whole != NULL;
  if (!src->whole)
    {
      mine.rows = spy_rows;
      mine.user = (void *) src;
    }
  return r32_rows_writer (f, &mine, err);
}

/* export.heightmap gives the writer its rows a band at a time, converted
 * as they are asked for, instead of a whole copy of the file. */
static void
test_export_streams_rows (void)
{
  TgGraph *g = new_graph (800, 400, 2049);
  TgError err = { 0 };
  char path[4096];
  struct stat st;
  int n;

  r32_rows_writer = tg_io_image_rows_writer ("r32");
  TG_CHECK (r32_rows_writer != NULL);
  if (!r32_rows_writer)
    return;
  TG_CHECK_INT_EQ (tg_io_register_image_rows_writer ("r32", spy_r32_writer), 0);
  add_node (g, "ramp", "gen.gradient");
  n = add_node (g, "out", "export.heightmap");
  SET (g, n, "path", "stream.r32");
  SET (g, n, "format", "r32");
  add_link (g, "ramp", "height", "out", "height");
  TG_CHECK_MSG (export_all (g, tmp_path ("stream"), &err) == 0, "%s", err.message);
  tg_io_register_image_rows_writer ("r32", r32_rows_writer);
  TG_CHECK_INT_EQ (spy.calls, 1);
  TG_CHECK_INT_EQ (spy.whole, 0);
  TG_CHECK_INT_EQ (spy.rows, 1025);
  TG_CHECK_MSG (spy.max_band > 0 && spy.max_band < 1025, "a band of %d rows of 1025",
                spy.max_band);
  snprintf (path, sizeof path, "%s/stream.r32", tmp_path ("stream"));
  TG_CHECK (stat (path, &st) == 0 && st.st_size == 2049LL * 1025 * 4);
  tg_graph_free (g);
}

static void
test_export_errors (void)
{
  TgGraph *g = input_graph ("missing.png", 9);
  TgError err = { 0 };
  struct stat st;
  int n, rc;

  /* Paths may not leave the output folder. */
  n = add_node (g, "x", "export.heightmap");
  TG_CHECK (set_param_err (g, n, "path", "../evil.png", &err) == TG_EPATH);
  TG_CHECK (set_param_err (g, n, "path", "/tmp/evil.png", &err) == TG_EPATH);
  TG_CHECK (set_param (g, n, "format", "tiff") < 0);

  /* A failing input: the export fails naming the reader's node and file,
   * and nothing is left in the output folder. */
  add_link (g, "hm", "height", "x", "height");
  memset (&err, 0, sizeof err);
  rc = export_all (g, tmp_path ("build3"), &err);
  TG_CHECK (rc < 0);
  TG_CHECK_STR_CONTAINS (err.message, "\"hm\"");
  TG_CHECK_STR_CONTAINS (err.message, "missing.png");
  TG_CHECK (stat (tmp_path ("build3/height.png"), &st) != 0);
  tg_graph_free (g);
}

int
main (void)
{
  tmp_dir = tgtest_tmpdir ("tg_hmio_");
  if (!tmp_dir)
    return 1;
  if (tg_formats_init () != 0)
    {
      fprintf (stderr, "tg_formats_init failed\n");
      return 1;
    }
  TG_RUN (test_input_corners_and_pixels);
  TG_RUN (test_input_resampled_and_clamped);
  TG_RUN (test_input_8bit_colour_and_range);
  TG_RUN (test_input_missing_file_names_node_and_path);
  TG_RUN (test_export_round_trip_bytes);
  TG_RUN (test_export_float_units);
  TG_RUN (test_every_16bit_value_round_trips);
  TG_RUN (test_export_quantises_and_clamps);
  TG_RUN (test_export_errors);
  TG_RUN (test_export_streams_rows);
  return tgtest_result ();
}
