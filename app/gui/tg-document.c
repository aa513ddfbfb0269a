/* TgDocument: the graph a window edits, with undo and change signals.
 *
 * Each command works on a copy of the graph and, only when every part of
 * it succeeded, swaps the copy in and keeps the previous graph as the undo
 * step.  Graphs are small (kilobytes), so whole snapshots make every
 * command, including paste and multi-node moves, exactly undoable with no
 * per-command inverse to get wrong; the engine's cache is keyed by
 * content, so an undone graph evaluates from the cache.
 */
#include "config.h"

#include "tg-document.h"

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

typedef struct
{
  TgGraph *graph;
  guint serial;
  char *label;
} Step;

struct _TgDocument
{
  GObject parent_instance;

  TgGraph *graph;
  guint serial;       /* names the current state; equal serials, equal graphs */
  guint next_serial;
  guint saved_serial;
  GFile *file;
  GQueue undo, redo;  /* of Step *, newest at the head */

  char *merge_key;    /* "node\037param" of the last mergeable change */
  gint64 merge_time;

  char *untitled_key;   /* names the recovery copy while there is no file */
  char *recovery_path;  /* the copy last written, or NULL */
  guint autosaved_serial;
};

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

static void
step_free (gpointer p)
{
  Step *s = p;

  tg_graph_free (s->graph);
  g_free (s->label);
  g_free (s);
}

static gboolean
set_tg_error (GError **error, const TgError *err, const char *prefix)
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
  g_clear_object (&doc->file);
  g_queue_clear_full (&doc->undo, step_free);
  g_queue_clear_full (&doc->redo, step_free);
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

/* Makes WORK (a modified copy) the document's graph; the old graph
 * becomes an undo step labelled LABEL, or is dropped when MERGE_KEY
 * continues the previous step. */
static void
commit (TgDocument *doc, TgGraph *work, const char *label, const char *merge_key,
        TgDocChange change, const char *node_id)
{
  gboolean was_dirty = tg_document_get_dirty (doc);
  gboolean could_undo = tg_document_can_undo (doc);
  gboolean could_redo = tg_document_can_redo (doc);
  gint64 now = g_get_monotonic_time ();
  gboolean merged = FALSE;

  if (merge_key && doc->merge_key && !strcmp (merge_key, doc->merge_key)
      && now - doc->merge_time < MERGE_USEC && !g_queue_is_empty (&doc->undo))
    {
      /* The undo step already holds the graph from before the drag. */
      tg_graph_free (doc->graph);
      merged = TRUE;
    }
  else
    {
      Step *s = g_new0 (Step, 1);
      s->graph = doc->graph;
      s->serial = doc->serial;
      s->label = g_strdup (label);
      g_queue_push_head (&doc->undo, s);
      while (g_queue_get_length (&doc->undo) > UNDO_DEPTH)
        step_free (g_queue_pop_tail (&doc->undo));
    }
  (void) merged;
  doc->graph = work;
  doc->serial = ++doc->next_serial;
  g_queue_clear_full (&doc->redo, step_free);
  g_free (doc->merge_key);
  doc->merge_key = g_strdup (merge_key);
  doc->merge_time = now;

  notify_state (doc, was_dirty, could_undo, could_redo);
  g_signal_emit (doc, signals[SIGNAL_CHANGED], 0, (guint) change, node_id);
}

void
tg_document_end_merge (TgDocument *doc)
{
  g_clear_pointer (&doc->merge_key, g_free);
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
      g_signal_emit (doc, signals[SIGNAL_RENAMED], 0, tg_graph_node_id (from, k),
                     tg_graph_node_id (to, k));
}

static gboolean
swap_step (TgDocument *doc, GQueue *from, GQueue *to)
{
  gboolean was_dirty = tg_document_get_dirty (doc);
  gboolean could_undo = tg_document_can_undo (doc);
  gboolean could_redo = tg_document_can_redo (doc);
  Step *s = g_queue_pop_head (from);
  TgGraph *g;
  guint serial;

  if (!s)
    return FALSE;
  emit_renames (doc, doc->graph, s->graph);
  g = doc->graph;
  serial = doc->serial;
  doc->graph = s->graph;
  doc->serial = s->serial;
  s->graph = g;
  s->serial = serial;
  g_queue_push_head (to, s);
  tg_document_end_merge (doc);
  notify_state (doc, was_dirty, could_undo, could_redo);
  g_signal_emit (doc, signals[SIGNAL_CHANGED], 0, (guint) TG_DOC_CHANGE_ALL, NULL);
  return TRUE;
}

gboolean
tg_document_undo (TgDocument *doc)
{
  return swap_step (doc, &doc->undo, &doc->redo);
}

gboolean
tg_document_redo (TgDocument *doc)
{
  return swap_step (doc, &doc->redo, &doc->undo);
}

/* --- files ------------------------------------------------------------------ */

