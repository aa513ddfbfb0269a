/* erosion.thermal: material slides to lower neighbours wherever the slope
 * is steeper than the talus angle, until the scree rests at that angle.
 *
 * Each pass moves, between every pair of the 8-neighbourhood, an amount
 * proportional to how far their height difference exceeds the talus
 * difference for their distance (the cell size, or its sqrt 2 for
 * diagonals), in world metres.  A pair's flux is computed from the two
 * heights alone, with bit-identical magnitude on either side, so what one
 * cell loses its neighbour gains: the sum of heights is conserved up to
 * float rounding.  Passes are Jacobi steps (read one buffer, write the
 * other), rows in parallel, so the bytes never depend on the thread count.
 *
 * Boundaries: the world's edge is closed (no material crosses it), so the
 * whole world conserves mass exactly.  Inside the world the node is an
 * apron node: a pass reaches one cell, so N passes need N cells of border;
 * the valid area shrinks by one cell per pass on every side that is not a
 * world edge, and a tile equals the same window of a whole-world run.
 * The node never reads past the world's edge, so it asks for its apron
 * cut at the edge (TG_NODE_APRON_IN_WORLD): a whole-world run needs the
 * world and no more, however many passes it runs, and a tile at most
 * the world.
 *
 * Resolution: a pass is a diffusion step whose reach scales with the cell
 * size squared, so `iterations` is given for cells of `reference_cell_m`
 * and a map with cells half as wide runs four times the passes.  A 513
 * preview and a 2049 build then show the same talus slopes.
 *
 * Convergence: mode "converge" measures the slope in every direction,
 * not along the eight pairs (see "converge mode's kernel" below): on the
 * four sides of each cell, material moves while the gradient there is
 * steeper than talus + `tolerance_deg`, down the gradient and past the
 * talus, so a round spike settles into a round cone and a face into a
 * plane without a grid direction.  Each move is at least a fixed
 * amount, so the passes reach a state where nothing moves and a pass
 * returns its input bit for bit: no side's gradient is then over talus
 * + tolerance.  Slopes a kilometre long would take passes growing with
 * (length / cell)^2 to settle, so converge mode solves a pyramid of the
 * whole world, coarsest level first, each level starting from the
 * change the coarser one made (see converge_world); `iterations`
 * (scaled as above) caps the passes of each level.  Its result depends
 * on the whole world, so its apron is the world (cut at the edge): a
 * tile computes the world and keeps its window.
 *
 * Mask: the optional loose-material mask (0..1) says how much of a sample
 * takes part in the slide.  A pair moves what it would without one, cut
 * to the mask of the cell the material leaves times that amount, plus the
 * scree lying on that cell (how far it is above where it started): 0 is
 * bedrock, which sheds only scree that fell on it and never sinks below
 * where it started; 1 sheds as without a mask (a mask of 1 gives the
 * unmasked bytes; see pair_masked; converge mode cuts each side's move
 * the same way, see iso_cut).  Both cells of a pair compute the
 * same cut, so the volume is still conserved.  The masked passes run the
 * same vector code on every ISA (thermal_row_masked_body), so every
 * kernel gives the same bytes.  Converge mode's pyramid takes the firmest
 * fine sample for a coarse one (a coarse sample that is partly bedrock
 * sheds only its scree: see mg_restrict_min), and a coarse level's change
 * that would lower a fine sample is cut by its mask (and the scree on
 * it); its stop test is unchanged: a pass that changes nothing, and pairs
 * whose material cannot move change nothing, so only slopes on loose
 * ground (or scree) hold it going.
 *
 * Rockfall (weathering_m, converge mode, with a mask): before the
 * passes, the bedrock faces steeper than talus step back by that depth
 * and the rock rolls down to their feet as a sand pile grows (see
 * rockfall); it lies there as scree, which the passes settle at the
 * talus angle, so cones gather below couloirs and aprons along faces.
 *
 * Either mode stops early at the first pass that changes no sample it
 * updates: an updated sample depends only on the samples around it one
 * pass before, so once the updated window is a fixed point every later
 * pass is one too, and the bytes equal those of running the whole cap; in
 * passes mode a tile and the whole world stop at different passes and
 * still agree.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

#include "erosion_util.h"
#ifdef TG__EROSION_HAVE_X86
#include <immintrin.h>
#endif
#include "grid_util.h"

/* Bounds the passes (and so the apron) a tiny cell could ask for. */
#define THERMAL_PASSES_MAX 20000
/* Converge mode's apron: more than any world (see converge_world). */
#define THERMAL_WORLD_APRON (TG_RESOLUTION_MAX + 1)
/* Rows per AVX-512 sweep (rows_avx512, thermal_rows). */
#define THERMAL_ROWS_MAX 4
#define THERMAL_ROWS_DEFAULT 4

enum
{
  MODE_PASSES,
  MODE_CONVERGE,
};
static const char *const mode_choices[] = { "passes", "converge", NULL };

typedef struct
{
  double talus_deg;
  int iterations;
  double strength;
  double reference_cell_m;
  double deposit_full_m;
  int mode;
  double tolerance_deg;
  double weathering_m;
} ThermalParams;

static const TgParamDesc thermal_params[] = {
  TG_PARAM_FLOAT (ThermalParams, talus_deg, .label = N_("Talus angle"), .def = 35.0, .min = 0.0,
                  .max = 89.0, .soft_min = 10.0, .soft_max = 60.0, .unit = "deg",
                  .help = N_("Slopes steeper than this shed material until they rest at it")),
  TG_PARAM_INT (ThermalParams, iterations, .label = N_("Iterations"), .def = 50, .min = 0,
                .max = 5000,
                .help = N_("Passes at cells of the reference size; smaller cells run more "
                           "(iterations x (reference / cell)^2), larger cells fewer")),
  TG_PARAM_FLOAT (ThermalParams, strength, .label = N_("Strength"), .def = 0.5, .min = 0.0,
                  .max = 1.0,
                  .help = N_("Fraction of the excess over the talus slope moved per pass; 1 is the "
                             "most that stays stable")),
  TG_PARAM_FLOAT (ThermalParams, reference_cell_m, .label = N_("Reference cell"), .def = 4.0,
                  .min = 0.0, .max = 1000.0, .soft_min = 0.5, .soft_max = 64.0, .unit = "m",
                  .help = N_("Cell size the iteration count is given for; 0 runs exactly "
                             "`iterations` passes at any resolution")),
  TG_PARAM_FLOAT (ThermalParams, deposit_full_m, .label = N_("Full deposit"), .def = 2.0,
                  .min = 0.001, .max = 1e4, .soft_min = 0.1, .soft_max = 50.0, .unit = "m",
                  .help = N_("Depth of new scree that reads as 1 in the deposit mask")),
  TG_PARAM_ENUM (ThermalParams, mode, .label = N_("Mode"), .def_s = "passes",
                 .choices = mode_choices,
                 .help = N_("passes: run the iterations; converge: run until no slope is steeper "
                            "than talus + tolerance, with the iterations as a cap")),
  TG_PARAM_FLOAT (ThermalParams, tolerance_deg, .label = N_("Tolerance"), .def = 1.0, .min = 0.01,
                  .max = 10.0, .soft_min = 0.1, .soft_max = 5.0, .unit = "deg",
                  .help = N_("Converge mode: slopes up to talus + tolerance are left standing")),
  TG_PARAM_FLOAT (ThermalParams, weathering_m, .label = N_("Weathering"), .def = 0.0, .min = 0.0,
                  .max = 1000.0, .soft_min = 0.0, .soft_max = 20.0, .unit = "m",
                  .help = N_("Converge mode, with a loose-material mask: depth of rock that "
                             "crumbles off bedrock faces steeper than talus and rolls down to "
                             "their feet, where it settles in cones and aprons at the talus "
                             "angle")),
};

static const TgPortDesc thermal_inputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Terrain to erode") },
  { .name = "mask", .type = TG_TYPE_MASK, .label = N_("Loose material"), .optional = true,
    .help = N_("How much of each sample is loose and slides: 0 is bedrock, which stays and "
               "sheds only the scree that falls on it, 1 slides fully (1 everywhere when "
               "unlinked)") },
};

static const TgPortDesc thermal_outputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Eroded terrain") },
  { .name = "deposit", .type = TG_TYPE_MASK, .label = N_("Deposit"),
    .help = N_("Where scree came to rest: its depth over the full-deposit depth") },
};

/* Rockfall (weathering_m) settles over the whole world: converge mode's. */
static int
thermal_check (const void *params, TgError *err)
{
  const ThermalParams *p = params;

  if (p->weathering_m > 0.0 && p->mode != MODE_CONVERGE)
    return tg_error_set (err, TG_EINVAL, "params.weathering_m", TG_MSG_WEATHERING_CONVERGE,
                         p->weathering_m);
  return 0;
}

/* Passes run at cell size CELL_M (also the apron, in cells). */
static int
thermal_passes (const ThermalParams *p, double cell_m)
{
  double r, n;

  if (p->iterations <= 0)
    return 0;
  if (!(p->reference_cell_m > 0.0) || !(cell_m > 0.0))
    return p->iterations;
  r = p->reference_cell_m / cell_m;
  n = ceil ((double) p->iterations * r * r - 1e-9);
  if (!(n < THERMAL_PASSES_MAX))
    return THERMAL_PASSES_MAX;
  return n < 1.0 ? 1 : (int) n;
}

/* Passes mode: a pass reaches a cell.  Converge mode: the whole world
 * (see converge_world), cut at its edge by the engine. */
static int
thermal_apron (const void *params, double cell_m)
{
  const ThermalParams *p = params;

  if (p->mode == MODE_CONVERGE && p->iterations > 0)
    return THERMAL_WORLD_APRON;
  return thermal_passes (params, cell_m);
}

/* --- the pass kernel ----------------------------------------------------- */

/* Coefficients of one pass.  Orthogonal pairs weigh 1 and diagonal ones
 * 1/2; with the stability bound sum(k) + max(k) <= 1 (a peak must not
 * sink below a neighbour it feeds) strength 1 gives k = 1/7 and 1/14. */
typedef struct
{
  float t1, t2; /* talus height difference, orthogonal and diagonal (height units) */
  float k1, k2; /* fraction of the excess moved per pass */
} ThermalCoef;

/* Flux term of a pair with difference D (mine minus the neighbour's):
 * the excess over the talus T, positive when I shed, negative when I
 * receive, 0 while |D| <= T.  Written as masks so the vector build
 * computes the same bits as the scalar tail; -(d) - t == -(d + t)
 * exactly, so the two cells of a pair see exactly opposite terms; d > t
 * exactly when d - t > 0 (IEEE subtraction of unequal floats is never
 * 0). */
static inline float
pair_excess (float d, float t)
{
  return (d > t ? d - t : 0.0f) + (d < -t ? d + t : 0.0f);
}

static inline float
cell_update (float h, float w, float e, float n, float s, float nw, float ne, float sw, float se,
             const ThermalCoef *k)
{
  float s1 = ((pair_excess (h - w, k->t1) + pair_excess (h - e, k->t1))
               + pair_excess (h - n, k->t1))
             + pair_excess (h - s, k->t1);
  float s2 = ((pair_excess (h - nw, k->t2) + pair_excess (h - ne, k->t2))
              + pair_excess (h - sw, k->t2))
             + pair_excess (h - se, k->t2);
  return h - (k->k1 * s1 + k->k2 * s2);
}

/* With a loose-material mask, material leaves a cell as its mask allows
 * and, besides, the scree lying on it: a pair's term E (pair_excess) is
 * cut to min (|E|, M |E| + S) with E's sign, M and S the mask and scree
 * depth of the cell the material leaves (mine, MS and SS, when I shed:
 * D > T; else the neighbour's, MN and SN).  Seen from the neighbour the
 * difference is -D, E exactly its negation and the cell chosen the same,
 * so the pair's two cells still see exactly opposite terms and the
 * volume is conserved.  A cell of mask 0 sheds at most its scree depth
 * per pair, and its pairs weigh 4 k1 + 4 k2 = 6/7 x strength < 1 in all,
 * so it never sinks below where it started: bedrock stays, and scree that
 * falls on it slides on.  With M = 1 the cut is |E| itself (|E| <= |E| +
 * S), so a mask of 1 gives the unmasked bits. */
static inline float
pair_masked (float d, float t, float ms, float ss, float mn, float sn)
{
  float e = pair_excess (d, t), a = fabsf (e);
  bool shed = d > t;
  float g = (shed ? ms : mn) * a + (shed ? ss : sn), c = a < g ? a : g;

  return copysignf (c, e);
}

/* Scree depth: height H over its height before the passes H0, or 0. */
static inline float
scree_of (float h, float h0)
{
  float s = h - h0;

  return s > 0.0f ? s : 0.0f;
}

/* cell_update with a mask: HV my height and my neighbours' (in
 * cell_update's order), MV their masks, SV their scree depths
 * (scree_of), the sums in cell_update's order. */
static inline float
cell_update_masked (const float hv[9], const float mv[9], const float sv[9], const ThermalCoef *k)
{
  /* [0] me, then w, e, n, s, nw, ne, sw, se. */
  float h = hv[0], m = mv[0], sc = sv[0];
#define PM(q, t) pair_masked (h - hv[q], k->t, m, sc, mv[q], sv[q])
  float s1 = ((PM (1, t1) + PM (2, t1)) + PM (3, t1)) + PM (4, t1);
  float s2 = ((PM (5, t2) + PM (6, t2)) + PM (7, t2)) + PM (8, t2);
#undef PM
  return h - (k->k1 * s1 + k->k2 * s2);
}

/* 8-float vectors through GCC's vector extension: plain IEEE operations
 * that the baseline build splits into SSE halves and the AVX2 build runs
 * whole.  The helpers are always inlined, so no vector ever crosses a
 * call and the ABI note GCC gives for 32-byte arguments does not apply. */
#pragma GCC diagnostic ignored "-Wpsabi"
#define V8_INLINE static inline __attribute__ ((always_inline))
typedef float V8 __attribute__ ((vector_size (32), aligned (4)));
typedef int V8i __attribute__ ((vector_size (32), aligned (4)));

V8_INLINE V8
v_load (const float *p)
{
  V8 v;
  memcpy (&v, p, sizeof v);
  return v;
}

V8_INLINE V8
v_splat (float f)
{
  V8 v = { f, f, f, f, f, f, f, f };
  return v;
}

V8_INLINE V8
v_pair_excess (V8 d, V8 t)
{
  V8 a = d - t, b = d + t;
  V8i ma = d > t, mb = d < -t;
  return (V8) ((V8i) a & ma) + (V8) ((V8i) b & mb);
}

/* Cells [X0, X1) of a row whose neighbours all exist: 8 at a time, then
 * one at a time with the same arithmetic. */
V8_INLINE void
thermal_row_body (const float *restrict up, const float *restrict mid, const float *restrict dn,
                  float *restrict out, int x0, int x1, const ThermalCoef *k)
{
  V8 t1 = v_splat (k->t1), t2 = v_splat (k->t2), k1 = v_splat (k->k1), k2 = v_splat (k->k2);
  int x = x0;

  for (; x + 8 <= x1; x += 8)
    {
      V8 h = v_load (mid + x);
      V8 s1 = ((v_pair_excess (h - v_load (mid + x - 1), t1)
                + v_pair_excess (h - v_load (mid + x + 1), t1))
               + v_pair_excess (h - v_load (up + x), t1))
              + v_pair_excess (h - v_load (dn + x), t1);
      V8 s2 = ((v_pair_excess (h - v_load (up + x - 1), t2)
                + v_pair_excess (h - v_load (up + x + 1), t2))
               + v_pair_excess (h - v_load (dn + x - 1), t2))
              + v_pair_excess (h - v_load (dn + x + 1), t2);
      V8 r = h - (k1 * s1 + k2 * s2);
      memcpy (out + x, &r, sizeof r);
    }
  for (; x < x1; x++)
    out[x] = cell_update (mid[x], mid[x - 1], mid[x + 1], up[x], dn[x], up[x - 1], up[x + 1],
                          dn[x - 1], dn[x + 1], k);
}

static void
thermal_row_generic (const float *up, const float *mid, const float *dn, float *out, int x0,
                     int x1, const ThermalCoef *k)
{
  thermal_row_body (up, mid, dn, out, x0, x1, k);
}

/* Rows of a map, of its mask and of the map before the passes: above,
 * the row itself, below. */
typedef struct
{
  const float *up, *mid, *dn;
  const float *mup, *mmid, *mdn;
  const float *oup, *omid, *odn;
} MaskedRows;

V8_INLINE V8
v_select (V8i c, V8 a, V8 b)
{
  return (V8) (((V8i) a & c) | ((V8i) b & ~c));
}

V8_INLINE V8
v_scree (V8 h, V8 h0)
{
  V8 s = h - h0, zero = v_splat (0.0f);

  return v_select (s > zero, s, zero);
}

/* pair_masked, 8 at a time: the same operations (fabsf and copysignf as
 * the sign bit cleared and copied). */
V8_INLINE V8
v_pair_masked (V8 d, V8 t, V8 ms, V8 ss, V8 mn, V8 sn)
{
  V8i sign = (V8i) v_splat (-0.0f), shed = d > t;
  V8 e = v_pair_excess (d, t), a = (V8) ((V8i) e & ~sign);
  V8 g = v_select (shed, ms, mn) * a + v_select (shed, ss, sn);
  V8 c = v_select (a < g, a, g);

  return (V8) (((V8i) c & ~sign) | ((V8i) e & sign));
}

/* The masked pair term of cells H (mask M, scree S) with the neighbours
 * at P (their masks at MP, their heights before the passes at OP). */
V8_INLINE V8
v_pair_at (V8 h, V8 m, V8 s, const float *p, const float *mp, const float *op, V8 t)
{
  V8 hn = v_load (p);

  return v_pair_masked (h - hn, t, m, s, v_load (mp), v_scree (hn, v_load (op)));
}

/* cell_update_masked over cells [X0, X1) of a row whose neighbours all
 * exist, 8 at a time, then one at a time: the same operations in the
 * same order, so every build of it (generic, AVX2, AVX-512) gives the
 * same bits. */
V8_INLINE void
thermal_row_masked_body (const MaskedRows *r, float *restrict out, int x0, int x1,
                         const ThermalCoef *k)
{
  const float *up = r->up, *mid = r->mid, *dn = r->dn;
  const float *mup = r->mup, *mmid = r->mmid, *mdn = r->mdn;
  const float *oup = r->oup, *omid = r->omid, *odn = r->odn;
  V8 t1 = v_splat (k->t1), t2 = v_splat (k->t2), k1 = v_splat (k->k1), k2 = v_splat (k->k2);
  int x = x0;

  for (; x + 8 <= x1; x += 8)
    {
      V8 h = v_load (mid + x), m = v_load (mmid + x), sc = v_scree (h, v_load (omid + x));
#define PM(row, mrow, orow, dx, t)                                                              \
  v_pair_at (h, m, sc, (row) + x + (dx), (mrow) + x + (dx), (orow) + x + (dx), t)
      V8 s1 = ((PM (mid, mmid, omid, -1, t1) + PM (mid, mmid, omid, 1, t1))
               + PM (up, mup, oup, 0, t1))
              + PM (dn, mdn, odn, 0, t1);
      V8 s2 = ((PM (up, mup, oup, -1, t2) + PM (up, mup, oup, 1, t2))
               + PM (dn, mdn, odn, -1, t2))
              + PM (dn, mdn, odn, 1, t2);
#undef PM
      V8 res = h - (k1 * s1 + k2 * s2);
      memcpy (out + x, &res, sizeof res);
    }
  for (; x < x1; x++)
    {
      float hv[9] = { mid[x], mid[x - 1], mid[x + 1], up[x], dn[x],
                      up[x - 1], up[x + 1], dn[x - 1], dn[x + 1] };
      float mv[9] = { mmid[x], mmid[x - 1], mmid[x + 1], mup[x], mdn[x],
                      mup[x - 1], mup[x + 1], mdn[x - 1], mdn[x + 1] };
      float ov[9] = { omid[x], omid[x - 1], omid[x + 1], oup[x], odn[x],
                      oup[x - 1], oup[x + 1], odn[x - 1], odn[x + 1] };
      float sv[9];
      for (int q = 0; q < 9; q++)
        sv[q] = scree_of (hv[q], ov[q]);
      out[x] = cell_update_masked (hv, mv, sv, k);
    }
}

