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

#include <glib/gi18n.h>
#include <json-c/json.h>
#include <math.h>
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
  N_SIGNALS
};

static GParamSpec *props[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (TgDocument, tg_document, G_TYPE_OBJECT)

G_DEFINE_QUARK (tg-document-error-quark, tg_document_error)

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

gboolean
tg_document_save (TgDocument *doc, GFile *file, GError **error)
{
  g_autofree char *text = NULL;
  g_autoptr (GFile) parent = NULL;
  g_autofree char *dir = NULL;
  gboolean was_dirty = tg_document_get_dirty (doc);
  TgError err = { 0 };

  if (!file)
    file = doc->file;
  g_return_val_if_fail (G_IS_FILE (file), FALSE);
  text = tg_tgraph_save_string (doc->graph, &err);
  if (!text)
    return set_tg_error (error, &err, NULL);
  /* g_file_replace_contents writes a temporary file and renames it. */
  if (!g_file_replace_contents (file, text, strlen (text), NULL, FALSE, G_FILE_CREATE_NONE, NULL,
                                NULL, error))
    return FALSE;
  parent = g_file_get_parent (file);
  dir = parent ? g_file_get_path (parent) : NULL;
  if (dir)
    tg_graph_set_base_dir (doc->graph, dir);
  doc->saved_serial = doc->serial;
  if (file != doc->file)
    {
      g_set_object (&doc->file, file);
      g_object_notify_by_pspec (G_OBJECT (doc), props[PROP_FILE]);
    }
  if (was_dirty)
    g_object_notify_by_pspec (G_OBJECT (doc), props[PROP_DIRTY]);
  return TRUE;
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

static int
cmp_desc (gconstpointer a, gconstpointer b)
{
  return *(const int *) b - *(const int *) a;
}

static void
remove_nodes (TgGraph *g, const int *idx, int n)
{
  int *sorted = g_memdup2 (idx, sizeof (int) * (gsize) n);

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
  double *px = g_new (double, n + 1), *py = g_new (double, n + 1);
  TgError err = { 0 };
  char **result = NULL;

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