static void
replace_graph (TgDocument *doc, TgGraph *g, GFile *file)
{
  gboolean could_undo = tg_document_can_undo (doc);
  gboolean could_redo = tg_document_can_redo (doc);

  tg_graph_free (doc->graph);
  doc->graph = g;
  g_queue_clear_full (&doc->undo, step_free);
  g_queue_clear_full (&doc->redo, step_free);
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
    return set_tg_error (error, &err, name);
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
static int
rebase_inputs (TgGraph *g, const char *dir)
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
          gboolean any = FALSE;
          TgError err = { 0 };

          if (!cur || (pd->type != TG_PARAM_INPUT_PATH && pd->type != TG_PARAM_LIST))
            continue;
          if (tg_param_value_copy (&v, cur) < 0)
            continue;
          if (pd->type == TG_PARAM_INPUT_PATH)
            any = rebase_value (&v, from, to);
          else
            for (int i = 0; i < v.n_items; i++)
              for (int k = 0; k < pd->n_item_params; k++)
                if (pd->item_params[k].type == TG_PARAM_INPUT_PATH)
                  any |= rebase_value (tg_param_list_field_mut (&v, i, k), from, to);
          if (any && tg_graph_set_param (g, n, pd->name, &v, &err) == 0)
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
      rebased = rebase_inputs (work, dir);
      tg_graph_set_base_dir (work, dir);
    }
  text = tg_tgraph_save_string (work, &err);
  if (!text)
    {
      tg_graph_free (work);
      return set_tg_error (error, &err, NULL);
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

static char *
recovery_dir (void)
{
  return g_build_filename (g_get_user_state_dir (), "terrane", "autosave", NULL);
}

static char *
recovery_path_for (GFile *file, const char *untitled_key)
{
  g_autofree char *dir = recovery_dir ();
  g_autofree char *name = NULL;

  if (file)
    {
      g_autofree char *uri = g_file_get_uri (file);
      g_autofree char *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA256, uri, -1);
      sum[16] = '\0';
      name = g_strdup_printf ("%s.tgraph", sum);
    }
  else
    name = g_strdup_printf ("%s.tgraph", untitled_key);
  return g_build_filename (dir, name, NULL);
}

gboolean
tg_document_autosave (TgDocument *doc, GError **error)
{
  g_autofree char *dir = recovery_dir ();
  g_autofree char *path = NULL, *text = NULL;
  TgError err = { 0 };

  if (!tg_document_get_dirty (doc) || doc->serial == doc->autosaved_serial)
    return TRUE;
  path = recovery_path_for (doc->file, doc->untitled_key);
  text = tg_tgraph_save_string (doc->graph, &err);
  if (!text)
    return set_tg_error (error, &err, NULL);
  /* g_file_set_contents writes a temporary file and renames it over. */
  if (g_mkdir_with_parents (dir, 0700) < 0 || !g_file_set_contents (path, text, -1, error))
    {
      if (error && !*error)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot create %s"), dir);
      return FALSE;
    }
  /* After Save As the copy has a new name: drop the old one. */
  if (doc->recovery_path && strcmp (doc->recovery_path, path))
    g_unlink (doc->recovery_path);
  g_free (doc->recovery_path);
  doc->recovery_path = g_steal_pointer (&path);
  doc->autosaved_serial = doc->serial;
  return TRUE;
}

void
tg_document_remove_recovery (TgDocument *doc)
{
  g_autofree char *path = recovery_path_for (doc->file, doc->untitled_key);

  if (doc->recovery_path)
    g_unlink (doc->recovery_path);
  g_unlink (path);
  g_clear_pointer (&doc->recovery_path, g_free);
  doc->autosaved_serial = 0;
}

static GDateTime *
modified (GFile *file)
{
  g_autoptr (GFileInfo) info = g_file_query_info (file, G_FILE_ATTRIBUTE_TIME_MODIFIED ","
                                                  G_FILE_ATTRIBUTE_TIME_MODIFIED_USEC,
                                                  G_FILE_QUERY_INFO_NONE, NULL, NULL);
  return info ? g_file_info_get_modification_date_time (info) : NULL;
}

char *
tg_document_find_recovery (GFile *file)
{
  g_autofree char *path = recovery_path_for (file, NULL);
  g_autoptr (GFile) rf = g_file_new_for_path (path);
  g_autoptr (GDateTime) rt = modified (rf);
  g_autoptr (GDateTime) ft = NULL;

  if (!rt)
    return NULL;
  ft = modified (file);
  /* A copy older than the file is from before a later save elsewhere. */
  if (ft && g_date_time_compare (rt, ft) <= 0)
    return NULL;
  return g_steal_pointer (&path);
}

char *
tg_document_find_untitled_recovery (void)
{
  g_autofree char *dir = recovery_dir ();
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr (GDateTime) best_t = NULL;
  char *best = NULL;
  const char *name;

  while (d && (name = g_dir_read_name (d)))
    {
      long pid;
      g_autofree char *path = NULL;
      g_autoptr (GFile) f = NULL;
      g_autoptr (GDateTime) t = NULL;

      if (sscanf (name, "untitled-%ld-", &pid) != 1 || !g_str_has_suffix (name, ".tgraph"))
        continue;
      /* A copy of a window that is still open in a running Terrane is not lost. */
      if (pid == (long) getpid () || (kill ((pid_t) pid, 0) == 0 || errno == EPERM))
        continue;
      path = g_build_filename (dir, name, NULL);
      f = g_file_new_for_path (path);
      t = modified (f);
      if (t && (!best_t || g_date_time_compare (t, best_t) > 0))
        {
          g_free (best);
          best = g_steal_pointer (&path);
          g_clear_pointer (&best_t, g_date_time_unref);
          best_t = g_steal_pointer (&t);
        }
    }
  return best;
}

