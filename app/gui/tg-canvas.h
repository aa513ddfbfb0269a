/* TgCanvas: the node graph editor surface.
 *
 * It draws the document (nodes, typed ports, wires, thumbnails, error
 * badges) and turns gestures into document commands; it keeps only view
 * state: pan, zoom, selection and what a drag is doing.
 */
#pragma once

#include <cairo.h>
#include <gtk/gtk.h>

#include "tg-document.h"

G_BEGIN_DECLS

#define TG_TYPE_CANVAS (tg_canvas_get_type ())
G_DECLARE_FINAL_TYPE (TgCanvas, tg_canvas, TG, CANVAS, GtkWidget)

void tg_canvas_set_document (TgCanvas *self, TgDocument *doc);

/* Selected node ids, NULL-terminated (caller frees with g_strfreev). */
char **tg_canvas_dup_selection (TgCanvas *self);
/* The node the inspector and viewer show (the last one clicked), or NULL. */
const char *tg_canvas_get_active (TgCanvas *self);
void tg_canvas_select (TgCanvas *self, const char *const *ids, const char *active);

/* Takes a reference to SURFACE (NULL clears). */
void tg_canvas_set_thumbnail (TgCanvas *self, const char *id, cairo_surface_t *surface);
/* A TgNodeState and its message (failed / skipped nodes get a badge). */
/* A node's TgNodeState; a failure's MESSAGE says what is wrong in the
 * user's terms, DETAILS (may be NULL) where in the file. */
void tg_canvas_set_node_state (TgCanvas *self, const char *id, int state, const char *message,
                               const char *details);
/* Node ID's state as last set (TG_NODE_IDLE when none), with its
 * message, details and running fraction (each may be NULL; borrowed). */
int tg_canvas_get_node_state (TgCanvas *self, const char *id, const char **message,
                              const char **details, double *fraction);
void tg_canvas_set_running (TgCanvas *self, const char *id, double fraction);
void tg_canvas_clear_states (TgCanvas *self);

void tg_canvas_fit_all (TgCanvas *self);
/* Where pasted or added nodes go: under the pointer, else the view centre. */
void tg_canvas_get_drop_position (TgCanvas *self, double *x, double *y);

/* Where SPEC is in widget coordinates, for tests that drive the pointer:
 * "node:ID" (the middle of its title), "out:ID.PORT", "in:ID.PORT",
 * "graph:X,Y" (canvas units).  FALSE when there is no such thing. */
gboolean tg_canvas_locate (TgCanvas *self, const char *spec, double *x, double *y);
/* Zoom and the widget position of canvas point (0, 0). */
void tg_canvas_get_view (TgCanvas *self, double *zoom, double *off_x, double *off_y);

G_END_DECLS
