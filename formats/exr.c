/* OpenEXR images: 32-bit float scanlines, ZIP-compressed in chunks of 16
 * rows, written through OpenEXR's C API (openexr.h).  One channel is "Y"
 * (OpenEXR's name for grey), two "Y" and "A", three or four "R", "G",
 * "B" (and "A").  Rows go top first as the image holds them (north first
 * unless the export asked for south first), as Blender, Houdini and
 * Godot read them.
 *
 * The library writes its chunk offset table last, at an offset before
 * the chunks: the stream is seeked back for it (the engine's staged
 * streams seek).  Nothing in the header changes from run to run, so the
 * same samples give the same bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <openexr.h>

#include "tgformats-private.h"

/* A zlib level fixed here rather than the library's default, so the
 * bytes do not follow a change of that default. */
#define TG__EXR_ZIP_LEVEL 4

typedef struct
{
  FILE *f;
  off_t base;            /* the stream's position when the file started */
  uint64_t pos;          /* where the next write lands, from BASE */
  char message[200];     /* the library's last complaint */
} ExrOut;

static void
exr_on_error (exr_const_context_t ctxt, exr_result_t code, const char *msg)
{
  void *user = NULL;

  if (exr_get_user_data (ctxt, &user) == EXR_ERR_SUCCESS && user)
    snprintf (((ExrOut *) user)->message, sizeof ((ExrOut *) user)->message, "%s (%s)",
              msg ? msg : "", exr_get_error_code_as_string (code));
}

static int64_t
exr_on_write (exr_const_context_t ctxt, void *user, const void *buf, uint64_t sz,
              uint64_t offset, exr_stream_error_func_ptr_t error_cb)
{
  ExrOut *o = user;

  if (offset != o->pos)
    {
      if (fseeko (o->f, o->base + (off_t) offset, SEEK_SET) != 0)
        {
          error_cb (ctxt, EXR_ERR_WRITE_IO, "cannot seek to byte %llu of the stream: %s",
                    (unsigned long long) offset, strerror (errno));
          return -1;
        }
      o->pos = offset;
    }
  if (fwrite (buf, 1, sz, o->f) != sz)
    {
      error_cb (ctxt, EXR_ERR_WRITE_IO, "writing: %s", strerror (errno));
      return -1;
    }
  o->pos += sz;
  return (int64_t) sz;
}

static const char *const channel_names[4][4] = {
  { "Y" }, { "Y", "A" }, { "R", "G", "B" }, { "R", "G", "B", "A" },
};

/* The error for a failed library call RC, with the library's message. */
static int
exr_fail (const ExrOut *o, exr_result_t rc, const char *what, TgError *err)
{
  return tg_error_set (err, rc == EXR_ERR_OUT_OF_MEMORY ? TG_ENOMEM : TG_EIO, "",
                       "writing OpenEXR: %s: %s", what,
                       o->message[0] ? o->message : exr_get_default_error_message (rc));
}

/* The header of a WIDTH x HEIGHT float image of CHANNELS channels. */
static exr_result_t
exr_define (exr_context_t ctxt, int width, int height, int channels)
{
  int part;
  exr_result_t rc = exr_add_part (ctxt, "height", EXR_STORAGE_SCANLINE, &part);

  if (rc == EXR_ERR_SUCCESS)
    rc = exr_initialize_required_attr_simple (ctxt, part, width, height, EXR_COMPRESSION_ZIP);
  for (int c = 0; rc == EXR_ERR_SUCCESS && c < channels; c++)
    rc = exr_add_channel (ctxt, part, channel_names[channels - 1][c], EXR_PIXEL_FLOAT,
                          EXR_PERCEPTUALLY_LINEAR, 1, 1);
  if (rc == EXR_ERR_SUCCESS)
    rc = exr_set_zip_compression_level (ctxt, part, TG__EXR_ZIP_LEVEL);
  if (rc == EXR_ERR_SUCCESS)
    rc = exr_write_header (ctxt);
  return rc;
}

/* Encodes the chunk starting at row Y from ROWS (interleaved floats, CH
 * channels, WIDTH a row). */
