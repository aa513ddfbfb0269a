/* TgDocument's insides, shared by tg-document.c (the object, undo, files,
 * the typed UI state) and its parts: -steps.c, -commands.c, -autosave.c
 * and -clipboard.c, the way gnome-text-editor splits its window. */
#pragma once

#include "tg-document.h"

#include <json-c/json.h>

G_BEGIN_DECLS

typedef enum
{
  STEP_GRAPH,  /* the whole graph from before */
  STEP_UI,     /* ui blocks of some nodes and/or the graph's top-level extra */
  STEP_PARAM,  /* one parameter */
  STEP_WORLD,
  STEP_RENAME,
  STEP_SPLICE, /* nodes and links taken out of the middle, then others added at the end */
  STEP_BYPASS, /* the bypass flags of some nodes */
} StepKind;

typedef struct
{
  StepKind kind;
  char *label;
  guint serial_before, serial_after;
  TgDocChange change;

  TgGraph *graph;          /* GRAPH: the other state's graph */

  int n_ui;                /* UI, BYPASS: nodes */
  char **ui_ids;
  char **ui_before, **ui_after; /* their ui blocks (NULL: none) */
  gboolean has_extra;
  char *extra_before, *extra_after;

  char *node, *param;      /* PARAM (node: also RENAME's old id) */
  TgParamValue value_before, value_after;
  char *param_dir;         /* PARAM of input paths: the folder they are relative to */

  TgWorld world_before, world_after;

  char *new_id;            /* RENAME */

  gboolean *bypass_before; /* BYPASS: each node's flag before */
  gboolean bypass_after;

  /* SPLICE: first the nodes and links it took out of the graph, kept in
   * both states, with where they were (indices in the graph before, in
   * ascending order, links with the node indices from before) ... */
  TgGraph *removed;        /* the nodes taken out, in their order */
  int *removed_at;
  TgLink *links_removed;
  int *links_removed_at;
  int n_links_removed;
  /* ... then what it added at the end. */
  int n_nodes, n_links;
  TgGraph *part;           /* once undone: the nodes to add again */
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

/* In tg-document.c */
gboolean tg_document__set_tg_error (GError **error, const TgError *err, const char *prefix);
/* Records S, its command applied, as the newest undo step (or folds it
 * into the newest when MERGE_KEY continues it) and emits "changed". */
void tg_document__commit_step (TgDocument *doc, Step *s, const char *merge_key,
                               const char *node_id);
/* WORK, a changed copy of the graph, becomes the graph: a GRAPH step. */
void tg_document__commit (TgDocument *doc, TgGraph *work, const char *label, const char *merge_key,
                          TgDocChange change, const char *node_id);
void tg_document__emit_renamed (TgDocument *doc, const char *old_id, const char *new_id);
void tg_document__parse_node_ui (const char *ui, TgNodeUi *out);
char *tg_document__ui_with_position (const char *ui, double x, double y);
char *tg_document__ui_with_flag (const char *ui, const char *key, gboolean on);
void tg_document__set_ui_position (TgGraph *g, int node, double x, double y);
void tg_document__set_node_ui (TgDocument *doc, int n, const char *ui);
void tg_document__append_node_ui (TgDocument *doc, int n);
void tg_document__truncate_nodes (TgDocument *doc, int n_nodes);
void tg_document__reload_ui (TgDocument *doc);
void tg_document__reload_frames (TgDocument *doc);
json_object *tg_document__graph_extra (const TgGraph *g);
json_object *tg_document__frames_array (json_object *extra);

gboolean tg_document__rebase_param (const TgParamDesc *pd, TgParamValue *v, const char *from,
                                    const char *to);
/* Rewrites G's relative input paths from its base folder to DIR; the
 * number changed. */
int tg_document__rebase_inputs (TgGraph *g, const char *dir);

/* In tg-document-steps.c */
Step *tg_document__step_new (StepKind kind, const char *label, TgDocChange change);
void tg_document__step_free (gpointer p);
/* Takes the document from one side of step S to the other: FORWARD
 * (redo) from its state before to after, or back (undo). */
void tg_document__step_apply (TgDocument *doc, Step *s, gboolean forward);
/* Takes the nodes NODES and the links LINKS (indices in the graph; a
 * repeat or -1 is ignored) out of the graph, with every link that
 * touches those nodes, and keeps them in S, a SPLICE step. */
void tg_document__splice_take (TgDocument *doc, Step *s, const int *nodes, int n, const int *links,
                               int n_links);
/* Puts what S took back where it was (a command refused half way, undo). */
void tg_document__splice_put_back (TgDocument *doc, Step *s);

/* In tg-document-commands.c */
gboolean tg_document__copy_node (TgGraph *dst, const TgGraph *src, int k, const char *id,
                                 TgError *err);
char *tg_document__unique_id (TgDocument *doc, const char *base, GHashTable *taken);
gboolean tg_document__room_for (const TgGraph *g, int n_new, GError **error);
void tg_document__commit_append (TgDocument *doc, int n0, int l0, const char *label,
                                 TgDocChange change, const char *node_id);
/* Records S, which took what it took, as one undo step with what was
 * added at the end since N0 and L0. */
void tg_document__commit_splice (TgDocument *doc, Step *s, int n0, int l0, const char *node_id);
void tg_document__roll_back_append (TgDocument *doc, int n0, int l0);
void tg_document__remove_nodes (TgGraph *g, const int *idx, int n);

G_END_DECLS
