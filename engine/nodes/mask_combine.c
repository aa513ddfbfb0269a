/* math.mask_combine: fuzzy logic on two masks, for building texturing
 * rules out of selectors ("steep AND high", "rock OR scree", "grass
 * minus river").
 *
 * Inputs are clamped to 0..1 first (NaN = 0), so the result is a mask:
 *   and       min (a, b)      the standard fuzzy AND: a sample is as
 *                             selected as its weaker condition, and
 *                             and-ing a mask with itself changes nothing
 *   multiply  a * b           the softer product AND (edges fade twice)
 *   or        max (a, b)
 *   subtract  a * (1 - b)     a where b is not
 *   xor       |a - b|         one but not both
 */
#include <math.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

#include "grid_util.h"
#include "spatial_util.h"

enum
{
  OP_AND,
  OP_MULTIPLY,
  OP_OR,
  OP_SUBTRACT,
  OP_XOR,
};

static const char *const mask_ops[] = { "and", "multiply", "or", "subtract", "xor", NULL };

typedef struct
{
  int op;
} MaskCombineParams;

static const TgParamDesc mask_combine_params[] = {
  TG_PARAM_ENUM (MaskCombineParams, op, .label = N_("Operation"), .def_s = "and",
                 .choices = mask_ops,
                 .help = N_("and: min(a, b); multiply: a*b; or: "
                            "max(a, b); subtract: a*(1-b); xor: |a-b|")),
};

static const TgPortDesc mask_combine_inputs[] = {
  { .name = "a", .type = TG_TYPE_MASK, .label = N_("A"), .help = N_("First mask") },
  { .name = "b", .type = TG_TYPE_MASK, .label = N_("B"), .help = N_("Second mask") },
};

static const TgPortDesc mask_combine_outputs[] = {
  { .name = "mask", .type = TG_TYPE_MASK, .label = N_("Mask"),
    .help = N_("The combined mask, 0..1") },
};

static void
mask_row (const void *user, const TgRegion *r, int j, const float *const *in, float *dst)
{
  const MaskCombineParams *p = user;
  const float *a = in[0], *b = in[1];
  int w = r->width;

  (void) j;
  switch (p->op)
    {
    case OP_AND:
      for (int i = 0; i < w; i++)
        {
          float x = tg__mask01 (a[i]), y = tg__mask01 (b[i]);
          dst[i] = y < x ? y : x;
        }
      break;
    case OP_MULTIPLY:
      for (int i = 0; i < w; i++)
        dst[i] = tg__mask01 (a[i]) * tg__mask01 (b[i]);
      break;
    case OP_OR:
      for (int i = 0; i < w; i++)
        {
          float x = tg__mask01 (a[i]), y = tg__mask01 (b[i]);
          dst[i] = y > x ? y : x;
        }
      break;
    case OP_SUBTRACT:
      for (int i = 0; i < w; i++)
        dst[i] = tg__mask01 (a[i]) * (1.0f - tg__mask01 (b[i]));
      break;
    case OP_XOR:
    default:
      for (int i = 0; i < w; i++)
        dst[i] = fabsf (tg__mask01 (a[i]) - tg__mask01 (b[i]));
      break;
    }
}

static int
mask_combine_eval (TgEvalCtx *c)
{
  return tg_eval_map_rows (c, 1, mask_row, tg_eval_params (c));
}

static const TgNodeDesc mask_combine_desc = {
  .type = "math.mask_combine",
  .category = TG_CATEGORY_MATH,
  .label = N_("Combine masks"),
  .help = N_("Combines two masks: and, multiply, or, subtract, xor"),
  TG_INPUTS (mask_combine_inputs),
  TG_OUTPUTS (mask_combine_outputs),
  TG_PARAMS (MaskCombineParams, mask_combine_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = mask_combine_eval,
  .version = 1,
};
TG_NODE_REGISTER (mask_combine_desc);
