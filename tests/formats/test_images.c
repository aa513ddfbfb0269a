/* PNG and RAW: exact write -> read for every layout we write, stable bytes
 * (hashed), files that libpng reads on its own, the inputs artists hand
 * us (palette, low bit depth, transparency, gamma chunks), errors that
 * name the file and stay off stderr, and the writers registered with the
 * engine. */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <png.h>

#include <tgformats/tgformats.h>

#include "tgtest.h"

/* The test folder, from tgtest_tmpdir: removed when the program exits. */
static const char *tmpdir;

static const char *
tmp_path (const char *name)
{
  static char buf[4][512];
  static int k;
  char *b = buf[k++ & 3];
  snprintf (b, sizeof buf[0], "%s/%s", tmpdir, name);
  return b;
}

/* A w x h image whose every sample differs from its neighbours. */
static TgImage
pattern (int w, int h, int channels, int bits)
{
  TgImage img = { .width = w, .height = h, .channels = channels, .bits = bits };
  size_t n = (size_t) w * h * channels;

  img.data = malloc (n * (size_t) (bits / 8));
  for (size_t i = 0; i < n; i++)
    {
      uint32_t v = (uint32_t) (i * 2654435761u) >> 7;
      if (bits == 8)
        ((uint8_t *) img.data)[i] = (uint8_t) v;
      else if (bits == 16)
        ((uint16_t *) img.data)[i] = (uint16_t) v;
      else
        ((float *) img.data)[i] = (float) (v & 0xffff) / 65535.0f;
    }
  return img;
}

static int
write_png_file (const char *path, const TgImage *img, TgError *err)
{
  FILE *f = fopen (path, "wb");
  int rc;

  if (!f)
    return -1;
  rc = tg_png_write (f, img, err);
  fclose (f);
  return rc;
}

static void
sha_of_file (const char *path, char hex[65])
{
  TgError err = { 0 };
  TG_CHECK_INT_EQ (tg_sha256_file (path, hex, &err), 0);
}

/* The chunk names of a PNG file, "IHDR IDAT IEND". */
static void
chunk_list (const char *path, char *out, size_t size)
{
  FILE *f = fopen (path, "rb");
  unsigned char hdr[8];
  size_t used = 0;

  out[0] = '\0';
  if (!f)
    return;
  fseek (f, 8, SEEK_SET);
  while (fread (hdr, 1, 8, f) == 8)
    {
      uint32_t len = (uint32_t) hdr[0] << 24 | hdr[1] << 16 | hdr[2] << 8 | hdr[3];
      if (used + 6 < size && !(used >= 5 && strncmp (out + used - 5, (char *) hdr + 4, 4) == 0))
        used += (size_t) snprintf (out + used, size - used, "%s%.4s", used ? " " : "", hdr + 4);
      fseek (f, (long) len + 4, SEEK_CUR);
    }
  fclose (f);
}

static void
test_png_round_trip_exact (void)
{
  static const struct
  {
    int channels, bits;
  } cases[] = { { 1, 8 }, { 1, 16 }, { 2, 8 }, { 2, 16 }, { 3, 8 }, { 3, 16 }, { 4, 8 }, { 4, 16 } };

  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    {
      TgImage img = pattern (37, 23, cases[c].channels, cases[c].bits), back = { 0 };
      TgError err = { 0 };
      const char *path = tmp_path ("rt.png");
      char chunks[128];

      TG_CHECK_INT_EQ (write_png_file (path, &img, &err), 0);
      TG_CHECK_INT_EQ (tg_png_read (path, &back, &err), 0);
      TG_CHECK_INT_EQ (back.width, 37);
      TG_CHECK_INT_EQ (back.height, 23);
      TG_CHECK_INT_EQ (back.channels, cases[c].channels);
      TG_CHECK_INT_EQ (back.bits, cases[c].bits);
      TG_CHECK_MSG (back.data && memcmp (back.data, img.data, tg_image_bytes (&img)) == 0,
                    "%d channels, %d bits: samples differ", cases[c].channels, cases[c].bits);
      /* Nothing that depends on the time or the machine. */
      chunk_list (path, chunks, sizeof chunks);
      TG_CHECK_MSG (strcmp (chunks, "IHDR IDAT IEND") == 0, "chunks: %s", chunks);
      tg_image_clear (&back);
      free (img.data);
    }
}

/* The same image always gives the same bytes; the digests pin them (zlib
 * 1.2.13 on Debian 12; another zlib may deflate differently).  Changed
 * once when the fast writer began deflating strips side by side. */
