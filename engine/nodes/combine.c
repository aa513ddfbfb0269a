/* math.combine: blends two heights with one of the usual layer operations.
 *
 * The exact formula, per sample (single precision, no FMA):
 *
 *   o = op (a, b)       add a+b, subtract a-b, multiply a*b, min, max,
 *                       screen 1-(1-a)(1-b), difference |a-b|, lerp b
 *   t = amount * mask   (mask clamped to 0..1; mask = 1 when unlinked)
 *   r = t == 1 ? o : a + t * (o - a)
 *   r = clamp (r, 0, 1) when `clamp` is on
 *
 * So `amount` fades the effect of B in and out, the mask limits it to an
 * area, and lerp is the plain "a to b by mask" blend (by amount when no
 * mask is linked).  The clamp is on by default, as in Gaea: heights on a
 * wire mean 0..1 of the world's height range and an add should not push
 * the terrain through the ceiling; switch it off to keep out-of-range
 * intermediates for a later subtract or normalize.
 */
#include <math.h>

#include <tgraph/node.h>
#include <tgraph/param.h>

#include "grid_util.h"

enum
{
  OP_ADD,
  OP_SUBTRACT,
  OP_MULTIPLY,
  OP_MIN,
  OP_MAX,
  OP_SCREEN,
  OP_DIFFERENCE,
  OP_LERP,
};

static const char *const combine_ops[] = {
  "add", "subtract", "multiply", "min", "max", "screen", "difference", "lerp", NULL,
};

typedef struct
{
  int op;
  double amount;
  bool clamp;
} CombineParams;

static const TgParamDesc combine_params[] = {
  TG_PARAM_ENUM (CombineParams, op, .label = N_("Operation"), .def_s = "add",
                 .choices = combine_ops,
                 .help = N_("How B combines with A: add, subtract, multiply, min, max, screen "
                            "1-(1-a)(1-b), difference |a-b|, or lerp (a to b by the mask)")),
  TG_PARAM_FLOAT (CombineParams, amount, .label = N_("Amount"), .def = 1.0, .min = 0.0, .max = 1.0,
                  .help = N_("Strength of the effect: result = a + amount*mask*(op(a,b) - a)")),
  TG_PARAM_BOOL (CombineParams, clamp, .label = N_("Clamp"), .def = true,
                 .help = N_("Clamp the result to 0..1")),
};

static const TgPortDesc combine_inputs[] = {
  { .name = "a", .type = TG_TYPE_HEIGHT, .label = N_("A"), .help = N_("Base height") },
  { .name = "b", .type = TG_TYPE_HEIGHT, .label = N_("B"),
    .help = N_("Height combined onto A") },
  { .name = "mask", .type = TG_TYPE_MASK, .label = N_("Mask"), .optional = true,
    .help = N_("Where B takes effect (0..1); everywhere when unlinked") },
};

static const TgPortDesc combine_outputs[] = {
  { .name = "height", .type = TG_TYPE_HEIGHT, .label = N_("Height"),
    .help = N_("The combined height") },
};

typedef struct
{
  int op;
  float amount;
  bool clamp;
} CombineJob;

/* One row of op(a, b) into DST: a switch outside simple loops, so each
 * loop vectorises. */
static void
combine_op_row (int op, const float *a, const float *b, float *dst, int w)
{
  switch (op)
    {
    case OP_ADD:
      for (int i = 0; i < w; i++)
        dst[i] = a[i] + b[i];
      break;
    case OP_SUBTRACT:
      for (int i = 0; i < w; i++)
        dst[i] = a[i] - b[i];
      break;
    case OP_MULTIPLY:
      for (int i = 0; i < w; i++)
        dst[i] = a[i] * b[i];
      break;
    case OP_MIN:
      for (int i = 0; i < w; i++)
        dst[i] = b[i] < a[i] ? b[i] : a[i];
      break;
    case OP_MAX:
      for (int i = 0; i < w; i++)
        dst[i] = b[i] > a[i] ? b[i] : a[i];
      break;
    case OP_SCREEN:
      for (int i = 0; i < w; i++)
        dst[i] = 1.0f - (1.0f - a[i]) * (1.0f - b[i]);
      break;
    case OP_DIFFERENCE:
      for (int i = 0; i < w; i++)
        dst[i] = fabsf (a[i] - b[i]);
      break;
    case OP_LERP:
    default:
      for (int i = 0; i < w; i++)
        dst[i] = b[i];
      break;
    }
}

static void
combine_row (const void *user, const TgRegion *r, int j, const float *const *in, float *dst)
{
  const CombineJob *job = user;
  const float *a = in[0], *b = in[1], *m = in[2];
  int w = r->width;
  float amount = job->amount;

  (void) j;
  combine_op_row (job->op, a, b, dst, w);
  if (m)
    {
      for (int i = 0; i < w; i++)
        {
          float mi = m[i] < 0.0f ? 0.0f : (m[i] > 1.0f ? 1.0f : m[i]);
          float t = amount * mi;
          dst[i] = t == 1.0f ? dst[i] : a[i] + t * (dst[i] - a[i]);
        }
    }
  else if (amount != 1.0f)
    {
      for (int i = 0; i < w; i++)
        dst[i] = a[i] + amount * (dst[i] - a[i]);
    }
  if (job->clamp)
    for (int i = 0; i < w; i++)
      dst[i] = dst[i] < 0.0f ? 0.0f : (dst[i] > 1.0f ? 1.0f : dst[i]);
}

static int
combine_eval (TgEvalCtx *c)
{
  const CombineParams *p = tg_eval_params (c);
  CombineJob job = { .op = p->op, .amount = (float) p->amount, .clamp = p->clamp };

  return tg_eval_map_rows (c, 1, combine_row, &job);
}

static const TgNodeDesc combine_desc = {
  .type = "math.combine",
  .category = TG_CATEGORY_MATH,
  .label = N_("Combine"),
  .help = N_("Combines two heights (add, subtract, multiply, min, max, screen, difference, "
             "lerp), optionally through a mask"),
  TG_INPUTS (combine_inputs),
  TG_OUTPUTS (combine_outputs),
  TG_PARAMS (CombineParams, combine_params),
  .locality = TG_LOCALITY_LOCAL,
  .eval = combine_eval,
  .version = 1,
};
TG_NODE_REGISTER (combine_desc);
