/* PNG through libpng.
 *
 * Reading keeps the stored values: no gamma or colour-profile conversion
 * (gAMA, sRGB, iCCP, cHRM and every other ancillary chunk but tRNS are
 * skipped unread), because distribution maps and heightmaps are data, not
 * pictures.  Palettes and low bit depths are expanded, 16-bit stays
 * 16-bit (host order in memory).  An image is refused before anything is
 * allocated for it when the file is too short to hold it or when it would
 * take more than TG__PNG_MAX_BYTES decoded.  Writing is deterministic:
 * fixed zlib level and filters, no time or text chunks, so the CLI and
 * the GUI write the same bytes (the fast default in png_fast.c, `small`
 * here).  libpng reports errors by longjmp; the handlers here turn them
 * into TgError and keep libpng quiet on stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <zlib.h>
#include <sys/stat.h>

#include "tgformats-private.h"

/* Fixed so the bytes do not follow libpng's defaults from version to
 * version.  The fast default (png_fast.c: zlib level 2 with the Up
 * filter, in strips deflated side by side) measured (CPU time) on a
 * 2048² 16-bit fBm heightmap, as libpng wrote it: 153 ms and 5.48 MB
 * where level 6 with libpng's adaptive choice among all five filters
 * took 1048 ms and 5.66 MB; on alpine's seven 513² PNGs 85 ms for
 * 2.27 MB against 268 ms for 2.10 MB.  `small`, here through libpng,
 * encodes at level 9 with four filter and strategy choices and keeps the
 * smallest: no single choice wins on every image (libpng's adaptive
 * filters with Z_FILTERED on alpine's maps, Up with the default strategy
 * on fine-grained 16-bit data). */
#define TG__PNG_SMALL_LEVEL 9
/* The most a decoded image may take: a 16385² RGBA 16-bit map fits, a
 * 65536² 16-bit RGBA one (32 GiB) is refused before anything is allocated. */
#define TG__PNG_MAX_BYTES ((uint64_t) 4 << 30)
/* Deflate packs at most 1032 bytes into one, so a file shorter than its
 * image's data / 1032 cannot hold the image: refused before allocating,
 * or a 69-byte file could ask for gigabytes. */
#define TG__PNG_MAX_RATIO 1032

typedef struct
{
  FILE *f;
  uint8_t *data;
  png_bytep *rows;
  int code;      /* TG_E* to report; the first problem wins */
  char msg[256];
} PngState;

static void
on_error (png_structp png, png_const_charp msg)
{
  PngState *st = png_get_error_ptr (png);

  if (!st->code)
    {
      st->code = TG_EFORMAT;
      snprintf (st->msg, sizeof st->msg, "%s", msg ? msg : "libpng error");
    }
  png_longjmp (png, 1);
}

/* Fails the read with CODE and a message of our own (on_error keeps the
 * first problem's). */
static void fail_read (png_structp png, PngState *st, int code, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5), noreturn));

static void
fail_read (png_structp png, PngState *st, int code, const char *fmt, ...)
{
  va_list ap;

  if (!st->code)
    {
      st->code = code;
      va_start (ap, fmt);
      vsnprintf (st->msg, sizeof st->msg, fmt, ap);
      va_end (ap);
    }
  png_error (png, st->msg);
}

static void
on_warning (png_structp png, png_const_charp msg)
{
  /* A library writes nothing to stderr; warnings are not failures. */
  (void) png;
  (void) msg;
}

static void
on_read (png_structp png, png_bytep data, size_t n)
{
  PngState *st = png_get_io_ptr (png);

  if (fread (data, 1, n, st->f) != n)
    {
      if (ferror (st->f))
        {
          st->code = TG_EIO;
          snprintf (st->msg, sizeof st->msg, "read error: %s", strerror (errno));
        }
      png_error (png, "the file is truncated");
    }
}

static void
on_write (png_structp png, png_bytep data, size_t n)
{
  PngState *st = png_get_io_ptr (png);

  if (fwrite (data, 1, n, st->f) != n)
    {
      st->code = TG_EIO;
      snprintf (st->msg, sizeof st->msg, "write error: %s", strerror (errno));
      png_longjmp (png, 1);
    }
}

