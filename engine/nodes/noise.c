/* noise.fbm: fractal noise heightfields (Perlin, simplex, value or Worley
 * basis; fBm, ridged or billow octaves; optional domain warp).
 *
 * Everything is in world units: octave 0 has a lattice cell of scale_m
 * metres, so a 257-sample preview and a 4097-sample build show the same
 * terrain.  The value at a sample depends only on its world position and
 * the parameters, never on the region, so any tile equals the same window
 * of the whole map; normalisation uses the theoretical range, not the
 * min/max of the map.  The maths lives in noise_ref.c (the per-sample
 * reference) and noise_kernel.c (the row kernel, bit-identical to it).
 *
 * Output, with A = sum of the octave amplitudes persistence^i and n_i each
 * octave's noise scaled to [-1, 1] by its basis's known range:
 *   fbm     0.5 + 0.5 * sum (p^i n_i) / A
 *   billow  sum (p^i |n_i|) / A
 *   ridged  sum (p^i s_i) / A,  s_i = (1 - |n_i|)^2 * w_i,
 *           w_0 = 1, w_{i+1} = min (1, 2 s_i)
 * each in [0, 1] by construction; the final clamp only guards rounding.
 */
#include <string.h>

#include <tgraph/tgraph.h>

#include "noise_fbm.h"

/* Counter-based streams: every random choice is a hash of (seed, stream,
 * octave, field), so no state is shared between samples or threads. */
enum
{
  STREAM_OCTAVE = 1,
  STREAM_WARP_X = 2,
  STREAM_WARP_Z = 3,
};

static void
plan_octave (TgFbmOctave *o, uint32_t seed, int stream, int index, double freq, double amp)
{
  o->seed = tg_hash3 (seed, stream, index, 0);
  /* Offsets of up to 65536 cells decorrelate the octaves, and keep
   * lattice points (where gradient noise is 0) from lining up. */
  o->off_x = (double) tg_hash3 (seed, stream, index, 1) * (1.0 / 65536.0);
  o->off_z = (double) tg_hash3 (seed, stream, index, 2) * (1.0 / 65536.0);
  o->freq = freq;
  o->amp = (float) amp;
}

void
tg__fbm_plan (TgFbm *f, const TgFbmParams *p, uint32_t seed)
{
  int n = p->octaves < 1 ? 1 : p->octaves;
  double freq = 1.0 / p->scale_m, amp = 1.0, sum = 0.0;
  int i;

  memset (f, 0, sizeof *f);
  f->basis = p->basis;
  f->worley_return = p->worley_return;
  f->mode = p->mode;
  f->offset_x = p->offset_m[0];
  f->offset_z = p->offset_m[1];

  if (n > TG__FBM_MAX_OCTAVES)
    n = TG__FBM_MAX_OCTAVES;
  /* Products, not pow(): the same doubles on every libm. */
  for (i = 0; i < n; i++)
    {
      /* An octave below 2^-24 of the first can no longer change a float. */
      if (i > 0 && amp < 1.0 / 16777216.0)
        break;
      plan_octave (&f->oct[i], seed, STREAM_OCTAVE, i, freq, amp);
      sum += (double) f->oct[i].amp;
      freq *= p->lacunarity;
      amp *= p->persistence;
    }
  f->n_octaves = i;
  tg__fbm_out_map (p->mode, sum, &f->out_scale, &f->out_bias);

  /* The warp is a 3-octave Perlin fBm per axis, in [-1, 1], times warp_m. */
  f->warp = p->warp_m > 0.0;
  f->warp_m = p->warp_m;
  freq = 1.0 / p->warp_scale_m;
  amp = 1.0;
  sum = 0.0;
  for (i = 0; i < TG__FBM_WARP_OCTAVES; i++)
    {
      plan_octave (&f->warp_oct[0][i], seed, STREAM_WARP_X, i, freq, amp);
      plan_octave (&f->warp_oct[1][i], seed, STREAM_WARP_Z, i, freq, amp);
      sum += amp;
      freq *= 2.0;
      amp *= 0.5;
    }
  f->warp_norm = (float) (1.0 / sum);
  f->isa = tg__fbm_best_isa ();
}

/* --- the node ------------------------------------------------------------ */

static const char *const basis_choices[] = { "perlin", "simplex", "value", "worley", NULL };
static const char *const worley_choices[] = { "f1", "f2", "f2_minus_f1", NULL };
static const char *const mode_choices[] = { "fbm", "ridged", "billow", NULL };