static void
thermal_row_masked_generic (const MaskedRows *r, float *out, int x0, int x1, const ThermalCoef *k)
{
  thermal_row_masked_body (r, out, x0, x1, k);
}

#ifdef TG__EROSION_HAVE_X86
/* The same code for the AVX2 machines: plain IEEE operations (and no
 * contraction: -ffp-contract=off), so the same bits as the generic
 * build.  AVX-512 has its own build of it (thermal_row_masked_avx512). */
__attribute__ ((target ("avx2"))) static void
thermal_row_masked_avx2 (const MaskedRows *r, float *out, int x0, int x1, const ThermalCoef *k)
{
  thermal_row_masked_body (r, out, x0, x1, k);
}
#endif

typedef struct
{
  float *s[2], *se[2], *sw[2]; /* [0]/[1]: the pairs above / below the row */
} PairRows;

#ifdef TG__EROSION_HAVE_X86
/* The same arithmetic with AVX compares: ordered compares are false for
 * NaNs, as the masks above, so the bits are the same. */
__attribute__ ((target ("avx2"))) static inline __m256
avx2_pair_excess (__m256 d, __m256 t, __m256 nt)
{
  return _mm256_add_ps (_mm256_and_ps (_mm256_cmp_ps (d, t, _CMP_GT_OQ), _mm256_sub_ps (d, t)),
                        _mm256_and_ps (_mm256_cmp_ps (d, nt, _CMP_LT_OQ), _mm256_add_ps (d, t)));
}

/* Pairs of row A's cells [LO, HI) with row B's cell at column + SHIFT. */
__attribute__ ((target ("avx2"))) static void
down_pairs_avx2 (const float *a, const float *b, int shift, float *out, int lo, int hi, float t)
{
  __m256 tv = _mm256_set1_ps (t), ntv = _mm256_set1_ps (-t);
  int i = lo;

  for (; i + 8 <= hi; i += 8)
    _mm256_storeu_ps (out + i,
                      avx2_pair_excess (_mm256_sub_ps (_mm256_loadu_ps (a + i),
                                                       _mm256_loadu_ps (b + i + shift)),
                                        tv, ntv));
  for (; i < hi; i++)
    out[i] = pair_excess (a[i] - b[i + shift], t);
}

__attribute__ ((target ("avx2"))) static void
compute_down (const float *a, const float *b, float *s, float *se, float *sw, int x0, int x1,
              const ThermalCoef *k)
{
  down_pairs_avx2 (a, b, 0, s, x0, x1, k->t1);
  down_pairs_avx2 (a, b, 1, se, x0 - 1, x1, k->t2);
  down_pairs_avx2 (a, b, -1, sw, x0, x1 + 1, k->t2);
}

/* The same pair term in three operations for a tame map (no NaN;
 * see map_is_tame): D minus D clamped to [-T, T], as
 * avx512_excess_tame.  MAXPS and MINPS return their second operand on
 * equal values (+0 and -0 included), so an in-range D comes back as
 * itself and D - D gives +0 as pair_excess does. */
__attribute__ ((target ("avx2"))) static inline __m256
avx2_excess_tame (__m256 d, __m256 t, __m256 nt)
{
  return _mm256_sub_ps (d, _mm256_min_ps (t, _mm256_max_ps (nt, d)));
}

/* One row of a pass, cells [X0, X1) (X0 >= 1, X1 <= W - 1), in one sweep.
 * Each pair's flux is computed once and shared by its two cells: the
 * term of a pair seen from the other cell is exactly the negation (see
 * pair_excess), and the sums keep cell_update's order of additions:
 * s1 = ((W + E) + N) + S with W = -(east pair of the cell to the west),
 * N = -(south pair of the cell above); s2 = ((NW + NE) + SW) + SE with
 * NW + NE = -(south-east pair of the cell above-left + south-west pair
 * of the cell above-right); so the bits do not change.  P's [0] arrays
 * hold the row's pairs above (per column: the pair of that column's cell
 * on the row above with its south, south-east and south-west
 * neighbours), and the row's pairs below go to the [1] arrays (the
 * caller swaps them).  The east pair of the cell to the west comes from
 * the previous vector (a lane rotation and a blend); the row's last
 * cells go one at a time with the same arithmetic.  TAME: the
 * three-operation pair term (no NaN). */
__attribute__ ((target ("avx2"))) static inline __attribute__ ((always_inline)) void
fused_row_avx2 (const float *m, const float *dn, const PairRows *p, float *out, int x0, int x1,
                const ThermalCoef *k, bool tame)
{
  const float *su = p->s[0], *seu = p->se[0], *swu = p->sw[0];
  float *sd = p->s[1], *sed = p->se[1], *swd = p->sw[1];
  __m256 t1 = _mm256_set1_ps (k->t1), t2 = _mm256_set1_ps (k->t2);
  __m256 nt1 = _mm256_set1_ps (-k->t1), nt2 = _mm256_set1_ps (-k->t2);
  __m256 k1 = _mm256_set1_ps (k->k1), k2 = _mm256_set1_ps (k->k2);
  __m256i rot = _mm256_setr_epi32 (7, 0, 1, 2, 3, 4, 5, 6);
  /* Lane 0 after the rotation: the east pair of cell X0 - 1. */
  __m256 prev_rot = _mm256_set1_ps (pair_excess (m[x0 - 1] - m[x0], k->t1));
  int x = x0;

#define EXCESS(d, t, nt) (tame ? avx2_excess_tame ((d), (t), (nt)) : avx2_pair_excess ((d), (t), (nt)))
  for (; x + 8 <= x1; x += 8)
    {
      __m256 h = _mm256_loadu_ps (m + x);
      __m256 ee = EXCESS (_mm256_sub_ps (h, _mm256_loadu_ps (m + x + 1)), t1, nt1);
      __m256 s = EXCESS (_mm256_sub_ps (h, _mm256_loadu_ps (dn + x)), t1, nt1);
      __m256 se = EXCESS (_mm256_sub_ps (h, _mm256_loadu_ps (dn + x + 1)), t2, nt2);
      __m256 sw = EXCESS (_mm256_sub_ps (h, _mm256_loadu_ps (dn + x - 1)), t2, nt2);
      __m256 ee_rot = _mm256_permutevar8x32_ps (ee, rot);
      __m256 em = _mm256_blend_ps (ee_rot, prev_rot, 0x01);
      __m256 s1, s2, r;
      prev_rot = ee_rot;
      s1 = _mm256_add_ps (_mm256_sub_ps (_mm256_sub_ps (ee, em), _mm256_loadu_ps (su + x)), s);
      s2 = _mm256_add_ps (_mm256_sub_ps (sw, _mm256_add_ps (_mm256_loadu_ps (seu + x - 1),
                                                            _mm256_loadu_ps (swu + x + 1))),
                          se);
      r = _mm256_sub_ps (h, _mm256_add_ps (_mm256_mul_ps (k1, s1), _mm256_mul_ps (k2, s2)));
      _mm256_storeu_ps (out + x, r);
      _mm256_storeu_ps (sd + x, s);
      _mm256_storeu_ps (sed + x, se);
      _mm256_storeu_ps (swd + x, sw);
    }
#undef EXCESS
  for (; x < x1; x++)
    {
      float h = m[x], ee = pair_excess (h - m[x + 1], k->t1);
      float em = pair_excess (m[x - 1] - h, k->t1);
      float s = pair_excess (h - dn[x], k->t1);
      float se = pair_excess (h - dn[x + 1], k->t2);
      float sw = pair_excess (h - dn[x - 1], k->t2);
      float s1 = ((ee - em) - su[x]) + s;
      float s2 = (sw - (seu[x - 1] + swu[x + 1])) + se;
      out[x] = h - (k->k1 * s1 + k->k2 * s2);
      sd[x] = s;
      sed[x] = se;
      swd[x] = sw;
    }
  /* The diagonal pairs the next row needs beyond [X0, X1). */
  sed[x0 - 1] = pair_excess (m[x0 - 1] - dn[x0], k->t2);
  swd[x1] = pair_excess (m[x1] - dn[x1 - 1], k->t2);
}

__attribute__ ((target ("avx2"))) static void
fused_row_avx2_tame (const float *m, const float *dn, const PairRows *p, float *out, int x0,
                     int x1, const ThermalCoef *k)
{
  fused_row_avx2 (m, dn, p, out, x0, x1, k, true);
}

__attribute__ ((target ("avx2"))) static void
fused_row_avx2_any (const float *m, const float *dn, const PairRows *p, float *out, int x0,
                    int x1, const ThermalCoef *k)
{
  fused_row_avx2 (m, dn, p, out, x0, x1, k, false);
}

#endif

#ifdef TG__EROSION_HAVE_X86
/* The same pair terms and sums with AVX-512: the compares give masks, a
 * masked subtract and a masked add write the two exclusive branches of
 * pair_excess (T >= 0, so D > T and D < -T never hold together, and the
 * branch taken is never -0, so adding the other branch's +0 changed no
 * bit), and the row's tail runs in the same vectors under a lane mask. */
#define TG__AVX512 __attribute__ ((target ("avx512f,avx512dq")))

TG__AVX512 static inline __m512
avx512_pair_excess (__m512 d, __m512 t, __m512 nt)
{
  __mmask16 shed = _mm512_cmp_ps_mask (d, t, _CMP_GT_OQ);
  __mmask16 take = _mm512_cmp_ps_mask (d, nt, _CMP_LT_OQ);

  return _mm512_mask_add_ps (_mm512_maskz_sub_ps (shed, d, t), take, d, t);
}

TG__AVX512 static inline __mmask16
lanes (int left)
{
  return left >= 16 ? (__mmask16) 0xffff : (__mmask16) ((1u << left) - 1u);
}

/* Pairs of row A's cells [LO, HI) with row B's cell at column + SHIFT
 * (A == B, SHIFT 1: the east pairs of a row). */
TG__AVX512 static void
pairs_avx512 (const float *a, const float *b, int shift, float *out, int lo, int hi, float t)
{
  __m512 tv = _mm512_set1_ps (t), ntv = _mm512_set1_ps (-t);

  for (int i = lo; i < hi; i += 16)
    {
      __mmask16 m = lanes (hi - i);
      __m512 d = _mm512_sub_ps (_mm512_maskz_loadu_ps (m, a + i),
                                _mm512_maskz_loadu_ps (m, b + i + shift));
      _mm512_mask_storeu_ps (out + i, m, avx512_pair_excess (d, tv, ntv));
    }
}

TG__AVX512 static void
compute_down_avx512 (const float *a, const float *b, float *s, float *se, float *sw, int x0,
                     int x1, const ThermalCoef *k)
{
  pairs_avx512 (a, b, 0, s, x0, x1, k->t1);
  pairs_avx512 (a, b, 1, se, x0 - 1, x1, k->t2);
  pairs_avx512 (a, b, -1, sw, x0, x1 + 1, k->t2);
}

/* pair_excess in three operations: VRANGEPS
 * with imm 2 gives min(|D|, T) with D's sign, D clamped to [-T, T], and
 * D minus it is D - T above T, D - (-T) == D + T below -T and D - D == +0
 * between: the bits of pair_excess for every D but NaN (which gives NaN
 * here and 0 there), so only maps without NaN take it (see
 * map_is_tame). */
TG__AVX512 static inline __m512
avx512_excess_tame (__m512 d, __m512 t)
{
  return _mm512_sub_ps (d, _mm512_range_ps (d, t, 0x02));
}

/* One row of a pass, cells [X0, X1) (X0 >= 1, X1 <= W - 1), in one sweep:
 * the pairs of row M with its east neighbour and with the row below DN
 * are computed once each, in registers; the east pair of the cell to the
 * west comes from the previous vector (a lane shift).  P's [0] arrays
 * hold this row's pairs above (all +0 on the world's first row, as
 * edge_cell's absent neighbours give) and take its pairs below in their
 * place, the next row's pairs above: S and SW are read at or after the
 * column written, SE one column before it, so the old SE comes from the
 * previous vector's load.  HAS_DN false: the world's last row, whose
 * pairs below are absent (+0).  TAME: the three-operation pair term
 * (no NaN).  The sums are fused_row_avx2's, in its order.
 * Returns whether a sample changed (CHECK; else false). */
TG__AVX512 static inline __attribute__ ((always_inline)) bool
fused_row_avx512 (const float *m, const float *dn, const PairRows *p, float *out, int x0, int x1,
                  const ThermalCoef *k, bool tame, bool has_dn, bool check)
{
  float *ps = p->s[0], *pse = p->se[0], *psw = p->sw[0];
  __m512 t1 = _mm512_set1_ps (k->t1), t2 = _mm512_set1_ps (k->t2);
  __m512 nt1 = _mm512_set1_ps (-k->t1), nt2 = _mm512_set1_ps (-k->t2);
  __m512 k1 = _mm512_set1_ps (k->k1), k2 = _mm512_set1_ps (k->k2), zero = _mm512_setzero_ps ();
  /* Lane 15: the east pair of cell X0 - 1, for the first vector. */
  __m512 prev_e = _mm512_set1_ps (pair_excess (m[x0 - 1] - m[x0], k->t1));
  /* Lane 15: the south-east pair above cell X0 (of cell X0 - 1 above). */
  __m512 prev_se = _mm512_set1_ps (pse[x0 - 1]);
  __mmask16 diff = 0;

#define EXCESS(d, t, nt) (tame ? avx512_excess_tame ((d), (t)) : avx512_pair_excess ((d), (t), (nt)))
#define ROW_BODY(LD, ST)                                                                        \
  do                                                                                            \
    {                                                                                           \
      __m512 h = LD (m + x), ee, em, s = zero, se = zero, sw = zero, s1, s2, r;                 \
      __m512 su = LD (ps + x), seu0 = LD (pse + x), swu = LD (psw + x + 1), seu;                \
      seu = _mm512_castsi512_ps (                                                               \
        _mm512_alignr_epi32 (_mm512_castps_si512 (seu0), _mm512_castps_si512 (prev_se), 15));   \
      prev_se = seu0;                                                                           \
      ee = EXCESS (_mm512_sub_ps (h, LD (m + x + 1)), t1, nt1);                                 \
      if (has_dn)                                                                               \
        {                                                                                       \
          s = EXCESS (_mm512_sub_ps (h, LD (dn + x)), t1, nt1);                                 \
          se = EXCESS (_mm512_sub_ps (h, LD (dn + x + 1)), t2, nt2);                            \
          sw = EXCESS (_mm512_sub_ps (h, LD (dn + x - 1)), t2, nt2);                            \
        }                                                                                       \
      em = _mm512_castsi512_ps (                                                                \
        _mm512_alignr_epi32 (_mm512_castps_si512 (ee), _mm512_castps_si512 (prev_e), 15));      \
      prev_e = ee;                                                                              \
      s1 = _mm512_add_ps (_mm512_sub_ps (_mm512_sub_ps (ee, em), su), s);                       \
      s2 = _mm512_add_ps (_mm512_sub_ps (sw, _mm512_add_ps (seu, swu)), se);                    \
      r = _mm512_sub_ps (h, _mm512_add_ps (_mm512_mul_ps (k1, s1), _mm512_mul_ps (k2, s2)));    \
      if (check)                                                                                \
        diff |= MASKED (_mm512_cmpneq_epi32_mask, _mm512_castps_si512 (r),                      \
                        _mm512_castps_si512 (h));                                               \
      ST (out + x, r);                                                                          \
      if (has_dn)                                                                               \
        {                                                                                       \
          ST (ps + x, s);                                                                       \
          ST (pse + x, se);                                                                     \
          ST (psw + x, sw);                                                                     \
        }                                                                                       \
    }                                                                                           \
  while (0)

  int x = x0;
#define LD_FULL(ptr) _mm512_loadu_ps (ptr)
#define ST_FULL(ptr, v) _mm512_storeu_ps ((ptr), (v))
#define MASKED(f, a, b) f ((a), (b))
  for (; x + 16 <= x1; x += 16)
    ROW_BODY (LD_FULL, ST_FULL);
#undef MASKED
  if (x < x1)
    {
      __mmask16 l = lanes (x1 - x);
#define LD_PART(ptr) _mm512_maskz_loadu_ps (l, (ptr))
#define ST_PART(ptr, v) _mm512_mask_storeu_ps ((ptr), l, (v))
#define MASKED(f, a, b) _mm512_mask_cmpneq_epi32_mask (l, (a), (b))
      ROW_BODY (LD_PART, ST_PART);
#undef MASKED
#undef LD_PART
#undef ST_PART
    }
#undef LD_FULL
#undef ST_FULL
#undef ROW_BODY
#undef EXCESS
  if (has_dn)
    {
      /* The diagonal pairs the next row needs beyond [X0, X1): the
       * south-east one of cell X0 - 1 and the south-west one of X1. */
      pse[x0 - 1] = pair_excess (m[x0 - 1] - dn[x0], k->t2);
      psw[x1] = pair_excess (m[x1] - dn[x1 - 1], k->t2);
    }
  return diff != 0;
}

TG__AVX512 static bool
fused_row_avx512_tame (const float *m, const float *dn, const PairRows *p, float *out, int x0,
                       int x1, const ThermalCoef *k, bool check)
{
  if (check)
    return fused_row_avx512 (m, dn, p, out, x0, x1, k, true, true, true);
  return fused_row_avx512 (m, dn, p, out, x0, x1, k, true, true, false);
}

TG__AVX512 static bool
fused_row_avx512_any (const float *m, const float *dn, const PairRows *p, float *out, int x0,
                      int x1, const ThermalCoef *k, bool check)
{
  if (check)
    return fused_row_avx512 (m, dn, p, out, x0, x1, k, false, true, true);
  return fused_row_avx512 (m, dn, p, out, x0, x1, k, false, true, false);
}

/* A - B on the FMA units: A x 1 - B rounded once is A - B rounded, the
 * same bits (A x 1 is exact, signed zeros and infinities come out alike);
 * only a NaN's payload may differ, and a pair term of a NaN difference is
 * +0 (or, tame, never there).  Zen 4 runs subtractions on two of its four
 * FP pipes and FMAs on the other two: the sweep's differences there share
 * the work out (0.57 -> 0.43 ns a cell with the rows in L1). */
TG__AVX512 static inline __m512
exact_sub (__m512 a, __m512 b)
{
  return _mm512_fmsub_ps (a, _mm512_set1_ps (1.0f), b);
}

/* One row of a pass, cells [X0, X1) (1 <= X0, X1 <= W - 1) of a row with
 * rows above and below, the eight pairs of each cell in cell_update's
 * order (the generic kernel's sums, 16 cells at a time), the west one as
 * the negated east pair of the cell to the west (a lane shift of the
 * previous vector's, as fused_row_avx512: W + E == E - (that pair), see
 * pair_excess): no pair rows kept between the rows, so a sweep's state is
 * the three rows it reads.  TAME: the three-operation pair term.  Returns
 * whether a sample changed (CHECK; else false). */
