// Peer benchmark: libnoise's Perlin module (the fBm most terrain tools
// grew from), 6 octaves over the same 2048 x 2048 grid of 4 m cells that
// bench_fbm fills.  Prints CPU and wall time of the best of a few runs and
// a "RESULT" line peers_fbm.sh reads.
#include <libnoise/noise.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

static double
clock_s (clockid_t id)
{
  timespec t;
  clock_gettime (id, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int
main (int argc, char **argv)
{
  const int side = 2048, runs = argc > 1 ? std::atoi (argv[1]) : 3;
  const int octaves = argc > 2 ? std::atoi (argv[2]) : 6;
  noise::module::Perlin perlin;
  std::vector<float> out ((size_t) side * side);
  double best_cpu = 1e30, best_wall = 1e30, sum = 0.0;

  perlin.SetOctaveCount (octaves);
  perlin.SetFrequency (1.0 / 1000.0);
  perlin.SetPersistence (0.5);
  perlin.SetLacunarity (2.0);
  perlin.SetNoiseQuality (noise::QUALITY_STD);
  perlin.SetSeed (1234);
  for (int k = 0; k < runs; k++)
    {
      double w0 = clock_s (CLOCK_MONOTONIC), c0 = clock_s (CLOCK_PROCESS_CPUTIME_ID);
      for (int j = 0; j < side; j++)
        for (int i = 0; i < side; i++)
          out[(size_t) j * side + i]
            = (float) perlin.GetValue (-4096.0 + 4.0 * i, 0.0, 4096.0 - 4.0 * j);
      double c = clock_s (CLOCK_PROCESS_CPUTIME_ID) - c0, w = clock_s (CLOCK_MONOTONIC) - w0;
      if (c < best_cpu)
        {
          best_cpu = c;
          best_wall = w;
        }
    }
  for (size_t i = 0; i < out.size (); i += 4099)
    sum += out[i];
  std::printf ("libnoise Perlin, %d octaves, %d x %d: wall %.1f ms, CPU %.1f ms, %.1f Msamples/CPU s "
               "(checksum %.3f)\n",
               octaves, side, side, best_wall * 1e3, best_cpu * 1e3,
               (double) side * side / best_cpu * 1e-6, sum);
  std::printf ("RESULT libnoise %.6f\n", best_cpu);
  return 0;
}
