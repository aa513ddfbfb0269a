/* Our JSON writer.  json-c's pretty printer puts every array element on its
 * own line and prints doubles its own way; files under version control
 * read better with [x, z] pairs and small objects kept on one line and
 * with numbers in their shortest round-trip form, and the same layout
 * must come out every time so that load -> save is a fixed point.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tgformats-private.h"

void
tg__json_put_string_n (TgBuf *b, const char *s, size_t n)
{
  size_t run = 0;

  tg__buf_putc (b, '"');
  for (size_t i = 0; i < n; i++)
    {
      char u[7];
      const char *esc = tg_string_escape ((unsigned char) s[i], u);

      if (esc)
        {
          tg__buf_append (b, s + i - run, run);
          run = 0;
          tg__buf_puts (b, esc);
        }
      else
        run++;
    }
  tg__buf_append (b, s + n - run, run);
  tg__buf_putc (b, '"');
}

void
tg__json_put_string (TgBuf *b, const char *s)
{
  tg__json_put_string_n (b, s, strlen (s));
}

void
tg__json_put_double (TgBuf *b, double v)
{
  char tmp[32];

  tg_format_double (v, tmp);
  tg__buf_puts (b, tmp);
}

static json_type
type_of (json_object *o)
{
  return o ? json_object_get_type (o) : json_type_null;
}

static void
put_int (TgBuf *b, json_object *o)
{
  int64_t v = json_object_get_int64 (o);

  /* json-c keeps integers above INT64_MAX as unsigned; get_int64 clamps. */
  if (v == INT64_MAX)
    tg__buf_printf (b, "%" PRIu64, json_object_get_uint64 (o));
  else
    tg__buf_printf (b, "%" PRId64, v);
}

static void
put_scalar (TgBuf *b, json_object *o)
{
  switch (type_of (o))
    {
    case json_type_null: tg__buf_puts (b, "null"); break;
    case json_type_boolean: tg__buf_puts (b, json_object_get_boolean (o) ? "true" : "false"); break;
    case json_type_double: tg__json_put_double (b, json_object_get_double (o)); break;
    case json_type_int: put_int (b, o); break;
    case json_type_string:
      tg__json_put_string_n (b, json_object_get_string (o),
                             (size_t) json_object_get_string_len (o));
      break;
    default: break;
    }
}

void
tg__json_emit_compact (TgBuf *b, json_object *o)
{
  switch (type_of (o))
    {
    case json_type_object:
      {
        bool first = true;
        if (json_object_object_length (o) == 0)
          {
            tg__buf_puts (b, "{}");
            break;
          }
        tg__buf_puts (b, "{ ");
        json_object_object_foreach (o, key, val)
          {
            if (!first)
              tg__buf_puts (b, ", ");
            first = false;
            tg__json_put_string (b, key);
            tg__buf_puts (b, ": ");
            tg__json_emit_compact (b, val);
          }
        tg__buf_puts (b, " }");
        break;
      }
    case json_type_array:
      {
        size_t n = json_object_array_length (o);
        tg__buf_putc (b, '[');
        for (size_t i = 0; i < n; i++)
          {
            if (i)
              tg__buf_puts (b, ", ");
            tg__json_emit_compact (b, json_object_array_get_idx (o, i));
          }
        tg__buf_putc (b, ']');
        break;
      }
    default:
      put_scalar (b, o);
      break;
    }
}

/* Container depth: 0 for a scalar, 1 for a container of scalars. */
static int
nesting (json_object *o)
{
  int deepest = 0;

  switch (type_of (o))
    {
    case json_type_object:
      {
        json_object_object_foreach (o, key, val)
          {
            int d = nesting (val);
            (void) key;
            if (d > deepest)
              deepest = d;
          }
        return deepest + 1;
      }
    case json_type_array:
      {
        size_t n = json_object_array_length (o);
        for (size_t i = 0; i < n; i++)
          {
            int d = nesting (json_object_array_get_idx (o, i));
            if (d > deepest)
              deepest = d;
          }
        return deepest + 1;
      }
    default:
      return 0;
    }
}

static int
current_column (const TgBuf *b)
{
  size_t i = b->len;

  while (i > 0 && b->data[i - 1] != '\n')
    i--;
  return (int) (b->len - i);
}

void
tg__json_emit (TgBuf *b, json_object *o, int indent)
{
  json_type t = type_of (o);
  bool is_object = t == json_type_object;
  int depth;

  if (t != json_type_object && t != json_type_array)
    {
      put_scalar (b, o);
      return;
    }
  if ((is_object ? (size_t) json_object_object_length (o) : json_object_array_length (o)) == 0)
    {
      tg__buf_puts (b, is_object ? "{}" : "[]");
      return;
    }

  /* One line for [x, z], [[x, y], ...] and { "x": 40, "y": 80 }. */
  depth = nesting (o);
  if (depth <= (is_object ? 1 : 2))
    {
      TgBuf tmp;
      tg__buf_init (&tmp);
      tg__json_emit_compact (&tmp, o);
      if (!tmp.oom && current_column (b) + (int) tmp.len <= TG__JSON_WIDTH)
        {
          tg__buf_append (b, tmp.data, tmp.len);
          tg__buf_clear (&tmp);
          return;
        }
      if (tmp.oom)
        b->oom = true;
      tg__buf_clear (&tmp);
    }

  if (is_object)
    {
      bool first = true;
      tg__buf_puts (b, "{\n");
      json_object_object_foreach (o, key, val)
        {
          if (!first)
            tg__buf_puts (b, ",\n");
          first = false;
          tg__buf_indent (b, indent + 2);
          tg__json_put_string (b, key);
          tg__buf_puts (b, ": ");
          tg__json_emit (b, val, indent + 2);
        }
      tg__buf_putc (b, '\n');
      tg__buf_indent (b, indent);
      tg__buf_putc (b, '}');
    }
  else
    {
      size_t n = json_object_array_length (o);
      tg__buf_puts (b, "[\n");
      for (size_t i = 0; i < n; i++)
        {
          if (i)
            tg__buf_puts (b, ",\n");
          tg__buf_indent (b, indent + 2);
          tg__json_emit (b, json_object_array_get_idx (o, i), indent + 2);
        }
      tg__buf_putc (b, '\n');
      tg__buf_indent (b, indent);
      tg__buf_putc (b, ']');
    }
}

