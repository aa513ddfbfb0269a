/* Tests for input.image, export.image, export.mask (png and exr), export.splat and the
 * r32 format of export.heightmap: raw values with no gamma, grey / grey +
 * alpha / RGB / RGBA expansion, the corner-on-corner mapping and bilinear
 * resampling (the same as input.heightmap), exact round trips through
 * PNG at the import resolution, splat weights that sum to exactly 255 per
 * pixel in both presets (with largest-remainder rounding and its tie
 * rule), file naming per preset, the pow2 size (2^k + 1 samples give
 * 2^k pixels, bilinear, the same bytes on any thread count, refused for
 * a tile or a world that is not square), float bytes of r32, and
 * errors. */
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

static const char *tmp_dir;

static const char *
tmp_path (const char *name)
{
  static char buf[8][512];
  static int k;
  char *b = buf[k++ & 7];

  snprintf (b, sizeof buf[0], "%s/%s", tmp_dir, name);
  return b;
}

static const char *
fmt (double v)
{
  static char buf[8][64];
  static int k;
  char *b = buf[k++ & 7];

  snprintf (b, 64, "%.17g", v);
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

static const float *
px (const TgValue *v, int i, int j)
{
  return tg_value_row (v, j) + (size_t) i * (size_t) v->channels;
}

/* Exports every export of G into OUT_DIR on THREADS threads. */
static int
export_threads (TgGraph *g, const char *out_dir, int threads, TgError *err)
{
  TgEngine *e = new_engine (threads);
  TgExportList *list;
  int rc = tg_engine_export (e, g, out_dir, NULL, &list, NULL, err);

  if (rc == 0)
    rc = tg_export_list_commit (list, err);
  tg_export_list_free (list);
  tg_engine_free (e);
  return rc;
}

static int
export_all (TgGraph *g, const char *out_dir, TgError *err)
{
  return export_threads (g, out_dir, 2, err);
}

static int
exists (const char *path)
{
  struct stat st;

  return stat (path, &st) == 0;
}

/* --- input.image ------------------------------------------------------------------ */

/* 3 x 2 RGBA16, distinctive corners; row 0 north. */
static const uint16_t rgba16[24] = {
  1000, 2000, 3000, 4000,   65535, 0, 0, 65535,   0, 65535, 0, 0,
  0, 0, 65535, 32768,       5, 6, 7, 8,           60000, 50000, 40000, 30000,
};

static void
test_input_rgba16_corners_and_bilinear (void)
{
  TgGraph *g = new_graph (400, 200, 5); /* 5 x 3 samples, 100 m apart */
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *v;
  int n;

  write_png (tmp_path ("rgba16.png"), 3, 2, 4, 16, rgba16);
  tg_graph_set_base_dir (g, tmp_dir);
  n = add_node (g, "img", "input.image");
  SET (g, n, "path", "rgba16.png");
  v = pull (e, g, "img", &r);
  if (v)
    {
      TG_CHECK_INT_EQ (v->channels, 4);
      TG_CHECK_INT_EQ (v->type, TG_TYPE_IMAGE);
      /* Samples (2i, 2j) lie on pixel (i, j): exact raw values. */
      for (int j = 0; j < 2; j++)
        for (int i = 0; i < 3; i++)
          for (int c = 0; c < 4; c++)
            TG_CHECK (px (v, 2 * i, 2 * j)[c] == (float) (rgba16[(j * 3 + i) * 4 + c] / 65535.0));
      /* NW is pixel (0, 0), SE pixel (2, 1). */
      TG_CHECK (px (v, 4, 2)[0] == (float) (60000 / 65535.0));
      /* Between pixels: bilinear per channel, alpha too. */
      TG_CHECK_NEAR (px (v, 1, 0)[0], (1000 + 65535) / 2.0 / 65535.0, 1e-7);
      TG_CHECK_NEAR (px (v, 1, 1)[3], (4000 + 65535 + 32768 + 8) / 4.0 / 65535.0, 1e-7);
      tg_value_unref (v);
    }
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_input_channel_layouts_raw (void)
{
  /* 2 x 1 pixels of each layout, 8-bit: 128 is 128/255 (no gamma). */
  static const uint8_t grey[2] = { 128, 255 };
  static const uint8_t grey_a[4] = { 128, 10, 255, 20 };
  static const uint8_t rgb[6] = { 128, 64, 32, 1, 2, 3 };
  static const struct
  {
    const char *name;
    int channels;
    const uint8_t *data;
    float want[4];
  } cases[] = {
    { "g.png", 1, grey, { 128 / 255.f, 128 / 255.f, 128 / 255.f, 1.0f } },
    { "ga.png", 2, grey_a, { 128 / 255.f, 128 / 255.f, 128 / 255.f, 10 / 255.f } },
    { "rgb.png", 3, rgb, { 128 / 255.f, 64 / 255.f, 32 / 255.f, 1.0f } },
  };

  for (int c = 0; c < 3; c++)
    {
      TgGraph *g = new_graph (100, 100, 2);
      TgEngine *e = new_engine (1);
      TgRegion r = world_region (g);
      TgValue *v;
      int n;

      write_png (tmp_path (cases[c].name), 2, 1, cases[c].channels, 8, cases[c].data);
      tg_graph_set_base_dir (g, tmp_dir);
      n = add_node (g, "img", "input.image");
      SET (g, n, "path", cases[c].name);
      v = pull (e, g, "img", &r);
      if (v)
        {
          for (int q = 0; q < 4; q++)
            {
              /* Both rows read the one pixel row; column 0 is pixel 0. */
              TG_CHECK_MSG (px (v, 0, 0)[q] == cases[c].want[q], "%s channel %d: %g", cases[c].name,
                            q, px (v, 0, 0)[q]);
              TG_CHECK (px (v, 0, 1)[q] == cases[c].want[q]);
            }
          tg_value_unref (v);
        }
      tg_engine_free (e);
      tg_graph_free (g);
    }
}

static void
test_input_missing_file (void)
{
  TgGraph *g = new_graph (100, 100, 3);
  TgEngine *e = new_engine (1);
  TgRegion r = world_region (g);
  TgError err = { 0 };
  int n;

  tg_graph_set_base_dir (g, tmp_dir);
  n = add_node (g, "paint", "input.image");
  SET (g, n, "path", "nope.png");
  TG_CHECK (pull_err (e, g, "paint", &r, &err) == NULL);
  TG_CHECK_STR_CONTAINS (err.message, "\"paint\"");
  TG_CHECK_STR_CONTAINS (err.message, "nope.png");
  tg_engine_free (e);
  tg_graph_free (g);
}

/* --- export.image and export.mask ------------------------------------------------------ */

static bool
has_bytes (const unsigned char *buf, size_t len, const char *needle, size_t n)
{
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp (buf + i, needle, n) == 0)
      return true;
  return false;
}

/* The whole file (caller frees); NULL when it cannot be read. */
static unsigned char *
read_bytes (const char *path, size_t *len)
{
  FILE *f = fopen (path, "rb");
  unsigned char *buf = NULL;
  long n;

  *len = 0;
  if (!f)
    return NULL;
  if (fseek (f, 0, SEEK_END) == 0 && (n = ftell (f)) >= 0 && fseek (f, 0, SEEK_SET) == 0
      && (buf = malloc ((size_t) n + 1)))
    *len = fread (buf, 1, (size_t) n, f);
  fclose (f);
  return buf;
}

static void
test_image_round_trip (void)
{
  /* 9 x 5 RGBA8 pixels, all different; imported at 9 samples across and
   * exported again: the same bytes, in RGBA8, RGBA16 (x 257) and RGB8. */
  uint8_t src[9 * 5 * 4];
  TgGraph *g = new_graph (800, 400, 9);
  TgError err = { 0 };
  TgImage back = { 0 };
  int n, rc;

  for (int k = 0; k < 9 * 5 * 4; k++)
    src[k] = (uint8_t) ((k * 37 + 11) & 0xff);
  write_png (tmp_path ("paint.png"), 9, 5, 4, 8, src);
  tg_graph_set_base_dir (g, tmp_dir);
  n = add_node (g, "img", "input.image");
  SET (g, n, "path", "paint.png");
  n = add_node (g, "x8", "export.image");
  SET (g, n, "path", "maps/color8.png");
  n = add_node (g, "x16", "export.image");
  SET (g, n, "path", "color16.png");
  SET (g, n, "format", "png16");
  n = add_node (g, "xrgb", "export.image");
  SET (g, n, "path", "rgb.png");
  SET (g, n, "alpha", "false");
  add_link (g, "img", "image", "x8", "image");
  add_link (g, "img", "image", "x16", "image");
  n = add_node (g, "xexr", "export.image");
  SET (g, n, "path", "rgb.exr");
  SET (g, n, "format", "exr");
  SET (g, n, "alpha", "false");
  add_link (g, "img", "image", "xrgb", "image");
  add_link (g, "img", "image", "xexr", "image");
  rc = export_all (g, tmp_path ("out1"), &err);
  TG_CHECK_MSG (rc == 0, "%s: %s", err.path, err.message);
  {
    /* An OpenEXR file (test_exr reads the format back) with R, G and B. */
    size_t len = 0;
    unsigned char *exr = read_bytes (tmp_path ("out1/rgb.exr"), &len);
    TG_CHECK (exr && len > 4 && memcmp (exr, "\x76\x2f\x31\x01", 4) == 0);
    TG_CHECK (exr && has_bytes (exr, len, "channels\0chlist\0", 16));
    /* In the channel list: "B", then its pixel type 2 (float); no "A". */
    TG_CHECK (exr && has_bytes (exr, len, "\0B\0\x02\0\0\0", 7));
    TG_CHECK (exr && !has_bytes (exr, len, "\0A\0\x02\0\0\0", 7));
    free (exr);
  }

  rc = tg_png_read (tmp_path ("out1/maps/color8.png"), &back, &err);
  TG_CHECK_MSG (rc == 0, "%s", err.message);
  if (rc == 0)
    {
      TG_CHECK_INT_EQ (back.channels, 4);
      TG_CHECK_INT_EQ (back.bits, 8);
      if (back.channels == 4 && back.bits == 8 && back.width == 9 && back.height == 5)
        TG_CHECK (memcmp (back.data, src, sizeof src) == 0);
      tg_image_clear (&back);
    }
  rc = tg_png_read (tmp_path ("out1/color16.png"), &back, &err);
  if (rc == 0)
    {
      const uint16_t *p = back.data;
      int bad = 0;
      TG_CHECK_INT_EQ (back.bits, 16);
      for (int k = 0; k < 9 * 5 * 4 && back.bits == 16 && back.channels == 4; k++)
        bad += p[k] != src[k] * 257;
      TG_CHECK_INT_EQ (bad, 0);
      tg_image_clear (&back);
    }
  rc = tg_png_read (tmp_path ("out1/rgb.png"), &back, &err);
  if (rc == 0)
    {
      const uint8_t *p = back.data;
      int bad = 0;
      TG_CHECK_INT_EQ (back.channels, 3);
      for (int k = 0; k < 45 && back.channels == 3; k++)
        for (int c = 0; c < 3; c++)
          bad += p[k * 3 + c] != src[k * 4 + c];
      TG_CHECK_INT_EQ (bad, 0);
      tg_image_clear (&back);
    }
  tg_graph_free (g);
}

static void
test_mask_export (void)
{
  /* 9 samples: the ramp is i / 8; x 2 unclamped is clamped at 1. */
  TgGraph *g = new_graph (800, 100, 9);
  TgError err = { 0 };
  TgImage back = { 0 };
  int n, rc;

  add_node (g, "ramp", "gen.gradient");
  n = add_node (g, "big", "math.combine");
  SET (g, n, "clamp", "false");
  add_link (g, "ramp", "height", "big", "a");
  add_link (g, "ramp", "height", "big", "b");
  n = add_node (g, "m8", "export.mask");
  n = add_node (g, "m16", "export.mask");
  SET (g, n, "path", "mask16.png");
  SET (g, n, "format", "png16");
  n = add_node (g, "mexr", "export.mask");
  SET (g, n, "path", "mask.exr");
  SET (g, n, "format", "exr");
  n = add_node (g, "hr32", "export.heightmap");
  SET (g, n, "path", "big.r32");
  SET (g, n, "format", "r32");
  add_link (g, "ramp", "height", "m8", "mask");
  add_link (g, "big", "height", "m16", "mask");
  add_link (g, "big", "height", "mexr", "mask");
  add_link (g, "big", "height", "hr32", "height");
  rc = export_all (g, tmp_path ("out2"), &err);
  TG_CHECK_MSG (rc == 0, "%s: %s", err.path, err.message);
  rc = tg_png_read (tmp_path ("out2/mask.png"), &back, &err);
  if (rc == 0)
    {
      const uint8_t *p = back.data;
      TG_CHECK_INT_EQ (back.channels, 1);
      TG_CHECK_INT_EQ (back.bits, 8);
      for (int i = 0; i < 9 && back.bits == 8; i++)
        TG_CHECK_INT_EQ (p[i], (int) floor (i * 255 / 8.0 + 0.5));
      tg_image_clear (&back);
    }
  rc = tg_png_read (tmp_path ("out2/mask16.png"), &back, &err);
  if (rc == 0)
    {
      const uint16_t *p = back.data;
      TG_CHECK_INT_EQ (back.bits, 16);
      if (back.bits == 16)
        {
          TG_CHECK_INT_EQ (p[1], 16384);  /* 2 / 8 */
          TG_CHECK_INT_EQ (p[4], 65535);  /* 1.0 */
          TG_CHECK_INT_EQ (p[8], 65535);  /* 2.0, clamped */
        }
      tg_image_clear (&back);
    }
  /* exr: the floats unclamped, as r32 holds them, in OpenEXR's bytes. */
  {
    size_t n_r32 = 0, n_exr = 0, n_want = 0;
    unsigned char *r32 = read_bytes (tmp_path ("out2/big.r32"), &n_r32);
    unsigned char *exr = read_bytes (tmp_path ("out2/mask.exr"), &n_exr), *want = NULL;
    TgImage img = { .width = 9, .height = (int) (n_r32 / 36), .channels = 1, .bits = 32,
                    .data = r32 };
    FILE *f = fopen (tmp_path ("want.exr"), "wb");
    TG_CHECK (r32 && n_r32 > 0 && n_r32 % 36 == 0 && f);
    if (r32 && n_r32 > 0 && n_r32 % 36 == 0 && f)
      {
        float last;
        memcpy (&last, r32 + 32, 4);
        TG_CHECK (last == 2.0f);
        TG_CHECK_INT_EQ (tg_exr_write (f, &img, &err), 0);
      }
    if (f)
      fclose (f);
    want = read_bytes (tmp_path ("want.exr"), &n_want);
    TG_CHECK (exr && want && n_exr == n_want && n_exr > 0 && memcmp (exr, want, n_exr) == 0);
    free (r32);
    free (exr);
    free (want);
  }
  tg_graph_free (g);
}

/* --- export.splat ------------------------------------------------------------------------ */

/* Noise node ID (SEED, SCALE_M; OCTAVES unless NULL) into "splat".maskMASK. */
static void
add_noise_mask (TgGraph *g, const char *id, int seed, const char *scale_m, const char *octaves,
                int mask)
{
  char port[16];
  int n = add_node (g, id, "noise.fbm");

  SET (g, n, "seed", fmt (seed));
  SET (g, n, "scale_m", scale_m);
  if (octaves)
    SET (g, n, "octaves", octaves);
  snprintf (port, sizeof port, "mask%d", mask);
  add_link (g, id, "height", "splat", port);
}

/* export.splat "x" of "splat".layers with PRESET and parameter KEY = VALUE. */
static void
add_splat_export (TgGraph *g, const char *preset, const char *key, const char *value)
{
  int x = add_node (g, "x", "export.splat");

  SET (g, x, "preset", preset);
  SET (g, x, key, value);
  add_link (g, "splat", "layers", "x", "layers");
}

/* A splat of 6 layers (base + 5) from noise masks over RES samples. */
static TgGraph *
splat_graph (int res, const char *preset, const char *prefix)
{
  static const char *names[] = { "rock", "snow", "scree", "river", "moss" };
  TgGraph *g = new_graph (2000, 1500, res);
  int s = add_node (g, "splat", "texture.splat");

  SET (g, s, "layers", "name=rock|priority=2; name=snow|priority=4; name=scree|priority=1; "
                       "name=river|priority=5; name=moss|priority=0");
  for (int k = 0; k < 5; k++)
    {
      char id[16];
      snprintf (id, sizeof id, "n_%s", names[k]);
      add_noise_mask (g, id, k + 1, "300", NULL, k + 1);
    }
  add_splat_export (g, preset, "path", prefix);
  return g;
}

static void
test_splat_unity (void)
{
  TgGraph *g = splat_graph (129, "unity", "tex/splat");
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *w = pull (e, g, "splat", &r);
  TgError err = { 0 };
  TgImage f0 = { 0 }, f1 = { 0 };
  int rc;

  rc = export_all (g, tmp_path ("out3"), &err);
  TG_CHECK_MSG (rc == 0, "%s: %s", err.path, err.message);
  TG_CHECK (!exists (tmp_path ("out3/tex/splat_2.png")));
  if (tg_png_read (tmp_path ("out3/tex/splat_0.png"), &f0, &err) == 0
      && tg_png_read (tmp_path ("out3/tex/splat_1.png"), &f1, &err) == 0 && w)
    {
      const uint8_t *a = f0.data, *b = f1.data;
      int bad_sum = 0, bad_q = 0, bad_pad = 0;
      TG_CHECK_INT_EQ (f0.channels, 4);
      TG_CHECK_INT_EQ (f0.bits, 8);
      TG_CHECK_INT_EQ (f1.channels, 4);
      TG_CHECK_INT_EQ (f0.width, r.width);
      TG_CHECK_INT_EQ (f0.height, r.height);
      for (uint64_t k = 0; k < tg_region_samples (&r) && f0.channels == 4 && f1.channels == 4;
           k++)
        {
          int sum = 0;
          for (int c = 0; c < 8; c++)
            {
              int q = c < 4 ? a[4 * k + c] : b[4 * k + c - 4];
              sum += q;
              /* Layers 6 and 7 do not exist. */
              if (c >= 6)
                bad_pad += q != 0;
              /* Each byte is within one step of the weight. */
              else if (fabs (q - 255.0 * w->data[6 * k + c]) > 1.0 + 1e-3)
                bad_q++;
            }
          bad_sum += sum != 255;
        }
      TG_CHECK_INT_EQ (bad_sum, 0);
      TG_CHECK_INT_EQ (bad_q, 0);
      TG_CHECK_INT_EQ (bad_pad, 0);
    }
  else
    TG_CHECK_MSG (0, "reading splat maps: %s", err.message);
  tg_image_clear (&f0);
  tg_image_clear (&f1);
  if (w)
    tg_value_unref (w);
  tg_engine_free (e);
  tg_graph_free (g);
}

static void
test_splat_unreal (void)
{
  static const char *names[] = { "grass", "rock", "snow", "scree", "river", "moss" };
  TgGraph *g = splat_graph (65, "unreal", "ue/weights.png");
  TgError err = { 0 };
  uint8_t *maps[6] = { 0 };
  TgImage img[6] = { { 0 } };
  int rc, ok = 1;

  rc = export_all (g, tmp_path ("out4"), &err);
  TG_CHECK_MSG (rc == 0, "%s: %s", err.path, err.message);
  for (int k = 0; k < 6; k++)
    {
      char rel[64];
      snprintf (rel, sizeof rel, "out4/ue/weights_%s.png", names[k]);
      if (tg_png_read (tmp_path (rel), &img[k], &err) != 0 || img[k].channels != 1
          || img[k].bits != 8)
        {
          TG_CHECK_MSG (0, "%s: %s", rel, err.message);
          ok = 0;
        }
      maps[k] = img[k].data;
    }
  if (ok)
    {
      int bad = 0;
      for (int k = 0; k < img[0].width * img[0].height; k++)
        {
          int s = 0;
          for (int q = 0; q < 6; q++)
            s += maps[q][k];
          bad += s != 255;
        }
      TG_CHECK_INT_EQ (bad, 0);
    }
  for (int k = 0; k < 6; k++)
    tg_image_clear (&img[k]);
  tg_graph_free (g);
}

static void
test_splat_rounding_rule (void)
{
  /* b on top with 1/3, a below with 1/2 of the rest = 1/3, base 1/3:
   * 85 each (85.000001 in float still floors to 85 and sums to 255). */
  TgGraph *g = new_graph (100, 100, 2);
  TgError err = { 0 };
  TgImage back = { 0 };
  int n;

  /* b on top with 1/3, a below with 1/2 of the rest = 1/3, base 1/3. */
  n = add_node (g, "ma", "gen.constant");
  SET (g, n, "value", "0.5");
  n = add_node (g, "mb", "gen.constant");
  SET (g, n, "value", fmt (1.0 / 3.0));
  n = add_node (g, "splat", "texture.splat");
  SET (g, n, "layers", "name=a|priority=1; name=b|priority=2");
  add_link (g, "ma", "height", "splat", "mask1");
  add_link (g, "mb", "height", "splat", "mask2");
  n = add_node (g, "x", "export.splat");
  add_link (g, "splat", "layers", "x", "layers");
  TG_CHECK (export_all (g, tmp_path ("out5"), &err) == 0);
  if (tg_png_read (tmp_path ("out5/splat_0.png"), &back, &err) == 0)
    {
      const uint8_t *p = back.data;
      TG_CHECK_INT_EQ (p[0], 85);
      TG_CHECK_INT_EQ (p[1], 85);
      TG_CHECK_INT_EQ (p[2], 85);
      TG_CHECK_INT_EQ (p[3], 0);
      tg_image_clear (&back);
    }
  /* Halves: a = 0.5 on top, b = 0, base = 0.5: 127.5 each; the tie goes
   * to layer 0. */
  SET (g, tg_graph_find_node (g, "mb"), "value", "0");
  TG_CHECK (export_all (g, tmp_path ("out6"), &err) == 0);
  if (tg_png_read (tmp_path ("out6/splat_0.png"), &back, &err) == 0)
    {
      const uint8_t *p = back.data;
      TG_CHECK_INT_EQ (p[0], 128);
      TG_CHECK_INT_EQ (p[1], 127);
      TG_CHECK_INT_EQ (p[2], 0);
      tg_image_clear (&back);
    }
  tg_graph_free (g);
}

static void
test_splat_export_errors (void)
{
  TgGraph *g = splat_graph (17, "unity", "splat");
  TgError err = { 0 };
  int x = tg_graph_find_node (g, "x");

  TG_CHECK (set_param_err (g, x, "path", "../splat", &err) == TG_EPATH);
  TG_CHECK (set_param (g, x, "preset", "cryengine") < 0);
  /* A failing upstream node: nothing is written. */
  SET (g, tg_graph_find_node (g, "splat"), "layers", "name=a");
  memset (&err, 0, sizeof err);
  TG_CHECK (export_all (g, tmp_path ("out7"), &err) < 0);
  TG_CHECK_STR_CONTAINS (err.message, "mask2");
  TG_CHECK (!exists (tmp_path ("out7/splat_0.png")));
  tg_graph_free (g);
}

/* --- export.splat size pow2 -------------------------------------------------------------- */

/* A square world of RES samples with N_LAYERS layers (the base and
 * N_LAYERS - 1 noise masks), exported as PRESET at SIZE. */
static TgGraph *
splat_size_graph (int res, int n_layers, const char *preset, const char *size)
{
  TgGraph *g = new_graph (2000, 2000, res);
  char list[256] = "";
  int s = add_node (g, "splat", "texture.splat");

  for (int k = 1; k < n_layers; k++)
    {
      char id[16], entry[48];
      snprintf (entry, sizeof entry, "%sname=l%d|priority=%d", k > 1 ? "; " : "", k, k);
      strcat (list, entry);
      snprintf (id, sizeof id, "n%d", k);
      add_noise_mask (g, id, k + 10, "150", "2", k);
    }
  SET (g, s, "layers", list);
  add_splat_export (g, preset, "size", size);
  return g;
}

/* Reads the unity maps DIR/splat_F.png holding N_LAYERS layers into
 * IMG[0..]: each must be SIZE x SIZE RGBA8 and pass pngcheck when it is
 * installed, and every pixel's weights must sum to exactly 255, with 0
 * past the last layer.  True when all files read with that shape. */
static bool
check_unity_maps (const char *dir, int n_layers, int size, TgImage img[2])
{
  static int have_pngcheck = -1;
  int n_files = (n_layers + 3) / 4, bad_sum = 0, bad_pad = 0;
  TgError err = { 0 };

  if (have_pngcheck < 0)
    have_pngcheck = system ("command -v pngcheck > /dev/null 2>&1") == 0;
  for (int f = 0; f < n_files; f++)
    {
      char rel[256], cmd[1024];
      snprintf (rel, sizeof rel, "%s/splat_%d.png", dir, f);
      if (tg_png_read (tmp_path (rel), &img[f], &err) != 0)
        {
          TG_CHECK_MSG (0, "%s: %s", rel, err.message);
          return false;
        }
      TG_CHECK_INT_EQ (img[f].width, size);
      TG_CHECK_INT_EQ (img[f].height, size);
      TG_CHECK_INT_EQ (img[f].channels, 4);
      TG_CHECK_INT_EQ (img[f].bits, 8);
      if (img[f].width != size || img[f].height != size || img[f].channels != 4
          || img[f].bits != 8)
        return false;
      snprintf (cmd, sizeof cmd, "pngcheck -q '%s' > /dev/null", tmp_path (rel));
      if (have_pngcheck)
        TG_CHECK_MSG (system (cmd) == 0, "pngcheck %s", rel);
    }
  {
    char next[256];
    snprintf (next, sizeof next, "%s/splat_%d.png", dir, n_files);
    TG_CHECK (!exists (tmp_path (next)));
  }
  for (size_t k = 0; k < (size_t) size * (size_t) size; k++)
    {
      int sum = 0;
      for (int c = 0; c < 4 * n_files; c++)
        {
          int q = ((const uint8_t *) img[c / 4].data)[4 * k + (size_t) (c % 4)];
          sum += q;
          bad_pad += c >= n_layers && q != 0;
        }
      bad_sum += sum != 255;
    }
  TG_CHECK_INT_EQ (bad_sum, 0);
  TG_CHECK_INT_EQ (bad_pad, 0);
  return true;
}

/* 2^k + 1 samples give 2^k pixels, for 1, 4 and 8 layers (one and two
 * files), every pixel summing to 255; the same bytes on 1 and 4
 * threads. */
static void
test_splat_pow2_sizes_and_sums (void)
{
  static const struct
  {
    int res, layers, size;
  } cases[] = {
    { 1025, 8, 1024 }, { 513, 4, 512 }, { 2049, 1, 2048 }, { 513, 1, 512 }, { 513, 8, 512 },
  };

  for (int t = 0; t < TG_N_ELEMENTS (cases); t++)
    {
      TgGraph *g = splat_size_graph (cases[t].res, cases[t].layers, "unity", "pow2");
      TgImage img[2] = { { 0 } };
      TgError err = { 0 };
      char dir[64];
      int rc;

      snprintf (dir, sizeof dir, "pow2_%d_%d", cases[t].res, cases[t].layers);
      rc = export_threads (g, tmp_path (dir), 4, &err);
      TG_CHECK_MSG (rc == 0, "%s: %s: %s", dir, err.path, err.message);
      check_unity_maps (dir, cases[t].layers, cases[t].size, img);
      tg_image_clear (&img[0]);
      tg_image_clear (&img[1]);
      if (cases[t].res == 1025)
        {
          /* One thread writes the same bytes as four. */
          char one[80];
          snprintf (one, sizeof one, "%s_1", dir);
          TG_CHECK (export_threads (g, tmp_path (one), 1, &err) == 0);
          for (int f = 0; f < 2; f++)
            {
              char a[128], b[128];
              size_t la, lb;
              unsigned char *ba, *bb;
              snprintf (a, sizeof a, "%s/splat_%d.png", dir, f);
              snprintf (b, sizeof b, "%s/splat_%d.png", one, f);
              ba = read_bytes (tmp_path (a), &la);
              bb = read_bytes (tmp_path (b), &lb);
              TG_CHECK (ba && bb && la == lb && la > 0 && memcmp (ba, bb, la) == 0);
              free (ba);
              free (bb);
            }
        }
      tg_graph_free (g);
    }
}

/* Each pixel is within one step of 255 times the bilinear mix of the
 * four world samples around it (corner pixels on the world's corners),
 * in both presets; unreal's maps are 2^k square too. */
static void
test_splat_pow2_resamples_weights (void)
{
  TgGraph *g = splat_size_graph (65, 4, "unity", "pow2");
  TgEngine *e = new_engine (2);
  TgRegion r = world_region (g);
  TgValue *w = pull (e, g, "splat", &r);
  TgImage img[2] = { { 0 } }, ue = { 0 };
  TgError err = { 0 };

  TG_CHECK (export_threads (g, tmp_path ("pow2_65"), 2, &err) == 0);
  if (w && check_unity_maps ("pow2_65", 4, 64, img))
    {
      const uint8_t *q = img[0].data;
      int bad = 0;
      for (int j = 0; j < 64; j++)
        for (int i = 0; i < 64; i++)
          {
            double x = i * 64.0 / 63.0, y = j * 64.0 / 63.0;
            int x0 = (int) x, y0 = (int) y;
            int x1 = x0 < 64 ? x0 + 1 : x0, y1 = y0 < 64 ? y0 + 1 : y0;
            double fx = x - x0, fy = y - y0;
            for (int c = 0; c < 4; c++)
              {
                double v = (1 - fx) * (1 - fy) * px (w, x0, y0)[c] + fx * (1 - fy) * px (w, x1, y0)[c]
                           + (1 - fx) * fy * px (w, x0, y1)[c] + fx * fy * px (w, x1, y1)[c];
                bad += fabs (q[4 * (j * 64 + i) + c] - 255.0 * v) > 1.0 + 1e-3;
              }
          }
      TG_CHECK_INT_EQ (bad, 0);
      /* Corner pixels are the world's corner samples. */
      TG_CHECK (fabs (q[0] - 255.0 * px (w, 0, 0)[0]) <= 1.0);
      TG_CHECK (fabs (q[4 * 64 * 64 - 4] - 255.0 * px (w, 64, 64)[0]) <= 1.0);
    }
  tg_image_clear (&img[0]);
  SET (g, tg_graph_find_node (g, "x"), "preset", "unreal");
  TG_CHECK (export_threads (g, tmp_path ("pow2_65ue"), 2, &err) == 0);
  if (tg_png_read (tmp_path ("pow2_65ue/splat_l3.png"), &ue, &err) == 0)
    {
      TG_CHECK_INT_EQ (ue.width, 64);
      TG_CHECK_INT_EQ (ue.height, 64);
      TG_CHECK_INT_EQ (ue.channels, 1);
    }
  else
    TG_CHECK_MSG (0, "unreal pow2: %s", err.message);
  tg_image_clear (&ue);
  if (w)
    tg_value_unref (w);
  tg_engine_free (e);
  tg_graph_free (g);
}

/* A world whose samples are already a power of two writes the bytes of
 * size world; a world that is not square and a tile of a tiled build
 * are refused, naming the parameter. */
static void
test_splat_pow2_same_and_refused (void)
{
  TgGraph *g = splat_size_graph (64, 4, "unity", "pow2");
  TgError err = { 0 };
  size_t la = 0, lb = 0;
  unsigned char *a, *b;

  TG_CHECK (export_threads (g, tmp_path ("p64"), 2, &err) == 0);
  SET (g, tg_graph_find_node (g, "x"), "size", "world");
  TG_CHECK (export_threads (g, tmp_path ("w64"), 2, &err) == 0);
  a = read_bytes (tmp_path ("p64/splat_0.png"), &la);
  b = read_bytes (tmp_path ("w64/splat_0.png"), &lb);
  TG_CHECK (a && b && la > 0 && la == lb && memcmp (a, b, la) == 0);
  free (a);
  free (b);
  tg_graph_free (g);

  g = splat_size_graph (65, 4, "unity", "pow2");
  tg_graph_world (g)->size_z = 1000;
  memset (&err, 0, sizeof err);
  TG_CHECK (export_threads (g, tmp_path ("p65x33"), 2, &err) < 0);
  TG_CHECK_STR_CONTAINS (err.message, "params.size");
  TG_CHECK_STR_CONTAINS (err.message, "65x33");
  TG_CHECK (!exists (tmp_path ("p65x33/splat_0.png")));
  tg_graph_free (g);

  g = splat_size_graph (65, 4, "unity", "pow2");
  {
    TgEngine *e = new_engine (2);
    TgTiling t = { 2, 2, 1, 0 };
    TgEvalHooks h = { .tiling = &t, .encode_tiles = true };
    TgExportList *list = NULL;
    memset (&err, 0, sizeof err);
    TG_CHECK (tg_engine_export (e, g, tmp_path ("ptile"), &h, &list, NULL, &err) < 0);
    TG_CHECK_STR_CONTAINS (err.message, "tiled build");
    tg_export_list_free (list);
    tg_engine_free (e);
  }
  tg_graph_free (g);
}

/* --- export.heightmap r32 ------------------------------------------------------------------ */

static void
test_heightmap_r32 (void)
{
  TgGraph *g = new_graph (800, 400, 9);
  TgError err = { 0 };
  FILE *f;
  int n, rc;

  add_node (g, "ramp", "gen.gradient");
  n = add_node (g, "big", "math.combine"); /* 0 .. 2, unclamped */
  SET (g, n, "clamp", "false");
  add_link (g, "ramp", "height", "big", "a");
  add_link (g, "ramp", "height", "big", "b");
  n = add_node (g, "x", "export.heightmap");
  SET (g, n, "path", "h.r32");
  SET (g, n, "format", "r32");
  n = add_node (g, "north", "gen.gradient");
  SET (g, n, "angle_deg", "90");
  n = add_node (g, "xs", "export.heightmap");
  SET (g, n, "path", "hs.r32");
  SET (g, n, "format", "r32");
  SET (g, n, "rows", "south_first");
  add_link (g, "big", "height", "x", "height");
  add_link (g, "north", "height", "xs", "height");
  rc = export_all (g, tmp_path ("out8"), &err);
  TG_CHECK_MSG (rc == 0, "%s: %s", err.path, err.message);
  f = fopen (tmp_path ("out8/h.r32"), "rb");
  TG_CHECK (f != NULL);
  if (f)
    {
      unsigned char b[9 * 5 * 4 + 1];
      size_t len = fread (b, 1, sizeof b, f);
      int bad = 0;
      fclose (f);
      TG_CHECK_INT_EQ (len, 9 * 5 * 4);
      for (int k = 0; k < 45 && len == 180; k++)
        {
          uint32_t u = (uint32_t) b[4 * k] | (uint32_t) b[4 * k + 1] << 8
                       | (uint32_t) b[4 * k + 2] << 16 | (uint32_t) b[4 * k + 3] << 24;
          float v;
          memcpy (&v, &u, 4);
          bad += v != (float) (2.0 * (k % 9) / 8.0);
        }
      TG_CHECK_INT_EQ (bad, 0);
      /* The east edge is 2.0 = 0x40000000: not clamped. */
      TG_CHECK (b[32] == 0 && b[33] == 0 && b[34] == 0 && b[35] == 0x40);
    }
  /* South first: the file starts with the south row (0.0) and ends with
   * the north row (1.0 = 0x3f800000). */
  f = fopen (tmp_path ("out8/hs.r32"), "rb");
  TG_CHECK (f != NULL);
  if (f)
    {
      unsigned char b[180];
      size_t len = fread (b, 1, sizeof b, f);
      fclose (f);
      TG_CHECK_INT_EQ (len, 180);
      TG_CHECK (b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0);
      TG_CHECK (b[176] == 0 && b[177] == 0 && b[178] == 0x80 && b[179] == 0x3f);
    }
  tg_graph_free (g);
}

int
main (void)
{
  tmp_dir = tgtest_tmpdir ("tg_imgio_");
  if (!tmp_dir)
    return 1;
  if (tg_formats_init () != 0)
    return 1;
  TG_RUN (test_input_rgba16_corners_and_bilinear);
  TG_RUN (test_input_channel_layouts_raw);
  TG_RUN (test_input_missing_file);
  TG_RUN (test_image_round_trip);
  TG_RUN (test_mask_export);
  TG_RUN (test_splat_unity);
  TG_RUN (test_splat_unreal);
  TG_RUN (test_splat_rounding_rule);
  TG_RUN (test_splat_export_errors);
  TG_RUN (test_splat_pow2_sizes_and_sums);
  TG_RUN (test_splat_pow2_resamples_weights);
  TG_RUN (test_splat_pow2_same_and_refused);
  TG_RUN (test_heightmap_r32);
  return tgtest_result ();
}
