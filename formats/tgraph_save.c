/* Saving a TgGraph as canonical .tgraph text.
 *
 * Canonical means one text per graph: keys in a fixed order (format,
 * version, world, nodes, links, then the keys we kept without knowing
 * them, in their original order), every parameter in descriptor order,
 * numbers in their shortest round-trip form.  So load -> save is a fixed
 * point and a one-value edit is a one-line diff.  The structure is written
 * by hand; values, "ui" blocks and unknown keys go through the emitter in
 * json_emit.c.
 */
#include <stdlib.h>
#include <string.h>

#include "tgformats-private.h"

static json_object *
parse_kept (const char *text, const char *path, const char *what, TgError *err, int *rc)
{
  json_object *o;
  bool ok;

  *rc = 0;
  o = tg__json_parse (text, &ok);
  if (!ok)
    *rc = tg_error_set (err, TG_EINVAL, path, "the kept %s is not valid JSON", what);
  return o;
}

/* The kept unknown keys: a JSON object, none of whose keys is one we write. */
static int
emit_extra (TgBuf *b, const char *text, const char *path, bool (*known) (const char *),
            int indent, TgError *err)
{
  json_object *o;
  int rc;

  if (!text)
    return 0;
  o = parse_kept (text, path, "unknown keys", err, &rc);
  if (rc)
    return rc;
  if (json_object_get_type (o) != json_type_object)
    {
      json_object_put (o);
      return tg_error_set (err, TG_EINVAL, path, "the kept unknown keys are not a JSON object");
    }
  json_object_object_foreach (o, key, val)
    {
      if (known (key))
        {
          rc = tg_error_set (err, TG_EINVAL, path, "a kept unknown key is named \"%s\", "
                             "which the format itself uses", key);
          break;
        }
      tg__buf_puts (b, ",\n");
      tg__buf_indent (b, indent);
      tg__json_put_string (b, key);
      tg__buf_puts (b, ": ");
      tg__json_emit (b, val, indent);
    }
  json_object_put (o);
  return rc;
}

static bool
top_key (const char *key)
{
  return !strcmp (key, "format") || !strcmp (key, "version") || !strcmp (key, "world")
         || !strcmp (key, "nodes") || !strcmp (key, "links");
}

static bool
node_key (const char *key)
{
  return !strcmp (key, "id") || !strcmp (key, "type") || !strcmp (key, "params")
         || !strcmp (key, "ui");
}

static int
emit_node (TgBuf *b, const TgGraph *g, int node, TgError *err)
{
  const TgNodeDesc *desc = tg_graph_node_desc (g, node);
  const char *ui = tg_graph_node_ui (g, node);
  char path[64];
  int rc;

  snprintf (path, sizeof path, "nodes[%d]", node);
  tg__buf_puts (b, "    {\n      \"id\": ");
  tg__json_put_string (b, tg_graph_node_id (g, node));
  tg__buf_puts (b, ",\n      \"type\": ");
  tg__json_put_string (b, desc->type);
  tg__buf_puts (b, ",\n      \"params\": ");
  if (desc->n_params == 0)
    tg__buf_puts (b, "{}");
  else
    {
      tg__buf_puts (b, "{\n");
      for (int k = 0; k < desc->n_params; k++)
        {
          const TgParamDesc *d = &desc->params[k];
          const TgParamValue *v = tg_graph_get_param_at (g, node, k);
          json_object *o;
          bool oom = false;

          o = v ? tg__param_to_json (d, v, &oom) : NULL;
          if (oom)
            return tg_error_set (err, TG_ENOMEM, path, TG_MSG_OUT_OF_MEMORY);
          tg__buf_indent (b, 8);
          tg__json_put_string (b, d->name);
          tg__buf_puts (b, ": ");
          tg__json_emit (b, o, 8);
          tg__buf_puts (b, k + 1 < desc->n_params ? ",\n" : "\n");
          json_object_put (o);
        }
      tg__buf_puts (b, "      }");
    }
  if (ui || tg_graph_node_bypass (g, node))
    {
      json_object *o;
      char ui_path[80];
      snprintf (ui_path, sizeof ui_path, "%s.ui", path);
      rc = 0;
      o = ui ? parse_kept (ui, ui_path, "ui block", err, &rc) : json_object_new_object ();
      if (!ui && !o)
        return tg_error_set (err, TG_ENOMEM, path, TG_MSG_OUT_OF_MEMORY);
      if (rc)
        return rc;
      /* The flag on the graph is the truth; the loader took it out of "ui". */
      if (json_object_is_type (o, json_type_object))
        {
          json_object_object_del (o, "bypass");
          if (tg_graph_node_bypass (g, node)
              && json_object_object_add (o, "bypass", json_object_new_boolean (1)) < 0)
            {
              json_object_put (o);
              return tg_error_set (err, TG_ENOMEM, path, TG_MSG_OUT_OF_MEMORY);
            }
        }
      tg__buf_puts (b, ",\n      \"ui\": ");
      tg__json_emit (b, o, 6);
      json_object_put (o);
    }
  rc = emit_extra (b, tg_graph_node_extra (g, node), path, node_key, 6, err);
  if (rc)
    return rc;
  tg__buf_puts (b, "\n    }");
  return 0;
}

