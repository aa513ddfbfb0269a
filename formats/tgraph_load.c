/* Loading .tgraph files (JSON, through json-c) into a TgGraph.
 *
 * Every problem is reported with the place it is at: a path such as
 * "nodes[3].params.octaves" and, found by the locator in json_locate.c,
 * the line and column of that value in the text.  The format version is
 * checked before anything else is read, so a newer file is refused whole;
 * an older one is upgraded step by step on the parsed tree first
 * (tgraph_migrate.c), and errors about a renamed parameter still point at
 * the key the text holds.  Errors about a node carry its id.  Keys
 * the loader does not know at the top level and on nodes, and each node's
 * "ui" block, are kept as opaque JSON text on the graph so that a save
 * writes them back.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tgformats-private.h"

/* The oldest format version a migration path exists from. */
#define TG__FORMAT_VERSION_OLDEST 1

typedef struct
{
  const char *text; /* for positions */
  size_t len;
  TgError *err;
  TgGraph *g;
  unsigned flags; /* TG_TGRAPH_LOAD_* */
  int version;    /* of the file as written */
  /* The node being loaded, so that errors about it name its id too. */
  int node_index;
  const char *node_id;
  TgRenameLog renames; /* what the upgrade renamed, to find old keys in the text */
} Loader;

/* Fills err->line/column with where err->path is in the text as written
 * (a renamed parameter under its old name), and names the node's id when
 * the path is about the node being loaded. */
static void
place (Loader *L)
{
  char text_path[TG_ERROR_PATH_MAX], prefix[32];
  size_t n;

  if (L->node_id && !L->err->node_id[0])
    {
      n = (size_t) snprintf (prefix, sizeof prefix, "nodes[%d]", L->node_index);
      if (strncmp (L->err->path, prefix, n) == 0
          && (L->err->path[n] == '\0' || L->err->path[n] == '.'))
        tg_error_set_node_id (L->err, L->node_id);
    }
  tg__rename_log_text_path (&L->renames, L->err->path, text_path, sizeof text_path);
  tg__error_locate (L->err, text_path, L->text, L->len);
}

static int
fail (Loader *L, int code, const char *path, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));

static int
fail (Loader *L, int code, const char *path, const char *fmt, ...)
{
  char msg[TG_ERROR_MESSAGE_MAX];
  va_list ap;

  if (!L->err)
    return code;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  tg_error_set (L->err, code, path, "%s", msg);
  place (L);
  return code;
}

/* FORMAT (one of the app's, with at most one %s: ARG) and, when there is
 * a HINT, " (did you mean "HINT"?)" after it, so the app translates both. */
static int
fail_hint (Loader *L, int code, const char *path, const char *format, const char *arg,
           const char *hint)
{
  char what[TG_ERROR_MESSAGE_MAX];

  snprintf (what, sizeof what, format, arg);
  return hint ? fail (L, code, path, TG_MSG_DID_YOU_MEAN, what, hint)
              : fail (L, code, path, "%s", what);
}

/* An engine call failed with err->path relative to PREFIX: complete the
 * path and find it in the text. */
static int
fail_engine (Loader *L, int code, const char *prefix)
{
  if (!L->err)
    return code;
  if (L->err->code == 0)
    L->err->code = code;
  if (prefix && *prefix)
    tg_error_prefix_path (L->err, prefix);
  place (L);
  return code;
}

/* snprintf for error paths; a path that does not fit is cut short, which
 * only makes the message less precise. */
static void
mkpath (char *out, size_t size, const char *fmt, ...) __attribute__ ((format (printf, 3, 4)));

static void
mkpath (char *out, size_t size, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (out, size, fmt, ap);
  va_end (ap);
}

static json_type
type_of (json_object *o)
{
  return o ? json_object_get_type (o) : json_type_null;
}

/* The number at PATH as the text writes it ("1e400", not inf), into BUF;
 * false when the text has no number there. */
static bool
number_as_written (Loader *L, const char *path, char *buf, size_t size)
{
  char text_path[TG_ERROR_PATH_MAX];
  size_t at, end;

  tg__rename_log_text_path (&L->renames, path, text_path, sizeof text_path);
  if (tg__json_locate (L->text, L->len, text_path, &at) < 0 || at >= L->len
      || !strchr ("-0123456789", L->text[at]) || !L->text[at])
    return false;
  for (end = at; end < L->len && L->text[end] && !strchr (",]}: \t\r\n", L->text[end]); end++)
    ;
  if (end - at >= size)
    snprintf (buf, size, "%.*s...", (int) (size - 4), L->text + at);
  else
    snprintf (buf, size, "%.*s", (int) (end - at), L->text + at);
  return true;
}

/* How the value at PATH reads in a message: got 40, got "7", got an
 * array; a number as the text writes it. */
static const char *
describe (Loader *L, const char *path, json_object *o, char *buf, size_t size)
{
  switch (type_of (o))
    {
    case json_type_null: return "null";
    case json_type_boolean: return json_object_get_boolean (o) ? "true" : "false";
    case json_type_object: return "an object";
    case json_type_array: return "an array";
    case json_type_int:
    case json_type_double:
      {
        TgBuf b;
        if (number_as_written (L, path, buf, size))
          return buf;
        tg__buf_init (&b);
        tg__json_emit_compact (&b, o);
        snprintf (buf, size, "%s", b.data ? b.data : "a number");
        tg__buf_clear (&b);
        return buf;
      }
    case json_type_string:
      return tg_describe_string (json_object_get_string (o), buf, size);
    default: return "a value";
    }
}

static bool
is_number (json_object *o)
{
  json_type t = type_of (o);
  return t == json_type_int || t == json_type_double;
}

/* An integral JSON number (3 or 3.0) as int64; false for 2.5 and for
 * anything outside int64 (*HUGE says which side). */