static void
test_png_bytes_stable (void)
{
  static const struct
  {
    int channels, bits;
    const char *sha;
  } cases[] = {
    { 1, 16, "b23a00b36d32d1650ab8207c6ca9cd6c684d2dad64aab88a0866d9707f2be509" },
    { 1, 8, "29e4b1dc8ec87eac3dd1cfc224246b0ac722397265f2364dd5fac854842ba667" },
    { 4, 8, "4f719c09e4cafa9fc52cd05b0725fa452f7d1814c2c2ad1b339b8c1f63e6bf56" },
  };

  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    {
      TgImage img = pattern (64, 48, cases[c].channels, cases[c].bits);
      TgError err = { 0 };
      char a[65], b[65];

      TG_CHECK_INT_EQ (write_png_file (tmp_path ("a.png"), &img, &err), 0);
      TG_CHECK_INT_EQ (write_png_file (tmp_path ("b.png"), &img, &err), 0);
      sha_of_file (tmp_path ("a.png"), a);
      sha_of_file (tmp_path ("b.png"), b);
      TG_CHECK (strcmp (a, b) == 0);
      TG_CHECK_MSG (strcmp (a, cases[c].sha) == 0, "%d ch %d bit: sha256 %s", cases[c].channels,
                    cases[c].bits, a);
      free (img.data);
    }
}

/* The `small` writers (zlib 9, every filter) store the same pixels as the
 * fast default in fewer bytes, on an image like a terrain map: smooth
 * slopes with fine detail (on a perfectly smooth gradient the Up filter
 * alone wins, and so does the fast writer). */
static void
test_png_small_same_pixels (void)
{
  static const struct
  {
    const char *fast, *small;
    int channels, bits;
  } cases[] = { { "png16", "png16.small", 1, 16 }, { "png8", "png8.small", 4, 8 } };

  TG_CHECK_INT_EQ (tg_formats_init (), 0);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    {
      TgImage img = { .width = 200, .height = 150, .channels = cases[c].channels,
                      .bits = cases[c].bits };
      size_t n = (size_t) img.width * img.height * img.channels;
      const char *names[2] = { cases[c].fast, cases[c].small };
      TgImage back[2] = { { 0 } };
      long size[2] = { 0, 0 };
      char sha[2][65];

      img.data = malloc (n * (size_t) (img.bits / 8));
      for (size_t i = 0; i < n; i++)
        {
          double x = (double) (i / img.channels % img.width), y = (double) (i / img.channels
                                                                            / img.width);
          double grain = (double) ((uint32_t) (i * 2654435761u) >> 24) / 255.0;
          double v = 0.45 + 0.25 * sin (x * 0.05 + (double) (i % img.channels))
                     + 0.2 * cos (y * 0.07) + 0.04 * grain;
          if (img.bits == 16)
            ((uint16_t *) img.data)[i] = (uint16_t) (v * 65535.0);
          else
            ((uint8_t *) img.data)[i] = (uint8_t) (v * 255.0);
        }
      for (int k = 0; k < 2; k++)
        {
          TgImageWriter w = tg_io_image_writer (names[k]);
          TgError err = { 0 };
          const char *path = tmp_path (k ? "small.png" : "fast.png");
          FILE *f = fopen (path, "wb");
          TG_CHECK (w != NULL && f != NULL);
          if (!w || !f)
            return;
          TG_CHECK_INT_EQ (w (f, &img, &err), 0);
          fclose (f);
          sha_of_file (path, sha[k]);
          f = fopen (path, "rb");
          fseek (f, 0, SEEK_END);
          size[k] = ftell (f);
          fclose (f);
          TG_CHECK_INT_EQ (tg_png_read (path, &back[k], &err), 0);
        }
      TG_CHECK (back[0].data && back[1].data
                && memcmp (back[0].data, img.data, n * (size_t) (img.bits / 8)) == 0
                && memcmp (back[1].data, img.data, n * (size_t) (img.bits / 8)) == 0);
      TG_CHECK_MSG (strcmp (sha[0], sha[1]) != 0, "%s and %s wrote the same bytes", names[0],
                    names[1]);
      TG_CHECK_MSG (size[1] < size[0], "%s: %ld bytes, %s: %ld", names[1], size[1], names[0],
                    size[0]);
      tg_image_clear (&back[0]);
      tg_image_clear (&back[1]);
      free (img.data);
    }
}

/* Rows [Y, Y + N) of the TgImage USER, for a writer on rows. */
static int
rows_of_image (void *user, int y, int n, void *dst, TgError *err)
{
  const TgImage *img = user;
  size_t stride = (size_t) img->width * (size_t) img->channels * (size_t) (img->bits / 8);

  (void) err;
  memcpy (dst, (const char *) img->data + (size_t) y * stride, (size_t) n * stride);
  return 0;
}

/* IDAT chunks of the PNG at PATH; -1 when it cannot be read. */
static int
count_idat (const char *path)
{
  FILE *f = fopen (path, "rb");
  unsigned char hdr[8];
  int n = 0;

  if (!f)
    return -1;
  fseek (f, 8, SEEK_SET);
  while (fread (hdr, 1, 8, f) == 8)
    {
      uint32_t len = (uint32_t) hdr[0] << 24 | hdr[1] << 16 | hdr[2] << 8 | hdr[3];
      n += memcmp (hdr + 4, "IDAT", 4) == 0;
      fseek (f, (long) len + 4, SEEK_CUR);
    }
  fclose (f);
  return n;
}

/* libpng on its own (no transforms) reads PATH as IMG (16-bit, COLOR_TYPE)
 * with big-endian samples equal to IMG's, and no gamma or time chunk. */
