/* Documents generated from the node registry: the JSON Schema of the
 * .tgraph format and the node catalogue (`tgraph nodes --json`).
 *
 * Both come from the descriptors alone, so adding a node updates them
 * with no edit here.  The text is deterministic (registry order is sorted
 * by type name, parameters keep descriptor order), which lets the schema
 * be checked into data/schema/ and compared in a test.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tgformats-private.h"

#define TG__SCHEMA_ID "https://terrane.invalid/schema/tgraph.schema.json"

/* Output paths: relative, no "..", no empty component, no backslash or drive. */
#define TG__OUTPUT_PATH_PATTERN "^(?!/)(?![A-Za-z]:)(?!.*//)(?!(.*/)?\\.\\.?(/|$))(?!.*/$)[^\\\\]+$"
#define TG__COLOUR_PATTERN "^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$"

/* A builder that remembers an allocation failure instead of checking at
 * every call, so the document code reads as the document. */
typedef struct
{
  bool oom;
} Doc;

static json_object *
put (Doc *d, json_object *obj, const char *key, json_object *val)
{
  if (!obj || !val || json_object_object_add (obj, key, val) != 0)
    {
      json_object_put (val);
      d->oom = true;
      return NULL;
    }
  return val;
}

/* KEY: null when VAL is NULL (unlike put, which treats NULL as failure). */
static void
put_nullable (Doc *d, json_object *obj, const char *key, json_object *val)
{
  if (!obj || json_object_object_add (obj, key, val) != 0)
    {
      json_object_put (val);
      d->oom = true;
    }
}

static json_object *
push (Doc *d, json_object *arr, json_object *val)
{
  if (!arr || !val || json_object_array_add (arr, val) != 0)
    {
      json_object_put (val);
      d->oom = true;
      return NULL;
    }
  return val;
}

static json_object *
obj (Doc *d)
{
  json_object *o = json_object_new_object ();
  if (!o)
    d->oom = true;
  return o;
}

static json_object *
arr (Doc *d)
{
  json_object *o = json_object_new_array ();
  if (!o)
    d->oom = true;
  return o;
}

static json_object *
str (const char *s)
{
  return json_object_new_string (s ? s : "");
}

static json_object *
str_or_null (const char *s)
{
  return s ? json_object_new_string (s) : NULL;
}

static bool
finite_bound (double v)
{
  return isfinite (v) && fabs (v) < 1e300;
}

static void
put_range (Doc *d, json_object *o, double min, double max, bool integer)
{
  if (finite_bound (min))
    put (d, o, "minimum",
         integer ? json_object_new_int64 ((int64_t) min) : json_object_new_double (min));
  if (finite_bound (max))
    put (d, o, "maximum",
         integer ? json_object_new_int64 ((int64_t) max) : json_object_new_double (max));
}

static void
put_range_items (Doc *d, json_object *o, double min, double max)
{
  if (finite_bound (min))
    put (d, o, "minItems", json_object_new_int64 ((int64_t) min));
  if (finite_bound (max))
    put (d, o, "maxItems", json_object_new_int64 ((int64_t) max));
}

static char *
fmt_help (const TgParamDesc *p)
{
  TgBuf b;

  tg__buf_init (&b);
  tg__buf_puts (&b, p->help ? p->help : "");
  if (p->unit)
    {
      size_t n = p->help ? strlen (p->help) : 0;
      tg__buf_printf (&b, "%sUnit: %s.", n == 0 ? "" : p->help[n - 1] == '.' ? " " : ". ", p->unit);
    }
  return tg__buf_steal (&b);
}

static json_object *
default_json (const TgParamDesc *p, bool *oom)
{
  TgParamValue v;
  json_object *o;

  tg_param_value_init_default (&v, p);
  o = tg__param_to_json (p, &v, oom);
  tg_param_value_clear (&v);
  return o;
}

/* --- schema ------------------------------------------------------------------------------ */