static bool
get_integer (json_object *o, int64_t *out)
{
  if (type_of (o) == json_type_int)
    {
      int64_t v = json_object_get_int64 (o);
      if (v == INT64_MAX && json_object_get_uint64 (o) > (uint64_t) INT64_MAX)
        {
          *out = INT64_MAX;
          return true;
        }
      *out = v;
      return true;
    }
  if (type_of (o) == json_type_double)
    {
      double d = json_object_get_double (o);
      if (isfinite (d) && floor (d) == d && fabs (d) < 9.2e18)
        {
          *out = (int64_t) d;
          return true;
        }
    }
  return false;
}

/* A C string without embedded NULs (json-c allows "\u0000"). */
static int
want_string (Loader *L, const char *path, json_object *o, const char *what, const char **out)
{
  char got[64];

  if (type_of (o) != json_type_string)
    return fail (L, TG_ETYPE, path, "expected %s, got %s", what,
                 describe (L, path, o, got, sizeof got));
  if (strlen (json_object_get_string (o)) != (size_t) json_object_get_string_len (o))
    return fail (L, TG_EINVAL, path, TG_MSG_NUL_IN_STRING);
  *out = json_object_get_string (o);
  return 0;
}

/* --- parameters ----------------------------------------------------------------- */

/* A JSON value that is not of parameter D's kind (or, at WHERE, of its
 * element's): the codec's message, at the loader's full PATH. */
static int
fail_got_text (Loader *L, const char *path, const TgParamDesc *d, const char *where, int code,
               const char *got)
{
  if (!L->err)
    return code;
  tg_param_error_got (d, code, where, got, L->err);
  snprintf (L->err->path, sizeof L->err->path, "%s", path);
  place (L);
  return code;
}

static int
fail_got (Loader *L, const char *path, const TgParamDesc *d, const char *where, int code,
          json_object *o)
{
  char got[64];

  return fail_got_text (L, path, d, where, code, describe (L, path, o, got, sizeof got));
}

static int
want_element (Loader *L, const char *path, const TgParamDesc *d, const char *where,
              json_object *o, double *out)
{
  if (!is_number (o))
    return fail_got (L, path, d, where, TG_ETYPE, o);
  *out = json_object_get_double (o);
  return isfinite (*out) ? 0 : fail_got (L, path, d, where, TG_ERANGE, o);
}

static int
parse_vec (Loader *L, const char *path, const TgParamDesc *d, json_object *o, int n,
           double *out)
{
  char sub[TG_ERROR_PATH_MAX], where[32];

  if (type_of (o) != json_type_array || (int) json_object_array_length (o) != n)
    return type_of (o) == json_type_array
             ? fail_got_text (L, path, d, NULL, TG_ETYPE, "an array of another length")
             : fail_got (L, path, d, NULL, TG_ETYPE, o);
  for (int k = 0; k < n; k++)
    {
      int rc;
      snprintf (where, sizeof where, "[%d]", k);
      mkpath (sub, sizeof sub, "%s%s", path, where);
      rc = want_element (L, sub, d, where, json_object_array_get_idx (o, (size_t) k), &out[k]);
      if (rc)
        return rc;
    }
  return 0;
}

static int
parse_curve (Loader *L, const char *path, const TgParamDesc *d, json_object *o, TgParamValue *v)
{
  char sub[TG_ERROR_PATH_MAX], where[32];
  size_t n;

  if (type_of (o) != json_type_array)
    return fail_got (L, path, d, NULL, TG_ETYPE, o);
  n = json_object_array_length (o);
  v->xy = calloc (n ? 2 * n : 2, sizeof *v->xy);
  if (!v->xy)
    return fail (L, TG_ENOMEM, path, TG_MSG_OUT_OF_MEMORY);
  v->n_points = (int) n;
  for (size_t k = 0; k < n; k++)
    {
      json_object *pt = json_object_array_get_idx (o, k);
      int rc;

      snprintf (where, sizeof where, "[%zu]", k);
      mkpath (sub, sizeof sub, "%s%s", path, where);
      if (type_of (pt) != json_type_array || json_object_array_length (pt) != 2)
        return fail_got (L, sub, d, where, TG_ETYPE, pt);
      for (int c = 0; c < 2; c++)
        {
          snprintf (where, sizeof where, "[%zu][%d]", k, c);
          mkpath (sub, sizeof sub, "%s%s", path, where);
          rc = want_element (L, sub, d, where, json_object_array_get_idx (pt, (size_t) c),
                             &v->xy[2 * k + (size_t) c]);
          if (rc)
            return rc;
        }
    }
  return 0;
}

static int parse_list (Loader *L, const char *path, const TgParamDesc *d, json_object *o,
                       TgParamValue *v);

/* The JSON value O as a value of parameter D.  Only its kind is checked
 * here; ranges, choices and the rest are tg_param_value_check's, when
 * the value is set on the graph. */
