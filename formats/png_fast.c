/* The fast PNG writer: the image deflated in strips of rows side by side.
 *
 * Rows are Up-filtered (the first None) and cut into strips of about
 * STRIP_BYTES; each strip is deflated on its own at zlib level 2, primed
 * with the 32 KiB of filtered data before it and ended with a sync flush
 * (the last with the stream's end), as pigz does.  The pieces joined are
 * one zlib stream, its Adler-32 combined from the strips'.  A strip's
 * bytes follow from its rows and the 32 KiB before them only, so the
 * file is the same at any thread count and from any caller (an export,
 * `tgraph stitch`, the GUI); the strips of a batch run on the threads of
 * the build that writes (tg_io_stream_parallel).  The file holds IHDR, an
 * IDAT a strip and IEND: no time, text or gamma chunk.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "tgformats-private.h"

/* Filtered bytes a strip: the unit of parallel work and of the file's
 * layout (changing it changes the bytes).  512 KiB keeps a 4097² map
 * in over a hundred strips and loses about 0.1% to the sync flushes. */
#define STRIP_BYTES ((size_t) 512 << 10)
/* Strips fetched, filtered and deflated together: what the writer holds
 * (about three times this many STRIP_BYTES); any count gives the same
 * bytes. */
#define BATCH_STRIPS 16
/* Deflate's window: the history each strip is primed with. */
#define WINDOW 32768
/* Level 2 measured (CPU time) on alpine's seven 4097² maps: 3.9 s and
 * 97.3 MB, level 1 3.4 s and 100.2 MB, level 3 6.1 s and 93.9 MB. */
#define LEVEL 2

typedef struct
{
  uint8_t *out;
  size_t cap, len;
  uLong adler, crc; /* of the filtered rows, of OUT's LEN bytes */
  size_t in_len;
  int rc; /* TG_E* */
} Strip;

typedef struct
{
  int strip_rows, n_strips, y0, height;
  size_t stride; /* bytes of a row of samples in the file, without its filter byte */
  bool swap16;   /* 16-bit samples in host order that the file stores big-endian */
  const uint8_t *raw;  /* the batch's rows, STRIDE bytes each, host order */
  const uint8_t *prev; /* the row before the batch, NULL at the top */
  uint8_t *filt;       /* WINDOW bytes of history, then the batch's filtered rows */
  size_t hist;         /* how many of those WINDOW bytes are the image's */
  Strip *strips;
} Batch;

/* Row CUR into OUT (filter byte first): Up against PREV, None without. */
static void
filter_row (uint8_t *out, const uint8_t *cur, const uint8_t *prev, size_t stride, bool swap16)
{
  uint8_t *o = out + 1;

  out[0] = prev ? 2 : 0;
  if (!prev && !swap16)
    memcpy (o, cur, stride);
  else if (!prev)
    for (size_t i = 0; i < stride; i += 2)
      {
        o[i] = cur[i + 1];
        o[i + 1] = cur[i];
      }
  else if (!swap16)
    for (size_t i = 0; i < stride; i++)
      o[i] = (uint8_t) (cur[i] - prev[i]);
  else
    for (size_t i = 0; i < stride; i += 2)
      {
        o[i] = (uint8_t) (cur[i + 1] - prev[i + 1]);
        o[i + 1] = (uint8_t) (cur[i] - prev[i]);
      }
}

static void
filter_strips (void *user, int begin, int end)
{
  const Batch *b = user;
  int r1 = b->height - b->y0 < end * b->strip_rows ? b->height - b->y0 : end * b->strip_rows;

  for (int r = begin * b->strip_rows; r < r1; r++)
    {
      const uint8_t *cur = b->raw + (size_t) r * b->stride;
      const uint8_t *prev = r > 0 ? cur - b->stride : b->prev;
      filter_row (b->filt + WINDOW + (size_t) r * (b->stride + 1), cur, prev, b->stride,
                  b->swap16);
    }
}