gboolean
tg_document_restore (TgDocument *doc, const char *path, GError **error)
{
  g_autofree char *text = NULL, *name = g_path_get_basename (path);
  gsize len;
  TgGraph *g = NULL;
  TgError err = { 0 };

  if (!g_file_get_contents (path, &text, &len, error))
    return FALSE;
  if (tg_tgraph_load_string_ex (text, len, tg_graph_base_dir (doc->graph),
                                TG_TGRAPH_LOAD_NO_VALIDATE, &g, &err) < 0)
    return set_tg_error (error, &err, name);
  tg_graph_set_base_dir (g, tg_graph_base_dir (doc->graph));
  commit (doc, g, _("Restore Unsaved Changes"), NULL, TG_DOC_CHANGE_ALL, NULL);
  g_unlink (path);
  return TRUE;
}

void
tg_document_discard_recovery (const char *path)
{
  g_unlink (path);
}

/* --- positions -------------------------------------------------------------- */

static gboolean
ui_position (const char *ui, double *x, double *y)
{
  json_object *o, *v;
  gboolean ok = FALSE;

  *x = *y = 0;
  if (!ui || !(o = json_tokener_parse (ui)))
    return FALSE;
  if (json_object_is_type (o, json_type_object))
    {
      if (json_object_object_get_ex (o, "x", &v))
        *x = json_object_get_double (v), ok = TRUE;
      if (json_object_object_get_ex (o, "y", &v))
        *y = json_object_get_double (v);
    }
  json_object_put (o);
  return ok;
}

/* Sets x and y in the node's ui block, keeping its other keys. */
static void
set_ui_position (TgGraph *g, int node, double x, double y)
{
  const char *ui = tg_graph_node_ui (g, node);
  json_object *o = ui ? json_tokener_parse (ui) : NULL;

  if (!o || !json_object_is_type (o, json_type_object))
    {
      json_object_put (o);
      o = json_object_new_object ();
    }
  /* Whole numbers keep the file tidy; the canvas works in whole units. */
  json_object_object_add (o, "x", json_object_new_int64 ((int64_t) llround (x)));
  json_object_object_add (o, "y", json_object_new_int64 ((int64_t) llround (y)));
  tg_graph_set_node_ui (g, node, json_object_to_json_string_ext (o, JSON_C_TO_STRING_SPACED));
  json_object_put (o);
}

gboolean
tg_document_get_position (TgDocument *doc, const char *id, double *x, double *y)
{
  int n = tg_graph_find_node (doc->graph, id);

  *x = *y = 0;
  if (n < 0)
    return FALSE;
  if (!ui_position (tg_graph_node_ui (doc->graph, n), x, y))
    {
      /* A file without positions: lay nodes out in a grid by index. */
      *x = 40 + (n % 5) * 240;
      *y = 40 + (n / 5) * 220;
    }
  return TRUE;
}

/* --- frames ----------------------------------------------------------------- */

/* The graph's kept top-level keys as an object (new reference). */
static json_object *
graph_extra (const TgGraph *g)
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

static json_object *
frames_array (json_object *extra)
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

TgFrame *
tg_document_dup_frames (TgDocument *doc, int *n)
{
  json_object *extra = graph_extra (doc->graph), *frames = frames_array (extra);
  int count = frames ? (int) json_object_array_length (frames) : 0;
  TgFrame *out = g_new0 (TgFrame, count + 1);

  for (int k = 0; k < count; k++)
    {
      json_object *f = json_object_array_get_idx (frames, k), *v;
      double rgba[4] = { 0x4a / 255.0, 0x6f / 255.0, 0xa5 / 255.0, 1 };
      out[k].title = g_strdup (json_object_object_get_ex (f, "title", &v)
                               ? json_object_get_string (v) : "");
      out[k].x = num (f, "x", 0);
      out[k].y = num (f, "y", 0);
      out[k].w = MAX (num (f, "w", 320), 60);
      out[k].h = MAX (num (f, "h", 200), 40);
      if (json_object_object_get_ex (f, "color", &v))
        tg_color_parse (json_object_get_string (v), rgba);
      memcpy (out[k].rgb, rgba, sizeof out[k].rgb);
    }
  json_object_put (extra);
  *n = count;
  return out;
}

void
tg_document_frames_free (TgFrame *frames, int n)
{
  for (int k = 0; k < n; k++)
    g_free (frames[k].title);
  g_free (frames);
}