static void
libpng_reads_back (const char *path, const TgImage *img, int color_type)
{
  FILE *f = fopen (path, "rb");
  png_structp png;
  png_infop info;
  png_bytepp rows;
  size_t row_samples = (size_t) img->width * img->channels;
  bool same = true;

  TG_CHECK (f != NULL);
  if (!f)
    return;
  png = png_create_read_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  info = png_create_info_struct (png);
  if (setjmp (png_jmpbuf (png)))
    {
      TG_CHECK_MSG (0, "libpng failed to read our PNG");
      png_destroy_read_struct (&png, &info, NULL);
      fclose (f);
      return;
    }
  png_init_io (png, f);
  png_read_png (png, info, PNG_TRANSFORM_IDENTITY, NULL);
  TG_CHECK_INT_EQ ((int) png_get_image_width (png, info), img->width);
  TG_CHECK_INT_EQ ((int) png_get_image_height (png, info), img->height);
  TG_CHECK_INT_EQ (png_get_bit_depth (png, info), 16);
  TG_CHECK_INT_EQ (png_get_color_type (png, info), color_type);
  TG_CHECK (!png_get_valid (png, info, PNG_INFO_gAMA));
  TG_CHECK (!png_get_valid (png, info, PNG_INFO_tIME));
  if ((int) png_get_image_width (png, info) == img->width
      && (int) png_get_image_height (png, info) == img->height)
    {
      rows = png_get_rows (png, info);
      for (int y = 0; y < img->height; y++)
        for (size_t x = 0; x < row_samples; x++)
          same = same
                 && ((const uint16_t *) img->data)[(size_t) y * row_samples + x]
                      == (uint16_t) (rows[y][2 * x] << 8 | rows[y][2 * x + 1]);
    }
  TG_CHECK_MSG (same, "samples differ from what libpng reads");
  png_destroy_read_struct (&png, &info, NULL);
  fclose (f);
}

/* An image of many strips (2048 x 500 RGBA16: 31 rows a strip, 16 strips
 * a batch, so two batches) is one zlib stream that libpng and our reader
 * take back sample for sample, an IDAT a strip; the same bytes whole and
 * a band at a time through a rows callback, pinned by a digest. */
static void
test_png_strips_join_into_one_stream (void)
{
  TgImage img = pattern (2048, 500, 4, 16), back = { 0 };
  TgImageRows rows = { .width = 2048, .height = 500, .channels = 4, .bits = 16,
                       .rows = rows_of_image, .user = &img };
  const char *whole = tmp_path ("strips.png"), *banded = tmp_path ("strips-rows.png");
  TgImageRowsWriter w;
  TgError err = { 0 };
  char a[65], b[65];
  FILE *f;

  TG_CHECK_INT_EQ (write_png_file (whole, &img, &err), 0);
  TG_CHECK_INT_EQ (tg_formats_init (), 0);
  w = tg_io_image_rows_writer ("png16");
  TG_CHECK (w != NULL && (f = fopen (banded, "wb")) != NULL);
  if (!w || !f)
    return;
  TG_CHECK_INT_EQ (w (f, &rows, &err), 0);
  fclose (f);
  sha_of_file (whole, a);
  sha_of_file (banded, b);
  TG_CHECK_MSG (strcmp (a, b) == 0, "whole %s, in bands %s", a, b);
  TG_CHECK_MSG (strcmp (a, "430a4884fb6f95a8ab39e1dbee3f49a372b22e733ea2e6c20dba248eadd209ee") == 0, "sha256 %s", a);
  TG_CHECK_INT_EQ (count_idat (whole), 17);

  TG_CHECK_INT_EQ (tg_png_read (whole, &back, &err), 0);
  TG_CHECK (back.width == 2048 && back.height == 500 && back.channels == 4 && back.bits == 16
            && memcmp (back.data, img.data, (size_t) 2048 * 500 * 4 * 2) == 0);
  tg_image_clear (&back);

  libpng_reads_back (whole, &img, PNG_COLOR_TYPE_RGB_ALPHA);
  free (img.data);
}

/* libpng on its own (no transforms) sees big-endian 16-bit samples equal
 * to ours, the right colour type and no gamma. */
static void
test_png_reads_back_with_libpng (void)
{
  TgImage img = pattern (19, 11, 1, 16);
  TgError err = { 0 };
  const char *path = tmp_path ("libpng.png");

  TG_CHECK_INT_EQ (write_png_file (path, &img, &err), 0);
  libpng_reads_back (path, &img, PNG_COLOR_TYPE_GRAY);
  free (img.data);
}