TG__AVX512 static inline __attribute__ ((always_inline)) bool
full_row_avx512 (const float *up, const float *m, const float *dn, float *out, int x0, int x1,
                 const ThermalCoef *k, bool tame, bool check)
{
  __m512 t1 = _mm512_set1_ps (k->t1), t2 = _mm512_set1_ps (k->t2);
  __m512 nt1 = _mm512_set1_ps (-k->t1), nt2 = _mm512_set1_ps (-k->t2);
  __m512 k1 = _mm512_set1_ps (k->k1), k2 = _mm512_set1_ps (k->k2);
  /* Lane 15: the east pair of cell X0 - 1, for the first vector. */
  __m512 prev_e = _mm512_set1_ps (pair_excess (m[x0 - 1] - m[x0], k->t1));
  __mmask16 diff = 0;
  int x = x0;

#define EXCESS(d, t, nt) (tame ? avx512_excess_tame ((d), (t)) : avx512_pair_excess ((d), (t), (nt)))
/* The orthogonal pairs' last subtraction on the FMA units too: 4 of the
 * 34 operations a vector moved there from the adds' pipes (with the rows
 * in L1, 0.42 -> 0.39-0.41 ns a cell). */
#define EXCESS1(d) (tame ? exact_sub ((d), _mm512_range_ps ((d), t1, 0x02)) : EXCESS ((d), t1, nt1))
#define PAIR1(row, dx) EXCESS1 (exact_sub (h, LD ((row) + x + (dx))))
#define PAIR2(row, dx) EXCESS (exact_sub (h, LD ((row) + x + (dx))), t2, nt2)
#define ROW_BODY()                                                                              \
  do                                                                                            \
    {                                                                                           \
      __m512 h = LD (m + x), ee = PAIR1 (m, 1), em, s1, s2, r;                                  \
      em = _mm512_castsi512_ps (                                                                \
        _mm512_alignr_epi32 (_mm512_castps_si512 (ee), _mm512_castps_si512 (prev_e), 15));      \
      prev_e = ee;                                                                              \
      s1 = _mm512_add_ps (_mm512_add_ps (_mm512_sub_ps (ee, em), PAIR1 (up, 0)), PAIR1 (dn, 0)); \
      s2 = _mm512_add_ps (_mm512_add_ps (_mm512_add_ps (PAIR2 (up, -1), PAIR2 (up, 1)),         \
                                         PAIR2 (dn, -1)),                                       \
                          PAIR2 (dn, 1));                                                       \
      r = _mm512_sub_ps (h, _mm512_add_ps (_mm512_mul_ps (k1, s1), _mm512_mul_ps (k2, s2)));    \
      if (check)                                                                                \
        diff |= MASKED (_mm512_cmpneq_epi32_mask, _mm512_castps_si512 (r),                      \
                        _mm512_castps_si512 (h));                                               \
      ST (out + x, r);                                                                          \
    }                                                                                           \
  while (0)

#define LD(ptr) _mm512_loadu_ps (ptr)
#define ST(ptr, v) _mm512_storeu_ps ((ptr), (v))
#define MASKED(f, a, b) f ((a), (b))
  for (; x + 16 <= x1; x += 16)
    ROW_BODY ();
#undef MASKED
#undef LD
#undef ST
  if (x < x1)
    {
      __mmask16 l = lanes (x1 - x);
#define LD(ptr) _mm512_maskz_loadu_ps (l, (ptr))
#define ST(ptr, v) _mm512_mask_storeu_ps ((ptr), l, (v))
#define MASKED(f, a, b) _mm512_mask_cmpneq_epi32_mask (l, (a), (b))
      ROW_BODY ();
#undef MASKED
#undef LD
#undef ST
    }
#undef ROW_BODY
#undef PAIR1
#undef PAIR2
#undef EXCESS1
#undef EXCESS
  return diff != 0;
}

TG__AVX512 static bool
full_row_avx512_tame (const float *up, const float *m, const float *dn, float *out, int x0, int x1,
                      const ThermalCoef *k, bool check)
{
  if (check)
    return full_row_avx512 (up, m, dn, out, x0, x1, k, true, true);
  return full_row_avx512 (up, m, dn, out, x0, x1, k, true, false);
}

TG__AVX512 static bool
full_row_avx512_any (const float *up, const float *m, const float *dn, float *out, int x0, int x1,
                     const ThermalCoef *k, bool check)
{
  if (check)
    return full_row_avx512 (up, m, dn, out, x0, x1, k, false, true);
  return full_row_avx512 (up, m, dn, out, x0, x1, k, false, false);
}

/* Rows IN[1..R] of a pass, cells [X0, X1) (1 <= X0, X1 <= W - 1), into
 * OUT[0..R-1], with IN[0] the row above them and IN[R + 1] the row below,
 * R rows in one sweep: full_row_avx512's sums for each row, in its order,
 * but a pair between two of the R rows computed once for both (the term
 * seen from the other cell is exactly its negation, see pair_excess;
 * N + ... == ... - S of the row above, NW + NE == NE - (SE of the cell
 * above-left), SW == -(NE of the cell below-left), the cells to the left
 * a lane shift of the previous vector's).  A boundary between two rows
 * costs three pair terms and two shifts instead of six pair terms, so R
 * rows take 27 operations a vector at R = 4 instead of 32.  TAME: the
 * three-operation pair term.  Returns whether a sample changed (CHECK;
 * else false). */
TG__AVX512 static inline __attribute__ ((always_inline)) bool
rows_avx512 (const float *const *in, float *const *out, int x0, int x1, const ThermalCoef *k,
             bool tame, bool check, int R)
{
  __m512 t1 = _mm512_set1_ps (k->t1), t2 = _mm512_set1_ps (k->t2);
  __m512 nt1 = _mm512_set1_ps (-k->t1), nt2 = _mm512_set1_ps (-k->t2);
  __m512 k1 = _mm512_set1_ps (k->k1), k2 = _mm512_set1_ps (k->k2);
  /* Lane 15: the terms of column X0 - 1, for the first vector: row r's
   * east pair, row r's south-east pair and row r + 1's north-east pair. */
  __m512 pe[THERMAL_ROWS_MAX], pse[THERMAL_ROWS_MAX], pne[THERMAL_ROWS_MAX];
  __mmask16 diff = 0;
  int x = x0;

  for (int r = 0; r < R; r++)
    pe[r] = _mm512_set1_ps (pair_excess (in[r + 1][x0 - 1] - in[r + 1][x0], k->t1));
  for (int r = 0; r + 1 < R; r++)
    {
      pse[r] = _mm512_set1_ps (pair_excess (in[r + 1][x0 - 1] - in[r + 2][x0], k->t2));
      pne[r] = _mm512_set1_ps (pair_excess (in[r + 2][x0 - 1] - in[r + 1][x0], k->t2));
    }

#define EXCESS(d, t, nt) (tame ? avx512_excess_tame ((d), (t)) : avx512_pair_excess ((d), (t), (nt)))
#define EXCESS1(d) (tame ? exact_sub ((d), _mm512_range_ps ((d), t1, 0x02)) : EXCESS ((d), t1, nt1))
#define EXCESS2(d) EXCESS ((d), t2, nt2)
#define SHIFT(v, prev)                                                                          \
  _mm512_castsi512_ps (                                                                         \
    _mm512_alignr_epi32 (_mm512_castps_si512 (v), _mm512_castps_si512 (prev), 15))
#define ROWS_BODY()                                                                             \
  do                                                                                            \
    {                                                                                           \
      __m512 h[THERMAL_ROWS_MAX], s[THERMAL_ROWS_MAX], se[THERMAL_ROWS_MAX];                     \
      __m512 ne[THERMAL_ROWS_MAX], sse[THERMAL_ROWS_MAX], sne[THERMAL_ROWS_MAX];                 \
      for (int r = 0; r < R; r++)                                                               \
        h[r] = LD (in[r + 1] + x);                                                              \
      for (int r = 0; r + 1 < R; r++)                                                           \
        {                                                                                       \
          s[r] = EXCESS1 (exact_sub (h[r], h[r + 1]));                                          \
          se[r] = EXCESS2 (exact_sub (h[r], LD (in[r + 2] + x + 1)));                           \
          ne[r] = EXCESS2 (exact_sub (h[r + 1], LD (in[r + 1] + x + 1)));                       \
          sse[r] = SHIFT (se[r], pse[r]);                                                       \
          sne[r] = SHIFT (ne[r], pne[r]);                                                       \
          pse[r] = se[r];                                                                       \
          pne[r] = ne[r];                                                                       \
        }                                                                                       \
      for (int r = 0; r < R; r++)                                                               \
        {                                                                                       \
          __m512 ee = EXCESS1 (exact_sub (h[r], LD (in[r + 1] + x + 1))), s1, s2, res;          \
          __m512 em = SHIFT (ee, pe[r]);                                                        \
          pe[r] = ee;                                                                           \
          s1 = _mm512_sub_ps (ee, em);                                                          \
          s1 = r == 0 ? _mm512_add_ps (s1, EXCESS1 (exact_sub (h[r], LD (in[0] + x))))          \
                      : _mm512_sub_ps (s1, s[r - 1]);                                           \
          s1 = _mm512_add_ps (s1, r == R - 1 ? EXCESS1 (exact_sub (h[r], LD (in[R + 1] + x)))   \
                                             : s[r]);                                           \
          s2 = r == 0 ? _mm512_add_ps (EXCESS2 (exact_sub (h[r], LD (in[0] + x - 1))),          \
                                       EXCESS2 (exact_sub (h[r], LD (in[0] + x + 1))))          \
                      : _mm512_sub_ps (ne[r - 1], sse[r - 1]);                                  \
          s2 = r == R - 1 ? _mm512_add_ps (s2, EXCESS2 (exact_sub (h[r], LD (in[R + 1] + x - 1)))) \
                          : _mm512_sub_ps (s2, sne[r]);                                         \
          s2 = _mm512_add_ps (s2, r == R - 1 ? EXCESS2 (exact_sub (h[r], LD (in[R + 1] + x + 1))) \
                                             : se[r]);                                          \
          res = _mm512_sub_ps (h[r], _mm512_add_ps (_mm512_mul_ps (k1, s1),                     \
                                                    _mm512_mul_ps (k2, s2)));                   \
          if (check)                                                                            \
            diff |= MASKED (_mm512_cmpneq_epi32_mask, _mm512_castps_si512 (res),                \
                            _mm512_castps_si512 (h[r]));                                        \
          ST (out[r] + x, res);                                                                 \
        }                                                                                       \
    }                                                                                           \
  while (0)

#define LD(ptr) _mm512_loadu_ps (ptr)
#define ST(ptr, v) _mm512_storeu_ps ((ptr), (v))
#define MASKED(f, a, b) f ((a), (b))
  for (; x + 16 <= x1; x += 16)
    ROWS_BODY ();
#undef MASKED
#undef LD
#undef ST
  if (x < x1)
    {
      __mmask16 l = lanes (x1 - x);
#define LD(ptr) _mm512_maskz_loadu_ps (l, (ptr))
#define ST(ptr, v) _mm512_mask_storeu_ps ((ptr), l, (v))
#define MASKED(f, a, b) _mm512_mask_cmpneq_epi32_mask (l, (a), (b))
      ROWS_BODY ();
#undef MASKED
#undef LD
#undef ST
    }
#undef ROWS_BODY
#undef SHIFT
#undef EXCESS2
#undef EXCESS1
#undef EXCESS
  return diff != 0;
}

/* rows_avx512 for R = 2, 3, 4 (one row: full_row_avx512), tame or not,
 * checked or not. */
#define ROWS_VARIANT(R)                                                                         \
  TG__AVX512 static bool rows_avx512_##R (const float *const *in, float *const *out, int x0,   \
                                          int x1, const ThermalCoef *k, bool tame, bool check)  \
  {                                                                                             \
    if (tame)                                                                                   \
      return check ? rows_avx512 (in, out, x0, x1, k, true, true, R)                            \
                   : rows_avx512 (in, out, x0, x1, k, true, false, R);                          \
    return check ? rows_avx512 (in, out, x0, x1, k, false, true, R)                             \
                 : rows_avx512 (in, out, x0, x1, k, false, false, R);                           \
  }
ROWS_VARIANT (2)
ROWS_VARIANT (3)
ROWS_VARIANT (4)
#undef ROWS_VARIANT

/* v_pair_masked 16 at a time, with the heights HN, masks MN and heights
 * before the passes ON of the neighbours: the same operations, its
 * selects as AVX-512 masks (a compare's mask picks, MINPS and MAXPS are
 * a < b ? a : b and a > b ? a : b, VPTERNLOG takes the sign from E), so
 * the same bits in a third of the instructions the vector extension's
 * AND/ANDN/OR selects and 8-lane halves took.  *MOVES (if not NULL): the
 * lanes whose excess is not 0 (|D| > T). */
TG__AVX512 static inline __attribute__ ((always_inline)) __m512
avx512_pair_masked (__m512 h, __m512 m, __m512 s, __m512 hn, __m512 mn, __m512 on, __m512 t,
                    __m512 nt, __mmask16 *moves)
{
  __m512 d = exact_sub (h, hn), sn = _mm512_max_ps (exact_sub (hn, on), _mm512_setzero_ps ());
  __mmask16 shed = _mm512_cmp_ps_mask (d, t, _CMP_GT_OQ);
  __mmask16 take = _mm512_cmp_ps_mask (d, nt, _CMP_LT_OQ);
  __m512 e = _mm512_mask_add_ps (_mm512_maskz_sub_ps (shed, d, t), take, d, t);
  __m512 a = _mm512_abs_ps (e);
  __m512 g = _mm512_add_ps (_mm512_mul_ps (_mm512_mask_blend_ps (shed, mn, m), a),
                            _mm512_mask_blend_ps (shed, sn, s));
  __m512 c = _mm512_min_ps (a, g);

  if (moves)
    *moves = shed | take;
  /* c's magnitude with e's sign (0xac: A ? C : B). */
  return _mm512_castsi512_ps (_mm512_ternarylogic_epi32 (_mm512_set1_epi32 ((int) 0x80000000u),
                                                         _mm512_castps_si512 (c),
                                                         _mm512_castps_si512 (e), 0xac));
}

/* thermal_row_masked_body 16 cells at a time, the row's last cells in
 * the same vectors under a lane mask: cell_update_masked's operations in
 * its order, so the generic and AVX2 builds' bits.  A cell's west term
 * is its west neighbour's east term seen from the other side: the same
 * difference negated (exact), the same cell chosen to shed, so the same
 * cut with the sign flipped, except where the excess is 0 (|D| <= T):
 * the term is +0 from both sides there (see pair_masked).  So it comes
 * from the previous vector's east terms, a lane shift, negated where
 * they moved and +0 where not: the same bits for one pair term fewer. */
TG__AVX512 static void
thermal_row_masked_avx512 (const MaskedRows *r, float *out, int x0, int x1, const ThermalCoef *k)
{
  __m512 t1 = _mm512_set1_ps (k->t1), t2 = _mm512_set1_ps (k->t2);
  __m512 nt1 = _mm512_set1_ps (-k->t1), nt2 = _mm512_set1_ps (-k->t2);
  __m512 k1 = _mm512_set1_ps (k->k1), k2 = _mm512_set1_ps (k->k2), zero = _mm512_setzero_ps ();
  __m512 sign = _mm512_set1_ps (-0.0f);
  /* Lane 15: the east term of cell X0 - 1 and whether it moved. */
  float dw = r->mid[x0 - 1] - r->mid[x0];
  __m512 prev_e = _mm512_set1_ps (pair_masked (dw, k->t1, r->mmid[x0 - 1],
                                               scree_of (r->mid[x0 - 1], r->omid[x0 - 1]),
                                               r->mmid[x0], scree_of (r->mid[x0], r->omid[x0])));
  __mmask16 prev_moves = pair_excess (dw, k->t1) != 0.0f ? 0x8000 : 0;

#define PM(row, mrow, orow, dx, t, nt, mv)                                                       \
  avx512_pair_masked (h, m, sc, LD (r->row + x + (dx)), LD (r->mrow + x + (dx)),                \
                      LD (r->orow + x + (dx)), t, nt, mv)
#define ROW_BODY()                                                                              \
  do                                                                                            \
    {                                                                                           \
      __m512 h = LD (r->mid + x), m = LD (r->mmid + x), s1, s2, res, ee, we;                    \
      __m512 sc = _mm512_max_ps (exact_sub (h, LD (r->omid + x)), zero);                        \
      __mmask16 moves, wmoves;                                                                  \
      ee = PM (mid, mmid, omid, 1, t1, nt1, &moves);                                            \
      wmoves = (__mmask16) ((moves << 1) | (prev_moves >> 15));                                 \
      we = _mm512_castsi512_ps (                                                                \
        _mm512_alignr_epi32 (_mm512_castps_si512 (ee), _mm512_castps_si512 (prev_e), 15));      \
      we = _mm512_maskz_xor_ps (wmoves, we, sign);                                              \
      prev_e = ee;                                                                              \
      prev_moves = moves;                                                                       \
      s1 = _mm512_add_ps (_mm512_add_ps (_mm512_add_ps (we, ee),                                \
                                         PM (up, mup, oup, 0, t1, nt1, NULL)),                  \
                          PM (dn, mdn, odn, 0, t1, nt1, NULL));                                 \
      s2 = _mm512_add_ps (                                                                      \
        _mm512_add_ps (_mm512_add_ps (PM (up, mup, oup, -1, t2, nt2, NULL),                     \
                                      PM (up, mup, oup, 1, t2, nt2, NULL)),                     \
                       PM (dn, mdn, odn, -1, t2, nt2, NULL)),                                   \
        PM (dn, mdn, odn, 1, t2, nt2, NULL));                                                   \
      res = _mm512_sub_ps (h, _mm512_add_ps (_mm512_mul_ps (k1, s1), _mm512_mul_ps (k2, s2)));  \
      ST (out + x, res);                                                                        \
    }                                                                                           \
  while (0)

  int x = x0;
#define LD(ptr) _mm512_loadu_ps (ptr)
#define ST(ptr, v) _mm512_storeu_ps ((ptr), (v))
  for (; x + 16 <= x1; x += 16)
    ROW_BODY ();
#undef LD
#undef ST
  if (x < x1)
    {
      __mmask16 l = lanes (x1 - x);
#define LD(ptr) _mm512_maskz_loadu_ps (l, (ptr))
#define ST(ptr, v) _mm512_mask_storeu_ps ((ptr), l, (v))
      ROW_BODY ();
#undef LD
#undef ST
    }
#undef ROW_BODY
#undef PM
}

/* The world's last row (once a pass: always checked). */
TG__AVX512 static bool
fused_last_row_avx512 (const float *m, const PairRows *p, float *out, int x0, int x1,
                       const ThermalCoef *k)
{
  return fused_row_avx512 (m, NULL, p, out, x0, x1, k, false, false, true);
}

#endif

/* Whether all N samples of MAP are within +-1e30 (so none is NaN or
 * infinite).  Passes keep such a map tame: in passes mode a pass moves a
 * sample by k1 x (its four orthogonal pair terms) + k2 x (its four
 * diagonal ones), each term of the sign of the difference and at most
 * its size, with 4 k1 + 4 k2 = 6/7 x strength <= 1, so (exactly) no
 * sample leaves the range of its neighbourhood and the map's largest
 * magnitude never grows; the rounding of a pass adds under 2e-6 of it,
 * so THERMAL_PASSES_MAX passes leave it under 1.1e30.  Every difference
 * is then finite and no pair term NaN, where the three-operation term
 * gives pair_excess's bits. */
