/* RAW heightmaps: samples only, little-endian, no header, rows north
 * first as everywhere in Terrane.  16-bit unsigned is what Unity's and
 * Unreal's terrain importers read; 32-bit float keeps full precision for
 * tools that take it.  The size is not in the file: the manifest says it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tgformats-private.h"

int
tg_raw_write (FILE *f, const TgImage *img, TgError *err)
{
  uint8_t buf[16384];
  size_t n, i = 0, fill = 0, sample_bytes;
  int rc;

  if (!f)
    return tg_error_set (err, TG_EINVAL, "", "no stream to write the RAW data to");
  rc = tg__image_check (img, err);
  if (rc)
    return rc;
  if (img->bits != 16 && img->bits != 32)
    return tg_error_set (err, TG_EFORMAT, "",
                         "RAW holds 16-bit unsigned or 32-bit float samples, not %d-bit",
                         img->bits);
  n = (size_t) img->width * (size_t) img->height * (size_t) img->channels;
  sample_bytes = (size_t) img->bits / 8;

  /* Byte by byte from the value, so the host's byte order does not matter. */
  while (i < n)
    {
      uint32_t u;
      if (img->bits == 16)
        u = ((const uint16_t *) img->data)[i];
      else
        memcpy (&u, (const float *) img->data + i, 4);
      for (size_t b = 0; b < sample_bytes; b++)
        buf[fill++] = (uint8_t) (u >> (8 * b));
      i++;
      if (fill + sample_bytes > sizeof buf || i == n)
        {
          if (fwrite (buf, 1, fill, f) != fill)
            return tg_error_set (err, TG_EIO, "", "writing RAW data: %s", strerror (errno));
          fill = 0;
        }
    }
  if (ferror (f))
    return tg_error_set (err, TG_EIO, "", "writing RAW data: %s", strerror (errno));
  return 0;
}

static int
write_raw_bits (FILE *f, const TgImage *img, int bits, TgError *err)
{
  TgImage tmp = { 0 };
  const TgImage *use;
  int rc;

  rc = tg__image_as_bits (img, bits, &tmp, &use, err);
  if (rc == 0)
    rc = tg_raw_write (f, use, err);
  free (tmp.data);
  return rc;
}

int
tg__write_raw16 (FILE *f, const TgImage *img, TgError *err)
{
  return write_raw_bits (f, img, 16, err);
}

int
tg__write_r32 (FILE *f, const TgImage *img, TgError *err)
{
  return write_raw_bits (f, img, 32, err);
}
