/* libFuzzer target: any bytes as a .glb prototype mesh (fuzz_inputs.c).
 *
 * The custom mutator keeps the container well formed: it mutates the JSON
 * chunk or the binary chunk of an input that has them and writes the
 * lengths back, so that mutations reach the reader's walk of the scene
 * instead of stopping at the chunk-length check.  One time in four it
 * mutates the raw bytes, for the container checks themselves.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_inputs.h"

#define GLB_MAGIC 0x46546C67u
#define CHUNK_JSON 0x4E4F534Au
#define CHUNK_BIN 0x004E4942u

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate (uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator (uint8_t *data, size_t size, size_t max_size, unsigned int seed);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  return fuzz_one_glb (data, size);
}

static uint32_t
rd32 (const uint8_t *p)
{
  return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static void
wr32 (uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t) v;
  p[1] = (uint8_t) (v >> 8);
  p[2] = (uint8_t) (v >> 16);
  p[3] = (uint8_t) (v >> 24);
}

size_t
LLVMFuzzerCustomMutator (uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
  size_t jlen, blen = 0, room, total;
  uint8_t *json, *bin = NULL;
  bool has_bin;

  if (seed % 4 == 0 || size < 20 || max_size < size || rd32 (data) != GLB_MAGIC
      || rd32 (data + 16) != CHUNK_JSON || 20 + (size_t) rd32 (data + 12) > size)
    return LLVMFuzzerMutate (data, size, max_size);
  jlen = rd32 (data + 12);
  has_bin = 28 + jlen <= size && rd32 (data + 24 + jlen) == CHUNK_BIN
            && 28 + jlen + (size_t) rd32 (data + 20 + jlen) <= size;
  if (has_bin)
    blen = rd32 (data + 20 + jlen);
  /* Room for each chunk to grow into, the other one staying as it is. */
  room = max_size - (has_bin ? 28 + blen : 20);
  json = malloc (room + 1);
  if (has_bin)
    bin = malloc (max_size - 28 - jlen + 1);
  if (!json || (has_bin && !bin))
    abort ();
  memcpy (json, data + 20, jlen);
  if (has_bin)
    memcpy (bin, data + 28 + jlen, blen);
  if (seed % 4 != 3 || !has_bin)
    jlen = LLVMFuzzerMutate (json, jlen, room);
  else
    blen = LLVMFuzzerMutate (bin, blen, max_size - 28 - jlen);

  total = 20 + jlen + (has_bin ? 8 + blen : 0);
  wr32 (data, GLB_MAGIC);
  wr32 (data + 4, 2);
  wr32 (data + 8, (uint32_t) total);
  wr32 (data + 12, (uint32_t) jlen);
  wr32 (data + 16, CHUNK_JSON);
  memcpy (data + 20, json, jlen);
  if (has_bin)
    {
      wr32 (data + 20 + jlen, (uint32_t) blen);
      wr32 (data + 24 + jlen, CHUNK_BIN);
      memcpy (data + 28 + jlen, bin, blen);
    }
  free (json);
  free (bin);
  return total;
}