static void
deflate_strip (const Batch *b, int s)
{
  Strip *st = &b->strips[s];
  int r0 = s * b->strip_rows;
  int r1 = b->height - b->y0 < r0 + b->strip_rows ? b->height - b->y0 : r0 + b->strip_rows;
  size_t off = WINDOW + (size_t) r0 * (b->stride + 1), dict;
  bool last = b->y0 + r1 == b->height;
  z_stream zs;
  int zrc;

  memset (&zs, 0, sizeof zs);
  st->len = 0;
  st->rc = 0;
  st->in_len = (size_t) (r1 - r0) * (b->stride + 1);
  st->adler = adler32 (adler32 (0, Z_NULL, 0), b->filt + off, (uInt) st->in_len);
  if (deflateInit2 (&zs, LEVEL, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    {
      st->rc = TG_ENOMEM;
      return;
    }
  /* The history: what the strip before left in the window. */
  dict = off - (WINDOW - b->hist);
  if (dict > WINDOW)
    dict = WINDOW;
  if (dict > 0 && deflateSetDictionary (&zs, b->filt + off - dict, (uInt) dict) != Z_OK)
    st->rc = TG_EFORMAT;
  zs.next_in = b->filt + off;
  zs.avail_in = (uInt) st->in_len;
  for (zrc = Z_OK; st->rc == 0;)
    {
      size_t want = deflateBound (&zs, (uLong) st->in_len) + 64;
      if (st->cap < st->len + want)
        {
          uint8_t *p = realloc (st->out, st->len + want);
          if (!p)
            {
              st->rc = TG_ENOMEM;
              break;
            }
          st->out = p;
          st->cap = st->len + want;
        }
      zs.next_out = st->out + st->len;
      zs.avail_out = (uInt) (st->cap - st->len);
      zrc = deflate (&zs, last ? Z_FINISH : Z_SYNC_FLUSH);
      st->len = st->cap - zs.avail_out;
      /* Flushed: all taken and room left over, or nothing left to do. */
      if (zrc == Z_STREAM_END
          || (!last && zs.avail_in == 0 && (zrc == Z_BUF_ERROR || zs.avail_out > 0)))
        break;
      if (zrc != Z_OK && zrc != Z_BUF_ERROR)
        st->rc = TG_EFORMAT;
    }
  deflateEnd (&zs);
  st->crc = crc32_z (crc32 (0, Z_NULL, 0), st->out, st->len);
}

static void
deflate_strips (void *user, int begin, int end)
{
  for (int s = begin; s < end; s++)
    deflate_strip (user, s);
}

static void
put_be32 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) (v >> 24);
  p[1] = (uint8_t) (v >> 16);
  p[2] = (uint8_t) (v >> 8);
  p[3] = (uint8_t) v;
}

/* Chunk TYPE holding A, then B (whose CRC-32 is B_CRC), then C; A and C
 * short, any of them may be empty. */
static int
write_chunk (FILE *f, const char *type, const uint8_t *a, size_t na, const uint8_t *b, size_t nb,
             uLong b_crc, const uint8_t *c, size_t nc, TgError *err)
{
  uint8_t head[8], tail[4];
  uLong crc = crc32 (0, Z_NULL, 0);

  if (na + nb + nc > 0x7fffffffu)
    return tg_error_set (err, TG_ERANGE, "", "writing PNG: a chunk over 2 GiB");
  put_be32 (head, (uint32_t) (na + nb + nc));
  memcpy (head + 4, type, 4);
  crc = crc32 (crc, head + 4, 4);
  if (na)
    crc = crc32 (crc, a, (uInt) na);
  if (nb)
    crc = crc32_combine (crc, b_crc, (z_off_t) nb);
  if (nc)
    crc = crc32 (crc, c, (uInt) nc);
  put_be32 (tail, (uint32_t) crc);
  if (fwrite (head, 1, 8, f) != 8 || (na && fwrite (a, 1, na, f) != na)
      || (nb && fwrite (b, 1, nb, f) != nb) || (nc && fwrite (c, 1, nc, f) != nc)
      || fwrite (tail, 1, 4, f) != 4)
    return tg_error_set (err, TG_EIO, "", "writing PNG: %s", strerror (errno));
  return 0;
}

/* The zlib header for LEVEL's deflate with a 32 KiB window, as zlib
 * writes it (level 2 to 5: "fast" in FLEVEL). */
static void
zlib_header (uint8_t h[2])
{
  unsigned v = (Z_DEFLATED + (7 << 4)) << 8 | (LEVEL < 2 ? 0 : LEVEL < 6 ? 1 : LEVEL == 6 ? 2 : 3) << 6;

  v += 31 - v % 31;
  h[0] = (uint8_t) (v >> 8);
  h[1] = (uint8_t) v;
}