static json_object *
frame_json (const TgFrame *f)
{
  json_object *o = json_object_new_object ();
  const double rgba[4] = { f->rgb[0], f->rgb[1], f->rgb[2], 1 };
  char colour[10];

  tg_color_format (rgba, colour);
  json_object_object_add (o, "title", json_object_new_string (f->title ? f->title : ""));
  json_object_object_add (o, "color", json_object_new_string (colour));
  json_object_object_add (o, "x", json_object_new_int64 ((int64_t) llround (f->x)));
  json_object_object_add (o, "y", json_object_new_int64 ((int64_t) llround (f->y)));
  json_object_object_add (o, "w", json_object_new_int64 ((int64_t) llround (f->w)));
  json_object_object_add (o, "h", json_object_new_int64 ((int64_t) llround (f->h)));
  return o;
}

/* A copy of the graph whose frame K is F (K == n: appended; F NULL:
 * removed); NULL when K is out of range. */
static TgGraph *
with_frame (TgDocument *doc, int k, const TgFrame *f)
{
  json_object *extra = graph_extra (doc->graph), *frames = frames_array (extra), *ui;
  int n = frames ? (int) json_object_array_length (frames) : 0;
  TgGraph *work;

  if (k < 0 || k > n || (k == n && !f))
    {
      json_object_put (extra);
      return NULL;
    }
  if (!frames)
    {
      if (!json_object_object_get_ex (extra, "ui", &ui) || !json_object_is_type (ui, json_type_object))
        {
          ui = json_object_new_object ();
          json_object_object_add (extra, "ui", ui);
        }
      frames = json_object_new_array ();
      json_object_object_add (ui, "frames", frames);
    }
  if (!f)
    json_object_array_del_idx (frames, (size_t) k, 1);
  else if (k == n)
    json_object_array_add (frames, frame_json (f));
  else
    json_object_array_put_idx (frames, (size_t) k, frame_json (f));
  work = tg_graph_copy (doc->graph);
  tg_graph_set_extra (work, json_object_to_json_string_ext (extra, JSON_C_TO_STRING_PLAIN));
  json_object_put (extra);
  return work;
}

int
tg_document_add_frame (TgDocument *doc, const TgFrame *f)
{
  int n;
  TgFrame *all = tg_document_dup_frames (doc, &n);
  TgGraph *work = with_frame (doc, n, f);

  tg_document_frames_free (all, n);
  commit (doc, work, _("Add Frame"), NULL, TG_DOC_CHANGE_FRAMES, NULL);
  return n;
}

gboolean
tg_document_set_frame (TgDocument *doc, int k, const TgFrame *f)
{
  int n;
  TgFrame *all = tg_document_dup_frames (doc, &n);
  gboolean same = k >= 0 && k < n && !g_strcmp0 (all[k].title, f->title) && all[k].x == f->x
                  && all[k].y == f->y && all[k].w == f->w && all[k].h == f->h
                  && !memcmp (all[k].rgb, f->rgb, sizeof f->rgb);
  TgGraph *work = !same && k < n ? with_frame (doc, k, f) : NULL;

  tg_document_frames_free (all, n);
  if (!work)
    return same;
  commit (doc, work, _("Change Frame"), NULL, TG_DOC_CHANGE_FRAMES, NULL);
  return TRUE;
}

gboolean
tg_document_delete_frame (TgDocument *doc, int k)
{
  int n;
  TgFrame *all = tg_document_dup_frames (doc, &n);
  TgGraph *work = k < n ? with_frame (doc, k, NULL) : NULL;

  tg_document_frames_free (all, n);
  if (!work)
    return FALSE;
  commit (doc, work, _("Delete Frame"), NULL, TG_DOC_CHANGE_FRAMES, NULL);
  return TRUE;
}

gboolean
tg_document_move_frame (TgDocument *doc, int k, double dx, double dy, const char *const *ids)
{
  int n;
  TgFrame *all = tg_document_dup_frames (doc, &n);
  TgGraph *work = NULL;

  if (k >= 0 && k < n && (dx != 0 || dy != 0))
    {
      TgFrame f = all[k];
      f.x += dx;
      f.y += dy;
      work = with_frame (doc, k, &f);
      for (int i = 0; work && ids && ids[i]; i++)
        {
          double x, y;
          int node = tg_graph_find_node (work, ids[i]);
          if (node >= 0 && tg_document_get_position (doc, ids[i], &x, &y))
            set_ui_position (work, node, x + dx, y + dy);
        }
    }
  tg_document_frames_free (all, n);
  if (!work)
    return FALSE;
  commit (doc, work, _("Move Frame"), NULL, TG_DOC_CHANGE_POSITION | TG_DOC_CHANGE_FRAMES, NULL);
  return TRUE;
}

/* --- commands --------------------------------------------------------------- */

static char *
unique_id (const TgGraph *g, const char *base, GHashTable *taken)
{
  char *id = g_strdup (base);

  for (int k = 2; tg_graph_find_node (g, id) >= 0 || (taken && g_hash_table_contains (taken, id));
       k++)
    {
      g_free (id);
      id = g_strdup_printf ("%s_%d", base, k);
    }
  return id;
}

