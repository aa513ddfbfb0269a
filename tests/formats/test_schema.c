/* The JSON Schema and the node catalogue generated from the registry:
 * valid JSON, deterministic, every registered node type present, and
 * each parameter type described the way the loader checks it. */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <tgformats/tgformats.h>

#include "fmt_test_nodes.h"
#include "tgtest.h"

static json_object *
parse_strict (const char *text)
{
  json_tokener *tok = json_tokener_new ();
  json_object *o;

  json_tokener_set_flags (tok, JSON_TOKENER_STRICT);
  o = json_tokener_parse_ex (tok, text, (int) strlen (text));
  TG_CHECK_MSG (json_tokener_get_error (tok) == json_tokener_success, "not JSON: %s",
                json_tokener_error_desc (json_tokener_get_error (tok)));
  TG_CHECK_INT_EQ (json_tokener_get_parse_end (tok), strlen (text));
  json_tokener_free (tok);
  return o;
}

/* The value at a '/'-separated pointer, or NULL. */
static json_object *
at (json_object *root, const char *pointer)
{
  json_object *o = NULL;

  if (json_pointer_get (root, pointer, &o) != 0)
    return NULL;
  return o;
}

static const char *
str_at (json_object *root, const char *pointer)
{
  json_object *o = at (root, pointer);
  return o && json_object_is_type (o, json_type_string) ? json_object_get_string (o) : "(none)";
}

static double
num_at (json_object *root, const char *pointer)
{
  json_object *o = at (root, pointer);
  return o ? json_object_get_double (o) : -12345.0;
}

static void
test_schema_is_json_and_deterministic (void)
{
  char *a = tg_schema_generate (), *b = tg_schema_generate ();
  json_object *root;

  TG_CHECK (a && b && strcmp (a, b) == 0);
  if (!a)
    return;
  TG_CHECK (a[strlen (a) - 1] == '\n');
  root = parse_strict (a);
  TG_CHECK (strcmp (str_at (root, "/$schema"), "https://json-schema.org/draft/2020-12/schema") == 0);
  TG_CHECK (strcmp (str_at (root, "/properties/format/const"), "tgraph") == 0);
  TG_CHECK (num_at (root, "/properties/version/const") == TG_FORMAT_VERSION);
  TG_CHECK (strcmp (str_at (root, "/$defs/link/properties/from/pattern"), "^[^.]+\\.[^.]+$") == 0);
  TG_CHECK (strcmp (str_at (root, "/$defs/link/properties/to/pattern"), "^[^.]+\\.[^.]+$") == 0);
  TG_CHECK (num_at (root, "/$defs/world/properties/resolution/maximum") == TG_RESOLUTION_MAX);
  TG_CHECK (num_at (root, "/$defs/world/properties/seed/maximum") == 4294967295.0);
  TG_CHECK (json_object_get_boolean (at (root, "/$defs/world/additionalProperties")) == 0);
  /* The layout is ours: two-space indent, small objects on one line. */
  TG_CHECK_STR_CONTAINS (a, "{\n  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n");
  TG_CHECK_STR_CONTAINS (a, "\"format\": { \"const\": \"tgraph\" },");
  json_object_put (root);
  free (a);
  free (b);
}