char *
tg__json_to_text (json_object *o)
{
  TgBuf b;

  tg__buf_init (&b);
  tg__json_emit_compact (&b, o);
  return tg__buf_steal (&b);
}

json_object *
tg__json_parse (const char *text, bool *ok)
{
  json_tokener *tok;
  json_object *o;
  size_t len = strlen (text);
  size_t end;

  *ok = false;
  tok = json_tokener_new_ex (128);
  if (!tok)
    return NULL;
  json_tokener_set_flags (tok, JSON_TOKENER_STRICT);
  /* With the terminating NUL, so that a bare number or literal ends. */
  o = json_tokener_parse_ex (tok, text, (int) len + 1);
  if (json_tokener_get_error (tok) != json_tokener_success)
    {
      json_object_put (o);
      json_tokener_free (tok);
      return NULL;
    }
  end = json_tokener_get_parse_end (tok);
  json_tokener_free (tok);
  while (end < len && strchr (" \t\r\n", text[end]))
    end++;
  if (end != len)
    {
      json_object_put (o);
      return NULL;
    }
  *ok = true;
  return o;
}

/* --- parameters ---------------------------------------------------------------- */

static json_object *
number_array (const double *v, int n)
{
  json_object *a = json_object_new_array_ext (n);

  if (!a)
    return NULL;
  for (int i = 0; i < n; i++)
    {
      json_object *x = json_object_new_double (v[i]);
      if (!x || json_object_array_add (a, x) != 0)
        {
          json_object_put (x);
          json_object_put (a);
          return NULL;
        }
    }
  return a;
}

json_object *
tg__param_to_json (const TgParamDesc *d, const TgParamValue *v, bool *oom)
{
  json_object *o = NULL;

  *oom = false;
  switch (d->type)
    {
    case TG_PARAM_FLOAT:
      o = json_object_new_double (v->f);
      break;
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
      o = json_object_new_int64 (v->i);
      break;
    case TG_PARAM_BOOL:
      o = json_object_new_boolean (v->i != 0);
      break;
    case TG_PARAM_ENUM:
      {
        const char *name = v->s;
        int n = 0;
        while (d->choices && d->choices[n])
          n++;
        /* The index is what the engine reads; the name is a convenience. */
        if (v->i >= 0 && v->i < n)
          name = d->choices[v->i];
        if (!name)
          return NULL;
        o = json_object_new_string (name);
        break;
      }
    case TG_PARAM_STRING:
    case TG_PARAM_INPUT_PATH:
    case TG_PARAM_OUTPUT_PATH:
      if (!v->s)
        return NULL;
      o = json_object_new_string (v->s);
      break;
    case TG_PARAM_VEC2:
      o = number_array (v->v, 2);
      break;
    case TG_PARAM_VEC3:
      o = number_array (v->v, 3);
      break;
    case TG_PARAM_COLOR:
      {
        char hex[10];
        o = json_object_new_string (tg_color_format (v->v, hex));
        break;
      }
    case TG_PARAM_CURVE:
      o = json_object_new_array_ext (v->n_points > 0 ? v->n_points : 1);
      for (int i = 0; o && i < v->n_points; i++)
        {
          json_object *pt = number_array (v->xy + 2 * i, 2);
          if (!pt || json_object_array_add (o, pt) != 0)
            {
              json_object_put (pt);
              json_object_put (o);
              o = NULL;
            }
        }
      break;
    case TG_PARAM_LIST:
      o = json_object_new_array_ext (v->n_items > 0 ? v->n_items : 1);
      for (int i = 0; o && i < v->n_items; i++)
        {
          json_object *item = json_object_new_object ();
          for (int k = 0; item && k < d->n_item_params; k++)
            {
              bool field_oom = false;
              json_object *f = tg__param_to_json (&d->item_params[k], tg_param_list_field (v, i, k),
                                                  &field_oom);
              if (field_oom || (f && json_object_object_add (item, d->item_params[k].name, f) != 0))
                {
                  json_object_put (f);
                  json_object_put (item);
                  item = NULL;
                }
            }
          if (!item || json_object_array_add (o, item) != 0)
            {
              json_object_put (item);
              json_object_put (o);
              o = NULL;
            }
        }
      break;
    default:
      return NULL;
    }
  if (!o)
    *oom = true;
  return o;
}

bool
tg__json_add (json_object *obj, const char *key, json_object *val)
{
  if (!val)
    return false;
  if (json_object_object_add (obj, key, val) != 0)
    {
      json_object_put (val);
      return false;
    }
  return true;
}

json_object *
tg__json_numbers (const double *v, int n)
{
  json_object *arr = json_object_new_array_ext (n > 0 ? n : 1);

  for (int i = 0; arr && i < n; i++)
    if (json_object_array_add (arr, json_object_new_double (v[i])) != 0)
      {
        json_object_put (arr);
        return NULL;
      }
  return arr;
}