static int
parse_param (Loader *L, const char *path, const TgParamDesc *d, json_object *o, TgParamValue *v)
{
  int64_t i;
  const char *s;
  int rc;

  memset (v, 0, sizeof *v);
  v->type = d->type;
  switch (d->type)
    {
    case TG_PARAM_FLOAT:
      if (!is_number (o))
        return fail_got (L, path, d, NULL, TG_ETYPE, o);
      v->f = json_object_get_double (o);
      /* 1e400: the codec would say "got inf"; say it as the text does. */
      return isfinite (v->f) ? 0 : fail_got (L, path, d, NULL, TG_ERANGE, o);
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
      if (!get_integer (o, &i))
        return fail_got (L, path, d, NULL, TG_ETYPE, o);
      if (i < INT_MIN || i > INT_MAX)
        return fail_got (L, path, d, NULL, TG_ERANGE, o);
      v->i = (int) i;
      return 0;
    case TG_PARAM_BOOL:
      if (type_of (o) != json_type_boolean)
        return fail_got (L, path, d, NULL, TG_ETYPE, o);
      v->i = json_object_get_boolean (o) ? 1 : 0;
      return 0;
    case TG_PARAM_ENUM:
      if (type_of (o) != json_type_string)
        return fail_got (L, path, d, NULL, TG_ETYPE, o);
      v->s = strdup (json_object_get_string (o));
      v->i = tg_param_enum_index (d, v->s);
      return v->s ? 0 : fail (L, TG_ENOMEM, path, TG_MSG_OUT_OF_MEMORY);
    case TG_PARAM_STRING:
    case TG_PARAM_INPUT_PATH:
    case TG_PARAM_OUTPUT_PATH:
      if (type_of (o) != json_type_string)
        return fail_got (L, path, d, NULL, TG_ETYPE, o);
      rc = want_string (L, path, o, "a string", &s);
      if (rc)
        return rc;
      v->s = strdup (s);
      return v->s ? 0 : fail (L, TG_ENOMEM, path, TG_MSG_OUT_OF_MEMORY);
    case TG_PARAM_VEC2:
      return parse_vec (L, path, d, o, 2, v->v);
    case TG_PARAM_VEC3:
      return parse_vec (L, path, d, o, 3, v->v);
    case TG_PARAM_COLOR:
      if (type_of (o) != json_type_string || tg_color_parse (json_object_get_string (o), v->v) < 0)
        return fail_got (L, path, d, NULL, TG_ETYPE, o);
      return 0;
    case TG_PARAM_CURVE:
      return parse_curve (L, path, d, o, v);
    case TG_PARAM_LIST:
      return parse_list (L, path, d, o, v);
    default:
      return fail (L, TG_ETYPE, path, "parameter type %d is not supported", (int) d->type);
    }
}

/* An array of objects, one per item; fields left out keep their
 * defaults, unknown fields are errors that name the item. */
static int
parse_list (Loader *L, const char *path, const TgParamDesc *d, json_object *o, TgParamValue *v)
{
  char sub[TG_ERROR_PATH_MAX], where[32];
  size_t n;

  v->n_item_params = d->n_item_params;
  if (type_of (o) != json_type_array)
    return fail_got (L, path, d, NULL, TG_ETYPE, o);
  n = json_object_array_length (o);
  for (size_t i = 0; i < n; i++)
    {
      json_object *item = json_object_array_get_idx (o, i);
      int idx;

      snprintf (where, sizeof where, "[%zu]", i);
      mkpath (sub, sizeof sub, "%s%s", path, where);
      if (type_of (item) != json_type_object)
        {
          tg_param_value_clear (v);
          return fail_got (L, sub, d, where, TG_ETYPE, item);
        }
      idx = tg_param_list_append_default (v, d);
      if (idx < 0)
        {
          tg_param_value_clear (v);
          return fail (L, TG_ENOMEM, sub, TG_MSG_OUT_OF_MEMORY);
        }
      json_object_object_foreach (item, key, val)
        {
          int k, rc;
          TgParamValue fv;
          mkpath (sub, sizeof sub, "%s[%zu].%s", path, i, key);
          k = tg_param_item_field (d, idx, key, L->err);
          if (k < 0)
            {
              tg_param_value_clear (v);
              if (L->err)
                snprintf (L->err->path, sizeof L->err->path, "%s", sub);
              place (L);
              return k;
            }
          rc = parse_param (L, sub, &d->item_params[k], val, &fv);
          if (rc)
            {
              tg_param_value_clear (&fv);
              tg_param_value_clear (v);
              return rc;
            }
          tg_param_value_clear (tg_param_list_field_mut (v, idx, k));
          *tg_param_list_field_mut (v, idx, k) = fv;
        }
    }
  return 0;
}

static int
load_params (Loader *L, int node, const char *node_path, json_object *params)
{
  const TgNodeDesc *desc = tg_graph_node_desc (L->g, node);
  char path[TG_ERROR_PATH_MAX], got[64];
  bool *given;
  int rc = 0;

  mkpath (path, sizeof path, "%s.params", node_path);
  if (params && type_of (params) != json_type_object)
    return fail (L, TG_ETYPE, path, TG_MSG_EXPECTED_PARAMS_OBJECT,
                 describe (L, path, params, got, sizeof got));

  given = calloc ((size_t) desc->n_params + 1, sizeof *given);
  if (!given)
    return fail (L, TG_ENOMEM, path, TG_MSG_OUT_OF_MEMORY);

  if (params)
    {
      json_object_object_foreach (params, name, val)
        {
          int k = tg_node_desc_find_param (desc, name);
          TgParamValue v;

          mkpath (path, sizeof path, "%s.params.%s", node_path, name);
          if (k < 0 && tg_tgraph_param_new_name (desc->type, name))
            {
              rc = fail (L, TG_EUNKNOWN, path, TG_MSG_PARAM_V1_NAME, desc->type, name,
                         TG_FORMAT_VERSION, tg_tgraph_param_new_name (desc->type, name));
              break;
            }
          if (k < 0)
            {
              TgSuggest sg;
              const char *hint;
              tg_suggest_init (&sg, name);
              for (int p = 0; p < desc->n_params; p++)
                tg_suggest_add (&sg, desc->params[p].name);
              hint = tg_suggest_result (&sg);
              rc = fail_hint (L, TG_EUNKNOWN, path, TG_MSG_UNKNOWN_PARAM_OF, desc->type, hint);
              break;
            }
          /* null is an unset string (a save writes one as null); the
           * engine decides whether the parameter may be unset. */
          if (type_of (val) == json_type_null
              && (desc->params[k].type == TG_PARAM_STRING
                  || desc->params[k].type == TG_PARAM_INPUT_PATH
                  || desc->params[k].type == TG_PARAM_OUTPUT_PATH))
            {
              memset (&v, 0, sizeof v);
              v.type = desc->params[k].type;
              /* An unfinished graph (the GUI's) may keep a required path unset. */
              if ((L->flags & TG_TGRAPH_LOAD_NO_VALIDATE)
                  && (desc->params[k].flags & TG_PARAM_REQUIRED
                      || desc->params[k].type != TG_PARAM_STRING))
                {
                  given[k] = true;
                  continue;
                }
              rc = tg_graph_set_param (L->g, node, name, &v, L->err);
              if (rc < 0)
                {
                  fail_engine (L, rc, node_path);
                  break;
                }
              given[k] = true;
              continue;
            }
          rc = parse_param (L, path, &desc->params[k], val, &v);
          if (rc == 0)
            {
              rc = tg_graph_set_param (L->g, node, name, &v, L->err);
              if (rc < 0)
                fail_engine (L, rc, node_path);
            }
          tg_param_value_clear (&v);
          if (rc)
            break;
          given[k] = true;
        }
    }

  for (int k = 0; rc == 0 && k < desc->n_params; k++)
    if ((desc->params[k].flags & TG_PARAM_REQUIRED) && !given[k]
        && !(L->flags & TG_TGRAPH_LOAD_NO_VALIDATE))
      {
        mkpath (path, sizeof path, "%s.params.%s", node_path, desc->params[k].name);
        rc = fail (L, TG_EMISSING, path, TG_MSG_MISSING_REQUIRED_PARAM, desc->type);
      }
  free (given);
  return rc;
}