static void
test_schema_has_every_node_type (void)
{
  char *text = tg_schema_generate ();
  json_object *root = text ? parse_strict (text) : NULL, *types, *all;
  int n = tg_registry_count ();

  if (!root)
    return;
  types = at (root, "/$defs/node/properties/type/enum");
  all = at (root, "/$defs/node/allOf");
  TG_CHECK (types && (int) json_object_array_length (types) == n);
  TG_CHECK (all && (int) json_object_array_length (all) == n);
  TG_CHECK (n >= 2);
  for (int k = 0; k < n && types && all; k++)
    {
      const TgNodeDesc *d = tg_registry_get (k);
      json_object *rule = json_object_array_get_idx (all, (size_t) k), *defs, *props;
      char ref[256];

      TG_CHECK (strcmp (json_object_get_string (json_object_array_get_idx (types, (size_t) k)),
                        d->type) == 0);
      TG_CHECK (strcmp (str_at (rule, "/if/properties/type/const"), d->type) == 0);
      snprintf (ref, sizeof ref, "#/$defs/%s", d->type);
      TG_CHECK (strcmp (str_at (rule, "/then/properties/params/$ref"), ref) == 0);
      json_object_object_get_ex (root, "$defs", &defs);
      TG_CHECK_MSG (json_object_object_get_ex (defs, d->type, &props), "no $defs entry for %s",
                    d->type);
      if (props)
        {
          json_object *ap = NULL, *pp = NULL;
          json_object_object_get_ex (props, "additionalProperties", &ap);
          TG_CHECK (ap && !json_object_get_boolean (ap));
          json_object_object_get_ex (props, "properties", &pp);
          TG_CHECK_MSG (pp && json_object_object_length (pp) == d->n_params, "%s: params",
                        d->type);
          for (int p = 0; pp && p < d->n_params; p++)
            TG_CHECK_MSG (json_object_object_get_ex (pp, d->params[p].name, NULL), "%s.%s",
                          d->type, d->params[p].name);
        }
    }
  /* The real catalogue is in there. */
  TG_CHECK_STR_CONTAINS (text, "\"export.heightmap\"");
  TG_CHECK_STR_CONTAINS (text, "\"noise.fbm\"");
  TG_CHECK_STR_CONTAINS (text, "\"curve\"");
  json_object_put (root);
  free (text);
}

static void
test_schema_parameter_types (void)
{
  char *text = tg_schema_generate ();
  json_object *root = text ? parse_strict (text) : NULL;
  json_object *e;

  if (!root)
    return;
#define P "/$defs/test.all/properties/"
  TG_CHECK (strcmp (str_at (root, P "f/type"), "number") == 0);
  TG_CHECK (num_at (root, P "f/minimum") == -10 && num_at (root, P "f/maximum") == 10);
  TG_CHECK (num_at (root, P "f/default") == 0.25);
  TG_CHECK_STR_CONTAINS (str_at (root, P "f/description"), "Unit: m.");
  TG_CHECK (strcmp (str_at (root, P "f/title"), "F") == 0);
  TG_CHECK (strcmp (str_at (root, P "i/type"), "integer") == 0);
  TG_CHECK (num_at (root, P "i/minimum") == 1 && num_at (root, P "i/maximum") == 16);
  TG_CHECK (json_object_is_type (at (root, P "i/maximum"), json_type_int));
  TG_CHECK (strcmp (str_at (root, P "b/type"), "boolean") == 0);
  TG_CHECK (json_object_is_type (at (root, P "b/default"), json_type_boolean));
  e = at (root, P "e/enum");
  TG_CHECK (e && json_object_array_length (e) == 3
            && strcmp (json_object_get_string (json_object_array_get_idx (e, 2)), "gamma") == 0);
  TG_CHECK (strcmp (str_at (root, P "e/default"), "beta") == 0);
  TG_CHECK (num_at (root, P "seed/maximum") == 2147483647.0);
  TG_CHECK (strcmp (str_at (root, P "s/type"), "string") == 0);
  TG_CHECK (strcmp (str_at (root, P "s/default"), "hello") == 0);
  TG_CHECK (num_at (root, P "v2/minItems") == 2 && num_at (root, P "v2/maxItems") == 2);
  TG_CHECK (num_at (root, P "v3/minItems") == 3 && num_at (root, P "v3/maxItems") == 3);
  TG_CHECK (strcmp (str_at (root, P "v3/items/type"), "number") == 0);
  TG_CHECK (strcmp (str_at (root, P "col/pattern"), "^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$") == 0);
  TG_CHECK (strcmp (str_at (root, P "col/default"), "#ff8000") == 0);
  TG_CHECK (strcmp (str_at (root, P "curve/items/type"), "array") == 0);
  TG_CHECK (num_at (root, P "curve/items/minItems") == 2 && num_at (root, P "curve/items/maxItems") == 2);
  TG_CHECK (num_at (root, P "curve/items/items/maximum") == 1);
  TG_CHECK (num_at (root, P "curve/default/1/1") == 0.25);
#undef P
  /* Required parameters: required in params, and params required on the node. */
  TG_CHECK (strcmp (str_at (root, "/$defs/input.heightmap/required/0"), "path") == 0);
  TG_CHECK (at (root, "/$defs/input.heightmap/properties/path/default") == NULL);
  TG_CHECK (strcmp (str_at (root, "/$defs/export.heightmap/properties/path/pattern"), "") != 0);
  TG_CHECK (at (root, "/$defs/export.heightmap/properties/path/pattern") != NULL);
  json_object_put (root);
  free (text);
}

