/* The version 1 -> 2 upgrade (formats/tgraph_migrate.c): every row of the
 * rename table loads from a version 1 file under its new name, the table
 * agrees with the registry (so it cannot go stale), the upgrade keeps "ui"
 * and unknown keys, and errors about renamed parameters point at the keys
 * as the file spells them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tgformats-private.h"
#include "tgtest.h"

#define HEAD_V1                                                                            \
  "{\n"                                                                                    \
  "  \"format\": \"tgraph\",\n"                                                            \
  "  \"version\": 1,\n"                                                                    \
  "  \"world\": { \"size_m\": [1000, 1000], \"height_m\": 100, \"resolution\": 33, \"seed\": 7 },\n"

/* A version 1 document with NODES from line 6. */
static const char *
doc_v1 (const char *nodes, const char *links)
{
  static char buf[4][8192];
  static int k;
  char *b = buf[k++ & 3];

  snprintf (b, sizeof buf[0], HEAD_V1 "  \"nodes\": [\n%s\n  ],\n  \"links\": [\n%s\n  ]\n}\n",
            nodes, links ? links : "");
  return b;
}

/* Line and column of the first NEEDLE in TEXT (shares no code with the locator). */
static void
pos_of (const char *text, const char *needle, int *line, int *col)
{
  const char *at = strstr (text, needle);

  *line = 1;
  *col = 1;
  TG_CHECK_MSG (at != NULL, "test bug: \"%s\" not in the document", needle);
  for (const char *p = text; at && p < at; p++)
    {
      if (*p == '\n')
        {
          (*line)++;
          *col = 1;
        }
      else
        (*col)++;
    }
}

static const TgParamDesc *
find_param (const TgParamDesc *params, int n, const char *name)
{
  for (int k = 0; k < n; k++)
    if (strcmp (params[k].name, name) == 0)
      return &params[k];
  return NULL;
}

/* The descriptor a row's new name stands for: the parameter, or the list's item field. */
static const TgParamDesc *
row_desc (const TgTgraphRename *r, const char *name)
{
  const TgNodeDesc *nd = tg_registry_lookup (r->type);
  const TgParamDesc *list;

  if (!nd)
    return NULL;
  if (!r->list)
    return find_param (nd->params, nd->n_params, name);
  list = find_param (nd->params, nd->n_params, r->list);
  if (!list || list->type != TG_PARAM_LIST)
    return NULL;
  return find_param (list->item_params, list->n_item_params, name);
}

/* The table names real types and parameters: each new name is a
 * parameter (or list field) of its type today and no old name is, rows
 * are unique, and the public lookup answers from the same rows. */
static void
test_rename_table_matches_registry (void)
{
  TG_CHECK (tg__tgraph_n_renames_v2 > 0);
  for (int k = 0; k < tg__tgraph_n_renames_v2; k++)
    {
      const TgTgraphRename *r = &tg__tgraph_renames_v2[k];
      TG_CHECK_MSG (tg_registry_lookup (r->type) != NULL, "row %d: no node type %s", k, r->type);
      TG_CHECK_MSG (row_desc (r, r->new_name) != NULL, "row %d: %s has no %s%s%s", k, r->type,
                    r->list ? r->list : "", r->list ? " field " : "parameter ", r->new_name);
      TG_CHECK_MSG (row_desc (r, r->old_name) == NULL, "row %d: %s still has %s", k, r->type,
                    r->old_name);
      TG_CHECK_MSG (strcmp (r->old_name, r->new_name) != 0, "row %d renames to itself", k);
      for (int q = 0; q < k; q++)
        {
          const TgTgraphRename *o = &tg__tgraph_renames_v2[q];
          bool same_place = strcmp (o->type, r->type) == 0
                            && (o->list ? r->list && strcmp (o->list, r->list) == 0 : !r->list);
          TG_CHECK_MSG (!(same_place && strcmp (o->old_name, r->old_name) == 0),
                        "rows %d and %d rename the same name", q, k);
          TG_CHECK_MSG (!(same_place && strcmp (o->new_name, r->new_name) == 0),
                        "rows %d and %d give the same new name", q, k);
        }
      if (!r->list)
        TG_CHECK (tg_tgraph_param_new_name (r->type, r->old_name) == r->new_name);
    }
  TG_CHECK (tg_tgraph_param_new_name ("field.box", "centre_m") != NULL
            && strcmp (tg_tgraph_param_new_name ("field.box", "centre_m"), "center_m") == 0);
  TG_CHECK (tg_tgraph_param_new_name ("field.box", "center_m") == NULL);
  TG_CHECK (tg_tgraph_param_new_name ("gen.shape", "centre_m") == NULL);
  TG_CHECK (tg_tgraph_param_new_name ("texture.biome", "height_min") == NULL); /* a list field */
  TG_CHECK (tg_tgraph_param_new_name (NULL, "min") == NULL);
}

