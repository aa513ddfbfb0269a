/* TgDocument: the graph a window edits, with undo and change signals.
 *
 * The engine graph holds the nodes, parameters and links; the document
 * keeps beside it what the canvas reads on every frame, typed: each
 * node's position and flags (parsed from its "ui" block once, when the
 * node enters the document), an id -> index map, and the frames.  A
 * command writes the ui blocks of the nodes it changes, so the graph is
 * always what gets saved, and a file nobody changed saves byte for byte.
 *
 * Undo steps keep only what their command changed: a move the node ids
 * with their ui blocks before and after, a parameter its two values, a
 * rename the two ids.  Edits of nodes and links are splices: the nodes
 * and links a delete, a disconnect or a replaced link took out of the
 * middle of the graph, with their indices (undo inserts them back there,
 * so the file saves in its old order, byte for byte), then the nodes and
 * links an add, a connect or a paste appended (once undone, kept to add
 * again); a bypass keeps the nodes' flags.  Only a restore keeps the
 * whole graph from before.  Input paths are relative to the file's
 * folder, which Save As changes: steps that keep them keep their folder
 * and rebase them when the graph has moved.  The steps live in
 * tg-document-steps.c; this file records them and swaps them.
 */
#include "config.h"

#include "tg-document-private.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <tgformats/tgformats.h>

#define UNDO_DEPTH 200
/* Changes of one parameter closer together than this join one undo step. */
#define MERGE_USEC (1500 * 1000)

enum
{
  PROP_0,
  PROP_DIRTY,
  PROP_CAN_UNDO,
  PROP_CAN_REDO,
  PROP_FILE,
  N_PROPS
};

enum
{
  SIGNAL_CHANGED,
  SIGNAL_RENAMED,
  N_SIGNALS
};