static void
test_catalogue (void)
{
  char *a = tg_catalogue_json (), *b = tg_catalogue_json ();
  json_object *root, *nodes, *all = NULL;
  int n = tg_registry_count ();

  TG_CHECK (a && b && strcmp (a, b) == 0);
  if (!a)
    return;
  root = parse_strict (a);
  TG_CHECK (strcmp (str_at (root, "/tgraph_version"), TG_VERSION_STRING) == 0);
  nodes = at (root, "/nodes");
  TG_CHECK (nodes && (int) json_object_array_length (nodes) == n);
  for (int k = 0; nodes && k < n; k++)
    {
      json_object *o = json_object_array_get_idx (nodes, (size_t) k);
      TG_CHECK (strcmp (str_at (o, "/type"), tg_registry_get (k)->type) == 0);
      if (strcmp (tg_registry_get (k)->type, "test.all") == 0)
        all = o;
    }
  TG_CHECK (all != NULL);
  if (all)
    {
      TG_CHECK (strcmp (str_at (all, "/category"), "Other") == 0);
      TG_CHECK (strcmp (str_at (all, "/locality"), "local") == 0);
      TG_CHECK (strcmp (str_at (all, "/inputs/0/name"), "height") == 0);
      TG_CHECK (json_object_get_boolean (at (all, "/inputs/0/optional")));
      TG_CHECK (strcmp (str_at (all, "/outputs/1/type"), "image") == 0);
      TG_CHECK (strcmp (str_at (all, "/params/0/name"), "f") == 0);
      TG_CHECK (strcmp (str_at (all, "/params/0/type"), "float") == 0);
      TG_CHECK (strcmp (str_at (all, "/params/0/unit"), "m") == 0);
      TG_CHECK (num_at (all, "/params/0/min") == -10 && num_at (all, "/params/0/max") == 10);
      TG_CHECK (num_at (all, "/params/0/default") == 0.25);
      TG_CHECK (strcmp (str_at (all, "/params/0/help"), "A float") == 0);
      TG_CHECK (strcmp (str_at (all, "/params/3/choices/1"), "beta") == 0);
      TG_CHECK (strcmp (str_at (all, "/params/3/default"), "beta") == 0);
      TG_CHECK (strcmp (str_at (all, "/params/8/default"), "#ff8000") == 0);
      TG_CHECK (at (all, "/params/1/unit") == NULL);
      TG_CHECK (json_object_get_boolean (at (all, "/params/1/required")) == 0);
    }
  {
    int k;
    for (k = 0; k < n && strcmp (tg_registry_get (k)->type, "input.heightmap") != 0; k++)
      ;
    if (k < n)
      {
        json_object *o = json_object_array_get_idx (nodes, (size_t) k);
        TG_CHECK (json_object_get_boolean (at (o, "/params/0/required")));
        TG_CHECK (at (o, "/params/0/default") == NULL);
        TG_CHECK (json_object_get_boolean (at (o, "/input")));
      }
  }
  json_object_put (root);
  free (a);
  free (b);
}

static void
write_file (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  if (f)
    {
      fputs (text, f);
      fclose (f);
    }
}

/* An independent validator (Python jsonschema, draft 2020-12) agrees: the
 * schema is a valid schema, what our saver writes validates, and files
 * the loader refuses for schema-level reasons fail.  Skipped when Python
 * or jsonschema is not installed. */
