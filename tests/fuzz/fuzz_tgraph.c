/* libFuzzer target: any bytes as a .tgraph text (fuzz_inputs.c). */
#include "fuzz_inputs.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  return fuzz_one_tgraph (data, size);
}
