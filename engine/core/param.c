/* Parameter values: defaults, checks, parsing and copying into a node's
 * parameter struct. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tgraph/io.h"
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

static int
vec_len (TgParamType t)
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
      for (int k = 0; k < vec_len (a->type); k++)
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

/* Formats a number the way people write it in ranges: 16, 0.5, 1e+06. */
static const char *
num (char *buf, size_t n, double v)
{
  snprintf (buf, n, "%.10g", v);
  return buf;
}

/* err->path = "BASE[I].FIELD" (kept short if it must be). */
static void
item_path (TgError *err, const char *base, int i, const char *field)
{
  char buf[2 * TG_ERROR_PATH_MAX + 16];

  if (err == NULL)
    return;
  snprintf (buf, sizeof buf, "%s[%d].%s", base, i, field);
  buf[TG_ERROR_PATH_MAX - 1] = '\0';
  memcpy (err->path, buf, TG_ERROR_PATH_MAX);
}

static int
check_choices (const TgParamDesc *d, const TgParamValue *v, char *path, TgError *err)
{
  char list[256] = "";
  size_t used = 0;

  if (tg_param_enum_index (d, v->s) >= 0)
    return 0;
  for (int i = 0; d->choices && d->choices[i]; i++)
    {
      int w = snprintf (list + used, sizeof list - used, "%s%s", i ? ", " : "", d->choices[i]);
      if (w < 0 || (size_t) w >= sizeof list - used)
        break;
      used += (size_t) w;
    }
  return tg_error_set (err, TG_ERANGE, path, "expected one of %s; got \"%s\"", list,
                       v->s ? v->s : "");
}