static void
test_schema_agrees_with_python_jsonschema (void)
{
  static const char *script =
    "import json, sys\n"
    "import jsonschema\n"
    "d = sys.argv[1]\n"
    "s = json.load(open(d + '/schema.json'))\n"
    "jsonschema.Draft202012Validator.check_schema(s)\n"
    "v = jsonschema.Draft202012Validator(s)\n"
    "good = json.load(open(d + '/good.json'))\n"
    "errs = [e.message for e in v.iter_errors(good)]\n"
    "assert not errs, errs\n"
    "cases = [\n"
    "  (['nodes', 0, 'params', 'i'], lambda g: g['nodes'][0]['params'].update(i=40)),\n"
    "  (['nodes', 0, 'params', 'i'], lambda g: g['nodes'][0]['params'].update(i=2.5)),\n"
    "  (['nodes', 0, 'params'], lambda g: g['nodes'][0]['params'].update(bogus=1)),\n"
    "  (['nodes', 0, 'params', 'e'], lambda g: g['nodes'][0]['params'].update(e='gama')),\n"
    "  (['nodes', 0, 'params', 'col'], lambda g: g['nodes'][0]['params'].update(col='#12345')),\n"
    "  (['nodes', 0, 'params', 'v2'], lambda g: g['nodes'][0]['params'].update(v2=[1])),\n"
    "  (['nodes', 0, 'params', 'curve', 1], lambda g: g['nodes'][0]['params'].update(curve=[[0, 0], [0.5]])),\n"
    "  (['nodes', 0, 'type'], lambda g: g['nodes'][0].update(type='noise.fbn')),\n"
    "  (['nodes', 0, 'id'], lambda g: g['nodes'][0].update(id='a.b')),\n"
    "  (['nodes', 2, 'params', 'path'], lambda g: g['nodes'][2]['params'].update(path='../x.png')),\n"
    "  (['links', 0, 'from'], lambda g: g['links'][0].update({'from': 'all'})),\n"
    "  (['world', 'resolution'], lambda g: g['world'].update(resolution=1)),\n"
    "  (['world'], lambda g: g['world'].update(heigth_m=1)),\n"
    "  (['version'], lambda g: g.update(version=3)),\n"
    "  (['version'], lambda g: g.update(version=1)),\n"
    "]\n"
    "for path, edit in cases:\n"
    "  g = json.loads(json.dumps(good))\n"
    "  edit(g)\n"
    "  errs = [list(e.absolute_path) for e in v.iter_errors(g)]\n"
    "  assert path in errs, (path, errs)\n"
    "print('  jsonschema agrees on', len(cases), 'bad files', file=sys.stderr)\n";
  char path[512], cmd[1024];
  const char *dir;
  const char *text =
    "{ \"format\": \"tgraph\", \"version\": 2,\n"
    "  \"world\": { \"size_m\": [100, 50], \"height_m\": 10, \"resolution\": 17, \"seed\": 3 },\n"
    "  \"nodes\": [ { \"id\": \"all\", \"type\": \"test.all\", \"ui\": { \"x\": 1 }, \"extra\": 1 },\n"
    "    { \"id\": \"c\", \"type\": \"curve\" },\n"
    "    { \"id\": \"x\", \"type\": \"export.heightmap\", \"params\": { \"path\": \"m/h.png\" } } ],\n"
    "  \"links\": [ { \"from\": \"all.height\", \"to\": \"c.height\" },\n"
    "    { \"from\": \"c.height\", \"to\": \"x.height\" } ],\n"
    "  \"tool\": \"kept\" }";
  TgGraph *g = NULL;
  TgError err = { 0 };
  char *schema, *saved;
  int rc;

  if (system ("python3 -c 'import jsonschema' > /dev/null 2>&1") != 0)
    {
      fprintf (stderr, "  (python3 jsonschema not installed: skipped)\n");
      return;
    }
  /* The program's one test folder, removed at exit. */
  dir = tgtest_tmpdir ("tgfmt-schema-");
  TG_CHECK (dir != NULL);
  if (!dir)
    return;
  TG_CHECK_INT_EQ (tg_tgraph_load_string (text, strlen (text), "/tmp", &g, &err), 0);
  if (!g)
    return;
  saved = tg_tgraph_save_string (g, &err);
  schema = tg_schema_generate ();
  snprintf (path, sizeof path, "%s/schema.json", dir);
  write_file (path, schema);
  snprintf (path, sizeof path, "%s/good.json", dir);
  write_file (path, saved);
  snprintf (path, sizeof path, "%s/check.py", dir);
  write_file (path, script);
  snprintf (cmd, sizeof cmd, "python3 '%s/check.py' '%s'", dir, dir);
  rc = system (cmd);
  TG_CHECK_MSG (rc == 0, "python jsonschema disagrees (exit %d)", rc);
  free (schema);
  free (saved);
  tg_graph_free (g);
}

int
main (void)
{
  TG_RUN (test_schema_is_json_and_deterministic);
  TG_RUN (test_schema_has_every_node_type);
  TG_RUN (test_schema_parameter_types);
  TG_RUN (test_catalogue);
  TG_RUN (test_schema_agrees_with_python_jsonschema);
  return tgtest_result ();
}