static GParamSpec *props[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (TgDocument, tg_document, G_TYPE_OBJECT)

G_DEFINE_QUARK (tg-document-error-quark, tg_document_error)

static int untitled_count;


gboolean
tg_document__set_tg_error (GError **error, const TgError *err, const char *prefix)
{
  char buf[TG_ERROR_MESSAGE_MAX + TG_ERROR_PATH_MAX + 8];

  tg_error_format (err, buf, sizeof buf);
  if (prefix && err->line > 0)
    g_set_error (error, TG_DOCUMENT_ERROR, -err->code, "%s:%d:%d: %s", prefix, err->line,
                 err->column, buf);
  else if (prefix)
    g_set_error (error, TG_DOCUMENT_ERROR, -err->code, "%s: %s", prefix, buf);
  else
    g_set_error_literal (error, TG_DOCUMENT_ERROR, -err->code, buf);
  return FALSE;
}

static void
tg_document_finalize (GObject *object)
{
  TgDocument *doc = TG_DOCUMENT (object);

  tg_graph_free (doc->graph);
  g_array_unref (doc->ui);
  g_hash_table_unref (doc->index);
  tg_document_frames_free (doc->frames, doc->n_frames);
  g_clear_object (&doc->file);
  g_queue_clear_full (&doc->undo, tg_document__step_free);
  g_queue_clear_full (&doc->redo, tg_document__step_free);
  g_free (doc->merge_key);
  g_free (doc->untitled_key);
  g_free (doc->recovery_path);
  G_OBJECT_CLASS (tg_document_parent_class)->finalize (object);
}

static void
tg_document_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TgDocument *doc = TG_DOCUMENT (object);

  switch (prop_id)
    {
    case PROP_DIRTY:
      g_value_set_boolean (value, tg_document_get_dirty (doc));
      break;
    case PROP_CAN_UNDO:
      g_value_set_boolean (value, tg_document_can_undo (doc));
      break;
    case PROP_CAN_REDO:
      g_value_set_boolean (value, tg_document_can_redo (doc));
      break;
    case PROP_FILE:
      g_value_set_object (value, doc->file);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
tg_document_class_init (TgDocumentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = tg_document_finalize;
  object_class->get_property = tg_document_get_property;

  props[PROP_DIRTY] = g_param_spec_boolean ("dirty", NULL, NULL, FALSE,
                                            G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_CAN_UNDO] = g_param_spec_boolean ("can-undo", NULL, NULL, FALSE,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_CAN_REDO] = g_param_spec_boolean ("can-redo", NULL, NULL, FALSE,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  props[PROP_FILE] = g_param_spec_object ("file", NULL, NULL, G_TYPE_FILE,
                                          G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, props);

  /* changed (TgDocChange flags, node id or NULL) */
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass),
                                          G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE,
                                          2, G_TYPE_UINT, G_TYPE_STRING);
  /* renamed (old id, new id): before the "changed" of a rename, and of an
   * undo or redo that renames, so views can carry their state over. */
  signals[SIGNAL_RENAMED] = g_signal_new ("renamed", G_TYPE_FROM_CLASS (klass),
                                          G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE,
                                          2, G_TYPE_STRING, G_TYPE_STRING);
}

static void
tg_document_init (TgDocument *doc)
{
  TgWorld *w;

  doc->graph = tg_graph_new ();
  w = tg_graph_world (doc->graph);
  tg_world_init_default (w);
  doc->ui = g_array_new (FALSE, TRUE, sizeof (TgNodeUi));
  doc->index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_queue_init (&doc->undo);
  g_queue_init (&doc->redo);
  doc->serial = doc->saved_serial = doc->next_serial = 1;
  doc->untitled_key = g_strdup_printf ("untitled-%ld-%u", (long) getpid (),
                                       g_atomic_int_add (&untitled_count, 1));
}

TgDocument *
tg_document_new (void)
{
  return g_object_new (TG_TYPE_DOCUMENT, NULL);
}

const TgGraph *
tg_document_get_graph (TgDocument *doc)
{
  return doc->graph;
}

TgGraph *
tg_document_snapshot (TgDocument *doc)
{
  return tg_graph_copy (doc->graph);
}

GFile *
tg_document_get_file (TgDocument *doc)
{
  return doc->file;
}

char *
tg_document_dup_title (TgDocument *doc)
{
  if (doc->file)
    return g_file_get_basename (doc->file);
  return g_strdup (_("Untitled"));
}

gboolean
tg_document_get_dirty (TgDocument *doc)
{
  return doc->serial != doc->saved_serial;
}

gboolean
tg_document_can_undo (TgDocument *doc)
{
  return !g_queue_is_empty (&doc->undo);
}

gboolean
tg_document_can_redo (TgDocument *doc)
{
  return !g_queue_is_empty (&doc->redo);
}

const char *
tg_document_undo_label (TgDocument *doc)
{
  Step *s = g_queue_peek_head (&doc->undo);
  return s ? s->label : NULL;
}

const char *
tg_document_redo_label (TgDocument *doc)
{
  Step *s = g_queue_peek_head (&doc->redo);
  return s ? s->label : NULL;
}

/* Notifies the state properties after any change of graph or serial. */
static void
notify_state (TgDocument *doc, gboolean was_dirty, gboolean could_undo, gboolean could_redo)
{
  if (was_dirty != tg_document_get_dirty (doc))
    g_object_notify_by_pspec (G_OBJECT (doc), props[PROP_DIRTY]);
  if (could_undo != tg_document_can_undo (doc))
    g_object_notify_by_pspec (G_OBJECT (doc), props[PROP_CAN_UNDO]);
  if (could_redo != tg_document_can_redo (doc))
    g_object_notify_by_pspec (G_OBJECT (doc), props[PROP_CAN_REDO]);
}

/* Records S (its command already applied to the document) as the newest
 * undo step, or folds it into the newest one when MERGE_KEY continues it
 * (a slider drag: the step keeps the state from before the drag). */
void
tg_document__commit_step (TgDocument *doc, Step *s, const char *merge_key, const char *node_id)
{
  gboolean was_dirty = tg_document_get_dirty (doc);
  gboolean could_undo = tg_document_can_undo (doc);
  gboolean could_redo = tg_document_can_redo (doc);
  gint64 now = g_get_monotonic_time ();
  Step *head = g_queue_peek_head (&doc->undo);
  TgDocChange change = s->change;

  s->serial_before = doc->serial;
  doc->serial = ++doc->next_serial;
  s->serial_after = doc->serial;
  if (merge_key && doc->merge_key && !strcmp (merge_key, doc->merge_key)
      && now - doc->merge_time < MERGE_USEC && head && head->kind == s->kind
      && (s->kind == STEP_PARAM || s->kind == STEP_WORLD || s->kind == STEP_GRAPH)
      && !g_strcmp0 (head->param_dir, s->param_dir))
    {
      /* The newest step already holds the state from before the drag. */
      head->serial_after = s->serial_after;
      if (s->kind == STEP_PARAM)
        {
          tg_param_value_clear (&head->value_after);
          head->value_after = s->value_after;
          memset (&s->value_after, 0, sizeof s->value_after);
        }
      else if (s->kind == STEP_WORLD)
        head->world_after = s->world_after;
      /* A GRAPH step's graph is the state between: dropped with it. */
      tg_document__step_free (s);
    }
  else
    {
      g_queue_push_head (&doc->undo, s);
      while (g_queue_get_length (&doc->undo) > UNDO_DEPTH)
        tg_document__step_free (g_queue_pop_tail (&doc->undo));
    }
  g_queue_clear_full (&doc->redo, tg_document__step_free);
  g_free (doc->merge_key);
  doc->merge_key = g_strdup (merge_key);
  doc->merge_time = now;

  notify_state (doc, was_dirty, could_undo, could_redo);
  g_signal_emit (doc, signals[SIGNAL_CHANGED], 0, (guint) change, node_id);
}

/* Makes WORK (a modified copy) the document's graph; the old graph
 * becomes the undo step. */
void
tg_document__commit (TgDocument *doc, TgGraph *work, const char *label, const char *merge_key,
        TgDocChange change, const char *node_id)
{
  Step *s = tg_document__step_new (STEP_GRAPH, label, change);

  s->graph = doc->graph;
  doc->graph = work;
  tg_document__reload_ui (doc);
  tg_document__commit_step (doc, s, merge_key, node_id);
}

void
tg_document__emit_renamed (TgDocument *doc, const char *old_id, const char *new_id)
{
  g_signal_emit (doc, signals[SIGNAL_RENAMED], 0, old_id, new_id);
}

void
tg_document_end_merge (TgDocument *doc)
{
  g_clear_pointer (&doc->merge_key, g_free);
}

/* The ui block of node N becomes UI, in the graph and the typed state. */
void
tg_document__set_node_ui (TgDocument *doc, int n, const char *ui)
{
  tg_graph_set_node_ui (doc->graph, n, ui);
  tg_document__parse_node_ui (ui, &g_array_index (doc->ui, TgNodeUi, n));
}

static gboolean
swap_step (TgDocument *doc, GQueue *from, GQueue *to, gboolean forward)
{
  gboolean was_dirty = tg_document_get_dirty (doc);
  gboolean could_undo = tg_document_can_undo (doc);
  gboolean could_redo = tg_document_can_redo (doc);
  Step *s = g_queue_pop_head (from);

  if (!s)
    return FALSE;
  tg_document__step_apply (doc, s, forward);
  doc->serial = forward ? s->serial_after : s->serial_before;
  g_queue_push_head (to, s);
  tg_document_end_merge (doc);
  notify_state (doc, was_dirty, could_undo, could_redo);
  g_signal_emit (doc, signals[SIGNAL_CHANGED], 0, (guint) TG_DOC_CHANGE_ALL, NULL);
  return TRUE;
}

gboolean
tg_document_undo (TgDocument *doc)
{
  return swap_step (doc, &doc->undo, &doc->redo, FALSE);
}

gboolean
tg_document_redo (TgDocument *doc)
{
  return swap_step (doc, &doc->redo, &doc->undo, TRUE);
}

/* --- files ------------------------------------------------------------------ */

static void
replace_graph (TgDocument *doc, TgGraph *g, GFile *file)
{
  gboolean could_undo = tg_document_can_undo (doc);
  gboolean could_redo = tg_document_can_redo (doc);

  tg_graph_free (doc->graph);
  doc->graph = g;
  tg_document__reload_ui (doc);
  g_queue_clear_full (&doc->undo, tg_document__step_free);
  g_queue_clear_full (&doc->redo, tg_document__step_free);
  tg_document_end_merge (doc);
  doc->serial = doc->saved_serial = ++doc->next_serial;
  g_clear_pointer (&doc->recovery_path, g_free);
  g_set_object (&doc->file, file);
  g_object_notify_by_pspec (G_OBJECT (doc), props[PROP_FILE]);
  g_object_notify_by_pspec (G_OBJECT (doc), props[PROP_DIRTY]);
  notify_state (doc, FALSE, could_undo, could_redo);
  g_signal_emit (doc, signals[SIGNAL_CHANGED], 0, (guint) TG_DOC_CHANGE_ALL, NULL);
}

gboolean
tg_document_load (TgDocument *doc, GFile *file, GError **error)
{
  g_autofree char *path = g_file_get_path (file);
  g_autofree char *name = g_file_get_basename (file);
  TgError err = { 0 };
  TgGraph *g = NULL;

  if (!path)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("%s: only local files can be opened"), name);
      return FALSE;
    }
  if (tg_tgraph_load_file_ex (path, TG_TGRAPH_LOAD_NO_VALIDATE, &g, &err) < 0)
    return tg_document__set_tg_error (error, &err, name);
  replace_graph (doc, g, file);
  return TRUE;
}