/* Whether N_NEW more nodes fit in a graph that still loads again: a
 * .tgraph file holds at most TG_TGRAPH_MAX_NODES. */
static gboolean
room_for (const TgGraph *g, int n_new, GError **error)
{
  if (tg_graph_n_nodes (g) + n_new <= TG_TGRAPH_MAX_NODES)
    return TRUE;
  g_set_error (error, TG_DOCUMENT_ERROR, 0,
               _("A graph holds at most %d nodes; this one would have %d"), TG_TGRAPH_MAX_NODES,
               tg_graph_n_nodes (g) + n_new);
  return FALSE;
}

char *
tg_document_add_node (TgDocument *doc, const char *type, double x, double y, GError **error)
{
  const TgNodeDesc *desc = tg_registry_lookup (type);
  const char *dot;
  g_autofree char *base = NULL;
  char *id;
  TgGraph *work;
  TgError err = { 0 };
  int n;

  if (!desc)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("Unknown node type “%s”"), type);
      return NULL;
    }
  if (!room_for (doc->graph, 1, error))
    return NULL;
  dot = strrchr (type, '.');
  base = g_strdup (dot ? dot + 1 : type);
  id = unique_id (doc->graph, base, NULL);
  work = tg_graph_copy (doc->graph);
  n = tg_graph_add_node (work, id, type, &err);
  if (n < 0)
    {
      tg_graph_free (work);
      g_free (id);
      set_tg_error (error, &err, NULL);
      return NULL;
    }
  set_ui_position (work, n, x, y);
  commit (doc, work, _("Add Node"), NULL, TG_DOC_CHANGE_NODES, id);
  return id;
}

int
tg_document_fitting_port (const TgNodeDesc *d, TgPortType type, gboolean input)
{
  int n = input ? d->n_inputs : d->n_outputs;
  const TgPortDesc *ports = input ? d->inputs : d->outputs;

  for (int pass = 0; pass < 2; pass++)
    for (int p = 0; p < n; p++)
      {
        TgPortType t = ports[p].type;
        gboolean fits = pass == 0 ? t == type
                                  : input ? tg_port_type_compatible (type, t)
                                          : tg_port_type_compatible (t, type);
        if (fits)
          return p;
      }
  return -1;
}

char *
tg_document_add_node_linked (TgDocument *doc, const char *type, double x, double y,
                             const char *other, const char *other_port, gboolean other_is_output,
                             GError **error)
{
  const TgNodeDesc *desc = tg_registry_lookup (type);
  const TgNodeDesc *od;
  g_autofree char *base = NULL;
  const char *dot;
  char *id;
  TgGraph *work;
  TgError err = { 0 };
  int on, op, n, p, rc;

  if (!desc)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("Unknown node type “%s”"), type);
      return NULL;
    }
  if (!room_for (doc->graph, 1, error))
    return NULL;
  if (!tg_document_find_port (doc, other, other_port, other_is_output, &on, &op))
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No port “%s.%s”"), other, other_port);
      return NULL;
    }
  od = tg_graph_node_desc (doc->graph, on);
  p = tg_document_fitting_port (desc, other_is_output ? od->outputs[op].type : od->inputs[op].type,
                                other_is_output);
  if (p < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("%s has no port that fits “%s.%s”"), type, other,
                   other_port);
      return NULL;
    }
  dot = strrchr (type, '.');
  base = g_strdup (dot ? dot + 1 : type);
  id = unique_id (doc->graph, base, NULL);
  work = tg_graph_copy (doc->graph);
  n = tg_graph_add_node (work, id, type, &err);
  if (n >= 0)
    {
      set_ui_position (work, n, x, y);
      if (other_is_output)
        rc = tg_graph_add_link (work, other, other_port, id, desc->inputs[p].name, &err);
      else
        {
          int old = tg_graph_input_link (work, on, op);
          if (old >= 0)
            tg_graph_remove_link (work, old);
          rc = tg_graph_add_link (work, id, desc->outputs[p].name, other, other_port, &err);
        }
    }
  if (n < 0 || rc < 0)
    {
      tg_graph_free (work);
      g_free (id);
      set_tg_error (error, &err, NULL);
      return NULL;
    }
  commit (doc, work, _("Add Node"), NULL, TG_DOC_CHANGE_NODES | TG_DOC_CHANGE_LINKS, id);
  return id;
}