char *
tg_tgraph_save_string (const TgGraph *g, TgError *err)
{
  const TgWorld *w;
  TgBuf b;
  int n_nodes, n_links, rc = 0;

  if (err)
    tg_error_clear (err);
  if (!g)
    {
      tg_error_set (err, TG_EINVAL, "", "no graph to save");
      return NULL;
    }
  w = tg_graph_world_const (g);
  n_nodes = tg_graph_n_nodes (g);
  n_links = tg_graph_n_links (g);

  tg__buf_init (&b);
  tg__buf_printf (&b, "{\n  \"format\": \"tgraph\",\n  \"version\": %d,\n", TG_FORMAT_VERSION);
  tg__buf_puts (&b, "  \"world\": {\n    \"size_m\": [");
  tg__json_put_double (&b, w->size_x);
  tg__buf_puts (&b, ", ");
  tg__json_put_double (&b, w->size_z);
  tg__buf_puts (&b, "],\n    \"height_m\": ");
  tg__json_put_double (&b, w->height_m);
  tg__buf_printf (&b, ",\n    \"resolution\": %d,\n    \"seed\": %u\n  },\n", w->resolution,
                  (unsigned) w->seed);

  tg__buf_puts (&b, "  \"nodes\": [");
  for (int k = 0; k < n_nodes && rc == 0; k++)
    {
      tg__buf_puts (&b, k ? ",\n" : "\n");
      rc = emit_node (&b, g, k, err);
    }
  tg__buf_puts (&b, n_nodes ? "\n  ],\n" : "],\n");

  tg__buf_puts (&b, "  \"links\": [");
  for (int k = 0; k < n_links && rc == 0; k++)
    {
      const TgLink *l = tg_graph_link (g, k);
      const TgNodeDesc *fd = tg_graph_node_desc (g, l->from_node);
      const TgNodeDesc *td = tg_graph_node_desc (g, l->to_node);
      TgBuf end;

      tg__buf_puts (&b, k ? ",\n    { \"from\": " : "\n    { \"from\": ");
      tg__buf_init (&end);
      tg__buf_printf (&end, "%s.%s", tg_graph_node_id (g, l->from_node),
                      fd->outputs[l->from_port].name);
      tg__json_put_string (&b, end.data ? end.data : "");
      tg__buf_clear (&end);
      tg__buf_puts (&b, ", \"to\": ");
      tg__buf_printf (&end, "%s.%s", tg_graph_node_id (g, l->to_node),
                      td->inputs[l->to_port].name);
      tg__json_put_string (&b, end.data ? end.data : "");
      tg__buf_clear (&end);
      tg__buf_puts (&b, " }");
    }
  tg__buf_puts (&b, n_links ? "\n  ]" : "]");

  if (rc == 0)
    rc = emit_extra (&b, tg_graph_extra (g), "", top_key, 2, err);
  tg__buf_puts (&b, "\n}\n");

  if (rc)
    {
      tg__buf_clear (&b);
      return NULL;
    }
  if (b.oom)
    {
      tg__buf_clear (&b);
      tg_error_set (err, TG_ENOMEM, "", TG_MSG_OUT_OF_MEMORY);
      return NULL;
    }
  return tg__buf_steal (&b);
}

int
tg_tgraph_save_file (const TgGraph *g, const char *path, TgError *err)
{
  TgError local;
  char *text;
  int rc;

  if (!err)
    err = &local;
  if (!path)
    return tg_error_set (err, TG_EINVAL, "", TG_MSG_NO_FILE_TO_SAVE);
  text = tg_tgraph_save_string (g, err);
  if (!text)
    return err->code ? err->code : TG_ENOMEM;
  rc = tg__write_file_atomic (path, text, strlen (text), err);
  free (text);
  return rc;
}
