/* Helpers shared by the erosion nodes (erosion_thermal.c,
 * erosion_hydraulic.c, erosion_flow.c): the reference lattice that makes
 * their parameters independent of the resolution, the mapping of a depth
 * or an accumulation to a 0..1 mask, and ISA dispatch for the vector
 * kernels.  Internal to engine/nodes.
 */
#ifndef TG_NODES_EROSION_UTIL_H
#define TG_NODES_EROSION_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/node.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define TG__EROSION_HAVE_X86 1
#endif

/* Whether the AVX2 builds of the kernels may run on this CPU.  The vector
 * kernels compute every sample with the same IEEE operations in the same
 * order in every build, so the choice never changes a byte; the
 * environment variable TG_EROSION_NO_AVX2 forces the baseline build so a
 * test can check exactly that. */
static inline bool
tg__erosion_have_avx2 (void)
{
#ifdef TG__EROSION_HAVE_X86
  if (getenv ("TG_EROSION_NO_AVX2"))
    return false;
  return __builtin_cpu_supports ("avx2");
#else
  return false;
#endif
}

/* The widest build of an erosion kernel this CPU runs, the same for every
 * node that has such builds.  The environment variable ENV (generic or
 * avx2) asks for a narrower one, and TG_EROSION_NO_AVX2 for the generic
 * one, so a test can compare the builds' bytes; a node without an AVX2
 * build takes GENERIC for AVX2. */
typedef enum
{
  TG__EROSION_ISA_GENERIC,
  TG__EROSION_ISA_AVX2,
  TG__EROSION_ISA_AVX512,
} TgErosionIsa;

static inline TgErosionIsa
tg__erosion_isa (const char *env)
{
#ifdef TG__EROSION_HAVE_X86
  const char *want = getenv (env);
  TgErosionIsa best = TG__EROSION_ISA_GENERIC;

  if (tg__erosion_have_avx2 ())
    best = __builtin_cpu_supports ("avx512f") && __builtin_cpu_supports ("avx512dq")
             ? TG__EROSION_ISA_AVX512
             : TG__EROSION_ISA_AVX2;
  if (want && strcmp (want, "generic") == 0)
    return TG__EROSION_ISA_GENERIC;
  if (want && strcmp (want, "avx2") == 0 && best >= TG__EROSION_ISA_AVX2)
    return TG__EROSION_ISA_AVX2;
  return best;
#else
  (void) env;
  return TG__EROSION_ISA_GENERIC;
#endif
}

/* A non-negative quantity as a 0..1 mask: linear up to FULL, 1 above;
 * NaN becomes 0.  FULL is in the quantity's own units (metres), never a
 * maximum found in the region, so tiles and previews agree. */
static inline float
tg__erosion_mask_linear (double v, double full)
{
  double m = v / full;
  return m > 0.0 ? (m < 1.0 ? (float) m : 1.0f) : 0.0f;
}

/* The scale of a drainage-area mask, log(1 + A / a) / log(1 + W / a),
 * with W the world's area and a the cell area of a 1025-sample map of
 * the same world: *REF_AREA gets a (m²), *LOG_MAX log(1 + W / a).  The
 * same for a tile as for the whole world and at any resolution. */
static inline void
tg__erosion_area_scale (const TgWorld *world, const TgRegion *r, double *ref_area,
                        double *log_max)
{
  double sx = world->size_x > 0 ? world->size_x : r->cell * (r->full_w - 1);
  double sz = world->size_z > 0 ? world->size_z : r->cell * (r->full_h - 1);

  *ref_area = (sx / 1024.0) * (sx / 1024.0);
  *log_max = log1p (sx * sz / *ref_area);
}

/* Runs a node's own parameter check inside eval, so a front end that
 * skipped validation still gets a message naming the parameter. */
static inline int
tg__erosion_check (TgEvalCtx *c, int (*check) (const void *, TgError *))
{
  TgError e = { 0 };

  if (check (tg_eval_params (c), &e) < 0)
    return tg_eval_fail (c, e.code, "%s: %s", e.path, e.message);
  return 0;
}

/* The uniform cubic B-spline's weights W[0..3] for the samples at -1, 0,
 * 1 and 2 around a point T (0..1) past sample 0: smooth in slope and
 * curvature, never negative, summing to 1.  Erosion solved on a coarser
 * grid lays its change back over the map with them. */
static inline void
tg__bspline_weights (double t, double w[4])
{
  double t2 = t * t, t3 = t2 * t, u = 1.0 - t;

  w[0] = u * u * u / 6.0;
  w[1] = (3.0 * t3 - 6.0 * t2 + 4.0) / 6.0;
  w[2] = (-3.0 * t3 + 3.0 * t2 + 3.0 * t + 1.0) / 6.0;
  w[3] = t3 / 6.0;
}

#endif