gboolean
tg_document_rename_node (TgDocument *doc, const char *id, const char *new_id, GError **error)
{
  int n = tg_graph_find_node (doc->graph, id);
  TgError err = { 0 };
  TgGraph *work;

  if (n < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No node “%s”"), id);
      return FALSE;
    }
  if (!strcmp (id, new_id))
    return TRUE;
  if (!*new_id)
    {
      g_set_error_literal (error, TG_DOCUMENT_ERROR, 0, _("A node needs a name"));
      return FALSE;
    }
  for (const char *c = new_id; *c; c++)
    if (*c == '.' || *c == '"' || *c == '\\' || (unsigned char) *c < 0x20)
      {
        g_set_error_literal (error, TG_DOCUMENT_ERROR, 0,
                             _("A node name cannot contain “.”, quotes or backslashes"));
        return FALSE;
      }
  if (tg_graph_find_node (doc->graph, new_id) >= 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("There is already a node named “%s”"), new_id);
      return FALSE;
    }
  work = tg_graph_copy (doc->graph);
  if (tg_graph_set_node_id (work, n, new_id, &err) < 0)
    {
      tg_graph_free (work);
      return set_tg_error (error, &err, NULL);
    }
  g_signal_emit (doc, signals[SIGNAL_RENAMED], 0, id, new_id);
  commit (doc, work, _("Rename Node"), NULL, TG_DOC_CHANGE_NODES | TG_DOC_CHANGE_LINKS, new_id);
  return TRUE;
}

gboolean
tg_document_set_bypass (TgDocument *doc, const char *const *ids, gboolean bypass, GError **error)
{
  TgGraph *work;
  gboolean change = FALSE;

  for (int k = 0; ids && ids[k]; k++)
    {
      int n = tg_graph_find_node (doc->graph, ids[k]);
      if (n < 0)
        {
          g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No node “%s”"), ids[k]);
          return FALSE;
        }
      if (bypass && tg_node_desc_bypass_input (tg_graph_node_desc (doc->graph, n)) < 0)
        {
          g_set_error (error, TG_DOCUMENT_ERROR, 0,
                       _("“%s” cannot be bypassed: it has no input to pass through"), ids[k]);
          return FALSE;
        }
      change |= tg_graph_node_bypass (doc->graph, n) != bypass;
    }
  if (!change)
    return TRUE;
  work = tg_graph_copy (doc->graph);
  for (int k = 0; ids[k]; k++)
    tg_graph_set_node_bypass (work, tg_graph_find_node (work, ids[k]), bypass);
  commit (doc, work, bypass ? _("Bypass Node") : _("Stop Bypassing Node"), NULL,
          TG_DOC_CHANGE_PARAMS, ids[0]);
  return TRUE;
}

static int
cmp_desc (gconstpointer a, gconstpointer b)
{
  return *(const int *) b - *(const int *) a;
}

static void
remove_nodes (TgGraph *g, const int *idx, int n)
{
  int *sorted;

  if (n <= 0)
    return;
  sorted = g_memdup2 (idx, sizeof (int) * (gsize) n);
  qsort (sorted, (size_t) n, sizeof (int), cmp_desc);
  for (int k = 0; k < n; k++)
    if (k == 0 || sorted[k] != sorted[k - 1])
      tg_graph_remove_node (g, sorted[k]);
  g_free (sorted);
}

gboolean
tg_document_delete_nodes (TgDocument *doc, const char *const *ids, GError **error)
{
  g_autofree int *idx = NULL;
  int n = 0, count = ids ? (int) g_strv_length ((char **) ids) : 0;
  TgGraph *work;

  if (count == 0)
    return TRUE;
  idx = g_new (int, count);
  for (int k = 0; k < count; k++)
    {
      int i = tg_graph_find_node (doc->graph, ids[k]);
      if (i >= 0)
        idx[n++] = i;
    }
  if (n == 0)
    return TRUE;
  work = tg_graph_copy (doc->graph);
  remove_nodes (work, idx, n);
  commit (doc, work, n == 1 ? _("Delete Node") : _("Delete Nodes"), NULL,
          TG_DOC_CHANGE_NODES | TG_DOC_CHANGE_LINKS, NULL);
  return TRUE;
}

gboolean
tg_document_move_nodes (TgDocument *doc, const char *const *ids, double dx, double dy)
{
  TgGraph *work;
  int moved = 0;

  if (!ids || !ids[0] || (dx == 0 && dy == 0))
    return FALSE;
  work = tg_graph_copy (doc->graph);
  for (int k = 0; ids[k]; k++)
    {
      double x, y;
      int n = tg_graph_find_node (work, ids[k]);
      if (n < 0 || !tg_document_get_position (doc, ids[k], &x, &y))
        continue;
      set_ui_position (work, n, x + dx, y + dy);
      moved++;
    }
  if (!moved)
    {
      tg_graph_free (work);
      return FALSE;
    }
  commit (doc, work, moved == 1 ? _("Move Node") : _("Move Nodes"), NULL,
          TG_DOC_CHANGE_POSITION, moved == 1 ? ids[0] : NULL);
  return TRUE;
}

gboolean
tg_document_find_port (TgDocument *doc, const char *node, const char *port, gboolean output,
                       int *node_index, int *port_index)
{
  int n = tg_graph_find_node (doc->graph, node);
  const TgNodeDesc *d;
  int p;

  if (n < 0)
    return FALSE;
  d = tg_graph_node_desc (doc->graph, n);
  p = output ? tg_node_desc_find_output (d, port) : tg_node_desc_find_input (d, port);
  if (p < 0)
    return FALSE;
  if (node_index)
    *node_index = n;
  if (port_index)
    *port_index = p;
  return TRUE;
}