/* A value of D's type that is not its default, as JSON text, and how to
 * compare it with what was loaded. */
static bool
test_value (const TgParamDesc *d, char *json, size_t size, TgParamValue *want)
{
  memset (want, 0, sizeof *want);
  want->type = d->type;
  switch (d->type)
    {
    case TG_PARAM_FLOAT:
      {
        double lo, hi;
        tg_param_soft_range (d, &lo, &hi);
        want->f = lo + 0.375 * (hi - lo);
        if (want->f == d->def)
          want->f = lo + 0.625 * (hi - lo);
        snprintf (json, size, "%.17g", want->f);
        return true;
      }
    case TG_PARAM_VEC3:
      want->v[0] = 1.5;
      want->v[1] = -2.25;
      want->v[2] = 3;
      snprintf (json, size, "[1.5, -2.25, 3]");
      return true;
    default:
      return false;
    }
}

static bool
value_is (const TgParamValue *got, const TgParamValue *want)
{
  if (!got || got->type != want->type)
    return false;
  if (want->type == TG_PARAM_FLOAT)
    return got->f == want->f;
  return got->v[0] == want->v[0] && got->v[1] == want->v[1] && got->v[2] == want->v[2];
}

/* Every row: a version 1 file with the old name loads (without the
 * validator, since one node alone may lack its input links), and the value
 * is under the new name; saving writes version 2 and the new name only. */
static void
test_every_rename_loads_under_new_name (void)
{
  for (int k = 0; k < tg__tgraph_n_renames_v2; k++)
    {
      const TgTgraphRename *r = &tg__tgraph_renames_v2[k];
      const TgParamDesc *d = row_desc (r, r->new_name);
      char value[64], node[512], key[80];
      const char *text;
      TgParamValue want;
      TgTgraphLoadInfo info = { 0 };
      TgGraph *g = NULL;
      TgError err = { 0 };
      char *saved;

      if (!d || !test_value (d, value, sizeof value, &want))
        {
          TG_CHECK_MSG (0, "row %d (%s %s): no test value for this parameter type", k, r->type,
                        r->new_name);
          continue;
        }
      if (r->list)
        snprintf (node, sizeof node,
                  "    { \"id\": \"n\", \"type\": \"%s\",\n"
                  "      \"params\": { \"%s\": [ { \"%s\": %s } ] } }",
                  r->type, r->list, r->old_name, value);
      else
        snprintf (node, sizeof node,
                  "    { \"id\": \"n\", \"type\": \"%s\", \"params\": { \"%s\": %s } }", r->type,
                  r->old_name, value);
      text = doc_v1 (node, NULL);
      if (tg_tgraph_load_string_info (text, strlen (text), "/tmp", TG_TGRAPH_LOAD_NO_VALIDATE,
                                      &info, &g, &err)
          < 0)
        {
          TG_CHECK_MSG (0, "row %d (%s %s): %s: %s", k, r->type, r->old_name, err.path,
                        err.message);
          continue;
        }
      TG_CHECK_INT_EQ (info.version, 1);
      TG_CHECK_INT_EQ (info.n_renamed, 1);
      if (r->list)
        {
          const TgParamValue *list = tg_graph_get_param (g, 0, r->list);
          const TgParamDesc *ld = row_desc (&(TgTgraphRename){ r->type, NULL, "", "" }, r->list);
          int f = (int) (d - ld->item_params);
          TG_CHECK_MSG (list && list->n_items == 1
                          && value_is (tg_param_list_field (list, 0, f), &want),
                        "row %d: %s[0].%s lost its value", k, r->list, r->new_name);
        }
      else
        TG_CHECK_MSG (value_is (tg_graph_get_param (g, 0, r->new_name), &want),
                      "row %d: %s.%s lost its value", k, r->type, r->new_name);
      saved = tg_tgraph_save_string (g, &err);
      TG_CHECK (saved != NULL);
      if (saved)
        {
          TG_CHECK_STR_CONTAINS (saved, "\"version\": 2,");
          snprintf (key, sizeof key, "\"%s\":", r->new_name);
          TG_CHECK_STR_CONTAINS (saved, key);
          snprintf (key, sizeof key, "\"%s\":", r->old_name);
          TG_CHECK_MSG (strstr (saved, key) == NULL, "row %d: saved %s", k, key);
        }
      free (saved);
      tg_graph_free (g);
    }
}