static bool
map_is_tame (const float *map, size_t n)
{
  bool bad = false;

  for (size_t i = 0; i < n && !bad; i += 4096)
    for (size_t x = i; x < n && x < i + 4096; x++)
      /* Not (|v| <= 1e30), NaN included. */
      bad |= !(fabsf (map[x]) <= 1e30f);
  return !bad;
}

/* --- passes, several per trip through memory ------------------------------ */

/* The loose-material mask of a run of passes: LOOSE (w x h, 0..1) and the
 * map before the passes ORIG (scree is what lies above it). */
typedef struct
{
  const float *loose, *orig;
  bool fallen; /* rockfall laid scree over ORIG (converge mode only) */
} ThermalMask;

enum
{
  ISA_GENERIC,
  ISA_AVX2,
  ISA_AVX512,
};

/* The best kernel this CPU runs, or the one TG_THERMAL_ISA asks for
 * (tg__erosion_isa). */
static int
thermal_isa (void)
{
  static const int of[] = { ISA_GENERIC, ISA_AVX2, ISA_AVX512 };

  return of[tg__erosion_isa ("TG_THERMAL_ISA")];
}

/* The cells pass T updates (buffer coordinates): world-edge sides stay,
 * apron sides lose a cell a pass. */
typedef struct
{
  int ux0, ux1, uy0, uy1;
} PassWin;

/* Passes per trip: K passes run over a tile of the map (a strip of
 * columns, and a band of rows when the strips alone are too few for the
 * threads), so each sample of the input is read and each of the output
 * written once per K passes.  The passes run as a wavefront down the
 * tile's rows: level j (the map after j passes) computes its row y as
 * soon as level j - 1 has rows y - 1 to y + 1, so each level keeps only
 * its last three rows (a ring), all levels together a few hundred KB
 * however tall the tile, and no halo rows are recomputed between the
 * tile's own rows.  Pass j also computes the K - j columns (and, at a
 * band's ends, rows) on every side that the neighbouring tiles compute
 * too, from the same samples, so to the same bits: the tile's last pass
 * needs them. */
#define THERMAL_BLOCK_MAX 64
#define THERMAL_BLOCK_DEFAULT 32
#define THERMAL_BAND_MIN 16
#define THERMAL_STRIP_COLS 1024

/* Scratch, one buffer of FLOATS floats per thread, kept across a run's
 * parallel calls (a buffer taken fresh per call comes back from the
 * kernel zeroed page by page): a call takes a free one (at most threads
 * - 1 others are taken, so there always is), allocated on first use, and
 * gives it back at its end. */
typedef struct
{
  int n;
  size_t floats;
  float **buf;
  atomic_int *busy;
} Scratch;

/* Returns false when out of memory (S then holds nothing). */
static bool
scratch_init (Scratch *s, int threads, size_t floats)
{
  s->n = threads > 0 ? threads : 1;
  s->floats = floats;
  s->buf = calloc ((size_t) s->n, sizeof *s->buf);
  s->busy = calloc ((size_t) s->n, sizeof *s->busy);
  if (!s->buf || !s->busy)
    {
      free (s->buf);
      free (s->busy);
      s->buf = NULL;
      s->busy = NULL;
      return false;
    }
  for (int q = 0; q < s->n; q++)
    atomic_init (&s->busy[q], 0);
  return true;
}

/* A free buffer, its slot in *SLOT (give it back with scratch_give even
 * when the buffer is NULL: out of memory). */
static float *
scratch_take (const Scratch *s, int *slot)
{
  int q = 0;

  while (atomic_exchange (&s->busy[q], 1))
    q = (q + 1) % s->n;
  if (s->buf[q] == NULL)
    s->buf[q] = malloc (sizeof (float) * s->floats);
  *slot = q;
  return s->buf[q];
}

static void
scratch_give (const Scratch *s, int slot)
{
  atomic_store (&s->busy[slot], 0);
}

static void
scratch_clear (Scratch *s)
{
  for (int q = 0; s->buf && q < s->n; q++)
    free (s->buf[q]);
  free (s->buf);
  free (s->busy);
  s->buf = NULL;
  s->busy = NULL;
}

typedef struct
{
  const float *src; /* the map before the block's first pass */
  float *dst;       /* and after its last */
  int w, h;
  int passes; /* K, in this block */
  int kmax;   /* and at most, in every block */
  int strips, bands; /* tiles: strips x bands, strip-major */
  int strip;     /* columns per strip */
  int band_rows; /* rows per band */
  PassWin win[THERMAL_BLOCK_MAX + 1]; /* [j]: the block's pass j (1..K) */
  ThermalCoef k;
  const ThermalMask *mask; /* NULL: every sample fully loose */
  int isa;
  int rows;  /* per AVX-512 sweep (thermal_rows) */
  bool tame; /* the vector sweeps may take the three-operation pair term */
  unsigned char *changed; /* [tile]: the block's last pass changed a sample there */
  unsigned char *failed;  /* [tile]: its scratch could not be allocated */
  Scratch scratch; /* per thread, kept across the blocks */
} BlockJob;

/* A pass's scratch for the vector kernels: the pair terms above and below
 * its current row, and whether the ones above are there. */
typedef struct
{
  PairRows p;
  bool have_up;
} Level;

/* A cell on the world's edge: neighbours beyond it do not exist, so the
 * pair is simply absent (the edge is closed).  UP or DN is NULL on the
 * first or last row. */
static float
edge_cell (const float *up, const float *mid, const float *dn, int w, int x, const ThermalCoef *k)
{
  float h = mid[x];
  bool wv = x > 0, ev = x < w - 1;

  /* An absent neighbour reads as my own height: a zero difference gives
   * exactly zero flux, the same as leaving the pair out. */
  return cell_update (h, wv ? mid[x - 1] : h, ev ? mid[x + 1] : h, up ? up[x] : h,
                      dn ? dn[x] : h, up && wv ? up[x - 1] : h, up && ev ? up[x + 1] : h,
                      dn && wv ? dn[x - 1] : h, dn && ev ? dn[x + 1] : h, k);
}

/* edge_cell with a mask (R's rows); an absent neighbour reads as my own
 * height, mask and scree (a zero term). */
static float
edge_cell_masked (const MaskedRows *r, int w, int x, const ThermalCoef *k)
{
  /* cell_update's order: me, w, e, n, s, nw, ne, sw, se. */
  static const int dy[9] = { 0, 0, 0, -1, 1, -1, -1, 1, 1 };
  static const int dx[9] = { 0, -1, 1, 0, 0, -1, 1, -1, 1 };
  const float *h[3] = { r->up, r->mid, r->dn };
  const float *m[3] = { r->mup, r->mmid, r->mdn }, *o[3] = { r->oup, r->omid, r->odn };
  float hv[9], mv[9], sv[9];

  for (int q = 0; q < 9; q++)
    {
      int row = 1 + dy[q], col = x + dx[q];
      if (h[row] == NULL || col < 0 || col >= w)
        row = 1, col = x;
      hv[q] = h[row][col];
      mv[q] = m[row][col];
      sv[q] = scree_of (hv[q], o[row][col]);
    }
  return cell_update_masked (hv, mv, sv, k);
}

/* Cells [UX0, UX1) of row Y of a pass with a mask: the edge cells one at
 * a time, the others through the ISA's build of the masked row. */
static void
masked_row (const BlockJob *job, const float *up, const float *mid, const float *dn, float *out,
            int y, int ux0, int ux1)
{
  int w = job->w;
  const float *mmid = job->mask->loose + (size_t) y * w, *omid = job->mask->orig + (size_t) y * w;
  MaskedRows r = { up, mid, dn,
                   up ? mmid - w : NULL, mmid, dn ? mmid + w : NULL,
                   up ? omid - w : NULL, omid, dn ? omid + w : NULL };
  int x0 = ux0 > 1 ? ux0 : 1, x1 = ux1 < w - 1 ? ux1 : w - 1;

  if (up == NULL || dn == NULL || x1 <= x0)
    {
      for (int x = ux0; x < ux1; x++)
        out[x] = edge_cell_masked (&r, w, x, &job->k);
      return;
    }
  if (ux0 == 0)
    out[0] = edge_cell_masked (&r, w, 0, &job->k);
  if (ux1 == w)
    out[w - 1] = edge_cell_masked (&r, w, w - 1, &job->k);
#ifdef TG__EROSION_HAVE_X86
  if (job->isa == ISA_AVX512)
    thermal_row_masked_avx512 (&r, out, x0, x1, &job->k);
  else if (job->isa == ISA_AVX2)
    thermal_row_masked_avx2 (&r, out, x0, x1, &job->k);
  else
#endif
    thermal_row_masked_generic (&r, out, x0, x1, &job->k);
}

/* Columns [CX0, CX1) of row Y of the block's pass J from the rows UP,
 * MID, DN (NULL beyond the world) of the map before it, into OUT.
 * Samples the pass does not update are carried over (no updated sample
 * ever reads them).  TAME: the map is free of NaN and huge values
 * (map_is_tame), so the vector sweeps may take the three-operation pair
 * term.  *CHANGED becomes 1 if a sample changed;
 * CHANGED NULL: no one asks (only the block's last pass is asked). */
static void
level_row (const BlockJob *job, int j, Level *lv, const float *up, const float *mid,
           const float *dn, float *out, int y, int cx0, int cx1, bool tame,
           unsigned char *changed)
{
  const PassWin *pw = &job->win[j];
  int w = job->w;
  int ux0 = pw->ux0 > cx0 ? pw->ux0 : cx0, ux1 = pw->ux1 < cx1 ? pw->ux1 : cx1;
  bool wide = job->isa == ISA_AVX512;

  if (y < pw->uy0 || y >= pw->uy1 || ux1 <= ux0)
    {
      memcpy (out + cx0, mid + cx0, sizeof (float) * (size_t) (cx1 - cx0));
      lv->have_up = false;
      return;
    }
  if (ux0 > cx0)
    memcpy (out + cx0, mid + cx0, sizeof (float) * (size_t) (ux0 - cx0));
  if (ux1 < cx1)
    memcpy (out + ux1, mid + ux1, sizeof (float) * (size_t) (cx1 - ux1));
  cx0 = ux0; /* from here: the samples still to compare with MID */
  cx1 = ux1;
  if (job->mask)
    {
      masked_row (job, up, mid, dn, out, y, ux0, ux1);
      lv->have_up = false;
    }
  else if ((up == NULL && dn == NULL) || (!wide && (up == NULL || dn == NULL)))
    {
      for (int x = ux0; x < ux1; x++)
        out[x] = edge_cell (up, mid, dn, w, x, &job->k);
      lv->have_up = false;
    }
  else
    {
      int x0 = ux0 > 1 ? ux0 : 1, x1 = ux1 < w - 1 ? ux1 : w - 1;

      if (ux0 == 0)
        out[0] = edge_cell (up, mid, dn, w, 0, &job->k);
      if (ux1 == w)
        out[w - 1] = edge_cell (up, mid, dn, w, w - 1, &job->k);
      if (x1 > x0)
        {
#ifdef TG__EROSION_HAVE_X86
          if (wide && up && dn)
            {
              /* Rows with rows above and below: all eight pairs of a
               * cell (full_row_avx512), so a level's sweep keeps no pair
               * rows between its rows, which the wavefront would hold for
               * every level. */
              bool moved = job->tame ? full_row_avx512_tame (up, mid, dn, out, x0, x1, &job->k,
                                                              changed != NULL)
                                     : full_row_avx512_any (up, mid, dn, out, x0, x1, &job->k,
                                                             changed != NULL);
              if (changed && moved)
                *changed = 1;
              if (changed && ux0 < x0 && memcmp (out + ux0, mid + ux0, sizeof (float)) != 0)
                *changed = 1;
              if (changed && ux1 > x1 && memcmp (out + x1, mid + x1, sizeof (float)) != 0)
                *changed = 1;
              cx1 = cx0;
              lv->have_up = false;
            }
          else if (wide)
            {
              /* The world's first and last rows: one sweep
               * (fused_row_avx512), their absent pairs +0. */
              PairRows *p = &lv->p;
              bool moved;
              if (!lv->have_up && up)
                compute_down_avx512 (up, mid, p->s[0], p->se[0], p->sw[0], x0, x1, &job->k);
              else if (!lv->have_up)
                {
                  memset (p->s[0] + x0, 0, sizeof (float) * (size_t) (x1 - x0));
                  memset (p->se[0] + x0 - 1, 0, sizeof (float) * (size_t) (x1 - x0 + 1));
                  memset (p->sw[0] + x0, 0, sizeof (float) * (size_t) (x1 - x0 + 1));
                }
              if (dn == NULL)
                moved = fused_last_row_avx512 (mid, p, out, x0, x1, &job->k);
              else if (tame)
                moved = fused_row_avx512_tame (mid, dn, p, out, x0, x1, &job->k, changed != NULL);
              else
                moved = fused_row_avx512_any (mid, dn, p, out, x0, x1, &job->k, changed != NULL);
              if (changed && moved)
                *changed = 1;
              /* The vector kernel compared [x0, x1): the edges remain. */
              if (changed && ux0 < x0 && memcmp (out + ux0, mid + ux0, sizeof (float)) != 0)
                *changed = 1;
              if (changed && ux1 > x1 && memcmp (out + x1, mid + x1, sizeof (float)) != 0)
                *changed = 1;
              cx1 = cx0;
              lv->have_up = dn != NULL;
            }
          else if (job->isa == ISA_AVX2)
            {
              PairRows *p = &lv->p;
              float *t;
              if (!lv->have_up)
                compute_down (up, mid, p->s[0], p->se[0], p->sw[0], x0, x1, &job->k);
              if (tame)
                fused_row_avx2_tame (mid, dn, p, out, x0, x1, &job->k);
              else
                fused_row_avx2_any (mid, dn, p, out, x0, x1, &job->k);
              /* This row's pairs below are the next row's pairs above. */
              t = p->s[0], p->s[0] = p->s[1], p->s[1] = t;
              t = p->se[0], p->se[0] = p->se[1], p->se[1] = t;
              t = p->sw[0], p->sw[0] = p->sw[1], p->sw[1] = t;
              lv->have_up = true;
            }
          else
#endif
            thermal_row_generic (up, mid, dn, out, x0, x1, &job->k);
        }
    }
  if (changed && cx1 > cx0 && !*changed
      && memcmp (out + cx0, mid + cx0, sizeof (float) * (size_t) (cx1 - cx0)) != 0)
    *changed = 1;
}

/* Rows [YA, YB) of the block's pass J (at most job->rows of them) from
 * IN[0..YB-YA+1], the rows YA - 1 to YB of the map before it (NULL beyond
 * the world), into OUT[0..YB-YA-1]; as level_row for each row, in order.
 * With AVX-512 and no mask, rows that all have rows above and below and
 * that the pass updates go through one sweep (rows_avx512), which
 * computes each pair between two of them once. */
static void
level_rows (const BlockJob *job, int j, Level *lv, const float *const *in, float *const *out,
            int ya, int yb, int cx0, int cx1, unsigned char *changed)
{
#ifdef TG__EROSION_HAVE_X86
  const PassWin *pw = &job->win[j];
  int n = yb - ya, w = job->w;
  int ux0 = pw->ux0 > cx0 ? pw->ux0 : cx0, ux1 = pw->ux1 < cx1 ? pw->ux1 : cx1;
  int x0 = ux0 > 1 ? ux0 : 1, x1 = ux1 < w - 1 ? ux1 : w - 1;

  if (job->isa == ISA_AVX512 && !job->mask && n > 1 && in[0] && in[n + 1] && ya >= pw->uy0
      && yb <= pw->uy1 && x1 > x0)
    {
      bool moved = false;
      for (int r = 0; r < n; r++)
        {
          const float *up = in[r], *mid = in[r + 1], *dn = in[r + 2];
          float *o = out[r];
          if (ux0 > cx0)
            memcpy (o + cx0, mid + cx0, sizeof (float) * (size_t) (ux0 - cx0));
          if (ux1 < cx1)
            memcpy (o + ux1, mid + ux1, sizeof (float) * (size_t) (cx1 - ux1));
          if (ux0 == 0)
            o[0] = edge_cell (up, mid, dn, w, 0, &job->k);
          if (ux1 == w)
            o[w - 1] = edge_cell (up, mid, dn, w, w - 1, &job->k);
        }
      switch (n)
        {
        case 2:
          moved = rows_avx512_2 (in, out, x0, x1, &job->k, job->tame, changed != NULL);
          break;
        case 3:
          moved = rows_avx512_3 (in, out, x0, x1, &job->k, job->tame, changed != NULL);
          break;
        default:
          moved = rows_avx512_4 (in, out, x0, x1, &job->k, job->tame, changed != NULL);
          break;
        }
      if (changed)
        {
          if (moved)
            *changed = 1;
          /* The sweep compared [x0, x1): the edge cells remain. */
          for (int r = 0; r < n; r++)
            {
              if (ux0 < x0 && memcmp (out[r] + ux0, in[r + 1] + ux0, sizeof (float)) != 0)
                *changed = 1;
              if (ux1 > x1 && memcmp (out[r] + x1, in[r + 1] + x1, sizeof (float)) != 0)
                *changed = 1;
            }
        }
      lv->have_up = false;
      return;
    }
#endif
  for (int r = 0; r < yb - ya; r++)
    level_row (job, j, lv, in[r], in[r + 1], in[r + 2], out[r], ya + r, cx0, cx1, job->tame,
               changed);
}

/* Rows of scratch a tile of K passes needs, R rows a sweep: a ring of
 * R + 2 rows for each level but the last, and pair rows for each level's
 * sweep: three for the AVX-512 one (kept in place), six for the others
 * (swapped). */
static size_t
block_scratch_rows (int K, int R, int isa)
{
  return (size_t) (R + 2) * (size_t) (K - 1) + (isa == ISA_AVX512 ? 3 : 6) * (size_t) K + 1;
}

/* Row pitch of the scratch: rows an odd number of cache lines apart, so
 * the rows a sweep touches at one column fall in different sets of the
 * caches (at a multiple of 4 KiB apart they would share one). */
static size_t
block_pitch (int w)
{
  return 16 * ((((size_t) w + 15) / 16) | 1);
}

