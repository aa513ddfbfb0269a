/* TgDocument's undo steps: what each kind keeps, its size, and how it
 * takes the document from one side of it to the other (see
 * tg-document.c for the list; tg-document.c records and swaps them). */
#include "config.h"

#include "tg-document-private.h"

#include <string.h>
#include <tgformats/tgformats.h>

Step *
tg_document__step_new (StepKind kind, const char *label, TgDocChange change)
{
  Step *s = g_new0 (Step, 1);

  s->kind = kind;
  s->label = g_strdup (label);
  s->change = change;
  return s;
}

void
tg_document__step_free (gpointer p)
{
  Step *s = p;

  g_free (s->label);
  if (s->graph)
    tg_graph_free (s->graph);
  for (int k = 0; k < s->n_ui; k++)
    {
      g_free (s->ui_ids[k]);
      if (s->kind == STEP_UI)
        {
          g_free (s->ui_before[k]);
          g_free (s->ui_after[k]);
        }
    }
  g_free (s->ui_ids);
  g_free (s->ui_before);
  g_free (s->ui_after);
  g_free (s->extra_before);
  g_free (s->extra_after);
  g_free (s->node);
  g_free (s->param);
  g_free (s->param_dir);
  if (s->kind == STEP_PARAM)
    {
      tg_param_value_clear (&s->value_before);
      tg_param_value_clear (&s->value_after);
    }
  g_free (s->new_id);
  if (s->part)
    tg_graph_free (s->part);
  g_strfreev (s->link_ends);
  if (s->removed)
    tg_graph_free (s->removed);
  g_free (s->removed_at);
  g_free (s->bypass_before);
  g_free (s->links_removed);
  g_free (s->links_removed_at);
  g_free (s);
}

static gsize
str_size (const char *s)
{
  return s ? strlen (s) + 1 : 0;
}

static gsize
value_size (const TgParamValue *v)
{
  gsize n = sizeof *v + str_size (v->s) + sizeof (double) * 2 * (gsize) MAX (v->n_points, 0);

  for (int k = 0; v->items && k < v->n_items * v->n_item_params; k++)
    n += value_size (&v->items[k]);
  return n;
}

/* What step S holds, in bytes (a close estimate: the strings and arrays;
 * a whole graph counted as its .tgraph text). */
static gsize
step_size (const Step *s)
{
  gsize n = sizeof *s + str_size (s->label);

  if (s->graph)
    {
      TgError err = { 0 };
      g_autofree char *text = tg_tgraph_save_string (s->graph, &err);
      n += str_size (text);
    }
  for (int k = 0; k < s->n_ui; k++)
    n += 3 * sizeof (char *) + str_size (s->ui_ids[k])
         + (s->kind == STEP_UI ? str_size (s->ui_before[k]) + str_size (s->ui_after[k]) : 0);
  n += str_size (s->extra_before) + str_size (s->extra_after) + str_size (s->node)
       + str_size (s->param) + str_size (s->new_id) + str_size (s->param_dir);
  if (s->kind == STEP_PARAM)
    n += value_size (&s->value_before) + value_size (&s->value_after);
  if (s->part)
    {
      TgError err = { 0 };
      g_autofree char *text = tg_tgraph_save_string (s->part, &err);
      n += str_size (text);
    }
  for (int k = 0; s->link_ends && s->link_ends[k]; k++)
    n += sizeof (char *) + str_size (s->link_ends[k]);
  if (s->removed)
    {
      TgError err = { 0 };
      g_autofree char *text = tg_tgraph_save_string (s->removed, &err);
      n += str_size (text) + sizeof (int) * (gsize) tg_graph_n_nodes (s->removed);
    }
  n += (sizeof (TgLink) + sizeof (int)) * (gsize) s->n_links_removed;
  if (s->bypass_before)
    n += sizeof (gboolean) * (gsize) s->n_ui;
  return n;
}

gsize
tg_document_get_undo_size (TgDocument *doc)
{
  gsize n = 0;

  for (GList *l = doc->undo.head; l; l = l->next)
    n += step_size (l->data);
  for (GList *l = doc->redo.head; l; l = l->next)
    n += step_size (l->data);
  return n;
}

/* Undo and redo of a rename: the same nodes in the same order with
 * other ids. */
static void
emit_renames (TgDocument *doc, const TgGraph *from, const TgGraph *to)
{
  int n = tg_graph_n_nodes (from);

  if (n != tg_graph_n_nodes (to))
    return;
  for (int k = 0; k < n; k++)
    if (tg_graph_node_desc (from, k) != tg_graph_node_desc (to, k))
      return;
  for (int k = 0; k < n; k++)
    if (strcmp (tg_graph_node_id (from, k), tg_graph_node_id (to, k)))
      tg_document__emit_renamed (doc, tg_graph_node_id (from, k), tg_graph_node_id (to, k));
}

/* A PARAM step's input paths in the terms of the graph's folder, which a
 * Save As since may have changed. */