static exr_result_t
exr_chunk (exr_context_t ctxt, exr_encode_pipeline_t *enc, bool *started, int y,
           const float *rows, int width, int ch)
{
  exr_chunk_info_t info;
  exr_result_t rc = exr_write_scanline_chunk_info (ctxt, 0, y, &info);
  bool first = !*started;

  if (rc == EXR_ERR_SUCCESS)
    rc = first ? exr_encoding_initialize (ctxt, 0, &info, enc)
               : exr_encoding_update (ctxt, 0, &info, enc);
  if (rc != EXR_ERR_SUCCESS)
    return rc;
  /* From here the pipeline holds buffers: the caller destroys it. */
  *started = true;
  /* The library sorts channels by name: find each one's place in a pixel. */
  for (int i = 0; i < enc->channel_count; i++)
    {
      exr_coding_channel_info_t *c = &enc->channels[i];
      int k = 0;
      while (k < ch - 1 && strcmp (channel_names[ch - 1][k], c->channel_name) != 0)
        k++;
      c->user_bytes_per_element = 4;
      c->user_data_type = EXR_PIXEL_FLOAT;
      c->user_pixel_stride = 4 * ch;
      c->user_line_stride = 4 * ch * width;
      c->encode_from_ptr = (const uint8_t *) (rows + k);
    }
  if (first && (rc = exr_encoding_choose_default_routines (ctxt, 0, enc)) != EXR_ERR_SUCCESS)
    return rc;
  return exr_encoding_run (ctxt, 0, enc);
}

int
tg__exr_write_rows (FILE *f, const TgImageRows *src, TgError *err)
{
  exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
  exr_encode_pipeline_t enc = EXR_ENCODE_PIPELINE_INITIALIZER;
  exr_context_t ctxt = NULL;
  ExrOut out = { .f = f };
  TgRowBands bands;
  bool started = false, bands_open = false;
  float *chunk = NULL;
  int32_t per_chunk = 0;
  size_t row_floats;
  int fill = 0, y0 = 0, rc = 0;
  exr_result_t xrc;

  if (!f)
    return tg_error_set (err, TG_EINVAL, "", "no stream to write the OpenEXR image to");
  if (src->channels < 1 || src->channels > 4)
    return tg_error_set (err, TG_EFORMAT, "", "OpenEXR images here hold 1 to 4 channels, not %d",
                         src->channels);
  if ((out.base = ftello (f)) < 0)
    return tg_error_set (err, TG_EIO, "", "OpenEXR needs a stream that can seek: %s",
                         strerror (errno));
  init.user_data = &out;
  init.write_fn = exr_on_write;
  init.error_handler_fn = exr_on_error;
  init.zip_level = TG__EXR_ZIP_LEVEL;
  /* The name only appears in the library's messages. */
  xrc = exr_start_write (&ctxt, "image.exr", EXR_WRITE_FILE_DIRECTLY, &init);
  if (xrc == EXR_ERR_SUCCESS)
    xrc = exr_define (ctxt, src->width, src->height, src->channels);
  if (xrc == EXR_ERR_SUCCESS)
    xrc = exr_get_scanlines_per_chunk (ctxt, 0, &per_chunk);
  if (xrc != EXR_ERR_SUCCESS)
    {
      rc = exr_fail (&out, xrc, "the header", err);
      goto out;
    }
  row_floats = (size_t) src->width * (size_t) src->channels;
  if (!(chunk = malloc (row_floats * sizeof (float) * (size_t) per_chunk)))
    {
      rc = tg_error_set (err, TG_ENOMEM, "", "out of memory writing OpenEXR");
      goto out;
    }
  if ((rc = tg__row_bands_init (&bands, src, 32, err)) < 0)
    goto out;
  bands_open = true;
  /* Bands come in whatever height suits the source: gather them into
   * the library's chunks. */
  for (;;)
    {
      const TgImage *band;
      int n = tg__row_bands_next (&bands, &band, err);
      if (n <= 0)
        {
          rc = n;
          break;
        }
      for (int j = 0; j < n && rc == 0; j++)
        {
          memcpy (chunk + (size_t) fill * row_floats, (const float *) band->data + j * row_floats,
                  row_floats * sizeof (float));
          if (++fill == per_chunk || y0 + fill == src->height)
            {
              xrc = exr_chunk (ctxt, &enc, &started, y0, chunk, src->width, src->channels);
              if (xrc != EXR_ERR_SUCCESS)
                rc = exr_fail (&out, xrc, "the samples", err);
              y0 += fill;
              fill = 0;
            }
        }
      if (rc < 0)
        break;
    }

out:
  if (started)
    exr_encoding_destroy (ctxt, &enc);
  if (ctxt)
    {
      /* Finishing writes the chunk table (of a failed image too: the
       * export drops the staged file then). */
      xrc = exr_finish (&ctxt);
      if (rc == 0 && xrc != EXR_ERR_SUCCESS)
        rc = exr_fail (&out, xrc, "the chunk table", err);
    }
  if (bands_open)
    tg__row_bands_clear (&bands);
  free (chunk);
  if (rc == 0 && ferror (f))
    rc = tg_error_set (err, TG_EIO, "", "writing OpenEXR: %s", strerror (errno));
  return rc;
}

int
tg_exr_write (FILE *f, const TgImage *img, TgError *err)
{
  TgImageRows rows;
  int rc = tg__image_check (img, err);

  if (rc)
    return rc;
  tg__image_rows_from (&rows, img);
  return tg__exr_write_rows (f, &rows, err);
}