static void
block_tiles (void *user, int begin, int end)
{
  const BlockJob *job = user;
  int w = job->w, h = job->h, K = job->passes, R = job->rows, M = R + 2, slot;
  size_t pitch = block_pitch (w);
  float *buf = scratch_take (&job->scratch, &slot), *ring[THERMAL_BLOCK_MAX];
  Level lv[THERMAL_BLOCK_MAX + 1];

  if (buf == NULL)
    {
      for (int t = begin; t < end; t++)
        job->failed[t] = 1;
      scratch_give (&job->scratch, slot);
      return;
    }
  /* Level j's ring (1 <= j < K) and its sweep's pair rows. */
  for (int j = 1; j < K; j++)
    ring[j] = buf + pitch * (size_t) (1 + M * (j - 1));
  for (int j = 1; j <= K; j++)
    {
      int np = job->isa == ISA_AVX512 ? 1 : 2;
      float *l = buf + pitch * (size_t) (1 + M * (K - 1) + 3 * np * (j - 1));
      memset (&lv[j].p, 0, sizeof lv[j].p);
      for (int q = 0; q < np; q++)
        {
          lv[j].p.s[q] = l + (size_t) q * pitch;
          lv[j].p.se[q] = l + (size_t) (np + q) * pitch;
          lv[j].p.sw[q] = l + (size_t) (2 * np + q) * pitch;
        }
    }
  for (int t = begin; t < end; t++)
    {
      int sx0 = (t / job->bands) * job->strip, y0 = (t % job->bands) * job->band_rows;
      int sx1 = sx0 + job->strip < w ? sx0 + job->strip : w;
      int y1 = y0 + job->band_rows < h ? y0 + job->band_rows : h;
      int lo[THERMAL_BLOCK_MAX + 1], hi[THERMAL_BLOCK_MAX + 1];
      int c0[THERMAL_BLOCK_MAX + 1], c1[THERMAL_BLOCK_MAX + 1];

      /* Level j spans the tile's rows and columns and K - j more on
       * every side (a sample reads its neighbours on the level below),
       * cut at the world's edge. */
      for (int j = 1; j <= K; j++)
        {
          lo[j] = y0 - (K - j) > 0 ? y0 - (K - j) : 0;
          hi[j] = y1 + (K - j) < h ? y1 + (K - j) : h;
          c0[j] = sx0 - (K - j) > 0 ? sx0 - (K - j) : 0;
          c1[j] = sx1 + (K - j) < w ? sx1 + (K - j) : w;
          lv[j].have_up = false;
        }
      /* Step S: level j computes its rows R S - j to R S - j + R - 1,
       * levels in order, so level j - 1's rows up to R S - j + R are
       * there when level j reads them, and the rows its ring's R + 2
       * slots held before, up to R S - j - 2, are read no more. */
      for (int step = lo[1] / R > 0 ? lo[1] / R - 1 : 0; R * step - K < hi[K]; step++)
        for (int j = 1; j <= K; j++)
          {
            int ya = R * step - j, yb = ya + R;
            const float *in[THERMAL_ROWS_MAX + 2];
            float *out[THERMAL_ROWS_MAX];
            ya = ya > lo[j] ? ya : lo[j];
            yb = yb < hi[j] ? yb : hi[j];
            if (yb <= ya)
              continue;
#define ROW(level, row)                                                                         \
  ((level) == 0 ? job->src + (size_t) (row) * w : ring[level] + pitch * (size_t) ((row) % M))
            for (int y = ya - 1; y <= yb; y++)
              in[y - ya + 1] = y < 0 || y >= h ? NULL : ROW (j - 1, y);
#undef ROW
            for (int y = ya; y < yb; y++)
              out[y - ya] = j == K ? job->dst + (size_t) y * w
                                   : ring[j] + pitch * (size_t) (y % M);
            level_rows (job, j, &lv[j], in, out, ya, yb, c0[j], c1[j],
                        j == K ? job->changed + t : NULL);
          }
    }
  scratch_give (&job->scratch, slot);
}

/* Passes per block: the levels' rings (three rows a strip wide each,
 * and six pair rows with the AVX2 and generic sweeps: half the passes)
 * stay within about 400 KB of the core's L2.  TG_THERMAL_BLOCK
 * (1..THERMAL_BLOCK_MAX) sets it, for the tests; the bytes never depend
 * on it. */
static int
thermal_block (int isa)
{
  const char *env = getenv ("TG_THERMAL_BLOCK");
  int k = isa == ISA_AVX512 ? THERMAL_BLOCK_DEFAULT : THERMAL_BLOCK_DEFAULT / 2;

  if (env && atoi (env) > 0)
    k = atoi (env);
  return k < 1 ? 1 : k > THERMAL_BLOCK_MAX ? THERMAL_BLOCK_MAX : k;
}

/* Rows per AVX-512 sweep: TG_THERMAL_ROWS (1..THERMAL_ROWS_MAX) sets it,
 * for the tests and the bench; the bytes never depend on it. */
static int
thermal_rows (void)
{
  const char *env = getenv ("TG_THERMAL_ROWS");
  int r = env && atoi (env) > 0 ? atoi (env) : THERMAL_ROWS_DEFAULT;

  return r > THERMAL_ROWS_MAX ? THERMAL_ROWS_MAX : r;
}

/* Columns per strip and rows per band of the tiles of a W x H map on
 * THREADS threads: strips of at most THERMAL_STRIP_COLS columns, and the
 * strips cut in bands when there are fewer tiles than threads or a count
 * the threads do not share evenly (bands of at least 64 rows).
 * TG_THERMAL_STRIP and TG_THERMAL_BAND (at least THERMAL_BAND_MIN) set
 * them, for the tests; the bytes never depend on them. */
static void
thermal_tiles (int w, int h, int threads, int *strip, int *band_rows)
{
  const char *env_s = getenv ("TG_THERMAL_STRIP"), *env_b = getenv ("TG_THERMAL_BAND");
  int strips = (w + THERMAL_STRIP_COLS - 1) / THERMAL_STRIP_COLS, bands = 1;

  if (threads < 1)
    threads = 1;
  *strip = (w + strips - 1) / strips;
  while ((strips * bands) % threads != 0 && bands < threads && (h + bands) / (bands + 1) >= 64)
    bands++;
  *band_rows = (h + bands - 1) / bands;
  if (env_s && atoi (env_s) > 0)
    *strip = atoi (env_s);
  if (env_b && atoi (env_b) > 0)
    *band_rows = atoi (env_b) < THERMAL_BAND_MIN ? THERMAL_BAND_MIN : atoi (env_b);
}

/* --- the node ---------------------------------------------------------- */

typedef struct
{
  const TgValue *in;
  const TgRegion *work; /* the working window (the input covers it) */
  const float *eroded;  /* working buffer holding the result */
  int bw, bh;          /* its size */
  int ox, oy;          /* the output region's offset in it */
  TgValue *height, *deposit;
  double deposit_scale; /* height units -> mask */
} FinishJob;

static void
finish_rows (void *user, int begin, int end)
{
  const FinishJob *job = user;
  const TgRegion *r = &job->height->region;

  for (int j = begin; j < end; j++)
    {
      /* The working map holds the world's part of the region; samples an
       * apron reader asks for beyond the world's edge repeat the edge, in
       * the height and in the input the deposit compares it with (the
       * input covers only the working window). */
      int ey = job->oy + j < 0 ? 0 : job->oy + j >= job->bh ? job->bh - 1 : job->oy + j;
      const float *row = job->eroded + (size_t) ey * job->bw;
      const float *src = tg__grid_row (job->in, job->work, ey);
      float *h = tg_value_row (job->height, j);
      float *d = tg_value_row (job->deposit, j);
      if (job->ox >= 0 && job->ox + r->width <= job->bw)
        {
          memcpy (h, row + job->ox, sizeof (float) * (size_t) r->width);
          for (int i = 0; i < r->width; i++)
            d[i] = tg__erosion_mask_linear (
              ((double) h[i] - (double) src[job->ox + i]) * job->deposit_scale, 1.0);
        }
      else
        for (int i = 0; i < r->width; i++)
          {
            int ex = job->ox + i < 0 ? 0 : job->ox + i >= job->bw ? job->bw - 1 : job->ox + i;
            h[i] = row[ex];
            d[i] = tg__erosion_mask_linear (((double) h[i] - (double) src[ex]) * job->deposit_scale,
                                            1.0);
          }
    }
}

/* Coefficients of a pass (passes mode) at cell size CELL (metres),
 * heights in units of HM metres.  Converge mode has its own (iso_coef). */
static ThermalCoef
thermal_coef (const ThermalParams *p, double cell, double hm)
{
  double tan_t = tan (p->talus_deg * (M_PI / 180.0));
  ThermalCoef k;

  k.t1 = (float) (tan_t * cell / hm);
  k.t2 = (float) (tan_t * cell * M_SQRT2 / hm);
  k.k1 = (float) (p->strength / 7.0);
  k.k2 = (float) (p->strength / 14.0);
  return k;
}

/* Up to PASSES passes over the W x H map in *PA (*PB: scratch of the same
 * size), with MASK or none.  OPEN[0..3] (west, north, east, south): the side is an apron
 * side, whose updated window shrinks a cell a pass; the others are the
 * world's closed edge.  Stops after the first pass that changed nothing;
 * *PA ends holding the result (the two may swap). */
static int
run_passes (TgEvalCtx *c, const ThermalCoef *k, const ThermalMask *mask, float **pa, float **pb,
            int w, int h, const bool open[4], int passes)
{
  float *a = *pa, *b = *pb;
  int rc = 0, block, tiles, threads;
  BlockJob job;

  if (passes <= 0)
    return 0;
  memset (&job, 0, sizeof job);
  job.w = w;
  job.h = h;
  threads = tg_eval_threads (c) > 0 ? tg_eval_threads (c) : 1;
  thermal_tiles (w, h, threads, &job.strip, &job.band_rows);
  job.strips = (w + job.strip - 1) / job.strip;
  job.bands = (h + job.band_rows - 1) / job.band_rows;
  tiles = job.strips * job.bands;
  job.k = *k;
  job.mask = mask;
  job.isa = thermal_isa ();
  block = thermal_block (job.isa);
  job.rows = job.isa == ISA_AVX512 ? thermal_rows () : 1;
  job.kmax = block < passes ? block : passes;
  job.changed = calloc (2 * (size_t) tiles, 1);
  if (!job.changed
      || !scratch_init (&job.scratch, threads,
                        block_pitch (w) * block_scratch_rows (job.kmax, job.rows, job.isa)))
    {
      free (job.changed);
      return tg_eval_fail (c, TG_ENOMEM, "out of memory for thermal erosion's tiles");
    }
  job.failed = job.changed + tiles;
  /* The three-operation pair term needs a tame map, which stays tame
   * (see map_is_tame). */
  job.tame = job.isa != ISA_GENERIC && map_is_tame (a, (size_t) w * (size_t) h);
  for (int t = 1; t <= passes && rc == 0; t += job.passes)
    {
      bool still = false;
      job.src = a;
      job.dst = b;
      job.passes = passes - t + 1 < block ? passes - t + 1 : block;
      for (int j = 1; j <= job.passes; j++)
        {
          int tt = t + j - 1;
          job.win[j].ux0 = open[0] ? tt : 0;
          job.win[j].uy0 = open[1] ? tt : 0;
          job.win[j].ux1 = open[2] ? w - tt : w;
          job.win[j].uy1 = open[3] ? h - tt : h;
        }
      memset (job.changed, 0, 2 * (size_t) tiles);
      rc = tg_eval_parallel (c, tiles, 1, block_tiles, &job);
      b = a;
      a = job.dst;
      for (int q = 0; q < tiles && rc == 0; q++)
        if (job.failed[q])
          rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for thermal erosion's row cache");
      /* A pass that changed nothing is a fixed point: the rest would be
       * too (see the top of the file), so the block's last pass equals
       * it and stopping keeps the bytes; and the block had one exactly
       * when its last pass changed nothing. */
      still = true;
      for (int q = 0; q < tiles && still; q++)
        still = job.changed[q] == 0;
      if (still)
        break;
    }
  scratch_clear (&job.scratch);
  free (job.changed);
  *pa = a;
  *pb = b;
  return rc;
}

/* --- converge mode's kernel: the slope in every direction ---------------- */

/* Converge mode measures a slope as the gradient's length, not along
 * eight pair directions.  The 8-direction rule (version 2) rests on any
 * surface whose pairs are all within the band, and the surfaces it
 * reaches slope at the band along the pair directions: an octagonal
 * pyramid for a round spike (contours 5 % out of round), faces tilted
 * into the eight directions, and, since the pairs across the fall line
 * are flat and never move, each column of cells running down a face
 * settled on its own: one-cell corrugations along x, y and the
 * diagonals (issue 14).
 *
 * Here material crosses the four sides of a cell (a finite-volume
 * scheme).  On each side the gradient g is its component across the
 * side, g_n (the two cells' difference), and along it (the mean of the
 * two cells' central differences); while |g| is over the band B the
 * side moves k g_n (1 - T / |g|) across it, else nothing: down the
 * gradient (the moves of a cell's sides add up to k (|g| - T) along
 * it), and across the fall line too, so a face's columns settle
 * together.  (A law without the square root, k g_n min (1, (|g|^2 -
 * T^2) / (2 T^2)), is unstable: its growth with g_n reaches 4 k, and a
 * steep ramp broke into a checkerboard.)  The rest state is a gradient
 * within the band in every direction: round cones (contours 2 % out of
 * round where the 8-pair rule left 5 %), faces without a grid
 * direction.  The aim T is the pair rule's (see iso_coef): aimed lower
 * (0.8 t) the passes settled sooner, but a face still running kept a
 * checkerboard of sides switching over and under the band (0.1 m deep
 * on a 3 m grid).  A side's amount is computed once a pass and taken
 * from one cell and given to the other, so the volume is conserved up
 * to float rounding; all builds run the same operations (8 lanes, or
 * one at a time), so the bytes do not depend on
 * the ISA, the thread count or the tiles below. */
typedef struct
{
  float b2;  /* band squared (height units per cell) */
  float t;   /* aim */
  float k;   /* fraction moved per pass */
  float f;   /* least move */
} IsoCoef;

/* Flux of a side: GN the difference across it (the first cell's height
 * minus the second's), GT the difference along it (per cell).  A move
 * under the least one is none: a side over the band whose gradient runs
 * mostly along it moves little across it (the sides across the gradient
 * carry that material), and such moves crept on pass after pass; so
 * every move is at least F, which lets the passes reach a state where
 * nothing moves.  A NaN gradient moves nothing. */
static inline float
iso_flux (float gn, float gt, const IsoCoef *k)
{
  float g2 = gn * gn + gt * gt;
  float fl = k->k * gn * (1.0f - k->t / sqrtf (g2));

  return g2 > k->b2 && fabsf (fl) >= k->f ? fl : 0.0f;
}

/* A flux F (first cell to second) cut by the mask of the cell the
 * material leaves, as pair_masked: to M |F| + k S, M and S the mask and
 * scree depth of that cell (MA, SA of the first, MB, SB of the second),
 * so a cell of mask 0 sheds over its four faces at most 4 k = 4/5 x
 * strength of its scree and never sinks below where it started; a cut
 * move under the least one is none, and a move of none is +0 (a -0
 * would turn a pit of -0 into +0). */
static inline float
iso_cut (float f, float ma, float sa, float mb, float sb, const IsoCoef *k)
{
  float a = fabsf (f);
  bool shed = f > 0.0f;
  float g = (shed ? ma : mb) * a + k->k * (shed ? sa : sb), c = a < g ? a : g;

  return c < k->f ? 0.0f : copysignf (c, f);
}

/* A window of the world held in a local map: RW x RH samples, row
 * stride RW, whose sides are the world's edge or not (EL, ER, ET, EB);
 * with a mask, LOOSE and ORIG point at the window's first sample in the
 * world's maps (stride WS). */
typedef struct
{
  int rw, rh;
  bool el, er, et, eb;
  const float *loose, *orig;
  size_t ws;
  int isa;
} IsoWin;

#if defined(__has_builtin)
#if __has_builtin(__builtin_shufflevector)
#define TG__HAVE_SHUFFLEVECTOR 1
#endif
#endif

/* Square roots, 8 at a time (correctly rounded, as sqrtf).  The halves
 * are taken apart and put together in registers where the compiler can:
 * through memory, the 8-lane load of two 4-lane stores waited for them
 * (a failed store forward), a quarter of the AVX2 kernel's time. */