static json_object *
param_schema (Doc *d, const TgParamDesc *p)
{
  json_object *o = obj (d), *items, *def;
  char *help = fmt_help (p);
  bool oom = false;
  int n;

  if (p->label)
    put (d, o, "title", str (p->label));
  if (help && *help)
    put (d, o, "description", str (help));
  free (help);
  switch (p->type)
    {
    case TG_PARAM_FLOAT:
      put (d, o, "type", str ("number"));
      put_range (d, o, p->min, p->max, false);
      break;
    case TG_PARAM_INT:
    case TG_PARAM_SEED:
      put (d, o, "type", str ("integer"));
      put_range (d, o, p->min, p->max, true);
      break;
    case TG_PARAM_BOOL:
      put (d, o, "type", str ("boolean"));
      break;
    case TG_PARAM_ENUM:
      items = put (d, o, "enum", arr (d));
      for (int k = 0; p->choices && p->choices[k]; k++)
        push (d, items, str (p->choices[k]));
      break;
    case TG_PARAM_STRING:
      put (d, o, "type", str ("string"));
      break;
    case TG_PARAM_INPUT_PATH:
      put (d, o, "type", str ("string"));
      put (d, o, "minLength", json_object_new_int (1));
      break;
    case TG_PARAM_OUTPUT_PATH:
      put (d, o, "type", str ("string"));
      put (d, o, "minLength", json_object_new_int (1));
      put (d, o, "pattern", str (TG__OUTPUT_PATH_PATTERN));
      break;
    case TG_PARAM_VEC2:
    case TG_PARAM_VEC3:
      n = p->type == TG_PARAM_VEC2 ? 2 : 3;
      put (d, o, "type", str ("array"));
      items = put (d, o, "items", obj (d));
      put (d, items, "type", str ("number"));
      put_range (d, items, p->min, p->max, false);
      put (d, o, "minItems", json_object_new_int (n));
      put (d, o, "maxItems", json_object_new_int (n));
      break;
    case TG_PARAM_COLOR:
      put (d, o, "type", str ("string"));
      put (d, o, "pattern", str (TG__COLOUR_PATTERN));
      break;
    case TG_PARAM_CURVE:
      {
        json_object *num;
        put (d, o, "type", str ("array"));
        put (d, o, "minItems", json_object_new_int (2));
        items = put (d, o, "items", obj (d));
        put (d, items, "type", str ("array"));
        num = put (d, items, "items", obj (d));
        put (d, num, "type", str ("number"));
        put_range (d, num, p->min, p->max, false);
        put (d, items, "minItems", json_object_new_int (2));
        put (d, items, "maxItems", json_object_new_int (2));
        break;
      }
    case TG_PARAM_LIST:
      {
        json_object *props;
        put (d, o, "type", str ("array"));
        put_range_items (d, o, p->min, p->max);
        items = put (d, o, "items", obj (d));
        put (d, items, "type", str ("object"));
        props = put (d, items, "properties", obj (d));
        for (int k = 0; k < p->n_item_params; k++)
          put (d, props, p->item_params[k].name, param_schema (d, &p->item_params[k]));
        put (d, items, "additionalProperties", json_object_new_boolean (0));
        break;
      }
    default:
      break;
    }
  if (!(p->flags & TG_PARAM_REQUIRED))
    {
      def = default_json (p, &oom);
      if (oom)
        d->oom = true;
      if (def)
        put (d, o, "default", def);
    }
  return o;
}

static json_object *
params_schema (Doc *d, const TgNodeDesc *nd)
{
  json_object *o = obj (d), *props, *req = NULL;

  if (nd->label)
    put (d, o, "title", str (nd->label));
  put (d, o, "type", str ("object"));
  props = put (d, o, "properties", obj (d));
  for (int k = 0; k < nd->n_params; k++)
    {
      put (d, props, nd->params[k].name, param_schema (d, &nd->params[k]));
      if (nd->params[k].flags & TG_PARAM_REQUIRED)
        {
          if (!req)
            req = arr (d);
          push (d, req, str (nd->params[k].name));
        }
    }
  if (req)
    put (d, o, "required", req);
  put (d, o, "additionalProperties", json_object_new_boolean (0));
  return o;
}

static bool
has_required_param (const TgNodeDesc *nd)
{
  for (int k = 0; k < nd->n_params; k++)
    if (nd->params[k].flags & TG_PARAM_REQUIRED)
      return true;
  return false;
}