int
tg__png_write_fast (FILE *f, const TgImageRows *src, int bits, TgError *err)
{
  static const uint8_t signature[8] = { 137, 'P', 'N', 'G', '\r', '\n', 26, '\n' };
  static const int ctypes[] = { 0, 4, 2, 6 }; /* grey, grey + alpha, RGB, RGBA */
  TgRowBands bands;
  Strip strips[BATCH_STRIPS] = { { 0 } };
  Batch b = { 0 };
  uint8_t ihdr[13], zhead[2], adler_be[4], *prev = NULL;
  uLong adler = adler32 (0, Z_NULL, 0);
  int rc;

  if (!f)
    return tg_error_set (err, TG_EINVAL, "", "no stream to write the PNG to");
  if (bits != 8 && bits != 16)
    return tg_error_set (err, TG_EFORMAT, "", "PNG holds 8 or 16 bits per sample, not float");
  b.stride = (size_t) src->width * (size_t) src->channels * (size_t) (bits / 8);
  b.strip_rows = STRIP_BYTES / (b.stride + 1) > 0 ? (int) (STRIP_BYTES / (b.stride + 1)) : 1;
  b.height = src->height;
  b.swap16 = bits == 16 && tg__host_little_endian ();
  b.strips = strips;
  if ((rc = tg__row_bands_init_rows (&bands, src, bits, b.strip_rows * BATCH_STRIPS, err)) < 0)
    return rc;
  b.filt = malloc (WINDOW + (size_t) bands.band * (b.stride + 1));
  prev = malloc (b.stride);
  if (!b.filt || !prev)
    {
      rc = tg_error_set (err, TG_ENOMEM, "", "out of memory for %d rows of a %dx%d PNG",
                         bands.band, src->width, src->height);
      goto out;
    }

  put_be32 (ihdr, (uint32_t) src->width);
  put_be32 (ihdr + 4, (uint32_t) src->height);
  ihdr[8] = (uint8_t) bits;
  ihdr[9] = (uint8_t) ctypes[src->channels - 1];
  ihdr[10] = ihdr[11] = ihdr[12] = 0; /* deflate, adaptive filters, no interlace */
  zlib_header (zhead);
  if (fwrite (signature, 1, 8, f) != 8)
    rc = tg_error_set (err, TG_EIO, "", "writing PNG: %s", strerror (errno));
  else
    rc = write_chunk (f, "IHDR", ihdr, 13, NULL, 0, 0, NULL, 0, err);
  while (rc == 0 && b.y0 < b.height)
    {
      const TgImage *band;
      int n = tg__row_bands_next (&bands, &band, err);
      if (n <= 0)
        {
          rc = n < 0 ? n : tg_error_set (err, TG_EIO, "", "writing PNG: rows ended early");
          break;
        }
      b.raw = band->data;
      b.prev = b.y0 > 0 ? prev : NULL;
      b.n_strips = (n + b.strip_rows - 1) / b.strip_rows;
      if ((rc = tg_io_stream_parallel (f, b.n_strips, filter_strips, &b)) == 0)
        rc = tg_io_stream_parallel (f, b.n_strips, deflate_strips, &b);
      if (rc < 0)
        {
          tg_error_set (err, rc, "", "writing PNG: %s", tg_strerror (rc));
          break;
        }
      for (int s = 0; rc == 0 && s < b.n_strips; s++)
        {
          bool first = b.y0 == 0 && s == 0, last = b.y0 + n == b.height && s == b.n_strips - 1;
          if (strips[s].rc < 0)
            {
              rc = tg_error_set (err, strips[s].rc, "", "writing PNG: deflate failed (%s)",
                                 tg_strerror (strips[s].rc));
              break;
            }
          adler = adler32_combine (adler, strips[s].adler, (z_off_t) strips[s].in_len);
          /* The stream's end: the Adler-32 of every filtered byte. */
          put_be32 (adler_be, (uint32_t) adler);
          rc = write_chunk (f, "IDAT", first ? zhead : NULL, first ? 2 : 0, strips[s].out,
                            strips[s].len, strips[s].crc, last ? adler_be : NULL, last ? 4 : 0,
                            err);
        }
      /* What the next batch needs: the last row and the last WINDOW
       * filtered bytes. */
      {
        size_t done = (size_t) n * (b.stride + 1);
        size_t keep = b.hist + done < WINDOW ? b.hist + done : WINDOW;
        memmove (b.filt + WINDOW - keep, b.filt + WINDOW + done - keep, keep);
        b.hist = keep;
      }
      memcpy (prev, b.raw + (size_t) (n - 1) * b.stride, b.stride);
      b.y0 += n;
    }
  if (rc == 0)
    rc = write_chunk (f, "IEND", NULL, 0, NULL, 0, 0, NULL, 0, err);
out:
  for (int s = 0; s < BATCH_STRIPS; s++)
    free (strips[s].out);
  free (b.filt);
  free (prev);
  tg__row_bands_clear (&bands);
  return rc;
}
