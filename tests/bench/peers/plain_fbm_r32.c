/* The whole-process baseline for `tgraph eval` of fbm2048.tgraph: the
 * plain textbook fBm loop (../plain_fbm.h) over the same 2048 x 2048
 * grid, written with one fwrite to a headerless float file, as a one-off
 * tool would do it.  Usage: plain_fbm_r32 OUT.r32 [octaves] */
#include <stdio.h>
#include <stdlib.h>

#include "plain_fbm.h"

int
main (int argc, char **argv)
{
  const int side = 2048, octaves = argc > 2 ? atoi (argv[2]) : 6;
  float *out = malloc (sizeof (float) * (size_t) side * side);
  PlainPerlin p;
  FILE *f;

  if (argc < 2 || !out)
    return 2;
  plain_perlin_init (&p, 1234);
  for (int j = 0; j < side; j++)
    for (int i = 0; i < side; i++)
      out[(size_t) j * side + i] = plain_fbm (&p, -4096.0 + 4.0 * i, 4096.0 - 4.0 * j, 1000.0,
                                              octaves);
  f = fopen (argv[1], "wb");
  if (!f || fwrite (out, sizeof (float), (size_t) side * side, f) != (size_t) side * side
      || fclose (f) != 0)
    return 1;
  free (out);
  return 0;
}