/* PATH relative to the folder FROM (both absolute and canonical), with
 * ".." where it leaves FROM.  Caller frees. */
static char *
relative_path (const char *from, const char *path)
{
  g_auto (GStrv) a = g_strsplit (from, G_DIR_SEPARATOR_S, -1);
  g_auto (GStrv) b = g_strsplit (path, G_DIR_SEPARATOR_S, -1);
  GString *out = g_string_new (NULL);
  int k = 0;

  while (a[k] && b[k] && !strcmp (a[k], b[k]))
    k++;
  for (int i = k; a[i]; i++)
    if (*a[i])
      g_string_append (out, ".." G_DIR_SEPARATOR_S);
  for (int i = k; b[i]; i++)
    {
      g_string_append (out, b[i]);
      if (b[i + 1])
        g_string_append_c (out, G_DIR_SEPARATOR);
    }
  return g_string_free (out, FALSE);
}

/* Input path V, relative to FROM_DIR, made relative to TO_DIR so that it
 * names the same file; absolute and empty paths stay.  TRUE if changed. */
static gboolean
rebase_value (TgParamValue *v, const char *from_dir, const char *to_dir)
{
  g_autofree char *abs = NULL, *rel = NULL;

  if (!v->s || !*v->s || g_path_is_absolute (v->s))
    return FALSE;
  abs = g_canonicalize_filename (v->s, from_dir);
  rel = relative_path (to_dir, abs);
  if (!strcmp (rel, v->s))
    return FALSE;
  free (v->s);
  v->s = strdup (rel);
  return TRUE;
}