/* --- nodes ------------------------------------------------------------------------ */

static bool
node_key_known (const char *key)
{
  return !strcmp (key, "id") || !strcmp (key, "type") || !strcmp (key, "params")
         || !strcmp (key, "ui");
}

static int
load_node (Loader *L, int index, json_object *jn)
{
  char node_path[64], path[TG_ERROR_PATH_MAX], got[64];
  json_object *jid = NULL, *jtype = NULL, *jparams = NULL, *jui = NULL, *extra = NULL;
  const char *id, *type;
  int node, rc;

  mkpath (node_path, sizeof node_path, "nodes[%d]", index);
  if (type_of (jn) != json_type_object)
    return fail (L, TG_ETYPE, node_path, TG_MSG_EXPECTED_NODE_OBJECT,
                 describe (L, node_path, jn, got, sizeof got));

  mkpath (path, sizeof path, "%s.id", node_path);
  if (!json_object_object_get_ex (jn, "id", &jid))
    return fail (L, TG_EMISSING, path, TG_MSG_MISSING_NODE_ID);
  rc = want_string (L, path, jid, "a string", &id);
  if (rc)
    return rc;
  if (!*id)
    return fail (L, TG_EINVAL, path, TG_MSG_EMPTY_NODE_ID);
  if (strchr (id, '.'))
    return fail (L, TG_EINVAL, path,
                 "node id \"%s\" contains a '.' (links use \"id.port\", so ids cannot)", id);
  L->node_index = index;
  L->node_id = id;
  /* nodes[k] is graph node k: each is added in order or the load stops. */
  {
    int k = tg_graph_find_node (L->g, id);
    if (k >= 0)
      return fail (L, TG_EINVAL, path, TG_MSG_DUPLICATE_ID_AT, id, k);
  }

  mkpath (path, sizeof path, "%s.type", node_path);
  if (!json_object_object_get_ex (jn, "type", &jtype))
    return fail (L, TG_EMISSING, path, TG_MSG_MISSING_NODE_TYPE);
  rc = want_string (L, path, jtype, "a node type string", &type);
  if (rc)
    return rc;
  if (!tg_registry_lookup (type))
    {
      TgSuggest sg;
      const char *hint;
      int n = tg_registry_count ();
      tg_suggest_init (&sg, type);
      for (int k = 0; k < n; k++)
        tg_suggest_add (&sg, tg_registry_get (k)->type);
      hint = tg_suggest_result (&sg);
      return fail_hint (L, TG_EUNKNOWN, path, TG_MSG_UNKNOWN_TYPE, type, hint);
    }

  node = tg_graph_add_node (L->g, id, type, L->err);
  if (node < 0)
    return fail_engine (L, node, node_path);

  json_object_object_get_ex (jn, "params", &jparams);
  rc = load_params (L, node, node_path, jparams);
  if (rc)
    return rc;

  if (json_object_object_get_ex (jn, "ui", &jui) && jui)
    {
      json_object *jb = NULL;
      char *text;
      /* The one key of "ui" the engine reads: the rest is the editor's. */
      if (type_of (jui) == json_type_object && json_object_object_get_ex (jui, "bypass", &jb))
        {
          mkpath (path, sizeof path, "%s.ui.bypass", node_path);
          if (type_of (jb) != json_type_boolean)
            return fail (L, TG_ETYPE, path, "expected true or false, got %s",
                         describe (L, path, jb, got, sizeof got));
          tg_graph_set_node_bypass (L->g, node, json_object_get_boolean (jb));
          json_object_object_del (jui, "bypass");
        }
      if (type_of (jui) != json_type_object || json_object_object_length (jui) > 0)
        {
          if (!(text = tg__json_to_text (jui)))
            return fail (L, TG_ENOMEM, node_path, TG_MSG_OUT_OF_MEMORY);
          tg_graph_set_node_ui (L->g, node, text);
          free (text);
        }
    }

  json_object_object_foreach (jn, key, val)
    {
      if (node_key_known (key))
        continue;
      if (!extra && !(extra = json_object_new_object ()))
        return fail (L, TG_ENOMEM, node_path, TG_MSG_OUT_OF_MEMORY);
      json_object_object_add (extra, key, json_object_get (val));
    }
  if (extra)
    {
      char *text = tg__json_to_text (extra);
      json_object_put (extra);
      if (!text)
        return fail (L, TG_ENOMEM, node_path, TG_MSG_OUT_OF_MEMORY);
      tg_graph_set_node_extra (L->g, node, text);
      free (text);
    }
  L->node_id = NULL;
  return 0;
}