static void
rebase_step_values (TgDocument *doc, Step *s, int n)
{
  const TgNodeDesc *d = tg_graph_node_desc (doc->graph, n);
  int k = tg_node_desc_find_param (d, s->param);
  g_autofree char *cwd = g_get_current_dir ();
  g_autofree char *from = g_canonicalize_filename (s->param_dir, cwd);
  g_autofree char *to = g_canonicalize_filename (tg_graph_base_dir (doc->graph), cwd);

  if (k < 0)
    return;
  tg_document__rebase_param (&d->params[k], &s->value_before, from, to);
  tg_document__rebase_param (&d->params[k], &s->value_after, from, to);
  g_free (s->param_dir);
  s->param_dir = g_strdup (tg_graph_base_dir (doc->graph));
}

/* Nodes kept in a step (PART) in the terms of the graph's folder, which
 * a Save As since may have changed: input paths are relative to it. */
static void
rebase_part (TgDocument *doc, TgGraph *part)
{
  const char *dir = tg_graph_base_dir (doc->graph);

  if (strcmp (tg_graph_base_dir (part), dir))
    {
      tg_document__rebase_inputs (part, dir);
      tg_graph_set_base_dir (part, dir);
    }
}

/* SPLICE undone: keeps the appended nodes (with their links) in S and
 * takes them out of the graph, links first, from the end. */
static void
append_take (TgDocument *doc, Step *s)
{
  const TgGraph *g = doc->graph;
  int n0 = tg_graph_n_nodes (g) - s->n_nodes, l0 = tg_graph_n_links (g) - s->n_links;
  GPtrArray *ends = g_ptr_array_new ();
  TgError err = { 0 };

  s->part = tg_graph_new ();
  tg_graph_set_base_dir (s->part, tg_graph_base_dir (g));
  for (int k = n0; k < tg_graph_n_nodes (g); k++)
    tg_graph_insert_node_copy (s->part, k - n0, g, k, &err);
  for (int l = l0; l < tg_graph_n_links (g); l++)
    {
      const TgLink *lk = tg_graph_link (g, l);
      g_ptr_array_add (ends, g_strdup (tg_graph_node_id (g, lk->from_node)));
      g_ptr_array_add (ends, g_strdup (tg_graph_node_desc (g, lk->from_node)
                                         ->outputs[lk->from_port].name));
      g_ptr_array_add (ends, g_strdup (tg_graph_node_id (g, lk->to_node)));
      g_ptr_array_add (ends, g_strdup (tg_graph_node_desc (g, lk->to_node)
                                         ->inputs[lk->to_port].name));
    }
  g_ptr_array_add (ends, NULL);
  s->link_ends = (char **) g_ptr_array_free (ends, FALSE);
  for (int l = tg_graph_n_links (doc->graph) - 1; l >= l0; l--)
    tg_graph_remove_link (doc->graph, l);
  tg_document__truncate_nodes (doc, n0);
}

/* SPLICE redone: the kept nodes and links back at the end. */
static void
append_put (TgDocument *doc, Step *s)
{
  TgError err = { 0 };

  rebase_part (doc, s->part);
  for (int k = 0; k < tg_graph_n_nodes (s->part); k++)
    if (tg_graph_insert_node_copy (doc->graph, tg_graph_n_nodes (doc->graph), s->part, k, &err)
        >= 0)
      tg_document__append_node_ui (doc, tg_graph_n_nodes (doc->graph) - 1);
  for (int k = 0; s->link_ends[k]; k += 4)
    tg_graph_add_link (doc->graph, s->link_ends[k], s->link_ends[k + 1], s->link_ends[k + 2],
                       s->link_ends[k + 3], &err);
  g_clear_pointer (&s->part, tg_graph_free);
  g_clear_pointer (&s->link_ends, g_strfreev);
}

/* The index entries of the nodes from LO on (their indices moved). */
static void
reindex_from (TgDocument *doc, int lo)
{
  for (int k = MAX (lo, 0); k < tg_graph_n_nodes (doc->graph); k++)
    g_hash_table_insert (doc->index, g_strdup (tg_graph_node_id (doc->graph, k)),
                         GINT_TO_POINTER (k + 1));
}

/* Takes out of the graph what S keeps as taken: its links, from the
 * last, then its nodes, from the last. */
static void
splice_cut (TgDocument *doc, Step *s)
{
  int n = s->removed ? tg_graph_n_nodes (s->removed) : 0;

  for (int k = s->n_links_removed - 1; k >= 0; k--)
    tg_graph_remove_link (doc->graph, s->links_removed_at[k]);
  for (int k = n - 1; k >= 0; k--)
    {
      int at = s->removed_at[k];
      g_hash_table_remove (doc->index, tg_graph_node_id (doc->graph, at));
      tg_graph_remove_node (doc->graph, at);
      g_array_remove_index (doc->ui, (guint) at);
    }
  if (n)
    reindex_from (doc, s->removed_at[0]);
}