V8_INLINE V8
v_sqrt (V8 x)
{
  V8 r;
#if defined(TG__EROSION_HAVE_X86) && defined(TG__HAVE_SHUFFLEVECTOR)
  typedef float V4 __attribute__ ((vector_size (16)));
  V4 lo = __builtin_shufflevector (x, x, 0, 1, 2, 3), hi = __builtin_shufflevector (x, x, 4, 5, 6, 7);
  lo = (V4) _mm_sqrt_ps ((__m128) lo);
  hi = (V4) _mm_sqrt_ps ((__m128) hi);
  r = __builtin_shufflevector (lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
#elif defined(TG__EROSION_HAVE_X86)
  __m128 lo, hi;
  memcpy (&lo, &x, sizeof lo);
  memcpy (&hi, (char *) &x + sizeof lo, sizeof hi);
  lo = _mm_sqrt_ps (lo);
  hi = _mm_sqrt_ps (hi);
  memcpy (&r, &lo, sizeof lo);
  memcpy ((char *) &r + sizeof lo, &hi, sizeof hi);
#else
  for (int l = 0; l < 8; l++)
    r[l] = sqrtf (x[l]);
#endif
  return r;
}

/* Whether a lane of mask M is set. */
V8_INLINE bool
v_any (V8i m)
{
#ifdef TG__EROSION_HAVE_X86
  __m128 lo, hi;
  memcpy (&lo, &m, sizeof lo);
  memcpy (&hi, (char *) &m + sizeof lo, sizeof hi);
  return (_mm_movemask_ps (lo) | _mm_movemask_ps (hi)) != 0;
#else
  int r = 0;
  for (int l = 0; l < 8; l++)
    r |= m[l];
  return r != 0;
#endif
}

/* iso_flux, 8 at a time: the same operations (the selects as masks).
 * Most sides are within the band: a vector of them is +0 at once. */
V8_INLINE V8
v_iso_flux (V8 gn, V8 gt, V8 b2, V8 t, V8 kk, V8 f)
{
  V8 g2 = gn * gn + gt * gt, fl, afl;
  V8i over = g2 > b2, on;

  if (!v_any (over))
    return v_splat (0.0f);
  fl = kk * gn * (v_splat (1.0f) - t / v_sqrt (g2));
  afl = (V8) ((V8i) fl & ~(V8i) v_splat (-0.0f));
  on = over & (afl >= f);
  return (V8) ((V8i) fl & on);
}

/* Fluxes of local row J of A over columns [C0, C1): FX[i] from cell i to
 * i + 1 for i in [C0 - 1, C1) (0 across the world's edge; none when FX
 * is NULL), and FY[i]
 * from (i, J) to (i, J + 1) for i in [C0, C1) (0 on the world's last
 * row).  FX and FY are indexed by local column. */
V8_INLINE void
iso_fluxes_body (const float *a, const IsoWin *v, int j, int c0, int c1, const IsoCoef *k,
                 float *fx, float *fy)
{
  int rw = v->rw;
  const float *m = a + (size_t) j * rw;
  bool top = j == 0 && v->et, bot = j == v->rh - 1 && v->eb;
  const float *u = top ? m : m - rw, *d = bot ? m : m + rw;
  float sy = top || bot ? 0.5f : 0.25f; /* one-sided on the world's edge */
  V8 b2 = v_splat (k->b2), t = v_splat (k->t), kk = v_splat (k->k), f = v_splat (k->f);
  V8 vsy = v_splat (sy), q = v_splat (0.25f);
  int lo = c0 - 1, hi = c1, i;

  if (!fx)
    goto down;
  if (lo < 0)
    {
      /* Only on the world's west edge: no face beyond it. */
      fx[-1] = 0.0f;
      lo = 0;
    }
  if (hi > rw - 1)
    {
      fx[rw - 1] = 0.0f;
      hi = rw - 1;
    }
  for (i = lo; i + 8 <= hi; i += 8)
    {
      V8 r = v_iso_flux (v_load (m + i) - v_load (m + i + 1),
                         vsy * ((v_load (d + i) - v_load (u + i))
                                + (v_load (d + i + 1) - v_load (u + i + 1))),
                         b2, t, kk, f);
      memcpy (fx + i, &r, sizeof r);
    }
  for (; i < hi; i++)
    fx[i] = iso_flux (m[i] - m[i + 1], sy * ((d[i] - u[i]) + (d[i + 1] - u[i + 1])), k);
down:
  if (bot)
    {
      for (i = c0; i < c1; i++)
        fy[i] = 0.0f;
      return;
    }
  lo = c0;
  hi = c1;
  if (lo == 0 && v->el)
    {
      fy[0] = iso_flux (m[0] - d[0], 0.5f * ((m[1] - m[0]) + (d[1] - d[0])), k);
      lo = 1;
    }
  if (hi == rw && v->er)
    {
      fy[rw - 1] = iso_flux (m[rw - 1] - d[rw - 1],
                             0.5f * ((m[rw - 1] - m[rw - 2]) + (d[rw - 1] - d[rw - 2])), k);
      hi = rw - 1;
    }
  for (i = lo; i + 8 <= hi; i += 8)
    {
      V8 r = v_iso_flux (v_load (m + i) - v_load (d + i),
                         q * ((v_load (m + i + 1) - v_load (m + i - 1))
                              + (v_load (d + i + 1) - v_load (d + i - 1))),
                         b2, t, kk, f);
      memcpy (fy + i, &r, sizeof r);
    }
  for (; i < hi; i++)
    fy[i] = iso_flux (m[i] - d[i], 0.25f * ((m[i + 1] - m[i - 1]) + (d[i + 1] - d[i - 1])), k);
}

/* Row J of B from A: its cells [X0, X1) lose their fluxes out and gain
 * those in. */
V8_INLINE void
iso_update_body (const float *restrict src, float *restrict o, const float *fx, const float *fyu,
                 const float *fyd, int x0, int x1)
{
  int i = x0;

  for (; i + 8 <= x1; i += 8)
    {
      V8 r = v_load (src + i)
             - ((v_load (fx + i) - v_load (fx + i - 1)) + (v_load (fyd + i) - v_load (fyu + i)));
      memcpy (o + i, &r, sizeof r);
    }
  for (; i < x1; i++)
    o[i] = src[i] - ((fx[i] - fx[i - 1]) + (fyd[i] - fyu[i]));
}

static void
iso_update_generic (const float *src, float *o, const float *fx, const float *fyu,
                    const float *fyd, int x0, int x1)
{
  iso_update_body (src, o, fx, fyu, fyd, x0, x1);
}

#ifdef TG__EROSION_HAVE_X86
__attribute__ ((target ("avx2"))) static void
iso_update_avx2 (const float *src, float *o, const float *fx, const float *fyu, const float *fyd,
                 int x0, int x1)
{
  iso_update_body (src, o, fx, fyu, fyd, x0, x1);
}
#endif

static void
iso_fluxes_generic (const float *a, const IsoWin *v, int j, int c0, int c1, const IsoCoef *k,
                    float *fx, float *fy)
{
  iso_fluxes_body (a, v, j, c0, c1, k, fx, fy);
}

#ifdef TG__EROSION_HAVE_X86
__attribute__ ((target ("avx2"))) static void
iso_fluxes_avx2 (const float *a, const IsoWin *v, int j, int c0, int c1, const IsoCoef *k,
                 float *fx, float *fy)
{
  iso_fluxes_body (a, v, j, c0, c1, k, fx, fy);
}
#endif

/* Scratch of the AVX-512 kernel for a row's sides (see
 * iso_fluxes_avx512): per vector of 16 sides their GN and G2, where the
 * fluxes go and which lanes are over the band, and the list of vectors
 * with a side over it; for up to RW / 8 + 2 vectors. */
typedef struct
{
  float *gn, *g2;
  float **dst;
  unsigned short *over, *tail;
  int *list;
  int nv, nl;
} IsoPack;

/* Floats of scratch for an IsoPack of rows of RW samples. */
static size_t
iso_pack_floats (int rw)
{
  size_t nv = (size_t) rw / 8 + 2;
  size_t ptr = (sizeof (float *) + sizeof (float) - 1) / sizeof (float);
  return nv * (32 + ptr + 2) + 16;
}

static void
iso_pack_init (IsoPack *pk, float *s, int rw)
{
  size_t nv = (size_t) rw / 8 + 2;
  s = (float *) (((uintptr_t) s + 63) & ~(uintptr_t) 63);
  pk->gn = s;
  pk->g2 = s + 16 * nv;
  pk->dst = (float **) (s + 32 * nv);
  pk->list = (int *) (pk->dst + nv);
  pk->over = (unsigned short *) (pk->list + nv);
  pk->tail = pk->over + nv;
  pk->nv = pk->nl = 0;
}

#ifdef TG__EROSION_HAVE_X86
/* iso_fluxes with AVX-512.  A side needs a square root and a division
 * only when it is over the band: on alpine a fifth of the sides, but half
 * of the vectors hold one, and a vector's branch on it goes either way.
 * So a row's vectors of sides are listed, those with a side over the band
 * apart, and only those then computed; each side takes the same
 * operations as in v_iso_flux, so the same bits. */
#define TG__ISO_AVX512 __attribute__ ((target ("avx512f,avx512dq")))

/* Lists the sides of a vector (lanes TAIL) whose fluxes go to OUT. */
TG__ISO_AVX512 static inline void
iso_pack (IsoPack *pk, __m512 gn, __m512 gt, __m512 b2, __mmask16 tail, float *out)
{
  __m512 g2 = _mm512_add_ps (_mm512_mul_ps (gn, gn), _mm512_mul_ps (gt, gt));
  __mmask16 o = _mm512_mask_cmp_ps_mask (tail, g2, b2, _CMP_GT_OQ);
  int n = pk->nv++;

  _mm512_store_ps (pk->gn + 16 * n, gn);
  _mm512_store_ps (pk->g2 + 16 * n, g2);
  _mm512_mask_storeu_ps (out, tail, _mm512_setzero_ps ());
  pk->dst[n] = out;
  pk->over[n] = o;
  pk->tail[n] = tail;
  pk->list[pk->nl] = n;
  pk->nl += o != 0;
}

/* The listed vectors' fluxes, as v_iso_flux. */
TG__ISO_AVX512 static void
iso_pack_fluxes (const IsoPack *pk, const IsoCoef *k)
{
  __m512 t = _mm512_set1_ps (k->t), kk = _mm512_set1_ps (k->k), f = _mm512_set1_ps (k->f);
  __m512 one = _mm512_set1_ps (1.0f);

  for (int i = 0; i < pk->nl; i++)
    {
      int n = pk->list[i];
      __m512 gn = _mm512_load_ps (pk->gn + 16 * n), g2 = _mm512_load_ps (pk->g2 + 16 * n);
      __m512 fl = _mm512_mul_ps (_mm512_mul_ps (kk, gn),
                                 _mm512_sub_ps (one, _mm512_div_ps (t, _mm512_sqrt_ps (g2))));
      __mmask16 on = _mm512_mask_cmp_ps_mask (pk->over[n], _mm512_abs_ps (fl), f, _CMP_GE_OQ);
      _mm512_mask_storeu_ps (pk->dst[n], pk->tail[n], _mm512_maskz_mov_ps (on, fl));
    }
}

/* iso_fluxes_body's sides, the vector loops packed (PK: scratch for
 * 2 RW + 32 sides and RW / 8 + 2 vectors). */
TG__ISO_AVX512 static void
iso_fluxes_avx512 (const float *a, const IsoWin *v, int j, int c0, int c1, const IsoCoef *k,
                   float *fx, float *fy, IsoPack *pkp)
{
  IsoPack pk_local = *pkp, *pk = &pk_local; /* counts in registers */
  int rw = v->rw;
  const float *m = a + (size_t) j * rw;
  bool top = j == 0 && v->et, bot = j == v->rh - 1 && v->eb;
  const float *u = top ? m : m - rw, *d = bot ? m : m + rw;
  float sy = top || bot ? 0.5f : 0.25f; /* one-sided on the world's edge */
  __m512 b2 = _mm512_set1_ps (k->b2), vsy = _mm512_set1_ps (sy), q = _mm512_set1_ps (0.25f);
  int xlo = c0 - 1, xhi = c1, ylo = c0, yhi = c1;

  pk->nv = pk->nl = 0;
  if (fx)
    {
      if (xlo < 0)
        {
          fx[-1] = 0.0f;
          xlo = 0;
        }
      if (xhi > rw - 1)
        {
          fx[rw - 1] = 0.0f;
          xhi = rw - 1;
        }
      for (int i = xlo; i < xhi; i += 16)
        {
          __mmask16 l = lanes (xhi - i);
          __m512 gn = _mm512_sub_ps (_mm512_maskz_loadu_ps (l, m + i),
                                     _mm512_maskz_loadu_ps (l, m + i + 1));
          __m512 gt = _mm512_mul_ps (
              vsy, _mm512_add_ps (_mm512_sub_ps (_mm512_maskz_loadu_ps (l, d + i),
                                                 _mm512_maskz_loadu_ps (l, u + i)),
                                  _mm512_sub_ps (_mm512_maskz_loadu_ps (l, d + i + 1),
                                                 _mm512_maskz_loadu_ps (l, u + i + 1))));
          iso_pack (pk, gn, gt, b2, l, fx + i);
        }
    }
  if (bot)
    {
      for (int i = c0; i < c1; i++)
        fy[i] = 0.0f;
    }
  else
    {
      if (ylo == 0 && v->el)
        {
          fy[0] = iso_flux (m[0] - d[0], 0.5f * ((m[1] - m[0]) + (d[1] - d[0])), k);
          ylo = 1;
        }
      if (yhi == rw && v->er)
        {
          fy[rw - 1] = iso_flux (m[rw - 1] - d[rw - 1],
                                 0.5f * ((m[rw - 1] - m[rw - 2]) + (d[rw - 1] - d[rw - 2])), k);
          yhi = rw - 1;
        }
      for (int i = ylo; i < yhi; i += 16)
        {
          __mmask16 l = lanes (yhi - i);
          __m512 gn = _mm512_sub_ps (_mm512_maskz_loadu_ps (l, m + i),
                                     _mm512_maskz_loadu_ps (l, d + i));
          __m512 gt = _mm512_mul_ps (
              q, _mm512_add_ps (_mm512_sub_ps (_mm512_maskz_loadu_ps (l, m + i + 1),
                                               _mm512_maskz_loadu_ps (l, m + i - 1)),
                                _mm512_sub_ps (_mm512_maskz_loadu_ps (l, d + i + 1),
                                               _mm512_maskz_loadu_ps (l, d + i - 1))));
          iso_pack (pk, gn, gt, b2, l, fy + i);
        }
    }
  iso_pack_fluxes (pk, k);
}
#endif

static void
iso_fluxes (const float *a, const IsoWin *v, int j, int c0, int c1, const IsoCoef *k, float *fx,
            float *fy, IsoPack *pk)
{
#ifdef TG__EROSION_HAVE_X86
  if (v->isa == ISA_AVX512)
    {
      iso_fluxes_avx512 (a, v, j, c0, c1, k, fx, fy, pk);
      return;
    }
  if (v->isa != ISA_GENERIC)
    {
      iso_fluxes_avx2 (a, v, j, c0, c1, k, fx, fy);
      return;
    }
#else
  (void) pk;
#endif
  iso_fluxes_generic (a, v, j, c0, c1, k, fx, fy);
}

#ifdef TG__EROSION_HAVE_X86
/* scree_of, 16 at a time (a NaN or -0 difference is +0, as there). */
TG__ISO_AVX512 static inline __m512
iso_scree16 (__m512 h, __m512 h0)
{
  __m512 s = _mm512_sub_ps (h, h0);

  return _mm512_maskz_mov_ps (_mm512_cmp_ps_mask (s, _mm512_setzero_ps (), _CMP_GT_OQ), s);
}

/* iso_cut of the fluxes F in lanes L that are not 0 (the others kept),
 * 16 at a time with the same operations: the first cell's mask and
 * scree MA, SA, the second's MB, SB. */
TG__ISO_AVX512 static inline __m512
iso_cut16 (__m512 f, __mmask16 l, __m512 ma, __m512 sa, __m512 mb, __m512 sb, const IsoCoef *k)
{
  __m512 sign = _mm512_set1_ps (-0.0f);
  __m512 a = _mm512_andnot_ps (sign, f);
  __mmask16 shed = _mm512_cmp_ps_mask (f, _mm512_setzero_ps (), _CMP_GT_OQ);
  __m512 g = _mm512_add_ps (_mm512_mul_ps (_mm512_mask_blend_ps (shed, mb, ma), a),
                            _mm512_mul_ps (_mm512_set1_ps (k->k), _mm512_mask_blend_ps (shed, sb, sa)));
  __m512 c = _mm512_mask_blend_ps (_mm512_cmp_ps_mask (a, g, _CMP_LT_OQ), g, a);
  __mmask16 keep = _mm512_cmp_ps_mask (c, _mm512_set1_ps (k->f), _CMP_NLT_UQ);
  __m512 r = _mm512_maskz_or_ps (keep, c, _mm512_and_ps (sign, f));

  return _mm512_mask_mov_ps (f, l, r);
}

/* iso_cut of the sides [LO, HI) of F with AVX-512, each side from the
 * cell at H0 (its input at O0, its mask at L0) to the cell at H1 (O1,
 * L1); a vector of sides that all move nothing is left as it is. */
TG__ISO_AVX512 static void
iso_cut_sides_avx512 (float *f, const float *h0, const float *o0, const float *l0,
                      const float *h1, const float *o1, const float *l1, int lo, int hi,
                      const IsoCoef *k)
{
  for (int i = lo; i < hi; i += 16)
    {
      __mmask16 l = lanes (hi - i);
      __m512 v = _mm512_maskz_loadu_ps (l, f + i);
      l = _mm512_mask_cmp_ps_mask (l, v, _mm512_setzero_ps (), _CMP_NEQ_UQ);
      if (!l)
        continue;
      __m512 s0 = iso_scree16 (_mm512_maskz_loadu_ps (l, h0 + i), _mm512_maskz_loadu_ps (l, o0 + i));
      __m512 s1 = iso_scree16 (_mm512_maskz_loadu_ps (l, h1 + i), _mm512_maskz_loadu_ps (l, o1 + i));
      v = iso_cut16 (v, l, _mm512_maskz_loadu_ps (l, l0 + i), s0, _mm512_maskz_loadu_ps (l, l1 + i),
                     s1, k);
      _mm512_mask_storeu_ps (f + i, l, v);
    }
}
#endif

/* The mask's cut of the fluxes iso_fluxes gave for local row J of A
 * (material leaving a cell as its mask allows, plus its scree). */
static void
iso_fluxes_masked (const float *a, const IsoWin *v, int j, int c0, int c1, const IsoCoef *k,
                   float *fx, float *fy)
{
  int rw = v->rw;
  const float *m = a + (size_t) j * rw, *d = m + rw;
  const float *lm = v->loose + (size_t) j * v->ws, *om = v->orig + (size_t) j * v->ws;
  const float *ld = lm + v->ws, *od = om + v->ws;
  int lo = c0 - 1 < 0 ? 0 : c0 - 1, hi = c1 < rw - 1 ? c1 : rw - 1;

#ifdef TG__EROSION_HAVE_X86
  if (v->isa == ISA_AVX512)
    {
      if (fx)
        iso_cut_sides_avx512 (fx, m, om, lm, m + 1, om + 1, lm + 1, lo, hi, k);
      if (fy && !(j == v->rh - 1 && v->eb))
        iso_cut_sides_avx512 (fy, m, om, lm, d, od, ld, c0, c1, k);
      return;
    }
#endif
  for (int i = lo; fx && i < hi; i++)
    if (fx[i] != 0.0f)
      fx[i] = iso_cut (fx[i], lm[i], scree_of (m[i], om[i]), lm[i + 1],
                       scree_of (m[i + 1], om[i + 1]), k);
  if (fy && !(j == v->rh - 1 && v->eb))
    for (int i = c0; i < c1; i++)
      if (fy[i] != 0.0f)
        fy[i] = iso_cut (fy[i], lm[i], scree_of (m[i], om[i]), ld[i], scree_of (d[i], od[i]),
                         k);
}

/* One pass from local map A to B over the cells [X0, X1) x [Y0, Y1)
 * (the rows and columns next to them must exist, or be beyond the
 * world's edge).  S: three rows of scratch, RW + 1 floats each, then
 * iso_pack_floats (RW).
 * Returns whether a cell of [CX0, CX1) x [CY0, CY1) changed. */
static bool
iso_pass (const float *a, float *b, const IsoWin *v, int x0, int x1, int y0, int y1, int cx0,
          int cx1, int cy0, int cy1, const IsoCoef *k, float *s)
{
  size_t rs = (size_t) v->rw + 1;
  float *fx = s + 1, *fyu = s + rs + 1, *fyd = s + 2 * rs + 1, *tmp;
  bool diff = false;
  IsoPack pk;

  iso_pack_init (&pk, s + 3 * rs, v->rw);

  if (y0 == 0)
    for (int i = x0; i < x1; i++)
      fyu[i] = 0.0f; /* the world's first row: no face above */
  else
    {
      /* Only the faces below row Y0 - 1 (its faces along the row would
       * read the row above it, which may not be there). */
      iso_fluxes (a, v, y0 - 1, x0, x1, k, NULL, fyu, &pk);
      if (v->loose)
        iso_fluxes_masked (a, v, y0 - 1, x0, x1, k, NULL, fyu);
    }
  for (int j = y0; j < y1; j++)
    {
      const float *src = a + (size_t) j * v->rw;
      float *o = b + (size_t) j * v->rw;
      iso_fluxes (a, v, j, x0, x1, k, fx, fyd, &pk);
      if (v->loose)
        iso_fluxes_masked (a, v, j, x0, x1, k, fx, fyd);
#ifdef TG__EROSION_HAVE_X86
      if (v->isa != ISA_GENERIC)
        iso_update_avx2 (src, o, fx, fyu, fyd, x0, x1);
      else
#endif
        iso_update_generic (src, o, fx, fyu, fyd, x0, x1);
      if (!diff && j >= cy0 && j < cy1)
        diff = memcmp (o + cx0, src + cx0, sizeof (float) * (size_t) (cx1 - cx0)) != 0;
      tmp = fyu;
      fyu = fyd;
      fyd = tmp;
    }
  return diff;
}

/* Passes, several per trip through memory: the world is cut into tiles
 * of ISO_TILE_W x ISO_TILE_H cells, and a block of up to ISO_BLOCK
 * passes runs over each tile and ISO_BLOCK cells around it (cut at the
 * world's edge) in a local map, pass p updating the window shrunk by p
 * cells on the sides that are not the world's edge: a cell's new height
 * depends on its 3 x 3 neighbourhood only, so the tile's cells after the
 * block are the whole world's, to the bit.  A tile whose block changed
 * nothing, beside neighbours whose blocks changed nothing, starts the
 * next block from the same samples as the last one and would repeat
 * it: it is skipped (the buffer written holds the map of two blocks
 * before, the same there). */
#define ISO_TILE_W 512
#define ISO_TILE_H 64
#define ISO_BLOCK 8

/* The tiles' size and the passes per trip: the defaults, or, for the
 * tests that check they change no bit, TG_THERMAL_STRIP (columns),
 * TG_THERMAL_BAND (rows) and TG_THERMAL_BLOCK (passes, at most the
 * tile's least side, so a tile's trip reaches only the tiles beside
 * it). */
static void
iso_tiling (int *tw, int *th, int *kb)
{
  const char *es = getenv ("TG_THERMAL_STRIP"), *eb = getenv ("TG_THERMAL_BAND");
  const char *ek = getenv ("TG_THERMAL_BLOCK");

  *tw = es && atoi (es) > 0 ? atoi (es) : ISO_TILE_W;
  *th = eb && atoi (eb) > 0 ? atoi (eb) : ISO_TILE_H;
  *kb = ek && atoi (ek) > 0 ? atoi (ek) : ISO_BLOCK;
  if (*kb > *tw)
    *kb = *tw;
  if (*kb > *th)
    *kb = *th;
}

typedef struct
{
  const float *src;
  float *dst;
  int w, h;
  IsoCoef k;
  const ThermalMask *mask;
  int tw, th, tx, ty; /* tile size, tiles per row and column */
  int passes;         /* in this block */
  int isa;
  const unsigned char *was; /* [tile]: the block before changed it (NULL: the first block) */
  unsigned char *any, *last, *failed; /* [tile]: the block changed it, its last pass did */
  Scratch scratch; /* per thread, enough for the largest tile */
} IsoJob;

/* Floats of scratch for a tile whose local map is RW x RH. */
static size_t
iso_scratch_floats (int rw, int rh)
{
  return 2 * (size_t) rw * rh + 3 * ((size_t) rw + 1) + iso_pack_floats (rw);
}

static void
iso_tiles (void *user, int begin, int end)
{
  const IsoJob *job = user;
  int w = job->w, h = job->h, kp = job->passes, slot;
  /* Scratch taken fresh for each tile: alpine's talus at 2049 spent a
   * fifth of its CPU time on the kernel zeroing its pages. */
  float *buf = scratch_take (&job->scratch, &slot);

  for (int q = begin; q < end; q++)
    {
      int ti = q % job->tx, tj = q / job->tx;
      int ix0 = ti * job->tw, iy0 = tj * job->th;
      int ix1 = ix0 + job->tw < w ? ix0 + job->tw : w, iy1 = iy0 + job->th < h ? iy0 + job->th : h;
      int rx0 = ix0 - kp > 0 ? ix0 - kp : 0, ry0 = iy0 - kp > 0 ? iy0 - kp : 0;
      int rx1 = ix1 + kp < w ? ix1 + kp : w, ry1 = iy1 + kp < h ? iy1 + kp : h;
      IsoWin v;
      float *la, *lb, *tmp;
      bool near = job->was == NULL;

      for (int dj = -1; dj <= 1 && !near; dj++)
        for (int di = -1; di <= 1 && !near; di++)
          {
            int a = ti + di, b = tj + dj;
            near = a >= 0 && b >= 0 && a < job->tx && b < job->ty && job->was[b * job->tx + a];
          }
      job->any[q] = job->last[q] = 0;
      if (!near)
        continue;
      v.rw = rx1 - rx0;
      v.rh = ry1 - ry0;
      v.el = rx0 == 0;
      v.er = rx1 == w;
      v.et = ry0 == 0;
      v.eb = ry1 == h;
      v.ws = (size_t) w;
      v.isa = job->isa;
      v.loose = job->mask ? job->mask->loose + (size_t) ry0 * w + rx0 : NULL;
      v.orig = job->mask ? job->mask->orig + (size_t) ry0 * w + rx0 : NULL;
      if (buf == NULL)
        {
          job->failed[q] = 1;
          continue;
        }
      la = buf;
      lb = buf + (size_t) v.rw * v.rh;
      for (int j = 0; j < v.rh; j++)
        memcpy (la + (size_t) j * v.rw, job->src + (size_t) (ry0 + j) * w + rx0,
                sizeof (float) * (size_t) v.rw);
      for (int p = 1; p <= kp; p++)
        {
          int x0 = v.el ? 0 : p, x1 = v.er ? v.rw : v.rw - p;
          int y0 = v.et ? 0 : p, y1 = v.eb ? v.rh : v.rh - p;
          bool d = iso_pass (la, lb, &v, x0, x1, y0, y1, ix0 - rx0, ix1 - rx0, iy0 - ry0,
                             iy1 - ry0, &job->k, buf + 2 * (size_t) v.rw * v.rh);
          if (p == kp)
            job->last[q] = d;
          tmp = la;
          la = lb;
          lb = tmp;
        }
      for (int j = iy0; j < iy1; j++)
        {
          const float *s = la + (size_t) (j - ry0) * v.rw + (ix0 - rx0);
          size_t at = (size_t) j * w + ix0, n = (size_t) (ix1 - ix0);
          if (!job->any[q] && memcmp (job->src + at, s, sizeof (float) * n) != 0)
            job->any[q] = 1;
          memcpy (job->dst + at, s, sizeof (float) * n);
        }
    }
  scratch_give (&job->scratch, slot);
}

/* Converge mode's coefficients at cell size CELL (metres), heights in
 * units of HM metres: the band B is talus + tolerance; the fraction k
 * is strength / 5 (a side moves at most k g_n: a peak sheds at most 4 k
 * of its excess, and 4 k + k <= 1 keeps it from sinking below a
 * neighbour); the aim T sits below the talus t by what lets a side just
 * over the band, alone, move down to the talus in one pass (2 k (B - T)
 * = B - t; 0.945 t at 38 + 1 degrees); the least move
 * is k (B - t) / 10. */
static IsoCoef
iso_coef (const ThermalParams *p, double cell, double hm)
{
  double tan_t = tan (p->talus_deg * (M_PI / 180.0)) * cell / hm;
  double tan_b = tan (fmin (p->talus_deg + p->tolerance_deg, 89.9) * (M_PI / 180.0)) * cell / hm;
  double kk = p->strength / 5.0;
  IsoCoef k;

  k.b2 = (float) (tan_b * tan_b);
  k.k = (float) kk;
  k.t = (float) (kk > 0.0 ? fmax (0.0, tan_b - (tan_b - tan_t) / (2.0 * kk)) : tan_t);
  k.f = (float) (0.1 * kk * (tan_b - tan_t));
  return k;
}

/* Converge mode's passes over the W x H world in *PA (*PB scratch), all
 * sides closed: up to PASSES, stopping after the first block whose last
 * pass changed nothing (a fixed point: the rest would change nothing
 * either).  *PA ends holding the result. */
static int
run_iso (TgEvalCtx *c, const IsoCoef *k, const ThermalMask *mask, float **pa, float **pb, int w,
         int h, int passes)
{
  IsoJob job;
  int rc = 0, tiles, kb;
  unsigned char *flags;
  float *a = *pa, *b = *pb;

  if (passes <= 0 || !(k->k > 0.0f))
    return 0; /* strength 0 moves nothing */
  memset (&job, 0, sizeof job);
  job.w = w;
  job.h = h;
  job.k = *k;
  job.mask = mask;
  job.isa = thermal_isa ();
  iso_tiling (&job.tw, &job.th, &kb);
  job.tx = (w + job.tw - 1) / job.tw;
  job.ty = (h + job.th - 1) / job.th;
  tiles = job.tx * job.ty;
  /* A tile's local map reaches a block's passes beyond it, cut at the
   * world's edge. */
  flags = calloc (4 * (size_t) tiles, 1);
  if (!flags
      || !scratch_init (&job.scratch, tg_eval_threads (c),
                        iso_scratch_floats (job.tw + 2 * kb < w ? job.tw + 2 * kb : w,
                                            job.th + 2 * kb < h ? job.th + 2 * kb : h)))
    {
      free (flags);
      return tg_eval_fail (c, TG_ENOMEM, "out of memory for thermal erosion's tiles");
    }
  job.last = flags + 2 * (size_t) tiles;
  job.failed = flags + 3 * (size_t) tiles;
  for (int t = 0, blk = 0; t < passes && rc == 0; t += job.passes, blk++)
    {
      bool still = true;
      job.src = a;
      job.dst = b;
      job.passes = passes - t < kb ? passes - t : kb;
      job.was = blk == 0 ? NULL : flags + (size_t) ((blk + 1) & 1) * tiles;
      job.any = flags + (size_t) (blk & 1) * tiles;
      rc = tg_eval_parallel (c, tiles, 1, iso_tiles, &job);
      for (int q = 0; q < tiles && rc == 0; q++)
        if (job.failed[q])
          rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for a thermal erosion tile");
      b = a;
      a = job.dst;
      for (int q = 0; q < tiles && still; q++)
        still = job.last[q] == 0;
      if (still)
        break;
    }
  scratch_clear (&job.scratch);
  free (flags);
  *pa = a;
  *pb = b;
  return rc;
}

/* --- converge mode: coarse levels first -------------------------------- */

/* Converge mode relaxes the whole world, and talus slopes kilometres long
 * take passes that grow with (length / cell)^2: tens of thousands at 4 m
 * cells.  So it solves a pyramid of the world, coarsest level first
 * (every level half the samples per side, down to no side under
 * THERMAL_MG_MIN), each level's passes starting from its own input plus
 * the change the level below it made, interpolated; the finest level then
 * only settles what the coarse ones could not see.  Every level stops at
 * its fixed point or at the cap (the scaled iterations).  The result
 * depends on the whole world: converge mode's apron is the world (cut at
 * its edge), so a tile computes the whole map and keeps its window. */
#define THERMAL_MG_MIN 65
#define THERMAL_MG_LEVELS 12

/* Coarse sample (i, j) is the 1-2-1 weighted mean of fine samples around
 * (2i, 2j), the world's edge repeated. */
static void
mg_restrict (const float *f, int fw, int fh, float *cmap, int cw, int ch)
{
  for (int j = 0; j < ch; j++)
    for (int i = 0; i < cw; i++)
      {
        double s = 0.0;
        for (int dy = -1; dy <= 1; dy++)
          {
            int y = 2 * j + dy < 0 ? 0 : 2 * j + dy >= fh ? fh - 1 : 2 * j + dy;
            for (int dx = -1; dx <= 1; dx++)
              {
                int x = 2 * i + dx < 0 ? 0 : 2 * i + dx >= fw ? fw - 1 : 2 * i + dx;
                s += (double) ((2 - abs (dx)) * (2 - abs (dy))) * f[(size_t) y * fw + x];
              }
          }
        cmap[(size_t) j * cw + i] = (float) (s / 16.0);
      }
}

/* Coarse mask sample (i, j): the firmest of the fine samples around
 * (2i, 2j).  A coarse sample stands for all of them, bedrock included:
 * taking the loosest (as this did) let a coarse sample that is partly
 * bedrock slide as loose ground, its bedrock with it, and the change,
 * interpolated back, lowered the loose fine samples beside the bedrock by
 * what the bedrock would have shed; the bedrock itself is kept (its own
 * mask cuts the loss), so a bedrock ridge one cell wide was left standing
 * as a wall or needle (alpine at 4 m cells: up to 175 m over the
 * neighbours on both sides of it), which the fine level cannot take down,
 * bedrock shedding nothing.  With the firmest, a coarse level moves only
 * ground that is loose all through, and scree over the rest; the loose
 * ground beside bedrock settles on the finer levels, against bedrock that
 * stands only as high as the material that slid from it at that level. */
static void
mg_restrict_min (const float *f, int fw, int fh, float *cmap, int cw, int ch)
{
  for (int j = 0; j < ch; j++)
    for (int i = 0; i < cw; i++)
      {
        float m = 1.0f;
        for (int dy = -1; dy <= 1; dy++)
          {
            int y = 2 * j + dy < 0 ? 0 : 2 * j + dy >= fh ? fh - 1 : 2 * j + dy;
            for (int dx = -1; dx <= 1; dx++)
              {
                int x = 2 * i + dx < 0 ? 0 : 2 * i + dx >= fw ? fw - 1 : 2 * i + dx;
                m = f[(size_t) y * fw + x] < m ? f[(size_t) y * fw + x] : m;
              }
          }
        cmap[(size_t) j * cw + i] = m;
      }
}

/* START = IN + the coarse level's change (EC - IC, bilinear; fine sample
 * x sits at coarse x / 2), a loss cut to MASK times it plus the scree over
 * ORIG (the fine level's, when there is a mask: a fine sample between two
 * coarse ones may take a loss from a loose one; scree may land anywhere),
 * its volume put back: interpolation weighs
 * coarse samples on the world's edge less than inner ones, so the sum
 * drifts by what crossed to or from the edge; the drift is taken back
 * where material moved, in proportion to how much, and flat ground stays
 * exactly as it was.  The passes after conserve the rest. */
static void
mg_prolong (const float *in, const float *mask, const float *orig, int fw, int fh,
            const float *ec, const float *ic, int cw, int ch, float *start)
{
  double drift = 0.0, moved = 0.0;

  for (int y = 0; y < fh; y++)
    {
      int j0 = y / 2, j1 = (y & 1) && j0 + 1 < ch ? j0 + 1 : j0;
      for (int x = 0; x < fw; x++)
        {
          int i0 = x / 2, i1 = (x & 1) && i0 + 1 < cw ? i0 + 1 : i0;
          size_t a = (size_t) j0 * cw, b = (size_t) j1 * cw;
          double d = 0.25 * (((double) ec[a + i0] - ic[a + i0]) + ((double) ec[a + i1] - ic[a + i1])
                             + ((double) ec[b + i0] - ic[b + i0])
                             + ((double) ec[b + i1] - ic[b + i1]));
          size_t k = (size_t) y * fw + x;
          if (mask && d < 0.0)
            {
              /* The loss the sample's mask allows, and its scree (none
               * but rockfall's: ORIG is the level's input otherwise). */
              double s = (double) in[k] - orig[k], g = mask[k] * -d + (s > 0.0 ? s : 0.0);
              d = -d < g ? d : -g;
            }
          start[k] = (float) ((double) in[k] + d);
          drift += (double) start[k] - in[k];
          moved += fabs ((double) start[k] - in[k]);
        }
    }
  if (drift != 0.0 && moved > 0.0)
    for (size_t k = 0; k < (size_t) fw * fh; k++)
      {
        double d = (double) start[k] - in[k];
        if (d != 0.0)
          start[k] = (float) ((double) start[k] - drift * fabs (d) / moved);
      }
}

/* --- rockfall ------------------------------------------------------------ */

/* How far (cells) a face's stepping back ramps in from loose ground. */
#define ROCKFALL_RAMP 2
/* The size of rockfall's cells, in metres (rockfall_world). */
#define ROCKFALL_CELL_M 4.0

/* Where a parcel of rock resting on cell C of the W x H map A may go:
 * the lowest of its neighbours by how high C may stand over it (T1
 * orthogonal, T2 diagonal: the talus drops of a step, in height units);
 * *ROOM gets how far C may rise before its slope to that neighbour
 * reaches talus (negative: it is over talus already). */
static int
lowest_seat (const float *a, int w, int h, int x, int y, float t1, float t2, float *room)
{
  static const int dx[8] = { 1, -1, 0, 0, 1, -1, 1, -1 }, dy[8] = { 0, 0, 1, -1, 1, 1, -1, -1 };
  size_t c = (size_t) y * w + x;
  int best = -1;
  float best_r = INFINITY;

  for (int d = 0; d < 8; d++)
    {
      int nx = x + dx[d], ny = y + dy[d];
      float r;
      if (nx < 0 || ny < 0 || nx >= w || ny >= h)
        continue;
      r = a[(size_t) ny * w + nx] + (d < 4 ? t1 : t2) - a[c];
      if (r < best_r)
        {
          best_r = r;
          best = (int) ((size_t) ny * w + nx);
        }
    }
  *room = best_r;
  return best;
}

/* The W x H map M averaged over a (2 R + 1)-cell box, rows then columns,
 * cut at the map's edge; LINE holds max (W, H) floats. */
static void
box_smooth (float *m, int w, int h, int r, float *line)
{
  float k = 1.0f / (float) (2 * r + 1);

  for (int y = 0; y < h; y++)
    {
      float *row = m + (size_t) y * w;
      memcpy (line, row, sizeof (float) * (size_t) w);
      for (int x = 0; x < w; x++)
        {
          float sum = 0.0f;
          for (int d = -r; d <= r; d++)
            sum += line[x + d < 0 ? 0 : x + d >= w ? w - 1 : x + d];
          row[x] = sum * k;
        }
    }
  for (int x = 0; x < w; x++)
    {
      for (int y = 0; y < h; y++)
        line[y] = m[(size_t) y * w + x];
      for (int y = 0; y < h; y++)
        {
          float sum = 0.0f;
          for (int d = -r; d <= r; d++)
            sum += line[y + d < 0 ? 0 : y + d >= h ? h - 1 : y + d];
          m[(size_t) y * w + x] = sum * k;
        }
    }
}

/* Rockfall before converge mode's passes: the bedrock of a face steps
 * back by DEPTH (height units) times its share: a face cell's (steeper
 * than talus towards a neighbour) is the least bedrock share (1 - loose)
 * within ROCKFALL_RAMP cells, others' 0, smoothed over as far, so the
 * face steps back by a ramp (a one-cell step showed as cracks in the
 * hillshade) and its edge against loose ground stands (cutting it would
 * undermine the slope above: loose ground then stayed steep).  The rock
 * of each cell gathers where it first comes to rest on the stripped map,
 * down the chain of lowest neighbours while over talus (couloirs funnel
 * it); then, resting place by resting place in row order, it is laid as
 * a sand pile grows: a cell filled up to talus against its lowest
 * neighbour, the rest rolling on to that neighbour, so it lies in cones
 * and aprons.  A pile's drops are talus's over sqrt 2: at talus against
 * two orthogonal neighbours at once the gradient, as the passes measure
 * slope, would be sqrt 2 times talus.  ORIG (the ground scree lies on)
 * loses what fell and not what landed, so the passes still move the
 * fallen rock as scree.  Serial, in a fixed order: the bytes are fixed
 * and the volume moves, not changes (to float rounding).  A parcel stops
 * once under a millionth of DEPTH, or after 4 (W + H) steps (no pile
 * nears that), where it is. */
static int
rockfall (float *a, float *orig, const float *loose, int w, int h, float depth, float t1,
          float t2)
{
  size_t n = (size_t) w * (size_t) h;
  float least = depth * 1e-6f;
  float p1 = t1 * (float) M_SQRT1_2, p2 = t2 * (float) M_SQRT1_2;
  float *share = malloc (sizeof (float) * n);
  float *line = malloc (sizeof (float) * (size_t) (w > h ? w : h));
  int *to = malloc (sizeof (int) * n);

  if (!share || !line || !to)
    {
      free (share);
      free (line);
      free (to);
      return TG_ENOMEM;
    }
  /* Each face cell's share: the least bedrock share around it. */
  for (size_t c = 0; c < n; c++)
    {
      int x = (int) (c % (size_t) w), y = (int) (c / (size_t) w);
      float v = 1.0f - loose[c], room;
      share[c] = 0.0f;
      if (!(v > 0.0f) || lowest_seat (orig, w, h, x, y, t1, t2, &room) < 0 || !(room < 0.0f))
        continue;
      for (int dy = -ROCKFALL_RAMP; dy <= ROCKFALL_RAMP; dy++)
        for (int dx = -ROCKFALL_RAMP; dx <= ROCKFALL_RAMP; dx++)
          if (x + dx >= 0 && x + dx < w && y + dy >= 0 && y + dy < h
              && 1.0f - loose[(size_t) (y + dy) * w + x + dx] < v)
            v = 1.0f - loose[(size_t) (y + dy) * w + x + dx];
      share[c] = v;
    }
  box_smooth (share, w, h, ROCKFALL_RAMP, line);
  /* The faces step back: SHARE becomes each cell's fallen rock. */
  for (size_t c = 0; c < n; c++)
    {
      float v = depth * share[c];
      share[c] = 0.0f;
      if (!(v > least) || !(loose[c] < 1.0f))
        continue;
      a[c] -= v;
      orig[c] -= v;
      share[c] = v;
    }
  /* Where each cell's rock first comes to rest on the stripped map: down
   * the chain of lowest neighbours while over a pile's talus.  TO: the
   * next cell (>= 0), -1 for a resting place, then, resolved, -2 - it. */
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        float room;
        int next = lowest_seat (a, w, h, x, y, p1, p2, &room);
        to[(size_t) y * w + x] = next >= 0 && room < 0.0f ? next : -1;
      }
  for (size_t c = 0; c < n; c++)
    {
      int f = (int) c, q;
      while (to[f] >= 0)
        f = to[f];
      f = to[f] == -1 ? f : -2 - to[f];
      for (q = (int) c; to[q] >= 0;)
        {
          int next = to[q];
          to[q] = -2 - f;
          q = next;
        }
      /* Gathered there (a resting place keeps its own). */
      if (to[c] <= -2 && -2 - to[c] != (int) c)
        {
          share[-2 - to[c]] += share[c];
          share[c] = 0.0f;
        }
    }
  /* Each resting place's rock, in row order, as a sand pile grows. */
  for (size_t c = 0; c < n; c++)
    {
      float v = share[c], room;
      int at = (int) c;
      for (int steps = 0; v > least && steps < 4 * (w + h); steps++)
        {
          int next = lowest_seat (a, w, h, at % w, at / w, p1, p2, &room);
          if (next < 0)
            break;
          if (room >= 0.0f)
            {
              float put = v < room ? v : room;
              a[at] += put;
              v -= put;
            }
          at = next; /* over talus: roll down; else on with the rest */
        }
      if (v > 0.0f)
        a[at] += v;
    }
  free (share);
  free (line);
  free (to);
  return 0;
}