/* --- links ----------------------------------------------------------------------- */

/* Splits "node.port"; false when it is not exactly that. */
static bool
split_endpoint (const char *s, char *node, char *port, size_t size)
{
  const char *dot = strchr (s, '.');
  size_t nlen;

  if (!dot || dot == s || !dot[1] || strchr (dot + 1, '.'))
    return false;
  nlen = (size_t) (dot - s);
  if (nlen >= size || strlen (dot + 1) >= size)
    return false;
  memcpy (node, s, nlen);
  node[nlen] = '\0';
  strcpy (port, dot + 1);
  return true;
}

/* Resolves one end of a link: the node index and port index, or an error
 * naming the end ("links[1].to"). */
static int
resolve_endpoint (Loader *L, const char *path, json_object *o, bool output, int *node_out,
                  int *port_out, char *node, char *port, size_t size)
{
  const TgNodeDesc *desc;
  const TgPortDesc *ports;
  TgSuggest sg;
  const char *s, *hint;
  char got[64];
  int node_i, port_i, n_ports, rc;

  rc = want_string (L, path, o, "a \"node.port\" string", &s);
  if (rc)
    return rc;
  if (!split_endpoint (s, node, port, size))
    return fail (L, TG_EINVAL, path, TG_MSG_EXPECTED_NODE_PORT,
                 describe (L, path, o, got, sizeof got));

  node_i = tg_graph_find_node (L->g, node);
  if (node_i < 0)
    {
      int n = tg_graph_n_nodes (L->g);
      tg_suggest_init (&sg, node);
      for (int k = 0; k < n; k++)
        tg_suggest_add (&sg, tg_graph_node_id (L->g, k));
      hint = tg_suggest_result (&sg);
      return fail_hint (L, TG_ELINK, path, TG_MSG_NO_NODE, node, hint);
    }
  desc = tg_graph_node_desc (L->g, node_i);
  port_i = output ? tg_node_desc_find_output (desc, port) : tg_node_desc_find_input (desc, port);
  if (port_i < 0)
    {
      TgBuf list;
      ports = output ? desc->outputs : desc->inputs;
      n_ports = output ? desc->n_outputs : desc->n_inputs;
      tg__buf_init (&list);
      tg_suggest_init (&sg, port);
      for (int k = 0; k < n_ports; k++)
        {
          tg__buf_puts (&list, k ? ", " : "");
          tg__buf_puts (&list, ports[k].name);
          tg_suggest_add (&sg, ports[k].name);
        }
      hint = tg_suggest_result (&sg);
      {
        char did[TG_ERROR_MESSAGE_MAX] = "";
        if (hint)
          snprintf (did, sizeof did, TG_MSG_DID_YOU_MEAN, "", hint);
        rc = fail (L, TG_ELINK, path, output ? TG_MSG_NO_OUTPUT_LISTED : TG_MSG_NO_INPUT_LISTED,
                   node, desc->type, port, did, n_ports ? list.data : "none");
      }
      tg__buf_clear (&list);
      return rc;
    }
  *node_out = node_i;
  *port_out = port_i;
  return 0;
}

static int
load_link (Loader *L, int index, json_object *jl)
{
  char link_path[64], path[TG_ERROR_PATH_MAX], got[64];
  char from_node[TG_NODE_ID_BYTES], from_port[TG_NODE_ID_BYTES];
  char to_node[TG_NODE_ID_BYTES], to_port[TG_NODE_ID_BYTES];
  json_object *jfrom = NULL, *jto = NULL;
  int fn, fp, tn, tp, rc, existing;
  TgPortType ft, tt;

  mkpath (link_path, sizeof link_path, "links[%d]", index);
  if (type_of (jl) != json_type_object)
    return fail (L, TG_ETYPE, link_path,
                 "expected a link object { \"from\": ..., \"to\": ... }, got %s",
                 describe (L, link_path, jl, got, sizeof got));
  json_object_object_foreach (jl, key, val)
    {
      (void) val;
      if (strcmp (key, "from") != 0 && strcmp (key, "to") != 0)
        {
          mkpath (path, sizeof path, "%s.%s", link_path, key);
          return fail (L, TG_EUNKNOWN, path,
                       "unknown key in a link (links have \"from\" and \"to\")");
        }
    }

  mkpath (path, sizeof path, "%s.from", link_path);
  if (!json_object_object_get_ex (jl, "from", &jfrom))
    return fail (L, TG_EMISSING, path, TG_MSG_MISSING_FROM);
  rc = resolve_endpoint (L, path, jfrom, true, &fn, &fp, from_node, from_port, sizeof from_node);
  if (rc)
    return rc;

  mkpath (path, sizeof path, "%s.to", link_path);
  if (!json_object_object_get_ex (jl, "to", &jto))
    return fail (L, TG_EMISSING, path, TG_MSG_MISSING_TO);
  rc = resolve_endpoint (L, path, jto, false, &tn, &tp, to_node, to_port, sizeof to_node);
  if (rc)
    return rc;

  existing = tg_graph_input_link (L->g, tn, tp);
  if (existing >= 0)
    return fail (L, TG_ELINK, path, TG_MSG_ALREADY_FED, to_node, to_port, existing);

  ft = tg_graph_node_desc (L->g, fn)->outputs[fp].type;
  tt = tg_graph_node_desc (L->g, tn)->inputs[tp].type;
  if (!tg_port_type_compatible (ft, tt))
    return fail (L, TG_ETYPE, link_path, TG_MSG_CANNOT_CONNECT, from_node, from_port,
                 tg_port_type_name (ft), to_node, to_port, tg_port_type_name (tt));

  rc = tg_graph_add_link (L->g, from_node, from_port, to_node, to_port, L->err);
  /* Returns the new link's index on success. */
  if (rc < 0)
    return fail_engine (L, rc, link_path); /* the engine's path is "from", "to" or "" */
  return 0;
}

