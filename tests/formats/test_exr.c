/* OpenEXR: what tg_exr_write writes reads back through the OpenEXR
 * library bit for bit (any float, any height of the last chunk, 1 to 4
 * channels by their OpenEXR names), the same image gives the same bytes
 * whether written whole or through a rows callback (as `tgraph stitch`
 * writes), and a stream that cannot seek is refused by name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openexr.h>

#include <tgformats/tgformats.h>

#include "tgformats-private.h"
#include "tgtest.h"


/* Floats of every kind a height can be: negative, above 1, tiny, large. */
static TgImage
float_pattern (int w, int h, int channels)
{
  TgImage img = { .width = w, .height = h, .channels = channels, .bits = 32 };
  size_t n = (size_t) w * h * channels;

  img.data = malloc (n * sizeof (float));
  for (size_t i = 0; i < n; i++)
    {
      uint32_t v = (uint32_t) (i * 2654435761u);
      ((float *) img.data)[i] = ((float) (v >> 8) / 16777216.0f - 0.25f) * 3000.0f
                                + (float) (i % 7) * 1e-6f;
    }
  return img;
}

static int
write_exr_file (const char *path, const TgImage *img, TgError *err)
{
  FILE *f = fopen (path, "wb");
  int rc;

  if (!f)
    return -1;
  rc = tg_exr_write (f, img, err);
  if (fclose (f) != 0 && rc == 0)
    rc = -1;
  return rc;
}

/* Reads PATH with the OpenEXR library into OUT (interleaved floats in the
 * channel order of NAMES); returns 0 or the library's error. */
static exr_result_t
read_exr (const char *path, int channels, const char *const *names, TgImage *out)
{
  exr_context_t ctxt = NULL;
  exr_decode_pipeline_t dec = EXR_DECODE_PIPELINE_INITIALIZER;
  exr_attr_box2i_t dw;
  int32_t per_chunk;
  bool started = false;
  exr_result_t rc = exr_start_read (&ctxt, path, NULL);

  memset (out, 0, sizeof *out);
  if (rc == EXR_ERR_SUCCESS)
    rc = exr_get_data_window (ctxt, 0, &dw);
  if (rc == EXR_ERR_SUCCESS)
    rc = exr_get_scanlines_per_chunk (ctxt, 0, &per_chunk);
  if (rc != EXR_ERR_SUCCESS)
    goto out;
  out->width = dw.max.x - dw.min.x + 1;
  out->height = dw.max.y - dw.min.y + 1;
  out->channels = channels;
  out->bits = 32;
  out->data = calloc ((size_t) out->width * out->height * channels, sizeof (float));
  for (int y = dw.min.y; rc == EXR_ERR_SUCCESS && y <= dw.max.y; y += per_chunk)
    {
      exr_chunk_info_t info;
      if ((rc = exr_read_scanline_chunk_info (ctxt, 0, y, &info)) != EXR_ERR_SUCCESS)
        break;
      rc = started ? exr_decoding_update (ctxt, 0, &info, &dec)
                   : exr_decoding_initialize (ctxt, 0, &info, &dec);
      if (rc != EXR_ERR_SUCCESS)
        break;
      TG_CHECK_INT_EQ (dec.channel_count, channels);
      for (int i = 0; i < dec.channel_count; i++)
        {
          exr_coding_channel_info_t *c = &dec.channels[i];
          int k = 0;
          while (k < channels - 1 && strcmp (names[k], c->channel_name) != 0)
            k++;
          TG_CHECK_MSG (strcmp (names[k], c->channel_name) == 0, "channel %s", c->channel_name);
          TG_CHECK_INT_EQ (c->data_type, EXR_PIXEL_FLOAT);
          c->user_bytes_per_element = 4;
          c->user_data_type = EXR_PIXEL_FLOAT;
          c->user_pixel_stride = 4 * channels;
          c->user_line_stride = 4 * channels * out->width;
          c->decode_to_ptr = (uint8_t *) ((float *) out->data
                                          + ((size_t) (y - dw.min.y) * out->width) * channels + k);
        }
      if (!started
          && (rc = exr_decoding_choose_default_routines (ctxt, 0, &dec)) != EXR_ERR_SUCCESS)
        break;
      started = true;
      rc = exr_decoding_run (ctxt, 0, &dec);
    }
out:
  if (started)
    exr_decoding_destroy (ctxt, &dec);
  exr_finish (&ctxt);
  return rc;
}

