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
 * with their ui blocks before and after, a parameter its two values, an
 * added node or a paste the nodes (once undone) and how many links came
 * with them, a rename the two ids.  Edits that take nodes or links out of
 * the middle of the graph (delete, disconnect, a replaced link) keep the
 * graph from before: the engine has no way to put a node back at its
 * index, and the saved order must come back with undo.
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

typedef enum
{
  STEP_GRAPH,  /* the whole graph from before */
  STEP_UI,     /* ui blocks of some nodes and/or the graph's top-level extra */
  STEP_PARAM,  /* one parameter */
  STEP_WORLD,
  STEP_RENAME,
  STEP_APPEND, /* nodes and links added at the end */
} StepKind;

typedef struct
{
  StepKind kind;
  char *label;
  guint serial_before, serial_after;
  TgDocChange change;

  TgGraph *graph;          /* GRAPH: the other state's graph */

  int n_ui;                /* UI: nodes */
  char **ui_ids;
  char **ui_before, **ui_after; /* their ui blocks (NULL: none) */
  gboolean has_extra;
  char *extra_before, *extra_after;

  char *node, *param;      /* PARAM (node: also RENAME's old id) */
  TgParamValue value_before, value_after;

  TgWorld world_before, world_after;

  char *new_id;            /* RENAME */

  int n_nodes, n_links;    /* APPEND */
  TgGraph *part;           /* APPEND once undone: the nodes to add again */
  char **link_ends;        /* ... and 4 strings per link: from, port, to, port */
} Step;

struct _TgDocument
{
  GObject parent_instance;

  TgGraph *graph;
  GArray *ui;          /* TgNodeUi per node of graph */
  GHashTable *index;   /* node id (owned) -> index + 1 */
  TgFrame *frames;     /* parsed from the graph's top-level "ui" */
  int n_frames;

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

static void reload_ui (TgDocument *doc);

static void
step_free (gpointer p)
{
  Step *s = p;

  g_free (s->label);
  if (s->graph)
    tg_graph_free (s->graph);
  for (int k = 0; k < s->n_ui; k++)
    {
      g_free (s->ui_ids[k]);
      g_free (s->ui_before[k]);
      g_free (s->ui_after[k]);
    }
  g_free (s->ui_ids);
  g_free (s->ui_before);
  g_free (s->ui_after);
  g_free (s->extra_before);
  g_free (s->extra_after);
  g_free (s->node);
  g_free (s->param);
  if (s->kind == STEP_PARAM)
    {
      tg_param_value_clear (&s->value_before);
      tg_param_value_clear (&s->value_after);
    }
  g_free (s->new_id);
  if (s->part)
    tg_graph_free (s->part);
  g_strfreev (s->link_ends);
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
    n += 3 * sizeof (char *) + str_size (s->ui_ids[k]) + str_size (s->ui_before[k])
         + str_size (s->ui_after[k]);
  n += str_size (s->extra_before) + str_size (s->extra_after) + str_size (s->node)
       + str_size (s->param) + str_size (s->new_id);
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
  g_array_unref (doc->ui);
  g_hash_table_unref (doc->index);
  tg_document_frames_free (doc->frames, doc->n_frames);
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
static void
commit_step (TgDocument *doc, Step *s, const char *merge_key, const char *node_id)
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
      && (s->kind == STEP_PARAM || s->kind == STEP_WORLD || s->kind == STEP_GRAPH))
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
      step_free (s);
    }
  else
    {
      g_queue_push_head (&doc->undo, s);
      while (g_queue_get_length (&doc->undo) > UNDO_DEPTH)
        step_free (g_queue_pop_tail (&doc->undo));
    }
  g_queue_clear_full (&doc->redo, step_free);
  g_free (doc->merge_key);
  doc->merge_key = g_strdup (merge_key);
  doc->merge_time = now;

  notify_state (doc, was_dirty, could_undo, could_redo);
  g_signal_emit (doc, signals[SIGNAL_CHANGED], 0, (guint) change, node_id);
}

static Step *
step_new (StepKind kind, const char *label, TgDocChange change)
{
  Step *s = g_new0 (Step, 1);

  s->kind = kind;
  s->label = g_strdup (label);
  s->change = change;
  return s;
}

/* Makes WORK (a modified copy) the document's graph; the old graph
 * becomes the undo step. */