/* Rewrites the relative input paths of G (its own and in list items) from
 * its base folder to DIR, the folder of the file it is saved to: input
 * paths are relative to the .tgraph file, and Save As elsewhere must not
 * lose the files.  Returns the number of paths changed. */
gboolean
tg_document__rebase_param (const TgParamDesc *pd, TgParamValue *v, const char *from, const char *to)
{
  gboolean any = FALSE;

  if (pd->type == TG_PARAM_INPUT_PATH)
    return rebase_value (v, from, to);
  for (int i = 0; pd->type == TG_PARAM_LIST && i < v->n_items; i++)
    for (int k = 0; k < pd->n_item_params; k++)
      if (pd->item_params[k].type == TG_PARAM_INPUT_PATH)
        any |= rebase_value (tg_param_list_field_mut (v, i, k), from, to);
  return any;
}

int
tg_document__rebase_inputs (TgGraph *g, const char *dir)
{
  g_autofree char *cwd = g_get_current_dir ();
  g_autofree char *from = g_canonicalize_filename (tg_graph_base_dir (g), cwd);
  g_autofree char *to = g_canonicalize_filename (dir, cwd);
  int changed = 0;

  if (!strcmp (from, to))
    return 0;
  for (int n = 0; n < tg_graph_n_nodes (g); n++)
    {
      const TgNodeDesc *d = tg_graph_node_desc (g, n);
      for (int p = 0; p < d->n_params; p++)
        {
          const TgParamDesc *pd = &d->params[p];
          const TgParamValue *cur = tg_graph_get_param_at (g, n, p);
          TgParamValue v;
          TgError err = { 0 };

          if (!cur || (pd->type != TG_PARAM_INPUT_PATH && pd->type != TG_PARAM_LIST))
            continue;
          if (tg_param_value_copy (&v, cur) < 0)
            continue;
          if (tg_document__rebase_param (pd, &v, from, to)
              && tg_graph_set_param (g, n, pd->name, &v, &err) == 0)
            changed++;
          tg_param_value_clear (&v);
        }
    }
  return changed;
}