/* Writes a PNG with libpng directly, in layouts we do not write ourselves. */
static void
write_with_libpng_ex (const char *path, int w, int h, int depth, int ctype,
                      const uint8_t *rows_data, size_t stride, const png_color *palette,
                      int n_palette, const uint8_t *trans, int n_trans, double gamma, int interlace)
{
  FILE *f = fopen (path, "wb");
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png_create_info_struct (png);

  if (setjmp (png_jmpbuf (png)))
    {
      TG_CHECK_MSG (0, "libpng could not write the test input");
      png_destroy_write_struct (&png, &info);
      fclose (f);
      return;
    }
  png_init_io (png, f);
  png_set_IHDR (png, info, (png_uint_32) w, (png_uint_32) h, depth, ctype, interlace,
                PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (palette)
    png_set_PLTE (png, info, palette, n_palette);
  if (trans)
    png_set_tRNS (png, info, trans, n_trans, NULL);
  if (gamma > 0)
    png_set_gAMA (png, info, gamma);
  if (gamma < 0)
    png_set_sRGB_gAMA_and_cHRM (png, info, PNG_sRGB_INTENT_PERCEPTUAL);
  {
    /* A text chunk, which a test corrupts to make libpng warn. */
    png_text text = { .compression = PNG_TEXT_COMPRESSION_NONE, .key = "Comment",
                      .text = "made by the test" };
    png_set_text (png, info, &text, 1);
  }
  png_write_info (png, info);
  {
    png_bytep *rows = malloc (sizeof *rows * (size_t) h);
    for (int y = 0; y < h; y++)
      rows[y] = (png_bytep) rows_data + (size_t) y * stride;
    /* png_write_image runs the Adam7 passes for interlaced files. */
    png_write_image (png, rows);
    free (rows);
  }
  png_write_end (png, NULL);
  png_destroy_write_struct (&png, &info);
  fclose (f);
}

static void
write_with_libpng (const char *path, int w, int h, int depth, int ctype, const uint8_t *rows_data,
                   size_t stride, const png_color *palette, int n_palette,
                   const uint8_t *trans, int n_trans, double gamma)
{
  write_with_libpng_ex (path, w, h, depth, ctype, rows_data, stride, palette, n_palette, trans,
                        n_trans, gamma, PNG_INTERLACE_NONE);
}

static void
test_png_reads_palette_lowbit_and_transparency (void)
{
  const png_color pal[3] = { { 255, 0, 0 }, { 0, 0, 255 }, { 0, 128, 0 } };
  const uint8_t alpha[3] = { 255, 128, 0 };
  /* 4 pixels per row at 2 bits: indices 0 1 2 1 */
  const uint8_t idx_rows[2] = { 0x19, 0x19 };
  /* 1-bit grey: 1 0 1 1 0 0 0 0 */
  const uint8_t bit_rows[1] = { 0xb0 };
  /* 8-bit grey with 17 / 200 / 255 and a gamma chunk that must be ignored */
  const uint8_t grey_rows[3] = { 17, 200, 255 };
  TgImage img = { 0 };
  TgError err = { 0 };

  write_with_libpng (tmp_path ("pal.png"), 4, 2, 2, PNG_COLOR_TYPE_PALETTE, idx_rows, 1, pal, 3,
                     NULL, 0, 0);
  TG_CHECK_INT_EQ (tg_png_read (tmp_path ("pal.png"), &img, &err), 0);
  TG_CHECK (img.channels == 3 && img.bits == 8 && img.width == 4 && img.height == 2);
  if (img.data)
    {
      const uint8_t want[12] = { 255, 0, 0, 0, 0, 255, 0, 128, 0, 0, 0, 255 };
      TG_CHECK (memcmp (img.data, want, 12) == 0);
    }
  tg_image_clear (&img);

  write_with_libpng (tmp_path ("palt.png"), 4, 2, 2, PNG_COLOR_TYPE_PALETTE, idx_rows, 1, pal, 3,
                     alpha, 3, 0);
  TG_CHECK_INT_EQ (tg_png_read (tmp_path ("palt.png"), &img, &err), 0);
  TG_CHECK (img.channels == 4 && img.bits == 8);
  if (img.data)
    {
      const uint8_t want[8] = { 255, 0, 0, 255, 0, 0, 255, 128 };
      TG_CHECK (memcmp (img.data, want, 8) == 0);
    }
  tg_image_clear (&img);

  write_with_libpng (tmp_path ("bit.png"), 8, 1, 1, PNG_COLOR_TYPE_GRAY, bit_rows, 1, NULL, 0,
                     NULL, 0, 0);
  TG_CHECK_INT_EQ (tg_png_read (tmp_path ("bit.png"), &img, &err), 0);
  TG_CHECK (img.channels == 1 && img.bits == 8 && img.width == 8);
  if (img.data)
    {
      const uint8_t want[8] = { 255, 0, 255, 255, 0, 0, 0, 0 };
      TG_CHECK (memcmp (img.data, want, 8) == 0);
    }
  tg_image_clear (&img);

  /* Linear gamma (gAMA 1.0), and sRGB with its gAMA and cHRM: the stored
   * values come back whatever the file says about them. */
  write_with_libpng (tmp_path ("gamma.png"), 3, 1, 8, PNG_COLOR_TYPE_GRAY, grey_rows, 3, NULL, 0,
                     NULL, 0, 1.0);
  TG_CHECK_INT_EQ (tg_png_read (tmp_path ("gamma.png"), &img, &err), 0);
  TG_CHECK (img.data && memcmp (img.data, grey_rows, 3) == 0);
  tg_image_clear (&img);
  write_with_libpng (tmp_path ("srgb.png"), 3, 1, 8, PNG_COLOR_TYPE_GRAY, grey_rows, 3, NULL, 0,
                     NULL, 0, -1);
  TG_CHECK_INT_EQ (tg_png_read (tmp_path ("srgb.png"), &img, &err), 0);
  TG_CHECK (img.data && memcmp (img.data, grey_rows, 3) == 0);
  tg_image_clear (&img);

  /* Interlaced (Adam7) 16-bit grey+alpha, big-endian in the file. */
  {
    uint8_t be[13 * 9 * 4];
    bool same = true;
    for (int i = 0; i < 13 * 9 * 2; i++)
      {
        be[2 * i] = (uint8_t) (i * 7);
        be[2 * i + 1] = (uint8_t) (i * 13 + 1);
      }
    write_with_libpng_ex (tmp_path ("adam7.png"), 13, 9, 16, PNG_COLOR_TYPE_GRAY_ALPHA, be, 13 * 4,
                          NULL, 0, NULL, 0, 0, PNG_INTERLACE_ADAM7);
    TG_CHECK_INT_EQ (tg_png_read (tmp_path ("adam7.png"), &img, &err), 0);
    TG_CHECK (img.channels == 2 && img.bits == 16 && img.width == 13 && img.height == 9);
    for (int i = 0; img.data && i < 13 * 9 * 2; i++)
      same = same && ((uint16_t *) img.data)[i] == (uint16_t) (be[2 * i] << 8 | be[2 * i + 1]);
    TG_CHECK_MSG (img.data && same, "interlaced samples differ");
    tg_image_clear (&img);
  }
}

/* Runs FN with stderr sent to a file and returns what it printed. */
static size_t
stderr_bytes_during (void (*fn) (void *), void *user)
{
  int saved = dup (2), fd;
  off_t n;

  fflush (stderr);
  fd = open (tmp_path ("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2 (fd, 2);
  close (fd);
  fn (user);
  fflush (stderr);
  dup2 (saved, 2);
  close (saved);
  fd = open (tmp_path ("stderr.txt"), O_RDONLY);
  n = lseek (fd, 0, SEEK_END);
  close (fd);
  return (size_t) n;
}

typedef struct
{
  const char *path;
  int rc;
  TgError err;
} ReadJob;

static void
read_job (void *user)
{
  ReadJob *j = user;
  TgImage img = { 0 };
  j->rc = tg_png_read (j->path, &img, &j->err);
  tg_image_clear (&img);
}

/* The header alone says what a read would give (expanded palettes and low
 * bit depths included), through the reader registered for ".png" too. */
static void
test_png_info_matches_read (void)
{
  const png_color pal[3] = { { 255, 0, 0 }, { 0, 0, 255 }, { 0, 128, 0 } };
  const uint8_t idx_rows[2] = { 0x19, 0x19 };
  TgImage img = pattern (37, 23, 2, 16), info, back = { 0 };
  TgError err = { 0 };

  TG_CHECK_INT_EQ (write_png_file (tmp_path ("info.png"), &img, &err), 0);
  TG_CHECK_INT_EQ (tg_png_read_info (tmp_path ("info.png"), &info, &err), 0);
  TG_CHECK (info.width == 37 && info.height == 23 && info.channels == 2 && info.bits == 16);
  TG_CHECK (info.data == NULL);
  free (img.data);

  write_with_libpng (tmp_path ("infopal.png"), 4, 2, 2, PNG_COLOR_TYPE_PALETTE, idx_rows, 1, pal,
                     3, NULL, 0, 0);
  TG_CHECK_INT_EQ (tg_formats_init (), 0);
  TG_CHECK_INT_EQ (tg_io_read_image_info (tmp_path ("infopal.png"), &info, &err), 0);
  TG_CHECK_INT_EQ (tg_png_read (tmp_path ("infopal.png"), &back, &err), 0);
  TG_CHECK (info.width == back.width && info.height == back.height);
  TG_CHECK (info.channels == back.channels && info.bits == back.bits && info.data == NULL);
  tg_image_clear (&back);

  /* Not a PNG: the same refusal as a read. */
  TG_CHECK_INT_EQ (tg_png_read_info (tmp_path ("absent.png"), &info, &err), TG_EIO);
}

static void
test_png_read_errors (void)
{
  TgImage img = pattern (40, 40, 1, 16), back = { 0 };
  TgError err = { 0 };
  ReadJob job = { 0 };
  FILE *f;
  long size;
  char *bytes;

  /* Missing file */
  TG_CHECK_INT_EQ (tg_png_read (tmp_path ("nope.png"), &back, &err), TG_EIO);
  TG_CHECK_STR_CONTAINS (err.message, "nope.png");

  /* Not a PNG */
  f = fopen (tmp_path ("text.png"), "wb");
  fputs ("hello, not a png at all", f);
  fclose (f);
  TG_CHECK_INT_EQ (tg_png_read (tmp_path ("text.png"), &back, &err), TG_EFORMAT);
  TG_CHECK_STR_CONTAINS (err.message, "text.png is not a PNG file");

  /* Truncated in the middle of the image data, and a corrupted CRC: an
   * error naming the file, nothing on stderr, no crash. */
  TG_CHECK_INT_EQ (write_png_file (tmp_path ("full.png"), &img, &err), 0);
  f = fopen (tmp_path ("full.png"), "rb");
  fseek (f, 0, SEEK_END);
  size = ftell (f);
  rewind (f);
  bytes = malloc ((size_t) size);
  TG_CHECK (fread (bytes, 1, (size_t) size, f) == (size_t) size);
  fclose (f);

  f = fopen (tmp_path ("trunc.png"), "wb");
  fwrite (bytes, 1, (size_t) size / 2, f);
  fclose (f);
  job.path = tmp_path ("trunc.png");
  TG_CHECK_INT_EQ (stderr_bytes_during (read_job, &job), 0);
  TG_CHECK_INT_EQ (job.rc, TG_EFORMAT);
  TG_CHECK_STR_CONTAINS (job.err.message, "trunc.png: ");

  bytes[40] ^= 0x55; /* inside IDAT: the zlib stream or CRC breaks */
  f = fopen (tmp_path ("crc.png"), "wb");
  fwrite (bytes, 1, (size_t) size, f);
  fclose (f);
  job.path = tmp_path ("crc.png");
  TG_CHECK_INT_EQ (stderr_bytes_during (read_job, &job), 0);
  TG_CHECK (job.rc < 0);
  TG_CHECK_STR_CONTAINS (job.err.message, "crc.png: ");

  free (bytes);
  free (img.data);
}

/* A broken ancillary chunk is something libpng warns about and reads
 * past: the image loads and nothing is printed. */
static void
test_png_warnings_stay_quiet (void)
{
  const uint8_t grey[4] = { 1, 2, 3, 4 };
  ReadJob job = { 0 };
  FILE *f;
  long size;
  char *bytes, *text;

  write_with_libpng (tmp_path ("warn.png"), 4, 1, 8, PNG_COLOR_TYPE_GRAY, grey, 4, NULL, 0, NULL,
                     0, 0);
  f = fopen (tmp_path ("warn.png"), "rb");
  fseek (f, 0, SEEK_END);
  size = ftell (f);
  rewind (f);
  bytes = malloc ((size_t) size);
  TG_CHECK (fread (bytes, 1, (size_t) size, f) == (size_t) size);
  fclose (f);
  text = NULL;
  for (long i = 0; i + 16 <= size && !text; i++)
    if (memcmp (bytes + i, "made by the test", 16) == 0)
      text = bytes + i;
  TG_CHECK (text != NULL);
  if (text)
    text[0] ^= 0x20; /* the tEXt CRC no longer matches */
  f = fopen (tmp_path ("warn.png"), "wb");
  fwrite (bytes, 1, (size_t) size, f);
  fclose (f);
  free (bytes);

  job.path = tmp_path ("warn.png");
  TG_CHECK_INT_EQ (stderr_bytes_during (read_job, &job), 0);
  TG_CHECK_MSG (job.rc == 0, "%s", job.err.message);
}

static void
test_png_write_rejects_bad_images (void)
{
  TgImage img = pattern (4, 4, 1, 32);
  TgError err = { 0 };
  FILE *f = fopen (tmp_path ("bad.png"), "wb");

  TG_CHECK_INT_EQ (tg_png_write (f, &img, &err), TG_EFORMAT);
  TG_CHECK_STR_CONTAINS (err.message, "not float");
  img.bits = 16;
  img.channels = 5;
  TG_CHECK_INT_EQ (tg_png_write (f, &img, &err), TG_EFORMAT);
  img.channels = 1;
  img.width = 0;
  TG_CHECK_INT_EQ (tg_png_write (f, &img, &err), TG_EINVAL);
  fclose (f);
  free (img.data);
}

/* Writers quantise floats exactly as exports do (tg_quantise): one rule,
 * over a sweep of float bit patterns in [0, 1] and the halfway points
 * where float and double rounding part. */
static void
test_writers_quantise_like_exports (void)
{
  TgImageWriter w16 = tg_formats_init () == 0 ? tg_io_image_writer ("raw16") : NULL;
  const uint32_t one = 0x3f800000u, stride = 1021;
  int n = ((int) (one / stride) + 65536 + 2 + 1023) / 1024 * 1024, k = 0, bad = 0;
  float *v = calloc ((size_t) n, sizeof (float));
  uint8_t *got = malloc (2 * (size_t) n);
  TgImage img = { .width = 1024, .height = n / 1024, .channels = 1, .bits = 32, .data = v };
  TgError err = { 0 };
  FILE *f;

  TG_CHECK (w16 != NULL && v != NULL && got != NULL);
  if (!w16 || !v || !got)
    goto out;
  for (uint32_t b = 0; b < one; b += stride)
    memcpy (&v[k++], &b, sizeof (float));
  for (int q = 0; q < 65536; q++)
    v[k++] = (float) ((q + 0.5) / 65535.0);
  v[k++] = 1.0f;
  v[k++] = -0.0f;
  f = fopen (tmp_path ("q.r16"), "wb");
  TG_CHECK_INT_EQ (w16 (f, &img, &err), 0);
  fclose (f);
  f = fopen (tmp_path ("q.r16"), "rb");
  TG_CHECK_INT_EQ (fread (got, 2, (size_t) n, f), n);
  fclose (f);
  for (int i = 0; i < k; i++)
    bad += (unsigned) (got[2 * i] | got[2 * i + 1] << 8) != tg_quantise (v[i], 65535.0);
  TG_CHECK_MSG (bad == 0, "%d of %d samples quantised unlike the exports", bad, k);
out:
  free (v);
  free (got);
}

/* Every format an export node offers has a writer: the node's list and
 * the writers formats/ registers cannot drift apart. */
static void
test_every_export_format_has_a_writer (void)
{
  int checked = 0;

  TG_CHECK_INT_EQ (tg_formats_init (), 0);
  for (int i = 0; i < tg_registry_count (); i++)
    {
      const TgNodeDesc *d = tg_registry_get (i);
      int k = tg_node_desc_find_param (d, "format");
      if (!(d->flags & TG_NODE_EXPORT) || k < 0 || d->n_inputs < 1)
        continue;
      TG_CHECK (d->params[k].type == TG_PARAM_ENUM && d->params[k].choices);
      checked++;
      for (const char *const *c = d->params[k].choices; c && *c; c++)
        {
          bool ok;
          switch (d->inputs[0].type)
            {
            case TG_TYPE_MESH:
              ok = tg_io_mesh_writer (*c) != NULL;
              break;
            case TG_TYPE_POINTS:
              ok = tg_io_points_writer (*c) != NULL;
              break;
            default:
              ok = tg_io_image_writer (*c) != NULL;
              break;
            }
          TG_CHECK_MSG (ok, "%s offers format \"%s\", which has no writer", d->type, *c);
        }
    }
  /* heightmap, mask, image, mesh, points at least */
  TG_CHECK_MSG (checked >= 5, "only %d export nodes with a format", checked);
}

static void
test_raw_bytes_exact (void)
{
  const uint16_t s16[6] = { 0, 1, 0x1234, 0xfedc, 65535, 256 };
  const float s32[3] = { 1.0f, -2.5f, 0.0f };
  const uint8_t want16[12] = { 0, 0, 1, 0, 0x34, 0x12, 0xdc, 0xfe, 0xff, 0xff, 0, 1 };
  const uint8_t want32[12] = { 0, 0, 0x80, 0x3f, 0, 0, 0x20, 0xc0, 0, 0, 0, 0 };
  TgImage a = { .width = 3, .height = 2, .channels = 1, .bits = 16, .data = (void *) s16 };
  TgImage b = { .width = 3, .height = 1, .channels = 1, .bits = 32, .data = (void *) s32 };
  TgError err = { 0 };
  uint8_t got[64];
  FILE *f;

  f = fopen (tmp_path ("a.raw"), "wb");
  TG_CHECK_INT_EQ (tg_raw_write (f, &a, &err), 0);
  fclose (f);
  f = fopen (tmp_path ("a.raw"), "rb");
  TG_CHECK_INT_EQ (fread (got, 1, sizeof got, f), 12);
  fclose (f);
  TG_CHECK (memcmp (got, want16, 12) == 0);

  f = fopen (tmp_path ("b.r32"), "wb");
  TG_CHECK_INT_EQ (tg_raw_write (f, &b, &err), 0);
  fclose (f);
  f = fopen (tmp_path ("b.r32"), "rb");
  TG_CHECK_INT_EQ (fread (got, 1, sizeof got, f), 12);
  fclose (f);
  TG_CHECK (memcmp (got, want32, 12) == 0);

  /* 8-bit is not a RAW layout. */
  a.bits = 8;
  f = fopen (tmp_path ("c.raw"), "wb");
  TG_CHECK_INT_EQ (tg_raw_write (f, &a, &err), TG_EFORMAT);
  fclose (f);

  /* A large image goes through the buffer in several writes. */
  {
    TgImage big = pattern (301, 257, 1, 16);
    TgSha256 s;
    uint8_t d1[32], d2[32];
    uint8_t *le = malloc ((size_t) 301 * 257 * 2);
    char *file;
    size_t n;

    for (size_t i = 0; i < (size_t) 301 * 257; i++)
      {
        uint16_t v = ((uint16_t *) big.data)[i];
        le[2 * i] = (uint8_t) v;
        le[2 * i + 1] = (uint8_t) (v >> 8);
      }
    f = fopen (tmp_path ("big.raw"), "wb");
    TG_CHECK_INT_EQ (tg_raw_write (f, &big, &err), 0);
    fclose (f);
    file = malloc ((size_t) 301 * 257 * 2 + 16);
    f = fopen (tmp_path ("big.raw"), "rb");
    n = fread (file, 1, (size_t) 301 * 257 * 2 + 16, f);
    fclose (f);
    TG_CHECK_INT_EQ (n, (size_t) 301 * 257 * 2);
    tg_sha256_init (&s);
    tg_sha256_update (&s, le, (size_t) 301 * 257 * 2);
    tg_sha256_final (&s, d1);
    tg_sha256_init (&s);
    tg_sha256_update (&s, file, n);
    tg_sha256_final (&s, d2);
    TG_CHECK (memcmp (d1, d2, 32) == 0);
    free (file);
    free (le);
    free (big.data);
  }
}

static void *
init_thread (void *arg)
{
  (void) arg;
  return (void *) (intptr_t) tg_formats_init ();
}

static void
test_formats_init_registers_writers (void)
{
  pthread_t t[4];
  const float px[4] = { 0.0f, 0.5f, 1.0f, 2.0f };
  TgImage img = { .width = 2, .height = 2, .channels = 1, .bits = 32, .data = (void *) px }, back = { 0 };
  TgError err = { 0 };
  uint8_t raw[16];
  FILE *f;

  for (int i = 0; i < 4; i++)
    pthread_create (&t[i], NULL, init_thread, NULL);
  for (int i = 0; i < 4; i++)
    {
      void *rc;
      pthread_join (t[i], &rc);
      TG_CHECK ((intptr_t) rc == 0);
    }
  TG_CHECK_INT_EQ (tg_formats_init (), 0);
  TG_CHECK (tg_io_image_reader ("png") == tg_png_read);
  TG_CHECK (tg_io_image_writer ("png16") != NULL);
  TG_CHECK (tg_io_image_writer ("png8") != NULL);
  TG_CHECK (tg_io_image_writer ("raw16") != NULL);
  TG_CHECK (tg_io_image_writer ("r32") != NULL);

  /* png16 from float samples: clamped and rounded to 16 bits. */
  f = fopen (tmp_path ("w16.png"), "wb");
  TG_CHECK_INT_EQ (tg_io_image_writer ("png16") (f, &img, &err), 0);
  fclose (f);
  TG_CHECK_INT_EQ (tg_io_read_image (tmp_path ("w16.png"), &back, &err), 0);
  TG_CHECK (back.bits == 16 && back.channels == 1);
  if (back.data)
    {
      const uint16_t *v = back.data;
      TG_CHECK (v[0] == 0 && v[1] == 32768 && v[2] == 65535 && v[3] == 65535);
    }
  tg_image_clear (&back);

  /* png8 from 16-bit samples: rounded to the nearest 8-bit step. */
  {
    const uint16_t s[3] = { 0, 32896, 65535 };
    TgImage i16 = { .width = 3, .height = 1, .channels = 1, .bits = 16, .data = (void *) s };
    f = fopen (tmp_path ("w8.png"), "wb");
    TG_CHECK_INT_EQ (tg_io_image_writer ("png8") (f, &i16, &err), 0);
    fclose (f);
    TG_CHECK_INT_EQ (tg_png_read (tmp_path ("w8.png"), &back, &err), 0);
    TG_CHECK (back.bits == 8 && back.data && ((uint8_t *) back.data)[1] == 128
              && ((uint8_t *) back.data)[2] == 255);
    tg_image_clear (&back);
  }

  /* raw16 from float, r32 from 16-bit. */
  f = fopen (tmp_path ("w.raw"), "wb");
  TG_CHECK_INT_EQ (tg_io_image_writer ("raw16") (f, &img, &err), 0);
  fclose (f);
  f = fopen (tmp_path ("w.raw"), "rb");
  TG_CHECK_INT_EQ (fread (raw, 1, sizeof raw, f), 8);
  fclose (f);
  {
    const uint8_t want[8] = { 0, 0, 0x00, 0x80, 0xff, 0xff, 0xff, 0xff };
    TG_CHECK (memcmp (raw, want, 8) == 0);
  }
  {
    const uint16_t s[2] = { 0, 65535 };
    TgImage i16 = { .width = 2, .height = 1, .channels = 1, .bits = 16, .data = (void *) s };
    const uint8_t want[8] = { 0, 0, 0, 0, 0, 0, 0x80, 0x3f };
    f = fopen (tmp_path ("w.r32"), "wb");
    TG_CHECK_INT_EQ (tg_io_image_writer ("r32") (f, &i16, &err), 0);
    fclose (f);
    f = fopen (tmp_path ("w.r32"), "rb");
    TG_CHECK_INT_EQ (fread (raw, 1, sizeof raw, f), 8);
    fclose (f);
    TG_CHECK (memcmp (raw, want, 8) == 0);
  }
}

int
main (void)
{
  tmpdir = tgtest_tmpdir ("tgfmt-img-");
  if (!tmpdir)
    return 1;
  TG_RUN (test_png_round_trip_exact);
  TG_RUN (test_png_bytes_stable);
  TG_RUN (test_png_strips_join_into_one_stream);
  TG_RUN (test_png_small_same_pixels);
  TG_RUN (test_png_info_matches_read);
  TG_RUN (test_png_reads_back_with_libpng);
  TG_RUN (test_png_reads_palette_lowbit_and_transparency);
  TG_RUN (test_png_read_errors);
  TG_RUN (test_png_warnings_stay_quiet);
  TG_RUN (test_png_write_rejects_bad_images);
  TG_RUN (test_raw_bytes_exact);
  TG_RUN (test_writers_quantise_like_exports);
  TG_RUN (test_every_export_format_has_a_writer);
  TG_RUN (test_formats_init_registers_writers);
  return tgtest_result ();
}