static void
commit (TgDocument *doc, TgGraph *work, const char *label, const char *merge_key,
        TgDocChange change, const char *node_id)
{
  Step *s = step_new (STEP_GRAPH, label, change);

  s->graph = doc->graph;
  doc->graph = work;
  reload_ui (doc);
  commit_step (doc, s, merge_key, node_id);
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

static void parse_node_ui (const char *ui, TgNodeUi *out);
static void reload_frames (TgDocument *doc);
static void append_node_ui (TgDocument *doc, int n);
static void truncate_nodes (TgDocument *doc, int n_nodes);
static gboolean copy_node (TgGraph *dst, const TgGraph *src, int k, const char *id, TgError *err);

/* The ui block of node N becomes UI, in the graph and the typed state. */
static void
set_node_ui (TgDocument *doc, int n, const char *ui)
{
  tg_graph_set_node_ui (doc->graph, n, ui);
  parse_node_ui (ui, &g_array_index (doc->ui, TgNodeUi, n));
}

/* APPEND undone: keeps the appended nodes (with their links) in S and
 * takes them out of the graph, links first, from the end. */
static void
append_take (TgDocument *doc, Step *s)
{
  const TgGraph *g = doc->graph;
  int n0 = tg_graph_n_nodes (g) - s->n_nodes, l0 = tg_graph_n_links (g) - s->n_links;
  GPtrArray *ends = g_ptr_array_new ();
  TgError err = { 0 };

  s->part = tg_graph_new ();
  for (int k = n0; k < tg_graph_n_nodes (g); k++)
    copy_node (s->part, g, k, tg_graph_node_id (g, k), &err);
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
  truncate_nodes (doc, n0);
}

/* APPEND redone: the kept nodes and links back at the end. */
static void
append_put (TgDocument *doc, Step *s)
{
  TgError err = { 0 };

  for (int k = 0; k < tg_graph_n_nodes (s->part); k++)
    if (copy_node (doc->graph, s->part, k, tg_graph_node_id (s->part, k), &err))
      append_node_ui (doc, tg_graph_n_nodes (doc->graph) - 1);
  for (int k = 0; s->link_ends[k]; k += 4)
    tg_graph_add_link (doc->graph, s->link_ends[k], s->link_ends[k + 1], s->link_ends[k + 2],
                       s->link_ends[k + 3], &err);
  g_clear_pointer (&s->part, tg_graph_free);
  g_clear_pointer (&s->link_ends, g_strfreev);
}

/* Takes the document from one side of step S to the other: FORWARD (redo)
 * from its state before to after, or back (undo). */
static void
step_apply (TgDocument *doc, Step *s, gboolean forward)
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
        reload_ui (doc);
        break;
      }
    case STEP_UI:
      for (int k = 0; k < s->n_ui; k++)
        {
          int n = tg_document_find_node (doc, s->ui_ids[k]);
          if (n >= 0)
            set_node_ui (doc, n, forward ? s->ui_after[k] : s->ui_before[k]);
        }
      if (s->has_extra)
        {
          tg_graph_set_extra (doc->graph, forward ? s->extra_after : s->extra_before);
          reload_frames (doc);
        }
      break;
    case STEP_PARAM:
      {
        int n = tg_document_find_node (doc, s->node);
        if (n >= 0)
          tg_graph_set_param (doc->graph, n, s->param,
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
            g_signal_emit (doc, signals[SIGNAL_RENAMED], 0, from, to);
            g_hash_table_remove (doc->index, from);
            g_hash_table_insert (doc->index, g_strdup (to), GINT_TO_POINTER (n + 1));
          }
        break;
      }
    case STEP_APPEND:
      if (forward)
        append_put (doc, s);
      else
        append_take (doc, s);
      break;
    }
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
  step_apply (doc, s, forward);
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
  reload_ui (doc);
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

/* --- node UI state ---------------------------------------------------------- */

static void
parse_node_ui (const char *ui, TgNodeUi *out)
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
    }
  json_object_put (o);
}

/* NODE's ui block UI with x and y set, its other keys kept.  Caller frees. */
static char *
ui_with_position (const char *ui, double x, double y)
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

static void
set_ui_position (TgGraph *g, int node, double x, double y)
{
  g_autofree char *ui = ui_with_position (tg_graph_node_ui (g, node), x, y);
  tg_graph_set_node_ui (g, node, ui);
}

/* Node N was added at the end of the graph: its typed state and index. */
static void
append_node_ui (TgDocument *doc, int n)
{
  TgNodeUi u;

  parse_node_ui (tg_graph_node_ui (doc->graph, n), &u);
  g_array_append_val (doc->ui, u);
  g_hash_table_insert (doc->index, g_strdup (tg_graph_node_id (doc->graph, n)),
                       GINT_TO_POINTER (n + 1));
}