gboolean
tg_document_save (TgDocument *doc, GFile *file, GError **error)
{
  g_autofree char *text = NULL;
  g_autoptr (GFile) parent = NULL;
  g_autofree char *dir = NULL;
  gboolean was_dirty = tg_document_get_dirty (doc);
  TgGraph *work;
  TgError err = { 0 };
  int rebased = 0;

  if (!file)
    file = doc->file;
  g_return_val_if_fail (G_IS_FILE (file), FALSE);
  parent = g_file_get_parent (file);
  dir = parent ? g_file_get_path (parent) : NULL;
  work = tg_graph_copy (doc->graph);
  if (dir)
    {
      rebased = tg_document__rebase_inputs (work, dir);
      tg_graph_set_base_dir (work, dir);
    }
  text = tg_tgraph_save_string (work, &err);
  if (!text)
    {
      tg_graph_free (work);
      return tg_document__set_tg_error (error, &err, NULL);
    }
  /* g_file_replace_contents writes a temporary file and renames it. */
  if (!g_file_replace_contents (file, text, strlen (text), NULL, FALSE, G_FILE_CREATE_NONE, NULL,
                                NULL, error))
    {
      tg_graph_free (work);
      return FALSE;
    }
  /* The same graph in the new folder's terms; not an undo step (the older
   * steps keep their own folder and stay right). */
  tg_graph_free (doc->graph);
  doc->graph = work;
  doc->saved_serial = doc->serial;
  if (file != doc->file)
    {
      g_set_object (&doc->file, file);
      g_object_notify_by_pspec (G_OBJECT (doc), props[PROP_FILE]);
    }
  /* Saved: the recovery copy (under the old name too) is stale. */
  tg_document_remove_recovery (doc);
  if (was_dirty)
    g_object_notify_by_pspec (G_OBJECT (doc), props[PROP_DIRTY]);
  if (rebased)
    g_signal_emit (doc, signals[SIGNAL_CHANGED], 0, (guint) TG_DOC_CHANGE_PARAMS, NULL);
  return TRUE;
}

/* --- autosave --------------------------------------------------------------- */

/* --- node UI state ---------------------------------------------------------- */

