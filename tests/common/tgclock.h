/* Wall and CPU clocks for benchmarks and timed reports: every figure is
 * printed as both, since the machines are shared (CPU time cancels the
 * load of other work, wall time is what a user waits). */
#pragma once

#include <time.h>

/* Seconds on the monotonic clock. */
static inline double
tg_wall_s (void)
{
  struct timespec t;

  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

/* CPU seconds of the whole process, every thread. */
static inline double
tg_cpu_s (void)
{
  struct timespec t;

  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}
