/* Sample-format conversion for the writers named after a format ("png16",
 * "png8", "raw16", "r32"): an export hands over whatever its node built
 * and the writer stores the bits its name promises.  Conversions are
 * plain integer arithmetic or one float multiply with explicit rounding,
 * so they give the same bytes on every machine.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tgformats-private.h"

/* The shape alone: sides, channels and bits. */
static int
shape_check (int width, int height, int channels, int bits, TgError *err)
{
  if (width < 1 || height < 1 || width > TG__IMAGE_MAX_SIDE || height > TG__IMAGE_MAX_SIDE)
    return tg_error_set (err, TG_EINVAL, "", "image size %dx%d is not supported", width, height);
  if (channels < 1 || channels > 4)
    return tg_error_set (err, TG_EFORMAT, "", "%d channels per pixel is not supported",
                         channels);
  if (bits != 8 && bits != 16 && bits != 32)
    return tg_error_set (err, TG_EFORMAT, "", "%d bits per sample is not supported", bits);
  return 0;
}

int
tg__image_check (const TgImage *img, TgError *err)
{
  if (!img || !img->data)
    return tg_error_set (err, TG_EINVAL, "", "no image data");
  return shape_check (img->width, img->height, img->channels, img->bits, err);
}

int
tg__image_as_bits (const TgImage *src, int bits, TgImage *tmp, const TgImage **use,
                   TgError *err)
{
  size_t n, bytes;
  int rc;

  memset (tmp, 0, sizeof *tmp);
  *use = NULL;
  rc = tg__image_check (src, err);
  if (rc)
    return rc;
  if (src->bits == bits)
    {
      *use = src;
      return 0;
    }
  n = (size_t) src->width * (size_t) src->height * (size_t) src->channels;
  bytes = n * (size_t) (bits / 8);
  tmp->data = malloc (bytes ? bytes : 1);
  if (!tmp->data)
    return tg_error_set (err, TG_ENOMEM, "", "out of memory converting a %dx%d image",
                         src->width, src->height);
  tmp->width = src->width;
  tmp->height = src->height;
  tmp->channels = src->channels;
  tmp->bits = bits;

  if (bits == 16)
    {
      uint16_t *d = tmp->data;
      if (src->bits == 8)
        for (size_t i = 0; i < n; i++)
          d[i] = (uint16_t) (((const uint8_t *) src->data)[i] * 257u);
      else
        for (size_t i = 0; i < n; i++)
          d[i] = (uint16_t) tg_quantise (((const float *) src->data)[i], 65535.0);
    }
  else if (bits == 8)
    {
      uint8_t *d = tmp->data;
      if (src->bits == 16)
        for (size_t i = 0; i < n; i++)
          d[i] = (uint8_t) ((((const uint16_t *) src->data)[i] * 255u + 32767u) / 65535u);
      else
        for (size_t i = 0; i < n; i++)
          d[i] = (uint8_t) tg_quantise (((const float *) src->data)[i], 255.0);
    }
  else if (bits == 32)
    {
      float *d = tmp->data;
      if (src->bits == 8)
        for (size_t i = 0; i < n; i++)
          d[i] = (float) ((const uint8_t *) src->data)[i] / 255.0f;
      else
        for (size_t i = 0; i < n; i++)
          d[i] = (float) ((const uint16_t *) src->data)[i] / 65535.0f;
    }
  else
    {
      free (tmp->data);
      memset (tmp, 0, sizeof *tmp);
      return tg_error_set (err, TG_EFORMAT, "", "%d bits per sample is not supported", bits);
    }
  *use = tmp;
  return 0;
}

/* --- images a band of rows at a time ----------------------------------------------- */

/* About this many bytes a band: large enough that the per-band calls cost
 * nothing, small enough that a band stays in the cache between the rows
 * callback that fills it and the encoder (and comes from the heap, not
 * fresh pages: 4 MiB was a fifth of an r32 export's page faults). */
#define BAND_BYTES ((size_t) 256 << 10)

void
tg__image_rows_from (TgImageRows *rows, const TgImage *img)
{
  memset (rows, 0, sizeof *rows);
  rows->width = img->width;
  rows->height = img->height;
  rows->channels = img->channels;
  rows->bits = img->bits;
  rows->whole = img;
}

int
tg__row_bands_init (TgRowBands *b, const TgImageRows *src, int bits, TgError *err)
{
  size_t row = (size_t) src->width * (size_t) src->channels * (size_t) (src->bits / 8);

  return tg__row_bands_init_rows (b, src, bits,
                                  row && BAND_BYTES / row > 0 ? (int) (BAND_BYTES / row) : 1,
                                  err);
}

int
tg__row_bands_init_rows (TgRowBands *b, const TgImageRows *src, int bits, int rows,
                         TgError *err)
{
  size_t row;
  int rc;

  memset (b, 0, sizeof *b);
  if ((src->whole && !src->whole->data) || (!src->whole && !src->rows))
    return tg_error_set (err, TG_EINVAL, "", "no image data");
  if ((rc = shape_check (src->width, src->height, src->channels, src->bits, err)) < 0)
    return rc;
  b->src = src;
  b->bits = bits;
  row = (size_t) src->width * (size_t) src->channels * (size_t) (src->bits / 8);
  b->band = rows > 0 ? rows : 1;
  if (b->band > src->height)
    b->band = src->height;
  if (!src->whole && !(b->buf = malloc (row * (size_t) b->band)))
    return tg_error_set (err, TG_ENOMEM, "", "out of memory for %d rows of a %dx%d image",
                         b->band, src->width, src->height);
  return 0;
}

int
tg__row_bands_next (TgRowBands *b, const TgImage **band, TgError *err)
{
  const TgImageRows *src = b->src;
  int n = src->height - b->y < b->band ? src->height - b->y : b->band, rc;
  TgImage raw = { src->width, n, src->channels, src->bits, b->buf, false };

  free (b->tmp.data);
  memset (&b->tmp, 0, sizeof b->tmp);
  *band = NULL;
  if (n <= 0)
    return 0;
  if (src->whole)
    raw.data = (char *) src->whole->data
               + (size_t) b->y * (size_t) src->width * (size_t) src->channels
                   * (size_t) (src->bits / 8);
  else if ((rc = src->rows (src->user, b->y, n, b->buf, err)) < 0)
    return rc;
  b->cur = raw;
  if ((rc = tg__image_as_bits (&b->cur, b->bits, &b->tmp, band, err)) < 0)
    return rc;
  b->y += n;
  return n;
}

void
tg__row_bands_clear (TgRowBands *b)
{
  free (b->buf);
  free (b->tmp.data);
  memset (b, 0, sizeof *b);
}
