/* Parameter values: defaults, copies, list items and copying into a node's
 * parameter struct.  Checking, reading and writing values as text is the
 * codec's (param_codec.c). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tgraph/param.h"

static const char *const param_type_names[TG_PARAM_TYPE_COUNT] = {
  "float", "int", "bool", "enum", "seed", "string", "input_path", "output_path",
  "vec2", "vec3", "color", "curve", "list",
};

const char *
tg_param_type_name (TgParamType t)
{
  return (unsigned) t < TG_PARAM_TYPE_COUNT ? param_type_names[t] : "?";
}

int
tg__param_vec_len (TgParamType t)
{
  switch (t)
    {
    case TG_PARAM_VEC2:
      return 2;
    case TG_PARAM_VEC3:
      return 3;
    case TG_PARAM_COLOR:
      return 4;
    default:
      return 0;
    }
}

int
tg_param_enum_index (const TgParamDesc *d, const char *choice)
{
  if (d->choices == NULL || choice == NULL)
    return -1;
  for (int i = 0; d->choices[i]; i++)
    if (strcmp (d->choices[i], choice) == 0)
      return i;
  return -1;
}

void
tg_param_soft_range (const TgParamDesc *d, double *lo, double *hi)
{
  bool given = d->soft_min != 0 || d->soft_max != 0;

  *lo = given ? d->soft_min : d->min;
  *hi = given ? d->soft_max : d->max;
}

void
tg_param_value_init_default (TgParamValue *v, const TgParamDesc *d)
{
  memset (v, 0, sizeof *v);
  v->type = d->type;
  switch (d->type)
    {
    case TG_PARAM_FLOAT:
      v->f = d->def;
      break;
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
    case TG_PARAM_BOOL:
      v->i = (int) d->def;
      break;
    case TG_PARAM_ENUM:
      {
        const char *def = d->def_s ? d->def_s : (d->choices ? d->choices[0] : NULL);
        v->s = def ? strdup (def) : NULL;
        v->i = tg_param_enum_index (d, def);
      }
      break;
    case TG_PARAM_STRING:
    case TG_PARAM_INPUT_PATH:
    case TG_PARAM_OUTPUT_PATH:
      v->s = d->def_s ? strdup (d->def_s) : NULL;
      break;
    case TG_PARAM_VEC2:
    case TG_PARAM_VEC3:
    case TG_PARAM_COLOR:
      memcpy (v->v, d->def_v, sizeof v->v);
      break;
    case TG_PARAM_LIST:
      v->n_item_params = d->n_item_params;
      if (d->def_s && d->def_s[0])
        {
          TgParamValue parsed;
          /* Defaults are written by us and parse; a failure leaves the list empty. */
          if (tg_param_value_parse (d, d->def_s, &parsed, NULL) == 0)
            *v = parsed;
        }
      break;
    case TG_PARAM_CURVE:
      if (d->def_curve_n > 0)
        {
          v->xy = malloc (sizeof (double) * 2 * (size_t) d->def_curve_n);
          if (v->xy)
            {
              memcpy (v->xy, d->def_curve, sizeof (double) * 2 * (size_t) d->def_curve_n);
              v->n_points = d->def_curve_n;
            }
        }
      break;
    case TG_PARAM_TYPE_COUNT:
      break;
    }
}

int
tg_param_value_copy (TgParamValue *dst, const TgParamValue *src)
{
  *dst = *src;
  dst->s = NULL;
  dst->xy = NULL;
  dst->items = NULL;
  dst->n_items = 0;
  if (src->items && src->n_items > 0)
    {
      int n = src->n_items * src->n_item_params;
      dst->items = calloc ((size_t) n, sizeof (TgParamValue));
      if (dst->items == NULL)
        return TG_ENOMEM;
      dst->n_items = src->n_items;
      for (int i = 0; i < n; i++)
        if (tg_param_value_copy (&dst->items[i], &src->items[i]) < 0)
          {
            tg_param_value_clear (dst);
            return TG_ENOMEM;
          }
    }
  if (src->s && (dst->s = strdup (src->s)) == NULL)
    return TG_ENOMEM;
  if (src->xy && src->n_points > 0)
    {
      dst->xy = malloc (sizeof (double) * 2 * (size_t) src->n_points);
      if (dst->xy == NULL)
        {
          free (dst->s);
          dst->s = NULL;
          return TG_ENOMEM;
        }
      memcpy (dst->xy, src->xy, sizeof (double) * 2 * (size_t) src->n_points);
    }
  return 0;
}

void
tg_param_value_clear (TgParamValue *v)
{
  if (v->items)
    {
      for (int i = 0; i < v->n_items * v->n_item_params; i++)
        tg_param_value_clear (&v->items[i]);
      free (v->items);
    }
  free (v->s);
  free (v->xy);
  v->s = NULL;
  v->xy = NULL;
  v->items = NULL;
  v->n_points = 0;
  v->n_items = 0;
}