static json_object *
world_schema (Doc *d)
{
  json_object *o = obj (d), *props, *p, *items, *req;

  put (d, o, "type", str ("object"));
  req = put (d, o, "required", arr (d));
  push (d, req, str ("size_m"));
  push (d, req, str ("height_m"));
  push (d, req, str ("resolution"));
  push (d, req, str ("seed"));
  props = put (d, o, "properties", obj (d));

  p = put (d, props, "size_m", obj (d));
  put (d, p, "description", str ("World size along X and Z in metres, centred on the origin."));
  put (d, p, "type", str ("array"));
  items = put (d, p, "items", obj (d));
  put (d, items, "type", str ("number"));
  put (d, items, "exclusiveMinimum", json_object_new_int (0));
  put (d, p, "minItems", json_object_new_int (2));
  put (d, p, "maxItems", json_object_new_int (2));

  p = put (d, props, "height_m", obj (d));
  put (d, p, "description", str ("Metres that height 1.0 stands for."));
  put (d, p, "type", str ("number"));
  put (d, p, "exclusiveMinimum", json_object_new_int (0));

  p = put (d, props, "resolution", obj (d));
  put (d, p, "description", str ("Samples along X of a build."));
  put (d, p, "type", str ("integer"));
  put_range (d, p, TG_RESOLUTION_MIN, TG_RESOLUTION_MAX, true);

  p = put (d, props, "seed", obj (d));
  put (d, p, "description", str ("World seed; every node's randomness derives from it."));
  put (d, p, "type", str ("integer"));
  put_range (d, p, 0, 4294967295.0, true);

  put (d, o, "additionalProperties", json_object_new_boolean (0));
  return o;
}

static json_object *
node_schema (Doc *d)
{
  json_object *o = obj (d), *props, *p, *req, *types, *all, *uiprops;
  int n = tg_registry_count ();

  put (d, o, "type", str ("object"));
  req = put (d, o, "required", arr (d));
  push (d, req, str ("id"));
  push (d, req, str ("type"));
  props = put (d, o, "properties", obj (d));

  p = put (d, props, "id", obj (d));
  put (d, p, "description", str ("Unique node id; links name ports as \"id.port\"."));
  put (d, p, "type", str ("string"));
  /* No '.' (links split at it), no quote, backslash or control character. */
  put (d, p, "pattern", str ("^[^.\"\\\\\\x00-\\x1f]+$"));
  put (d, p, "maxLength", json_object_new_int (TG_NODE_ID_MAX));

  p = put (d, props, "type", obj (d));
  types = put (d, p, "enum", arr (d));
  for (int k = 0; k < n; k++)
    push (d, types, str (tg_registry_get (k)->type));

  p = put (d, props, "params", obj (d));
  put (d, p, "type", str ("object"));
  p = put (d, props, "ui", obj (d));
  put (d, p, "description",
       str ("Editor data (position, colour, ...), which the engine ignores, except bypass"));
  uiprops = put (d, p, "properties", obj (d));
  p = put (d, uiprops, "bypass", obj (d));
  put (d, p, "description",
       str ("Bypassed: the node does not run; its first output is its main input (the first "
            "input of that output's type) passed through"));
  put (d, p, "type", str ("boolean"));
  p = put (d, uiprops, "viewer_pin", obj (d));
  put (d, p, "description",
       str ("Pinned to the viewer (as Houdini's display flag): the app's viewer shows this "
            "node whatever is selected; at most one node has it. The engine ignores it"));
  put (d, p, "type", str ("boolean"));

  all = put (d, o, "allOf", arr (d));
  for (int k = 0; k < n; k++)
    {
      const TgNodeDesc *nd = tg_registry_get (k);
      json_object *rule = push (d, all, obj (d)), *cond, *then, *tp, *ref;
      char ref_text[256];

      cond = put (d, rule, "if", obj (d));
      tp = put (d, put (d, cond, "properties", obj (d)), "type", obj (d));
      put (d, tp, "const", str (nd->type));
      push (d, put (d, cond, "required", arr (d)), str ("type"));

      then = put (d, rule, "then", obj (d));
      if (has_required_param (nd))
        push (d, put (d, then, "required", arr (d)), str ("params"));
      ref = put (d, put (d, then, "properties", obj (d)), "params", obj (d));
      snprintf (ref_text, sizeof ref_text, "#/$defs/%s", nd->type);
      put (d, ref, "$ref", str (ref_text));
    }
  return o;
}

