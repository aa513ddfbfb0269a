/* TgDocument: one .tgraph document, the model and controller of a window.
 *
 * The document owns the TgGraph.  Every change a user makes goes through
 * one of the commands below, which records an undo step and emits
 * "changed" with what changed; the canvas, inspector and viewer only draw
 * the model and call commands.  Nodes are named by id (indices shift when
 * a node is deleted).  No widgets here, so the tests drive it headless.
 */
#pragma once

#include <gio/gio.h>
/* Before the engine headers: gi18n.h defines N_ unconditionally. */
#include <glib/gi18n.h>
#include <tgraph/tgraph.h>

G_BEGIN_DECLS

#define TG_TYPE_DOCUMENT (tg_document_get_type ())
G_DECLARE_FINAL_TYPE (TgDocument, tg_document, TG, DOCUMENT, GObject)

/* What a "changed" emission is about (flags; NODE_ID may be NULL). */
typedef enum
{
  TG_DOC_CHANGE_NODES = 1 << 0,    /* nodes added or removed */
  TG_DOC_CHANGE_LINKS = 1 << 1,    /* links added or removed */
  TG_DOC_CHANGE_PARAMS = 1 << 2,   /* a parameter of NODE_ID (or of several nodes) */
  TG_DOC_CHANGE_POSITION = 1 << 3, /* node positions only: nothing to evaluate */
  TG_DOC_CHANGE_WORLD = 1 << 4,
  TG_DOC_CHANGE_ALL = 0xff,        /* load, undo, redo: everything may differ */
} TgDocChange;

#define TG_DOCUMENT_ERROR (tg_document_error_quark ())
GQuark tg_document_error_quark (void);

TgDocument *tg_document_new (void);

/* Borrowed: valid until the next command.  Read only: change the graph
 * through the commands so that undo and notifications stay right. */
const TgGraph *tg_document_get_graph (TgDocument *doc);
/* A deep copy to evaluate on another thread.  Caller frees (tg_graph_free). */
TgGraph *tg_document_snapshot (TgDocument *doc);

GFile *tg_document_get_file (TgDocument *doc);
/* "island.tgraph", or "Untitled" (translated). Caller frees. */
char *tg_document_dup_title (TgDocument *doc);
gboolean tg_document_get_dirty (TgDocument *doc);

/* Loads FILE without touching the document on failure (the error carries
 * the engine's message with the place).  Unfinished graphs (unlinked
 * required inputs, an unset file path) load too. */
gboolean tg_document_load (TgDocument *doc, GFile *file, GError **error);
/* Saves atomically to FILE (NULL: the current file) and marks it clean. */
gboolean tg_document_save (TgDocument *doc, GFile *file, GError **error);

/* --- commands (each one undo step; FALSE + error when refused) -------- */

/* Adds a node of TYPE at (X, Y) with a fresh id; returns the id (caller frees). */
char *tg_document_add_node (TgDocument *doc, const char *type, double x, double y,
                            GError **error);
gboolean tg_document_delete_nodes (TgDocument *doc, const char *const *ids, GError **error);
/* Moves the nodes by (DX, DY) canvas units. */
gboolean tg_document_move_nodes (TgDocument *doc, const char *const *ids, double dx, double dy);
/* Links FROM.FROM_PORT to TO.TO_PORT, replacing a link already in that input. */
gboolean tg_document_connect (TgDocument *doc, const char *from, const char *from_port,
                              const char *to, const char *to_port, GError **error);
gboolean tg_document_disconnect (TgDocument *doc, const char *to, const char *to_port);
/* Moves the link into TO.TO_PORT to NEW_TO.NEW_TO_PORT (a link dragged
 * from one input to another): one undo step. */
gboolean tg_document_move_link (TgDocument *doc, const char *to, const char *to_port,
                                const char *new_to, const char *new_to_port, GError **error);
/* Sets a parameter.  With MERGE, a change of the same parameter right
 * after the previous one (a slider drag) joins its undo step, until
 * tg_document_end_merge. */
gboolean tg_document_set_param (TgDocument *doc, const char *node, const char *name,
                                const TgParamValue *value, gboolean merge, GError **error);
gboolean tg_document_set_param_text (TgDocument *doc, const char *node, const char *name,
                                     const char *text, gboolean merge, GError **error);
void tg_document_end_merge (TgDocument *doc);
gboolean tg_document_set_world (TgDocument *doc, const TgWorld *world, GError **error);

/* The .tgraph text of the nodes IDS and the links between them (for the
 * clipboard).  Caller frees. */
char *tg_document_copy_text (TgDocument *doc, const char *const *ids, GError **error);
/* Adds the nodes of TEXT with new unique ids, their top-left corner at
 * (X, Y), keeping the links among them.  Returns the new ids (NULL
 * terminated, caller frees with g_strfreev) or NULL with ERROR. */
char **tg_document_paste_text (TgDocument *doc, const char *text, double x, double y,
                               GError **error);
/* Copies IDS and pastes them offset by (DX, DY): one undo step. */
char **tg_document_duplicate (TgDocument *doc, const char *const *ids, double dx, double dy,
                              GError **error);

/* --- node positions (the node's "ui" block: {"x": .., "y": ..}) ------- */

gboolean tg_document_get_position (TgDocument *doc, const char *id, double *x, double *y);

/* --- undo ------------------------------------------------------------- */

gboolean tg_document_can_undo (TgDocument *doc);
gboolean tg_document_can_redo (TgDocument *doc);
/* The label of the step undo/redo would revert ("Move", ...), or NULL. */
const char *tg_document_undo_label (TgDocument *doc);
const char *tg_document_redo_label (TgDocument *doc);
gboolean tg_document_undo (TgDocument *doc);
gboolean tg_document_redo (TgDocument *doc);

/* --- helpers ---------------------------------------------------------- */

/* "node.port" split and looked up; FALSE when missing. */
gboolean tg_document_find_port (TgDocument *doc, const char *node, const char *port,
                                gboolean output, int *node_index, int *port_index);

G_END_DECLS