void
tg_document__parse_node_ui (const char *ui, TgNodeUi *out)
{
  json_object *o, *v;

  memset (out, 0, sizeof *out);
  if (!ui || !(o = json_tokener_parse (ui)))
    return;
  if (json_object_is_type (o, json_type_object))
    {
      if (json_object_object_get_ex (o, "x", &v))
        out->x = json_object_get_double (v), out->has_position = TRUE;
      if (json_object_object_get_ex (o, "y", &v))
        out->y = json_object_get_double (v);
      if (json_object_object_get_ex (o, "bypass", &v))
        out->bypass = json_object_get_boolean (v);
      if (json_object_object_get_ex (o, "viewer_pin", &v))
        out->viewer_pin = json_object_get_boolean (v);
    }
  json_object_put (o);
}

/* NODE's ui block UI with x and y set, its other keys kept.  Caller frees. */
char *
tg_document__ui_with_position (const char *ui, double x, double y)
{
  json_object *o = ui ? json_tokener_parse (ui) : NULL;
  char *text;

  if (!o || !json_object_is_type (o, json_type_object))
    {
      json_object_put (o);
      o = json_object_new_object ();
    }
  /* Whole numbers keep the file tidy; the canvas works in whole units. */
  json_object_object_add (o, "x", json_object_new_int64 ((int64_t) llround (x)));
  json_object_object_add (o, "y", json_object_new_int64 ((int64_t) llround (y)));
  text = g_strdup (json_object_to_json_string_ext (o, JSON_C_TO_STRING_SPACED));
  json_object_put (o);
  return text;
}

/* UI with KEY set to true (PIN) or taken out, its other keys kept;
 * NULL for an empty block.  Caller frees. */
char *
tg_document__ui_with_flag (const char *ui, const char *key, gboolean on)
{
  json_object *o = ui ? json_tokener_parse (ui) : NULL;
  char *text = NULL;

  if (!o || !json_object_is_type (o, json_type_object))
    {
      json_object_put (o);
      o = json_object_new_object ();
    }
  if (on)
    json_object_object_add (o, key, json_object_new_boolean (1));
  else
    json_object_object_del (o, key);
  if (json_object_object_length (o) > 0)
    text = g_strdup (json_object_to_json_string_ext (o, JSON_C_TO_STRING_SPACED));
  json_object_put (o);
  return text;
}

void
tg_document__set_ui_position (TgGraph *g, int node, double x, double y)
{
  g_autofree char *ui = tg_document__ui_with_position (tg_graph_node_ui (g, node), x, y);
  tg_graph_set_node_ui (g, node, ui);
}

/* Node N was added at the end of the graph: its typed state and index. */
void
tg_document__append_node_ui (TgDocument *doc, int n)
{
  TgNodeUi u;

  tg_document__parse_node_ui (tg_graph_node_ui (doc->graph, n), &u);
  g_array_append_val (doc->ui, u);
  g_hash_table_insert (doc->index, g_strdup (tg_graph_node_id (doc->graph, n)),
                       GINT_TO_POINTER (n + 1));
}

/* Removes the nodes from N_NODES on (at the end of the graph). */
void
tg_document__truncate_nodes (TgDocument *doc, int n_nodes)
{
  for (int k = tg_graph_n_nodes (doc->graph) - 1; k >= n_nodes; k--)
    {
      g_hash_table_remove (doc->index, tg_graph_node_id (doc->graph, k));
      tg_graph_remove_node (doc->graph, k);
    }
  g_array_set_size (doc->ui, (guint) n_nodes);
}

/* The typed state of a graph that changed as a whole (load, a step that
 * kept the whole graph): every node's ui block parsed, the index, the frames. */
void
tg_document__reload_ui (TgDocument *doc)
{
  int n = tg_graph_n_nodes (doc->graph);

  g_array_set_size (doc->ui, 0);
  g_hash_table_remove_all (doc->index);
  for (int k = 0; k < n; k++)
    tg_document__append_node_ui (doc, k);
  tg_document__reload_frames (doc);
}