gboolean
tg_document_connect (TgDocument *doc, const char *from, const char *from_port, const char *to,
                     const char *to_port, GError **error)
{
  TgError err = { 0 };
  TgGraph *work;
  int to_n, to_p, old, rc;

  if (!tg_document_find_port (doc, to, to_port, FALSE, &to_n, &to_p))
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No input “%s.%s”"), to, to_port);
      return FALSE;
    }
  old = tg_graph_input_link (doc->graph, to_n, to_p);
  if (old >= 0)
    {
      const TgLink *l = tg_graph_link (doc->graph, old);
      const TgNodeDesc *fd = tg_graph_node_desc (doc->graph, l->from_node);
      if (!strcmp (tg_graph_node_id (doc->graph, l->from_node), from)
          && !strcmp (fd->outputs[l->from_port].name, from_port))
        return TRUE; /* already so */
    }
  work = tg_graph_copy (doc->graph);
  if (old >= 0)
    tg_graph_remove_link (work, old);
  rc = tg_graph_add_link (work, from, from_port, to, to_port, &err);
  if (rc < 0)
    {
      tg_graph_free (work);
      return set_tg_error (error, &err, NULL);
    }
  commit (doc, work, _("Connect"), NULL, TG_DOC_CHANGE_LINKS, to);
  return TRUE;
}

gboolean
tg_document_disconnect (TgDocument *doc, const char *to, const char *to_port)
{
  TgGraph *work;
  int n, p, l;

  if (!tg_document_find_port (doc, to, to_port, FALSE, &n, &p))
    return FALSE;
  l = tg_graph_input_link (doc->graph, n, p);
  if (l < 0)
    return FALSE;
  work = tg_graph_copy (doc->graph);
  tg_graph_remove_link (work, l);
  commit (doc, work, _("Disconnect"), NULL, TG_DOC_CHANGE_LINKS, to);
  return TRUE;
}

gboolean
tg_document_move_link (TgDocument *doc, const char *to, const char *to_port, const char *new_to,
                       const char *new_to_port, GError **error)
{
  TgError err = { 0 };
  const TgLink *lk;
  const TgNodeDesc *fd;
  g_autofree char *from = NULL, *from_port = NULL;
  TgGraph *work;
  int n, p, l, nn, np, old;

  if (!tg_document_find_port (doc, to, to_port, FALSE, &n, &p)
      || (l = tg_graph_input_link (doc->graph, n, p)) < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No link into “%s.%s”"), to, to_port);
      return FALSE;
    }
  if (!tg_document_find_port (doc, new_to, new_to_port, FALSE, &nn, &np))
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No input “%s.%s”"), new_to, new_to_port);
      return FALSE;
    }
  if (nn == n && np == p)
    return TRUE;
  lk = tg_graph_link (doc->graph, l);
  fd = tg_graph_node_desc (doc->graph, lk->from_node);
  from = g_strdup (tg_graph_node_id (doc->graph, lk->from_node));
  from_port = g_strdup (fd->outputs[lk->from_port].name);
  work = tg_graph_copy (doc->graph);
  /* Remove the higher index first so the other stays valid. */
  old = tg_graph_input_link (work, nn, np);
  if (old > l)
    tg_graph_remove_link (work, old);
  tg_graph_remove_link (work, l);
  if (old >= 0 && old < l)
    tg_graph_remove_link (work, old);
  if (tg_graph_add_link (work, from, from_port, new_to, new_to_port, &err) < 0)
    {
      tg_graph_free (work);
      return set_tg_error (error, &err, NULL);
    }
  commit (doc, work, _("Connect"), NULL, TG_DOC_CHANGE_LINKS, new_to);
  return TRUE;
}

gboolean
tg_document_set_param (TgDocument *doc, const char *node, const char *name,
                       const TgParamValue *value, gboolean merge, GError **error)
{
  int n = tg_graph_find_node (doc->graph, node);
  const TgParamValue *old;
  g_autofree char *key = NULL;
  g_autofree char *label = NULL;
  const TgNodeDesc *d;
  TgError err = { 0 };
  TgGraph *work;
  int k;

  if (n < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No node “%s”"), node);
      return FALSE;
    }
  old = tg_graph_get_param (doc->graph, n, name);
  if (old && tg_param_value_equal (old, value))
    return TRUE;
  work = tg_graph_copy (doc->graph);
  if (tg_graph_set_param (work, n, name, value, &err) < 0)
    {
      tg_graph_free (work);
      return set_tg_error (error, &err, NULL);
    }
  d = tg_graph_node_desc (doc->graph, n);
  k = tg_node_desc_find_param (d, name);
  key = g_strdup_printf ("%s\037%s", node, name);
  /* Translators: %s is a parameter label, e.g. "Scale" */
  label = g_strdup_printf (_("Set %s"), k >= 0 ? g_dgettext (GETTEXT_PACKAGE, d->params[k].label)
                                                : name);
  commit (doc, work, label, merge ? key : NULL, TG_DOC_CHANGE_PARAMS, node);
  return TRUE;
}

