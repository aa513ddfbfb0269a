/* TgDocument's clipboard: nodes as .tgraph text, pasted with fresh ids. */
#include "config.h"

#include "tg-document-private.h"

#include <glib/gi18n.h>
#include <string.h>
#include <tgformats/tgformats.h>

char *
tg_document_copy_text (TgDocument *doc, const char *const *ids, GError **error)
{
  g_autoptr (GHashTable) keep = g_hash_table_new (g_str_hash, g_str_equal);
  g_autofree int *idx = NULL;
  TgGraph *part;
  TgError err = { 0 };
  char *text;
  int n = 0, total;

  for (int k = 0; ids && ids[k]; k++)
    g_hash_table_add (keep, (gpointer) ids[k]);
  part = tg_graph_copy (doc->graph);
  total = tg_graph_n_nodes (part);
  idx = g_new (int, total + 1);
  for (int k = 0; k < total; k++)
    if (!g_hash_table_contains (keep, tg_graph_node_id (part, k)))
      idx[n++] = k;
  /* Removing a node removes its links, so only links inside the selection stay. */
  tg_document__remove_nodes (part, idx, n);
  for (int k = 0; k < tg_graph_n_nodes (part); k++)
    {
      double x, y;
      tg_document_get_position (doc, tg_graph_node_id (part, k), &x, &y);
      tg_document__set_ui_position (part, k, x, y);
    }
  text = tg_tgraph_save_string (part, &err);
  tg_graph_free (part);
  if (!text)
    tg_document__set_tg_error (error, &err, NULL);
  return text;
}

/* Adds the nodes of SRC to the document's graph with fresh ids, their
 * top-left at (X, Y), and the links among them, at the end.  Returns the
 * new ids, or NULL with ERROR and the graph as it was. */
static char **
merge_graph (TgDocument *doc, const TgGraph *src, double x, double y, GError **error)
{
  TgGraph *work = doc->graph;
  int n = tg_graph_n_nodes (src), n0 = tg_graph_n_nodes (work), l0 = tg_graph_n_links (work);
  g_autoptr (GHashTable) taken = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  double min_x = G_MAXDOUBLE, min_y = G_MAXDOUBLE;
  double *px, *py;
  TgError err = { 0 };
  char **result = NULL;

  if (!tg_document__room_for (work, n, error))
    return NULL;
  px = g_new (double, n + 1);
  py = g_new (double, n + 1);

  for (int k = 0; k < n; k++)
    {
      TgNodeUi u;
      tg_document__parse_node_ui (tg_graph_node_ui (src, k), &u);
      px[k] = u.has_position ? u.x : k * 240;
      py[k] = u.has_position ? u.y : 0;
      min_x = MIN (min_x, px[k]);
      min_y = MIN (min_y, py[k]);
    }
  for (int k = 0; k < n; k++)
    {
      char *id = tg_document__unique_id (doc, tg_graph_node_id (src, k), taken);
      gboolean ok;

      g_ptr_array_add (ids, id);
      g_hash_table_add (taken, id);
      ok = tg_document__copy_node (work, src, k, id, &err);
      if (tg_graph_n_nodes (work) > (int) doc->ui->len)
        {
          int m = tg_graph_n_nodes (work) - 1;
          /* The pin stays on the node it was on (one per graph). */
          g_autofree char *ui = tg_document__ui_with_flag (tg_graph_node_ui (work, m),
                                                           "viewer_pin", FALSE);
          tg_graph_set_node_ui (work, m, ui);
          tg_document__set_ui_position (work, m, px[k] - min_x + x, py[k] - min_y + y);
          tg_document__append_node_ui (doc, m);
        }
      if (!ok)
        {
          tg_document__set_tg_error (error, &err, NULL);
          goto out;
        }
    }
  for (int l = 0; l < tg_graph_n_links (src); l++)
    {
      const TgLink *lk = tg_graph_link (src, l);
      const TgNodeDesc *fd = tg_graph_node_desc (src, lk->from_node);
      const TgNodeDesc *td = tg_graph_node_desc (src, lk->to_node);
      if (tg_graph_add_link (work, g_ptr_array_index (ids, lk->from_node),
                             fd->outputs[lk->from_port].name, g_ptr_array_index (ids, lk->to_node),
                             td->inputs[lk->to_port].name, &err) < 0)
        {
          tg_document__set_tg_error (error, &err, NULL);
          goto out;
        }
    }
  g_ptr_array_add (ids, NULL);
  result = (char **) g_ptr_array_steal (ids, NULL);
out:
  if (!result)
    tg_document__roll_back_append (doc, n0, l0);
  g_free (px);
  g_free (py);
  return result;
}

char **
tg_document_paste_text (TgDocument *doc, const char *text, double x, double y, GError **error)
{
  TgGraph *src = NULL;
  TgError err = { 0 };
  char **ids;
  int n0 = tg_graph_n_nodes (doc->graph), l0 = tg_graph_n_links (doc->graph);

  if (!text
      || tg_tgraph_load_string_ex (text, strlen (text), tg_graph_base_dir (doc->graph),
                                   TG_TGRAPH_LOAD_NO_VALIDATE, &src, &err) < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("The clipboard holds no Terrane nodes"));
      return NULL;
    }
  if (tg_graph_n_nodes (src) == 0)
    {
      tg_graph_free (src);
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("The clipboard holds no Terrane nodes"));
      return NULL;
    }
  ids = merge_graph (doc, src, x, y, error);
  tg_graph_free (src);
  if (!ids)
    return NULL;
  tg_document__commit_append (doc, n0, l0, _("Paste"), TG_DOC_CHANGE_NODES | TG_DOC_CHANGE_LINKS, NULL);
  return ids;
}

char **
tg_document_duplicate (TgDocument *doc, const char *const *ids, double dx, double dy,
                       GError **error)
{
  g_autofree char *text = tg_document_copy_text (doc, ids, error);
  double min_x = G_MAXDOUBLE, min_y = G_MAXDOUBLE;
  char **result;

  if (!text)
    return NULL;
  for (int k = 0; ids && ids[k]; k++)
    {
      double x, y;
      if (tg_document_get_position (doc, ids[k], &x, &y))
        min_x = MIN (min_x, x), min_y = MIN (min_y, y);
    }
  if (min_x == G_MAXDOUBLE)
    return NULL;
  result = tg_document_paste_text (doc, text, min_x + dx, min_y + dy, error);
  if (result)
    {
      Step *s = g_queue_peek_head (&doc->undo);
      g_free (s->label);
      s->label = g_strdup (_("Duplicate"));
    }
  return result;
}
