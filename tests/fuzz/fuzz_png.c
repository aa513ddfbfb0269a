/* libFuzzer target: any bytes as a PNG for input.heightmap / input.image
 * (fuzz_inputs.c).
 *
 * The custom mutator works around the two checksums that would stop
 * almost every mutation at libpng's door: after a mutation of the bytes
 * it writes every chunk's CRC back (one time in eight it leaves them, for
 * the CRC checks themselves), and one time in three it inflates the image
 * data, mutates the raw scanlines and deflates them again as one IDAT, so
 * that filters, interlacing and short or long data are reached too.
 */
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "fuzz_inputs.h"

/* Raw scanlines are mutated up to this size. */
#define RAW_MAX (1 << 20)

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate (uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator (uint8_t *data, size_t size, size_t max_size, unsigned int seed);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  return fuzz_one_png (data, size);
}

static uint32_t
be32 (const uint8_t *p)
{
  return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | (uint32_t) p[3];
}

static void
put_be32 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) (v >> 24);
  p[1] = (uint8_t) (v >> 16);
  p[2] = (uint8_t) (v >> 8);
  p[3] = (uint8_t) v;
}

static void
fix_crcs (uint8_t *data, size_t size)
{
  for (size_t off = 8; off + 12 <= size;)
    {
      size_t len = be32 (data + off);
      if (len > size - off - 12)
        break;
      put_be32 (data + off + 8 + len, (uint32_t) crc32 (0, data + off + 4, (uInt) (4 + len)));
      off += 12 + len;
    }
}

/* Inflates the IDAT chunks, mutates the scanlines and writes them back as
 * one IDAT in place of the first; 0 when the input has no usable IDAT or
 * the result does not fit. */
static size_t
mutate_scanlines (uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
  uint8_t *z = NULL, *raw = NULL, *packed = NULL, *out = NULL;
  size_t zlen = 0, first = 0, n = 0, result = 0;
  uLongf raw_len = RAW_MAX, packed_len;

  if (size < 8 || max_size < size)
    return 0;
  z = malloc (size);
  raw = malloc (RAW_MAX);
  if (!z || !raw)
    abort ();
  for (size_t off = 8; off + 12 <= size;)
    {
      size_t len = be32 (data + off);
      if (len > size - off - 12)
        break;
      if (memcmp (data + off + 4, "IDAT", 4) == 0)
        {
          if (!first)
            first = off;
          memcpy (z + zlen, data + off + 8, len);
          zlen += len;
        }
      off += 12 + len;
    }
  if (!first || uncompress (raw, &raw_len, z, (uLong) zlen) != Z_OK)
    goto out;
  raw_len = LLVMFuzzerMutate (raw, raw_len, RAW_MAX);
  packed_len = compressBound (raw_len);
  packed = malloc (packed_len);
  out = malloc (max_size);
  if (!packed || !out)
    abort ();
  if (compress2 (packed, &packed_len, raw, raw_len, (int) (seed % 10)) != Z_OK)
    goto out;
  /* Everything before the first IDAT, the new IDAT, then every other chunk. */
  if (first + 12 + packed_len > max_size)
    goto out;
  memcpy (out, data, first);
  n = first;
  put_be32 (out + n, (uint32_t) packed_len);
  memcpy (out + n + 4, "IDAT", 4);
  memcpy (out + n + 8, packed, packed_len);
  n += 12 + packed_len;
  for (size_t off = first; off + 12 <= size;)
    {
      size_t len = be32 (data + off);
      if (len > size - off - 12)
        break;
      if (memcmp (data + off + 4, "IDAT", 4) != 0)
        {
          if (n + 12 + len > max_size)
            goto out;
          memcpy (out + n, data + off, 12 + len);
          n += 12 + len;
        }
      off += 12 + len;
    }
  fix_crcs (out, n);
  memcpy (data, out, n);
  result = n;
out:
  free (z);
  free (raw);
  free (packed);
  free (out);
  return result;
}

size_t
LLVMFuzzerCustomMutator (uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
  size_t n;

  if (seed % 3 == 0 && (n = mutate_scanlines (data, size, max_size, seed / 3)) > 0)
    return n;
  n = LLVMFuzzerMutate (data, size, max_size);
  if (seed % 8 != 1)
    fix_crcs (data, n);
  return n;
}