/* The upgrade changes names only: "ui", unknown keys on nodes and at the
 * top level, and the order of the parameters stay as they were. */
static void
test_upgrade_keeps_ui_and_unknown_keys (void)
{
  const char *text = doc_v1 (
    "    { \"id\": \"b\", \"type\": \"field.box\", \"note\": { \"by\": \"x\" },\n"
    "      \"params\": { \"rounding_m\": 1, \"centre_m\": [1, 2, 3] },\n"
    "      \"ui\": { \"x\": 5, \"q\": [1] } }",
    NULL);
  json_object *root, *jb, *params;
  TgGraph *g = NULL;
  TgError err = { 0 };
  TgRenameLog log = { 0 };
  char *saved;
  size_t n;

  /* The tree: renamed in place, in the same key order. */
  root = tg__json_parse (text, &(bool){ false });
  TG_CHECK (root != NULL);
  if (!root)
    return;
  TG_CHECK_INT_EQ (tg__tgraph_migrate_v1 (root, &log, &err), 0);
  TG_CHECK (log.n == 1 && log.v[0].node == 0 && log.v[0].item == -1);
  jb = json_object_array_get_idx (json_object_object_get (root, "nodes"), 0);
  params = json_object_object_get (jb, "params");
  n = 0;
  json_object_object_foreach (params, key, val)
    {
      (void) val;
      TG_CHECK (strcmp (key, n == 0 ? "rounding_m" : "center_m") == 0);
      n++;
    }
  TG_CHECK (n == 2);
  tg__rename_log_clear (&log);
  json_object_put (root);

  /* The graph and what a save writes. */
  TG_CHECK_INT_EQ (tg_tgraph_load_string (text, strlen (text), "/tmp", &g, &err), 0);
  if (!g)
    return;
  TG_CHECK_STR_CONTAINS (tg_graph_node_ui (g, 0), "\"q\"");
  saved = tg_tgraph_save_string (g, &err);
  TG_CHECK (saved != NULL);
  if (saved)
    {
      TG_CHECK_STR_CONTAINS (saved, "        \"center_m\": [1, 2, 3],\n");
      TG_CHECK_STR_CONTAINS (saved,
                             "      \"ui\": {\n        \"x\": 5,\n        \"q\": [1]\n      },\n");
      TG_CHECK_STR_CONTAINS (saved, "      \"note\": { \"by\": \"x\" }\n");
      TG_CHECK (strstr (saved, "centre_m") == NULL);
    }
  free (saved);
  tg_graph_free (g);
}

/* Loads TEXT expecting CODE at PATH (new names) with MSG, placed where
 * NEEDLE (old names) starts. */