int
tg_document_find_node (TgDocument *doc, const char *id)
{
  return id ? GPOINTER_TO_INT (g_hash_table_lookup (doc->index, id)) - 1 : -1;
}

const TgNodeUi *
tg_document_get_node_ui (TgDocument *doc, int n)
{
  return n >= 0 && n < (int) doc->ui->len ? &g_array_index (doc->ui, TgNodeUi, n) : NULL;
}

gboolean
tg_document_get_position_at (TgDocument *doc, int n, double *x, double *y)
{
  const TgNodeUi *u = tg_document_get_node_ui (doc, n);

  *x = *y = 0;
  if (!u)
    return FALSE;
  if (u->has_position)
    {
      *x = u->x;
      *y = u->y;
    }
  else
    {
      /* A file without positions: lay nodes out in a grid by index. */
      *x = 40 + (n % 5) * 240;
      *y = 40 + (n / 5) * 220;
    }
  return TRUE;
}

gboolean
tg_document_get_position (TgDocument *doc, const char *id, double *x, double *y)
{
  return tg_document_get_position_at (doc, tg_document_find_node (doc, id), x, y);
}

/* --- frames ----------------------------------------------------------------- */

/* The graph's kept top-level keys as an object (new reference). */
json_object *
tg_document__graph_extra (const TgGraph *g)
{
  const char *text = tg_graph_extra (g);
  json_object *o = text ? json_tokener_parse (text) : NULL;

  if (!o || !json_object_is_type (o, json_type_object))
    {
      json_object_put (o);
      o = json_object_new_object ();
    }
  return o;
}

json_object *
tg_document__frames_array (json_object *extra)
{
  json_object *ui, *frames;

  if (json_object_object_get_ex (extra, "ui", &ui) && json_object_is_type (ui, json_type_object)
      && json_object_object_get_ex (ui, "frames", &frames)
      && json_object_is_type (frames, json_type_array))
    return frames;
  return NULL;
}

static double
num (json_object *o, const char *key, double def)
{
  json_object *v;
  return json_object_object_get_ex (o, key, &v) ? json_object_get_double (v) : def;
}

void
tg_document__reload_frames (TgDocument *doc)
{
  json_object *extra = tg_document__graph_extra (doc->graph), *frames = tg_document__frames_array (extra);
  int count = frames ? (int) json_object_array_length (frames) : 0;

  tg_document_frames_free (doc->frames, doc->n_frames);
  doc->frames = g_new0 (TgFrame, count + 1);
  for (int k = 0; k < count; k++)
    {
      json_object *f = json_object_array_get_idx (frames, k), *v;
      TgFrame *out = &doc->frames[k];
      double rgba[4] = { 0x4a / 255.0, 0x6f / 255.0, 0xa5 / 255.0, 1 };
      out->title = g_strdup (json_object_object_get_ex (f, "title", &v)
                             ? json_object_get_string (v) : "");
      out->x = num (f, "x", 0);
      out->y = num (f, "y", 0);
      out->w = MAX (num (f, "w", 320), 60);
      out->h = MAX (num (f, "h", 200), 40);
      if (json_object_object_get_ex (f, "color", &v))
        tg_color_parse (json_object_get_string (v), rgba);
      memcpy (out->rgb, rgba, sizeof out->rgb);
    }
  json_object_put (extra);
  doc->n_frames = count;
}

TgFrame *
tg_document_dup_frames (TgDocument *doc, int *n)
{
  TgFrame *out = g_new0 (TgFrame, doc->n_frames + 1);

  for (int k = 0; k < doc->n_frames; k++)
    {
      out[k] = doc->frames[k];
      out[k].title = g_strdup (doc->frames[k].title);
    }
  *n = doc->n_frames;
  return out;
}

void
tg_document_frames_free (TgFrame *frames, int n)
{
  for (int k = 0; k < n; k++)
    g_free (frames[k].title);
  g_free (frames);
}


