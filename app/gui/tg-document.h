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
  TG_DOC_CHANGE_FRAMES = 1 << 5,   /* frames only: nothing to evaluate */
  TG_DOC_CHANGE_PIN = 1 << 6,      /* the viewer pin only: nothing to evaluate */
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

/* --- autosave ---------------------------------------------------------- */

/* Crash recovery.  While a document has unsaved changes, the window calls
 * tg_document_autosave every so often; it writes the graph atomically to
 * $XDG_STATE_HOME/terrane/autosave/<key>.tgraph (the key: a hash of the
 * file's path, or "untitled-<pid>-<n>"), only when it changed since the
 * last copy.  Saving and closing remove the copy; a crash leaves it. */
gboolean tg_document_autosave (TgDocument *doc, GError **error);
void tg_document_remove_recovery (TgDocument *doc);
/* The recovery copy of FILE when one is newer than FILE, or NULL.
 * Caller frees. */
char *tg_document_find_recovery (GFile *file);
/* The newest recovery copy of an untitled document whose process is gone
 * (a crash), or NULL.  Caller frees. */
char *tg_document_find_untitled_recovery (void);
/* Replaces the graph with the recovery copy at PATH as one undo step
 * ("Restore Unsaved Changes"), relative paths read against the current
 * file's folder, and removes PATH. */
gboolean tg_document_restore (TgDocument *doc, const char *path, GError **error);
/* Removes the recovery copy at PATH (the user declined it). */
void tg_document_discard_recovery (const char *path);

/* --- commands (each one undo step; FALSE + error when refused) -------- */

/* Adds a node of TYPE at (X, Y) with a fresh id; returns the id (caller frees). */
char *tg_document_add_node (TgDocument *doc, const char *type, double x, double y,
                            GError **error);
/* Adds a node of TYPE at (X, Y) wired to OTHER.OTHER_PORT in one undo
 * step: when OTHER_IS_OUTPUT, that output feeds the new node's first
 * input that accepts it; otherwise the new node's first fitting output
 * feeds that input (replacing its link).  Returns the id (caller frees). */
char *tg_document_add_node_linked (TgDocument *doc, const char *type, double x, double y,
                                   const char *other, const char *other_port,
                                   gboolean other_is_output, GError **error);
/* Renames node ID to NEW_ID (links follow).  Refuses an empty, taken or
 * dotted id with a message. */
gboolean tg_document_rename_node (TgDocument *doc, const char *id, const char *new_id,
                                  GError **error);
gboolean tg_document_delete_nodes (TgDocument *doc, const char *const *ids, GError **error);
/* Bypasses the nodes IDS (or stops): one undo step.  Refused, changing
 * nothing, when one of them has no main input to pass through. */
gboolean tg_document_set_bypass (TgDocument *doc, const char *const *ids, gboolean bypass,
                                 GError **error);
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

/* --- frames ------------------------------------------------------------ */

/* A frame: a titled, coloured box behind a group of nodes, kept in the
 * file's top-level "ui" block ({"frames": [{"title", "color", "x", "y",
 * "w", "h"}]}), which the engine ignores. */
typedef struct
{
  char *title;
  double x, y, w, h; /* canvas units */
  double rgb[3];
} TgFrame;

/* The frames, back to front (caller frees with tg_document_frames_free). */
TgFrame *tg_document_dup_frames (TgDocument *doc, int *n);
void tg_document_frames_free (TgFrame *frames, int n);
/* Commands, one undo step each. */
int tg_document_add_frame (TgDocument *doc, const TgFrame *f);
gboolean tg_document_set_frame (TgDocument *doc, int k, const TgFrame *f);
gboolean tg_document_delete_frame (TgDocument *doc, int k);
/* Moves frame K and the nodes IDS (those inside it) together. */
gboolean tg_document_move_frame (TgDocument *doc, int k, double dx, double dy,
                                 const char *const *ids);

/* --- node UI state ---------------------------------------------------- */

/* What the document keeps of a node's "ui" block ({"x": .., "y": ..,
 * "bypass": true, "viewer_pin": true}), parsed once when the node enters
 * the document, so that drawing and hit tests read numbers, not JSON. */
typedef struct
{
  double x, y;      /* canvas units; see has_position */
  gboolean has_position; /* FALSE: the file gave none (laid out in a grid by index) */
  gboolean bypass;
  gboolean viewer_pin;   /* the node the viewer keeps showing */
} TgNodeUi;

/* The index of node ID in tg_document_get_graph, or -1 (a hash lookup). */
int tg_document_find_node (TgDocument *doc, const char *id);
/* Node N's UI state (borrowed, valid until the next command), or NULL. */
const TgNodeUi *tg_document_get_node_ui (TgDocument *doc, int n);
/* Top-left of node N (or ID) in canvas units; FALSE when there is none. */
gboolean tg_document_get_position_at (TgDocument *doc, int n, double *x, double *y);
gboolean tg_document_get_position (TgDocument *doc, const char *id, double *x, double *y);

/* The viewer pin, as Houdini's display flag: the node the viewer keeps
 * showing whatever is selected, saved in its "ui" block
 * ("viewer_pin": true; the engine ignores it).  At most one node has it.
 * The pinned node's id (borrowed), or NULL. */
const char *tg_document_get_pinned (TgDocument *doc);
/* Pins node ID (NULL: none) to the viewer, unpinning any other: one undo
 * step (it is saved with the file).  FALSE when there is no node ID. */
gboolean tg_document_set_pinned (TgDocument *doc, const char *id);

/* --- undo ------------------------------------------------------------- */

gboolean tg_document_can_undo (TgDocument *doc);
gboolean tg_document_can_redo (TgDocument *doc);
/* The bytes the undo and redo steps hold (each step keeps only what its
 * command changed: a move the node ids and their ui blocks, a parameter
 * its old and new value, a delete the nodes and links it took out with
 * their indices, a bypass the nodes' flags; a restore keeps the graph
 * from before). */
gsize tg_document_get_undo_size (TgDocument *doc);
/* The label of the step undo/redo would revert ("Move", ...), or NULL. */
const char *tg_document_undo_label (TgDocument *doc);
const char *tg_document_redo_label (TgDocument *doc);
gboolean tg_document_undo (TgDocument *doc);
gboolean tg_document_redo (TgDocument *doc);

/* --- helpers ---------------------------------------------------------- */

/* The port of D that a wire of type TYPE fits: the first input that
 * accepts it (INPUT) or the first output that can feed it; an exact type
 * match before a compatible one.  -1: none. */
int tg_document_fitting_port (const TgNodeDesc *d, TgPortType type, gboolean input);

/* "node.port" split and looked up; FALSE when missing. */
gboolean tg_document_find_port (TgDocument *doc, const char *node, const char *port,
                                gboolean output, int *node_index, int *port_index);

G_END_DECLS