/* --- world ----------------------------------------------------------------------- */

/* World settings and the format version read like parameters, so the
 * codec words what they expect. */
static int
want_number (Loader *L, const char *path, json_object *o, double min, double max, double *out)
{
  const TgParamDesc d = { .name = path, .type = TG_PARAM_FLOAT, .min = min, .max = max };
  double v;

  if (!is_number (o))
    return fail_got (L, path, &d, NULL, TG_ETYPE, o);
  v = json_object_get_double (o);
  if (!isfinite (v) || v < min || v > max)
    return fail_got (L, path, &d, NULL, TG_ERANGE, o);
  *out = v;
  return 0;
}

static int
want_integer (Loader *L, const char *path, json_object *o, double min, double max, int64_t *out)
{
  const TgParamDesc d = { .name = path, .type = TG_PARAM_INT, .min = min, .max = max };
  int64_t v;

  if (!get_integer (o, &v))
    return fail_got (L, path, &d, NULL, TG_ETYPE, o);
  if ((double) v < min || (double) v > max)
    return fail_got (L, path, &d, NULL, TG_ERANGE, o);
  *out = v;
  return 0;
}

static int
load_world (Loader *L, json_object *jw)
{
  static const char *const keys[] = { "size_m", "height_m", "resolution", "seed" };
  TgWorld *w = tg_graph_world (L->g);
  json_object *o;
  char path[TG_ERROR_PATH_MAX], got[64];
  int64_t i;
  int rc;

  if (type_of (jw) != json_type_object)
    return fail (L, TG_ETYPE, "world", TG_MSG_EXPECTED_OBJECT,
                 describe (L, "world", jw, got, sizeof got));
  json_object_object_foreach (jw, key, val)
    {
      bool known = false;
      (void) val;
      for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        known = known || strcmp (key, keys[k]) == 0;
      if (!known)
        {
          TgSuggest sg;
          const char *hint;
          tg_suggest_init (&sg, key);
          for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            tg_suggest_add (&sg, keys[k]);
          hint = tg_suggest_result (&sg);
          mkpath (path, sizeof path, "world.%s", key);
          return fail_hint (L, TG_EUNKNOWN, path, TG_MSG_UNKNOWN_WORLD_SETTING, NULL, hint);
        }
    }
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
    if (!json_object_object_get_ex (jw, keys[k], NULL))
      {
        mkpath (path, sizeof path, "world.%s", keys[k]);
        return fail (L, TG_EMISSING, path, TG_MSG_MISSING_WORLD_SETTING);
      }

  json_object_object_get_ex (jw, "size_m", &o);
  if (type_of (o) != json_type_array || json_object_array_length (o) != 2)
    return fail (L, TG_ETYPE, "world.size_m", TG_MSG_EXPECTED_XZ,
                 type_of (o) == json_type_array ? "an array of another length"
                                                : describe (L, "world.size_m", o, got, sizeof got));
  for (int k = 0; k < 2; k++)
    {
      json_object *e = json_object_array_get_idx (o, (size_t) k);
      double v;
      mkpath (path, sizeof path, "world.size_m[%d]", k);
      rc = want_number (L, path, e, -HUGE_VAL, HUGE_VAL, &v);
      if (rc)
        return rc;
      if (!(v > 0))
        return fail (L, TG_ERANGE, path, TG_MSG_EXPECTED_SIZE,
                     describe (L, path, e, got, sizeof got));
      if (k == 0)
        w->size_x = v;
      else
        w->size_z = v;
    }

  json_object_object_get_ex (jw, "height_m", &o);
  rc = want_number (L, "world.height_m", o, -HUGE_VAL, HUGE_VAL, &w->height_m);
  if (rc)
    return rc;
  if (!(w->height_m > 0))
    return fail (L, TG_ERANGE, "world.height_m", TG_MSG_EXPECTED_HEIGHT,
                 describe (L, "world.height_m", o, got, sizeof got));

  json_object_object_get_ex (jw, "resolution", &o);
  rc = want_integer (L, "world.resolution", o, TG_RESOLUTION_MIN, TG_RESOLUTION_MAX, &i);
  if (rc)
    return rc;
  w->resolution = (int) i;

  json_object_object_get_ex (jw, "seed", &o);
  rc = want_integer (L, "world.seed", o, 0, 4294967295.0, &i);
  if (rc)
    return rc;
  w->seed = (uint32_t) i;

  rc = tg_world_check (w, L->err);
  if (rc < 0)
    return fail_engine (L, rc, NULL);
  return 0;
}

/* --- versions ------------------------------------------------------------------------ */

/* Upgrades a parsed document of format version FROM to FROM + 1, in place.
 * Each new format version adds one case here (and never changes an old
 * one), so a file of any older version walks up the chain. */
static int
migrate_step (Loader *L, json_object *root, int from)
{
  int rc;

  switch (from)
    {
    case 1: /* parameter names: tgraph_migrate.c */
      rc = tg__tgraph_migrate_v1 (root, &L->renames, L->err);
      if (rc < 0 && L->err)
        place (L);
      return rc;
    default:
      return fail (L, TG_EVERSION, "version", TG_MSG_NO_UPGRADE, from);
    }
}

