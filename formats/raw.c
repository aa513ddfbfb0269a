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
tg__raw_write_rows (FILE *f, const TgImageRows *src, int bits, TgError *err)
{
  uint8_t buf[16384];
  size_t fill = 0, sample_bytes = (size_t) bits / 8;
  TgRowBands bands;
  int rc;

  if (!f)
    return tg_error_set (err, TG_EINVAL, "", "no stream to write the RAW data to");
  if (bits != 16 && bits != 32)
    return tg_error_set (err, TG_EFORMAT, "",
                         "RAW holds 16-bit unsigned or 32-bit float samples, not %d-bit", bits);
  if ((rc = tg__row_bands_init (&bands, src, bits, err)) < 0)
    return rc;
  for (;;)
    {
      const TgImage *band;
      int rows = tg__row_bands_next (&bands, &band, err);
      size_t n = (size_t) (rows > 0 ? rows : 0) * (size_t) src->width * (size_t) src->channels;
      if (rows <= 0)
        {
          rc = rows;
          break;
        }
      /* A little-endian host holds the file's bytes already. */
      if (tg__host_little_endian ())
        {
          if (fwrite (band->data, sample_bytes, n, f) != n)
            rc = tg_error_set (err, TG_EIO, "", "writing RAW data: %s", strerror (errno));
          if (rc < 0)
            break;
          continue;
        }
      /* Byte by byte from the value, so the host's byte order does not matter. */
      for (size_t i = 0; i < n && rc == 0; i++)
        {
          uint32_t u;
          if (bits == 16)
            u = ((const uint16_t *) band->data)[i];
          else
            memcpy (&u, (const float *) band->data + i, 4);
          for (size_t b = 0; b < sample_bytes; b++)
            buf[fill++] = (uint8_t) (u >> (8 * b));
          if (fill + sample_bytes > sizeof buf)
            {
              if (fwrite (buf, 1, fill, f) != fill)
                rc = tg_error_set (err, TG_EIO, "", "writing RAW data: %s", strerror (errno));
              fill = 0;
            }
        }
      if (rc < 0)
        break;
    }
  if (rc == 0 && fill > 0 && fwrite (buf, 1, fill, f) != fill)
    rc = tg_error_set (err, TG_EIO, "", "writing RAW data: %s", strerror (errno));
  tg__row_bands_clear (&bands);
  if (rc == 0 && ferror (f))
    return tg_error_set (err, TG_EIO, "", "writing RAW data: %s", strerror (errno));
  return rc;
}

static int
write_raw_bits (FILE *f, const TgImage *img, int bits, TgError *err)
{
  TgImageRows rows;
  int rc = tg__image_check (img, err);

  if (rc)
    return rc;
  tg__image_rows_from (&rows, img);
  return tg__raw_write_rows (f, &rows, bits, err);
}

int
tg_raw_write (FILE *f, const TgImage *img, TgError *err)
{
  if (img && img->bits == 8)
    return tg_error_set (err, TG_EFORMAT, "",
                         "RAW holds 16-bit unsigned or 32-bit float samples, not 8-bit");
  return write_raw_bits (f, img, img ? img->bits : 0, err);
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

int
tg__write_raw16_rows (FILE *f, const TgImageRows *src, TgError *err)
{
  return tg__raw_write_rows (f, src, 16, err);
}

int
tg__write_r32_rows (FILE *f, const TgImageRows *src, TgError *err)
{
  return tg__raw_write_rows (f, src, 32, err);
}