void
tg_document__splice_take (TgDocument *doc, Step *s, const int *nodes, int n, const int *links,
                          int n_links)
{
  const TgGraph *g = doc->graph;
  int nn = tg_graph_n_nodes (g), nl = tg_graph_n_links (g), count = 0;
  g_autofree char *gone = g_new0 (char, nn + 1);
  g_autofree char *cut = g_new0 (char, nl + 1);
  TgError err = { 0 };

  for (int k = 0; k < n; k++)
    if (nodes[k] >= 0 && nodes[k] < nn)
      gone[nodes[k]] = 1;
  for (int k = 0; k < n_links; k++)
    if (links[k] >= 0 && links[k] < nl)
      cut[links[k]] = 1;
  for (int l = 0; l < nl; l++)
    {
      const TgLink *lk = tg_graph_link (g, l);
      cut[l] |= gone[lk->from_node] | gone[lk->to_node];
      count += cut[l];
    }
  s->links_removed = g_new (TgLink, count + 1);
  s->links_removed_at = g_new (int, count + 1);
  for (int l = 0; l < nl; l++)
    if (cut[l])
      {
        s->links_removed[s->n_links_removed] = *tg_graph_link (g, l);
        s->links_removed_at[s->n_links_removed++] = l;
      }
  count = 0;
  for (int k = 0; k < nn; k++)
    count += gone[k];
  if (count)
    {
      s->removed = tg_graph_new ();
      tg_graph_set_base_dir (s->removed, tg_graph_base_dir (g));
      s->removed_at = g_new (int, count);
      count = 0;
      for (int k = 0; k < nn; k++)
        if (gone[k] && tg_graph_insert_node_copy (s->removed, count, g, k, &err) >= 0)
          s->removed_at[count++] = k;
    }
  splice_cut (doc, s);
}

void
tg_document__splice_put_back (TgDocument *doc, Step *s)
{
  int n = s->removed ? tg_graph_n_nodes (s->removed) : 0;
  TgError err = { 0 };

  if (n)
    rebase_part (doc, s->removed);
  for (int k = 0; k < n; k++)
    {
      int at = s->removed_at[k];
      TgNodeUi u;
      tg_graph_insert_node_copy (doc->graph, at, s->removed, k, &err);
      tg_document__parse_node_ui (tg_graph_node_ui (doc->graph, at), &u);
      g_array_insert_val (doc->ui, (guint) at, u);
    }
  if (n)
    reindex_from (doc, s->removed_at[0]);
  /* In ascending order, each goes where it was among those before it. */
  for (int k = 0; k < s->n_links_removed; k++)
    tg_graph_insert_link (doc->graph, s->links_removed_at[k], &s->links_removed[k], &err);
}

/* Takes the document from one side of step S to the other: FORWARD (redo)
 * from its state before to after, or back (undo). */
void
tg_document__step_apply (TgDocument *doc, Step *s, gboolean forward)
{
  TgError err = { 0 };

  switch (s->kind)
    {
    case STEP_GRAPH:
      {
        TgGraph *g = doc->graph;
        emit_renames (doc, doc->graph, s->graph);
        doc->graph = s->graph;
        s->graph = g;
        tg_document__reload_ui (doc);
        break;
      }
    case STEP_BYPASS:
      /* Back in reverse, should an id repeat. */
      for (int i = 0; i < s->n_ui; i++)
        {
          int k = forward ? i : s->n_ui - 1 - i;
          tg_graph_set_node_bypass (doc->graph, tg_document_find_node (doc, s->ui_ids[k]),
                                    forward ? s->bypass_after : s->bypass_before[k]);
        }
      break;
    case STEP_UI:
      for (int k = 0; k < s->n_ui; k++)
        {
          int n = tg_document_find_node (doc, s->ui_ids[k]);
          if (n >= 0)
            tg_document__set_node_ui (doc, n, forward ? s->ui_after[k] : s->ui_before[k]);
        }
      if (s->has_extra)
        {
          tg_graph_set_extra (doc->graph, forward ? s->extra_after : s->extra_before);
          tg_document__reload_frames (doc);
        }
      break;
    case STEP_PARAM:
      {
        int n = tg_document_find_node (doc, s->node);
        if (n >= 0 && s->param_dir && strcmp (s->param_dir, tg_graph_base_dir (doc->graph)))
          rebase_step_values (doc, s, n);
        /* Unchecked: the value before may be an unset path. */
        if (n >= 0)
          tg_graph_restore_param (doc->graph, n, s->param,
                                  forward ? &s->value_after : &s->value_before, &err);
        break;
      }
    case STEP_WORLD:
      *tg_graph_world (doc->graph) = forward ? s->world_after : s->world_before;
      break;
    case STEP_RENAME:
      {
        const char *from = forward ? s->node : s->new_id, *to = forward ? s->new_id : s->node;
        int n = tg_document_find_node (doc, from);
        if (n >= 0 && tg_graph_set_node_id (doc->graph, n, to, &err) == 0)
          {
            tg_document__emit_renamed (doc, from, to);
            g_hash_table_remove (doc->index, from);
            g_hash_table_insert (doc->index, g_strdup (to), GINT_TO_POINTER (n + 1));
          }
        break;
      }
    case STEP_SPLICE:
      if (forward)
        {
          splice_cut (doc, s);
          append_put (doc, s);
        }
      else
        {
          append_take (doc, s);
          tg_document__splice_put_back (doc, s);
        }
      break;
    }
}