bool
tg_param_value_equal (const TgParamValue *a, const TgParamValue *b)
{
  if (a->type != b->type)
    return false;
  switch (a->type)
    {
    case TG_PARAM_FLOAT:
      return a->f == b->f;
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
    case TG_PARAM_BOOL:
      return a->i == b->i;
    case TG_PARAM_ENUM:
    case TG_PARAM_STRING:
    case TG_PARAM_INPUT_PATH:
    case TG_PARAM_OUTPUT_PATH:
      if (a->s == NULL || b->s == NULL)
        return a->s == b->s;
      return strcmp (a->s, b->s) == 0;
    case TG_PARAM_VEC2:
    case TG_PARAM_VEC3:
    case TG_PARAM_COLOR:
      for (int k = 0; k < tg__param_vec_len (a->type); k++)
        if (a->v[k] != b->v[k])
          return false;
      return true;
    case TG_PARAM_CURVE:
      return a->n_points == b->n_points
             && (a->n_points == 0
                 || memcmp (a->xy, b->xy, sizeof (double) * 2 * (size_t) a->n_points) == 0);
    case TG_PARAM_LIST:
      if (a->n_items != b->n_items || a->n_item_params != b->n_item_params)
        return false;
      for (int i = 0; i < a->n_items * a->n_item_params; i++)
        if (!tg_param_value_equal (&a->items[i], &b->items[i]))
          return false;
      return true;
    case TG_PARAM_TYPE_COUNT:
      break;
    }
  return false;
}

const TgParamValue *
tg_param_list_field (const TgParamValue *list, int item, int k)
{
  return &list->items[item * list->n_item_params + k];
}

TgParamValue *
tg_param_list_field_mut (TgParamValue *list, int item, int k)
{
  return &list->items[item * list->n_item_params + k];
}

int
tg_param_list_append_default (TgParamValue *list, const TgParamDesc *d)
{
  TgParamValue *grown;
  int n = d->n_item_params;

  grown = realloc (list->items, sizeof (TgParamValue) * (size_t) ((list->n_items + 1) * n));
  if (grown == NULL)
    return TG_ENOMEM;
  list->items = grown;
  list->n_item_params = n;
  for (int k = 0; k < n; k++)
    tg_param_value_init_default (&list->items[list->n_items * n + k], &d->item_params[k]);
  return list->n_items++;
}

void
tg_param_list_remove (TgParamValue *list, int item)
{
  int n = list->n_item_params;

  if (item < 0 || item >= list->n_items)
    return;
  for (int k = 0; k < n; k++)
    tg_param_value_clear (&list->items[item * n + k]);
  memmove (&list->items[item * n], &list->items[(item + 1) * n],
           sizeof (TgParamValue) * (size_t) ((list->n_items - item - 1) * n));
  list->n_items--;
}

int
tg_param_value_store (const TgParamDesc *d, const TgParamValue *v, void *params_struct)
{
  char *field = (char *) params_struct + d->offset;

  switch (d->type)
    {
    case TG_PARAM_FLOAT:
      memcpy (field, &v->f, sizeof (double));
      break;
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
    case TG_PARAM_ENUM:
      memcpy (field, &v->i, sizeof (int));
      break;
    case TG_PARAM_BOOL:
      {
        bool b = v->i != 0;
        memcpy (field, &b, sizeof b);
      }
      break;
    case TG_PARAM_STRING:
    case TG_PARAM_INPUT_PATH:
    case TG_PARAM_OUTPUT_PATH:
      {
        const char *s = v->s;
        memcpy (field, &s, sizeof s);
      }
      break;
    case TG_PARAM_VEC2:
    case TG_PARAM_VEC3:
    case TG_PARAM_COLOR:
      memcpy (field, v->v, sizeof (double) * (size_t) tg__param_vec_len (d->type));
      break;
    case TG_PARAM_CURVE:
      {
        TgCurve c = { v->n_points, v->xy };
        memcpy (field, &c, sizeof c);
      }
      break;
    case TG_PARAM_LIST:
      {
        TgList list = { 0, NULL };
        if (v->n_items > 0)
          {
            char *items = calloc ((size_t) v->n_items, d->item_size);
            if (items == NULL)
              {
                memcpy (field, &list, sizeof list);
                return TG_ENOMEM;
              }
            for (int i = 0; i < v->n_items; i++)
              for (int k = 0; k < d->n_item_params; k++)
                tg_param_value_store (&d->item_params[k], tg_param_list_field (v, i, k),
                                      items + (size_t) i * d->item_size);
            list.n = v->n_items;
            list.items = items;
          }
        memcpy (field, &list, sizeof list);
      }
      break;
    case TG_PARAM_TYPE_COUNT:
      break;
    }
  return 0;
}

void
tg_params_struct_clear (const TgParamDesc *params, int n, void *params_struct)
{
  for (int k = 0; k < n; k++)
    if (params[k].type == TG_PARAM_LIST)
      {
        TgList list;
        memcpy (&list, (char *) params_struct + params[k].offset, sizeof list);
        free ((void *) list.items);
        list.items = NULL;
        list.n = 0;
        memcpy ((char *) params_struct + params[k].offset, &list, sizeof list);
      }
}