static int
check_version (Loader *L, json_object *root, int *version)
{
  json_object *o;
  char got[64];
  int64_t v;

  if (!json_object_object_get_ex (root, "format", &o))
    return fail (L, TG_EPARSE, "format",
                 "missing \"format\": \"tgraph\" (is this a .tgraph file?)");
  if (type_of (o) != json_type_string || strcmp (json_object_get_string (o), "tgraph") != 0)
    return fail (L, TG_EPARSE, "format", TG_MSG_NOT_TGRAPH,
                 describe (L, "format", o, got, sizeof got));
  if (!json_object_object_get_ex (root, "version", &o))
    return fail (L, TG_EMISSING, "version", TG_MSG_MISSING_VERSION);
  if (!get_integer (o, &v))
    return fail (L, TG_ETYPE, "version", TG_MSG_EXPECTED_VERSION_INT,
                 describe (L, "version", o, got, sizeof got));
  if (v > TG_FORMAT_VERSION)
    return fail (L, TG_EVERSION, "version",
                 TG_MSG_NEWER_VERSION,
                 describe (L, "version", o, got, sizeof got), TG_VERSION_STRING,
                 TG_FORMAT_VERSION);
  if (v < TG__FORMAT_VERSION_OLDEST)
    return fail (L, TG_EVERSION, "version", TG_MSG_EXPECTED_VERSION_RANGE,
                 TG__FORMAT_VERSION_OLDEST, TG_FORMAT_VERSION,
                 describe (L, "version", o, got, sizeof got));
  *version = (int) v;
  return 0;
}

/* --- the document --------------------------------------------------------------- */

static bool
top_key_known (const char *key)
{
  return !strcmp (key, "format") || !strcmp (key, "version") || !strcmp (key, "world")
         || !strcmp (key, "nodes") || !strcmp (key, "links");
}