static void
test_exr_reads_back_with_the_library (void)
{
  static const char *const names[4][4] = {
    { "Y" }, { "Y", "A" }, { "R", "G", "B" }, { "R", "G", "B", "A" },
  };
  /* 16 rows a chunk: heights that end on, before and after a chunk. */
  static const int heights[] = { 1, 16, 17, 45 };

  for (int ch = 1; ch <= 4; ch++)
    for (size_t t = 0; t < sizeof heights / sizeof heights[0]; t++)
      {
        TgImage img = float_pattern (29, heights[t], ch), back;
        TgError err = { 0 };
        const char *path = tgtest_tmp_path ("a.exr");
        TG_CHECK_INT_EQ (write_exr_file (path, &img, &err), 0);
        TG_CHECK_INT_EQ (read_exr (path, ch, names[ch - 1], &back), EXR_ERR_SUCCESS);
        TG_CHECK_INT_EQ (back.width, img.width);
        TG_CHECK_INT_EQ (back.height, img.height);
        TG_CHECK_MSG (back.data && memcmp (back.data, img.data, tg_image_bytes (&img)) == 0,
                      "%d channels, %d rows: samples differ", ch, heights[t]);
        tg_image_clear (&back);
        free (img.data);
      }
}

static size_t
file_bytes (const char *path, char **data)
{
  size_t len = 0;
  TgError err = { 0 };

  *data = NULL;
  TG_CHECK_INT_EQ (tg__read_file (path, data, &len, &err), 0);
  return len;
}

/* Rows served by a callback, as a stitch serves bands of tiles. */
static int
rows_from (void *user, int y, int n, void *dst, TgError *err)
{
  const TgImage *img = user;
  size_t row = (size_t) img->width * img->channels * sizeof (float);

  memcpy (dst, (const char *) img->data + (size_t) y * row, (size_t) n * row);
  return 0;
}

static void
exr_rows_write_the_same_bytes (int channels)
{
  TgImage img = float_pattern (40, 37, channels);
  TgImageRows rows = { img.width, img.height, channels, 32, NULL, rows_from, &img };
  TgError err = { 0 };
  char *a, *b;
  size_t na, nb;
  FILE *f;

  TG_CHECK_INT_EQ (write_exr_file (tgtest_tmp_path ("whole.exr"), &img, &err), 0);
  f = fopen (tgtest_tmp_path ("rows.exr"), "wb");
  TG_CHECK_INT_EQ (tg__exr_write_rows (f, &rows, &err), 0);
  fclose (f);
  na = file_bytes (tgtest_tmp_path ("whole.exr"), &a);
  nb = file_bytes (tgtest_tmp_path ("rows.exr"), &b);
  TG_CHECK (na > 0 && na == nb && memcmp (a, b, na) == 0);
  /* And the same bytes again: nothing in the header varies. */
  TG_CHECK_INT_EQ (write_exr_file (tgtest_tmp_path ("whole.exr"), &img, &err), 0);
  free (b);
  nb = file_bytes (tgtest_tmp_path ("whole.exr"), &b);
  TG_CHECK (na == nb && memcmp (a, b, na) == 0);
  free (a);
  free (b);
  free (img.data);
}

static void
test_exr_rows_write_the_same_bytes (void)
{
  exr_rows_write_the_same_bytes (1);
  exr_rows_write_the_same_bytes (3);
}

static void
test_exr_refuses_a_stream_that_cannot_seek (void)
{
  TgImage img = float_pattern (8, 8, 1);
  TgError err = { 0 };
  int fd[2];
  FILE *f;

  TG_CHECK_INT_EQ (pipe (fd), 0);
  f = fdopen (fd[1], "wb");
  TG_CHECK (tg_exr_write (f, &img, &err) < 0);
  TG_CHECK_STR_CONTAINS (err.message, "seek");
  fclose (f);
  close (fd[0]);
  free (img.data);
}

static void
test_exr_refuses_five_channels (void)
{
  TgImage img = float_pattern (4, 4, 4);
  TgImageRows rows;
  TgError err = { 0 };
  FILE *f = fopen (tgtest_tmp_path ("five.exr"), "wb");

  tg__image_rows_from (&rows, &img);
  rows.channels = 5;
  TG_CHECK (tg__exr_write_rows (f, &rows, &err) < 0);
  TG_CHECK_STR_CONTAINS (err.message, "1 to 4 channels");
  fclose (f);
  free (img.data);
}

int
main (void)
{
  if (!tgtest_tmpdir ("tgfmt-exr-"))
    return 1;
  TG_RUN (test_exr_reads_back_with_the_library);
  TG_RUN (test_exr_rows_write_the_same_bytes);
  TG_RUN (test_exr_refuses_a_stream_that_cannot_seek);
  TG_RUN (test_exr_refuses_five_channels);
  return tgtest_result ();
}