/* How many cells of CELL_M metres a side rockfall_world's cells hold. */
static int
rockfall_factor (double cell_m)
{
  int f = cell_m > 0.0 ? (int) floor (ROCKFALL_CELL_M / cell_m + 0.5) : 1;

  return f < 1 ? 1 : f;
}

/* Value of the F-times coarser map C (CW x CH, cell k's centre at fine
 * (k + 0.5) F - 0.5) at fine sample (X, Y): bilinear, clamped at the
 * edge. */
static float
coarse_at (const float *c, int cw, int ch, int f, int x, int y)
{
  double u = ((double) x + 0.5) / f - 0.5, v = ((double) y + 0.5) / f - 0.5;
  int i0, j0, i1, j1;
  double fu, fv;
  const float *r0, *r1;

  u = u < 0.0 ? 0.0 : u > cw - 1 ? cw - 1 : u;
  v = v < 0.0 ? 0.0 : v > ch - 1 ? ch - 1 : v;
  i0 = (int) u;
  j0 = (int) v;
  i1 = i0 + 1 < cw ? i0 + 1 : i0;
  j1 = j0 + 1 < ch ? j0 + 1 : j0;
  fu = u - i0;
  fv = v - j0;
  r0 = c + (size_t) j0 * cw;
  r1 = c + (size_t) j1 * cw;
  return (float) ((1 - fv) * ((1 - fu) * r0[i0] + fu * r0[i1])
                  + fv * ((1 - fu) * r1[i0] + fu * r1[i1]));
}