static int
load_document (Loader *L, json_object *root)
{
  json_object *o, *extra = NULL;
  char got[64];
  int version = 0, rc;

  if (type_of (root) != json_type_object)
    return fail (L, TG_EPARSE, "", TG_MSG_EXPECTED_TOP_OBJECT,
                 describe (L, "", root, got, sizeof got));
  rc = check_version (L, root, &version);
  if (rc)
    return rc;
  L->version = version;
  for (int v = version; v < TG_FORMAT_VERSION; v++)
    {
      rc = migrate_step (L, root, v);
      if (rc)
        return rc;
    }

  if (!json_object_object_get_ex (root, "world", &o))
    return fail (L, TG_EMISSING, "world", TG_MSG_MISSING_WORLD);
  rc = load_world (L, o);
  if (rc)
    return rc;

  if (!json_object_object_get_ex (root, "nodes", &o))
    return fail (L, TG_EMISSING, "nodes", TG_MSG_MISSING_NODES);
  if (type_of (o) != json_type_array)
    return fail (L, TG_ETYPE, "nodes", TG_MSG_EXPECTED_NODES_ARRAY,
                 describe (L, "nodes", o, got, sizeof got));
  if (json_object_array_length (o) > TG_TGRAPH_MAX_NODES)
    return fail (L, TG_ERANGE, "nodes", TG_MSG_TOO_MANY_NODES, TG_TGRAPH_MAX_NODES,
                 json_object_array_length (o));
  for (size_t k = 0; k < json_object_array_length (o); k++)
    {
      rc = load_node (L, (int) k, json_object_array_get_idx (o, k));
      if (rc)
        return rc;
    }

  if (json_object_object_get_ex (root, "links", &o))
    {
      if (type_of (o) != json_type_array)
        return fail (L, TG_ETYPE, "links", TG_MSG_EXPECTED_LINKS_ARRAY,
                     describe (L, "links", o, got, sizeof got));
      for (size_t k = 0; k < json_object_array_length (o); k++)
        {
          rc = load_link (L, (int) k, json_object_array_get_idx (o, k));
          if (rc)
            return rc;
        }
    }

  json_object_object_foreach (root, key, val)
    {
      if (top_key_known (key))
        continue;
      if (!extra && !(extra = json_object_new_object ()))
        return fail (L, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      json_object_object_add (extra, key, json_object_get (val));
    }
  if (extra)
    {
      char *text = tg__json_to_text (extra);
      json_object_put (extra);
      if (!text)
        return fail (L, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      tg_graph_set_extra (L->g, text);
      free (text);
    }

  if (L->flags & TG_TGRAPH_LOAD_NO_VALIDATE)
    return 0;
  rc = tg_graph_validate (L->g, L->err);
  if (rc < 0)
    return fail_engine (L, rc, NULL);
  return 0;
}

/* What a JSON5 or JavaScript habit at END of TEXT (where json-c's strict
 * mode stopped) is called in RFC 8259's terms, or "". */
static const char *
syntax_hint (const char *text, size_t len, size_t start, size_t end)
{
  size_t p = end;

  if (end >= len)
    return "";
  if (text[end] == '\'')
    return " (JSON strings and keys take double quotes)";
  if (text[end] == '/' && end + 1 < len && (text[end + 1] == '/' || text[end + 1] == '*'))
    return " (JSON has no comments)";
  while (p > start && strchr (" \t\r\n", text[p - 1]) && text[p - 1])
    p--;
  if ((text[end] == '}' || text[end] == ']') && p > start && text[p - 1] == ',')
    return " (JSON allows no comma before a closing bracket)";
  return "";
}

/* The id of the node PATH ("nodes[3]...") is in, when ROOT has a usable
 * one there; else NULL. */
static const char *
node_id_of_path (json_object *root, const char *path)
{
  json_object *nodes, *id;
  const char *s;
  char *end;
  long k;

  if (strncmp (path, "nodes[", 6) != 0 || (k = strtol (path + 6, &end, 10)) < 0 || *end != ']'
      || !json_object_object_get_ex (root, "nodes", &nodes) || type_of (nodes) != json_type_array
      || (size_t) k >= json_object_array_length (nodes)
      || !json_object_object_get_ex (json_object_array_get_idx (nodes, (size_t) k), "id", &id)
      || type_of (id) != json_type_string)
    return NULL;
  s = json_object_get_string (id);
  if ((size_t) json_object_get_string_len (id) >= TG_NODE_ID_BYTES
      || tg_utf8_check (s, strlen (s)) != (size_t) json_object_get_string_len (id))
    return NULL;
  return s;
}

/* What json-c let through and RFC 8259 refuses (json_strict.c), with
 * its place; the node's id joins the path when the text has a good one. */
static int
strict_check (const char *text, size_t len, json_object *root, TgError *err)
{
  TgJsonProblem pb;
  const char *id;

  if (!tg__json_strict_problem (text, len, &pb))
    return 0;
  tg_error_set (err, pb.code, pb.path, "%s", pb.message);
  if (!err)
    return pb.code;
  tg__text_position (text, len, pb.offset, &err->line, &err->column);
  if ((id = node_id_of_path (root, pb.path)))
    tg_error_set_node_id (err, id);
  return pb.code;
}

int
tg_tgraph_load_string (const char *text, size_t len, const char *base_dir, TgGraph **out,
                       TgError *err)
{
  return tg_tgraph_load_string_ex (text, len, base_dir, 0, out, err);
}

int
tg_tgraph_load_string_ex (const char *text, size_t len, const char *base_dir, unsigned flags,
                          TgGraph **out, TgError *err)
{
  return tg_tgraph_load_string_info (text, len, base_dir, flags, NULL, out, err);
}

int
tg_tgraph_load_string_info (const char *text, size_t len, const char *base_dir, unsigned flags,
                            TgTgraphLoadInfo *info, TgGraph **out, TgError *err)
{
  Loader L = { .text = text, .len = len, .err = err, .flags = flags };
  json_tokener *tok;
  json_object *root;
  enum json_tokener_error jerr;
  size_t start = 0, end;
  int rc;

  if (err)
    tg_error_clear (err);
  if (!text || !out)
    return tg_error_set (err, TG_EINVAL, "", "no text to load");
  if (len > (size_t) INT_MAX)
    return tg_error_set (err, TG_EINVAL, "", TG_MSG_GRAPH_TEXT_TOO_LARGE);
  if (len >= 3 && memcmp (text, "\xef\xbb\xbf", 3) == 0)
    start = 3; /* a UTF-8 byte order mark, as some editors write */

  tok = json_tokener_new_ex (128);
  if (!tok)
    return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
  json_tokener_set_flags (tok, JSON_TOKENER_STRICT);
  root = json_tokener_parse_ex (tok, text + start, (int) (len - start));
  jerr = json_tokener_get_error (tok);
  end = start + json_tokener_get_parse_end (tok);
  if (jerr == json_tokener_continue)
    {
      /* A bare scalar ("5") needs an end marker to finish; a truncated
       * object stays an error and is reported as such below. */
      root = json_tokener_parse_ex (tok, "", 1);
      if (json_tokener_get_error (tok) != json_tokener_success)
        {
          json_object_put (root);
          root = NULL;
        }
      else
        jerr = json_tokener_success;
    }
  json_tokener_free (tok);
  if (jerr == json_tokener_success)
    {
      /* json-c stops after the first value; anything but space after it is an error. */
      while (end < len && text[end] && strchr (" \t\r\n", text[end]))
        end++;
      if (end < len)
        jerr = json_tokener_error_parse_unexpected;
    }
  if (jerr != json_tokener_success)
    {
      json_object_put (root);
      if (jerr == json_tokener_continue)
        end = len;
      tg_error_set (err, TG_EPARSE, "", TG_MSG_SYNTAX,
                    jerr == json_tokener_continue ? TG_MSG_UNEXPECTED_EOF
                                                  : json_tokener_error_desc (jerr),
                    syntax_hint (text, len, start, end));
      if (err)
        tg__text_position (text, len, end, &err->line, &err->column);
      return TG_EPARSE;
    }

  rc = strict_check (text, len, root, err);
  if (rc)
    {
      json_object_put (root);
      return rc;
    }

  L.g = tg_graph_new ();
  if (!L.g)
    {
      json_object_put (root);
      return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
    }
  if (base_dir)
    tg_graph_set_base_dir (L.g, base_dir);
  rc = load_document (&L, root);
  json_object_put (root);
  if (rc)
    {
      tg__rename_log_clear (&L.renames);
      tg_graph_free (L.g);
      return rc;
    }
  if (info)
    {
      info->version = L.version;
      info->n_renamed = (int) L.renames.n;
    }
  tg__rename_log_clear (&L.renames);
  *out = L.g;
  return 0;
}

int
tg_tgraph_load_file (const char *path, TgGraph **out, TgError *err)
{
  return tg_tgraph_load_file_ex (path, 0, out, err);
}

int
tg_tgraph_load_file_ex (const char *path, unsigned flags, TgGraph **out, TgError *err)
{
  return tg_tgraph_load_file_info (path, flags, NULL, out, err);
}

int
tg_tgraph_load_file_info (const char *path, unsigned flags, TgTgraphLoadInfo *info,
                          TgGraph **out, TgError *err)
{
  char *text, *dir, *abs_dir;
  const char *slash;
  size_t len;
  int rc;

  if (err)
    tg_error_clear (err);
  if (!path || !out)
    return tg_error_set (err, TG_EINVAL, "", TG_MSG_NO_FILE_TO_LOAD);
  rc = tg__read_file (path, &text, &len, err);
  if (rc)
    return rc;

  slash = strrchr (path, '/');
  if (!slash)
    dir = strdup (".");
  else if (slash == path)
    dir = strdup ("/");
  else
    dir = strndup (path, (size_t) (slash - path));
  if (!dir)
    {
      free (text);
      return tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
    }
  /* Absolute, so the graph's inputs do not move if the front end changes
   * its working directory later. */
  abs_dir = realpath (dir, NULL);

  rc = tg_tgraph_load_string_info (text, len, abs_dir ? abs_dir : dir, flags, info, out, err);
  free (abs_dir);
  free (dir);
  free (text);
  return rc;
}