static void
on_flush (png_structp png)
{
  PngState *st = png_get_io_ptr (png);

  fflush (st->f);
}

/* Reads PATH into OUT; with HEADER_ONLY, stops after the checks on its
 * header (OUT's data stays NULL), so a size is known without decoding. */
static int
png_read (const char *path, TgImage *out, bool header_only, TgError *err)
{
  /* Every ancillary chunk libpng knows but tRNS: we use none of them, and
   * some handlers trust the chunk's length (libpng 1.6.39 allocates an
   * eXIf chunk's declared size, gigabytes from a small file). */
  static const png_byte skipped[] = "bKGD\0cHRM\0eXIf\0gAMA\0hIST\0iCCP\0iTXt\0oFFs\0"
                                    "pCAL\0pHYs\0sBIT\0sCAL\0sPLT\0sRGB\0tEXt\0tIME\0zTXt\0";
  PngState *st;
  png_structp png;
  png_infop info;
  png_byte sig[8];
  png_uint_32 width, height;
  int depth, ctype, channels, bits;
  size_t rowbytes;

  if (!path || !out)
    return tg_error_set (err, TG_EINVAL, "", "no PNG file to read");
  memset (out, 0, sizeof *out);
  st = calloc (1, sizeof *st);
  if (!st)
    return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  st->f = tg__fopen_regular (path, err);
  if (!st->f)
    {
      free (st);
      return err && err->code ? err->code : TG_EIO;
    }
  if (fread (sig, 1, 8, st->f) != 8 || png_sig_cmp (sig, 0, 8) != 0)
    {
      fclose (st->f);
      free (st);
      return tg_error_set (err, TG_EFORMAT, "", TG_MSG_NOT_PNG, path);
    }

  png = png_create_read_struct (PNG_LIBPNG_VER_STRING, st, on_error, on_warning);
  info = png ? png_create_info_struct (png) : NULL;
  if (!info)
    {
      png_destroy_read_struct (png ? &png : NULL, NULL, NULL);
      fclose (st->f);
      free (st);
      return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
    }
  /* Only ST's heap fields change after this point, so they survive the longjmp. */
  if (setjmp (png_jmpbuf (png)))
    {
      int code = st->code ? st->code : TG_EFORMAT;
      png_destroy_read_struct (&png, &info, NULL);
      fclose (st->f);
      tg_error_set (err, code, "", "%s: %s", path, st->msg);
      free (st->rows);
      free (st->data);
      free (st);
      return code;
    }

  png_set_read_fn (png, st, on_read);
  png_set_sig_bytes (png, 8);
  /* 5 bytes a name. */
  png_set_keep_unknown_chunks (png, PNG_HANDLE_CHUNK_NEVER, skipped,
                               (int) (sizeof skipped / 5));
  png_set_benign_errors (png, 1);
  png_set_user_limits (png, TG__IMAGE_MAX_SIDE, TG__IMAGE_MAX_SIDE);
  png_read_info (png, info);
  png_get_IHDR (png, info, &width, &height, &depth, &ctype, NULL, NULL, NULL);
  {
    /* The stored samples, before expansion: the least data the file
     * must hold, compressed. */
    uint64_t stored
      = (uint64_t) width * height * (uint64_t) depth * png_get_channels (png, info) / 8;
    struct stat sb;
    if (fstat (fileno (st->f), &sb) == 0 && S_ISREG (sb.st_mode)
        && stored / TG__PNG_MAX_RATIO > (uint64_t) sb.st_size)
      fail_read (png, st, TG_EFORMAT,
                 "the file is too short to hold a %" PRIu32 "x%" PRIu32 " image (truncated?)",
                 (uint32_t) width, (uint32_t) height);
  }

  if (ctype == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb (png);
  if (ctype == PNG_COLOR_TYPE_GRAY && depth < 8)
    png_set_expand_gray_1_2_4_to_8 (png);
  if (png_get_valid (png, info, PNG_INFO_tRNS))
    png_set_tRNS_to_alpha (png);
  if (depth == 16 && tg__host_little_endian ())
    png_set_swap (png);
  png_set_interlace_handling (png);
  png_read_update_info (png, info);

  channels = png_get_channels (png, info);
  bits = png_get_bit_depth (png, info);
  rowbytes = png_get_rowbytes (png, info);
  if ((bits != 8 && bits != 16) || channels < 1 || channels > 4
      || rowbytes != (size_t) width * (size_t) channels * (size_t) (bits / 8))
    png_error (png, "unsupported pixel layout");
  if ((uint64_t) rowbytes * height > TG__PNG_MAX_BYTES)
    fail_read (png, st, TG_ERANGE,
               "a %" PRIu32 "x%" PRIu32 " image with %d channels of %d bits is more than the "
               "%" PRIu64 " GiB an input image may take",
               (uint32_t) width, (uint32_t) height, channels, bits, TG__PNG_MAX_BYTES >> 30);
  if (header_only)
    {
      png_destroy_read_struct (&png, &info, NULL);
      fclose (st->f);
      free (st);
      *out = (TgImage) { .width = (int) width, .height = (int) height, .channels = channels,
                         .bits = bits };
      return 0;
    }

  st->data = malloc (rowbytes * height);
  st->rows = malloc (sizeof *st->rows * height);
  if (!st->data || !st->rows)
    fail_read (png, st, TG_ENOMEM, "out of memory for a %" PRIu32 "x%" PRIu32 " image",
               (uint32_t) width, (uint32_t) height);
  for (png_uint_32 y = 0; y < height; y++)
    st->rows[y] = st->data + (size_t) y * rowbytes;
  png_read_image (png, st->rows);

  png_destroy_read_struct (&png, &info, NULL);
  fclose (st->f);
  out->width = (int) width;
  out->height = (int) height;
  out->channels = channels;
  out->bits = bits;
  out->data = st->data;
  free (st->rows);
  free (st);
  return 0;
}

int
tg_png_read (const char *path, TgImage *out, TgError *err)
{
  return png_read (path, out, false, err);
}

int
tg_png_read_info (const char *path, TgImage *info, TgError *err)
{
  return png_read (path, info, true, err);
}

/* Encodes SRC into F with zlib LEVEL and STRATEGY and the PNG FILTERS. */
static int
png_encode (FILE *f, const TgImageRows *src, int bits, int level, int filters, int strategy,
            TgError *err)
{
  static const int ctypes[] = { PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA };
  TgRowBands bands;
  PngState *st;
  png_structp png;
  png_infop info;
  int rc;

  if (!f)
    return tg_error_set (err, TG_EINVAL, "", "no stream to write the PNG to");
  if (bits == 32)
    return tg_error_set (err, TG_EFORMAT, "", "PNG holds 8 or 16 bits per sample, not float");
  if ((rc = tg__row_bands_init (&bands, src, bits, err)) < 0)
    return rc;

  st = calloc (1, sizeof *st);
  if (!st)
    {
      tg__row_bands_clear (&bands);
      return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
    }
  st->f = f;
  png = png_create_write_struct (PNG_LIBPNG_VER_STRING, st, on_error, on_warning);
  info = png ? png_create_info_struct (png) : NULL;
  if (!info)
    {
      png_destroy_write_struct (png ? &png : NULL, NULL);
      free (st);
      tg__row_bands_clear (&bands);
      return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
    }
  if (setjmp (png_jmpbuf (png)))
    {
      int code = st->code ? st->code : TG_EFORMAT;
      png_destroy_write_struct (&png, &info);
      tg_error_set (err, code, "", "writing PNG: %s", st->msg);
      free (st);
      tg__row_bands_clear (&bands);
      return code;
    }

  png_set_write_fn (png, st, on_write, on_flush);
  png_set_compression_level (png, level);
  png_set_compression_strategy (png, strategy);
  png_set_filter (png, PNG_FILTER_TYPE_BASE, filters);
  png_set_IHDR (png, info, (png_uint_32) src->width, (png_uint_32) src->height, bits,
                ctypes[src->channels - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                PNG_FILTER_TYPE_DEFAULT);
  png_write_info (png, info);
  if (bits == 16 && tg__host_little_endian ())
    png_set_swap (png);
  for (;;)
    {
      size_t stride = (size_t) src->width * (size_t) src->channels * (size_t) (bits / 8);
      const TgImage *band;
      int n = tg__row_bands_next (&bands, &band, err);
      if (n <= 0)
        {
          rc = n;
          break;
        }
      for (int y = 0; y < n; y++)
        png_write_row (png, (png_const_bytep) band->data + (size_t) y * stride);
    }
  /* After a failed band the PNG stays unfinished; the export discards it. */
  if (rc == 0)
    png_write_end (png, NULL);
  png_destroy_write_struct (&png, &info);
  free (st);
  tg__row_bands_clear (&bands);
  if (rc == 0 && ferror (f))
    return tg_error_set (err, TG_EIO, "", "writing PNG: %s", strerror (errno));
  return rc;
}

int
tg__png_write_rows (FILE *f, const TgImageRows *src, int bits, bool small, TgError *err)
{
  static const struct
  {
    int filters, strategy;
  } candidates[] = { { PNG_ALL_FILTERS, Z_FILTERED },
                     { PNG_ALL_FILTERS, Z_DEFAULT_STRATEGY },
                     { PNG_FILTER_UP, Z_DEFAULT_STRATEGY },
                     { PNG_FILTER_PAETH, Z_DEFAULT_STRATEGY } };
  char *best = NULL;
  size_t best_n = 0;
  int rc = 0;

  if (!small)
    return tg__png_write_fast (f, src, bits, err);
  if (!f)
    return tg_error_set (err, TG_EINVAL, "", "no stream to write the PNG to");
  /* The rows are read again for each candidate; the smallest is kept. */
  for (size_t k = 0; rc == 0 && k < sizeof candidates / sizeof candidates[0]; k++)
    {
      char *buf = NULL;
      size_t n = 0;
      FILE *m = open_memstream (&buf, &n);
      if (!m)
        {
          rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
          break;
        }
      rc = png_encode (m, src, bits, TG__PNG_SMALL_LEVEL, candidates[k].filters,
                       candidates[k].strategy, err);
      if (fclose (m) != 0 && rc == 0)
        rc = tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      if (rc == 0 && (!best || n < best_n))
        {
          free (best);
          best = buf;
          best_n = n;
        }
      else
        free (buf);
    }
  if (rc == 0 && fwrite (best, 1, best_n, f) != best_n)
    rc = tg_error_set (err, TG_EIO, "", "writing PNG: %s", strerror (errno));
  free (best);
  return rc;
}

static int
write_png_bits (FILE *f, const TgImage *img, int bits, bool small, TgError *err)
{
  TgImageRows rows;
  int rc = tg__image_check (img, err);

  if (rc)
    return rc;
  tg__image_rows_from (&rows, img);
  return tg__png_write_rows (f, &rows, bits, small, err);
}

int
tg_png_write (FILE *f, const TgImage *img, TgError *err)
{
  if (img && img->bits == 32)
    return tg_error_set (err, TG_EFORMAT, "", "PNG holds 8 or 16 bits per sample, not float");
  return write_png_bits (f, img, img ? img->bits : 0, false, err);
}

int
tg__write_png16 (FILE *f, const TgImage *img, TgError *err)
{
  return write_png_bits (f, img, 16, false, err);
}

int
tg__write_png8 (FILE *f, const TgImage *img, TgError *err)
{
  return write_png_bits (f, img, 8, false, err);
}

int
tg__write_png16_small (FILE *f, const TgImage *img, TgError *err)
{
  return write_png_bits (f, img, 16, true, err);
}

int
tg__write_png8_small (FILE *f, const TgImage *img, TgError *err)
{
  return write_png_bits (f, img, 8, true, err);
}

int
tg__write_png16_rows (FILE *f, const TgImageRows *src, TgError *err)
{
  return tg__png_write_rows (f, src, 16, false, err);
}

int
tg__write_png8_rows (FILE *f, const TgImageRows *src, TgError *err)
{
  return tg__png_write_rows (f, src, 8, false, err);
}

int
tg__write_png16_small_rows (FILE *f, const TgImageRows *src, TgError *err)
{
  return tg__png_write_rows (f, src, 16, true, err);
}

int
tg__write_png8_small_rows (FILE *f, const TgImageRows *src, TgError *err)
{
  return tg__png_write_rows (f, src, 8, true, err);
}