/* Removes the nodes from N_NODES on (at the end of the graph). */
static void
truncate_nodes (TgDocument *doc, int n_nodes)
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
static void
reload_ui (TgDocument *doc)
{
  int n = tg_graph_n_nodes (doc->graph);

  g_array_set_size (doc->ui, 0);
  g_hash_table_remove_all (doc->index);
  for (int k = 0; k < n; k++)
    append_node_ui (doc, k);
  reload_frames (doc);
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

static void
reload_frames (TgDocument *doc)
{
  json_object *extra = graph_extra (doc->graph), *frames = frames_array (extra);
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

/* The graph's top-level extra text with frame K set to F (K == n:
 * appended; F NULL: removed), caller frees; NULL when K is out of range. */
static char *
extra_with_frame (TgDocument *doc, int k, const TgFrame *f)
{
  json_object *extra = graph_extra (doc->graph), *frames = frames_array (extra), *ui;
  int n = frames ? (int) json_object_array_length (frames) : 0;
  char *text;

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
  text = g_strdup (json_object_to_json_string_ext (extra, JSON_C_TO_STRING_PLAIN));
  json_object_put (extra);
  return text;
}

static void move_nodes_into (TgDocument *doc, Step *s, const char *const *ids, double dx,
                             double dy);

/* One undo step: the graph's extra becomes EXTRA (owned), and the nodes
 * IDS move by (DX, DY). */
static void
commit_extra (TgDocument *doc, char *extra, const char *label, TgDocChange change,
              const char *const *ids, double dx, double dy)
{
  Step *s = step_new (STEP_UI, label, change);

  s->has_extra = TRUE;
  s->extra_before = g_strdup (tg_graph_extra (doc->graph));
  s->extra_after = extra;
  tg_graph_set_extra (doc->graph, extra);
  reload_frames (doc);
  if (ids)
    move_nodes_into (doc, s, ids, dx, dy);
  commit_step (doc, s, NULL, NULL);
}

int
tg_document_add_frame (TgDocument *doc, const TgFrame *f)
{
  int n = doc->n_frames;

  commit_extra (doc, extra_with_frame (doc, n, f), _("Add Frame"), TG_DOC_CHANGE_FRAMES, NULL,
                0, 0);
  return n;
}

gboolean
tg_document_set_frame (TgDocument *doc, int k, const TgFrame *f)
{
  const TgFrame *cur = k >= 0 && k < doc->n_frames ? &doc->frames[k] : NULL;
  gboolean same = cur && !g_strcmp0 (cur->title, f->title) && cur->x == f->x && cur->y == f->y
                  && cur->w == f->w && cur->h == f->h && !memcmp (cur->rgb, f->rgb, sizeof f->rgb);
  char *extra = !same && cur ? extra_with_frame (doc, k, f) : NULL;

  if (!extra)
    return same;
  commit_extra (doc, extra, _("Change Frame"), TG_DOC_CHANGE_FRAMES, NULL, 0, 0);
  return TRUE;
}

gboolean
tg_document_delete_frame (TgDocument *doc, int k)
{
  char *extra = k >= 0 && k < doc->n_frames ? extra_with_frame (doc, k, NULL) : NULL;

  if (!extra)
    return FALSE;
  commit_extra (doc, extra, _("Delete Frame"), TG_DOC_CHANGE_FRAMES, NULL, 0, 0);
  return TRUE;
}

gboolean
tg_document_move_frame (TgDocument *doc, int k, double dx, double dy, const char *const *ids)
{
  TgFrame f;
  char *extra;

  if (k < 0 || k >= doc->n_frames || (dx == 0 && dy == 0))
    return FALSE;
  f = doc->frames[k];
  f.x += dx;
  f.y += dy;
  extra = extra_with_frame (doc, k, &f);
  if (!extra)
    return FALSE;
  commit_extra (doc, extra, _("Move Frame"), TG_DOC_CHANGE_POSITION | TG_DOC_CHANGE_FRAMES, ids,
                dx, dy);
  return TRUE;
}

/* --- commands --------------------------------------------------------------- */

static char *
unique_id (TgDocument *doc, const char *base, GHashTable *taken)
{
  char *id = g_strdup (base);

  for (int k = 2;
       tg_document_find_node (doc, id) >= 0 || (taken && g_hash_table_contains (taken, id)); k++)
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

/* Adds node K of SRC to DST as ID: type, the parameters it sets, ui and
 * kept keys.  FALSE with ERR when refused (DST may then hold the node). */
static gboolean
copy_node (TgGraph *dst, const TgGraph *src, int k, const char *id, TgError *err)
{
  const TgNodeDesc *d = tg_graph_node_desc (src, k);
  int m = tg_graph_add_node (dst, id, d->type, err);

  if (m < 0)
    return FALSE;
  for (int p = 0; p < d->n_params; p++)
    {
      const TgParamValue *v = tg_graph_get_param_at (src, k, p);
      /* An unset file path stays unset (an unfinished node). */
      if (!v || ((v->type == TG_PARAM_INPUT_PATH || v->type == TG_PARAM_STRING) && !v->s))
        continue;
      if (tg_graph_set_param (dst, m, d->params[p].name, v, err) < 0)
        {
          tg_error_prefix_path (err, id);
          return FALSE;
        }
    }
  tg_graph_set_node_ui (dst, m, tg_graph_node_ui (src, k));
  tg_graph_set_node_extra (dst, m, tg_graph_node_extra (src, k));
  return TRUE;
}

/* Nodes and links were added at the end since N0 and L0: one undo step. */
static void
commit_append (TgDocument *doc, int n0, int l0, const char *label, TgDocChange change,
               const char *node_id)
{
  Step *s = step_new (STEP_APPEND, label, change);

  s->n_nodes = tg_graph_n_nodes (doc->graph) - n0;
  s->n_links = tg_graph_n_links (doc->graph) - l0;
  commit_step (doc, s, NULL, node_id);
}

/* Takes out what was added at the end since N0 and L0 (a command refused
 * half way). */
static void
roll_back_append (TgDocument *doc, int n0, int l0)
{
  for (int l = tg_graph_n_links (doc->graph) - 1; l >= l0; l--)
    tg_graph_remove_link (doc->graph, l);
  truncate_nodes (doc, n0);
}

char *
tg_document_add_node (TgDocument *doc, const char *type, double x, double y, GError **error)
{
  const TgNodeDesc *desc = tg_registry_lookup (type);
  const char *dot;
  g_autofree char *base = NULL;
  char *id;
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
  id = unique_id (doc, base, NULL);
  n = tg_graph_add_node (doc->graph, id, type, &err);
  if (n < 0)
    {
      g_free (id);
      set_tg_error (error, &err, NULL);
      return NULL;
    }
  set_ui_position (doc->graph, n, x, y);
  append_node_ui (doc, n);
  commit_append (doc, n, tg_graph_n_links (doc->graph), _("Add Node"), TG_DOC_CHANGE_NODES, id);
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
  TgError err = { 0 };
  int on, op, n, p, rc = 0, old = -1, n0, l0;
  TgGraph *work = NULL, *g;

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
  id = unique_id (doc, base, NULL);
  if (!other_is_output)
    old = tg_graph_input_link (doc->graph, on, op);
  /* Replacing a link takes one out of the middle: that step keeps the
   * graph.  Otherwise the node and its link are added at the end. */
  g = old >= 0 ? (work = tg_graph_copy (doc->graph)) : doc->graph;
  n0 = tg_graph_n_nodes (g);
  l0 = tg_graph_n_links (g);
  n = tg_graph_add_node (g, id, type, &err);
  if (n >= 0)
    {
      set_ui_position (g, n, x, y);
      if (!work)
        append_node_ui (doc, n);
      if (other_is_output)
        rc = tg_graph_add_link (g, other, other_port, id, desc->inputs[p].name, &err);
      else
        {
          if (old >= 0)
            tg_graph_remove_link (g, old);
          rc = tg_graph_add_link (g, id, desc->outputs[p].name, other, other_port, &err);
        }
    }
  if (n < 0 || rc < 0)
    {
      if (work)
        tg_graph_free (work);
      else
        roll_back_append (doc, n0, l0);
      g_free (id);
      set_tg_error (error, &err, NULL);
      return NULL;
    }
  if (work)
    commit (doc, work, _("Add Node"), NULL, TG_DOC_CHANGE_NODES | TG_DOC_CHANGE_LINKS, id);
  else
    commit_append (doc, n0, l0, _("Add Node"), TG_DOC_CHANGE_NODES | TG_DOC_CHANGE_LINKS, id);
  return id;
}

gboolean
tg_document_rename_node (TgDocument *doc, const char *id, const char *new_id, GError **error)
{
  int n = tg_document_find_node (doc, id);
  TgError err = { 0 };
  Step *s;

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
  if (tg_document_find_node (doc, new_id) >= 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("There is already a node named “%s”"), new_id);
      return FALSE;
    }
  s = step_new (STEP_RENAME, _("Rename Node"), TG_DOC_CHANGE_NODES | TG_DOC_CHANGE_LINKS);
  s->node = g_strdup (id);
  s->new_id = g_strdup (new_id);
  if (tg_graph_set_node_id (doc->graph, n, new_id, &err) < 0)
    {
      step_free (s);
      return set_tg_error (error, &err, NULL);
    }
  g_hash_table_remove (doc->index, s->node);
  g_hash_table_insert (doc->index, g_strdup (new_id), GINT_TO_POINTER (n + 1));
  g_signal_emit (doc, signals[SIGNAL_RENAMED], 0, s->node, new_id);
  commit_step (doc, s, NULL, new_id);
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
      int i = tg_document_find_node (doc, ids[k]);
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

/* Moves the nodes IDS by (DX, DY), keeping their ui blocks from before
 * and after in S. */
static void
move_nodes_into (TgDocument *doc, Step *s, const char *const *ids, double dx, double dy)
{
  int count = (int) g_strv_length ((char **) ids);

  s->ui_ids = g_renew (char *, s->ui_ids, s->n_ui + count);
  s->ui_before = g_renew (char *, s->ui_before, s->n_ui + count);
  s->ui_after = g_renew (char *, s->ui_after, s->n_ui + count);
  for (int k = 0; ids[k]; k++)
    {
      int n = tg_document_find_node (doc, ids[k]);
      const char *ui;
      double x, y;

      if (n < 0 || !tg_document_get_position_at (doc, n, &x, &y))
        continue;
      ui = tg_graph_node_ui (doc->graph, n);
      s->ui_ids[s->n_ui] = g_strdup (ids[k]);
      s->ui_before[s->n_ui] = g_strdup (ui);
      s->ui_after[s->n_ui] = ui_with_position (ui, x + dx, y + dy);
      set_node_ui (doc, n, s->ui_after[s->n_ui]);
      s->n_ui++;
    }
}

gboolean
tg_document_move_nodes (TgDocument *doc, const char *const *ids, double dx, double dy)
{
  Step *s;

  if (!ids || !ids[0] || (dx == 0 && dy == 0))
    return FALSE;
  s = step_new (STEP_UI, NULL, TG_DOC_CHANGE_POSITION);
  move_nodes_into (doc, s, ids, dx, dy);
  if (!s->n_ui)
    {
      step_free (s);
      return FALSE;
    }
  s->label = g_strdup (s->n_ui == 1 ? _("Move Node") : _("Move Nodes"));
  commit_step (doc, s, NULL, s->n_ui == 1 ? ids[0] : NULL);
  return TRUE;
}

gboolean
tg_document_find_port (TgDocument *doc, const char *node, const char *port, gboolean output,
                       int *node_index, int *port_index)
{
  int n = tg_document_find_node (doc, node);
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
  if (old < 0)
    {
      /* A new link goes at the end: the undo step is that one link. */
      int l0 = tg_graph_n_links (doc->graph);
      if (tg_graph_add_link (doc->graph, from, from_port, to, to_port, &err) < 0)
        return set_tg_error (error, &err, NULL);
      commit_append (doc, tg_graph_n_nodes (doc->graph), l0, _("Connect"), TG_DOC_CHANGE_LINKS,
                     to);
      return TRUE;
    }
  {
    const TgLink *l = tg_graph_link (doc->graph, old);
    const TgNodeDesc *fd = tg_graph_node_desc (doc->graph, l->from_node);
    if (!strcmp (tg_graph_node_id (doc->graph, l->from_node), from)
        && !strcmp (fd->outputs[l->from_port].name, from_port))
      return TRUE; /* already so */
  }
  work = tg_graph_copy (doc->graph);
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

/* Whether a change of parameter D can keep just the two values: input
 * paths are relative to the file's folder, which Save As changes, so
 * those steps keep the graph of their folder. */
static gboolean
param_is_plain (const TgParamDesc *d)
{
  if (d->type == TG_PARAM_INPUT_PATH)
    return FALSE;
  for (int k = 0; d->type == TG_PARAM_LIST && k < d->n_item_params; k++)
    if (d->item_params[k].type == TG_PARAM_INPUT_PATH)
      return FALSE;
  return TRUE;
}

gboolean
tg_document_set_param (TgDocument *doc, const char *node, const char *name,
                       const TgParamValue *value, gboolean merge, GError **error)
{
  int n = tg_document_find_node (doc, node);
  const TgParamValue *old;
  g_autofree char *key = NULL;
  g_autofree char *label = NULL;
  const TgNodeDesc *d;
  TgError err = { 0 };
  int k;

  if (n < 0)
    {
      g_set_error (error, TG_DOCUMENT_ERROR, 0, _("No node “%s”"), node);
      return FALSE;
    }
  old = tg_graph_get_param (doc->graph, n, name);
  if (old && tg_param_value_equal (old, value))
    return TRUE;
  d = tg_graph_node_desc (doc->graph, n);
  k = tg_node_desc_find_param (d, name);
  key = g_strdup_printf ("%s\037%s", node, name);
  /* Translators: %s is a parameter label, e.g. "Scale" */
  label = g_strdup_printf (_("Set %s"), k >= 0 ? g_dgettext (GETTEXT_PACKAGE, d->params[k].label)
                                                : name);
  if (old && k >= 0 && param_is_plain (&d->params[k]))
    {
      Step *s = step_new (STEP_PARAM, label, TG_DOC_CHANGE_PARAMS);
      s->node = g_strdup (node);
      s->param = g_strdup (name);
      if (tg_param_value_copy (&s->value_before, old) < 0
          || tg_param_value_copy (&s->value_after, value) < 0
          || tg_graph_set_param (doc->graph, n, name, value, &err) < 0)
        {
          step_free (s);
          return set_tg_error (error, &err, NULL);
        }
      commit_step (doc, s, merge ? key : NULL, node);
    }
  else
    {
      TgGraph *work = tg_graph_copy (doc->graph);
      if (tg_graph_set_param (work, n, name, value, &err) < 0)
        {
          tg_graph_free (work);
          return set_tg_error (error, &err, NULL);
        }
      commit (doc, work, label, merge ? key : NULL, TG_DOC_CHANGE_PARAMS, node);
    }
  return TRUE;
}

gboolean
tg_document_set_param_text (TgDocument *doc, const char *node, const char *name,
                            const char *text, gboolean merge, GError **error)
{
  int n = tg_document_find_node (doc, node);
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
  Step *s;

  if (tg_world_check (world, &err) < 0)
    return set_tg_error (error, &err, NULL);
  if (!memcmp (cur, world, sizeof *world))
    return TRUE;
  s = step_new (STEP_WORLD, _("Change World Settings"), TG_DOC_CHANGE_WORLD);
  s->world_before = *cur;
  s->world_after = *world;
  *tg_graph_world (doc->graph) = *world;
  commit_step (doc, s, "\037world", NULL);
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

  if (!room_for (work, n, error))
    return NULL;
  px = g_new (double, n + 1);
  py = g_new (double, n + 1);

  for (int k = 0; k < n; k++)
    {
      TgNodeUi u;
      parse_node_ui (tg_graph_node_ui (src, k), &u);
      px[k] = u.has_position ? u.x : k * 240;
      py[k] = u.has_position ? u.y : 0;
      min_x = MIN (min_x, px[k]);
      min_y = MIN (min_y, py[k]);
    }
  for (int k = 0; k < n; k++)
    {
      char *id = unique_id (doc, tg_graph_node_id (src, k), taken);
      gboolean ok;

      g_ptr_array_add (ids, id);
      g_hash_table_add (taken, id);
      ok = copy_node (work, src, k, id, &err);
      if (tg_graph_n_nodes (work) > (int) doc->ui->len)
        {
          int m = tg_graph_n_nodes (work) - 1;
          set_ui_position (work, m, px[k] - min_x + x, py[k] - min_y + y);
          append_node_ui (doc, m);
        }
      if (!ok)
        {
          set_tg_error (error, &err, NULL);
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
          set_tg_error (error, &err, NULL);
          goto out;
        }
    }
  g_ptr_array_add (ids, NULL);
  result = (char **) g_ptr_array_steal (ids, NULL);
out:
  if (!result)
    roll_back_append (doc, n0, l0);
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
  commit_append (doc, n0, l0, _("Paste"), TG_DOC_CHANGE_NODES | TG_DOC_CHANGE_LINKS, NULL);
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