static void
expect_error_at (int src_line, const char *text, int code, const char *path, const char *msg,
                 const char *needle)
{
  TgGraph *g = NULL;
  TgError err = { 0 };
  int rc = tg_tgraph_load_string (text, strlen (text), "/tmp", &g, &err), line, col;

  pos_of (text, needle, &line, &col);
  TG_CHECK_MSG (rc == code, "line %d: rc %d, want %d; %s: %s", src_line, rc, code, err.path,
                err.message);
  TG_CHECK_MSG (strcmp (err.path, path) == 0, "line %d: path \"%s\", want \"%s\"", src_line,
                err.path, path);
  TG_CHECK_MSG (strstr (err.message, msg) != NULL, "line %d: message \"%s\" lacks \"%s\"",
                src_line, err.message, msg);
  TG_CHECK_MSG (err.line == line && err.column == col, "line %d: at %d:%d, want %d:%d (%s)",
                src_line, err.line, err.column, line, col, err.message);
  TG_CHECK_MSG (strcmp (err.node_id, "n") == 0, "line %d: node id \"%s\"", src_line, err.node_id);
  tg_graph_free (g);
}

#define EXPECT_ERROR(text, code, path, msg, needle) \
  expect_error_at (__LINE__, text, code, path, msg, needle)

/* Errors about a renamed parameter: the path has the new name (as the
 * graph knows it), the line and column are those of the old key's value. */
static void
test_errors_point_at_old_keys (void)
{
  /* The loader's own checks (types, ranges). */
  EXPECT_ERROR (doc_v1 ("    { \"id\": \"n\", \"type\": \"field.sphere\",\n"
                        "      \"params\": { \"radius_m\": 2, \"centre_m\": [1, 2] } }",
                        NULL),
                TG_ETYPE, "nodes[0].params.center_m", "expected an array of 3 numbers", "[1, 2]");
  EXPECT_ERROR (doc_v1 ("    { \"id\": \"n\", \"type\": \"select.slope\",\n"
                        "      \"params\": { \"max_deg\": 95 } }",
                        NULL),
                TG_ERANGE, "nodes[0].params.max_slope_deg", "expected a number in 0..90, got 95",
                "95");
  /* In a list item (the second one), and the item itself. */
  EXPECT_ERROR (doc_v1 ("    { \"id\": \"n\", \"type\": \"texture.biome\",\n"
                        "      \"params\": { \"rules\": [\n"
                        "      { \"name\": \"a\", \"heat_max\": 0.5 },\n"
                        "      { \"name\": \"b\", \"heat_max\": \"hot\" } ] } }",
                        NULL),
                TG_ETYPE, "nodes[0].params.rules[1].max_heat", "expected a number", "\"hot\"");
  /* A node's own check, run by the validator after the upgrade. */
  EXPECT_ERROR (doc_v1 ("    { \"id\": \"g\", \"type\": \"gen.constant\" },\n"
                        "    { \"id\": \"n\", \"type\": \"texture.biome\",\n"
                        "      \"params\": { \"rules\": [\n"
                        "      { \"name\": \"a\", \"height_min\": 0.7, \"height_max\": 0.2 } ] } }",
                        "    { \"from\": \"g.height\", \"to\": \"n.height\" }"),
                TG_ERANGE, "nodes[1].params.rules[0].max_height", "0.2 is below min_height (0.7)",
                "0.2 }");
  EXPECT_ERROR (doc_v1 ("    { \"id\": \"g\", \"type\": \"gen.constant\" },\n"
                        "    { \"id\": \"n\", \"type\": \"filter.remap\",\n"
                        "      \"params\": { \"in_min\": 0.4, \"in_max\": 0.4 } }",
                        "    { \"from\": \"g.height\", \"to\": \"n.height\" }"),
                TG_ERANGE, "nodes[1].params.max_input", "input high must differ", "0.4 }");
  /* Both names of one parameter: the version 2 name is the stranger. */
  EXPECT_ERROR (doc_v1 ("    { \"id\": \"n\", \"type\": \"field.torus\",\n"
                        "      \"params\": { \"centre_m\": [0, 0, 0], \"center_m\": [1, 1, 1] } }",
                        NULL),
                TG_EUNKNOWN, "nodes[0].params.center_m",
                "\"center_m\" is the version 2 name of \"centre_m\", and this version 1 file gives "
                "both",
                "[1, 1, 1]");
}