int
tg_param_value_check (const TgParamDesc *d, const TgParamValue *v, TgError *err)
{
  char path[TG_ERROR_PATH_MAX];
  char a[32], b[32], c[32];

  snprintf (path, sizeof path, "params.%s", d->name);
  if (v->type != d->type)
    return tg_error_set (err, TG_ETYPE, path, "expected a %s value", tg_param_type_name (d->type));
  switch (d->type)
    {
    case TG_PARAM_FLOAT:
      if (!isfinite (v->f) || v->f < d->min || v->f > d->max)
        return tg_error_set (err, TG_ERANGE, path, "expected a number in %s..%s, got %s",
                             num (a, sizeof a, d->min), num (b, sizeof b, d->max),
                             num (c, sizeof c, v->f));
      return 0;
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
      if (v->i < d->min || v->i > d->max)
        return tg_error_set (err, TG_ERANGE, path, "expected an integer in %s..%s, got %d",
                             num (a, sizeof a, d->min), num (b, sizeof b, d->max), v->i);
      return 0;
    case TG_PARAM_BOOL:
      if (v->i != 0 && v->i != 1)
        return tg_error_set (err, TG_ERANGE, path, "expected true or false");
      return 0;
    case TG_PARAM_ENUM:
      return check_choices (d, v, path, err);
    case TG_PARAM_STRING:
      if (v->s == NULL && (d->flags & TG_PARAM_REQUIRED))
        return tg_error_set (err, TG_EMISSING, path, "required parameter is missing");
      return 0;
    case TG_PARAM_INPUT_PATH:
      if (v->s == NULL || v->s[0] == '\0')
        return tg_error_set (err, TG_EMISSING, path, "a file path is required");
      return 0;
    case TG_PARAM_OUTPUT_PATH:
      if (v->s == NULL || v->s[0] == '\0')
        return tg_error_set (err, TG_EMISSING, path, "an output file name is required");
      if (!tg_path_is_safe_relative (v->s))
        return tg_error_set (err, TG_EPATH, path,
                             "export path \"%s\" must be relative to the output folder "
                             "(no absolute path, no \"..\")",
                             v->s);
      return 0;
    case TG_PARAM_VEC2:
    case TG_PARAM_VEC3:
    case TG_PARAM_COLOR:
      for (int k = 0; k < vec_len (d->type); k++)
        if (!isfinite (v->v[k]) || v->v[k] < d->min || v->v[k] > d->max)
          return tg_error_set (err, TG_ERANGE, path, "component %d: expected a number in %s..%s, got %s",
                               k, num (a, sizeof a, d->min), num (b, sizeof b, d->max),
                               num (c, sizeof c, v->v[k]));
      return 0;
    case TG_PARAM_CURVE:
      if (v->n_points < 2 || v->xy == NULL)
        return tg_error_set (err, TG_ERANGE, path, "a curve needs at least 2 points, got %d",
                             v->n_points);
      for (int k = 0; k < v->n_points; k++)
        {
          double x = v->xy[2 * k], y = v->xy[2 * k + 1];
          if (!isfinite (x) || !isfinite (y) || x < 0 || x > 1 || y < 0 || y > 1)
            return tg_error_set (err, TG_ERANGE, path, "point %d: [x, y] must lie in 0..1, got [%s, %s]",
                                 k, num (a, sizeof a, x), num (b, sizeof b, y));
          if (k > 0 && !(x > v->xy[2 * k - 2]))
            return tg_error_set (err, TG_ERANGE, path,
                                 "point %d: x must increase from point to point (%s after %s)", k,
                                 num (a, sizeof a, x), num (b, sizeof b, v->xy[2 * k - 2]));
        }
      return 0;
    case TG_PARAM_LIST:
      if (v->n_items < d->min || v->n_items > d->max)
        return tg_error_set (err, TG_ERANGE, path, "expected %s to %s items, got %d",
                             num (a, sizeof a, d->min), num (b, sizeof b, d->max), v->n_items);
      if (v->n_items > 0 && v->n_item_params != d->n_item_params)
        return tg_error_set (err, TG_ETYPE, path, "items have %d fields, expected %d",
                             v->n_item_params, d->n_item_params);
      for (int i = 0; i < v->n_items; i++)
        for (int k = 0; k < d->n_item_params; k++)
          {
            int rc = tg_param_value_check (&d->item_params[k], tg_param_list_field (v, i, k), err);
            if (rc < 0)
              {
                /* "params.FIELD" from the item check becomes "params.NAME[i].FIELD". */
                {
                  char base[TG_ERROR_PATH_MAX];
                  snprintf (base, sizeof base, "params.%s", d->name);
                  item_path (err, base, i, d->item_params[k].name);
                }
                return rc;
              }
          }
      return 0;
    case TG_PARAM_TYPE_COUNT:
      break;
    }
  return tg_error_set (err, TG_ETYPE, path, "unknown parameter type");
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

static bool
parse_double (const char *s, double *out)
{
  char *end;

  errno = 0;
  *out = strtod (s, &end);
  while (*end == ' ')
    end++;
  return end != s && *end == '\0' && errno == 0;
}

static int
hex_digit (int ch)
{
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

static bool
parse_color (const char *s, double rgba[4])
{
  size_t n = strlen (s);

  if (s[0] != '#' || (n != 7 && n != 9))
    return false;
  rgba[3] = 1.0;
  for (size_t k = 0; k < (n - 1) / 2; k++)
    {
      int hi = hex_digit (s[1 + 2 * k]), lo = hex_digit (s[2 + 2 * k]);
      if (hi < 0 || lo < 0)
        return false;
      rgba[k] = (double) (hi * 16 + lo) / 255.0;
    }
  return true;
}

/* Copies [B, E) trimmed of spaces into a new string. */
static char *
trimmed (const char *b, const char *e)
{
  char *out;

  while (b < e && (*b == ' ' || *b == '\t' || *b == '\n'))
    b++;
  while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n'))
    e--;
  out = malloc ((size_t) (e - b) + 1);
  if (out)
    {
      memcpy (out, b, (size_t) (e - b));
      out[e - b] = '\0';
    }
  return out;
}

/* "name=grass|color=#ff0000; name=rock": items split by ';', fields by
 * '|', each "field=value" in the field's own text form; fields left out
 * keep their defaults. */
static int
parse_list (const TgParamDesc *d, const char *text, TgParamValue *v, const char *path,
            TgError *err)
{
  const char *p = text;

  v->n_item_params = d->n_item_params;
  while (*p)
    {
      const char *item_end = p + strcspn (p, ";");
      char *item = trimmed (p, item_end), *q;
      int idx;
      if (item == NULL)
        goto nomem;
      if (item[0] == '\0')
        {
          free (item);
          p = *item_end ? item_end + 1 : item_end;
          continue;
        }
      idx = tg_param_list_append_default (v, d);
      if (idx < 0)
        {
          free (item);
          goto nomem;
        }
      for (q = item; *q;)
        {
          char *field_end = q + strcspn (q, "|"), *eq, *key, *val;
          int k, rc;
          TgParamValue fv;
          char save = *field_end;
          *field_end = '\0';
          eq = strchr (q, '=');
          if (eq == NULL)
            {
              rc = tg_error_set (err, TG_ETYPE, path, "item %d: expected field=value, got \"%s\"",
                                 idx, q);
              free (item);
              tg_param_value_clear (v);
              return rc;
            }
          key = trimmed (q, eq);
          val = trimmed (eq + 1, field_end);
          k = -1;
          for (int j = 0; key && j < d->n_item_params; j++)
            if (strcmp (d->item_params[j].name, key) == 0)
              k = j;
          if (k < 0 || val == NULL)
            {
              rc = key && val ? tg_error_set (err, TG_EUNKNOWN, path, "item %d: unknown field \"%s\"",
                                              idx, key)
                              : tg_error_set (err, TG_ENOMEM, path, NULL);
              free (key);
              free (val);
              free (item);
              tg_param_value_clear (v);
              return rc;
            }
          rc = tg_param_value_parse (&d->item_params[k], val, &fv, err);
          if (rc < 0)
            {
              item_path (err, path, idx, key);
              free (key);
              free (val);
              free (item);
              tg_param_value_clear (v);
              return rc;
            }
          tg_param_value_clear (tg_param_list_field_mut (v, idx, k));
          *tg_param_list_field_mut (v, idx, k) = fv;
          free (key);
          free (val);
          *field_end = save;
          q = save ? field_end + 1 : field_end;
        }
      free (item);
      p = *item_end ? item_end + 1 : item_end;
    }
  return 0;

nomem:
  tg_param_value_clear (v);
  return tg_error_set (err, TG_ENOMEM, path, NULL);
}

int
tg_param_value_parse (const TgParamDesc *d, const char *text, TgParamValue *out, TgError *err)
{
  char path[TG_ERROR_PATH_MAX];
  TgParamValue v;
  double x;
  int rc;

  snprintf (path, sizeof path, "params.%s", d->name);
  memset (&v, 0, sizeof v);
  v.type = d->type;
  switch (d->type)
    {
    case TG_PARAM_FLOAT:
      if (!parse_double (text, &v.f))
        return tg_error_set (err, TG_ETYPE, path, "expected a number, got \"%s\"", text);
      break;
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
      if (!parse_double (text, &x) || x != floor (x) || fabs (x) > 2147483647.0)
        return tg_error_set (err, TG_ETYPE, path, "expected an integer, got \"%s\"", text);
      v.i = (int) x;
      break;
    case TG_PARAM_BOOL:
      if (strcmp (text, "true") == 0 || strcmp (text, "1") == 0)
        v.i = 1;
      else if (strcmp (text, "false") == 0 || strcmp (text, "0") == 0)
        v.i = 0;
      else
        return tg_error_set (err, TG_ETYPE, path, "expected true or false, got \"%s\"", text);
      break;
    case TG_PARAM_ENUM:
    case TG_PARAM_STRING:
    case TG_PARAM_INPUT_PATH:
    case TG_PARAM_OUTPUT_PATH:
      if ((v.s = strdup (text)) == NULL)
        return tg_error_set (err, TG_ENOMEM, path, NULL);
      v.i = tg_param_enum_index (d, text);
      break;
    case TG_PARAM_VEC2:
    case TG_PARAM_VEC3:
      {
        int n = vec_len (d->type), k = 0;
        const char *p = text;
        for (; k < n; k++)
          {
            char part[64];
            size_t len = strcspn (p, ",");
            if (len >= sizeof part)
              break;
            memcpy (part, p, len);
            part[len] = '\0';
            if (!parse_double (part, &v.v[k]))
              break;
            p += len;
            if (k < n - 1)
              {
                if (*p != ',')
                  break;
                p++;
              }
          }
        if (k != n || *p != '\0')
          return tg_error_set (err, TG_ETYPE, path, "expected %d numbers separated by commas, got \"%s\"",
                               n, text);
      }
      break;
    case TG_PARAM_COLOR:
      if (!parse_color (text, v.v))
        return tg_error_set (err, TG_ETYPE, path, "expected a colour \"#rrggbb\", got \"%s\"", text);
      break;
    case TG_PARAM_CURVE:
      {
        const char *p = text;
        int cap = 0;
        while (*p)
          {
            double px, py;
            char *end;
            px = strtod (p, &end);
            if (end == p || *end != ':')
              goto bad_curve;
            p = end + 1;
            py = strtod (p, &end);
            if (end == p || (*end != ',' && *end != '\0'))
              goto bad_curve;
            p = *end ? end + 1 : end;
            if (v.n_points == cap)
              {
                double *grown;
                cap = cap ? cap * 2 : 8;
                grown = realloc (v.xy, sizeof (double) * 2 * (size_t) cap);
                if (grown == NULL)
                  {
                    tg_param_value_clear (&v);
                    return tg_error_set (err, TG_ENOMEM, path, NULL);
                  }
                v.xy = grown;
              }
            v.xy[2 * v.n_points] = px;
            v.xy[2 * v.n_points + 1] = py;
            v.n_points++;
          }
        break;
      bad_curve:
        tg_param_value_clear (&v);
        return tg_error_set (err, TG_ETYPE, path, "expected points \"x:y,x:y,...\", got \"%s\"", text);
      }
    case TG_PARAM_LIST:
      if ((rc = parse_list (d, text, &v, path, err)) < 0)
        return rc;
      break;
    case TG_PARAM_TYPE_COUNT:
      return tg_error_set (err, TG_ETYPE, path, "unknown parameter type");
    }
  rc = tg_param_value_check (d, &v, err);
  if (rc < 0)
    {
      tg_param_value_clear (&v);
      return rc;
    }
  *out = v;
  return 0;
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
      memcpy (field, v->v, sizeof (double) * (size_t) vec_len (d->type));
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
