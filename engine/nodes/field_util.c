/* The helpers every field node uses: a new TgField, the node's output
 * as a value, and an input held by a reference of its own.
 */
#include <stdlib.h>

#include <tgraph/tgraph.h>

#include "fields.h"

TgField *
tg__field_new (TgFieldEvalFn eval, void *data, void (*free_data) (void *))
{
  TgField *f = calloc (1, sizeof *f);

  if (f == NULL)
    {
      if (free_data)
        free_data (data);
      return NULL;
    }
  f->eval = eval;
  f->data = data;
  f->free_data = free_data;
  return f;
}

int
tg__field_output (TgEvalCtx *c, TgField *f)
{
  TgValue *v = tg_value_new_field (f);

  if (v == NULL)
    return tg_eval_fail (c, TG_ENOMEM, TG_MSG_OUT_OF_MEMORY);
  tg_eval_set_output (c, 0, v);
  return 0;
}

int
tg__field_input (TgEvalCtx *c, int index, const char *name, TgValue **ref)
{
  const TgValue *in = tg_eval_input (c, index);

  *ref = NULL;
  if (in == NULL || tg_value_field (in) == NULL)
    return tg_eval_fail (c, TG_EMISSING, TG_MSG_INPUT_NO_FIELD, name);
  /* Values are reference counted atomically; holding one is how a
   * composite field outlives the evaluation that made it. */
  *ref = tg_value_ref ((TgValue *) in);
  return 0;
}