gboolean
tg_document_set_param_text (TgDocument *doc, const char *node, const char *name,
                            const char *text, gboolean merge, GError **error)
{
  int n = tg_graph_find_node (doc->graph, node);
  const TgNodeDesc *d;
  TgParamValue v;
  TgError err = { 0 };
  gboolean ok;
  int k;

  if (n < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No node “%s”"), node);
      return FALSE;
    }
  d = tg_graph_node_desc (doc->graph, n);
  k = tg_node_desc_find_param (d, name);
  if (k < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No parameter “%s” in %s"), name, d->type);
      return FALSE;
    }
  if (tg_param_value_parse (&d->params[k], text, &v, &err) < 0)
    return set_tg_error (error, &err, NULL);
  ok = tg_document_set_param (doc, node, name, &v, merge, error);
  tg_param_value_clear (&v);
  return ok;
}

gboolean
tg_document_set_world (TgDocument *doc, const TgWorld *world, GError **error)
{
  const TgWorld *cur = tg_graph_world_const (doc->graph);
  TgError err = { 0 };
  TgGraph *work;

  if (tg_world_check (world, &err) < 0)
    return set_tg_error (error, &err, NULL);
  if (!memcmp (cur, world, sizeof *world))
    return TRUE;
  work = tg_graph_copy (doc->graph);
  *tg_graph_world (work) = *world;
  commit (doc, work, _("Change World Settings"), "\037world", TG_DOC_CHANGE_WORLD, NULL);
  return TRUE;
}

/* --- clipboard -------------------------------------------------------------- */

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
  remove_nodes (part, idx, n);
  for (int k = 0; k < tg_graph_n_nodes (part); k++)
    {
      double x, y;
      tg_document_get_position (doc, tg_graph_node_id (part, k), &x, &y);
      set_ui_position (part, k, x, y);
    }
  text = tg_tgraph_save_string (part, &err);
  tg_graph_free (part);
  if (!text)
    set_tg_error (error, &err, NULL);
  return text;
}

/* Adds the nodes of SRC to WORK with fresh ids, their top-left at (X, Y).
 * Returns the new ids, or NULL with ERROR (WORK is then half changed: the
 * caller drops it). */
static char **
merge_graph (TgDocument *doc, TgGraph *work, const TgGraph *src, double x, double y,
             GError **error)
{
  int n = tg_graph_n_nodes (src);
  g_autoptr (GHashTable) taken = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  double min_x = G_MAXDOUBLE, min_y = G_MAXDOUBLE;
  double *px, *py;
  TgError err = { 0 };
  char **result = NULL;

  if (!room_for (work, n, error))
    return NULL;
  px = g_new (double, n + 1);
  py = g_new (double, n + 1);

  for (int k = 0; k < n; k++)
    {
      if (!ui_position (tg_graph_node_ui (src, k), &px[k], &py[k]))
        px[k] = k * 240, py[k] = 0;
      min_x = MIN (min_x, px[k]);
      min_y = MIN (min_y, py[k]);
    }
  for (int k = 0; k < n; k++)
    {
      const TgNodeDesc *d = tg_graph_node_desc (src, k);
      char *id = unique_id (work, tg_graph_node_id (src, k), taken);
      int m = tg_graph_add_node (work, id, d->type, &err);

      g_ptr_array_add (ids, id);
      g_hash_table_add (taken, id);
      if (m < 0)
        {
          set_tg_error (error, &err, NULL);
          goto out;
        }
      for (int p = 0; p < d->n_params; p++)
        {
          const TgParamValue *v = tg_graph_get_param_at (src, k, p);
          /* An unset file path stays unset (an unfinished node). */
          if (!v || ((v->type == TG_PARAM_INPUT_PATH || v->type == TG_PARAM_STRING) && !v->s))
            continue;
          if (tg_graph_set_param (work, m, d->params[p].name, v, &err) < 0)
            {
              tg_error_prefix_path (&err, id);
              set_tg_error (error, &err, NULL);
              goto out;
            }
        }
      tg_graph_set_node_ui (work, m, tg_graph_node_ui (src, k));
      tg_graph_set_node_extra (work, m, tg_graph_node_extra (src, k));
      set_ui_position (work, m, px[k] - min_x + x, py[k] - min_y + y);
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
          set_tg_error (error, &err, NULL);
          goto out;
        }
    }
  g_ptr_array_add (ids, NULL);
  result = (char **) g_ptr_array_steal (ids, NULL);
out:
  g_free (px);
  g_free (py);
  (void) doc;
  return result;
}

char **
tg_document_paste_text (TgDocument *doc, const char *text, double x, double y, GError **error)
{
  TgGraph *src = NULL, *work;
  TgError err = { 0 };
  char **ids;

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
  work = tg_graph_copy (doc->graph);
  ids = merge_graph (doc, work, src, x, y, error);
  tg_graph_free (src);
  if (!ids)
    {
      tg_graph_free (work);
      return NULL;
    }
  commit (doc, work, _("Paste"), NULL, TG_DOC_CHANGE_NODES | TG_DOC_CHANGE_LINKS, NULL);
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