static json_object *
link_schema (Doc *d)
{
  json_object *o = obj (d), *props, *p, *req;

  put (d, o, "type", str ("object"));
  req = put (d, o, "required", arr (d));
  push (d, req, str ("from"));
  push (d, req, str ("to"));
  props = put (d, o, "properties", obj (d));
  p = put (d, props, "from", obj (d));
  put (d, p, "description", str ("Output port, \"node.port\"."));
  put (d, p, "type", str ("string"));
  put (d, p, "pattern", str ("^[^.]+\\.[^.]+$"));
  p = put (d, props, "to", obj (d));
  put (d, p, "description", str ("Input port, \"node.port\"."));
  put (d, p, "type", str ("string"));
  put (d, p, "pattern", str ("^[^.]+\\.[^.]+$"));
  put (d, o, "additionalProperties", json_object_new_boolean (0));
  return o;
}

static char *
finish (Doc *d, json_object *root)
{
  TgBuf b;
  char *text = NULL;

  if (!d->oom && root)
    {
      tg__buf_init (&b);
      tg__json_emit (&b, root, 0);
      tg__buf_putc (&b, '\n');
      text = tg__buf_steal (&b);
    }
  json_object_put (root);
  return text;
}

char *
tg_schema_generate (void)
{
  Doc d = { false };
  json_object *root = obj (&d), *props, *p, *req, *defs;
  int n = tg_registry_count ();

  put (&d, root, "$schema", str ("https://json-schema.org/draft/2020-12/schema"));
  put (&d, root, "$id", str (TG__SCHEMA_ID));
  put (&d, root, "title", str ("Terrane graph (.tgraph)"));
  put (&d, root, "description",
       str ("A Terrane node graph. Generated from the node registry of Terrane " TG_VERSION_STRING
            "; do not edit."));
  put (&d, root, "type", str ("object"));
  req = put (&d, root, "required", arr (&d));
  push (&d, req, str ("format"));
  push (&d, req, str ("version"));
  push (&d, req, str ("world"));
  push (&d, req, str ("nodes"));

  props = put (&d, root, "properties", obj (&d));
  p = put (&d, props, "format", obj (&d));
  put (&d, p, "const", str ("tgraph"));
  /* The schema describes the current version only: an older file uses
   * older parameter names, and Terrane upgrades it on loading. */
  p = put (&d, props, "version", obj (&d));
  put (&d, p, "description",
       str ("The format version; Terrane also reads older versions and upgrades them "
            "(`tgraph fmt` rewrites a file as this version)"));
  put (&d, p, "const", json_object_new_int (TG_FORMAT_VERSION));
  p = put (&d, props, "world", obj (&d));
  put (&d, p, "$ref", str ("#/$defs/world"));
  p = put (&d, props, "nodes", obj (&d));
  put (&d, p, "type", str ("array"));
  put (&d, p, "maxItems", json_object_new_int (TG_TGRAPH_MAX_NODES));
  put (&d, put (&d, p, "items", obj (&d)), "$ref", str ("#/$defs/node"));
  p = put (&d, props, "links", obj (&d));
  put (&d, p, "type", str ("array"));
  put (&d, put (&d, p, "items", obj (&d)), "$ref", str ("#/$defs/link"));

  defs = put (&d, root, "$defs", obj (&d));
  put (&d, defs, "world", world_schema (&d));
  put (&d, defs, "node", node_schema (&d));
  put (&d, defs, "link", link_schema (&d));
  for (int k = 0; k < n; k++)
    {
      const TgNodeDesc *nd = tg_registry_get (k);
      put (&d, defs, nd->type, params_schema (&d, nd));
    }
  return finish (&d, root);
}

/* --- catalogue ------------------------------------------------------------------------- */

static json_object *
port_json (Doc *d, const TgPortDesc *port, bool input)
{
  json_object *o = obj (d);

  put (d, o, "name", str (port->name));
  put (d, o, "type", str (tg_port_type_name (port->type)));
  put_nullable (d, o, "label", str_or_null (port->label));
  if (input)
    put (d, o, "optional", json_object_new_boolean (port->optional));
  put_nullable (d, o, "help", str_or_null (port->help));
  return o;
}