/* The log maps paths back to the text's names, and leaves the rest alone. */
static void
test_text_path (void)
{
  static const TgTgraphRename box = { "field.box", NULL, "centre_m", "center_m" };
  static const TgTgraphRename heat = { "texture.biome", "rules", "heat_max", "max_heat" };
  TgRenamed v[] = { { 2, -1, &box }, { 3, 1, &heat } };
  TgRenameLog log = { v, 2, 2 };
  char out[TG_ERROR_PATH_MAX];

  tg__rename_log_text_path (&log, "nodes[2].params.center_m[1]", out, sizeof out);
  TG_CHECK (strcmp (out, "nodes[2].params.centre_m[1]") == 0);
  tg__rename_log_text_path (&log, "nodes[2].params.center_m", out, sizeof out);
  TG_CHECK (strcmp (out, "nodes[2].params.centre_m") == 0);
  tg__rename_log_text_path (&log, "nodes[1].params.center_m", out, sizeof out);
  TG_CHECK (strcmp (out, "nodes[1].params.center_m") == 0);
  tg__rename_log_text_path (&log, "nodes[3].params.rules[1].max_heat", out, sizeof out);
  TG_CHECK (strcmp (out, "nodes[3].params.rules[1].heat_max") == 0);
  tg__rename_log_text_path (&log, "nodes[3].params.rules[0].max_heat", out, sizeof out);
  TG_CHECK (strcmp (out, "nodes[3].params.rules[0].max_heat") == 0);
  tg__rename_log_text_path (&log, "nodes[3].params.rules[1]", out, sizeof out);
  TG_CHECK (strcmp (out, "nodes[3].params.rules[1]") == 0);
  tg__rename_log_text_path (&log, "links[0].from", out, sizeof out);
  TG_CHECK (strcmp (out, "links[0].from") == 0);
  tg__rename_log_text_path (NULL, "nodes[2].params.center_m", out, sizeof out);
  TG_CHECK (strcmp (out, "nodes[2].params.center_m") == 0);
}

/* A version 2 file is not upgraded: its info says so, and an old name in
 * it is an unknown parameter whose message gives the new one. */
static void
test_version_2_is_read_as_written (void)
{
  const char *text = "{ \"format\": \"tgraph\", \"version\": 2,\n"
                     "  \"world\": { \"size_m\": [100, 100], \"height_m\": 10, \"resolution\": 17, "
                     "\"seed\": 1 },\n"
                     "  \"nodes\": [ { \"id\": \"n\", \"type\": \"field.box\",\n"
                     "    \"params\": { \"%s\": [0, 0, 0] } } ] }";
  char buf[512];
  TgTgraphLoadInfo info = { 0 };
  TgGraph *g = NULL;
  TgError err = { 0 };

  snprintf (buf, sizeof buf, text, "center_m");
  TG_CHECK_INT_EQ (tg_tgraph_load_string_info (buf, strlen (buf), "/tmp", 0, &info, &g, &err), 0);
  TG_CHECK_INT_EQ (info.version, 2);
  TG_CHECK_INT_EQ (info.n_renamed, 0);
  tg_graph_free (g);
  g = NULL;
  snprintf (buf, sizeof buf, text, "centre_m");
  TG_CHECK_INT_EQ (tg_tgraph_load_string (buf, strlen (buf), "/tmp", &g, &err), TG_EUNKNOWN);
  TG_CHECK (strcmp (err.path, "nodes[0].params.centre_m") == 0);
  TG_CHECK_STR_CONTAINS (err.message, "version 2 calls it \"center_m\"");
  TG_CHECK (g == NULL);
}

int
main (void)
{
  TG_RUN (test_rename_table_matches_registry);
  TG_RUN (test_every_rename_loads_under_new_name);
  TG_RUN (test_upgrade_keeps_ui_and_unknown_keys);
  TG_RUN (test_errors_point_at_old_keys);
  TG_RUN (test_text_path);
  TG_RUN (test_version_2_is_read_as_written);
  return tgtest_result ();
}