/* rockfall_world's rows on the engine's threads. */
typedef struct
{
  float *a, *orig, *scratch, *ca, *cl;
  const float *loose, *fell, *landed;
  double *row_fell, *row_landed, k;
  int w, h, cw, ch, f;
} RockRows;

/* Coarse rows [BEGIN, END): block averages of the height and the mask. */
static void
rock_restrict_rows (void *user, int begin, int end)
{
  const RockRows *r = user;

  for (int j = begin; j < end; j++)
    for (int i = 0; i < r->cw; i++)
      {
        double sh = 0.0, sl = 0.0;
        int m = 0;
        for (int y = j * r->f; y < (j + 1) * r->f && y < r->h; y++)
          for (int x = i * r->f; x < (i + 1) * r->f && x < r->w; x++)
            {
              sh += r->a[(size_t) y * r->w + x];
              sl += r->loose[(size_t) y * r->w + x];
              m++;
            }
        r->ca[(size_t) j * r->cw + i] = (float) (sh / m);
        r->cl[(size_t) j * r->cw + i] = (float) (sl / m);
      }
}

/* Fine rows [BEGIN, END): what fell leaves, what landed waits in SCRATCH;
 * each row's sums in ROW_FELL and ROW_LANDED. */
static void
rock_fall_rows (void *user, int begin, int end)
{
  const RockRows *r = user;

  for (int y = begin; y < end; y++)
    {
      double sf = 0.0, sl = 0.0;
      for (int x = 0; x < r->w; x++)
        {
          size_t q = (size_t) y * r->w + x;
          float gone = coarse_at (r->fell, r->cw, r->ch, r->f, x, y);
          r->scratch[q] = coarse_at (r->landed, r->cw, r->ch, r->f, x, y);
          r->a[q] -= gone;
          r->orig[q] -= gone;
          sf += gone;
          sl += r->scratch[q];
        }
      r->row_fell[y] = sf;
      r->row_landed[y] = sl;
    }
}

/* Fine rows [BEGIN, END): what landed, scaled by K. */
static void
rock_land_rows (void *user, int begin, int end)
{
  const RockRows *r = user;

  for (size_t q = (size_t) begin * r->w; q < (size_t) end * r->w; q++)
    r->a[q] = (float) ((double) r->a[q] + r->k * r->scratch[q]);
}

/* Rockfall on the world A (W x H, cells CELL_M apart; ORIG and LOOSE as
 * rockfall's), at cells of about ROCKFALL_CELL_M: a sand pile's steps
 * grow with its volume over its cells' area and side (alpine at 4097²,
 * 1 m cells: the piles alone took 2.7 s of one thread, the talus node
 * 6.5 s in all; on 4 m cells the node takes 3.3 s, 2.9 without rock
 * falling).  On a
 * finer map the rockfall runs on block averages (the mask's too) and its
 * two changes, what fell and what landed, come back bilinear; what
 * landed is scaled to what fell (double sums), so the volume is still
 * kept to float rounding.  The piles then look the same at any
 * resolution.  DEPTH in height units, T_TAN the talus slope, HM the
 * world's height in metres; SCRATCH a map's worth of floats. */
static int
rockfall_world (TgEvalCtx *c, float *a, float *orig, const float *loose, float *scratch, int w,
                int h, double cell_m, double hm, float depth, double t_tan)
{
  int f = rockfall_factor (cell_m), cw, ch, rc;
  size_t cn;
  float *ca, *co, *cl, *fell, *landed;
  double sum_fell = 0.0, sum_landed = 0.0;
  RockRows job;

  if (f == 1 || w < 2 * f || h < 2 * f)
    {
      double t = t_tan * cell_m / hm;
      return rockfall (a, orig, loose, w, h, depth, (float) t, (float) (t * M_SQRT2));
    }
  cw = (w + f - 1) / f;
  ch = (h + f - 1) / f;
  cn = (size_t) cw * (size_t) ch;
  if (!(ca = malloc (sizeof (float) * 5 * cn)))
    return TG_ENOMEM;
  if (!(job.row_fell = malloc (sizeof (double) * 2 * (size_t) h)))
    {
      free (ca);
      return TG_ENOMEM;
    }
  job.row_landed = job.row_fell + h;
  co = ca + cn;
  cl = co + cn;
  fell = cl + cn;
  landed = fell + cn;
  job.a = a;
  job.orig = orig;
  job.scratch = scratch;
  job.ca = ca;
  job.cl = cl;
  job.loose = loose;
  job.fell = fell;
  job.landed = landed;
  job.w = w;
  job.h = h;
  job.cw = cw;
  job.ch = ch;
  job.f = f;
  /* Progress stays where it is: the passes after report it. */
  if ((rc = tg_eval_parallel_part (c, ch, tg__grain_rows (w * f), rock_restrict_rows, &job, 0.0,
                                   0.0))
      < 0)
    goto out;
  memcpy (co, ca, sizeof (float) * cn);
  memcpy (fell, ca, sizeof (float) * cn);
  {
    double t = t_tan * cell_m * f / hm;
    rc = rockfall (ca, co, cl, cw, ch, depth, (float) t, (float) (t * M_SQRT2));
  }
  if (rc < 0)
    goto out;
  /* FELL: what left each coarse cell; LANDED: what came to rest on it. */
  for (size_t q = 0; q < cn; q++)
    {
      float gone = fell[q] - co[q];
      landed[q] = ca[q] - co[q];
      fell[q] = gone;
    }
  /* The piles' one-cell steps, smoothed over 3 x 3 (CA's first row or
   * column the line): drawn up bilinear they showed as a lattice on the
   * valley floors. */
  box_smooth (landed, cw, ch, 1, ca);
  if ((rc = tg_eval_parallel_part (c, h, tg__grain_rows (w), rock_fall_rows, &job, 0.0, 0.0)) < 0)
    goto out;
  /* The rows' sums in row order: the same at any thread count. */
  for (int y = 0; y < h; y++)
    {
      sum_fell += job.row_fell[y];
      sum_landed += job.row_landed[y];
    }
  job.k = sum_landed > 0.0 ? sum_fell / sum_landed : 0.0;
  rc = tg_eval_parallel_part (c, h, tg__grain_rows (w), rock_land_rows, &job, 0.0, 0.0);
out:
  free (job.row_fell);
  free (ca);
  return rc < 0 ? rc : 0;
}

/* Converge mode over the whole world in *PA (W x H at cell CELL; *PB
 * scratch), as above. */
static int
converge_world (TgEvalCtx *c, const ThermalParams *p, double cell, double hm,
                const ThermalMask *mask, float **pa, float **pb, int w, int h, int passes)
{
  int lw[THERMAL_MG_LEVELS], lh[THERMAL_MG_LEVELS], n = 1, rc = 0;
  float *lin[THERMAL_MG_LEVELS] = { 0 }; /* each level's input; [0] is *PA's copy */
  float *ea = NULL, *eb = NULL;          /* the level below's result and scratch */
  IsoCoef k;
  ThermalMask lm;

  lw[0] = w;
  lh[0] = h;
  while (n < THERMAL_MG_LEVELS && (lw[n - 1] + 1) / 2 >= THERMAL_MG_MIN
         && (lh[n - 1] + 1) / 2 >= THERMAL_MG_MIN)
    {
      lw[n] = (lw[n - 1] + 1) / 2;
      lh[n] = (lh[n - 1] + 1) / 2;
      n++;
    }
  if (n == 1)
    {
      IsoCoef ik = iso_coef (p, cell, hm);
      return run_iso (c, &ik, mask, pa, pb, w, h, passes);
    }
  /* A level above 0 holds its input, its two working maps and, with a
   * mask, its mask (the firmest of the finer one's, mg_restrict_min)
   * and, after rockfall, the ground under the fallen scree (restricted
   * as the input is). */
  for (int l = 0; l < n && rc == 0; l++)
    if (!(lin[l] = malloc (sizeof (float) * (size_t) lw[l] * (size_t) lh[l]
                           * (l > 0 ? (mask ? (mask->fallen ? 5 : 4) : 3) : 1))))
      rc = tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d working map", lw[l], lh[l]);
  if (rc == 0)
    {
      memcpy (lin[0], *pa, sizeof (float) * (size_t) w * (size_t) h);
      for (int l = 1; l < n; l++)
        {
          mg_restrict (lin[l - 1], lw[l - 1], lh[l - 1], lin[l], lw[l], lh[l]);
          if (mask)
            mg_restrict_min (l == 1 ? mask->loose : lin[l - 1] + 3 * (size_t) lw[l - 1] * lh[l - 1],
                         lw[l - 1], lh[l - 1], lin[l] + 3 * (size_t) lw[l] * lh[l], lw[l], lh[l]);
          if (mask && mask->fallen)
            mg_restrict (l == 1 ? mask->orig : lin[l - 1] + 4 * (size_t) lw[l - 1] * lh[l - 1],
                         lw[l - 1], lh[l - 1], lin[l] + 4 * (size_t) lw[l] * lh[l], lw[l],
                         lh[l]);
        }
    }
  /* Level l's two working maps live after its input (levels above 0) or
   * are *PA and *PB (level 0). */
  for (int l = n - 1; l >= 0 && rc == 0; l--)
    {
      size_t m = (size_t) lw[l] * (size_t) lh[l];
      float *a = l > 0 ? lin[l] + m : *pa, *b = l > 0 ? lin[l] + 2 * m : *pb;
      /* Scree is new against the level's own input, or lies on the ground
       * under the fallen rock. */
      lm.loose = !mask ? NULL : l > 0 ? lin[l] + 3 * m : mask->loose;
      lm.orig = !mask ? NULL : l == 0 ? mask->orig : mask->fallen ? lin[l] + 4 * m : lin[l];
      lm.fallen = mask && mask->fallen;
      if (l == n - 1)
        memcpy (a, lin[l], sizeof (float) * m);
      else
        mg_prolong (lin[l], lm.loose, lm.orig, lw[l], lh[l], ea, lin[l + 1], lw[l + 1],
                    lh[l + 1], a);
      k = iso_coef (p, cell * (double) (1 << l), hm);
      rc = run_iso (c, &k, mask ? &lm : NULL, &a, &b, lw[l], lh[l], passes);
      ea = a;
      eb = b;
      if (l == 0)
        {
          *pa = a;
          *pb = b;
        }
    }
  (void) eb;
  for (int l = 0; l < n; l++)
    free (lin[l]);
  return rc;
}

static int
thermal_eval (TgEvalCtx *c)
{
  const ThermalParams *p = tg_eval_params (c);
  const TgRegion *r = tg_eval_region (c);
  const TgWorld *world = tg_eval_world (c);
  const TgValue *in = tg_eval_input (c, 0), *mk = tg_eval_input (c, 1);
  int passes = thermal_passes (p, r->cell);
  TgRegion grown = tg_region_grow (r, thermal_apron (p, r->cell)), work = tg_region_clip (&grown);
  int rc = 0;
  float *a, *b, *base;
  ThermalMask mask = { 0 };
  float *orig_rw = NULL; /* mask.orig, to write */
  FinishJob fin;
  double hm = world->height_m > 0.0 ? world->height_m : 1.0;
  bool open[4];

  /* The working window: the grown region cut at the world's edge, all the
   * engine asks the input for (TG_NODE_APRON_IN_WORLD). */
  if ((rc = tg__check_grid_input (c, in, "height", &work)) < 0)
    return rc;
  if (mk && (rc = tg__check_grid_input (c, mk, "mask", &work)) < 0)
    return rc;

  base = a = malloc (sizeof (float) * (mk ? 4 : 2) * (size_t) work.width * (size_t) work.height);
  if (!a)
    return tg_eval_fail (c, TG_ENOMEM, "out of memory for a %d x %d working map", work.width,
                         work.height);
  b = a + (size_t) work.width * (size_t) work.height;
  for (int j = 0; j < work.height; j++)
    memcpy (a + (size_t) j * work.width, tg__grid_row (in, &work, j),
            sizeof (float) * (size_t) work.width);
  if (mk)
    {
      /* The mask clamped to 0..1, NaN as 0 (bedrock), and the input
       * kept, to tell new scree by. */
      size_t n = (size_t) work.width * (size_t) work.height;
      float *loose = b + n, *orig = b + 2 * n;
      for (int j = 0; j < work.height; j++)
        {
          const float *src = tg__grid_row (mk, &work, j);
          float *dst = loose + (size_t) j * work.width;
          for (int i = 0; i < work.width; i++)
            dst[i] = src[i] > 0.0f ? (src[i] < 1.0f ? src[i] : 1.0f) : 0.0f;
        }
      memcpy (orig, a, sizeof (float) * n);
      mask.loose = loose;
      mask.orig = orig;
      orig_rw = orig;
    }

  open[0] = work.col0 > 0;
  open[1] = work.row0 > 0;
  open[2] = work.col0 + work.width < r->full_w;
  open[3] = work.row0 + work.height < r->full_h;
  if (p->mode == MODE_CONVERGE && !open[0] && !open[1] && !open[2] && !open[3])
    {
      if (mk && p->weathering_m > 0.0)
        {
          if ((rc = rockfall_world (c, a, orig_rw, mask.loose, b, work.width, work.height, r->cell,
                                    hm, (float) (p->weathering_m / hm),
                                    tan (p->talus_deg * M_PI / 180.0)))
              < 0)
            {
              free (base);
              return rc == TG_ENOMEM ? tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY) : rc;
            }
          mask.fallen = true;
        }
      rc = converge_world (c, p, r->cell, hm, mk ? &mask : NULL, &a, &b, work.width, work.height,
                         passes);
    }
  else
    {
      ThermalCoef k = thermal_coef (p, r->cell, hm);
      rc = run_passes (c, &k, mk ? &mask : NULL, &a, &b, work.width, work.height, open, passes);
    }
  if (rc < 0)
    {
      free (base);
      return rc;
    }

  fin.in = in;
  fin.work = &work;
  fin.eroded = a;
  fin.bw = work.width;
  fin.bh = work.height;
  fin.ox = r->col0 - work.col0;
  fin.oy = r->row0 - work.row0;
  fin.height = tg_eval_new_output (c, 0, 1);
  fin.deposit = tg_eval_new_output (c, 1, 1);
  fin.deposit_scale = hm / p->deposit_full_m;
  if (!fin.height || !fin.deposit)
    rc = tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  else
    rc = tg_eval_parallel (c, r->height, tg__grain_rows (r->width), finish_rows, &fin);
  free (base);
  return rc;
}

/* Two maps over the input's window cut at the world's edge (a pass reads
 * one and writes the other), and with a mask linked its clamped copy and
 * the input kept; converge mode's pyramid adds a copy of the input and
 * three maps per coarser level (under one map in all), and with a mask a
 * mask per coarser level (under a third of one), and with rockfall its
 * maps, then the ground under the fallen rock per coarser level.  And
 * a block's scratch (block_tiles: the levels' rings and pair rows, a row
 * as wide as the window; 2.3 MB at 2049 samples, 4.7 MB at 4097), counted
 * once: the query does not know the thread count, and each thread takes
 * one. */
static void
thermal_memory (TgMemQuery *q)
{
  const ThermalParams *p = q->params;
  TgRegion work = tg_region_clip (q->input);
  uint64_t map = tg_region_samples (&work) * sizeof (float);
  int passes = thermal_passes (p, q->region->cell);
  int kmax = passes < THERMAL_BLOCK_DEFAULT ? passes : THERMAL_BLOCK_DEFAULT;
  bool mask = q->linked & 2; /* input 1 */

  q->work += (p->mode == MODE_CONVERGE ? 4 : 2) * map
             + (mask ? 2 * map + (p->mode == MODE_CONVERGE ? map / 3 : 0) : 0);
  if (mask && p->mode == MODE_CONVERGE && p->weathering_m > 0.0)
    {
      /* Rockfall's maps (a float and an int a cell; on coarser cells five
       * more maps of them, and the passes' scratch), freed before the
       * passes' coarse levels take the ground under the fallen rock. */
      int f = rockfall_factor (q->region->cell);
      uint64_t rock = f == 1 ? 2 * map : 7 * map / ((uint64_t) f * f);
      q->work += rock > map / 3 ? rock : map / 3;
    }
  if (kmax > 0)
    q->work += sizeof (float) * block_pitch (work.width)
               * block_scratch_rows (kmax, THERMAL_ROWS_DEFAULT, ISA_AVX512);
}

static const TgNodeDesc thermal_desc = {
  .type = "erosion.thermal",
  .category = TG_CATEGORY_EROSION,
  .label = N_("Thermal erosion"),
  .help = N_("Slopes steeper than the talus angle crumble: material slides to lower "
             "neighbours and settles as scree. Conserves the terrain's volume"),
  TG_INPUTS (thermal_inputs),
  TG_OUTPUTS (thermal_outputs),
  TG_PARAMS (ThermalParams, thermal_params),
  .locality = TG_LOCALITY_APRON,
  .apron = thermal_apron,
  .check = thermal_check,
  .flags = TG_NODE_APRON_IN_WORLD,
  .eval = thermal_eval,
  .memory = thermal_memory,
  .version = 3,
};
TG_NODE_REGISTER (thermal_desc);