static json_object *
param_json (Doc *d, const TgParamDesc *p)
{
  json_object *o = obj (d), *def;
  bool oom = false, numeric;

  put (d, o, "name", str (p->name));
  put (d, o, "type", str (tg_param_type_name (p->type)));
  put_nullable (d, o, "label", str_or_null (p->label));
  put_nullable (d, o, "help", str_or_null (p->help));
  put_nullable (d, o, "unit", str_or_null (p->unit));
  put (d, o, "required", json_object_new_boolean ((p->flags & TG_PARAM_REQUIRED) != 0));
  def = (p->flags & TG_PARAM_REQUIRED) ? NULL : default_json (p, &oom);
  if (oom)
    d->oom = true;
  put_nullable (d, o, "default", def);
  numeric = p->type == TG_PARAM_FLOAT || p->type == TG_PARAM_INT || p->type == TG_PARAM_SEED
            || p->type == TG_PARAM_VEC2 || p->type == TG_PARAM_VEC3;
  if (numeric)
    {
      double smin, smax;
      tg_param_soft_range (p, &smin, &smax);
      put_nullable (d, o, "min", finite_bound (p->min) ? json_object_new_double (p->min) : NULL);
      put_nullable (d, o, "max", finite_bound (p->max) ? json_object_new_double (p->max) : NULL);
      put_nullable (d, o, "soft_min", finite_bound (smin) ? json_object_new_double (smin) : NULL);
      put_nullable (d, o, "soft_max", finite_bound (smax) ? json_object_new_double (smax) : NULL);
    }
  if (p->type == TG_PARAM_ENUM)
    {
      json_object *ch = put (d, o, "choices", arr (d));
      for (int k = 0; p->choices && p->choices[k]; k++)
        push (d, ch, str (p->choices[k]));
    }
  if (p->type == TG_PARAM_LIST)
    {
      json_object *fields;
      put (d, o, "min_items", json_object_new_int64 ((int64_t) p->min));
      put (d, o, "max_items", json_object_new_int64 ((int64_t) p->max));
      fields = put (d, o, "item_params", arr (d));
      for (int k = 0; k < p->n_item_params; k++)
        push (d, fields, param_json (d, &p->item_params[k]));
    }
  return o;
}

char *
tg_catalogue_json (void)
{
  Doc d = { false };
  json_object *root = obj (&d), *nodes;
  int n = tg_registry_count ();

  put (&d, root, "tgraph_version", str (TG_VERSION_STRING));
  put (&d, root, "format_version", json_object_new_int (TG_FORMAT_VERSION));
  nodes = put (&d, root, "nodes", arr (&d));
  for (int k = 0; k < n; k++)
    {
      const TgNodeDesc *nd = tg_registry_get (k);
      json_object *o = push (&d, nodes, obj (&d)), *list;

      put (&d, o, "type", str (nd->type));
      put (&d, o, "category", str (tg_category_name (nd->category)));
      put_nullable (&d, o, "label", str_or_null (nd->label));
      put_nullable (&d, o, "help", str_or_null (nd->help));
      put (&d, o, "locality", str (tg_locality_name (nd->locality)));
      put (&d, o, "export", json_object_new_boolean ((nd->flags & TG_NODE_EXPORT) != 0));
      put (&d, o, "input", json_object_new_boolean ((nd->flags & TG_NODE_INPUT) != 0));
      put (&d, o, "version", json_object_new_int (nd->version));
      list = put (&d, o, "inputs", arr (&d));
      for (int i = 0; i < nd->n_inputs; i++)
        push (&d, list, port_json (&d, &nd->inputs[i], true));
      list = put (&d, o, "outputs", arr (&d));
      for (int i = 0; i < nd->n_outputs; i++)
        push (&d, list, port_json (&d, &nd->outputs[i], false));
      list = put (&d, o, "params", arr (&d));
      for (int i = 0; i < nd->n_params; i++)
        push (&d, list, param_json (&d, &nd->params[i]));
    }
  return finish (&d, root);
}