static const TgParamDesc fbm_params[] = {
  TG_PARAM_ENUM (TgFbmParams, basis, .label = N_("Basis"), .def_s = "perlin",
                 .choices = basis_choices,
                 .help = N_("The noise summed in each octave: perlin (improved "
                            "gradient noise), simplex (smoother, fewer grid "
                            "artefacts), value (softer blobs) or worley (cells)")),
  TG_PARAM_ENUM (TgFbmParams, worley_return, .label = N_("Cell value"), .def_s = "f1",
                 .choices = worley_choices,
                 .help = N_("Worley only: distance to the nearest feature "
                            "point (f1), to the second nearest (f2), or their "
                            "difference (f2_minus_f1, ridges between cells)")),
  TG_PARAM_ENUM (TgFbmParams, mode, .label = N_("Mode"), .def_s = "fbm", .choices = mode_choices,
                 .help = N_("How octaves combine: fbm (rolling hills), ridged (sharp crests) or "
                            "billow (rounded, puffy shapes)")),
  TG_PARAM_FLOAT (TgFbmParams, scale_m, .label = N_("Scale"), .def = 1000.0, .min = 1.0, .max = 1e6,
                  .soft_min = 10.0, .soft_max = 20000.0, .unit = "m",
                  .help = N_("Feature size of the first octave: the lattice cell, in metres")),
  TG_PARAM_INT (TgFbmParams, octaves, .label = N_("Octaves"), .def = 6, .min = 1,
                .max = TG__FBM_MAX_OCTAVES, .help = N_("Number of layers of detail summed")),
  TG_PARAM_FLOAT (TgFbmParams, persistence, .label = N_("Persistence"), .def = 0.5, .min = 0.0,
                  .max = 1.0, .help = N_("Amplitude of each octave relative to the previous one")),
  TG_PARAM_FLOAT (TgFbmParams, lacunarity, .label = N_("Lacunarity"), .def = 2.0, .min = 1.0,
                  .max = 4.0, .help = N_("Frequency of each octave relative to the previous one")),
  TG_PARAM_SEED (TgFbmParams, seed, .label = N_("Seed"),
                 .help = N_("Picks another terrain; combined with the world seed")),
  TG_PARAM_VEC2 (TgFbmParams, offset_m, .label = N_("Offset"), .def_v = { 0.0, 0.0 }, .unit = "m",
                 .help = N_("Shifts the sampling window across the noise, in metres (x, z)")),
  TG_PARAM_FLOAT (TgFbmParams, warp_m, .label = N_("Warp"), .def = 0.0, .min = 0.0, .max = 1e5,
                  .soft_min = 0.0, .soft_max = 5000.0, .unit = "m",
                  .help = N_("Domain warp: the farthest a sample is displaced along each axis, in "
                             "metres; 0 turns the warp off")),
  TG_PARAM_FLOAT (TgFbmParams, warp_scale_m, .label = N_("Warp scale"), .def = 2000.0, .min = 1.0,
                  .max = 1e6, .soft_min = 10.0, .soft_max = 20000.0, .unit = "m",
                  .help = N_("Feature size of the warp noise, in metres")),
};

static const TgPortDesc fbm_outputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("Noise heights in 0..1") },
};

typedef struct
{
  const TgFbm *f;
  const TgRegion *r;
  TgValue *out;
} FbmJob;

static void
fbm_rows (void *user, int begin, int end)
{
  const FbmJob *job = user;

  for (int j = begin; j < end; j++)
    tg__fbm_row (job->f, job->r, j, 0, job->r->width, tg_value_row (job->out, j));
}

/* Rows per chunk, so that a chunk takes about a millisecond (cancel
 * answers quickly) and every thread gets several chunks. */
static int
fbm_grain (const TgFbm *f, const TgRegion *r, int threads)
{
  /* Rough nanoseconds per sample per octave of the kernel. */
  double per_octave = f->basis == TG__FBM_WORLEY ? 6.0 : 2.5;
  double ns = (double) r->width * per_octave * (f->n_octaves + (f->warp ? 6 : 0));
  int grain = (int) (1e6 / (ns > 1.0 ? ns : 1.0));
  int fair = r->height / (4 * (threads > 0 ? threads : 1));

  if (grain > fair)
    grain = fair;
  return grain < 1 ? 1 : grain;
}

static int
noise_fbm_eval (TgEvalCtx *ctx)
{
  const TgFbmParams *p = tg_eval_params (ctx);
  const TgRegion *r = tg_eval_region (ctx);
  TgValue *out;
  FbmJob job;
  TgFbm f;

  tg__fbm_plan (&f, p, tg_eval_seed (ctx, p->seed));
  out = tg_eval_new_output (ctx, 0, 1);
  if (out == NULL)
    return tg_eval_fail (ctx, TG_ENOMEM, "cannot allocate a %dx%d height map", r->width,
                         r->height);
  job.f = &f;
  job.r = r;
  job.out = out;
  return tg_eval_parallel (ctx, r->height, fbm_grain (&f, r, tg_eval_threads (ctx)), fbm_rows,
                           &job);
}

static int
noise_fbm_warn (const void *params, double cell_m, TgError *warn)
{
  const TgFbmParams *p = params;

  return tg_warn_below_cells (warn, "scale_m", "Scale", p->scale_m, cell_m, 2)
         || (p->warp_m > 0.0
             && tg_warn_below_cells (warn, "warp_scale_m", "Warp scale", p->warp_scale_m,
                                     cell_m, 2));
}

static const TgNodeDesc noise_fbm_desc = {
  .type = "noise.fbm",
  .category = TG_CATEGORY_GENERATORS,
  .label = N_("FBM Noise"),
  .help = N_("Fractal noise: octaves of Perlin, simplex, value or Worley noise summed into "
             "a heightfield in 0..1, with fbm, ridged or billow shaping and optional domain "
             "warp.  Sizes are in metres, so the terrain is the same at any resolution."),
  TG_OUTPUTS (fbm_outputs),
  TG_PARAMS (TgFbmParams, fbm_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = noise_fbm_eval,
  .warn = noise_fbm_warn,
  .version = 1,
};

TG_NODE_REGISTER (noise_fbm_desc);
